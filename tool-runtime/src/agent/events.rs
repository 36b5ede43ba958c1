//! The run's vocabulary: why a run ended, what it reports while it goes, and what it hands
//! back.

use serde::Serialize;

use super::deferred::RunState;
use super::{Message, ModelError, ModelErrorKind, Usage};
use crate::adapters::{ConversationError, ToolResult};
use crate::runtime::{EventOutcome, ToolInvocationRecord, Waiting};
use crate::store::StoreError;

/// Why a run ended.
///
/// As JSON: `{"kind": "answered"}`, and for a failed model
/// `{"kind": "model_failed", "error": {"status": 503}, "message": "..."}` (`error` is the
/// [`ModelErrorKind`] in snake case: `"transport"`, `"timeout"`, `{"status": 429}`, ...).
///
/// ```
/// use tool_runtime::agent::{ModelErrorKind, StopReason};
///
/// let stop = StopReason::ModelFailed { kind: ModelErrorKind::Status(503), message: "overloaded".into() };
/// assert_eq!(
///     serde_json::to_value(&stop).unwrap(),
///     serde_json::json!({"kind": "model_failed", "error": {"status": 503}, "message": "overloaded"})
/// );
/// assert_eq!(serde_json::to_value(StopReason::Answered).unwrap(), serde_json::json!({"kind": "answered"}));
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case", tag = "kind")]
#[non_exhaustive]
pub enum StopReason {
    /// The model answered without calling tools.
    Answered,
    /// The model used every tool-calling turn; its last answer was asked for without tools.
    IterationLimit,
    /// The run's wall-clock budget ran out.
    Budget,
    /// The run was cancelled.
    Cancelled,
    /// The model could not answer: its client failed (kind and message of its [`ModelError`]),
    /// or the provider broke its turn off: an error inside the response (kind
    /// [`ModelErrorKind::Provider`], with the provider's error type and message), or a
    /// response that ended before the provider finished it (kind
    /// [`ModelErrorKind::Transport`], as the HTTP clients report a cut stream).
    ModelFailed {
        /// What failed, as the [`ModelError`] said; match on it to retry or report.
        #[serde(rename = "error")]
        kind: ModelErrorKind,
        /// What happened, safe to show.
        message: String,
    },
    /// The conversation handed in breaks the chat contract (a result without its call, a
    /// call left unanswered, a call id over 128 bytes...): nothing was sent and nothing ran.
    InvalidConversation {
        /// The first message at fault and what is wrong with it.
        problem: ConversationError,
    },
    /// Calls of the model's last turn wait for a decision (an approver deferred them) or for a
    /// client's result: every other call of the turn ran, and
    /// [`AgentOutput::state`] holds the [`RunState`] to resume with (see
    /// [`deferred`](super::deferred)). Waiting is no failure. As JSON:
    /// `{"kind": "waiting", "calls": ["call_1"]}`.
    Waiting {
        /// The waiting calls' ids (the run's), in model order.
        calls: Vec<String>,
    },
}

impl StopReason {
    pub(super) fn model_failed(error: &ModelError) -> Self {
        Self::ModelFailed { kind: error.kind(), message: error.to_string() }
    }
}

/// The end of a run: its answer and every tool call's record.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct AgentDone {
    /// The model's final text (empty when the run stopped before an answer). A run that waits
    /// only for calls of [asynchronous](crate::spec::ToolSpec::is_asynchronous) tools the
    /// model did not wait for ([`ToolCall::is_async`](crate::adapters::ToolCall::is_async))
    /// answers with what the model said meanwhile.
    pub answer: String,
    /// Why the run ended.
    pub stop: StopReason,
    /// Model turns taken.
    pub iterations: usize,
    /// Every call that went through the runner, in model order.
    pub records: Vec<ToolInvocationRecord>,
    /// Tokens used, summed over the turns that reported usage.
    pub usage: Usage,
    /// The tools each turn offered, by name in the order sent, when the agent has a selector
    /// ([`Agent::with_selector`](super::Agent::with_selector)) or tool search
    /// ([`AgentConfig::tool_search`](super::AgentConfig::tool_search)); empty without either.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub offered: Vec<Vec<String>>,
    /// What each of the model's tool searches found, in order
    /// ([`AgentConfig::tool_search`](super::AgentConfig::tool_search)); empty without it.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub found: Vec<FoundTools>,

    /// Counts and latencies of the run's tool calls (from `records`): calls, ok, failed,
    /// total and longest duration, overall and by tool.
    pub tool_stats: crate::runtime::ToolCallStats,
}

