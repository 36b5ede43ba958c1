//! Running a turn's calls: in batches of at most `max_concurrent`, a call whose effect must
//! run alone in a batch of its own, result events in the model's order as soon as they are
//! known, and the budget watched while they run.

use futures_util::StreamExt;
use tokio::time::Instant;

use super::events::{result_event, running};
use super::parking::Parking;
use super::search::TurnSearch;
use super::{Agent, AgentEvent};
use crate::adapters::{Decoded, SEARCH_TOOL, ToolCall, ToolResult};
use crate::catalog::ToolSource;
use crate::runtime::{
    Arguments, ExecError, Interact, ToolErrorCode, ToolExecResult, ToolInvocationContext,
    ToolInvocationRecord, Waiting,
};
use crate::schema::Shown;

/// Where one call of a turn stands after the runner saw it.
#[derive(Debug, Clone)]
pub(super) enum Slot {
    /// Its result for the model (under the run's id).
    Done(ToolResult),
    /// It waits (for [`WaitsFor::Elicitation`](crate::runtime::WaitsFor::Elicitation), with
    /// the question it asked), with its validated arguments, and whether it was approved
    /// before it asked.
    Waiting { waiting: Waiting, arguments: serde_json::Value, approved: bool },
}

impl Slot {
    /// Its result, unless it waits.
    pub(super) fn done(self) -> Option<ToolResult> {
        match self {
            Self::Done(result) => Some(result),
            Self::Waiting { .. } => None,
        }
    }
}

