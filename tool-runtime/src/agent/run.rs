use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use futures_util::StreamExt;
use serde::Serialize;
use tokio::time::Instant;

use super::deferred::{CallStatus, ResumeLedger, RunState, StateCall, StateKey, StateParts};
use super::parking::Parking;
use super::{ChatModel, Message, ModelError, ModelErrorKind, ModelRequest, ModelTurn, Usage};
use crate::adapters::{ConversationError, check_ready};
use crate::adapters::{Decoded, FinishReason, StreamEvent, ToolCall, ToolChoice, ToolResult};
use crate::catalog::select::ToolSelector;
use crate::catalog::{ToolSource, VisibleTools};
use crate::policy::Decision;
use crate::runner::ToolRunner;
use crate::runtime::{
    Arguments, CallOutcome, EventOutcome, ExecError, Interact, ToolErrorCode, ToolExecResult,
    ToolInvocationContext, ToolInvocationRecord, Waiting,
};
use crate::spec::{ToolEffect, ToolSpec};

/// How an [`Agent`] runs. Start from `AgentConfig::default()` and change what you need:
///
/// ```
/// use std::time::Duration;
/// use tool_runtime::agent::AgentConfig;
/// use tool_runtime::prelude::*;
///
/// let config = AgentConfig {
///     max_iterations: 4,
///     run_alone: vec![ToolEffect::StateChange, ToolEffect::ExternalSideEffect],
///     budget: Some(Duration::from_secs(60)),
///     ..AgentConfig::default()
/// };
/// assert_eq!(config.max_concurrent, 4);
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct AgentConfig {
    /// Model turns that may call tools (default 6). When they are used up, the model is told
    /// so and asked once more with `tool_choice = none` for its answer.
    pub max_iterations: usize,
    /// Calls of one turn that run at the same time (default 4).
    pub max_concurrent: usize,
    /// Calls of tools with these effects run alone, after the calls before them and before
    /// the calls after them (default: none).
    pub run_alone: Vec<ToolEffect>,
    /// Wall-clock budget of the whole run (default: none).
    pub budget: Option<Duration>,
    /// The tool choice of every turn but the last (default: auto).
    pub choice: ToolChoice,
}

impl Default for AgentConfig {
    fn default() -> Self {
        Self {
            max_iterations: 6,
            max_concurrent: 4,
            run_alone: Vec::new(),
            budget: None,
            choice: ToolChoice::auto(),
        }
    }
}

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
    fn model_failed(error: &ModelError) -> Self {
        Self::ModelFailed { kind: error.kind(), message: error.to_string() }
    }
}

