//! The example application's composition root: the one place where tools, capabilities, the
//! connection broker, policy and approvals are bound together.

use std::sync::Arc;

use async_trait::async_trait;
use tool_runtime::catalog::ToolCatalog;
use tool_runtime::policy::ToolPolicy;
use tool_runtime::prelude::*;
use tool_runtime::runner::ToolRunner;
use tool_runtime::runner::{ApprovalDecision, ApprovalRequest, Approver};
use tool_runtime::runtime::{BrokerError, Clock, ConnectionBroker, Credential, EventSink};

use crate::search::{DocumentIndex, SearchDocs};
use crate::tickets::{CloseTicket, CreateTicket, TicketStore};
use crate::time::GetCurrentTime;

/// The policy file of the example application, `examples/policy.toml`.
pub const POLICY_TOML: &str = include_str!("../policy.toml");

/// The token the fake vault hands out for the `acme-tracker` connection.
const TRACKER_TOKEN: &str = "tracker-token-acme-0001";

/// A stand-in for a secrets vault: it knows one connection's token.
#[derive(Debug, Clone, Copy, Default)]
pub struct FakeVault;

#[async_trait]
impl ConnectionBroker for FakeVault {
    async fn credential(
        &self,
        _ctx: &ToolInvocationContext,
        connection_id: &str,
    ) -> Result<Credential, BrokerError> {
        match connection_id {
            "acme-tracker" => Ok(Credential::new(TRACKER_TOKEN)),
            _ => Err(BrokerError::new("the vault has no credential for this connection")),
        }
    }
}

/// Approves tickets unless they are urgent: those need a person.
#[derive(Debug, Clone, Copy, Default)]
pub struct TicketRules;

#[async_trait]
impl Approver for TicketRules {
    async fn review(&self, request: &ApprovalRequest<'_>) -> ApprovalDecision {
        if request.arguments.get("priority").and_then(|p| p.as_str()) == Some("urgent") {
            request.deny("urgent tickets need a person's approval; ask the user to file it")
        } else {
            request.approve()
        }
    }
}

/// The example tools (`tickets__close_ticket` is registered, but the example policy does not
/// allow it) with their capabilities: a clock, the sample document index, a ticket
/// tracker with an `acme-tracker` project, and the fake vault.
///
/// # Panics
///
/// Never: every declared capability is bound here (the catalog checks it when it is built).
#[must_use]
pub fn catalog(clock: Clock, tickets: TicketStore) -> ToolCatalog {
    ToolCatalog::builder()
        .register::<GetCurrentTime>()
        .register::<SearchDocs>()
        .register::<CreateTicket>()
        .register::<CloseTicket>()
        .capability(clock)
        .capability(DocumentIndex::sample())
        .capability(tickets.with_project("acme-tracker", TRACKER_TOKEN))
        .connection_broker(Arc::new(FakeVault))
        .build()
        .unwrap_or_else(|error| panic!("the example catalog is complete: {error}"))
}

/// The example policy, parsed from [`POLICY_TOML`].
///
/// # Errors
///
/// The parse error if the file is malformed.
pub fn policy() -> Result<ToolPolicy, toml::de::Error> {
    toml::from_str(POLICY_TOML)
}

/// A runner over [`catalog`] with the example policy, the ticket rules and `sink`.
///
/// # Errors
///
/// The parse error if the policy file is malformed.
pub fn runner(
    clock: Clock,
    tickets: TicketStore,
    sink: Arc<dyn EventSink>,
) -> Result<ToolRunner, toml::de::Error> {
    runner_with_approver(clock, tickets, sink, Arc::new(TicketRules))
}

/// [`runner`] with another approver.
///
/// # Errors
///
/// The parse error if the policy file is malformed.
pub fn runner_with_approver(
    clock: Clock,
    tickets: TicketStore,
    sink: Arc<dyn EventSink>,
    approver: Arc<dyn Approver>,
) -> Result<ToolRunner, toml::de::Error> {
    Ok(ToolRunner::builder(catalog(clock.clone(), tickets))
        .policy(policy()?)
        .approver(approver)
        .event_sink(sink)
        .clock(clock)
        .build())
}
