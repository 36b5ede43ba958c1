//! [`ToolRunner::exec`]: the one path every tool call takes.
//!
//! ```text
//!  arguments ──► 1 lookup ──► 2 policy ──► 3 authorize ──► 4 connection ──► 5 arguments
//!                  │            │             │                │              │
//!            unavailable  policy_denied  authz_denied    policy_denied   invalid_json
//!                        call_depth_exceeded                              validation
//!                           call_cycle
//!  ──► before-call hooks ──► (approval) ──► 6 capabilities ──► 7 start event ──► 8 run
//!          │                    │               │                                │
//!   hook_blocked / hook_failed  approval_denied authz_denied   execution / timeout / cancelled
//!  ──► 9 validate output ──► 10 redact + size ──► after-call hooks ──► 11 result event ──► 12
//!          │                      │                     │
//!   output_validation     result_too_large    hook_failed / timeout
//! ```
//!
//! The hooks are the application's ([`hooks`]); a nested call a tool makes through
//! [`ToolCalls`] takes the same path. A failed call's [`ExecError::step`](crate::runtime::ExecError::step)
//! says where it stopped, and its result event how long it took.
//!
//! Every call yields exactly one [`ToolExecResult`] and one `tool_call_result` event; a call
//! that reaches step 7 also yields one `tool_call_start` event, with the same call id. (A sink
//! whose [`EventSink::enabled`] says `false`, such as [`NullSink`], gets no events, and none
//! are built.) Error messages are safe: they never repeat raw arguments, outputs or secrets.
//!
//! Arguments come in as the model sent them (JSON text) or already parsed (an agent loop and
//! an MCP server hold a value): see [`Arguments`]. Step 5 is the tool's
//! [`BoundToolRuntime::arguments`]; for a `#[tool]` type it validates raw text while decoding
//! it, with no intermediate JSON value, and parses, validates and decodes in turn (reporting
//! every error) only what that pass cannot vouch for.
//!
//! The steps are in `steps.rs`, one function each; the mechanics they stand on (the hand-polled
//! call, its timer, panic guards, size bounds) in `drive.rs`.
//!
//! ```
//! use std::sync::Arc;
//! use tool_runtime::catalog::ToolCatalog;
//! use tool_runtime::policy::ToolPolicy;
//! use tool_runtime::prelude::*;
//! use tool_runtime::runner::ToolRunner;
//! use tool_runtime::runtime::{CollectingSink, ToolErrorCode};
//!
//! /// Add two numbers.
//! #[tool(name = "math__add", effect = read_only, redact = ["sum"])]
//! struct Add { a: i32, b: i32 }
//! #[derive(Serialize, ToolSchema)]
//! struct Sum { sum: i64, debug: String }
//! impl Tool for Add {
//!     type Output = Sum;
//!     async fn run(self, _: &ToolInvocationContext, _: &ToolCapabilities) -> Result<Sum, ToolError> {
//!         Ok(Sum { sum: i64::from(self.a) + i64::from(self.b), debug: "internal".into() })
//!     }
//! }
//!
//! # tokio::runtime::Runtime::new().unwrap().block_on(async {
//! let catalog = ToolCatalog::builder().register::<Add>().build().unwrap();
//! let events = CollectingSink::new();
//! let runner = ToolRunner::builder(catalog)
//!     .policy(ToolPolicy::from_json(r#"{"allowed_tools": ["math__*"]}"#).unwrap())
//!     .event_sink(Arc::new(events.clone()))
//!     .build();
//! let ctx = ToolInvocationContext::new(ContextIds { run_id: "run-1", actor_id: "user-1", tenant_id: "tenant-1" }).with_tool_call_id("call_1");
//!
//! let result = runner.exec("math__add", br#"{"a": 2, "b": 3}"#, &ctx).await;
//! assert_eq!(result.value(), Some(&serde_json::json!({"sum": 5})));   // `debug` is redacted
//! assert_eq!(events.events().len(), 2);                              // start, result
//!
//! let refused = runner.exec("math__add", br#"{"a": "two"}"#, &ctx).await;
//! assert_eq!(refused.error_code(), Some(ToolErrorCode::Validation));
//! # });
//! ```

