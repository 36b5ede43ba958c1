//! The catalogs the selection benchmarks and the embedding cold-start measurement share.

use std::sync::Arc;

use serde_json::json;
use tool_runtime::prelude::*;
use tool_runtime::runtime::{BoundToolRuntime, DynamicTool};

/// The systems (namespaces) of the catalog.
pub const SYSTEMS: [&str; 25] = [
    "mail",
    "calendar",
    "files",
    "github",
    "crm",
    "billing",
    "weather",
    "maps",
    "music",
    "chat",
    "hr",
    "inventory",
    "shipping",
    "database",
    "cloud",
    "monitoring",
    "travel",
    "recipes",
    "fitness",
    "finance",
    "support",
    "translate",
    "home",
    "news",
    "school",
];
const VERBS: [&str; 16] = [
    "create",
    "list",
    "get",
    "update",
    "delete",
    "search",
    "archive",
    "export",
    "share",
    "cancel",
    "schedule",
    "approve",
    "summarize",
    "compare",
    "restore",
    "sync",
];
const OBJECTS: [&str; 25] = [
    "message",
    "event",
    "document",
    "issue",
    "contact",
    "invoice",
    "forecast",
    "route",
    "playlist",
    "channel",
    "employee",
    "product",
    "shipment",
    "table",
    "bucket",
    "dashboard",
    "flight",
    "recipe",
    "workout",
    "portfolio",
    "ticket",
    "glossary",
    "thermostat",
    "article",
    "course",
];

/// 10 000 tools: 25 systems x 16 verbs x 25 objects, each tool with a description and two
/// described properties (by system, then verb, then object).
#[must_use]
pub fn selection_tools() -> Vec<Arc<dyn BoundToolRuntime>> {
    let mut out = Vec::with_capacity(SYSTEMS.len() * VERBS.len() * OBJECTS.len());
    for system in SYSTEMS {
        for verb in VERBS {
            for object in OBJECTS {
                let name = format!("{system}__{verb}_{object}");
                let description = format!("{verb} a {object} in the {system} service.");
                let schema = json!({
                    "type": "object",
                    "properties": {
                        format!("{object}Id"): {"type": "string", "description": format!("Which {object}.")},
                        "note": {"type": ["string", "null"], "description": format!("Why you {verb} it.")}
                    },
                    "required": [format!("{object}Id")],
                    "additionalProperties": false
                });
                let tool = DynamicTool::builder(&name, &description, schema)
                    .effect(ToolEffect::ReadOnly)
                    .build(|args, _, _| async move { Ok(args) })
                    .expect("a valid dynamic tool");
                out.push(Arc::new(tool) as Arc<dyn BoundToolRuntime>);
            }
        }
    }
    out
}
