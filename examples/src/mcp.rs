//! The example application as an MCP server: [`app`]'s catalog, policy and
//! approval rules behind [`McpServer`], as the `mcp_server` binary serves them over stdio.
//!
//! ```
//! use std::sync::Arc;
//! use examples::tickets::TicketStore;
//! use tool_runtime::runtime::{Clock, NullSink};
//!
//! let server = examples::mcp::server(Clock::system(), TicketStore::new(), Arc::new(NullSink)).unwrap();
//! let names: Vec<_> = server.tools().into_iter().map(|tool| tool.name).collect();
//! assert_eq!(names, ["core__get_current_time", "docs__search", "tickets__create_ticket"]);
//! ```

use std::sync::Arc;

use tool_runtime::mcp::McpServer;
use tool_runtime::prelude::*;
use tool_runtime::runtime::{Clock, EventSink};

use crate::app;
use crate::tickets::TicketStore;

/// The connection every MCP call brings: the example vault's `acme-tracker`.
const CONNECTION: &str = "acme-tracker";

/// The context each MCP call runs in: one actor of the `acme` tenant, with the
/// `acme-tracker` connection (so `tickets__create_ticket` is shown and may run).
#[must_use]
pub fn context() -> ToolInvocationContext {
    ToolInvocationContext::new(ContextIds {
        run_id: "mcp",
        actor_id: "mcp-client",
        tenant_id: "acme",
    })
    .with_connection_id(CONNECTION)
    .with_requested_connections([CONNECTION])
}

/// The example runner ([`app::runner`]) as an MCP server.
///
/// # Errors
///
/// The parse error if the example policy file is malformed.
pub fn server(
    clock: Clock,
    tickets: TicketStore,
    sink: Arc<dyn EventSink>,
) -> Result<McpServer, toml::de::Error> {
    let runner = app::runner(clock, tickets, sink)?;
    Ok(McpServer::builder(runner)
        .server_info("tool-runtime-examples", env!("CARGO_PKG_VERSION"))
        .instructions("Example tools: the current time, documentation search, ticket creation.")
        .context(context)
        .build())
}
