use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use futures_util::StreamExt;
use serde::Serialize;
use tokio::time::Instant;

use super::{ChatModel, Message, ModelError, ModelErrorKind, ModelRequest, ModelTurn, Usage};
use crate::adapters::{ConversationError, check_conversation};
use crate::adapters::{
    Decoded, FinishReason, StreamEvent, ToolCall, ToolChoice, ToolOutcome, ToolResult,
};
use crate::catalog::ToolSource;
use crate::content::PartSummary;
use crate::runner::ToolRunner;
use crate::runtime::{Arguments, ToolExecResult, ToolInvocationContext, ToolInvocationRecord};
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
    /// or the provider broke its turn off (an error inside the response, or a response that
    /// ended before the provider finished it: kind [`ModelErrorKind::Transport`], as the HTTP
    /// clients report a cut stream).
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
        /// The redacted output, or the error code and message.
        outcome: ResultSummary,
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
    /// The run ended. Emitted exactly once, last.
    Done(AgentDone),
}

/// A tool result as events carry it. Spelt like the runner's
/// [`EventOutcome`](crate::runtime::EventOutcome): `Ok { value, parts }` or `Err { .. }`.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
pub enum ResultSummary {
    /// The redacted output.
    Ok {
        /// The structured value (`null` for a result without one).
        value: serde_json::Value,
        /// Every part, in order, without bytes (digests instead): empty for a result that is
        /// its structured value alone.
        #[serde(skip_serializing_if = "Vec::is_empty")]
        parts: Vec<PartSummary>,
    },
    /// The failure.
    Err {
        /// The code (`validation`, `policy_denied`, `truncated`, ...).
        code: Option<String>,
        /// The safe message.
        message: String,
    },
}

impl From<&ToolOutcome> for ResultSummary {
    fn from(outcome: &ToolOutcome) -> Self {
        match outcome {
            ToolOutcome::Ok(output) => Self::Ok {
                value: output.structured().cloned().unwrap_or(serde_json::Value::Null),
                parts: output.part_summaries(),
            },
            ToolOutcome::Error { code, message } => {
                Self::Err { code: code.clone(), message: message.clone() }
            }
        }
    }
}

/// The whole of a run: the final event's content and the conversation, including the model's
/// turns and the tool results, ready to continue.
#[derive(Debug, Clone)]
pub struct AgentOutput {
    /// The answer, the stop reason and the records.
    pub done: AgentDone,
    /// The conversation at the end of the run.
    pub messages: Vec<Message>,
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
/// [`PartSummary`]s (digests, not bytes). A part the model's provider cannot carry (audio for
/// Anthropic) fails the next request with
/// [`EncodeError::UnsupportedPart`](crate::adapters::EncodeError::UnsupportedPart), naming
/// the call and the part: the run stops with [`StopReason::ModelFailed`] (kind
/// [`ModelErrorKind::Request`]) rather than send the result without it.
#[derive(Debug, Clone)]
pub struct Agent {
    model: Arc<dyn ChatModel>,
    runner: ToolRunner,
    config: AgentConfig,
}

/// What the loop tells the model when its tool-calling turns are used up.
const LIMIT_NOTICE: &str = "You have used every tool-calling turn of this run. Answer now with what you have; no more tools can be called.";

impl Agent {
    /// A loop over `model` whose calls go through `runner`, with the default configuration.
    pub fn new(model: Arc<dyn ChatModel>, runner: ToolRunner) -> Self {
        Self { model, runner, config: AgentConfig::default() }
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
    /// ([`check_conversation`]); a conversation that breaks the chat contract stops the run at
    /// once with [`StopReason::InvalidConversation`]. Ends with exactly one
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
        // A budget past the clock's range (`Duration::MAX`) never runs out: no deadline.
        let deadline = self.config.budget.and_then(|budget| Instant::now().checked_add(budget));
        let visible = self.runner.visible_tools(&ctx);
        let specs: Vec<&ToolSpec> = visible.specs().collect();
        let mut state = RunState {
            messages,
            records: Vec::new(),
            usage: Usage::default(),
            iterations: 0,
            ids: RunIds::default(),
        };
        let stop = match check_conversation(&state.messages) {
            Ok(()) => self.drive(&mut state, &specs, &ctx, deadline, on_event).await,
            Err(problem) => StopReason::InvalidConversation { problem },
        };
        let answer = match (&stop, state.messages.last()) {
            (StopReason::Answered | StopReason::IterationLimit, Some(Message::Assistant(turn))) => {
                turn.text.clone()
            }
            _ => String::new(),
        };
        let done = AgentDone {
            answer,
            stop,
            iterations: state.iterations,
            records: state.records,
            usage: state.usage,
        };
        on_event(AgentEvent::Done(done.clone()));
        AgentOutput { done, messages: state.messages }
    }

