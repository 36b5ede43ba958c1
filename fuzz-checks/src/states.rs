//! Stored run states: what [`Agent::resume`] reads back from a file or a database, on
//! arbitrary bytes.
//!
//! A run that stops on calls that wait is written out as a [`RunState`] and read back later,
//! perhaps by another process: whatever sits in the store between the two is untrusted. The
//! input is offered as a state's JSON; one that parses is written again, verified, and resumed
//! by an agent (approving every call it says waits) that holds a key the input cannot know.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use tool_runtime::agent::deferred::{Decisions, ResumeError, RunState, StateKey};
use tool_runtime::agent::{Agent, ScriptedModel};
use tool_runtime::catalog::ToolCatalog;
use tool_runtime::runner::ToolRunner;
use tool_runtime::runtime::{ContextIds, ToolInvocationContext};
use tool_runtime::store::{InMemoryStore, RunKey, RunStore, StoredRun};

/// The key the check's agent seals and verifies with: no input can carry a seal it made.
const KEY: &[u8; 32] = b"the fuzz check's key, 32 bytes!!";

/// The input as the bytes a run store holds for a run is read back to a typed refusal (its
/// header and seal are checked before its JSON is parsed). A state that parses reads back the
/// same once written, never verifies under a key it was not sealed with, and resumes to a
/// typed refusal with nothing run: no model request, no event.
///
/// # Panics
///
/// When that does not hold, or when the runtime panics.
pub fn check(data: &[u8]) {
    stored(data);
    let Ok(state) = serde_json::from_slice::<RunState>(data) else { return };
    assert!(state.waiting().count() <= state.calls().len());
    let written = serde_json::to_vec(&state).expect("a state is written");
    let again: RunState = serde_json::from_slice(&written).expect("a written state reads back");
    assert_eq!(
        serde_json::to_value(&again).expect("a state is written"),
        serde_json::to_value(&state).expect("a state is written"),
    );
    let key = StateKey::new(*KEY);
    let verified = state.verify(&key);
    assert!(
        matches!(
            verified,
            Err(ResumeError::Forged
                | ResumeError::Unsealed
                | ResumeError::UnknownKey { .. }
                | ResumeError::UnsupportedFormat { .. })
        ),
        "{verified:?}"
    );
    let model = Arc::new(ScriptedModel::new([]));
    let catalog = ToolCatalog::builder().build().expect("an empty catalog");
    let agent = Agent::new(model.clone(), ToolRunner::builder(catalog).build())
        .with_state_key(key)
        .with_store(Arc::new(InMemoryStore::new()));
    let decisions = state
        .waiting()
        .fold(Decisions::new(), |decisions, call| decisions.approve(call.id.clone()));
    let ids = ContextIds {
        run_id: state.run_id(),
        actor_id: state.actor_id(),
        tenant_id: state.tenant_id(),
    };
    let ctx = ToolInvocationContext::new(ids);
    let events = AtomicUsize::new(0);
    let resumed = crate::block_on(agent.resume(state.clone(), decisions, &ctx, &|_| {
        events.fetch_add(1, Ordering::Relaxed);
    }));
    assert!(resumed.is_err(), "an unsealed or forged state resumed");
    assert!(model.requests().is_empty());
    assert_eq!(events.load(Ordering::Relaxed), 0);
}

/// `data` stored as a run's state bytes: loading it is refused, typed, whatever it holds.
fn stored(data: &[u8]) {
    let store = Arc::new(InMemoryStore::new());
    let key = RunKey::new("acme", "run-1");
    let run = StoredRun::new(key, "user-1", Vec::new(), data.to_vec(), "rev", 0, u64::MAX);
    crate::block_on(store.save(run)).expect("the in-memory store saves");
    let model = Arc::new(ScriptedModel::new([]));
    let catalog = ToolCatalog::builder().build().expect("an empty catalog");
    let agent = Agent::new(model, ToolRunner::builder(catalog).build())
        .with_state_key(StateKey::new(*KEY))
        .with_store(store);
    let ids = ContextIds { run_id: "run-1", actor_id: "user-1", tenant_id: "acme" };
    let loaded = crate::block_on(agent.load(&ToolInvocationContext::new(ids)));
    assert!(
        matches!(
            loaded,
            Err(ResumeError::Forged | ResumeError::UnknownKey { .. } | ResumeError::Store(_))
        ),
        "{loaded:?}"
    );
}
