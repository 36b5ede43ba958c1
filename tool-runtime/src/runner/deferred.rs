//! What the runner does for deferred calls when they are decided: run them under the decision
//! (an approver that knows it), and end a client tool's call with the result its client
//! supplied. Only resuming a run comes here; `exec` never does.

use std::sync::Arc;

use serde_json::Value;

use super::drive::{Deadline, catch_decode_panic, guarded, mint_call_id, step_panicked};
use super::steps::{check_output, redact_and_bound};
use super::{Call, ToolRunner};
use crate::catalog::ToolSource;
use crate::content::ToolOutput;
use crate::policy::Decision;
use crate::runner::Approver;
use crate::runtime::{
    Arguments, CallStep, ExecError, ToolErrorCode as Code, ToolExecResult, ToolInvocationContext,
    ValidatedArgs,
};
use crate::schema::Shown;

/// The one call a [`deciding`](ToolRunner::deciding) runner decides: its id, the arguments
/// the before-call hooks left on its way to waiting, and the application's approver, which
/// the calls it makes get back.
#[derive(Debug)]
pub(super) struct Resumed {
    call_id: String,
    arguments: Value,
    approver: Arc<dyn Approver>,
}

impl ToolRunner {
    /// This runner for the call `call_id` decided on resume: `approver` decides it. Its
    /// before-call hooks saw the call on its way to waiting with `stored` arguments (the ones
    /// they left), so the call skips them when it runs with exactly those; asking them again
    /// would change what the decision was bound to. Edited arguments pass them again, and so
    /// does every call the tool makes (those run on this runner as it was, with the
    /// application's approver). The after-call hooks see the outcome as for any call.
    pub(crate) fn deciding(
        &self,
        approver: Arc<dyn Approver>,
        call_id: &str,
        stored: &Value,
    ) -> Self {
        let resumed = Resumed {
            call_id: call_id.to_owned(),
            arguments: stored.clone(),
            approver: Arc::clone(&self.approver),
        };
        Self { approver, resumed: Some(Arc::new(resumed)), ..self.clone() }
    }

    /// Whether the before-call hooks already passed this call: it is the call a
    /// [`deciding`](Self::deciding) runner decides, with the arguments they left. (Other
    /// calls never look at the arguments' value, which is parsed only when asked for.)
    pub(super) fn hooks_passed(&self, ctx: &ToolInvocationContext, args: &ValidatedArgs) -> bool {
        self.resumed.as_ref().is_some_and(|resumed| {
            ctx.tool_call_id() == Some(resumed.call_id.as_str())
                && *args.value() == resumed.arguments
        })
    }

    /// The runner the calls a tool makes run on: this one, or the one a
    /// [`deciding`](Self::deciding) runner was made from.
    pub(super) fn for_calls(&self) -> Self {
        match &self.resumed {
            None => self.clone(),
            Some(resumed) => {
                Self { approver: Arc::clone(&resumed.approver), resumed: None, ..self.clone() }
            }
        }
    }

    /// Ends the call `ctx.tool_call_id()` of the client tool `name`, made with `arguments`,
    /// with the `output` its client supplied: policy, the arguments and the output are checked
    /// as for any call (`output_validation` for an output that does not match the output
    /// schema), then the output is redacted and bounded. The sink sees the call start and end.
    pub(crate) async fn exec_supplied(
        &self,
        name: &str,
        arguments: &Value,
        output: Value,
        ctx: &ToolInvocationContext,
    ) -> ToolExecResult {
        let started_ms = self.clock.epoch_ms();
        let mut call = Call {
            id: ctx.tool_call_id().map_or_else(mint_call_id, str::to_owned),
            ..Call::default()
        };
        call.ask_sink(&*self.sink);
        let outcome = self.supplied(&mut call, name, arguments, output, ctx).await;
        let outcome = self.after_decided(&call, name, outcome, ctx, started_ms).await;
        self.finish(call, name, outcome, (ctx, started_ms))
    }

