//! The loop: [`Agent`], how it is configured, and the run it drives, one turn after another,
//! each turn a few named steps (`turn`).

use std::sync::Arc;
use std::time::Duration;

use tokio::time::Instant;

use super::deferred::{ResumeLedger, StateCall, StateKey};
use super::ids::RunIds;
use super::turn::{
    TurnStream, drop_announced, end_without_calls, pair_announced, record_turn, refuse_calls,
};
use super::{
    AgentDone, AgentEvent, AgentOutput, ChatModel, Message, ModelRequest, ModelTurn, StopReason,
    Usage,
};
use crate::adapters::{ToolChoice, check_ready};
use crate::catalog::VisibleTools;
use crate::catalog::select::ToolSelector;
use crate::runner::ToolRunner;
use crate::runtime::{ToolInvocationContext, ToolInvocationRecord};
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
/// [`ModelErrorKind::Request`](super::ModelErrorKind::Request)) rather than send the result without it.
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

    /// The application key that seals the [`RunState`](super::RunState) of a run that stops waiting, and
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
        mut state: Loop,
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
        let run_state = state.waiting.take().map(|calls| self.sealed_state(&mut state, calls, ctx));
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
        loop {
            let last = self.open_turn(state, on_event);
            let selection = self.offer_tools(state, visible, on_event);
            let offered: Vec<&ToolSpec>;
            let tools = match &selection {
                Some(selection) => {
                    offered = selection.specs().collect();
                    offered.as_slice()
                }
                None => specs.as_slice(),
            };
            let choice = if last { &none } else { &self.config.choice };
            let request = ModelRequest { messages: &state.messages, tools, choice };
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
            if let Some(stop) =
                self.run_calls(state, &decoded, &wire, ctx, deadline, on_event).await
            {
                return stop;
            }
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