    async fn drive(
        &self,
        state: &mut RunState,
        specs: &[&ToolSpec],
        ctx: &ToolInvocationContext,
        deadline: Option<Instant>,
        on_event: &(dyn Fn(AgentEvent) + Send + Sync),
    ) -> StopReason {
        let none = ToolChoice::none();
        loop {
            let last = state.iterations >= self.config.max_iterations;
            if last {
                state.messages.push(Message::user(LIMIT_NOTICE));
            }
            state.iterations += 1;
            let iteration = state.iterations;
            on_event(AgentEvent::IterationStarted { iteration, tools_allowed: !last });
            let choice = if last { &none } else { &self.config.choice };
            let request = ModelRequest { messages: &state.messages, tools: specs, choice };
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
                            outcome: ResultSummary::Err {
                                code: Some("not_run".to_owned()),
                                message: "the model's turn ended before this call was complete; it was not run".to_owned(),
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
                    return StopReason::ModelFailed {
                        kind: ModelErrorKind::Transport,
                        message: format!(
                            "the model's response ended early ({reason}) without an answer"
                        ),
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
                            Some("not_run"),
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
            let (mut results, records) = self.execute_turn(&decoded, ctx, deadline, on_event).await;
            to_wire(&mut results);
            state.records.extend(records);
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
    ) -> (Vec<ToolResult>, Vec<ToolInvocationRecord>) {
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
    ) -> (Vec<ToolResult>, Vec<ToolInvocationRecord>) {
        let runnable = decoded.finish.allows_execution();
        let mut results: Vec<Option<ToolResult>> = vec![None; decoded.calls.len()];
        let mut records: Vec<Option<ToolInvocationRecord>> = vec![None; decoded.calls.len()];
        // Result events go out in the model's order, each as soon as it and every result
        // before it are known.
        let mut emitted = 0;
        let mut batch = Vec::new();
        for (index, call) in decoded.calls.iter().enumerate() {
            if !runnable || !call.complete {
                results[index] = Some(ToolResult::error(
                    call,
                    Some("truncated"),
                    "the response was cut off before this call was complete, so it was not run",
                ));
            } else if self.runs_alone(&call.name) {
                let before = std::mem::take(&mut batch);
                self.run_batch(&before, decoded, ctx, &mut results, &mut records).await;
                emit_ready(&results, &mut emitted, on_event);
                self.run_batch(&[index], decoded, ctx, &mut results, &mut records).await;
            } else {
                batch.push(index);
            }
            emit_ready(&results, &mut emitted, on_event);
        }
        self.run_batch(&batch, decoded, ctx, &mut results, &mut records).await;
        emit_ready(&results, &mut emitted, on_event);
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
        results: &mut [Option<ToolResult>],
        records: &mut [Option<ToolInvocationRecord>],
    ) {
        let outcomes: Vec<(usize, ToolExecResult)> =
            futures_util::stream::iter(indices.iter().copied())
                .map(|index| {
                    let call = &decoded.calls[index];
                    let call_ctx = ctx.clone().with_tool_call_id(call.id.clone());
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
            let result = match &executed.outcome {
                Ok(output) => ToolResult::ok(call, output.clone()),
                Err(error) => {
                    ToolResult::error(call, Some(error.code.as_str()), error.message.clone())
                }
            };
            results[index] = Some(result);
            records[index] = Some(executed.into_record());
        }
    }
}

struct RunState {
    messages: Vec<Message>,
    records: Vec<ToolInvocationRecord>,
    usage: Usage,
    iterations: usize,
    ids: RunIds,
}

/// The call ids handed out so far in a run.
#[derive(Debug, Default)]
struct RunIds {
    used: HashSet<String>,
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
            outcome: ResultSummary::Err {
                code: Some("not_run".to_owned()),
                message: "the model's turn does not hold this call; it was not run".to_owned(),
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
    results: &[Option<ToolResult>],
    emitted: &mut usize,
    on_event: &(dyn Fn(AgentEvent) + Send + Sync),
) {
    while let Some(Some(result)) = results.get(*emitted) {
        on_event(result_event(result));
        *emitted += 1;
    }
}

fn result_event(result: &ToolResult) -> AgentEvent {
    AgentEvent::ToolCallResult {
        id: result.call_id.clone(),
        name: result.name.clone(),
        outcome: ResultSummary::from(&result.outcome),
    }
}

async fn sleep_until(deadline: Option<Instant>) {
    match deadline {
        Some(deadline) => tokio::time::sleep_until(deadline).await,
        None => std::future::pending().await,
    }
}
