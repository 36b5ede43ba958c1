//! Runs kept in the agent's [`RunStore`]: the bytes a store holds for a sealed state, saving a
//! run that stops waiting, reading one back, and an operator taking over a run whose resume
//! died.
//!
//! A store holds a state as one header line, `tool-runtime-state/1 <key id> <hmac>`, then the
//! state's JSON; the HMAC-SHA256 (hex) of the state key the header names covers the JSON's
//! bytes exactly as stored. A state read back is checked against it before a byte of the
//! JSON is parsed.

use std::collections::BTreeSet;

use hmac::Mac;

use super::deferred::{
    CallStatus, Decisions, ResumeError, RunState, StateKey, Verdict, ledger_key, unhex,
};
use super::{Agent, AgentEvent, AgentOutput};
use crate::digest::hex;
use crate::runtime::{ToolInvocationContext, ToolInvocationRecord};
use crate::store::{AuditEntry, Decided, RunKey, StoreError, StoredRun, WaitingCall};

/// What the header line of a stored state starts with.
const MAGIC: &str = "tool-runtime-state/1";

/// The longest header line read: the magic, a key id and an HMAC, with room to spare.
const MAX_HEADER: usize = 128;

pub(super) use crate::store::now_ms;

/// The bytes a store keeps for `state`, sealed with `key`: the header line, then the JSON.
fn seal_bytes(state: &RunState, key: &StateKey) -> Vec<u8> {
    // A state is JSON values and strings under string keys: it always serialises.
    let json = serde_json::to_vec(state).unwrap_or_default();
    let mac = hex(&key.mac(&json).finalize().into_bytes());
    let mut bytes = format!("{MAGIC} {} {mac}\n", key.id()).into_bytes();
    bytes.extend_from_slice(&json);
    bytes
}

/// The state in the stored `bytes` of the run at `run`, checked against the key its header
/// names (one of `keys`) before its JSON is parsed.
fn open_bytes(bytes: &[u8], keys: &[StateKey], run: &RunKey) -> Result<RunState, ResumeError> {
    let end = bytes.iter().take(MAX_HEADER).position(|byte| *byte == b'\n');
    let end = end.ok_or(ResumeError::Forged)?;
    let header = std::str::from_utf8(&bytes[..end]).map_err(|_| ResumeError::Forged)?;
    let json = &bytes[end + 1..];
    let mut fields = header.split(' ');
    let (Some(MAGIC), Some(key_id), Some(mac), None) =
        (fields.next(), fields.next(), fields.next(), fields.next())
    else {
        return Err(ResumeError::Forged);
    };
    let key = keys.iter().find(|key| key.id() == key_id);
    let key = key.ok_or_else(|| ResumeError::UnknownKey { key_id: key_id.to_owned() })?;
    let mac = unhex(mac).ok_or(ResumeError::Forged)?;
    key.mac(json).verify_slice(&mac).map_err(|_| ResumeError::Forged)?;
    serde_json::from_slice(json).map_err(|error| {
        ResumeError::Store(StoreError::Backend {
            context: format!("reading the state of {run}"),
            message: error.to_string(),
        })
    })
}

impl Agent {
    /// The keys a state may be sealed with: the agent's, then the retired ones.
    pub(super) fn state_keys(&self) -> Result<Vec<StateKey>, ResumeError> {
        let key = self.key.as_ref().ok_or(ResumeError::NoKey)?;
        Ok(std::iter::once(key).chain(&self.retired).cloned().collect())
    }

    /// With a store: appends the audit entries of the calls of this run (or resume), those
    /// that ended and those that wait (`waited`), a failure to `output.audit_error`; then saves
    /// the state of a run that stops waiting, or, for a run that was `resumed` and ended,
    /// marks it ended, a failure to `output.store_error`.
    pub(super) async fn keep(
        &self,
        output: &mut AgentOutput,
        waited: &[ToolInvocationRecord],
        ctx: &ToolInvocationContext,
        resumed: bool,
    ) {
        let Some(store) = &self.store else { return };
        let key = RunKey::new(ctx.tenant_id(), ctx.run_id());
        let entries = if self.config.audit {
            self.audit_entries(output.done.records.iter().chain(waited), ctx, &key)
        } else {
            Vec::new()
        };
        if !entries.is_empty() {
            output.audit_error = store.append_audit(&entries).await.err();
        }
        let kept = match &output.state {
            Some(state) => match self.stored(state, key) {
                Ok(run) => store.save(run).await,
                Err(error) => Err(error),
            },
            None if resumed => store.end_run(&key, now_ms()).await,
            None => Ok(()),
        };
        output.store_error = kept.err();
    }

