//! The peer of the MCP benchmarks: a plain rmcp server with the same two tools as
//! [`crate::tools`], written the way rmcp's own `#[tool]` macros are meant to be used (arguments
//! deserialised by serde, the output returned as `Json`, which rmcp sends as
//! `structuredContent` and as text). It validates nothing and redacts nothing: what the
//! project's server does on top of it is what the comparison measures.

use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::wrapper::{Json, Parameters};
use rmcp::service::{RoleClient, RunningService};
use rmcp::{ServerHandler, ServiceExt, tool, tool_handler, tool_router};

use crate::tools::{MediumOut, SmallOut};

/// The plain rmcp server: `bench__small` and `bench__medium`, each answering its arguments.
#[derive(Debug, Clone)]
pub struct PlainServer {
    tool_router: ToolRouter<Self>,
}

impl Default for PlainServer {
    fn default() -> Self {
        Self::new()
    }
}

#[tool_router(router = tool_router)]
impl PlainServer {
    /// The server with its two tools.
    #[must_use]
    pub fn new() -> Self {
        Self { tool_router: Self::tool_router() }
    }

    /// Echo a query back: the small tool.
    #[tool(name = "bench__small", annotations(read_only_hint = true))]
    async fn small(&self, Parameters(args): Parameters<SmallOut>) -> Json<SmallOut> {
        Json(args)
    }

    /// Record an order: the medium tool.
    #[tool(name = "bench__medium", annotations(read_only_hint = true))]
    async fn medium(&self, Parameters(args): Parameters<MediumOut>) -> Json<MediumOut> {
        Json(args)
    }
}

#[tool_handler(router = self.tool_router)]
impl ServerHandler for PlainServer {}

/// An rmcp client connected to `server` over a fresh in-memory pipe, the server served on a
/// task of the current runtime: how the MCP benchmarks and profile workloads reach a server.
///
/// # Panics
///
/// When the handshake fails.
pub async fn connect(server: impl ServerHandler) -> RunningService<RoleClient, ()> {
    let (client_io, server_io) = tokio::io::duplex(64 * 1024);
    tokio::spawn(async move {
        if let Ok(running) = server.serve(server_io).await {
            let _ = running.waiting().await;
        }
    });
    ().serve(client_io).await.expect("the handshake")
}