mod approvals;
mod case;
#[cfg(feature = "agent")]
mod deferred;

mod calls;
mod drive;
#[cfg(feature = "mcp-server")]
pub(crate) use drive::CatchUnwind;
pub mod hooks;
mod limits;
mod steps;

pub use approvals::{
    AllowAll, Approval, ApprovalDecision, ApprovalRequest, Approver, Authorizer, AuthzDenied,
    DeferAll, DenyAll, PreApproved,
};
pub use calls::ToolCalls;
pub use hooks::{
    AfterCall, AfterCallDecision, AfterCallFn, AfterCallHook, BeforeCall, BeforeCallDecision,
    BeforeCallFn, BeforeCallHook, HookError,
};

use std::future::Future;
use std::pin::pin;
use std::sync::Arc;

use tracing::Instrument;

use self::hooks::Hooks;
use crate::catalog::{ToolCatalog, ToolSource, VisibleTools, visible_tools};
use crate::policy::ToolPolicy;
use crate::runtime::bound::ArgsJson;
use crate::runtime::{
    Arguments, BoundToolRuntime, CallOutcome, CallStep, Clock, EventOutcome, EventSink, ExecError,
    LogReporter, NullSink, Partial, ProgressReporter, ToolErrorCode, ToolEvent, ToolExecResult,
    ToolInvocationContext, Waiting, WaitsFor,
};
use crate::schema::{Shown, Untrusted};

/// Told when a call's tool is about to run (step 7), with the call's id, the tool's name and
/// the arguments it runs with: how the agent loop reports the start of each call it runs.
pub(crate) type StartWatch<'w> = dyn Fn(&str, &str, &serde_json::Value) + Send + Sync + 'w;

/// The most bytes of one peer-supplied text an `execute_tool` span records unless
/// [`ToolRunnerBuilder::span_text_limit`] says otherwise: 1 KiB.
pub const DEFAULT_SPAN_TEXT_LIMIT: usize = 1024;

/// Runs tool calls: the only way a tool runs. Cheap to clone.
#[derive(Debug, Clone)]
pub struct ToolRunner {
    catalog: Arc<ToolCatalog>,
    policy: Arc<ToolPolicy>,
    approver: Arc<dyn Approver>,
    /// `None`: every call that policy allows is authorized, with no hook to await (as by
    /// [`AllowAll`]).
    authorizer: Option<Arc<dyn Authorizer>>,
    sink: Arc<dyn EventSink>,
    clock: Clock,
    /// `None`: no hook is registered, and no call looks further.
    hooks: Option<Arc<Hooks>>,
    /// Whether the `execute_tool` span records the arguments and the result.
    span_content: bool,
    /// The most bytes of one peer-supplied text a span records.
    span_text_limit: usize,
    /// Only on a runner deciding one call on resume: that call (see `deciding`).
    #[cfg(feature = "agent")]
    resumed: Option<Arc<deferred::Resumed>>,
}

/// Builds a [`ToolRunner`]. Defaults: a policy that allows nothing, an approver that denies,
/// an authorizer that allows, no hooks, no event sink, the system clock, spans without
/// arguments or results.
#[derive(Debug)]
#[must_use]
pub struct ToolRunnerBuilder {
    catalog: Arc<ToolCatalog>,
    policy: Arc<ToolPolicy>,
    approver: Arc<dyn Approver>,
    authorizer: Option<Arc<dyn Authorizer>>,
    sink: Arc<dyn EventSink>,
    clock: Clock,
    hooks: Hooks,
    span_content: bool,
    span_text_limit: usize,
}

impl ToolRunnerBuilder {
    /// The policy every call is checked against.
    pub fn policy(mut self, policy: ToolPolicy) -> Self {
        self.policy = Arc::new(policy);
        self
    }

    /// Who decides calls that need approval.
    pub fn approver(mut self, approver: Arc<dyn Approver>) -> Self {
        self.approver = approver;
        self
    }

