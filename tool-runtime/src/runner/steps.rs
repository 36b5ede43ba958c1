//! The pipeline of [`ToolRunner::exec`], one named step after another, as DESIGN §3 lists
//! them. Each step either hands the next one what it needs or ends the call with its error
//! code; the mechanics they stand on (polling, timers, size bounds) are in `drive`.

use std::any::TypeId;
use std::sync::Arc;

use serde_json::Value;

use super::drive::{
    Deadline, Ran, catch_decode_panic, guarded, json_len_over, scrubbed, within_budget,
};
use super::hooks::{self, Hooks};
use super::limits::enforce;
use super::{
    AfterCall, AfterCallDecision, BeforeCall, BeforeCallDecision, Call, StartWatch, Stop,
    ToolCalls, ToolRunner,
};
use crate::catalog::{ToolSource, connection_allowed};
use crate::content::{Part, ToolOutput};
use crate::policy::{Budgets, Decision};
use crate::runner::{ApprovalDecision, ApprovalRequest};
use crate::runtime::context::Lineage;
use crate::runtime::result::Rare;
use crate::runtime::{
    Arguments, Auth, BoundToolRuntime, CallOutcome, CallStep, ExecError, Interact, LogMessage,
    LogReporter, Partial, ProgressReporter, ToolCapabilities, ToolError, ToolErrorCode as Code,
    ToolEvent, ToolExecResult, ToolInvocationContext, ValidatedArgs, Waiting, WaitsFor,
};
use crate::schema::{ArgumentsError, Shown, Untrusted};
use crate::spec::SpecSchema;

impl ToolRunner {
    /// Steps 1 to 10: from the tool's name to its redacted output.
    pub(super) async fn pipeline(
        &self,
        call: &mut Call,
        name: &str,
        args: Arguments<'_>,
        ctx: &ToolInvocationContext,
        watch: Option<&StartWatch<'_>>,
    ) -> Result<ToolOutput, Stop> {
        let found = self.lookup(name)?;
        let tool = found.as_ref();
        call.step = Some(CallStep::Policy);
        // Policy and budgets go by the tool's own name: a source may answer another name
        // (an alias) with it.
        let tool_name = tool.name();
        let decision = self.decide(ctx, tool_name, tool)?;
        let budgets = self.policy.budgets_for(tool_name);
        if let Some(lineage) = ctx.lineage() {
            check_nesting(lineage, tool_name, &budgets)?;
        }
        // The budget covers every wait of the call: hooks and the broker as well as the run.
        let deadline = Deadline::after(budgets.max_runtime_ms);
        if let Some(authorizer) = &self.authorizer {
            call.step = Some(CallStep::Authorizer);
            // Step 3; with no hook set there is no future to await.
            deadline
                .bound(authorizer.authorize(ctx, tool.spec()), "the authorizer")
                .await?
                .map_err(|denied| ExecError::new(Code::AuthzDenied, denied.0))?;
            call.step = Some(CallStep::Policy);
        }
        let declared = self.check_connection(ctx, tool)?;
        call.step = Some(CallStep::Validation);
        let tolerant = self.catalog.tolerates_case() || tool.spec().tolerates_case();
        let mut args = validate_arguments(tool, args, &budgets, tolerant)?;
        if let Some(hooks) = &self.hooks {
            if !self.hooks_passed(ctx, &args) {
                // Boxed: only a runner with hooks awaits them.
                let before = Box::pin(self.before_hooks(call, hooks, tool, args, ctx, &budgets));
                args = deadline.bound(before, "the before-call hooks").await??;
            }
            if !hooks.after.is_empty() {
                call.after = Some(Arc::clone(&found));
                call.deadline = Some(deadline.shared());
            }
        }
        call.step = Some(CallStep::Approval);
        // A client tool's calls, like calls that need approval, go through this block; every
        // other call pays for the one check.
        if decision == Decision::RequireApproval || tool.runs_on_client() {
            // Recorded even if the approval fails.
            call.args = Some(args.json().clone());
            if decision == Decision::RequireApproval {
                // Boxed: the approval's state would otherwise make every call's future larger.
                let approval = Box::pin(self.approve(call, tool, args.value(), ctx));
                match deadline.bound(approval, "the approver").await? {
                    Ok(Some(edited)) => {
                        args = edited;
                        if let Some(hooks) = &self.hooks {
                            // Edited arguments are new to the before-call hooks.
                            let before =
                                Box::pin(self.before_hooks(call, hooks, tool, args, ctx, &budgets));
                            args = deadline.bound(before, "the before-call hooks").await??;
                        }
                        call.args = Some(args.json().clone());
                    }
                    Ok(None) => {}
                    // A client tool waits for its client either way; the result it supplies
                    // is then refused for the approval no one gave (see `exec_supplied`).
                    Err(Stop::Waiting(_)) if tool.runs_on_client() => {}
                    Err(stop) => return Err(stop),
                }
            }
            if tool.runs_on_client() {
                // The application's client runs it: the call waits for the result it supplies.
                return Err(Stop::waiting(
                    WaitsFor::Client,
                    "the call waits for its result from the client",
                ));
            }
        }
        call.args = Some(args.json().clone());
        let mut caps = self.capabilities(tool);
        if declared.auth {
            call.step = Some(CallStep::Credential);
            // Boxed: only tools that declare `Auth` wait for a broker.
            let credential = Box::pin(self.with_credential(caps, ctx));
            caps = deadline.bound(credential, "the credential broker").await??;
            call.secret = caps.get::<Auth>().ok().map(|auth| auth.credential().expose().to_owned());
        }
        call.step = Some(CallStep::Run);
        let mut owned_ctx = None;
        let call_ctx = self.start(call, name, ctx, &mut owned_ctx);
        call.started = call.events;
        if let Some(watch) = watch {
            watch(&call.id, name, args.value());
        }
        if declared.tool_calls {
            caps = caps.with(ToolCalls::bound(self.for_calls(), tool.name(), call_ctx));
        }
        if declared.interact {
            caps = with_asker(caps, call_ctx);
        }
        if declared.partial {
            // The call's own: what it keeps is read if the call is cut off (`partial_outcome`).
            let partial = Partial::default();
            caps = caps.with(partial.clone());
            call.partial = Some(Box::new((partial, None)));
        }
        // Step 8, awaited here rather than in a function of its own: its state would be moved
        // into this future's once more.
        let ran = within_budget(tool.exec(args, call_ctx, &caps), &deadline).await;
        let output = run_outcome(ran, &budgets, declared.interact)?;
        call.step = Some(CallStep::Output);
        check_output(tool, &output)?;
        call.step = Some(CallStep::Redaction);
        #[cfg(feature = "image")]
        let output = super::limits::fit_images(output, &budgets, &deadline).await?;
        Ok(redact_and_bound(tool, output, &budgets)?)
    }