/// What one of the model's tool searches found
/// ([`AgentConfig::tool_search`](super::AgentConfig::tool_search)).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FoundTools {
    /// The turn that searched (1-based).
    pub iteration: usize,
    /// What the model searched for.
    pub query: String,
    /// The tools found, best first: offered from the next request on.
    pub tools: Vec<String>,
}

/// What a run reports while it goes.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
#[non_exhaustive]
pub enum AgentEvent {
    /// A model turn begins.
    IterationStarted {
        /// 1-based.
        iteration: usize,
        /// Whether the model may call tools in this turn.
        tools_allowed: bool,
    },
    /// Text from the model, as it streams.
    TextDelta {
        /// The text.
        text: String,
    },
    /// The model began a call (streamed, for display: its arguments are still coming). The
    /// tool's run starts later, with [`ToolCallRunning`](Self::ToolCallRunning).
    ToolCallStarted {
        /// The call's id.
        id: String,
        /// The tool's name.
        name: String,
    },
    /// The runner starts the call's tool: it passed policy, validation, the before-call hooks
    /// and its approval, and runs now (a call refused before it gets its result without this
    /// event; a call that waits gets it when it is decided and runs).
    ToolCallRunning {
        /// The call's id.
        id: String,
        /// The tool's name.
        name: String,
        /// The validated arguments it runs with (after any hook or approver rewrote them; never
        /// the model's raw text), with
        /// [`AgentConfig::arguments_in_events`](super::AgentConfig::arguments_in_events) only.
        #[serde(skip_serializing_if = "Option::is_none")]
        arguments: Option<serde_json::Value>,
    },
    /// More of a call's arguments (streamed; for display).
    ToolCallArgumentsDelta {
        /// The call's number in the turn.
        index: usize,
        /// The raw text.
        delta: String,
    },
    /// A call's result, as it goes back to the model.
    ToolCallResult {
        /// The call's id.
        id: String,
        /// The tool's name.
        name: String,
        /// The redacted output (value, parts without bytes, details), or the error: the same
        /// [`EventOutcome`] as the runner's `tool_call_result` event.
        outcome: EventOutcome,
    },
    /// The tools a selector ([`Agent::with_selector`](super::Agent::with_selector)) or tool
    /// search ([`AgentConfig::tool_search`](super::AgentConfig::tool_search): those always
    /// offered, then those found) offered to a turn, by name (emitted only with either).
    ToolsOffered {
        /// 1-based.
        iteration: usize,
        /// The offered tools' names, in the order sent: by default the conversation's
        /// earlier offer first, then the new picks, each group by name
        /// ([`AgentConfig::reselect`](super::AgentConfig::reselect)).
        names: Vec<String>,
    },
    /// The model searched its tools ([`AgentConfig::tool_search`](super::AgentConfig::tool_search))
    /// and the agent answered: the tools found, offered from the next request on. The search
    /// call's [`ToolCallResult`](Self::ToolCallResult) follows.
    ToolsFound {
        /// The search call's id.
        id: String,
        /// What the model searched for.
        query: String,
        /// The tools found, best first (none when nothing new matched).
        names: Vec<String>,
    },
    /// The selector could not get ready for this turn's requests
    /// ([`ToolSelector::prepare`](crate::catalog::select::ToolSelector::prepare) failed: an
    /// embedding service out of reach, say). The turn's tools are selected all the same, with
    /// what the selector has ([`HybridSelector`](crate::catalog::select::HybridSelector) ranks
    /// the requests it could not embed by keywords alone).
    SelectorFailed {
        /// 1-based.
        iteration: usize,
        /// What failed.
        message: String,
    },
    /// The model is asked for a turn: what it was sent, as a hash (SHA-256, hex) over the
    /// system text, the offered tools (each by name and spec hash, in the order sent), with
    /// tool search the search's description and the tools to find, and the tool choice. Two requests with the same hash offered the model the same instructions
    /// and tools; a change (a selector's pick, a tool redefined, new instructions) shows as a
    /// new hash, and a provider's prompt cache is likely lost with it. The conversation
    /// itself is not hashed.
    ModelRequested {
        /// 1-based.
        iteration: usize,
        /// The hash, 64 hex characters.
        prompt_hash: String,
        /// How many tools were offered.
        tools: usize,
    },
    /// A model turn ended.
    IterationFinished {
        /// 1-based.
        iteration: usize,
        /// How the turn ended.
        finish: String,
        /// How many calls it made.
        calls: usize,
    },
    /// Tokens a turn used.
    Usage {
        /// The turn's usage.
        usage: Usage,
    },
    /// Policy asks an approver about this call (it is about to go to the runner).
    ApprovalRequired {
        /// The call's id.
        id: String,
        /// The tool's name.
        name: String,
    },
    /// The call did not run and waits (see [`deferred`](super::deferred)); it is in the
    /// run's [`RunState`]. Its result event comes after it is decided, on resume.
    ToolCallWaiting {
        /// The call's id.
        id: String,
        /// The tool's name.
        name: String,
        /// For what (and for a question, the question): as the runner's `tool_call_waiting`.
        #[serde(flatten)]
        waiting: Waiting,
    },
    /// A run is taken up again from its state ([`Agent::resume`](super::Agent::resume)).
    Resumed {
        /// Calls decided now.
        decided: usize,
        /// Calls that still wait after these decisions.
        waiting: usize,
    },
    /// A waiting call was decided; its result event follows.
    CallDecided {
        /// The call's id.
        id: String,
        /// The tool's name.
        name: String,
        /// `"approved"`, `"edited"`, `"denied"`, `"supplied"` or `"answered"`. A call that
        /// asks the user a question as it runs is followed by its
        /// [`ToolCallWaiting`](Self::ToolCallWaiting) instead of a result.
        decision: &'static str,
    },
    /// The run ended. Emitted exactly once, last.
    Done(AgentDone),
}

