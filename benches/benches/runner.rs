//! Runner overhead: `ToolRunner::exec` of a trivial tool through the whole pipeline (policy,
//! validation, run, output validation, redaction, events to a null sink) against the bare
//! baseline `serde_json::from_str::<Args>` + the tool's work + `serde_json::to_value(output)`;
//! `exec_with_events` is the same call with a sink that takes (and drops) every event, and
//! `exec_with_hooks` with one before-call hook that allows and one after-call hook that keeps.

use std::hint::black_box;
use std::time::{Duration, Instant};

use criterion::{Criterion, criterion_group, criterion_main};
use tool_benches::tools::{MEDIUM_ARGS, Medium, SMALL_ARGS, Small};
use tool_benches::{bench_runner, bench_runner_with_events, bench_runner_with_hooks};
use tool_runtime::prelude::*;
use tool_runtime::runner::ToolRunner;

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread().enable_time().build().expect("a runtime")
}

/// `iters` calls of `exec` inside one `block_on`, so the runtime's entry is not measured.
fn exec_loop(
    rt: &tokio::runtime::Runtime,
    runner: &ToolRunner,
    tool: &str,
    args: &str,
    ctx: &ToolInvocationContext,
    iters: u64,
) -> Duration {
    rt.block_on(async {
        let start = Instant::now();
        for _ in 0..iters {
            let result = runner.exec(black_box(tool), black_box(args.as_bytes()), ctx).await;
            debug_assert!(result.value().is_some());
            black_box(result);
        }
        start.elapsed()
    })
}

fn runner(c: &mut Criterion) {
    let rt = runtime();
    let runner = bench_runner();
    let with_events = bench_runner_with_events();
    let with_hooks = bench_runner_with_hooks();
    let ctx = ToolInvocationContext::new(ContextIds {
        run_id: "run-1",
        actor_id: "user-1",
        tenant_id: "tenant-1",
    })
    .with_tool_call_id("call_1");
    // Both paths must do the same work: check once that they succeed.
    let check = rt.block_on(runner.exec("bench__medium", MEDIUM_ARGS.as_bytes(), &ctx));
    assert!(check.value().is_some(), "{:?}", check.error_code());

    let mut group = c.benchmark_group("runner/small");
    group.bench_function("baseline", |b| {
        b.iter(|| {
            let args: Small = serde_json::from_str(black_box(SMALL_ARGS)).expect("valid");
            serde_json::to_value(args.answer()).expect("serialisable")
        });
    });
    group.bench_function("exec", |b| {
        b.iter_custom(|iters| exec_loop(&rt, &runner, "bench__small", SMALL_ARGS, &ctx, iters));
    });
    group.bench_function("exec_with_events", |b| {
        b.iter_custom(|iters| {
            exec_loop(&rt, &with_events, "bench__small", SMALL_ARGS, &ctx, iters)
        });
    });
    group.bench_function("exec_with_hooks", |b| {
        b.iter_custom(|iters| exec_loop(&rt, &with_hooks, "bench__small", SMALL_ARGS, &ctx, iters));
    });
    group.finish();

    let mut group = c.benchmark_group("runner/medium");
    group.bench_function("baseline", |b| {
        b.iter(|| {
            let args: Medium = serde_json::from_str(black_box(MEDIUM_ARGS)).expect("valid");
            serde_json::to_value(args.answer()).expect("serialisable")
        });
    });
    group.bench_function("exec", |b| {
        b.iter_custom(|iters| exec_loop(&rt, &runner, "bench__medium", MEDIUM_ARGS, &ctx, iters));
    });
    group.bench_function("exec_with_events", |b| {
        b.iter_custom(|iters| {
            exec_loop(&rt, &with_events, "bench__medium", MEDIUM_ARGS, &ctx, iters)
        });
    });
    group.bench_function("exec_with_hooks", |b| {
        b.iter_custom(|iters| {
            exec_loop(&rt, &with_hooks, "bench__medium", MEDIUM_ARGS, &ctx, iters)
        });
    });
    group.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default()
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(3))
        .sample_size(50);
    targets = runner
}
criterion_main!(benches);
