//! Results that are content through `ToolRunner::exec`: 16 KiB of text, and a caption with a
//! 1 MB image (its header sniffed, its size checked against the budgets, its summary digested
//! for the result event), each against the bare work of building the same `Content`.

use std::hint::black_box;
use std::time::{Duration, Instant};

use criterion::{Criterion, criterion_group, criterion_main};
use tool_benches::results::{RESULT_ARGS, results_runner};
use tool_runtime::prelude::*;

fn results(c: &mut Criterion) {
    let rt =
        tokio::runtime::Builder::new_current_thread().enable_time().build().expect("a runtime");
    let runner = results_runner();
    let ctx = ToolInvocationContext::new(ContextIds {
        run_id: "run-1",
        actor_id: "user-1",
        tenant_id: "tenant-1",
    })
    .with_tool_call_id("call_1");
    let mut group = c.benchmark_group("results");
    for (name, tool) in [("text_16k", "bench__text"), ("image_1mb", "bench__image")] {
        let check = rt.block_on(runner.exec(tool, RESULT_ARGS, &ctx));
        assert!(check.is_ok(), "{tool}: {:?}", check.error());
        group.bench_function(format!("{name}/exec"), |b| {
            b.iter_custom(|iters| {
                rt.block_on(async {
                    let start = Instant::now();
                    for _ in 0..iters {
                        black_box(runner.exec(black_box(tool), black_box(RESULT_ARGS), &ctx).await);
                    }
                    start.elapsed()
                })
            });
        });
    }
    group.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default()
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(3))
        .sample_size(30);
    targets = results
}
criterion_main!(benches);
