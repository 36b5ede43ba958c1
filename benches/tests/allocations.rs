//! Spec access for a `#[tool]` type is a static reference: counted, it allocates nothing.
//! (`allocation-counter` installs a counting global allocator in this test binary only.)

use std::hint::black_box;

use tool_benches::tools::{Medium, Small};
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

#[test]
fn the_counter_counts() {
    let info = allocation_counter::measure(|| {
        black_box(Medium::spec().input_schema().to_json());
    });
    assert!(info.count_total > 0, "rendering a schema allocates, so the counter is live");
}

#[test]
fn exec_allocations() {
    let rt = tokio::runtime::Builder::new_current_thread().enable_time().build().unwrap();
    let runner = tool_benches::bench_runner();
    let ctx = ToolInvocationContext::new("run-1", "user-1", "tenant-1").with_tool_call_id("call_1");
    for (tool, args) in [
        ("bench__small", tool_benches::tools::SMALL_ARGS),
        ("bench__medium", tool_benches::tools::MEDIUM_ARGS),
    ] {
        rt.block_on(runner.exec(tool, args.as_bytes(), &ctx));
        let info = allocation_counter::measure(|| {
            black_box(rt.block_on(runner.exec(tool, args.as_bytes(), &ctx)));
        });
        println!("{tool}: {} allocations, {} bytes", info.count_total, info.bytes_total);
    }
    let info = allocation_counter::measure(|| {
        let args: Small = serde_json::from_str(tool_benches::tools::SMALL_ARGS).unwrap();
        black_box(serde_json::to_value(args.answer()).unwrap());
    });
    println!("baseline small: {} allocations", info.count_total);
    let info = allocation_counter::measure(|| {
        let args: Medium = serde_json::from_str(tool_benches::tools::MEDIUM_ARGS).unwrap();
        black_box(serde_json::to_value(args.answer()).unwrap());
    });
    println!("baseline medium: {} allocations", info.count_total);
}