    /// (After 5.) The before-call hooks, in order: each may block the call -> `hook_blocked`,
    /// defer it (the call waits for approval), or rewrite its arguments, which are validated
    /// again -> `hook_failed`. Returns the
    /// arguments to run with; keeps the ones that arrived in `call` when they changed.
    async fn before_hooks(
        &self,
        call: &mut Call,
        hooks: &Hooks,
        tool: &dyn BoundToolRuntime,
        mut args: ValidatedArgs,
        ctx: &ToolInvocationContext,
        budgets: &Budgets,
    ) -> Result<ValidatedArgs, Stop> {
        call.step = Some(CallStep::Hook);
        let mut received = None;
        for hook in &hooks.before {
            let seen = BeforeCall { tool: tool.spec(), tool_call_id: &call.id, ctx, args: &args };
            let decision =
                hooks::caught("before-call", hook.name(), hook.before_call(&seen)).await?;
            match decision {
                BeforeCallDecision::Allow => {}
                BeforeCallDecision::Block { reason } => {
                    return Err(ExecError::new(Code::HookBlocked, reason).into());
                }
                BeforeCallDecision::Pending { reason } => {
                    // The call waits with the arguments the hooks left so far.
                    call.args = Some(args.json().clone());
                    call.args_received =
                        received.filter(|value| value != args.value()).map(Box::new);
                    return Err(Stop::waiting(WaitsFor::Approval, reason));
                }
                BeforeCallDecision::Rewrite { arguments } => {
                    let rewritten = validate_arguments(
                        tool,
                        Arguments::from(arguments),
                        budgets,
                        false,
                    )
                    .map_err(|error| {
                        hooks::hook_failed(
                            "before-call",
                            hook.name(),
                            format_args!(
                                "it rewrote the arguments into ones the tool refuses ({}: {})",
                                error.code, error.message
                            ),
                        )
                    })?;
                    let previous = std::mem::replace(&mut args, rewritten);
                    if received.is_none() {
                        received = Some(previous.into_value());
                    }
                }
            }
        }
        call.args_received = received.filter(|value| value != args.value()).map(Box::new);
        Ok(args)
    }

