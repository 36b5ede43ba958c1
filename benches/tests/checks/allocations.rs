//! Spec access for a `#[tool]` type is a static reference: counted, it allocates nothing.
//! (`allocation-counter`: a counting global allocator, per thread.)

use std::hint::black_box;

use tool_benches::tools::{MEDIUM_ARGS, Medium, SMALL_ARGS, Small};
use tool_runtime::prelude::*;

#[test]
fn static_spec_access_allocates_nothing() {
    // Force any lazy initialisation the first access might do outside the measurement.
    let _ = (Small::spec().name(), Medium::spec().name());
    let info = allocation_counter::measure(|| {
        for _ in 0..1_000 {
            let spec: &'static ToolSpec = black_box(Medium::spec());
            black_box(spec.name());
            black_box(spec.description());
            black_box(spec.effect());
            black_box(spec.input_schema().as_static());
            black_box(spec.output_schema());
            black_box(spec.redaction().len());
            black_box(spec.requires_connection());
            black_box(spec.capabilities());
            black_box(Small::spec().name());
            black_box(<Medium as ToolSchema>::SCHEMA);
        }
    });
    assert_eq!(info.count_total, 0, "{info:?}");
    assert!(std::ptr::eq(Medium::spec(), Medium::spec()), "one static spec");
}

/// Validating arguments that match the schema allocates nothing: pointers and messages are
/// only built for errors, and a pattern's compiled regex is shared, not cloned.
#[test]
fn validating_valid_arguments_allocates_nothing() {
    let medium: serde_json::Value = serde_json::from_str(MEDIUM_ARGS).expect("JSON");
    let small: serde_json::Value = serde_json::from_str(SMALL_ARGS).expect("JSON");
    let validate = || {
        assert!(Medium::SCHEMA.validate(black_box(&medium)).is_ok());
        assert!(Small::SCHEMA.validate(black_box(&small)).is_ok());
    };
    // The first validations compile the pattern and fill this thread's regex search cache.
    allocation_counter::measure(|| (0..10).for_each(|_| validate()));
    let info = allocation_counter::measure(|| (0..100).for_each(|_| validate()));
    assert_eq!(info.count_total, 0, "{info:?}");
}

#[test]
fn the_counter_counts() {
    let info = allocation_counter::measure(|| {
        black_box(Medium::spec().input_schema().to_json());
    });
    assert!(info.count_total > 0, "rendering a schema allocates, so the counter is live");
}

/// Allocations of one `ToolRunner::exec` through the whole pipeline, a guard against
/// regressions (the counts are deterministic; the bounds leave a little room). For scale, the
/// bare baseline (`from_str` + `to_value`) makes 7 (small) and 100 (medium) allocations; the
/// pipeline makes 12 and 105 (the call's ids, a copy of the raw arguments for the record, the
/// typed arguments and the tool's future, boxed). Before the fixes recorded in BENCHMARKS.md:
/// 71 and 587, then 55 and 421, then 13 and 106.
#[test]
fn exec_allocations_stay_within_budget() {
    let rt = tokio::runtime::Builder::new_current_thread().enable_time().build().unwrap();
    let runner = tool_benches::bench_runner();
    let ctx = ToolInvocationContext::new(ContextIds {
        run_id: "run-1",
        actor_id: "user-1",
        tenant_id: "tenant-1",
    })
    .with_tool_call_id("call_1");
    let cases = [("bench__small", SMALL_ARGS, 14), ("bench__medium", MEDIUM_ARGS, 110)];
    for (tool, args, budget) in cases {
        assert!(rt.block_on(runner.exec(tool, args.as_bytes(), &ctx)).is_ok());
        let info = allocation_counter::measure(|| {
            black_box(rt.block_on(runner.exec(tool, args.as_bytes(), &ctx)));
        });
        assert!(info.count_total <= budget, "{tool}: {} allocations", info.count_total);
    }
}
