//! [`Agent::resume`]: a run taken up again from its [`RunState`] with decisions.

use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;

use super::deferred::{
    CallDecision, CallStatus, Decisions, ResumeError, RunState, Verdict, ledger_key,
};
use super::events::{result_event, running};
use super::parking::Parking;
use super::state::Loop;
use super::{Agent, AgentEvent, AgentOutput, Message, StopReason, Usage};
use crate::adapters::{ToolCall, ToolResult, check_conversation};
use crate::digest::arguments_hash;
use crate::runner::{Approval, ApprovalDecision, ApprovalRequest, Approver, ToolRunner};
use crate::runtime::{Answered, CallOutcome, ToolInvocationContext, ToolInvocationRecord};
use crate::store::{self, RunKey, RunStore, StoreError};
use serde_json::Value;

impl Agent {
    /// Takes up a run that stopped [`Waiting`](StopReason::Waiting) from its `state`, with the
    /// `decisions` made meanwhile, for the caller of `ctx` (the same run, tenant and actor),
    /// possibly in another process: decided calls end (approved ones run once, never twice, denied
    /// ones go back to the model as `approval_denied`, supplied client results are checked and
    /// redacted), and once no call of the turn waits, the loop goes on as [`run`](Self::run)
    /// would. Calls left undecided keep waiting: the output stops waiting again with a new
    /// state. See [`deferred`](super::deferred) for a guide and an example.
    ///
    /// With a [store](Self::with_store) (needed), the decided calls are spent there first,
    /// naming this state, and the run is held until the resume saves the state that follows
    /// (calls still wait) or marks the run ended: see [`deferred`](super::deferred).
    ///
    /// # Errors
    ///
    /// [`ResumeError`] when the agent has no key or store, the state is forged or stale (its
    /// seal, its key, its caller, a tool's spec changed), the decisions are empty, name a call
    /// that does not wait or do not fit it, the calls were decided by an earlier resume
    /// ([`AlreadyResumed`](ResumeError::AlreadyResumed)), or the store refused
    /// ([`ResumeError::Store`]: the run is not stored, expired, moved on to another state, or
    /// another resume holds it) or failed. Then nothing ran.
    pub async fn resume(
        &self,
        state: RunState,
        decisions: Decisions,
        ctx: &ToolInvocationContext,
        on_event: &(dyn Fn(AgentEvent) + Send + Sync),
    ) -> Result<AgentOutput, ResumeError> {
        let store = self.check_state(&state, ctx)?;
        decisions.check(&state)?;
        if decisions.is_empty() {
            return Err(ResumeError::NoDecisions);
        }
        let decided: Vec<store::Decided> = decisions
            .iter()
            .map(|(id, decision)| {
                store::Decided::new(ledger_key(&state, id), Verdict::of(decision).label())
            })
            .collect();
        let key = RunKey::new(state.tenant_id(), state.run_id());
        let revision = state.seal().unwrap_or_default();
        store.spend(&key, revision, &decided, super::keep::now_ms()).await.map_err(|error| {
            match error {
                StoreError::AlreadySpent { call_keys, .. } => {
                    let call_ids = decided
                        .iter()
                        .zip(decisions.ids())
                        .filter(|(call, _)| call_keys.contains(&call.call_key))
                        .map(|(_, id)| id.clone())
                        .collect();
                    ResumeError::AlreadyResumed { call_ids }
                }
                other => ResumeError::Store(other),
            }
        })?;
        let (mut output, waited) = self.decide(state, decisions, ctx, on_event).await;
        self.keep(&mut output, &waited, ctx, true).await;
        Ok(output)
    }