    /// (After 10.) The after-call hooks, in order, on the redacted outcome; each may replace
    /// the output, which is validated, redacted and bounded like the tool's own ->
    /// `hook_failed`.
    pub(super) async fn after_hooks(
        &self,
        call: &Call,
        tool: &dyn BoundToolRuntime,
        mut outcome: Result<ToolOutput, ExecError>,
        ctx: &ToolInvocationContext,
        started_ms: i64,
    ) -> Result<ToolOutput, ExecError> {
        let Some(hooks) = &self.hooks else { return outcome };
        for hook in &hooks.after {
            let elapsed = self.clock.epoch_ms().saturating_sub(started_ms);
            let seen = AfterCall {
                tool: tool.spec(),
                tool_call_id: &call.id,
                ctx,
                args: call.args.as_ref(),
                outcome: &outcome,
                duration_ms: u64::try_from(elapsed).unwrap_or(0),
            };
            let answer = hooks::caught("after-call", hook.name(), hook.after_call(&seen)).await;
            match answer {
                Ok(AfterCallDecision::Keep) => {}
                Ok(AfterCallDecision::Replace(output)) => {
                    // Steps 9 and 10 again: the replacement is validated, redacted and bounded
                    // as the tool's own output would be.
                    let budgets = self.policy.budgets_for(tool.name());
                    let checked = check_output(tool, &output).map(|()| output);
                    #[cfg(feature = "image")]
                    let checked = match checked {
                        Ok(output) => {
                            let deadline = super::drive::Deadline::after(budgets.max_runtime_ms);
                            super::limits::fit_images(output, &budgets, &deadline).await
                        }
                        Err(error) => Err(error),
                    };
                    outcome = checked
                        .and_then(|output| redact_and_bound(tool, output, &budgets))
                        .map_err(|error| {
                            hooks::hook_failed(
                                "after-call",
                                hook.name(),
                                format_args!("its replacement result is refused ({error})"),
                            )
                        });
                }
                Err(error) => outcome = Err(error),
            }
            if let Err(error) = &mut outcome
                && error.code == Code::HookFailed
            {
                error.step = Some(CallStep::Hook);
                return outcome;
            }
        }
        outcome
    }

    /// Step 1: the tool, by name -> `unavailable`.
    #[inline(always)]
    fn lookup(&self, name: &str) -> Result<Arc<dyn BoundToolRuntime>, ExecError> {
        self.catalog.get(name).ok_or_else(|| {
            ExecError::new(
                Code::Unavailable,
                format!("no tool named `{}` is available", Shown(name)),
            )
        })
    }

    /// Step 2: the run's tool set, then policy -> `policy_denied`; a call that needs approval
    /// goes on to the approver.
    #[inline(always)]
    fn decide(
        &self,
        ctx: &ToolInvocationContext,
        name: &str,
        tool: &dyn BoundToolRuntime,
    ) -> Result<Decision, ExecError> {
        if !ctx.in_tool_set(name) {
            return Err(ExecError::new(
                Code::PolicyDenied,
                format!("tool `{}` is not in this run's tool set", Shown(name)),
            ));
        }
        if let Err(reason) = self.policy.identity_allows(name, ctx.subject_id(), ctx.graph_id()) {
            return Err(ExecError::new(Code::PolicyDenied, reason));
        }
        match self.policy.decide(name, tool.effect()) {
            Decision::Deny { reason } => Err(ExecError::new(Code::PolicyDenied, reason)),
            decision => Ok(decision),
        }
    }

