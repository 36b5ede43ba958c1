//! The steps of one turn of the loop, in the order the loop (`Agent::drive`, in `run`)
//! takes them: open the turn, offer the tools, ask the model (forwarding its stream), take
//! its turn into the conversation, then end the run without calls, refuse the calls of the
//! last turn, or run them.

use std::collections::HashSet;
use std::sync::{Mutex, PoisonError};

use tokio::time::Instant;

use super::batch::{Slot, sleep_until};
use super::events::result_event;
use super::ids::{RunIds, TurnIds, to_wire};
use super::search::{Searchable, TurnSearch, query_of};
use super::state::{Grown, Loop};
use super::{Agent, AgentEvent, FoundTools, Message, ModelRequest, ModelTurn, StopReason};
use crate::adapters::{Decoded, FinishReason, StreamEvent, ToolCall, ToolResult};
use crate::catalog::VisibleTools;
use crate::catalog::select::ToolSelector;
use crate::runtime::{EventOutcome, ExecError, ToolErrorCode, ToolInvocationContext};
use crate::spec::ToolSpec;

/// What the loop tells the model when its tool-calling turns are used up.
const LIMIT_NOTICE: &str = "You have used every tool-calling turn of this run. Answer now with what you have; no more tools can be called.";

/// A turn's stream as the loop forwards it: the calls it announced, under ids unique within
/// the run. If the turn is dropped, each announced call still gets its one (not run) result
/// event.
#[derive(Debug)]
pub(super) struct TurnStream {
    /// The provider's ids may repeat across turns (or be minted as `call_1` every turn):
    /// events and the runner see ids unique within the run.
    ids: Mutex<TurnIds>,
    announced: Mutex<Vec<(String, String)>>,
}

impl TurnStream {
    pub(super) fn new(run: RunIds) -> Self {
        Self { ids: Mutex::new(TurnIds::new(run)), announced: Mutex::new(Vec::new()) }
    }

    /// Reports a streamed event as the run's event (text, a call's start under the run's id,
    /// argument text); the rest is the turn's business.
    fn forward(&self, event: StreamEvent, on_event: &(dyn Fn(AgentEvent) + Send + Sync)) {
        match event {
            StreamEvent::TextDelta(text) => on_event(AgentEvent::TextDelta { text }),
            StreamEvent::CallStarted { id, name, .. } => {
                let id = self.ids.lock().unwrap_or_else(PoisonError::into_inner).assign(&id);
                self.announced
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .push((id.clone(), name.clone()));
                on_event(AgentEvent::ToolCallStarted { id, name });
            }
            StreamEvent::ArgumentsDelta { index, delta } => {
                on_event(AgentEvent::ToolCallArgumentsDelta { index, delta });
            }
            _ => {}
        }
    }

    /// The turn's ids and the calls the stream announced (id and name), once it ended.
    pub(super) fn into_parts(self) -> (TurnIds, Vec<(String, String)>) {
        (
            self.ids.into_inner().unwrap_or_else(PoisonError::into_inner),
            self.announced.into_inner().unwrap_or_else(PoisonError::into_inner),
        )
    }
}

impl Agent {
    /// Opens a turn: counts it and reports it. Returns whether it is the last, the answer
    /// asked for without tools once the tool-calling turns are used up (the model is told).
    pub(super) fn open_turn(
        &self,
        state: &mut Loop,
        on_event: &(dyn Fn(AgentEvent) + Send + Sync),
    ) -> bool {
        let last = state.iterations >= self.config.max_iterations;
        if last {
            state.messages.push(Message::notice(LIMIT_NOTICE));
        }
        state.iterations += 1;
        on_event(AgentEvent::IterationStarted {
            iteration: state.iterations,
            tools_allowed: !last,
        });
        last
    }

    /// Lets the selector get ready for the requests this turn selects for
    /// ([`ToolSelector::prepare`]: with [`AgentConfig::reselect`](super::AgentConfig::reselect)
    /// the latest, otherwise those the growing offer has not picked for yet), unless the run is
    /// cancelled or its budget runs out first (the turn then stops before the model is asked).
    /// A failure is reported as [`AgentEvent::SelectorFailed`] and selection goes on.
    pub(super) async fn prepare_selection(
        &self,
        state: &Loop,
        ctx: &ToolInvocationContext,
        deadline: Option<Instant>,
        on_event: &(dyn Fn(AgentEvent) + Send + Sync),
    ) {
        let Some(selector) = &self.selector else { return };
        let queries: Vec<String> = if self.config.reselect {
            vec![latest_request(&state.messages).to_owned()]
        } else {
            requests(&state.messages).skip(state.grown.requests).map(str::to_owned).collect()
        };
        if queries.iter().all(|query| query.trim().is_empty()) {
            return;
        }
        let prepared = tokio::select! {
            biased;
            () = ctx.cancellation().cancelled() => return,
            () = sleep_until(deadline) => return,
            prepared = selector.prepare(&queries) => prepared,
        };
        if let Err(error) = prepared {
            on_event(AgentEvent::SelectorFailed {
                iteration: state.iterations,
                message: error.to_string(),
            });
        }
    }