    /// The per-call authorization hook (by default every call policy allows is authorized,
    /// as with [`AllowAll`]).
    pub fn authorizer(mut self, authorizer: Arc<dyn Authorizer>) -> Self {
        self.authorizer = Some(authorizer);
        self
    }

    /// Where events go: any [`EventSink`], such as a clone of a
    /// [`CollectingSink`](crate::runtime::CollectingSink) whose other clone you keep, or an
    /// `Arc` of one.
    pub fn event_sink(mut self, sink: impl EventSink + 'static) -> Self {
        self.sink = Arc::new(sink);
        self
    }

    /// The clock for timestamps in events and records.
    pub fn clock(mut self, clock: Clock) -> Self {
        self.clock = clock;
        self
    }

    /// Adds a hook that runs before every call, after its arguments validated and before
    /// approval; hooks run in the order they were added. See [`hooks`].
    pub fn before_call(mut self, hook: impl BeforeCallHook + 'static) -> Self {
        self.hooks.before.push(Arc::new(hook));
        self
    }

    /// Adds a hook that runs after every call that got past the before-call hooks, on its
    /// redacted outcome; hooks run in the order they were added. See [`hooks`].
    pub fn after_call(mut self, hook: impl AfterCallHook + 'static) -> Self {
        self.hooks.after.push(Arc::new(hook));
        self
    }

    /// Whether the `execute_tool` span records the call's arguments
    /// (`gen_ai.tool.call.arguments`: the validated ones the tool ran with) and result
    /// (`gen_ai.tool.call.result`: the redacted structured value, or the parts' summaries).
    /// Off by default: telemetry then carries neither.
    ///
    /// ```
    /// use tool_runtime::prelude::*;
    ///
    /// let runner = ToolRunner::builder(ToolCatalog::builder().build().unwrap())
    ///     .record_content_in_spans(true)
    ///     .build();
    /// # let _ = runner;
    /// ```
    pub fn record_content_in_spans(mut self, record: bool) -> Self {
        self.span_content = record;
        self
    }

    /// The most bytes of one text a peer chose that the `execute_tool` span records: the
    /// tool's description (an imported tool's is its server's), and with
    /// [`record_content_in_spans`](Self::record_content_in_spans) the arguments and the result.
    /// Longer text is cut on a character boundary and ends `... (<length> bytes)`; control
    /// characters and bidi overrides are escaped (`\u{1b}`) whatever the length. Default:
    /// [`DEFAULT_SPAN_TEXT_LIMIT`] (1 KiB).
    ///
    /// ```
    /// use tool_runtime::prelude::*;
    ///
    /// let runner = ToolRunner::builder(ToolCatalog::builder().build().unwrap())
    ///     .span_text_limit(4096)
    ///     .build();
    /// # let _ = runner;
    /// ```
    pub fn span_text_limit(mut self, bytes: usize) -> Self {
        self.span_text_limit = bytes;
        self
    }

    /// The runner.
    pub fn build(self) -> ToolRunner {
        let has_hooks = !self.hooks.before.is_empty() || !self.hooks.after.is_empty();
        ToolRunner {
            catalog: self.catalog,
            policy: self.policy,
            approver: self.approver,
            authorizer: self.authorizer,
            sink: self.sink,
            clock: self.clock,
            hooks: has_hooks.then(|| Arc::new(self.hooks)),
            span_content: self.span_content,
            span_text_limit: self.span_text_limit,
            #[cfg(feature = "agent")]
            resumed: None,
        }
    }
}