    /// Step 4: a tool that needs a connection (or declares [`Auth`]) runs only with one the policy
    /// grants for this request -> `policy_denied`. Says which capabilities the runner binds to
    /// the call.
    #[inline(always)]
    fn check_connection(
        &self,
        ctx: &ToolInvocationContext,
        tool: &dyn BoundToolRuntime,
    ) -> Result<Declared, ExecError> {
        let mut declared =
            Declared { auth: false, tool_calls: false, interact: false, partial: false };
        for capability in tool.capabilities() {
            declared.auth |= capability.type_id() == TypeId::of::<Auth>();
            declared.tool_calls |= capability.type_id() == TypeId::of::<ToolCalls>();
            declared.interact |= capability.type_id() == TypeId::of::<Interact>();
            declared.partial |= capability.type_id() == TypeId::of::<Partial>();
        }
        let declares_auth = declared.auth;
        if (tool.requires_connection() || declares_auth) && !connection_allowed(&self.policy, ctx) {
            let message = match ctx.connection_id() {
                None => "this tool needs a connection and the call has none",
                Some(_) => "the call's connection is not granted for this request",
            };
            return Err(ExecError::new(Code::PolicyDenied, message));
        }
        Ok(declared)
    }

    /// (After 5.) The approver decides a call that needs approval -> `approval_denied`, or the
    /// call waits for approval when it defers the decision; `Some` holds the arguments an approver edited,
    /// validated. An approval counts only for exactly this call: run, tenant, actor, tool,
    /// spec, call id and arguments.
    async fn approve(
        &self,
        call: &Call,
        tool: &dyn BoundToolRuntime,
        arguments: &Value,
        ctx: &ToolInvocationContext,
    ) -> Result<Option<ValidatedArgs>, Stop> {
        let request = ApprovalRequest {
            tool_name: tool.name(),
            tool_call_id: &call.id,
            effect: tool.effect(),
            arguments,
            ctx,
            spec: tool.spec(),
        };
        match self.approver.review(&request).await {
            ApprovalDecision::Approved(approval) if approval == request.approval() => Ok(None),
            ApprovalDecision::Approved(_) => Err(ExecError::new(
                Code::ApprovalDenied,
                "the approval was given for another call, run, tenant, tool version or other arguments",
            )
            .into()),
            ApprovalDecision::Denied { message } => {
                Err(ExecError::new(Code::ApprovalDenied, message).into())
            }
            ApprovalDecision::Edited { arguments } => {
                let edited = catch_decode_panic(|| tool.arguments(Arguments::from(arguments)))?;
                Ok(Some(edited.map_err(|error| {
                    arguments_error(error, "the approver's edited arguments: ")
                })?))
            }
            ApprovalDecision::Pending => {
                Err(Stop::waiting(WaitsFor::Approval, "the call waits for approval"))
            }
        }
    }

    /// Step 6: the capabilities the tool declared, for this call only (a tool that declares
    /// [`Auth`] then gets the call's credential, see `with_credential`).
    #[inline(always)]
    fn capabilities(&self, tool: &dyn BoundToolRuntime) -> ToolCapabilities {
        self.catalog.capabilities().restricted_to(tool.capabilities())
    }

    /// Step 6 for a tool that declares [`Auth`]: the call's credential is added to `caps` ->
    /// `authz_denied`.
    async fn with_credential(
        &self,
        caps: ToolCapabilities,
        ctx: &ToolInvocationContext,
    ) -> Result<ToolCapabilities, ExecError> {
        let denied = |message: String| ExecError::new(Code::AuthzDenied, message);
        let connection =
            ctx.connection_id().ok_or_else(|| denied("the call has no connection".to_owned()))?;
        let broker = self
            .catalog
            .broker()
            .ok_or_else(|| denied("no connection broker is bound".to_owned()))?;
        let credential =
            broker.credential(ctx, connection).await.map_err(|error| denied(error.to_string()))?;
        Ok(caps.with(Auth::new(connection.to_owned(), credential)))
    }