    /// The tools to offer this turn, reported and kept in the run's `offered`; `None` without
    /// a selector (every visible tool is offered). By default what the selector picked for
    /// each request of the conversation, in the order first picked (see [`grown`]); with
    /// [`AgentConfig::reselect`](super::AgentConfig::reselect), what it picks for the latest.
    pub(super) fn offer_tools<'v>(
        &self,
        state: &mut Loop,
        visible: &'v VisibleTools,
        on_event: &(dyn Fn(AgentEvent) + Send + Sync),
    ) -> Option<Vec<&'v ToolSpec>> {
        let selector = self.selector.as_ref()?;
        let names: Vec<String> = if self.config.reselect {
            let selection = selector.select(latest_request(&state.messages), visible);
            selection.names().map(str::to_owned).collect()
        } else {
            let limit = self.config.max_offered;
            grown(&mut state.grown, &state.messages, selector.as_ref(), visible, limit);
            state.grown.names.clone()
        };
        let specs = names.iter().filter_map(|name| visible.spec(name)).collect();
        on_event(AgentEvent::ToolsOffered { iteration: state.iterations, names: names.clone() });
        state.offered.push(names);
        Some(specs)
    }

    /// The tools to offer this turn under tool search, reported and kept in the run's
    /// `offered`: those always offered, then those the model's searches found so far.
    pub(super) fn offer_found<'v>(
        &self,
        state: &mut Loop,
        search: &Searchable<'v>,
        on_event: &(dyn Fn(AgentEvent) + Send + Sync),
    ) -> Vec<&'v ToolSpec> {
        let specs = search.offered(&state.messages);
        let names: Vec<String> = specs.iter().map(|spec| spec.name().to_owned()).collect();
        on_event(AgentEvent::ToolsOffered { iteration: state.iterations, names: names.clone() });
        state.offered.push(names);
        specs
    }

    /// Asks the model for its turn, forwarding its stream through `stream`, unless the run
    /// is cancelled or its budget runs out first.
    pub(super) async fn ask_model(
        &self,
        request: ModelRequest<'_>,
        stream: &TurnStream,
        ctx: &ToolInvocationContext,
        deadline: Option<Instant>,
        on_event: &(dyn Fn(AgentEvent) + Send + Sync),
    ) -> Result<ModelTurn, StopReason> {
        let forward = |event: StreamEvent| stream.forward(event, on_event);
        tokio::select! {
            biased;
            () = ctx.cancellation().cancelled() => Err(StopReason::Cancelled),
            () = sleep_until(deadline) => Err(StopReason::Budget),
            turn = self.model.respond(request, &forward) => {
                turn.map_err(|error| StopReason::model_failed(&error))
            }
        }
    }

    /// Runs a turn's calls. The results go back to the model under the provider's ids
    /// (`wire`), unless a call waits: then the run stops with the turn's calls in its state.
    /// Also stops the run when it was cancelled (or ran out of budget) meanwhile.
    ///
    /// With tool search, what each of the turn's searches found is kept in the run's `found`.
    #[allow(clippy::too_many_arguments)] // The turn's parts, each borrowed its own way.
    pub(super) async fn run_calls(
        &self,
        state: &mut Loop,
        decoded: &Decoded,
        wire: &[String],
        search: Option<&TurnSearch<'_, '_>>,
        ctx: &ToolInvocationContext,
        deadline: Option<Instant>,
        on_event: &(dyn Fn(AgentEvent) + Send + Sync),
    ) -> Option<StopReason> {
        let (slots, records) = self.execute_turn(decoded, search, ctx, deadline, on_event).await;
        for (call, slot) in decoded.calls.iter().zip(&slots) {
            if let Slot::Done(result) = slot
                && result.is_search()
            {
                state.found.push(FoundTools {
                    iteration: state.iterations,
                    query: query_of(call).unwrap_or_default().to_owned(),
                    tools: result.found().map(str::to_owned).collect(),
                });
            }
        }
        for record in records {
            if record.waiting.is_some() {
                state.waited.push(record)
            } else {
                state.records.push(record)
            }
        }
        if slots.iter().any(|slot| matches!(slot, Slot::Waiting { .. })) {
            // The turn waits: its results go to the model when every call is decided.
            let (calls, waiting) = self.waiting_calls(decoded, wire, slots);
            state.waiting = Some(calls);
            return Some(StopReason::Waiting { calls: waiting });
        }
        let mut results: Vec<ToolResult> = slots.into_iter().filter_map(Slot::done).collect();
        to_wire(&mut results, wire);
        state.messages.push(Message::ToolResults(results));
        stopped(ctx, deadline)
    }
}

/// A turn that never came (the model failed, the run was cancelled or ran out of budget):
/// every call its stream announced gets its one (not run) result.
pub(super) fn drop_announced(
    announced: Vec<(String, String)>,
    on_event: &(dyn Fn(AgentEvent) + Send + Sync),
) {
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
}

