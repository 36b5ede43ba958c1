//! The run an [`Agent`] drives: one turn after another, each turn a few named steps (`turn`),
//! until the model answers, a limit stops it or a call waits.

use std::time::Duration;

use tokio::time::Instant;

use super::search::Searchable;
use super::state::Loop;
use super::turn::{
    TurnStream, drop_announced, end_without_calls, pair_announced, record_turn, refuse_calls,
};
use super::{
    Agent, AgentDone, AgentEvent, AgentOutput, Message, ModelRequest, ModelTurn, StopReason,
};
use crate::adapters::{ToolChoice, check_ready};
use crate::catalog::VisibleTools;
use crate::runtime::{ToolInvocationContext, ToolInvocationRecord};
use crate::spec::ToolSpec;

impl Agent {
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
        let (mut output, waited) = self.finish_run(state, stop, &ctx, on_event);
        self.keep(&mut output, &waited, &ctx, false).await;
        output
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
        // A tool served to MCP clients only has a schema no provider takes: never offered.
        let visible = self.runner.visible_tools(ctx).for_models();
        self.drive(state, &visible, ctx, deadline, on_event).await
    }

    /// The end of a run (or of a part of it): its answer, its one `Done` event, and for a run
    /// that waits, its sealed state; beside it, the records of the calls that wait (for the
    /// audit trail alone).
    pub(super) fn finish_run(
        &self,
        mut state: Loop,
        stop: StopReason,
        ctx: &ToolInvocationContext,
        on_event: &(dyn Fn(AgentEvent) + Send + Sync),
    ) -> (AgentOutput, Vec<ToolInvocationRecord>) {
        let answer = match (&stop, state.messages.last()) {
            (StopReason::Answered | StopReason::IterationLimit, Some(Message::Assistant(turn))) => {
                turn.text.clone()
            }
            // The model went on without waiting for the calls that wait (asynchronous tools):
            // what it said meanwhile is the run's answer for now.
            (StopReason::Waiting { calls }, Some(Message::Assistant(turn)))
                if !calls.is_empty()
                    && calls.iter().all(|id| {
                        turn.calls.iter().any(|call| call.id == *id && call.is_async())
                    }) =>
            {
                turn.text.clone()
            }
            _ => String::new(),
        };
        let run_state = state.waiting.take().map(|calls| self.sealed_state(&mut state, calls, ctx));
        let done = AgentDone {
            answer,
            stop,
            iterations: state.iterations,
            tool_stats: crate::runtime::ToolCallStats::from_records(&state.records),
            records: state.records,
            usage: state.usage,
            offered: state.offered,
            found: state.found,
        };
        on_event(AgentEvent::Done(done.clone()));
        let output = AgentOutput {
            done,
            messages: state.messages,
            state: run_state,
            store_error: None,
            audit_error: None,
        };
        (output, state.waited)
    }

    /// The loop: one turn after another, each in the steps of `turn`, until a step ends the
    /// run.
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
        let search =
            (self.config.tool_search.as_ref()).map(|settings| Searchable::new(settings, visible));
        loop {
            let last = self.open_turn(state, on_event);
            let offered = match &search {
                Some(search) => Some(self.offer_found(state, search, on_event)),
                None => {
                    self.prepare_selection(state, ctx, deadline, on_event).await;
                    self.offer_tools(state, visible, on_event)
                }
            };
            let tools = offered.as_deref().unwrap_or(&specs);
            let choice = if last { &none } else { &self.config.choice };
            let client_search = search.as_ref().map(Searchable::client_search);
            on_event(AgentEvent::ModelRequested {
                iteration: state.iterations,
                prompt_hash: prompt_hash(
                    &state.messages,
                    tools,
                    search.as_ref().map(Searchable::digest),
                    choice,
                ),
                tools: tools.len(),
            });
            let request =
                ModelRequest { messages: &state.messages, tools, choice, search: client_search };
            let stream = TurnStream::new(std::mem::take(&mut state.ids));
            let answered = self.ask_model(request, &stream, ctx, deadline, on_event).await;
            let (mut ids, announced) = stream.into_parts();
            // The model decoded its response with the request's tools
            // (`Adapter::decode_for`, `Adapter::stream_for`), the one place strict-mode `null`s
            // are raised: the calls are not raised again here.
            let mut decoded = match answered {
                Ok(ModelTurn { decoded }) => decoded,
                Err(stop) => {
                    drop_announced(announced, on_event);
                    state.ids = ids.into_run();
                    return stop;
                }
            };
            record_turn(state, &decoded, on_event);
            // The calls run under ids unique within the run; their results go back to the
            // model under the provider's (`wire`).
            let wire = ids.assign_calls(&mut decoded.calls);
            state.ids = ids.into_run();
            pair_announced(&announced, &decoded.calls, on_event);
            if decoded.calls.is_empty() {
                return end_without_calls(&decoded, last);
            }
            if last {
                return refuse_calls(state, &decoded, &wire, on_event);
            }
            let turn_search =
                search.as_ref().map(|search| search.turn(&state.messages, state.iterations));
            if let Some(stop) = self
                .run_calls(state, &decoded, &wire, turn_search.as_ref(), ctx, deadline, on_event)
                .await
            {
                return stop;
            }
        }
    }
}

/// The hash of what a model request sends besides the conversation: the system text, the
/// offered tools (name and spec hash, in order), with tool search the hash of its description
/// and the tools to find (`search`, worked out once per run), and the tool choice (see
/// [`AgentEvent::ModelRequested`]).
fn prompt_hash(
    messages: &[Message],
    tools: &[&ToolSpec],
    search: Option<&str>,
    choice: &ToolChoice,
) -> String {
    // A choice always serialises (strings and booleans).
    let choice = serde_json::to_string(choice).unwrap_or_default();
    let system: Vec<&str> = messages
        .iter()
        .filter_map(|message| match message {
            Message::System(text) => Some(text.as_str()),
            _ => None,
        })
        .collect();
    // Each list is preceded by its length, so that no two requests hash the same parts.
    let counts = [system.len().to_string(), tools.len().to_string()];
    let parts = std::iter::once(counts[0].as_str())
        .chain(system)
        .chain(std::iter::once(counts[1].as_str()))
        .chain(tools.iter().flat_map(|spec| [spec.name(), spec.spec_hash()]))
        .chain(search)
        .chain(std::iter::once(choice.as_str()));
    crate::digest::hex(&crate::digest::parts_hash(parts))
}