    /// Step 7: the `tool_call_start` event, and the context the tool runs in. Progress becomes an
    /// event, and also reaches the reporter the caller put on `ctx`, if any (an MCP server forwards
    /// it to its client as notifications); log messages reach the caller's logger through one
    /// made for the call (see `call_logger`). Without events or listeners, the caller's context
    /// serves as it is when it already names the call.
    /// (`owned` holds a context made for the call, in the caller's future: a context is large
    /// and is not moved again.)
    #[inline(always)]
    fn start<'c>(
        &self,
        call: &mut Call,
        name: &str,
        ctx: &'c ToolInvocationContext,
        owned: &'c mut Option<ToolInvocationContext>,
    ) -> &'c ToolInvocationContext {
        let logger = ctx.logger().map(|caller| call_logger(call, caller));
        let call_ctx = if call.events {
            let progress = self.progress_events(call, name, ctx.progress_reporter());
            call.progress = Some(progress.clone());
            self.sink.emit(call.start_event(name, ctx, self.clock.epoch_ms()));
            ctx.clone().with_tool_call_id(call.id.clone()).with_progress(progress)
        } else if let Some(caller) = ctx.progress_reporter() {
            // The caller's reporter may outlive the call: the call gets its own, which scrubs
            // its credential and is disarmed when it ends.
            let secret = call.secret.clone();
            let forwarding = ProgressReporter::new(move |progress| {
                let message = progress.message.unwrap_or_default();
                let message = match &secret {
                    Some(secret) => scrubbed(&message, secret).unwrap_or(message),
                    None => message,
                };
                caller.report(progress.progress, progress.total, message);
            });
            call.progress = Some(forwarding.clone());
            ctx.clone().with_tool_call_id(call.id.clone()).with_progress(forwarding)
        } else if logger.is_none() && ctx.tool_call_id() == Some(call.id.as_str()) {
            return ctx;
        } else {
            ctx.clone().with_tool_call_id(call.id.clone())
        };
        owned.insert(match logger {
            Some(logger) => call_ctx.with_logger(logger),
            None => call_ctx,
        })
    }

    /// The progress hook of a call whose sink takes events: each report becomes a
    /// `tool_call_progress` event and also goes to `caller`'s reporter, if any.
    fn progress_events(
        &self,
        call: &Call,
        name: &str,
        caller: Option<ProgressReporter>,
    ) -> ProgressReporter {
        let sink = Arc::clone(&self.sink);
        let (call_id, name, secret) = (call.id.clone(), name.to_owned(), call.secret.clone());
        ProgressReporter::new(move |mut progress| {
            // The call's credential never leaves in its progress text.
            if let (Some(secret), Some(message)) = (&secret, &progress.message)
                && let Some(text) = scrubbed(message, secret)
            {
                progress.message = Some(text);
            }
            if let Some(caller) = &caller {
                let message = progress.message.clone().unwrap_or_default();
                caller.report(progress.progress, progress.total, message);
            }
            let event = ToolEvent::ToolCallProgress {
                tool_call_id: call_id.clone(),
                tool_name: name.clone(),
                progress,
            };
            // A sink that panics loses the report, not the call.
            guarded(|| sink.emit(event));
        })
    }

    /// Steps 11 and 12 for a call held by value (see `settle`).
    #[cfg(feature = "agent")]
    pub(super) fn finish(
        &self,
        mut call: Call,
        name: &str,
        outcome: Result<ToolOutput, ExecError>,
        (ctx, started_ms): (&ToolInvocationContext, i64),
    ) -> ToolExecResult {
        let outcome = match outcome {
            Ok(output) => CallOutcome::Done(output),
            Err(error) => CallOutcome::Failed(error),
        };
        self.settle(&mut call, name, outcome, (ctx, started_ms))
    }

    /// (After 8.) A call cut off (`timeout`, `cancelled`) whose tool kept parts in its
    /// [`Partial`]: those parts, with a note saying the result is partial, redacted and bounded
    /// as any output; the cut is kept in the call's partial slot for the result and the record.
    /// Without kept parts, or when they do not fit the result budgets, the call keeps its
    /// error.
    #[cold]
    #[inline(never)]
    pub(super) fn partial_outcome(&self, call: &mut Call, name: &str, outcome: &mut CallOutcome) {
        let CallOutcome::Failed(cut) = &*outcome else { return };
        if !matches!(cut.code, Code::Timeout | Code::Cancelled) {
            return;
        }
        let parts = call.partial.as_ref().map(|slot| slot.0.take()).unwrap_or_default();
        let tool = if parts.is_empty() { None } else { self.catalog.get(name) };
        let Some(tool) = tool else { return };
        let CallOutcome::Failed(error) =
            std::mem::replace(outcome, CallOutcome::Done(ToolOutput::new()))
        else {
            return;
        };
        let budgets = self.policy.budgets_for(tool.name());
        let note = format!(
            "[This result is partial: {}. Above is what the tool had produced by then.]",
            error.message
        );
        let output =
            parts.into_iter().fold(ToolOutput::new(), ToolOutput::with).with(Part::Text(note));
        *outcome = match redact_and_bound(&*tool, output, &budgets) {
            Ok(output) => {
                if let Some(slot) = &mut call.partial {
                    slot.1 = Some(error);
                }
                CallOutcome::Done(output)
            }
            Err(_) => CallOutcome::Failed(error),
        };
    }

    /// Steps 11 and 12: the `tool_call_result` event and the call's one result.
    #[inline(always)]
    pub(super) fn settle(
        &self,
        call: &mut Call,
        name: &str,
        outcome: CallOutcome,
        (ctx, started_ms): (&ToolInvocationContext, i64),
    ) -> ToolExecResult {
        let ended_ms = self.clock.epoch_ms();
        if call.events {
            // A sink that panics on the result still leaves the caller its result.
            guarded(|| {
                self.sink.emit(ToolEvent::end(
                    call.id.clone(),
                    name.to_owned(),
                    &outcome,
                    ended_ms,
                    u64::try_from(ended_ms.saturating_sub(started_ms)).unwrap_or(0),
                ));
            });
        }
        // The call's parts are taken, not the call: it is large, and moving it is a copy.
        let args = (call.args.take(), call.args_received.take());
        let partial = call.partial.take().and_then(|slot| slot.1);
        let (subject_id, graph_id) = ctx.subject_and_graph();
        let rare = (partial.is_some() || subject_id.is_some() || graph_id.is_some())
            .then(|| Box::new(Rare { partial, subject_id, graph_id }));
        ToolExecResult::new(
            std::mem::take(&mut call.id),
            name.to_owned(),
            outcome,
            (args, rare),
            (started_ms, ended_ms),
        )
    }
}