/// What is known about a call while it goes through the pipeline.
#[derive(Default)]
struct Call {
    id: String,
    /// The validated arguments, shared with the ones the tool runs with.
    args: Option<ArgsJson>,
    /// Whether the sink takes events (asked once per call).
    events: bool,
    /// Whether its start event carries the validated arguments (asked with `events`).
    event_args: bool,
    /// Whether the start event went out: from then on the call owes the sink a result.
    started: bool,
    /// The call's credential, to scrub from its error and progress text.
    secret: Option<String>,
    /// The step the call is at (where it stopped, if it fails).
    step: Option<CallStep>,
    /// The arguments as they arrived, when a before-call hook rewrote them.
    args_received: Option<Box<serde_json::Value>>,
    /// Set once the call got past the before-call hooks, when there are after-call hooks.
    after: Option<Arc<dyn BoundToolRuntime>>,
    /// The call's time budget, set with `after`: the after-call hooks wait within it too.
    deadline: Option<drive::Deadline>,
    /// The progress reporter made for the call, disarmed when it ends (before its result).
    progress: Option<ProgressReporter>,
    /// The logger made for the call (when the caller listens to logs), disarmed with it.
    logger: Option<LogReporter>,
    /// Where the tool keeps what it has so far, when it declares [`Partial`], and why the call
    /// was cut off, once it is answered with what was kept (boxed: few tools declare it).
    partial: Option<Box<(Partial, Option<ExecError>)>>,
}

impl Call {
    /// Asks the sink once whether it takes the call's events, and with its arguments. A sink
    /// that panics when asked takes no events (or no arguments).
    #[inline]
    fn ask_sink(&mut self, sink: &dyn EventSink) {
        self.events = drive::guarded(|| sink.enabled()).unwrap_or(false);
        self.event_args = self.events && drive::guarded(|| sink.wants_arguments()).unwrap_or(false);
    }

    /// The call's `tool_call_start` event: with its validated arguments if its sink asked for
    /// them, and the context's subject and graph.
    fn start_event(&self, name: &str, ctx: &ToolInvocationContext, at_ms: i64) -> ToolEvent {
        let arguments =
            if self.event_args { self.args.as_ref().map(|args| args.get().clone()) } else { None };
        ToolEvent::ToolCallStart {
            tool_call_id: self.id.clone(),
            tool_name: name.to_owned(),
            run_id: ctx.run_id().to_owned(),
            at_ms,
            arguments,
            subject_id: ctx.subject_id().map(str::to_owned),
            graph_id: ctx.graph_id().map(str::to_owned),
        }
    }

    /// The call ended: a tool that kept its context reports and logs nothing more.
    #[inline]
    fn end(&self) {
        if let Some(progress) = &self.progress {
            progress.disarm();
        }
        if let Some(logger) = &self.logger {
            logger.disarm();
        }
    }
}

/// A call while `exec` runs it. If the caller drops `exec`'s future after the start event,
/// the sink still receives the call's one result (`cancelled`).
struct InFlight<'r> {
    runner: &'r ToolRunner,
    name: &'r str,
    call: Call,
    /// The result went (or goes) out the ordinary way.
    settled: bool,
    /// When the call entered the runner.
    started_ms: i64,
}

impl Drop for InFlight<'_> {
    #[inline]
    fn drop(&mut self) {
        // A settled call ended the ordinary way (`exec_arguments` disarmed its reporter).
        if !self.settled {
            self.abandoned();
        }
    }
}

impl InFlight<'_> {
    /// The caller dropped the call before its result: the sink still gets one.
    #[cold]
    #[inline(never)]
    fn abandoned(&mut self) {
        self.call.end();
        if !self.call.started {
            return;
        }
        let error = crate::runtime::ExecError::new(
            crate::runtime::ToolErrorCode::Cancelled,
            "the call was cancelled: its caller stopped waiting for it",
        );
        let at_ms = self.runner.clock.epoch_ms();
        let event = ToolEvent::ToolCallResult {
            tool_call_id: std::mem::take(&mut self.call.id),
            tool_name: self.name.to_owned(),
            outcome: EventOutcome::Err { error },
            at_ms,
            duration_ms: u64::try_from(at_ms.saturating_sub(self.started_ms)).unwrap_or(0),
        };
        // Never unwind out of a drop.
        drive::guarded(|| self.runner.sink.emit(event));
    }
}

/// Why the pipeline stopped short of an output: the call failed, or it waits.
pub(crate) enum Stop {
    Failed(ExecError),
    /// Boxed: a call that waits is rare, and the pipeline's result stays the size of a
    /// failure's.
    Waiting(Box<Waiting>),
}

