//! How often a 1 MB image is copied between the tool and the wire, counted with
//! `allocation-counter` (a counting global allocator, per thread): `exec` copies
//! none of its bytes, each provider's result encoder writes its base64 once (one allocation at
//! its final size), and the request body takes that text once more, in one buffer.

use std::hint::black_box;

use serde_json::json;
use tool_runtime::adapters::{
    Message, ModelRequest, Provider, RequestOptions, ToolCall, ToolChoice, ToolResult,
};
use tool_runtime::catalog::ToolCatalog;
use tool_runtime::content::{Bytes, Content};
use tool_runtime::policy::ToolPolicy;
use tool_runtime::prelude::*;
use tool_runtime::runner::ToolRunner;

const IMAGE_BYTES: usize = 1_000_000;
/// Base64 of the megabyte, with padding.
const ENCODED: usize = IMAGE_BYTES.div_ceil(3) * 4;
/// Room for everything that is not the image (ids, keys, small strings).
const SMALL: u64 = 16 * 1024;

/// A PNG header of 1024 x 1024 pixels, then filler: the runner reads only an image's header.
static IMAGE: [u8; IMAGE_BYTES] = {
    let mut image = [0x5a; IMAGE_BYTES];
    let header = *b"\x89PNG\r\n\x1a\n\0\0\0\x0dIHDR\0\0\x04\0\0\0\x04\0";
    let mut i = 0;
    while i < header.len() {
        image[i] = header[i];
        i += 1;
    }
    image
};

/// Take a screenshot.
#[tool(name = "media__screenshot", effect = read_only, redact = [])]
struct Screenshot {}

impl Tool for Screenshot {
    type Output = Content;

    async fn run(
        self,
        _: &ToolInvocationContext,
        _: &ToolCapabilities,
    ) -> Result<Content, ToolError> {
        Ok(Content::new().text("The page:").image("image/png", Bytes::from_static(&IMAGE)))
    }
}

#[test]
fn a_megabyte_image_is_encoded_once_and_written_once() {
    let rt = tokio::runtime::Builder::new_current_thread().enable_time().build().unwrap();
    let catalog = ToolCatalog::builder().register::<Screenshot>().build().unwrap();
    // A megabyte is over the default result budget (32 KiB).
    let policy = ToolPolicy::from_json(
        r#"{"allowed_tools": ["media__screenshot"], "budgets": {"max_result_bytes": 2000000}}"#,
    )
    .unwrap();
    let runner = ToolRunner::builder(catalog).policy(policy).build();
    let ctx = ToolInvocationContext::new(ContextIds {
        run_id: "run-1",
        actor_id: "user-1",
        tenant_id: "tenant-1",
    })
    .with_tool_call_id("call_1");
    assert!(rt.block_on(runner.exec("media__screenshot", &b"{}"[..], &ctx)).is_ok());

    // The runner: the image's bytes are shared, never copied.
    let mut executed = None;
    let info = allocation_counter::measure(|| {
        executed = Some(rt.block_on(runner.exec("media__screenshot", &b"{}"[..], &ctx)));
    });
    println!("exec: {} allocations, {} bytes", info.count_total, info.bytes_total);
    assert!(info.bytes_total < SMALL, "exec copied the image: {info:?}");
    let output = executed.unwrap().output().cloned().unwrap();

    let call = ToolCall::new("call_1", "media__screenshot", json!({}));
    let results = vec![ToolResult::ok(&call, output)];
    let messages = [Message::user("Look."), Message::ToolResults(results.clone())];
    let request =
        ModelRequest { messages: &messages, tools: &[], choice: &ToolChoice::auto(), search: None };
    let options = RequestOptions::new("model");
    for provider in Provider::ALL {
        let adapter = provider.adapter(false);
        // One large allocation: the base64 text, at its final size.
        let info = allocation_counter::measure(|| {
            black_box(adapter.result_messages(&results).unwrap());
        });
        println!(
            "{provider} result_messages: {} allocations, {} bytes",
            info.count_total, info.bytes_total
        );
        assert!(info.bytes_total >= ENCODED as u64, "{provider}: {info:?}");
        assert!(info.bytes_total < ENCODED as u64 + SMALL, "{provider}: {info:?}");

        // The body: the base64 text, then the body's own buffer, each allocated once.
        let info = allocation_counter::measure(|| {
            black_box(adapter.encode_body(&request, &options).unwrap());
        });
        println!(
            "{provider} encode_body: {} allocations, {} bytes",
            info.count_total, info.bytes_total
        );
        assert!(info.bytes_total < 2 * ENCODED as u64 + SMALL, "{provider}: {info:?}");
    }
}