    /// The decided calls of `state` end (run, refused, supplied), then the loop goes on once
    /// none waits: the part of a resume after its calls were spent.
    pub(super) async fn decide(
        &self,
        state: RunState,
        decisions: Decisions,
        ctx: &ToolInvocationContext,
        on_event: &(dyn Fn(AgentEvent) + Send + Sync),
    ) -> (AgentOutput, Vec<ToolInvocationRecord>) {
        let decided = decisions.ids().count();
        let token = ctx.cancellation().child_token();
        let ctx = ctx.clone().with_cancellation(token);
        let parts = state.into_parts();
        let mut run = Loop::new(parts.messages, Duration::from_millis(parts.elapsed_ms));
        run.iterations = parts.iterations;
        run.usage = Usage { input_tokens: parts.input_tokens, output_tokens: parts.output_tokens };
        run.ids.used = parts.call_ids.into_iter().collect();
        let turn_calls: Vec<ToolCall> = match run.messages.last() {
            Some(Message::Assistant(turn)) => turn.calls.clone(),
            _ => Vec::new(),
        };
        let mut calls = parts.calls;
        let waiting = calls
            .iter()
            .filter(|call| {
                matches!(call.status, CallStatus::Waiting { .. })
                    && decisions.get(&call.id).is_none()
            })
            .count();
        on_event(AgentEvent::Resumed { decided, waiting });
        for (call, wire_call) in calls.iter_mut().zip(&turn_calls) {
            let CallStatus::Waiting { arguments, spec_hash, question, answered, approved, .. } =
                &call.status
            else {
                continue;
            };
            let Some(decision) = decisions.get(&call.id) else { continue };
            let call_ctx = ctx.clone().with_tool_call_id(call.id.clone());
            let name = call.tool_name.as_str();
            let verdict = Verdict::of(decision);
            let mut answers = Vec::new();
            on_event(AgentEvent::CallDecided {
                id: call.id.clone(),
                name: call.tool_name.clone(),
                decision: verdict.label(),
            });
            let executed = match decision {
                CallDecision::Deny { message } => {
                    self.runner.deny_deferred(name, arguments, message, &call_ctx).await
                }
                CallDecision::Supply { output } => {
                    self.runner.exec_supplied(name, arguments, output.clone(), &call_ctx).await
                }
                CallDecision::Approve | CallDecision::Edit { .. } | CallDecision::Answer { .. } => {
                    // Edited arguments are the call's now: validated by the runner, shown to
                    // the before-call hooks, and the approval is bound to them. A call that
                    // waited on a question runs again under the approval it had before it
                    // asked, if it had one: an answer is no approval.
                    let stored = arguments;
                    let arguments = match decision {
                        CallDecision::Edit { arguments } => arguments,
                        CallDecision::Answer { answer } => {
                            answers.clone_from(answered);
                            if let Some(question) = question {
                                let (question, answer) = (question.clone(), answer.clone());
                                answers.push(Answered { question, answer });
                            }
                            arguments
                        }
                        _ => arguments,
                    };
                    let approved = *approved || verdict != Verdict::Answered;
                    let runner = deciding_runner(
                        &self.runner,
                        &call_ctx,
                        Waited { name, spec_hash, call_id: &call.id, stored, arguments },
                        approved,
                    );
                    let call_ctx = call_ctx.with_deferred_questions(Parking::new(answers.clone()));
                    let running = running(self.config.arguments_in_events, on_event);
                    let executed = runner
                        .exec_arguments(name, arguments.into(), &call_ctx, Some(&running))
                        .await;
                    if let CallOutcome::Waiting(waiting) = executed.outcome {
                        // It asked (another) question: it waits on that, with the arguments
                        // it ran with.
                        call.status = CallStatus::waiting(
                            waiting.waits_for,
                            arguments.clone(),
                            spec_hash.clone(),
                            waiting.question.clone(),
                            answers,
                            approved,
                        );
                        on_event(AgentEvent::ToolCallWaiting {
                            id: call.id.clone(),
                            name: call.tool_name.clone(),
                            waiting,
                        });
                        continue;
                    }
                    executed
                }
            };
            // Denied, supplied and decided calls have ended: none waits here.
            let Some(result) = ToolResult::from_exec(wire_call, &executed) else { continue };
            let mut event_result = result.clone();
            call.id.clone_into(&mut event_result.call_id);
            on_event(result_event(&event_result));
            // No `raw`: the sealed state keeps the call as parsed, never the model's text (that
            // is in the audit entry made when the call started waiting).
            run.records.push(executed.into_record());
            call.status = verdict.status(result);
        }
        let still: Vec<String> = calls
            .iter()
            .filter(|call| matches!(call.status, CallStatus::Waiting { .. }))
            .map(|call| call.id.clone())
            .collect();
        if !still.is_empty() {
            run.waiting = Some(calls);
            return self.finish_run(run, StopReason::Waiting { calls: still }, &ctx, on_event);
        }
        let results: Vec<ToolResult> =
            calls.into_iter().filter_map(|call| call.status.result().cloned()).collect();
        run.messages.push(Message::ToolResults(results));
        let stop = if ctx.cancellation().is_cancelled() {
            StopReason::Cancelled
        } else {
            self.drive_from(&mut run, &ctx, on_event).await
        };
        self.finish_run(run, stop, &ctx, on_event)
    }

