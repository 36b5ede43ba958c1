//! Example tools for `tool-runtime`, used by the example programs, the README and the tests.
//!
//! - [`time::GetCurrentTime`]: read-only, uses the [`Clock`](tool_runtime::runtime::Clock)
//!   capability.
//! - [`search::SearchDocs`]: read-only search with nested filters and enums over a
//!   [`search::DocumentIndex`] capability; its output carries fields that redaction strips.
//! - [`tickets::CreateTicket`] and [`tickets::CloseTicket`]: state changes that need a connection, over a
//!   [`tickets::TicketStore`] capability and credentials from the connection broker.
//!
//! [`app`] is the composition root that binds them to capabilities, a broker and a policy.

pub mod app;
pub mod approvals;
pub mod mcp;
pub mod quickstart;
pub mod search;
pub mod table;
pub mod tickets;
pub mod time;
pub mod wire;

use tool_runtime::prelude::*;

/// The specs of every example tool, in a fixed order.
#[must_use]
pub fn specs() -> [&'static ToolSpec; 4] {
    [
        time::GetCurrentTime::spec(),
        search::SearchDocs::spec(),
        tickets::CreateTicket::spec(),
        tickets::CloseTicket::spec(),
    ]
}