/// The logger of one call, in front of the caller's (which may outlive the call, as an MCP
/// server's does when its client asked for no progress): it scrubs the call's credential and is
/// disarmed when the call ends, so nothing of the call is logged after its result.
fn call_logger(call: &mut Call, caller: &LogReporter) -> LogReporter {
    let (caller, secret) = (caller.clone(), call.secret.clone());
    let logger = LogReporter::new(move |mut message: LogMessage| {
        if let Some(secret) = &secret
            && let Some(text) = scrubbed(&message.message, secret)
        {
            message.message = text;
        }
        caller.send(message);
    });
    call.logger = Some(logger.clone());
    logger
}

/// The capabilities a tool declares that the runner binds to each call itself.
struct Declared {
    auth: bool,
    tool_calls: bool,
    interact: bool,
    partial: bool,
}

/// (After 2.) A call a tool made through [`ToolCalls`]: no deeper than the called tool's
/// budget allows -> `call_depth_exceeded`, and not of a tool already on the chain of calling
/// tools -> `call_cycle`.
fn check_nesting(lineage: &Lineage, tool: &str, budgets: &Budgets) -> Result<(), ExecError> {
    let chain = || {
        let mut chain = String::new();
        for (ancestor, _) in &lineage.ancestors {
            chain.push_str(&format!("`{}` -> ", Shown(ancestor)));
        }
        chain.push_str(&format!("`{}`", Shown(tool)));
        chain
    };
    if lineage.ancestors.iter().any(|(ancestor, _)| &**ancestor == tool) {
        return Err(ExecError::new(
            Code::CallCycle,
            format!("the call would make a cycle of tool calls: {}", chain()),
        ));
    }
    let depth = lineage.ancestors.len();
    if depth > budgets.max_call_depth {
        return Err(ExecError::new(
            Code::CallDepthExceeded,
            format!(
                "the call is nested {depth} deep; the limit (max_call_depth) is {}: {}",
                budgets.max_call_depth,
                chain()
            ),
        ));
    }
    Ok(())
}

/// Records the call's arguments and result on its span (the runner's opt-in): the validated
/// arguments, and the redacted structured value or the parts' summaries.
/// Each is cut to `limit` bytes.
pub(super) fn record_content(
    span: &tracing::Span,
    call: &Call,
    outcome: &CallOutcome,
    limit: usize,
) {
    if let Some(args) = &call.args {
        let text = args.get().to_string();
        span.record(
            "gen_ai.tool.call.arguments",
            tracing::field::display(Untrusted { text: &text, max: limit }),
        );
    }
    if let CallOutcome::Done(output) = outcome {
        let result = match output.structured() {
            Some(value) if output.is_structured_only() => value.to_string(),
            _ => serde_json::to_string(&output.summaries()).unwrap_or_default(),
        };
        span.record(
            "gen_ai.tool.call.result",
            tracing::field::display(Untrusted { text: &result, max: limit }),
        );
    }
}

