use std::fmt;
use std::sync::{Arc, Mutex, PoisonError};

use serde::Serialize;
use serde_json::Value;
use tokio::sync::mpsc;

#[cfg(feature = "runner")]
use super::CallOutcome;
use super::{ExecError, Progress, Waiting};
use crate::content::{PartSummary, ToolOutput};

/// What happens during a call, in order: one `ToolCallStart`, any number of
/// `ToolCallProgress`, one `ToolCallResult`, all with the same `tool_call_id`. A call refused
/// before it starts (unknown tool, policy, validation, a hook) emits only its `ToolCallResult`,
/// whose error says at which [step](super::CallStep) it stopped. A call that waits ends with
/// `ToolCallWaiting` instead of its result: before its start when it waits for a decision,
/// after it when the tool asked the user a question in the agent loop (it runs again, with a
/// start of its own, when the answer comes). Waiting is not a failure.
///
/// Events carry redacted data only, with one opt-in exception: the validated arguments on
/// `ToolCallStart`, for a sink whose [`wants_arguments`](EventSink::wants_arguments) says so.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
#[non_exhaustive]
pub enum ToolEvent {
    /// The tool is about to run.
    ToolCallStart {
        /// The call's id.
        tool_call_id: String,
        /// The tool's name.
        tool_name: String,
        /// The run the call belongs to.
        run_id: String,
        /// When, in ms since the Unix epoch.
        at_ms: i64,
        /// The arguments the tool runs with: validated, after any before-call hook or approver
        /// rewrote them (never the model's raw text). Only for a sink that asks for them
        /// ([`EventSink::wants_arguments`]): arguments are not redacted and may be sensitive.
        /// Left out of the JSON when absent.
        #[serde(skip_serializing_if = "Option::is_none")]
        arguments: Option<Value>,
        /// On whose behalf the call runs (the context's subject id), when it has one.
        #[serde(skip_serializing_if = "Option::is_none")]
        subject_id: Option<String>,
        /// The graph the call runs in (the context's graph id), when it has one.
        #[serde(skip_serializing_if = "Option::is_none")]
        graph_id: Option<String>,
    },
    /// The tool reported progress.
    ToolCallProgress {
        /// The call's id.
        tool_call_id: String,
        /// The tool's name.
        tool_name: String,
        /// The report.
        progress: Progress,
    },
    /// The call did not run and waits: an approver or a hook deferred its decision, a client
    /// runs it, or (after its start) the tool asked the user a question the agent loop defers.
    /// It gets its start and result events when it is decided and runs (or its one result
    /// event when it is denied), under the same id. As JSON: `{"type": "tool_call_waiting",
    /// "tool_call_id", "tool_name", "waits_for", "message", "at_ms"}` (and `question` for a
    /// question).
    ToolCallWaiting {
        /// The call's id.
        tool_call_id: String,
        /// The tool's name.
        tool_name: String,
        /// What it waits for.
        #[serde(flatten)]
        waiting: Waiting,
        /// When, in ms since the Unix epoch.
        at_ms: i64,
    },
    /// The call ended.
    ToolCallResult {
        /// The call's id.
        tool_call_id: String,
        /// The tool's name.
        tool_name: String,
        /// The redacted output, or the error.
        #[serde(flatten)]
        outcome: EventOutcome,
        /// When, in ms since the Unix epoch.
        at_ms: i64,
        /// How long the call took in the runner, in ms by the runner's clock: from entering
        /// the runner to this event (for a call refused before it started, the time to refuse
        /// it).
        duration_ms: u64,
    },
}