    /// The after-call hooks of a call decided on resume, as `exec` runs them for any call
    /// that got past the before-call hooks: a supplied result and a denial are outcomes too.
    async fn after_decided(
        &self,
        call: &Call,
        name: &str,
        outcome: Result<ToolOutput, ExecError>,
        ctx: &ToolInvocationContext,
        started_ms: i64,
    ) -> Result<ToolOutput, ExecError> {
        let Some(hooks) = &self.hooks else { return outcome };
        let Some(tool) = self.catalog.get(name).filter(|_| !hooks.after.is_empty()) else {
            return outcome;
        };
        // Within the tool's time budget, as on `exec`.
        let deadline = Deadline::after(self.policy.budgets_for(tool.name()).max_runtime_ms);
        let hooks = self.after_hooks(call, &*tool, outcome, ctx, started_ms);
        let bounded = async {
            deadline.bound(hooks, "the after-call hooks").await.unwrap_or_else(|mut timeout| {
                timeout.step = Some(CallStep::Hook);
                Err(timeout)
            })
        };
        super::drive::until_cancelled(std::pin::pin!(bounded), ctx.cancellation()).await
    }

    async fn supplied(
        &self,
        call: &mut Call,
        name: &str,
        arguments: &Value,
        output: Value,
        ctx: &ToolInvocationContext,
    ) -> Result<ToolOutput, ExecError> {
        let tool = self.catalog.get(name).ok_or_else(|| {
            ExecError::new(
                Code::Unavailable,
                format!("no tool named `{}` is available", Shown(name)),
            )
        })?;
        let tool = tool.as_ref();
        match self.policy.decide(tool.name(), tool.effect()) {
            Decision::Deny { reason } => return Err(ExecError::new(Code::PolicyDenied, reason)),
            // The client's result would stand in for an approval no one gave.
            Decision::RequireApproval => {
                return Err(ExecError::new(
                    Code::ApprovalDenied,
                    "this client tool's effect needs approval, which a supplied result cannot give: have the client ask its user and exempt the tool in the policy (`\"require_approval\": false`), or declare it `read_only`",
                ));
            }
            Decision::Allow => {}
        }
        if !tool.runs_on_client() {
            return Err(ExecError::new(
                Code::Unavailable,
                format!("`{}` is not a client tool: only the runner runs it", Shown(name)),
            ));
        }
        let args =
            catch_decode_panic(|| tool.arguments(Arguments::from(arguments)))?.map_err(|_| {
                ExecError::new(Code::Validation, "the call's arguments no longer validate")
            })?;
        call.args = Some(args.json().clone());
        if call.events {
            let start = call.start_event(name, ctx, self.clock.epoch_ms());
            // A sink that panics on the start still leaves the caller its result.
            call.started = super::drive::guarded(|| self.sink.emit(start)).is_some();
        }
        let budgets = self.policy.budgets_for(tool.name());
        let output = ToolOutput::from(output);
        // The output is the client's, as untrusted as a tool's: a panic in its checks is this
        // call's failure.
        let caught = |step: Option<Result<ToolOutput, ExecError>>| {
            step.unwrap_or_else(|| Err(step_panicked()))
        };
        let output = caught(guarded(|| check_output(tool, &output).map(|()| output)))?;
        // An oversize image is resized as a tool's would be, within the tool's time budget.
        #[cfg(feature = "image")]
        let output = {
            let deadline = Deadline::after(budgets.max_runtime_ms);
            super::limits::fit_images(output, &budgets, &deadline).await?
        };
        caught(guarded(|| redact_and_bound(tool, output, &budgets)))
    }
}

impl ToolRunner {
    /// Ends the waiting call `ctx.tool_call_id()` of `name` as denied on resume
    /// (`approval_denied`, with `message` for the model); it does not run. The after-call
    /// hooks see the denial.
    pub(crate) async fn deny_deferred(
        &self,
        name: &str,
        arguments: &Value,
        message: &str,
        ctx: &ToolInvocationContext,
    ) -> ToolExecResult {
        let started_ms = self.clock.epoch_ms();
        let mut call = Call {
            id: ctx.tool_call_id().map_or_else(mint_call_id, str::to_owned),
            args: Some(crate::runtime::bound::ArgsJson::from_value(arguments.clone())),
            ..Call::default()
        };
        call.ask_sink(&*self.sink);
        let denied = Err(ExecError::new(Code::ApprovalDenied, message));
        let outcome = self.after_decided(&call, name, denied, ctx, started_ms).await;
        self.finish(call, name, outcome, (ctx, started_ms))
    }
}