/// Step 5: the arguments within their size budget, validated by the tool -> `invalid_json` /
/// `validation`. Decoding runs the tool type's `Deserialize`, which is user code: a panic there is
/// the tool's failure (`execution`), not the runner's.
#[inline(always)]
fn validate_arguments(
    tool: &dyn BoundToolRuntime,
    args: Arguments<'_>,
    budgets: &Budgets,
    tolerant: bool,
) -> Result<ValidatedArgs, ExecError> {
    let limit = budgets.max_argument_bytes;
    let size = match &args {
        Arguments::Raw(raw) => Some(raw.len()).filter(|size| *size > limit),
        Arguments::Parsed(value) => json_len_over(value, limit),
    };
    if let Some(size) = size {
        return Err(ExecError::new(
            Code::Validation,
            format!("the arguments are {size} bytes; the limit is {limit}"),
        ));
    }
    let args = if tolerant { respelled(tool, args)? } else { args };
    catch_decode_panic(|| tool.arguments(args))?.map_err(|error| arguments_error(error, ""))
}

/// For a tool that tolerates case: the arguments with each top-level key that is the other
/// spelling of a property renamed to the property's name (see
/// [`ToolSpec::tolerates_case`](crate::spec::ToolSpec::tolerates_case)), or as they came when
/// no key needs it. Text that does not parse goes on as it came, for the tool to refuse.
#[cold]
fn respelled<'a>(
    tool: &dyn BoundToolRuntime,
    args: Arguments<'a>,
) -> Result<Arguments<'a>, ExecError> {
    let mut value = match &args {
        Arguments::Raw(raw) => match crate::schema::parse_json(raw) {
            Ok(value) => value,
            Err(_) => return Ok(args),
        },
        Arguments::Parsed(value) => Value::clone(value),
    };
    let Value::Object(object) = &mut value else { return Ok(args) };
    match super::case::respell(tool.spec().input_schema(), object) {
        Ok(true) => Ok(Arguments::Parsed(std::borrow::Cow::Owned(value))),
        Ok(false) => Ok(args),
        Err(message) => Err(ExecError::new(Code::Validation, message)),
    }
}

/// The error of refused arguments; `context` says whose they were.
fn arguments_error(error: ArgumentsError, context: &str) -> ExecError {
    match error {
        ArgumentsError::InvalidJson(error) => ExecError::new(
            Code::InvalidJson,
            format!("{context}the arguments are not valid JSON: {error}"),
        ),
        ArgumentsError::Validation(errors) => {
            ExecError::new(Code::Validation, format!("{context}{errors}"))
        }
        other => ExecError::new(Code::Validation, format!("{context}{other}")),
    }
}

/// Step 8: how the tool's run within its time budget ended; a panic is an execution error -> `execution` /
/// `timeout` (`cancelled` is the caller's: see `drive::until_cancelled`). A tool that may ask
/// (`interact`) and failed on a question that waits for the user waits for its answer.
#[inline(always)]
fn run_outcome(
    ran: Ran<Result<ToolOutput, ToolError>>,
    budgets: &Budgets,
    interact: bool,
) -> Result<ToolOutput, Stop> {
    match ran {
        Ran::Finished(Ok(output)) => Ok(output),
        Ran::Finished(Err(error)) => Err(tool_failed(error, interact)),
        Ran::Panicked => {
            Err(ExecError::new(Code::Execution, "the tool failed unexpectedly (it panicked)")
                .after_panic()
                .into())
        }
        Ran::TimedOut => Err(ExecError::new(
            Code::Timeout,
            format!("the tool did not finish within {} ms", budgets.max_runtime_ms),
        )
        .into()),
    }
}

/// Step 8 for a tool that returned an error: `execution`, or the call waits on the question
/// the error holds when the tool may ask. Out of line: tools succeed.
#[cold]
#[inline(never)]
fn tool_failed(mut error: ToolError, interact: bool) -> Stop {
    if let Some(question) = error.take_question().filter(|_| interact) {
        return Stop::Waiting(Box::new(Waiting::question(*question)));
    }
    let mut failed = ExecError::new(Code::Execution, error.message());
    failed.retryable = error.is_retryable();
    Stop::Failed(failed)
}