impl ToolEvent {
    /// The event that ends a call: its result (done or failed), or that it waits (a waiting
    /// call gets its result when it is decided).
    #[cfg(feature = "runner")]
    pub(crate) fn end(
        tool_call_id: String,
        tool_name: String,
        outcome: &CallOutcome,
        at_ms: i64,
        duration_ms: u64,
    ) -> Self {
        let outcome = match outcome {
            CallOutcome::Done(output) => EventOutcome::ok(output),
            CallOutcome::Failed(error) => EventOutcome::Err { error: error.clone() },
            CallOutcome::Waiting(waiting) => {
                let waiting = waiting.clone();
                return Self::ToolCallWaiting { tool_call_id, tool_name, waiting, at_ms };
            }
        };
        Self::ToolCallResult { tool_call_id, tool_name, outcome, at_ms, duration_ms }
    }

    /// The id of the call the event belongs to.
    #[must_use]
    pub fn tool_call_id(&self) -> &str {
        match self {
            Self::ToolCallStart { tool_call_id, .. }
            | Self::ToolCallProgress { tool_call_id, .. }
            | Self::ToolCallWaiting { tool_call_id, .. }
            | Self::ToolCallResult { tool_call_id, .. } => tool_call_id,
        }
    }
}

/// The end of a call that ended (done or failed), as events carry it: the runner's
/// `tool_call_result` and the agent loop's `ToolCallResult` alike. Built from a
/// [`CallOutcome`](super::CallOutcome) or from what the model is sent
/// ([`ToolOutcome`](crate::adapters::ToolOutcome)); never holds bytes.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
pub enum EventOutcome {
    /// The redacted output.
    Ok {
        /// The redacted structured value (`null` for a result without one).
        value: Value,
        /// Every part, in order, without bytes: empty for a result that is its structured value
        /// alone.
        #[serde(skip_serializing_if = "Vec::is_empty")]
        parts: Vec<PartSummary>,
        /// The redacted details, for the application's UI.
        #[serde(skip_serializing_if = "Option::is_none")]
        details: Option<Value>,
    },
    /// The error.
    Err {
        /// The error.
        error: ExecError,
    },
}

impl EventOutcome {
    /// The event's view of a redacted output: its structured value, part summaries (none when
    /// the value is all there is) and details.
    #[must_use]
    pub fn ok(output: &ToolOutput) -> Self {
        let parts = output.part_summaries();
        Self::Ok {
            value: output.structured().cloned().unwrap_or(Value::Null),
            parts,
            details: output.details().cloned(),
        }
    }
}

/// Where the runner sends events. `emit` is called on the call's path, so it must not block.
pub trait EventSink: Send + Sync + fmt::Debug {
    /// Receives one event.
    fn emit(&self, event: ToolEvent);

    /// Whether this sink takes events at all. The runner asks once per call and, when the
    /// answer is `false`, builds no events for it (no copies of ids or results) and calls
    /// [`emit`](Self::emit) not at all. The default is `true`; a sink that drops everything
    /// should say `false`.
    fn enabled(&self) -> bool {
        true
    }

    /// Whether this sink's `ToolCallStart` events carry the call's validated arguments
    /// (`arguments`). Asked once per call, after [`enabled`](Self::enabled) said `true`. The
    /// default is `false`: arguments are not redacted and can be sensitive, so a sink opts in
    /// as [`record_content_in_spans`](crate::runner::ToolRunnerBuilder::record_content_in_spans)
    /// does for spans. Without it no copy of the arguments is made.
    ///
    /// ```
    /// use tool_runtime::runtime::{EventSink, ToolEvent};
    ///
    /// /// An audit trail that shows what each tool ran with.
    /// #[derive(Debug)]
    /// struct Audit;
    ///
    /// impl EventSink for Audit {
    ///     fn emit(&self, event: ToolEvent) {
    ///         if let ToolEvent::ToolCallStart { tool_name, arguments: Some(arguments), .. } = event {
    ///             println!("{tool_name} runs with {arguments}");
    ///         }
    ///     }
    ///
    ///     fn wants_arguments(&self) -> bool {
    ///         true
    ///     }
    /// }
    /// # assert!(Audit.wants_arguments());
    /// ```
    fn wants_arguments(&self) -> bool {
        false
    }
}

