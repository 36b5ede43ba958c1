//! A 1 MB image goes through `ToolRunner::exec` without a copy: the bytes the tool returns are
//! the bytes in the result (shared `Bytes`), and the call allocates far less than the image.
//! (`allocation-counter`: a counting global allocator, per thread.)

use std::hint::black_box;

use tool_benches::results::{IMAGE_BYTES, RESULT_ARGS, results_runner};
use tool_runtime::content::Part;
use tool_runtime::prelude::*;

#[test]
fn an_image_result_is_never_copied_by_exec() {
    let rt = tokio::runtime::Builder::new_current_thread().enable_time().build().unwrap();
    let runner = results_runner();
    let ctx = ToolInvocationContext::new(ContextIds { run_id: "r", actor_id: "a", tenant_id: "t" })
        .with_tool_call_id("call_1");
    let first = rt.block_on(runner.exec("bench__image", RESULT_ARGS, &ctx));
    let second = rt.block_on(runner.exec("bench__image", RESULT_ARGS, &ctx));
    let image =
        |result: &tool_runtime::runtime::ToolExecResult| match &result.output().unwrap().parts()[1]
        {
            Part::Image(media) => media.data.clone(),
            other => panic!("{other:?}"),
        };
    // Both calls hand on the one buffer the capability holds.
    assert_eq!(image(&first).len(), IMAGE_BYTES);
    assert_eq!(image(&first).as_ptr(), image(&second).as_ptr());

    let info = allocation_counter::measure(|| {
        black_box(rt.block_on(runner.exec("bench__image", RESULT_ARGS, &ctx)));
    });
    assert!(info.bytes_total < IMAGE_BYTES as u64 / 16, "{info:?}");
}
