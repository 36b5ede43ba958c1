//! The example application as an MCP server over stdio: the example catalog, policy and
//! approval rules, with the system clock and an in-memory ticket tracker.
//!
//! ```text
//! cargo run -p examples --bin mcp_server
//! ```

use std::sync::Arc;

use examples::tickets::TicketStore;
use tool_runtime::runtime::{Clock, NullSink};

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let server = examples::mcp::server(Clock::system(), TicketStore::new(), Arc::new(NullSink))?;
    server.serve_stdio().await?;
    Ok(())
}