    /// Refuses a state that is forged or stale for this agent and caller; hands back the
    /// store to spend its decided calls in.
    pub(super) fn check_state(
        &self,
        state: &RunState,
        ctx: &ToolInvocationContext,
    ) -> Result<&Arc<dyn RunStore>, ResumeError> {
        let keys = self.state_keys()?;
        let store = self.store.as_ref().ok_or(ResumeError::NoStore)?;
        state.verify_with(&keys)?;
        // Sealed by an agent, so kept unless a bug or an older version made it: checked as any
        // conversation handed in is.
        check_conversation(state.messages()).map_err(ResumeError::Conversation)?;
        for (field, ours, theirs) in [
            ("run_id", ctx.run_id(), state.run_id()),
            ("tenant_id", ctx.tenant_id(), state.tenant_id()),
            ("actor_id", ctx.actor_id(), state.actor_id()),
        ] {
            if ours != theirs {
                return Err(ResumeError::OtherCaller { field });
            }
        }
        match state.messages().last() {
            Some(Message::Assistant(turn)) if turn.calls.len() == state.calls().len() => {}
            _ => return Err(ResumeError::Inconsistent),
        }
        for call in state.waiting() {
            let CallStatus::Waiting { arguments, arguments_hash: hash, spec_hash, .. } =
                &call.status
            else {
                continue;
            };
            if arguments_hash(arguments) != *hash {
                return Err(ResumeError::Forged);
            }
            if self.spec_hash_of(&call.tool_name).as_deref() != Some(spec_hash.as_str()) {
                return Err(ResumeError::ToolChanged {
                    call_id: call.id.clone(),
                    tool_name: call.tool_name.clone(),
                });
            }
        }
        Ok(store)
    }
}

/// A waiting call, as the runner that decides it needs it: its tool and the tool's spec hash
/// when it waited, its id, the arguments it waited with and the ones it runs with (an edit's).
pub(crate) struct Waited<'a> {
    pub(crate) name: &'a str,
    pub(crate) spec_hash: &'a str,
    pub(crate) call_id: &'a str,
    pub(crate) stored: &'a Value,
    pub(crate) arguments: &'a Value,
}

/// The runner that runs the decided call `waited` again in `ctx`: `approved`, its approver
/// approves exactly this call (run, tenant, actor, tool, spec hash, call id and arguments) and
/// denies every other; not approved (an answered question of a call that never was), it
/// denies any approval policy asks for now. The agent's resume and the MCP server's rounds
/// both decide calls through it.
pub(crate) fn deciding_runner(
    runner: &ToolRunner,
    ctx: &ToolInvocationContext,
    waited: Waited<'_>,
    approved: bool,
) -> ToolRunner {
    let Waited { name, spec_hash, call_id, stored, arguments } = waited;
    let approval = approved.then(|| Approval::bound(ctx, name, spec_hash, call_id, arguments));
    runner.deciding(Arc::new(Decided(approval)), call_id, stored)
}

/// The approver of one decided call on resume: it approves exactly the call the decision was
/// made for, bound to run, tenant, actor, tool, spec hash, call id and arguments (the edited
/// ones, for an edit), and denies anything else. `None`: an answered question of a call that
/// was never approved, which no approval may reach now.
#[derive(Debug)]
struct Decided(Option<Approval>);

#[async_trait]
impl Approver for Decided {
    async fn review(&self, request: &ApprovalRequest<'_>) -> ApprovalDecision {
        match &self.0 {
            Some(approval) if request.approval() == *approval => request.approve(),
            Some(_) => request.deny("the decision was made for another call"),
            None => request.deny(
                "policy now requires approval for this tool, which the call did not have when it asked its question",
            ),
        }
    }
}