/// The end of a run: its answer and every tool call's record.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct AgentDone {
    /// The model's final text (empty when the run stopped before an answer).
    pub answer: String,
    /// Why the run ended.
    pub stop: StopReason,
    /// Model turns taken.
    pub iterations: usize,
    /// Every call that went through the runner, in model order.
    pub records: Vec<ToolInvocationRecord>,
    /// Tokens used, summed over the turns that reported usage.
    pub usage: Usage,
    /// The tools each turn offered, by name, when the agent has a selector
    /// ([`Agent::with_selector`]); empty without one.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub offered: Vec<Vec<String>>,

    /// Counts and latencies of the run's tool calls (from `records`): calls, ok, failed,
    /// total and longest duration, overall and by tool.
    pub tool_stats: crate::runtime::ToolCallStats,
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
    /// The model began a call (streamed; for display).
    ToolCallStarted {
        /// The call's id.
        id: String,
        /// The tool's name.
        name: String,
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
    /// The tools a selector ([`Agent::with_selector`]) offered to a turn, by name (emitted
    /// only when the agent has a selector).
    ToolsOffered {
        /// 1-based.
        iteration: usize,
        /// The offered tools' names, sorted.
        names: Vec<String>,
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
    /// A run is taken up again from its state ([`Agent::resume`]).
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
    /// it from with [`Agent::resume`] (sealed only when the agent has a
    /// [`StateKey`]: see [`Agent::with_state_key`]).
    pub state: Option<RunState>,
}

/// The tool loop: model -> tool calls -> runner -> results -> model, until the model answers.
///
/// Every call goes through [`ToolRunner::exec`]: policy, approval, validation, budgets and
/// redaction apply exactly as they do everywhere. Calls whose arguments are not JSON or that
/// name an unknown tool get an error result the model can correct itself from; calls of a turn
/// the provider cut off are never run. See the [module docs](super) for an example.
///
/// Results go back whole: every part of a call's redacted output (text, images, audio, files)
/// travels in [`Message::ToolResults`] to the model, whose adapter encodes it in the provider's
/// blocks ([`Adapter::result_messages`](crate::adapters::Adapter::result_messages)); the
/// details stay with the application, and [`AgentEvent::ToolCallResult`] carries the parts as
/// [`PartSummary`](crate::content::PartSummary)s (digests, not bytes). A part the model's provider cannot carry (audio for
/// Anthropic) fails the next request with
/// [`EncodeError::UnsupportedPart`](crate::adapters::EncodeError::UnsupportedPart), naming
/// the call and the part: the run stops with [`StopReason::ModelFailed`] (kind
/// [`ModelErrorKind::Request`]) rather than send the result without it.
#[derive(Debug, Clone)]
pub struct Agent {
    pub(super) model: Arc<dyn ChatModel>,
    pub(super) runner: ToolRunner,
    pub(super) config: AgentConfig,
    pub(super) key: Option<StateKey>,
    pub(super) ledger: Option<Arc<dyn ResumeLedger>>,
    /// Picks the tools each turn offers; `None` offers every visible tool.
    pub(super) selector: Option<Arc<dyn ToolSelector>>,
}

/// What the loop tells the model when its tool-calling turns are used up.
const LIMIT_NOTICE: &str = "You have used every tool-calling turn of this run. Answer now with what you have; no more tools can be called.";

impl Agent {
    /// A loop over `model` whose calls go through `runner`, with the default configuration.
    pub fn new(model: Arc<dyn ChatModel>, runner: ToolRunner) -> Self {
        Self {
            model,
            runner,
            config: AgentConfig::default(),
            key: None,
            ledger: None,
            selector: None,
        }
    }

    /// Offers each model turn the tools `selector` picks out of the visible ones, rather than
    /// all of them; the tools are picked for the latest user message. Which tools each turn
    /// offered is reported as [`AgentEvent::ToolsOffered`] and in [`AgentDone::offered`]. A
    /// call of a visible tool the turn did not offer (a model that remembers it from earlier
    /// turns) still runs: selection saves tokens, policy decides what may run.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use tool_runtime::agent::{Agent, ScriptedModel};
    /// use tool_runtime::catalog::ToolCatalog;
    /// use tool_runtime::catalog::select::Bm25Selector;
    /// use tool_runtime::runner::ToolRunner;
    ///
    /// let catalog = Arc::new(ToolCatalog::builder().build().unwrap());
    /// let selector = Bm25Selector::new(catalog.as_ref()).top_k(20);
    /// let agent = Agent::new(Arc::new(ScriptedModel::new(vec![])), ToolRunner::builder(catalog).build())
    ///     .with_selector(Arc::new(selector));
    /// # let _ = agent;
    /// ```
    #[must_use]
    pub fn with_selector(mut self, selector: Arc<dyn ToolSelector>) -> Self {
        self.selector = Some(selector);
        self
    }

    /// The application key that seals the [`RunState`] of a run that stops waiting, and
    /// checks the seal of a state handed to [`resume`](Self::resume). Without one, no state
    /// can be resumed ([`ResumeError::NoKey`](super::deferred::ResumeError::NoKey)).
    #[must_use]
    pub fn with_state_key(mut self, key: StateKey) -> Self {
        self.key = Some(key);
        self
    }

    /// Where [`resume`](Self::resume) records the calls it decided, so that no state is
    /// resumed twice. Needed to resume
    /// ([`ResumeError::NoLedger`](super::deferred::ResumeError::NoLedger) without one): give every
    /// agent that may resume a run the same ledger, an
    /// [`InMemoryLedger`](super::deferred::InMemoryLedger) shared within one process or your
    /// own over the database the processes share.
    #[must_use]
    pub fn with_ledger(mut self, ledger: Arc<dyn ResumeLedger>) -> Self {
        self.ledger = Some(ledger);
        self
    }

    /// Replaces the configuration.
    #[must_use]
    pub fn with_config(mut self, config: AgentConfig) -> Self {
        self.config = config;
        self
    }

    /// The configuration.
    #[must_use]
    pub fn config(&self) -> &AgentConfig {
        &self.config
    }

    /// Runs the loop on `messages` for the caller described by `ctx`, reporting to `on_event`,
    /// and returns the answer, the records and the conversation. `messages` are checked first
    /// ([`check_ready`]: the chat contract, and a last turn whose calls are answered); a
    /// conversation that fails it stops the run at once with
    /// [`StopReason::InvalidConversation`]. Ends with exactly one
    /// [`AgentEvent::Done`]. Cancelling `ctx.cancellation()` stops the run; every call already
    /// started still gets its one result.
    pub async fn run(
        &self,
        messages: Vec<Message>,
        ctx: &ToolInvocationContext,
        on_event: &(dyn Fn(AgentEvent) + Send + Sync),
    ) -> AgentOutput {
        let token = ctx.cancellation().child_token();
        let ctx = ctx.clone().with_cancellation(token.clone());
        let mut state = Loop::new(messages, Duration::ZERO);
        let stop = match check_ready(&state.messages) {
            Ok(()) => self.drive_from(&mut state, &ctx, on_event).await,
            Err(problem) => StopReason::InvalidConversation { problem },
        };
        self.finish_run(state, stop, &ctx, on_event)
    }

    /// The loop from a model request, with the deadline left of the run's budget.
    pub(super) async fn drive_from(
        &self,
        state: &mut Loop,
        ctx: &ToolInvocationContext,
        on_event: &(dyn Fn(AgentEvent) + Send + Sync),
    ) -> StopReason {
        // A budget past the clock's range (`Duration::MAX`) never runs out: no deadline.
        let deadline = self.config.budget.and_then(|budget| {
            Instant::now().checked_add(budget.saturating_sub(state.elapsed_before))
        });
        let visible = self.runner.visible_tools(ctx);
        self.drive(state, &visible, ctx, deadline, on_event).await
    }

    /// The end of a run (or of a part of it): its answer, its one `Done` event, and for a run
    /// that waits, its sealed state.
    pub(super) fn finish_run(
        &self,
        state: Loop,
        stop: StopReason,
        ctx: &ToolInvocationContext,
        on_event: &(dyn Fn(AgentEvent) + Send + Sync),
    ) -> AgentOutput {
        let answer = match (&stop, state.messages.last()) {
            (StopReason::Answered | StopReason::IterationLimit, Some(Message::Assistant(turn))) => {
                turn.text.clone()
            }
            _ => String::new(),
        };
        let elapsed = state.elapsed_before.saturating_add(state.started.elapsed());
        let mut ids: Vec<String> = state.ids.used.into_iter().collect();
        ids.sort_unstable();
        let run_state = state.waiting.map(|calls| {
            let parts = StateParts {
                run_id: ctx.run_id().to_owned(),
                tenant_id: ctx.tenant_id().to_owned(),
                actor_id: ctx.actor_id().to_owned(),
                iterations: state.iterations,
                input_tokens: state.usage.input_tokens,
                output_tokens: state.usage.output_tokens,
                elapsed_ms: u64::try_from(elapsed.as_millis()).unwrap_or(u64::MAX),
                call_ids: ids,
                messages: state.messages.clone(),
                calls,
            };
            RunState::sealed(parts, self.key.as_ref())
        });
        let done = AgentDone {
            answer,
            stop,
            iterations: state.iterations,
            tool_stats: crate::runtime::ToolCallStats::from_records(&state.records),
            records: state.records,
            usage: state.usage,
            offered: state.offered,
        };
        on_event(AgentEvent::Done(done.clone()));
        AgentOutput { done, messages: state.messages, state: run_state }
    }

    async fn drive(
        &self,
        state: &mut Loop,
        visible: &VisibleTools,
        ctx: &ToolInvocationContext,
        deadline: Option<Instant>,
        on_event: &(dyn Fn(AgentEvent) + Send + Sync),
    ) -> StopReason {
        let none = ToolChoice::none();
        let specs: Vec<&ToolSpec> = visible.specs().collect();
        let specs = specs.as_slice();
        loop {
            let last = state.iterations >= self.config.max_iterations;
            if last {
                state.messages.push(Message::user(LIMIT_NOTICE));
            }
            state.iterations += 1;
            let iteration = state.iterations;
            on_event(AgentEvent::IterationStarted { iteration, tools_allowed: !last });
            let choice = if last { &none } else { &self.config.choice };
            let selection = self.selector.as_ref().map(|selector| {
                let selection = selector.select(latest_request(&state.messages), visible);
                let names: Vec<String> = selection.names().map(str::to_owned).collect();
                on_event(AgentEvent::ToolsOffered { iteration, names: names.clone() });
                state.offered.push(names);
                selection
            });
            let offered: Vec<&ToolSpec>;
            let tools = match &selection {
                Some(selection) => {
                    offered = selection.specs().collect();
                    offered.as_slice()
                }
                None => specs,
            };
            let request = ModelRequest { messages: &state.messages, tools, choice };
            // Calls announced while the turn streams; if the turn is dropped, each still gets
            // its one (not run) result event.
            let announced: Mutex<Vec<(String, String)>> = Mutex::new(Vec::new());
            // The provider's ids may repeat across turns (or be minted as `call_1` every
            // turn): events and the runner see ids unique within the run.
            let ids = Mutex::new(TurnIds::new(std::mem::take(&mut state.ids)));
            let forward = |event: StreamEvent| match event {
                StreamEvent::TextDelta(text) => on_event(AgentEvent::TextDelta { text }),
                StreamEvent::CallStarted { id, name, .. } => {
                    let id = ids.lock().unwrap_or_else(PoisonError::into_inner).assign(&id);
                    announced
                        .lock()
                        .unwrap_or_else(PoisonError::into_inner)
                        .push((id.clone(), name.clone()));
                    on_event(AgentEvent::ToolCallStarted { id, name });
                }
                StreamEvent::ArgumentsDelta { index, delta } => {
                    on_event(AgentEvent::ToolCallArgumentsDelta { index, delta });
                }
                _ => {}
            };
            let turn = tokio::select! {
                biased;
                () = ctx.cancellation().cancelled() => Err(StopReason::Cancelled),
                () = sleep_until(deadline) => Err(StopReason::Budget),
                turn = self.model.respond(request, &forward) => {
                    turn.map_err(|error| StopReason::model_failed(&error))
                }
            };
            let mut ids = ids.into_inner().unwrap_or_else(PoisonError::into_inner);
            let ModelTurn { mut decoded } = match turn {
                Ok(turn) => turn,
                Err(stop) => {
                    let announced = announced.into_inner().unwrap_or_else(PoisonError::into_inner);
                    for (id, name) in announced {
                        on_event(AgentEvent::ToolCallResult {
                            id,
                            name,
                            outcome: EventOutcome::Err {
                                error: ExecError::new(
                                    ToolErrorCode::NotRun,
                                    "the model's turn ended before this call was complete; it was not run",
                                ),
                            },
                        });
                    }
                    state.ids = ids.run;
                    return stop;
                }
            };
            // Whatever the model did with its response, the calls are checked against the
            // tools as declared, not as lowered for the provider: a model that decoded without
            // the tools still has its strict-mode `null`s taken back (raising is idempotent).
            decoded.raise(specs);
            if let Some(usage) = decoded.usage {
                // Counts come from the provider: a sum near `u64::MAX` must not overflow.
                state.usage.input_tokens =
                    state.usage.input_tokens.saturating_add(usage.input_tokens);
                state.usage.output_tokens =
                    state.usage.output_tokens.saturating_add(usage.output_tokens);
                on_event(AgentEvent::Usage { usage });
            }
            on_event(AgentEvent::IterationFinished {
                iteration,
                finish: decoded.finish.reason.to_string(),
                calls: decoded.calls.len(),
            });
            let has_calls = !decoded.calls.is_empty();
            let reason = decoded.finish.reason;
            state.messages.push(Message::Assistant(decoded.clone()));
            // The calls as they run: under ids unique within the run. Results go back to the
            // model under the ids the provider gave (`wire`).
            let wire: Vec<String> = decoded.calls.iter().map(|call| call.id.clone()).collect();
            for call in &mut decoded.calls {
                call.id = ids.assign(&call.id);
            }
            state.ids = ids.run;
            let announced = announced.into_inner().unwrap_or_else(PoisonError::into_inner);
            pair_announced(&announced, &decoded.calls, on_event);
            let to_wire = |results: &mut Vec<ToolResult>| {
                for (result, id) in results.iter_mut().zip(&wire) {
                    id.clone_into(&mut result.call_id);
                }
            };
            if !has_calls {
                // A turn the provider broke off is no answer, even if it carries some text.
                if matches!(reason, FinishReason::Error | FinishReason::Unfinished) {
                    let error = super::model::broken_turn(&decoded);
                    return StopReason::ModelFailed {
                        kind: error.kind(),
                        message: error.message().to_owned(),
                    };
                }
                return if last { StopReason::IterationLimit } else { StopReason::Answered };
            }
            if last {
                // Calls made although tools were not allowed: answered, never run.
                let results: Vec<ToolResult> = decoded
                    .calls
                    .iter()
                    .map(|call| {
                        ToolResult::error(
                            call,
                            ToolErrorCode::NotRun,
                            "no more tools can be called in this run; the call was not run",
                        )
                    })
                    .collect();
                results.iter().for_each(|result| on_event(result_event(result)));
                let mut results = results;
                to_wire(&mut results);
                state.messages.push(Message::ToolResults(results));
                return StopReason::IterationLimit;
            }
            let (slots, records) = self.execute_turn(&decoded, ctx, deadline, on_event).await;
            state.records.extend(records);
            if slots.iter().any(|slot| matches!(slot, Slot::Waiting { .. })) {
                // The turn waits: its results go to the model when every call is decided.
                let (calls, waiting) = self.waiting_calls(&decoded, &wire, slots);
                state.waiting = Some(calls);
                return StopReason::Waiting { calls: waiting };
            }
            let mut results: Vec<ToolResult> = slots.into_iter().filter_map(Slot::done).collect();
            to_wire(&mut results);
            state.messages.push(Message::ToolResults(results));
            if ctx.cancellation().is_cancelled() {
                return if deadline.is_some_and(|deadline| Instant::now() >= deadline) {
                    StopReason::Budget
                } else {
                    StopReason::Cancelled
                };
            }
        }
    }

    /// Runs a turn's calls and returns their results in model order, with the records of the
    /// calls that went through the runner. When the budget runs out meanwhile, the run is
    /// cancelled and the calls still end, each with its one result.
    async fn execute_turn(
        &self,
        decoded: &Decoded,
        ctx: &ToolInvocationContext,
        deadline: Option<Instant>,
        on_event: &(dyn Fn(AgentEvent) + Send + Sync),
    ) -> (Vec<Slot>, Vec<ToolInvocationRecord>) {
        let work = self.execute_calls(decoded, ctx, on_event);
        tokio::pin!(work);
        let mut fired = false;
        loop {
            tokio::select! {
                outcome = &mut work => return outcome,
                () = sleep_until(deadline), if !fired => {
                    fired = true;
                    ctx.cancellation().cancel();
                }
            }
        }
    }

    async fn execute_calls(
        &self,
        decoded: &Decoded,
        ctx: &ToolInvocationContext,
        on_event: &(dyn Fn(AgentEvent) + Send + Sync),
    ) -> (Vec<Slot>, Vec<ToolInvocationRecord>) {
        let runnable = decoded.finish.allows_execution();
        let mut results: Vec<Option<Slot>> = vec![None; decoded.calls.len()];
        let mut records: Vec<Option<ToolInvocationRecord>> = vec![None; decoded.calls.len()];
        // Result events go out in the model's order, each as soon as it and every result
        // before it are known.
        let mut emitted = 0;
        let mut batch = Vec::new();
        for (index, call) in decoded.calls.iter().enumerate() {
            if !runnable || !call.complete {
                results[index] = Some(Slot::Done(ToolResult::error(
                    call,
                    ToolErrorCode::Truncated,
                    "the response was cut off before this call was complete, so it was not run",
                )));
            } else if self.runs_alone(&call.name) {
                let before = std::mem::take(&mut batch);
                self.run_batch(&before, decoded, ctx, &mut results, &mut records, on_event).await;
                emit_ready(&results, &mut emitted, on_event, &decoded.calls);
                self.run_batch(&[index], decoded, ctx, &mut results, &mut records, on_event).await;
            } else {
                batch.push(index);
            }
            emit_ready(&results, &mut emitted, on_event, &decoded.calls);
        }
        self.run_batch(&batch, decoded, ctx, &mut results, &mut records, on_event).await;
        emit_ready(&results, &mut emitted, on_event, &decoded.calls);
        (results.into_iter().flatten().collect(), records.into_iter().flatten().collect())
    }

    fn runs_alone(&self, name: &str) -> bool {
        !self.config.run_alone.is_empty()
            && self
                .runner
                .catalog()
                .get(name)
                .is_some_and(|tool| self.config.run_alone.contains(&tool.effect()))
    }

    async fn run_batch(
        &self,
        indices: &[usize],
        decoded: &Decoded,
        ctx: &ToolInvocationContext,
        results: &mut [Option<Slot>],
        records: &mut [Option<ToolInvocationRecord>],
        on_event: &(dyn Fn(AgentEvent) + Send + Sync),
    ) {
        // Only a catalog that binds `Interact` has tools that can ask the user anything.
        let asks = self.runner.catalog().capabilities().contains::<Interact>();
        let outcomes: Vec<(usize, ToolExecResult)> =
            futures_util::stream::iter(indices.iter().copied())
                .map(|index| {
                    let call = &decoded.calls[index];
                    let mut call_ctx = ctx.clone().with_tool_call_id(call.id.clone());
                    if asks {
                        // A question no bound backend answers waits for the user's answer.
                        call_ctx = call_ctx.with_deferred_questions(Parking::new(Vec::new()));
                    }
                    if self.needs_approval(&call.name) {
                        on_event(AgentEvent::ApprovalRequired {
                            id: call.id.clone(),
                            name: call.name.clone(),
                        });
                    }
                    async move {
                        // Parsed arguments go to the runner as they are; only text that did not parse
                        // goes as text (the runner reports it as `invalid_json`).
                        let text;
                        let args = match call.arguments.value() {
                            Some(value) => Arguments::from(value),
                            None => {
                                text = call.arguments.to_json_text();
                                Arguments::from(text.as_str())
                            }
                        };
                        (index, self.runner.exec(&call.name, args, &call_ctx).await)
                    }
                })
                .buffered(self.config.max_concurrent.max(1))
                .collect()
                .await;
        for (index, executed) in outcomes {
            let call = &decoded.calls[index];
            let Some(result) = ToolResult::from_exec(call, &executed) else {
                // Not run and not failed: it waits, and gets its record when it is decided.
                let arguments = executed.args().cloned().unwrap_or(serde_json::Value::Null);
                let CallOutcome::Waiting(waiting) = executed.outcome else { continue };
                // A call that asked got past its approval, if policy required one.
                let approved = waiting.question.is_some() && self.needs_approval(&call.name);
                results[index] = Some(Slot::Waiting { waiting, arguments, approved });
                continue;
            };
            results[index] = Some(Slot::Done(result));
            records[index] = Some(executed.into_record());
        }
    }
}

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
        }
    }
}

