//! Result encoders: a text result and a result carrying a 1 MB PNG through each provider's
//! `result_messages`, and the whole request body around the image (`encode_body`). Baseline:
//! base64-encoding the megabyte alone, the least any encoder must do. Throughput is in bytes of
//! image.

use std::hint::black_box;
use std::time::Duration;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use serde_json::json;
use tool_runtime::adapters::{
    Decoded, Message, ModelRequest, Provider, RequestOptions, ToolCall, ToolChoice, ToolResult,
};
use tool_runtime::content::{Bytes, Content, IntoToolOutput};

const IMAGE_BYTES: usize = 1_000_000;

fn call() -> ToolCall {
    ToolCall::new("call_1", "media__screenshot", json!({}))
}

/// A result of one short text and a 1 MB PNG (the bytes shared, as a tool returns them).
fn image_result(image: &Bytes) -> ToolResult {
    let output = Content::new().text("The page:").image("image/png", image.clone()).into_output();
    ToolResult::ok(&call(), output.expect("serialisable"))
}

/// A result that is a 1 KB string output.
fn text_result() -> ToolResult {
    ToolResult::ok(&call(), json!("x".repeat(1024)))
}

/// The model's turn that made the call, as a decoder gives it.
fn turn(provider: Provider) -> Decoded {
    let body = match provider {
        Provider::OpenAiChat => json!({"choices": [{"index": 0, "message": {"role": "assistant",
            "tool_calls": [{"id": "call_1", "type": "function",
            "function": {"name": "media__screenshot", "arguments": "{}"}}]},
            "finish_reason": "tool_calls"}]}),
        Provider::OpenAiResponses => {
            json!({"status": "completed", "output": [{"type": "function_call",
            "call_id": "call_1", "name": "media__screenshot", "arguments": "{}"}]})
        }
        Provider::Anthropic => json!({"content": [{"type": "tool_use", "id": "call_1",
            "name": "media__screenshot", "input": {}}], "stop_reason": "tool_use"}),
        Provider::Gemini => json!({"candidates": [{"content": {"role": "model", "parts": [
            {"functionCall": {"name": "media__screenshot", "args": {}}}]}, "finishReason": "STOP"}]}),
        Provider::Ollama => json!({"message": {"role": "assistant", "content": "", "tool_calls": [
            {"function": {"name": "media__screenshot", "arguments": {}}}]}, "done": true}),
    };
    provider.adapter(false).decode(body.to_string().as_bytes()).expect("a response")
}

fn results(c: &mut Criterion) {
    let image = Bytes::from(vec![0x5a_u8; IMAGE_BYTES]);
    let options = RequestOptions::new("model");

    let mut group = c.benchmark_group("results/text");
    group.warm_up_time(Duration::from_millis(500)).measurement_time(Duration::from_secs(2));
    let text = [text_result()];
    for provider in Provider::ALL {
        let adapter = provider.adapter(false);
        group.bench_function(BenchmarkId::from_parameter(provider), |b| {
            b.iter(|| adapter.result_messages(black_box(&text)).expect("encodable"));
        });
    }
    group.finish();

    let mut group = c.benchmark_group("results/image_1MB");
    group
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(3))
        .sample_size(20)
        .throughput(Throughput::Bytes(IMAGE_BYTES as u64));
    group.bench_function("baseline", |b| b.iter(|| STANDARD.encode(black_box(&image[..]))));
    let results = [image_result(&image)];
    for provider in Provider::ALL {
        let adapter = provider.adapter(false);
        group.bench_function(BenchmarkId::from_parameter(provider), |b| {
            b.iter(|| adapter.result_messages(black_box(&results)).expect("encodable"));
        });
    }
    group.finish();

    let mut group = c.benchmark_group("results/body_image_1MB");
    group
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(3))
        .sample_size(20)
        .throughput(Throughput::Bytes(IMAGE_BYTES as u64));
    for provider in Provider::ALL {
        let adapter = provider.adapter(false);
        let messages = [
            Message::user("Look at the page."),
            Message::Assistant(turn(provider)),
            Message::ToolResults(vec![image_result(&image)]),
        ];
        let choice = ToolChoice::auto();
        let request =
            ModelRequest { messages: &messages, tools: &[], choice: &choice, search: None };
        group.bench_function(BenchmarkId::from_parameter(provider), |b| {
            b.iter(|| adapter.encode_body(black_box(&request), &options).expect("encodable"));
        });
    }
    group.finish();
}

criterion_group!(benches, results);
criterion_main!(benches);