impl Stop {
    /// The call waits for `waits_for`; `message` says so, safe to show.
    pub(crate) fn waiting(waits_for: WaitsFor, message: impl Into<String>) -> Self {
        Self::Waiting(Box::new(Waiting::new(waits_for, message)))
    }
}

impl From<ExecError> for Stop {
    #[inline]
    fn from(error: ExecError) -> Self {
        Self::Failed(error)
    }
}

/// A call that did not produce its output, as it leaves the runner: the call's credential
/// scrubbed from its error, and a call another tool made cannot wait (it has no run state to
/// wait in, so it cannot be decided later): it fails, and a question it asked goes along with
/// its error, for its caller to wait on when that declares `Interact`. Out of line: only calls
/// without output come here.
#[inline(never)]
fn settle_stop(stop: Stop, secret: Option<&str>, ctx: &ToolInvocationContext) -> CallOutcome {
    match stop {
        Stop::Failed(mut error) => {
            if let Some(secret) = secret
                && let Some(text) = drive::scrubbed(&error.message, secret)
            {
                error.message = text;
            }
            CallOutcome::Failed(error)
        }
        Stop::Waiting(waiting) if ctx.lineage().is_some() => {
            let question = waiting.question.map(Box::new);
            CallOutcome::Failed(ExecError::new(
                ToolErrorCode::ApprovalDenied,
                "a call made by another tool cannot wait for a decision, a client's result or the user's answer; approve it up front, call it from the model, or have the calling tool declare Interact to wait for the answer itself",
            ).with_question(question))
        }
        Stop::Waiting(waiting) => CallOutcome::Waiting(*waiting),
    }
}

impl ToolRunner {
    /// Starts a runner over `catalog`.
    pub fn builder(catalog: impl Into<Arc<ToolCatalog>>) -> ToolRunnerBuilder {
        ToolRunnerBuilder {
            catalog: catalog.into(),
            policy: Arc::new(ToolPolicy::default()),
            approver: Arc::new(DenyAll),
            authorizer: None,
            sink: Arc::new(NullSink),
            clock: Clock::system(),
            hooks: Hooks::default(),
            span_content: false,
            span_text_limit: DEFAULT_SPAN_TEXT_LIMIT,
        }
    }

    /// The catalog.
    #[must_use]
    pub fn catalog(&self) -> &ToolCatalog {
        &self.catalog
    }

    /// The policy.
    #[must_use]
    pub fn policy(&self) -> &ToolPolicy {
        &self.policy
    }

    /// Whether policy asks the approver about calls of the tool `name` (a tool it does not know
    /// asks nothing).
    #[cfg(feature = "agent")]
    #[must_use]
    pub(crate) fn needs_approval(&self, name: &str) -> bool {
        let policy = &self.policy;
        if policy.require_approval.is_empty() && policy.tools.is_empty() {
            return false;
        }
        self.catalog.get(name).is_some_and(|tool| {
            policy.decide(tool.name(), tool.effect()) == crate::policy::Decision::RequireApproval
        })
    }

    /// This runner with the approver `wrap` makes of its own (an MCP server's, which asks the
    /// client's user about what this one defers).
    #[cfg(feature = "mcp-server")]
    pub(crate) fn approving_with(
        &self,
        wrap: impl FnOnce(Arc<dyn Approver>) -> Arc<dyn Approver>,
    ) -> Self {
        Self { approver: wrap(Arc::clone(&self.approver)), ..self.clone() }
    }

    /// The tools this caller's model may be shown: [`visible_tools`] over the catalog.
    #[must_use]
    pub fn visible_tools(&self, ctx: &ToolInvocationContext) -> VisibleTools {
        visible_tools(&*self.catalog, &self.policy, ctx)
    }

