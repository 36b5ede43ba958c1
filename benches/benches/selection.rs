//! Tool selection: the built-in BM25 selector picking 20 tools for one request out of 10 000
//! visible ones (target: under 1 ms at the median), against the least a selector does (one
//! pass over the visible list).

use std::hint::black_box;
use std::sync::Arc;
use std::time::Duration;

use criterion::{Criterion, criterion_group, criterion_main};
use serde_json::json;
use tool_runtime::catalog::select::{Bm25Selector, ToolSelector};
use tool_runtime::catalog::{ToolCatalog, visible_tools};
use tool_runtime::prelude::*;
use tool_runtime::runtime::{BoundToolRuntime, DynamicTool};

const TOOLS: usize = 10_000;

const SYSTEMS: [&str; 25] = [
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
/// described properties.
fn tools() -> Vec<Arc<dyn BoundToolRuntime>> {
    let mut out = Vec::with_capacity(TOOLS);
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

fn select(c: &mut Criterion) {
    let tools = tools();
    assert_eq!(tools.len(), TOOLS);
    let catalog = tools
        .iter()
        .fold(ToolCatalog::builder(), |builder, tool| {
            builder.register_bound(Arc::clone(tool), tool.name().to_owned())
        })
        .build()
        .expect("distinct ids");
    let policy = ToolPolicy::allowing(SYSTEMS.map(|system| format!("{system}__*")));
    let ctx = ToolInvocationContext::new(ContextIds {
        run_id: "run-1",
        actor_id: "user-1",
        tenant_id: "tenant-1",
    });
    let visible = visible_tools(&catalog, &policy, &ctx);
    assert_eq!(visible.len(), TOOLS);
    let selector = Bm25Selector::new(&catalog).top_k(20);
    let query = "Please archive the old invoices in billing and share the summary with finance";
    assert_eq!(selector.select(query, &visible).len(), 20);

    let mut group = c.benchmark_group("selection/select_20_of_10k");
    // Baseline: one pass over the visible tools, looking at each name.
    group.bench_function("baseline", |b| {
        b.iter(|| black_box(&visible).names().filter(|name| name.contains("invoice")).count());
    });
    group.bench_function("bm25", |b| {
        b.iter(|| selector.select(black_box(query), black_box(&visible)).len());
    });
    // A short query that matches a tenth of the catalog.
    group.bench_function("bm25_short", |b| {
        b.iter(|| selector.select(black_box("weather forecast"), black_box(&visible)).len());
    });
    group.finish();

    let mut group = c.benchmark_group("selection/index_10k");
    group.sample_size(10);
    group.bench_function("bm25", |b| b.iter(|| Bm25Selector::new(black_box(&catalog)).len()));
    group.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default()
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(3));
    targets = select
}
criterion_main!(benches);