impl Agent {
    /// Runs a turn's calls and returns their results in model order, with the records of the
    /// calls that went through the runner (those of calls that wait included). When the
    /// budget runs out meanwhile, the run is cancelled and the calls still end, each with its
    /// one result.
    ///
    /// With tool search (`search`), the model's searches are answered by the agent, in the
    /// model's order before the other calls run, and a call of a tool no earlier search found
    /// is refused.
    pub(super) async fn execute_turn(
        &self,
        decoded: &Decoded,
        search: Option<&TurnSearch<'_, '_>>,
        ctx: &ToolInvocationContext,
        deadline: Option<Instant>,
        on_event: &(dyn Fn(AgentEvent) + Send + Sync),
    ) -> (Vec<Slot>, Vec<ToolInvocationRecord>) {
        let work = self.execute_calls(decoded, search, ctx, on_event);
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

    /// The calls of a turn in batches, in the model's order: a call of a cut-off turn is
    /// answered without running, a call whose effect runs alone waits for the batch before it
    /// and runs in a batch of its own.
    async fn execute_calls(
        &self,
        decoded: &Decoded,
        search: Option<&TurnSearch<'_, '_>>,
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
        // The tools this turn's searches found so far.
        let mut found_now = Vec::new();
        let turn = TurnCalls { decoded, search, ctx };
        for (index, call) in decoded.calls.iter().enumerate() {
            if !runnable || !call.complete {
                results[index] = Some(Slot::Done(ToolResult::error(
                    call,
                    ToolErrorCode::Truncated,
                    "the response was cut off before this call was complete, so it was not run",
                )));
            } else if let Some(search) = search.filter(|_| call.name == SEARCH_TOOL) {
                let answer = self.answer_search(call, search, &mut found_now, ctx, on_event).await;
                results[index] = Some(Slot::Done(answer));
            } else if self.runs_alone(&call.name) {
                let before = std::mem::take(&mut batch);
                self.run_batch(&before, turn, &mut results, &mut records, on_event).await;
                emit_ready(&results, &mut emitted, on_event, &decoded.calls);
                self.run_batch(&[index], turn, &mut results, &mut records, on_event).await;
            } else {
                batch.push(index);
            }
            emit_ready(&results, &mut emitted, on_event, &decoded.calls);
        }
        self.run_batch(&batch, turn, &mut results, &mut records, on_event).await;
        emit_ready(&results, &mut emitted, on_event, &decoded.calls);
        (results.into_iter().flatten().collect(), records.into_iter().flatten().collect())
    }

    /// Whether calls of `name` run alone
    /// ([`AgentConfig::run_alone`](super::AgentConfig::run_alone)).
    fn runs_alone(&self, name: &str) -> bool {
        !self.config.run_alone.is_empty()
            && self
                .runner
                .catalog()
                .get(name)
                .is_some_and(|tool| self.config.run_alone.contains(&tool.effect()))
    }

    /// The name a call of `called` runs under: the tool an alias stands for
    /// ([`AgentConfig::aliases`](super::AgentConfig::aliases)), or the name as called.
    fn resolve<'a>(&'a self, called: &'a str) -> Result<&'a str, ExecError> {
        let Some(real) = self.config.aliases.get(called) else { return Ok(called) };
        if self.runner.catalog().get(called).is_some() {
            return Err(ExecError::new(
                ToolErrorCode::Unavailable,
                format!(
                    "`{}` is both a tool and an alias of `{}`: the call is ambiguous and was not run",
                    Shown(called),
                    Shown(real)
                ),
            ));
        }
        Ok(real)
    }

    /// `name`, unless the tool does not take calls from where `call` came from: code the model
    /// wrote calling a tool only the model may call, or the model calling directly a tool only
    /// its code may call ([`Callers`](crate::spec::Callers)). The provider should have refused
    /// either; the agent does not rely on it.
    fn check_caller<'a>(&self, call: &ToolCall, name: &'a str) -> Result<&'a str, ExecError> {
        let Some(tool) = self.runner.catalog().get(name) else { return Ok(name) };
        let callers = tool.spec().callers();
        let (allowed, from) = if call.from_code() {
            (callers.allows_programmatic(), "code the model wrote")
        } else {
            (callers.allows_direct(), "the model directly")
        };
        if allowed {
            return Ok(name);
        }
        Err(ExecError::new(
            ToolErrorCode::Unavailable,
            format!(
                "`{}` takes no calls from {from} (its callers: {callers}), so the call was not run",
                Shown(name)
            ),
        ))
    }

    /// Runs the calls at `indices` through the runner, at most `max_concurrent` at once,
    /// and puts where each stands in `results` and its record in `records`.
    async fn run_batch(
        &self,
        indices: &[usize],
        TurnCalls { decoded, search, ctx }: TurnCalls<'_, '_, '_>,
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
                    let resolved = self
                        .resolve(&call.name)
                        .and_then(|name| self.check_caller(call, name))
                        .and_then(|name| search.map_or(Ok(name), |search| search.check(name)));
                    let name = resolved.as_ref().map_or(call.name.as_str(), |name| name);
                    let mut call_ctx = ctx.clone().with_tool_call_id(call.id.clone());
                    if asks {
                        // A question no bound backend answers waits for the user's answer.
                        call_ctx = call_ctx.with_deferred_questions(Parking::new(Vec::new()));
                    }
                    if resolved.is_ok() && self.runner.needs_approval(name) {
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
                        let running = running(self.config.arguments_in_events, on_event);
                        let executed = match resolved {
                            Ok(name) => {
                                self.runner
                                    .exec_arguments(name, args, &call_ctx, Some(&running))
                                    .await
                            }
                            Err(error) => self.runner.refuse(&call.name, error, &call_ctx),
                        };
                        (index, executed)
                    }
                })
                .buffered(self.config.max_concurrent.max(1))
                .collect()
                .await;
        for (index, executed) in outcomes {
            let call = &decoded.calls[index];
            let result = ToolResult::from_exec(call, &executed);
            // The record keeps what the model sent, for audit (never shown).
            let mut record = executed.into_record();
            record.raw = Some(call.raw_call());
            match result {
                Some(result) => results[index] = Some(Slot::Done(result)),
                // Not run and not failed: it waits. Its record here is for the audit trail
                // alone; it gets its record proper when it is decided.
                None => {
                    let Some(waiting) = record.waiting.clone() else { continue };
                    let arguments = record.args.clone().unwrap_or(serde_json::Value::Null);
                    // A call that asked got past its approval, if policy required one.
                    let approved =
                        waiting.question.is_some() && self.runner.needs_approval(&call.name);
                    results[index] = Some(Slot::Waiting { waiting, arguments, approved });
                }
            }
            records[index] = Some(record);
        }
    }
}

/// A turn's calls as they run: the turn, its tool search and the context they run in.
#[derive(Clone, Copy)]
struct TurnCalls<'a, 's, 'v> {
    decoded: &'a Decoded,
    search: Option<&'a TurnSearch<'s, 'v>>,
    ctx: &'a ToolInvocationContext,
}

/// Emits the result events from `*emitted` on, as far as every result is known.
fn emit_ready(
    results: &[Option<Slot>],
    emitted: &mut usize,
    on_event: &(dyn Fn(AgentEvent) + Send + Sync),
    calls: &[ToolCall],
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

/// Sleeps until `deadline`, or forever without one.
pub(super) async fn sleep_until(deadline: Option<Instant>) {
    match deadline {
        Some(deadline) => tokio::time::sleep_until(deadline).await,
        None => std::future::pending().await,
    }
}