/// The whole of a run: the final event's content and the conversation, including the model's
/// turns and the tool results, ready to continue.
#[derive(Debug, Clone)]
pub struct AgentOutput {
    /// The answer, the stop reason and the records.
    pub done: AgentDone,
    /// The conversation at the end of the run.
    pub messages: Vec<Message>,
    /// For a run that stopped [`Waiting`](StopReason::Waiting): the sealed state to resume
    /// it from with [`Agent::resume`](super::Agent::resume) (sealed only when the agent has a
    /// [`StateKey`](super::StateKey): see
    /// [`Agent::with_state_key`](super::Agent::with_state_key)).
    pub state: Option<RunState>,
    /// For an agent with a [store](super::Agent::with_store): why the run's state could not be
    /// saved there (a run that waits) or the run marked ended (a resumed run that ended).
    /// Then the run is not listed as waiting, or stays held by this resume: the state is still
    /// in [`state`](Self::state), and an operator can [take it over](super::Agent::take_over).
    pub store_error: Option<StoreError>,
    /// For an agent with a store that keeps the audit trail
    /// ([`AgentConfig::audit`](super::AgentConfig::audit)): why the audit entries of the run's
    /// calls could not be appended (none was: an append is all or none). The run's state was
    /// still saved or ended as [`store_error`](Self::store_error) says; the records are in
    /// `done.records`.
    pub audit_error: Option<StoreError>,
}

/// The event of a call's result, under the id it has in `result`.
pub(super) fn result_event(result: &ToolResult) -> AgentEvent {
    AgentEvent::ToolCallResult {
        id: result.call_id.clone(),
        name: result.name.clone(),
        outcome: result.outcome.to_event(),
    }
}

/// What the runner tells when a call the agent runs starts its tool: its
/// [`AgentEvent::ToolCallRunning`], with the arguments when `with_arguments`
/// ([`AgentConfig::arguments_in_events`](super::AgentConfig::arguments_in_events)).
pub(super) fn running(
    with_arguments: bool,
    on_event: &(dyn Fn(AgentEvent) + Send + Sync),
) -> impl Fn(&str, &str, &serde_json::Value) + Send + Sync + '_ {
    move |id, name, arguments| {
        on_event(AgentEvent::ToolCallRunning {
            id: id.to_owned(),
            name: name.to_owned(),
            arguments: with_arguments.then(|| arguments.clone()),
        });
    }
}