/// Where one call of a turn stands after the runner saw it.
#[derive(Debug, Clone)]
pub(super) enum Slot {
    /// Its result for the model (under the run's id).
    Done(ToolResult),
    /// It waits (for [`WaitsFor::Elicitation`](crate::runtime::WaitsFor::Elicitation), with the question it asked), with its
    /// validated arguments, and whether it was approved before it asked.
    Waiting { waiting: Waiting, arguments: serde_json::Value, approved: bool },
}

impl Slot {
    fn done(self) -> Option<ToolResult> {
        match self {
            Self::Done(result) => Some(result),
            Self::Waiting { .. } => None,
        }
    }
}

impl Agent {
    /// Whether policy asks an approver about calls of `name` (for the approval-required event).
    fn needs_approval(&self, name: &str) -> bool {
        let policy = self.runner.policy();
        if policy.require_approval.is_empty() && policy.tools.is_empty() {
            return false;
        }
        self.runner.catalog().get(name).is_some_and(|tool| {
            policy.decide(tool.name(), tool.effect()) == Decision::RequireApproval
        })
    }

    /// The calls of a turn that waits, as its state keeps them: results under the provider's
    /// ids, waiting calls with their arguments and the hashes they are bound to. Also the ids
    /// of the waiting calls.
    fn waiting_calls(
        &self,
        decoded: &Decoded,
        wire: &[String],
        slots: Vec<Slot>,
    ) -> (Vec<StateCall>, Vec<String>) {
        let mut waiting = Vec::new();
        let calls = decoded
            .calls
            .iter()
            .zip(wire)
            .zip(slots)
            .map(|((call, wire_id), slot)| {
                let status = match slot {
                    Slot::Done(mut result) => {
                        wire_id.clone_into(&mut result.call_id);
                        CallStatus::Ran { result }
                    }
                    Slot::Waiting { waiting: on, arguments, approved } => {
                        waiting.push(call.id.clone());
                        CallStatus::waiting(
                            on.waits_for,
                            arguments,
                            self.spec_hash_of(&call.name).unwrap_or_default(),
                            on.question,
                            Vec::new(),
                            approved,
                        )
                    }
                };
                StateCall {
                    id: call.id.clone(),
                    wire_id: wire_id.clone(),
                    tool_name: call.name.clone(),
                    status,
                }
            })
            .collect();
        (calls, waiting)
    }