/// Takes the model's turn into the run: its usage, its end reported, and the turn itself
/// (under the provider's ids) in the conversation.
pub(super) fn record_turn(
    state: &mut Loop,
    decoded: &Decoded,
    on_event: &(dyn Fn(AgentEvent) + Send + Sync),
) {
    if let Some(usage) = decoded.usage {
        // Counts come from the provider: a sum near `u64::MAX` must not overflow.
        state.usage.input_tokens = state.usage.input_tokens.saturating_add(usage.input_tokens);
        state.usage.output_tokens = state.usage.output_tokens.saturating_add(usage.output_tokens);
        on_event(AgentEvent::Usage { usage });
    }
    on_event(AgentEvent::IterationFinished {
        iteration: state.iterations,
        finish: decoded.finish.reason.to_string(),
        calls: decoded.calls.len(),
    });
    state.messages.push(Message::Assistant(decoded.clone()));
}

/// Every started id gets one result and every result has a start: a call the stream
/// announced that the turn does not hold gets its (not run) result now, and a call the turn
/// holds that was never announced (a model that does not stream, a call without a name) gets
/// its start before it runs.
pub(super) fn pair_announced(
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

/// How a turn without calls ends the run: answered, or out of turns after the last; a turn
/// the provider broke off is no answer, even if it carries some text.
pub(super) fn end_without_calls(decoded: &Decoded, last: bool) -> StopReason {
    if matches!(decoded.finish.reason, FinishReason::Error | FinishReason::Unfinished) {
        let error = super::model::broken_turn(decoded);
        return StopReason::ModelFailed { kind: error.kind(), message: error.message().to_owned() };
    }
    if last { StopReason::IterationLimit } else { StopReason::Answered }
}

/// The calls of the last turn, made although tools were not allowed: answered, never run.
pub(super) fn refuse_calls(
    state: &mut Loop,
    decoded: &Decoded,
    wire: &[String],
    on_event: &(dyn Fn(AgentEvent) + Send + Sync),
) -> StopReason {
    let mut results: Vec<ToolResult> = decoded
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
    to_wire(&mut results, wire);
    state.messages.push(Message::ToolResults(results));
    StopReason::IterationLimit
}

/// Why the run stops after a turn's calls ran, if it does: cancelled, or out of budget (the
/// budget cancels the calls it cuts short).
fn stopped(ctx: &ToolInvocationContext, deadline: Option<Instant>) -> Option<StopReason> {
    if !ctx.cancellation().is_cancelled() {
        return None;
    }
    Some(if deadline.is_some_and(|deadline| Instant::now() >= deadline) {
        StopReason::Budget
    } else {
        StopReason::Cancelled
    })
}

/// Grows `grown` by what `selector` picks for each request of `messages` it has not seen yet,
/// in order: a tool picked for the first time is appended, so the tools offered in a
/// conversation only grow, and the tool array each request sends begins with the one the
/// request before it sent (every provider's prompt cache keys on it). A tool no longer visible
/// is dropped. When a request's picks would take the offer past `limit` tools, the offer
/// starts again from that request's picks alone (one prompt-cache miss, then growth again).
///
/// The agent starts each run (and resume) from the conversation, so the picks of every earlier
/// request are made again then, one selection per request: deterministic selectors pick the
/// same tools again.
fn grown(
    grown: &mut Grown,
    messages: &[Message],
    selector: &dyn ToolSelector,
    visible: &VisibleTools,
    limit: usize,
) {
    let mut requests: Vec<&str> = requests(messages).collect();
    if requests.is_empty() {
        // No request yet: what is offered whatever is asked, picked once like a request.
        requests.push("");
    }
    for request in &requests[grown.requests.min(requests.len())..] {
        let selection = selector.select(request, visible);
        let new: Vec<&str> = (selection.names())
            .filter(|name| !grown.names.iter().any(|offered| offered == name))
            .collect();
        if grown.names.len() + new.len() > limit {
            grown.names = selection.names().map(str::to_owned).collect();
        } else {
            grown.names.extend(new.into_iter().map(str::to_owned));
        }
    }
    grown.requests = requests.len();
    grown.names.retain(|name| visible.spec(name).is_some());
}

/// The requests of a conversation, in order: its user messages, without the loop's own notice
/// that the tool-calling turns are used up.
fn requests(messages: &[Message]) -> impl Iterator<Item = &str> {
    messages.iter().filter_map(|message| match message {
        // Conversations stored before the notice had a message of its own held it as a user
        // message.
        Message::User(text) if text != LIMIT_NOTICE => Some(text.as_str()),
        _ => None,
    })
}

/// What the user last asked: the text selection picks tools for (the loop's own notice that
/// the tool-calling turns are used up is no request, and no user message).
fn latest_request(messages: &[Message]) -> &str {
    requests(messages).last().unwrap_or("")
}
