//! Serialising and restoring a resumable run state of 50 messages (issue 14): a conversation
//! of 49 text messages, then the model's turn whose state-changing call waits for approval. `serialise` is
//! `serde_json::to_vec`; `restore` reads it back and checks its HMAC seal, as
//! `Agent::resume` does first.

use std::hint::black_box;
use std::sync::Arc;

use criterion::{Criterion, criterion_group, criterion_main};
use tool_benches::{approval_runner, conversation};
use tool_runtime::agent::deferred::{RunState, StateKey};
use tool_runtime::agent::{Agent, ScriptedModel, ScriptedTurn, StopReason};
use tool_runtime::prelude::*;

const KEY: &[u8; 32] = b"bench key, 32 bytes long, really";

fn state() -> RunState {
    let runner = approval_runner();
    let model = ScriptedModel::new([ScriptedTurn::openai_calls(&[(
        "call_1",
        "tickets__close",
        r#"{"number": 7}"#,
    )])]);
    let agent = Agent::new(Arc::new(model), runner).with_state_key(StateKey::new(*KEY));
    let ctx = ToolInvocationContext::new(ContextIds {
        run_id: "run-1",
        actor_id: "user-1",
        tenant_id: "acme",
    });
    let runtime =
        tokio::runtime::Builder::new_current_thread().enable_all().build().expect("a runtime");
    let output = runtime.block_on(agent.run(conversation(), &ctx, &|_| {}));
    assert_eq!(output.done.stop, StopReason::Waiting { calls: vec!["call_1".into()] });
    let state = output.state.expect("a state");
    assert_eq!(state.messages().len(), 50);
    state
}

fn run_state(c: &mut Criterion) {
    let state = state();
    let key = StateKey::new(*KEY);
    let bytes = serde_json::to_vec(&state).expect("JSON");
    let mut group = c.benchmark_group("run_state_50_messages");
    group.bench_function("serialise", |b| {
        b.iter(|| serde_json::to_vec(black_box(&state)).expect("JSON"))
    });
    group.bench_function("restore", |b| {
        b.iter(|| {
            let restored: RunState = serde_json::from_slice(black_box(&bytes)).expect("a state");
            restored.verify(&key).expect("sealed");
            restored
        });
    });
    group.finish();
    println!("run state of 50 messages: {} bytes of JSON", bytes.len());
}

criterion_group!(benches, run_state);
criterion_main!(benches);