    /// The [`spec_hash`] of the tool `name` in the runner's catalog.
    pub(super) fn spec_hash_of(&self, name: &str) -> Option<String> {
        self.runner.catalog().get(name).map(|tool| tool.spec().spec_hash().to_owned())
    }
}

/// The call ids handed out so far in a run.
#[derive(Debug, Default)]
pub(super) struct RunIds {
    pub(super) used: HashSet<String>,
    /// The next suffix to try per id that repeated, so many repeats cost linear time.
    suffixes: HashMap<String, usize>,
}

/// The ids of one turn: each of the provider's ids (unique within a response) maps to one id
/// unique within the run, the same for its start event, its run and its result event.
#[derive(Debug)]
struct TurnIds {
    run: RunIds,
    turn: HashMap<String, String>,
}

impl TurnIds {
    fn new(run: RunIds) -> Self {
        Self { run, turn: HashMap::new() }
    }

    /// The run's id for the provider's `id`: the same id when the run has not used it yet,
    /// else `<id>~2`, `<id>~3`, ... (the first that is free).
    fn assign(&mut self, id: &str) -> String {
        if let Some(assigned) = self.turn.get(id) {
            return assigned.clone();
        }
        let assigned = if self.run.used.contains(id) {
            let next = self.run.suffixes.entry(id.to_owned()).or_insert(2);
            loop {
                let candidate = format!("{id}~{next}");
                *next += 1;
                if !self.run.used.contains(&candidate) {
                    break candidate;
                }
            }
        } else {
            id.to_owned()
        };
        self.run.used.insert(assigned.clone());
        self.turn.insert(id.to_owned(), assigned.clone());
        assigned
    }
}