    /// The audit entries of `records`, calls of a run of `ctx` at `key`.
    fn audit_entries<'r>(
        &self,
        records: impl Iterator<Item = &'r ToolInvocationRecord>,
        ctx: &ToolInvocationContext,
        key: &RunKey,
    ) -> Vec<AuditEntry> {
        let ttl = u64::try_from(self.config.audit_ttl.as_millis()).unwrap_or(u64::MAX);
        records.map(|record| AuditEntry::of(key.clone(), ctx.actor_id(), record, ttl)).collect()
    }

    /// `state` as the store keeps it, under `key`.
    fn stored(&self, state: &RunState, key: RunKey) -> Result<StoredRun, StoreError> {
        let Some(state_key) = &self.key else {
            return Err(StoreError::Backend {
                context: format!("saving {key}"),
                message: "the agent has no state key (`Agent::with_state_key`): an unsealed \
                          state is never resumed, so it is not stored"
                    .into(),
            });
        };
        let bytes = seal_bytes(state, state_key);
        let limit = self.config.max_state_bytes;
        if bytes.len() > limit {
            return Err(StoreError::TooLarge { key, bytes: bytes.len(), limit });
        }
        let waiting = state
            .waiting()
            .filter_map(|call| match &call.status {
                CallStatus::Waiting { waits_for, .. } => Some(WaitingCall {
                    call_id: call.id.clone(),
                    tool_name: call.tool_name.clone(),
                    waits_for: *waits_for,
                }),
                _ => None,
            })
            .collect();
        let ttl = u64::try_from(self.config.state_ttl.as_millis()).unwrap_or(u64::MAX);
        let revision = state.seal().unwrap_or_default().to_owned();
        Ok(StoredRun::new(key, state.actor_id(), waiting, bytes, revision, now_ms(), ttl))
    }

    /// The stored run of the caller of `ctx` and its state, read back from the agent's store:
    /// its size and seal are checked before it is parsed.
    async fn load_stored(
        &self,
        ctx: &ToolInvocationContext,
    ) -> Result<(StoredRun, RunState), ResumeError> {
        let keys = self.state_keys()?;
        let store = self.store.as_ref().ok_or(ResumeError::NoStore)?;
        let key = RunKey::new(ctx.tenant_id(), ctx.run_id());
        let stored = store.load(&key).await.map_err(ResumeError::Store)?;
        let stored = stored.ok_or(ResumeError::Store(StoreError::NotFound { key }))?;
        let limit = self.config.max_state_bytes;
        if stored.state.len() > limit {
            let (key, bytes) = (stored.key.clone(), stored.state.len());
            return Err(ResumeError::Store(StoreError::TooLarge { key, bytes, limit }));
        }
        let state = open_bytes(&stored.state, &keys, &stored.key)?;
        Ok((stored, state))
    }

    /// The state the agent's [store](Self::with_store) holds for the run of `ctx` (its tenant
    /// and run id), to show what it waits for or to [`resume`](Self::resume) it: read back,
    /// its size and seal checked before it is parsed.
    ///
    /// # Errors
    ///
    /// [`ResumeError::NoKey`], [`ResumeError::NoStore`]; [`ResumeError::Store`] for a run not
    /// stored ([`StoreError::NotFound`]), a state over
    /// [`max_state_bytes`](super::AgentConfig::max_state_bytes) or that does not decode, or a
    /// store that fails; [`ResumeError::UnknownKey`] or [`ResumeError::Forged`] for a state
    /// sealed with a key the agent does not hold or changed in the store.
    pub async fn load(&self, ctx: &ToolInvocationContext) -> Result<RunState, ResumeError> {
        self.load_stored(ctx).await.map(|(_, state)| state)
    }

    /// [`load`](Self::load)s the run of `ctx` from the agent's store and
    /// [`resume`](Self::resume)s it with `decisions`: what a request that carries decisions
    /// for a run id does. A replay, once the run ended, is refused as
    /// [`AlreadyResumed`](ResumeError::AlreadyResumed) as a replay of its state is (for the
    /// calls the store finds spent under their ids).
    ///
    /// # Errors
    ///
    /// As [`load`](Self::load) and [`resume`](Self::resume).
    pub async fn resume_stored(
        &self,
        decisions: Decisions,
        ctx: &ToolInvocationContext,
        on_event: &(dyn Fn(AgentEvent) + Send + Sync),
    ) -> Result<AgentOutput, ResumeError> {
        let state = match self.load(ctx).await {
            Err(ResumeError::Store(StoreError::NotFound { key })) => {
                return Err(self.gone(key, &decisions).await);
            }
            loaded => loaded?,
        };
        self.resume(state, decisions, ctx, on_event).await
    }

    /// Why decisions for the run at `key`, which the store does not hold, are refused: calls
    /// of it spent before (a replay after the run ended, whose ledger stays), or it is not
    /// there.
    async fn gone(&self, key: RunKey, decisions: &Decisions) -> ResumeError {
        let Some(store) = &self.store else { return ResumeError::NoStore };
        let call_ids: Vec<String> = decisions.ids().cloned().collect();
        match store.spent(&key, &call_ids).await {
            Ok(spent) if !spent.is_empty() => ResumeError::AlreadyResumed { call_ids: spent },
            Ok(_) => ResumeError::Store(StoreError::NotFound { key }),
            Err(error) => ResumeError::Store(error),
        }
    }

    /// Takes over the run of `ctx` from a resume that spent calls and will never end them:
    /// its process died between spending and saving (the store lists those calls as
    /// [unfinished](crate::store::RunStore::unfinished), and the run as
    /// [resuming](crate::store::RunSummary::resuming_since_ms)). An operator decides each of
    /// those calls anew: [`approve`](Decisions::approve) (or edit, supply, answer) runs it
    /// again, [`deny`](Decisions::deny) marks it failed (the model gets an `approval_denied`
    /// error with the message). The new decisions are recorded in the store, then the run goes
    /// on as a resume does. Two operators taking one run over: one does, the other gets
    /// [`StoreError::Moved`].
    ///
    /// `ctx` names the run's tenant, run and actor: an operator acts for the run's actor (the
    /// inbox's [`RunSummary::actor_id`](crate::store::RunSummary::actor_id)). Whether a call
    /// spent by a resume that died had run (in part) before it died, the store cannot know:
    /// look at what the tool did before running it again.
    ///
    /// # Errors
    ///
    /// As [`load`](Self::load); [`ResumeError::Store`] with [`StoreError::Moved`] for a run no
    /// resume holds; [`ResumeError::Undecided`] for a spent call left without a decision,
    /// [`ResumeError::NotWaiting`] for a decision on a call the resume did not spend; the
    /// checks of [`resume`](Self::resume). Then nothing ran.
    pub async fn take_over(
        &self,
        decisions: Decisions,
        ctx: &ToolInvocationContext,
        on_event: &(dyn Fn(AgentEvent) + Send + Sync),
    ) -> Result<AgentOutput, ResumeError> {
        let (stored, state) = self.load_stored(ctx).await?;
        let store = self.check_state(&state, ctx)?;
        decisions.check(&state)?;
        let key = stored.key;
        let since_ms = stored
            .resuming_since_ms
            .ok_or_else(|| ResumeError::Store(StoreError::Moved { key: key.clone() }))?;
        let unfinished = store.unfinished(&key.tenant_id).await.map_err(ResumeError::Store)?;
        let spent: BTreeSet<String> = unfinished
            .into_iter()
            .filter(|call| call.key == key)
            .map(|call| call.call_key)
            .collect();
        let not_spent: Vec<String> = decisions
            .ids()
            .filter(|id| !spent.contains(&ledger_key(&state, id)))
            .cloned()
            .collect();
        if !not_spent.is_empty() {
            return Err(ResumeError::NotWaiting { call_ids: not_spent });
        }
        let undecided: Vec<String> = state
            .waiting()
            .filter(|call| {
                spent.contains(&ledger_key(&state, &call.id)) && decisions.get(&call.id).is_none()
            })
            .map(|call| call.id.clone())
            .collect();
        if !undecided.is_empty() || decisions.is_empty() {
            return Err(ResumeError::Undecided { call_ids: undecided });
        }
        let decided: Vec<Decided> = decisions
            .iter()
            .map(|(id, decision)| {
                Decided::new(ledger_key(&state, id), Verdict::of(decision).label())
            })
            .collect();
        store.take_over(&key, since_ms, &decided, now_ms()).await.map_err(ResumeError::Store)?;
        let (mut output, waited) = self.decide(state, decisions, ctx, on_event).await;
        self.keep(&mut output, &waited, ctx, true).await;
        Ok(output)
    }
}