/// Step 6 for a tool that declares [`Interact`]: when the call's context names who answers its
/// questions, the bound capability is replaced by one that asks them. Out of line: few tools
/// ask anything.
#[inline(never)]
fn with_asker(caps: ToolCapabilities, ctx: &ToolInvocationContext) -> ToolCapabilities {
    let bound = ctx.asker().and_then(|asker| Some(caps.get::<Interact>().ok()?.for_call(asker)));
    match bound {
        Some(interact) => caps.with(interact),
        None => caps,
    }
}

/// Step 9: the structured value against the output schema -> `output_validation`. A tool with
/// an output schema must return a structured value. A compile-time schema is checked here, by
/// the runner, whatever the tool's own check says; other schemas by the tool. The details name
/// the unredacted output's fields (an unexpected property's name is text the tool chose), so
/// only their number leaves the runner, with the JSON part's index; the record keeps what the
/// tool returned (summaries, no bytes).
#[inline(always)]
pub(super) fn check_output(
    tool: &dyn BoundToolRuntime,
    output: &ToolOutput,
) -> Result<(), ExecError> {
    let schema = tool.spec().output_schema();
    let Some(structured) = output.structured() else {
        if schema.is_some() {
            return Err(output_refused(output, None));
        }
        return Ok(());
    };
    let checked = match (schema, tool.spec().output_check()) {
        // The output type's generated validator: the same verdict as walking its schema.
        (Some(SpecSchema::Static(_)), Some(check)) => check(structured),
        (Some(SpecSchema::Static(schema)), None) => schema.validate(structured),
        _ => tool.validate_output(structured),
    };
    checked.map_err(|errors| output_refused(output, Some(errors.len())))
}

/// Step 9's error: the JSON part that fails its schema (`problems` of them), or the structured
/// value that is missing (`None`), with the tool's parts kept for the record. Out of line: a
/// tool's output matches its schema.
#[cold]
#[inline(never)]
fn output_refused(output: &ToolOutput, problems: Option<usize>) -> ExecError {
    let message = match problems {
        None => "the tool has an output schema but returned no structured value".to_owned(),
        Some(problems) => {
            let index = output.parts().iter().position(|part| matches!(part, Part::Json(_)));
            format!(
                "part {} (json) does not match the tool's output schema ({problems} problem{})",
                index.unwrap_or(0),
                if problems == 1 { "" } else { "s" }
            )
        }
    };
    ExecError::new(Code::OutputValidation, message).with_output(output.summaries())
}

/// Step 10: only the allowlisted fields of the structured value and of the details; within the
/// result budgets -> `result_too_large`, or `output_validation` for an image that is not what
/// its MIME type says. A structured value that passed step 9 against a compile-time schema
/// whose every property the allowlist takes in needs no walk: output objects are closed, so it
/// holds nothing else. Details without an allowlist are dropped. Other parts are what the tool
/// chose to show: they are bounded (`content::limits`: images checked and resized, text cut)
/// but not redacted.
#[inline(always)]
pub(super) fn redact_and_bound(
    tool: &dyn BoundToolRuntime,
    mut output: ToolOutput,
    budgets: &Budgets,
) -> Result<ToolOutput, ExecError> {
    let spec = tool.spec();
    let structured_only = output.is_structured_only();
    if let Some(structured) = output.structured_mut() {
        if !spec.redaction_keeps_valid_output() {
            let value = std::mem::take(structured);
            *structured = spec.redaction().apply_owned(value);
        }
        if structured_only && let Some(size) = json_len_over(structured, budgets.max_result_bytes) {
            return Err(ExecError::new(
                Code::ResultTooLarge,
                format!(
                    "the result is {size} bytes; the limit (max_result_bytes) is {}",
                    budgets.max_result_bytes
                ),
            ));
        }
    }
    if !structured_only {
        // Out of line: an ordinary output never comes here.
        bound_parts(&mut output, budgets)?;
    }
    if let Some(value) = output.take_details()
        && spec.details_schema().is_some()
        && !spec.details_redaction().is_empty()
    {
        output.set_details(Some(spec.details_redaction().apply_owned(value)));
    }
    Ok(output)
}

/// Step 10 for a result of several parts: the limits of `content::limits`; a refusal keeps
/// what the tool returned (summaries, no bytes) for the record.
#[inline(never)]
fn bound_parts(output: &mut ToolOutput, budgets: &Budgets) -> Result<(), ExecError> {
    enforce(output, budgets).map_err(|limited| ExecError::refused(output.summaries(), limited))
}