/// A shared sink is a sink: pass an `Arc` when you keep a handle on it elsewhere.
///
/// ```
/// use std::sync::Arc;
/// use tool_runtime::prelude::*;
/// use tool_runtime::runtime::{EventSink, NullSink};
///
/// let shared: Arc<dyn EventSink> = Arc::new(NullSink);
/// assert!(!shared.enabled());
/// let runner = ToolRunner::builder(ToolCatalog::builder().build().unwrap()).event_sink(shared).build();
/// # let _ = runner;
/// ```
impl<T: EventSink + ?Sized> EventSink for Arc<T> {
    fn emit(&self, event: ToolEvent) {
        (**self).emit(event);
    }

    fn enabled(&self) -> bool {
        (**self).enabled()
    }

    fn wants_arguments(&self) -> bool {
        (**self).wants_arguments()
    }
}

/// Drops every event; the runner builds none for it.
#[derive(Debug, Clone, Copy, Default)]
pub struct NullSink;

impl EventSink for NullSink {
    fn emit(&self, _event: ToolEvent) {}

    fn enabled(&self) -> bool {
        false
    }
}

/// Keeps every event in memory, in order (tests, short runs). Its start events carry the
/// validated arguments only when made with [`with_arguments`](Self::with_arguments).
///
/// Clones share one list, so keep a clone and give the runner the other:
///
/// ```
/// use tool_runtime::runtime::{CollectingSink, EventSink, ToolEvent};
/// let sink = CollectingSink::new();
/// let given = sink.clone();
/// given.emit(ToolEvent::ToolCallStart {
///     tool_call_id: "call_1".into(),
///     tool_name: "shop__get_order".into(),
///     run_id: "run-1".into(),
///     at_ms: 0,
///     arguments: None,
///     subject_id: None,
///     graph_id: None,
/// });
/// assert_eq!(sink.events().len(), 1);
/// assert_eq!(sink.events()[0].tool_call_id(), "call_1");
/// ```
#[derive(Debug, Clone, Default)]
pub struct CollectingSink {
    events: Arc<Mutex<Vec<ToolEvent>>>,
    arguments: bool,
}

impl CollectingSink {
    /// An empty sink.
    #[must_use]
    pub fn new() -> Self {
        Self::default()
    }

    /// An empty sink whose start events carry the validated arguments
    /// ([`EventSink::wants_arguments`]).
    #[must_use]
    pub fn with_arguments() -> Self {
        Self { arguments: true, ..Self::default() }
    }

    /// A copy of the events so far.
    #[must_use]
    pub fn events(&self) -> Vec<ToolEvent> {
        self.events.lock().unwrap_or_else(PoisonError::into_inner).clone()
    }

    /// Takes the events so far, leaving the sink empty.
    #[must_use]
    pub fn take(&self) -> Vec<ToolEvent> {
        std::mem::take(&mut *self.events.lock().unwrap_or_else(PoisonError::into_inner))
    }
}

impl EventSink for CollectingSink {
    fn emit(&self, event: ToolEvent) {
        self.events.lock().unwrap_or_else(PoisonError::into_inner).push(event);
    }

    fn wants_arguments(&self) -> bool {
        self.arguments
    }
}

/// Sends events into an unbounded tokio channel; events are dropped once the receiver is gone.
#[derive(Debug, Clone)]
pub struct ChannelSink {
    sender: mpsc::UnboundedSender<ToolEvent>,
}

impl ChannelSink {
    /// A sink and the receiver its events arrive on.
    #[must_use]
    pub fn new() -> (Self, mpsc::UnboundedReceiver<ToolEvent>) {
        let (sender, receiver) = mpsc::unbounded_channel();
        (Self { sender }, receiver)
    }
}

impl EventSink for ChannelSink {
    fn emit(&self, event: ToolEvent) {
        // A closed receiver means nobody listens any more; the call goes on regardless.
        let _ = self.sender.send(event);
    }
}
