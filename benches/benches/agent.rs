//! The agent loop: a scripted session of six tool-calling iterations, four parallel calls
//! each (two of the small tool, two of the medium one), then the answer, under the default
//! `AgentConfig` (6 iterations, 4 concurrent calls). Baselines: the same 24 calls through
//! `ToolRunner::exec` directly (the tools themselves), and the same 7 model responses through
//! the decoders (the model's side).

use std::hint::black_box;
use std::sync::Arc;
use std::time::{Duration, Instant};

use criterion::{BatchSize, Criterion, criterion_group, criterion_main};
use tool_benches::bench_runner;
use tool_benches::tools::{MEDIUM_ARGS, SMALL_ARGS};
use tool_runtime::adapters::Provider;
use tool_runtime::agent::{Agent, Message, ScriptedModel, ScriptedTurn, StopReason};
use tool_runtime::prelude::*;

const ITERATIONS: usize = 6;
/// What the scripted model reads per `feed`: a network read, not the default 7 bytes.
const READ: usize = 4096;

/// `(id, tool, arguments)` of every call, turn by turn.
fn calls() -> Vec<Vec<(String, &'static str, String)>> {
    let medium = serde_json::to_string(
        &serde_json::from_str::<serde_json::Value>(MEDIUM_ARGS).expect("JSON"),
    )
    .expect("JSON");
    (0..ITERATIONS)
        .map(|turn| {
            (0..4)
                .map(|n| {
                    let id = format!("call_{turn}_{n}");
                    if n % 2 == 0 {
                        (id, "bench__small", SMALL_ARGS.to_owned())
                    } else {
                        (id, "bench__medium", medium.clone())
                    }
                })
                .collect()
        })
        .collect()
}

fn script(calls: &[Vec<(String, &'static str, String)>]) -> Vec<ScriptedTurn> {
    let mut turns: Vec<ScriptedTurn> = calls
        .iter()
        .map(|turn| {
            let refs: Vec<(&str, &str, &str)> =
                turn.iter().map(|(id, name, args)| (id.as_str(), *name, args.as_str())).collect();
            ScriptedTurn::openai_calls(&refs)
        })
        .collect();
    turns.push(ScriptedTurn::openai_text("All orders are recorded."));
    turns
}

fn agent(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_current_thread().enable_time().build().expect("runtime");
    let runner = bench_runner();
    let calls = calls();
    let turns = script(&calls);
    let ctx = ToolInvocationContext::new(ContextIds {
        run_id: "run-1",
        actor_id: "user-1",
        tenant_id: "tenant-1",
    });
    let session = |turns: Vec<ScriptedTurn>| {
        let model = ScriptedModel::new(turns).chunk_size(READ);
        let agent = Agent::new(Arc::new(model), runner.clone());
        let output =
            rt.block_on(agent.run(vec![Message::user("Record the orders.")], &ctx, &|_| {}));
        output.done
    };
    let done = session(turns.clone());
    assert_eq!(done.stop, StopReason::IterationLimit);
    assert_eq!(done.records.len(), ITERATIONS * 4);
    assert!(done.records.iter().all(|record| record.result.is_some()), "every call succeeds");

    let mut group = c.benchmark_group("agent/6x4");
    group.sample_size(30);
    group.bench_function("session", |b| {
        b.iter_batched(|| turns.clone(), &session, BatchSize::SmallInput)
    });
    // The tools themselves: the same calls through the runner, one after the other.
    group.bench_function("tools", |b| {
        b.iter_custom(|iters| {
            rt.block_on(async {
                let start = Instant::now();
                for _ in 0..iters {
                    for (id, name, args) in calls.iter().flatten() {
                        let call_ctx = ctx.clone().with_tool_call_id(id.clone());
                        black_box(runner.exec(name, args.as_bytes(), &call_ctx).await);
                    }
                }
                start.elapsed()
            })
        });
    });
    // The model's side: the same responses through the OpenAI decoder.
    let wires: Vec<Vec<u8>> = calls
        .iter()
        .map(|turn| {
            let refs: Vec<(&str, &str, &str)> =
                turn.iter().map(|(id, name, args)| (id.as_str(), *name, args.as_str())).collect();
            tool_runtime::agent::openai_sse::calls(&refs)
        })
        .chain([tool_runtime::agent::openai_sse::text("All orders are recorded.")])
        .collect();
    group.bench_function("decode", |b| {
        b.iter(|| {
            wires
                .iter()
                .map(|wire| {
                    let mut session = Provider::OpenAiChat.adapter(false).stream();
                    for read in wire.chunks(READ) {
                        black_box(session.feed(read));
                    }
                    session.finish().calls.len()
                })
                .sum::<usize>()
        });
    });
    group.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default()
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(3));
    targets = agent
}
criterion_main!(benches);