    /// Runs one call of the tool `name` with its arguments: JSON text as the model sent it
    /// (`&[u8]`, `&str`) or a parsed value (`&Value`, or `Value` to use it without a copy); see
    /// [`Arguments`]. Never panics and never fails: the outcome, good or bad, is in the
    /// result. The call id is `ctx.tool_call_id()`, or a fresh one when the model gave none.
    /// Needs a Tokio runtime with timers enabled.
    ///
    /// ```
    /// # use tool_runtime::catalog::ToolCatalog;
    /// # use tool_runtime::policy::ToolPolicy;
    /// # use tool_runtime::prelude::*;
    /// # use tool_runtime::runner::ToolRunner;
    /// /// Echo a word.
    /// #[tool(name = "text__echo", effect = read_only, redact = ["word"])]
    /// struct Echo { word: String }
    /// #[derive(Serialize, ToolSchema)]
    /// struct Word { word: String }
    /// impl Tool for Echo {
    ///     type Output = Word;
    ///     async fn run(self, _: &ToolInvocationContext, _: &ToolCapabilities) -> Result<Word, ToolError> {
    ///         Ok(Word { word: self.word })
    ///     }
    /// }
    ///
    /// # tokio::runtime::Runtime::new().unwrap().block_on(async {
    /// let catalog = ToolCatalog::builder().register::<Echo>().build().unwrap();
    /// let policy = ToolPolicy::from_json(r#"{"allowed_tools": ["text__*"]}"#).unwrap();
    /// let runner = ToolRunner::builder(catalog).policy(policy).build();
    /// let ctx = ToolInvocationContext::new(ContextIds { run_id: "run-1", actor_id: "user-1", tenant_id: "tenant-1" });
    ///
    /// let from_text = runner.exec("text__echo", r#"{"word": "hi"}"#, &ctx).await;
    /// let parsed = serde_json::json!({"word": "hi"});
    /// let from_value = runner.exec("text__echo", &parsed, &ctx).await;
    /// assert_eq!(from_text.value(), from_value.value());
    /// assert_eq!(from_value.args(), Some(&parsed));
    /// # });
    /// ```
    pub fn exec<'a>(
        &'a self,
        name: &'a str,
        args: impl Into<Arguments<'a>>,
        ctx: &'a ToolInvocationContext,
    ) -> impl Future<Output = ToolExecResult> + Send + 'a {
        // Not generic below this line: one pipeline whatever the arguments' type.
        self.exec_arguments(name, args.into(), ctx, None)
    }

    /// The one result of a call the agent loop refused before the runner saw it (a name that is
    /// both an alias and a tool): through the sink, timed by the runner's clock.
    #[cfg(feature = "agent")]
    pub(crate) fn refuse(
        &self,
        name: &str,
        error: ExecError,
        ctx: &ToolInvocationContext,
    ) -> ToolExecResult {
        let started_ms = self.clock.epoch_ms();
        let mut call = Call {
            id: ctx.tool_call_id().map_or_else(drive::mint_call_id, str::to_owned),
            ..Call::default()
        };
        call.ask_sink(&*self.sink);
        self.settle(&mut call, name, CallOutcome::Failed(error), (ctx, started_ms))
    }

    /// `exec`, telling `watch` (the agent loop's) when the tool starts.
    pub(crate) async fn exec_arguments(
        &self,
        name: &str,
        args: Arguments<'_>,
        ctx: &ToolInvocationContext,
        watch: Option<&StartWatch<'_>>,
    ) -> ToolExecResult {
        let started_ms = self.clock.epoch_ms();
        // The call is built where it stays: it is large, and every move is a copy.
        let mut flight = InFlight {
            runner: self,
            name,
            call: Call {
                id: ctx.tool_call_id().map_or_else(drive::mint_call_id, str::to_owned),
                ..Call::default()
            },
            settled: false,
            started_ms,
        };
        flight.call.ask_sink(&*self.sink);
        // OpenTelemetry's GenAI conventions for an `execute_tool` span.
        let span = tracing::info_span!(
            "execute_tool",
            otel.name = %format_args!("execute_tool {}", Shown(name)),
            gen_ai.operation.name = "execute_tool",
            gen_ai.tool.name = %Shown(name),
            gen_ai.tool.call.id = %Shown(&flight.call.id),
            gen_ai.tool.type = "function",
            gen_ai.tool.description = tracing::field::Empty,
            gen_ai.tool.call.arguments = tracing::field::Empty,
            gen_ai.tool.call.result = tracing::field::Empty,
            error.r#type = tracing::field::Empty,
            otel.status_code = tracing::field::Empty,
            tool_runtime.waits_for = tracing::field::Empty,
            tool_runtime.subject_id = tracing::field::Empty,
            tool_runtime.graph_id = tracing::field::Empty,
        );
        if !span.is_disabled() {
            if let Some(subject) = ctx.subject_id() {
                span.record("tool_runtime.subject_id", tracing::field::display(Shown(subject)));
            }
            if let Some(graph) = ctx.graph_id() {
                span.record("tool_runtime.graph_id", tracing::field::display(Shown(graph)));
            }
        }
        if !span.is_disabled()
            && let Some(tool) = self.catalog.get(name)
        {
            let description =
                Untrusted { text: tool.spec().description(), max: self.span_text_limit };
            span.record("gen_ai.tool.description", tracing::field::display(description));
        }
        // A call cancelled before it starts does nothing.
        let ran = if ctx.cancellation().is_cancelled() {
            Err(Stop::Failed(drive::cancelled()))
        } else {
            let pipeline = pin!(
                self.pipeline(&mut flight.call, name, args, ctx, watch).instrument(span.clone())
            );
            drive::until_cancelled(pipeline, ctx.cancellation()).await
        };
        let mut outcome = match ran {
            Ok(output) => CallOutcome::Done(output),
            Err(stop) => settle_stop(stop, flight.call.secret.as_deref(), ctx),
        };
        // A tool cut off after it kept some of its result is answered with that (in place: an
        // outcome is large, and every other call pays nothing but this check).
        if flight.call.partial.is_some() {
            self.partial_outcome(&mut flight.call, name, &mut outcome);
        }
        // A waiting call has no outcome yet: its after-call hooks see it when it is decided.
        let ended = match (flight.call.after.take(), outcome) {
            (Some(tool), CallOutcome::Done(output)) => Ok((tool, Ok(output))),
            (Some(tool), CallOutcome::Failed(error)) => Ok((tool, Err(error))),
            (_, outcome) => Err(outcome),
        };
        let mut outcome = match ended {
            // Out of line: only a runner with after-call hooks comes here.
            Ok((tool, ended)) => {
                let hooks = self.after_hooks(&flight.call, &*tool, ended, ctx, started_ms);
                let bounded = async {
                    let Some(deadline) = &flight.call.deadline else { return hooks.await };
                    deadline.bound(hooks, "the after-call hooks").await.unwrap_or_else(
                        |mut timeout| {
                            timeout.step = Some(CallStep::Hook);
                            Err(timeout)
                        },
                    )
                };
                match drive::until_cancelled(pin!(bounded), ctx.cancellation()).await {
                    Ok(output) => CallOutcome::Done(output),
                    Err(error) => CallOutcome::Failed(error),
                }
            }
            Err(outcome) => outcome,
        };
        flight.settled = true;
        let call = &mut flight.call;
        call.end();
        // A failure marks its span; a call that waits is no error, and says what it waits for.
        match &mut outcome {
            CallOutcome::Failed(error) => {
                error.step = error.step.or(call.step).or(Some(CallStep::Lookup));
                span.record("error.type", error.code.as_str());
                span.record("otel.status_code", "error");
            }
            CallOutcome::Waiting(waiting) => {
                span.record("tool_runtime.waits_for", waiting.waits_for.as_str());
            }
            CallOutcome::Done(_) => {}
        }
        if self.span_content && !span.is_disabled() {
            steps::record_content(&span, call, &outcome, self.span_text_limit);
        }
        self.settle(call, name, outcome, (ctx, started_ms))
    }
}

/// Without the agent loop nothing is decided on resume: every call passes the before-call
/// hooks, and the calls a tool makes run on the runner that runs it.
#[cfg(not(feature = "agent"))]
impl ToolRunner {
    #[inline(always)]
    #[allow(clippy::unused_self)]
    fn hooks_passed(&self, _: &ToolInvocationContext, _: &crate::runtime::ValidatedArgs) -> bool {
        false
    }

    fn for_calls(&self) -> Self {
        self.clone()
    }
}
