//! The state of a run while the loop drives it.

use std::time::Duration;

use super::deferred::StateCall;
use super::ids::RunIds;
use super::{FoundTools, Message, Usage};
use crate::runtime::ToolInvocationRecord;

/// A run while the loop drives it.
pub(super) struct Loop {
    pub(super) messages: Vec<Message>,
    pub(super) records: Vec<ToolInvocationRecord>,
    pub(super) usage: Usage,
    pub(super) iterations: usize,
    pub(super) ids: RunIds,
    /// Time the run used before this process took it up (a resumed run's earlier parts).
    pub(super) elapsed_before: Duration,
    pub(super) started: std::time::Instant,
    /// The calls of a turn that waits, once the run stops on them.
    pub(super) waiting: Option<Vec<StateCall>>,
    /// The tools each turn offered, when the agent has a selector.
    pub(super) offered: Vec<Vec<String>>,
    /// The tools offered so far, grown request by request (unless the agent re-selects).
    pub(super) grown: Grown,
    /// What each of the model's tool searches found.
    pub(super) found: Vec<FoundTools>,
    /// The records of the calls that wait, for the audit trail alone: each gets its record
    /// proper when it is decided.
    pub(super) waited: Vec<ToolInvocationRecord>,
}

impl Loop {
    pub(super) fn new(messages: Vec<Message>, elapsed_before: Duration) -> Self {
        Self {
            messages,
            records: Vec::new(),
            usage: Usage::default(),
            iterations: 0,
            ids: RunIds::default(),
            elapsed_before,
            started: std::time::Instant::now(),
            waiting: None,
            offered: Vec::new(),
            waited: Vec::new(),
            grown: Grown::default(),
            found: Vec::new(),
        }
    }
}

/// The tools a conversation was offered so far, in the order first picked, and how many of
/// its requests were looked at.
#[derive(Debug, Default)]
pub(super) struct Grown {
    pub(super) names: Vec<String>,
    pub(super) requests: usize,
}
