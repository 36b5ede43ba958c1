//! A turn that waits: its calls as the run's state keeps them, and that state, sealed.

use super::Agent;
use super::batch::Slot;
use super::deferred::{CallStatus, RunState, StateCall, StateParts};
use super::state::Loop;
use crate::adapters::Decoded;
use crate::catalog::ToolSource;
use crate::runtime::ToolInvocationContext;

impl Agent {
    /// The calls of a turn that waits, as its state keeps them: results under the provider's
    /// ids, waiting calls with their arguments and the hashes they are bound to. Also the ids
    /// of the waiting calls.
    pub(super) fn waiting_calls(
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

    /// The [`spec_hash`](crate::spec::ToolSpec::spec_hash) of the tool `name` in the runner's catalog.
    pub(super) fn spec_hash_of(&self, name: &str) -> Option<String> {
        self.runner.catalog().get(name).map(|tool| tool.spec().spec_hash().to_owned())
    }

    /// The sealed state of a run that stops waiting on `calls` (see
    /// [`Agent::with_state_key`]), from what `run` holds when it stops; takes the run's ids.
    pub(super) fn sealed_state(
        &self,
        run: &mut Loop,
        calls: Vec<StateCall>,
        ctx: &ToolInvocationContext,
    ) -> RunState {
        let elapsed = run.elapsed_before.saturating_add(run.started.elapsed());
        let mut ids: Vec<String> = std::mem::take(&mut run.ids.used).into_iter().collect();
        ids.sort_unstable();
        let parts = StateParts {
            run_id: ctx.run_id().to_owned(),
            tenant_id: ctx.tenant_id().to_owned(),
            actor_id: ctx.actor_id().to_owned(),
            iterations: run.iterations,
            input_tokens: run.usage.input_tokens,
            output_tokens: run.usage.output_tokens,
            elapsed_ms: u64::try_from(elapsed.as_millis()).unwrap_or(u64::MAX),
            call_ids: ids,
            messages: run.messages.clone(),
            calls,
        };
        RunState::sealed(parts, self.key.as_ref())
    }
}