/// Every started id gets one result and every result has a start: a call the stream
/// announced that the turn does not hold gets its (not run) result now, and a call the turn
/// holds that was never announced (a model that does not stream, a call without a name) gets
/// its start before it runs.
fn pair_announced(
    announced: &[(String, String)],
    calls: &[ToolCall],
    on_event: &(dyn Fn(AgentEvent) + Send + Sync),
) {
    let held: HashSet<&str> = calls.iter().map(|call| call.id.as_str()).collect();
    for (id, name) in announced.iter().filter(|(id, _)| !held.contains(id.as_str())) {
        on_event(AgentEvent::ToolCallResult {
            id: id.clone(),
            name: name.clone(),
            outcome: EventOutcome::Err {
                error: ExecError::new(
                    ToolErrorCode::NotRun,
                    "the model's turn does not hold this call; it was not run",
                ),
            },
        });
    }
    let started: HashSet<&str> = announced.iter().map(|(id, _)| id.as_str()).collect();
    for call in calls.iter().filter(|call| !started.contains(call.id.as_str())) {
        on_event(AgentEvent::ToolCallStarted { id: call.id.clone(), name: call.name.clone() });
    }
}

/// Emits the result events from `*emitted` on, as far as every result is known.
fn emit_ready(
    results: &[Option<Slot>],
    emitted: &mut usize,
    on_event: &(dyn Fn(AgentEvent) + Send + Sync),
    calls: &[crate::adapters::ToolCall],
) {
    while let Some(Some(slot)) = results.get(*emitted) {
        on_event(match slot {
            Slot::Done(result) => result_event(result),
            Slot::Waiting { waiting, .. } => AgentEvent::ToolCallWaiting {
                id: calls[*emitted].id.clone(),
                name: calls[*emitted].name.clone(),
                waiting: waiting.clone(),
            },
        });
        *emitted += 1;
    }
}

pub(super) fn result_event(result: &ToolResult) -> AgentEvent {
    AgentEvent::ToolCallResult {
        id: result.call_id.clone(),
        name: result.name.clone(),
        outcome: result.outcome.to_event(),
    }
}

/// What the user last asked: the text selection picks tools for (the loop's own notice that
/// the tool-calling turns are used up is not a request).
fn latest_request(messages: &[Message]) -> &str {
    messages
        .iter()
        .rev()
        .find_map(|message| match message {
            Message::User(text) if text != LIMIT_NOTICE => Some(text.as_str()),
            _ => None,
        })
        .unwrap_or("")
}

async fn sleep_until(deadline: Option<Instant>) {
    match deadline {
        Some(deadline) => tokio::time::sleep_until(deadline).await,
        None => std::future::pending().await,
    }
}
