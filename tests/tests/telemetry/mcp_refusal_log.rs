//! A refused MCP tool is logged once, not again on every refresh. In the `telemetry` binary,
//! not with the other import tests: it counts events with a global `tracing` subscriber, which
//! would also see their events (and a thread-local one races with them over `tracing`'s
//! callsite cache). No other test in this binary imports MCP tools.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use serde_json::{Value, json};
use tool_runtime::mcp::rmcp::model::{
    JsonObject, ListToolsResult, PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool,
};
use tool_runtime::mcp::rmcp::service::{RequestContext, RoleServer};
use tool_runtime::mcp::rmcp::{ErrorData, ServerHandler, ServiceExt};
use tool_runtime::mcp::{McpImportOptions, McpToolSource, ServerName};
use tracing::field::{Field, Visit};
use tracing_subscriber::layer::Context;
use tracing_subscriber::prelude::*;

/// Lists one tool the importer takes and one it refuses (a union in its input schema).
#[derive(Clone)]
struct OneRefused;

fn object(value: Value) -> Arc<JsonObject> {
    let Value::Object(map) = value else { panic!("not an object: {value}") };
    Arc::new(map)
}

impl ServerHandler for OneRefused {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
    }

    async fn list_tools(
        &self,
        _: Option<PaginatedRequestParams>,
        _: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let union = json!({"anyOf": [{"type": "string"}, {"type": "number"}]});
        Ok(ListToolsResult::with_all_items(vec![
            Tool::new(
                "fine",
                "Taken.",
                object(json!({"type": "object", "properties": {}, "additionalProperties": false})),
            ),
            Tool::new(
                "union",
                "Refused.",
                object(json!({"type": "object", "properties": {"x": union}})),
            ),
        ]))
    }
}

/// Counts `MCP tool not imported` warnings.
#[derive(Clone, Default)]
struct RefusalWarnings(Arc<AtomicUsize>);

impl<S: tracing::Subscriber> tracing_subscriber::Layer<S> for RefusalWarnings {
    fn on_event(&self, event: &tracing::Event<'_>, _: Context<'_, S>) {
        struct Message(bool);
        impl Visit for Message {
            fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
                if field.name() == "message" {
                    self.0 |= format!("{value:?}") == "MCP tool not imported";
                }
            }
        }
        let mut message = Message(false);
        event.record(&mut message);
        if message.0 {
            self.0.fetch_add(1, Ordering::SeqCst);
        }
    }
}

#[tokio::test]
async fn a_refused_tool_is_logged_once_not_on_every_refresh() {
    let warnings = RefusalWarnings::default();
    tracing::subscriber::set_global_default(tracing_subscriber::registry().with(warnings.clone()))
        .unwrap();
    let (client_io, server_io) = tokio::io::duplex(64 * 1024);
    let serving = tokio::spawn(OneRefused.serve(server_io));
    let name = ServerName::new("up").unwrap();
    let source = McpToolSource::connect(name, client_io, McpImportOptions::new()).await.unwrap();
    let _server = serving.await.unwrap().unwrap();
    assert_eq!(source.refused().len(), 1);
    assert_eq!(warnings.0.load(Ordering::SeqCst), 1);
    source.refresh().await.unwrap();
    source.refresh().await.unwrap();
    assert_eq!(source.refused().len(), 1);
    assert_eq!(warnings.0.load(Ordering::SeqCst), 1, "the same refusal is not logged again");
}
