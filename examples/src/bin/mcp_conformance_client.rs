//! The client the official MCP conformance suite (`@modelcontextprotocol/conformance`) tests:
//! this crate's MCP import ([`McpToolSource`]) connecting to the scenario's server, and a
//! [`ToolRunner`] calling what the scenario expects. The suite starts it with the server's URL
//! as its last argument and the scenario in `MCP_CONFORMANCE_SCENARIO`:
//!
//! ```text
//! npx @modelcontextprotocol/conformance client --scenario tools_call \
//!     --command "cargo run -p examples --bin mcp_conformance_client --"
//! ```
//!
//! - `initialize`, `request-metadata`: connects (the `initialize` handshake when the suite asks
//!   for a version before 2026-07-28 in `MCP_CONFORMANCE_PROTOCOL_VERSION`, else
//!   `server/discover` and self-contained requests) and lists the tools;
//! - `tools_call`: calls the server's `add_numbers` with `{"a": 2, "b": 3}`.
//!
//! [`McpToolSource`]: tool_runtime::mcp::McpToolSource
//! [`ToolRunner`]: tool_runtime::runner::ToolRunner

use std::sync::Arc;

use serde_json::json;
use tool_runtime::catalog::ToolCatalog;
use tool_runtime::mcp::{McpImportOptions, McpToolSource, ServerName};
use tool_runtime::policy::ToolPolicy;
use tool_runtime::prelude::*;
use tool_runtime::runner::ToolRunner;

const ADD: &str = "mcp__server__add_numbers";

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let url = std::env::args().next_back().ok_or("usage: mcp_conformance_client <server url>")?;
    let scenario = std::env::var("MCP_CONFORMANCE_SCENARIO").unwrap_or_default();
    // The suite's `add_numbers` has an open input schema (no `additionalProperties: false`),
    // which an import refuses unless the application names it.
    let mut options = McpImportOptions::new().allow_open_schema(ADD);
    // The suite's servers of 2025 scenarios answer `server/discover` with an empty result: the
    // version the suite asks for says whether to discover.
    let version = std::env::var("MCP_CONFORMANCE_PROTOCOL_VERSION").unwrap_or_default();
    if version.as_str() < "2026-07-28" {
        options = options.initialize_only();
    }
    let server = McpToolSource::connect_http(ServerName::new("server")?, &url, options).await?;
    for refused in server.refused() {
        eprintln!("not imported: {refused}");
    }
    if scenario != "tools_call" {
        return Ok(());
    }
    let catalog = ToolCatalog::builder().source(Arc::new(server)).build()?;
    // The tool has no annotations, so it reads as an external side effect; the suite's
    // server wants it called, unapproved.
    let policy = ToolPolicy::from_json(&format!(
        r#"{{"allowed_tools": ["{ADD}"], "require_approval": []}}"#
    ))?;
    let runner = ToolRunner::builder(catalog).policy(policy).build();
    let ctx = ToolInvocationContext::new(ContextIds {
        run_id: "conformance",
        actor_id: "conformance",
        tenant_id: "conformance",
    });
    let result = runner.exec(ADD, json!({"a": 2, "b": 3}), &ctx).await;
    match result.output() {
        Some(output) => println!("{:?}", output.parts()),
        None => return Err(format!("the call failed: {:?}", result.error()).into()),
    }
    Ok(())
}
