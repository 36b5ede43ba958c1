//! Recorded-style provider streams of one tool call with large arguments, for the streaming
//! decoder benchmarks.
//!
//! OpenAI Chat Completions, OpenAI Responses and Anthropic stream a call's arguments as text
//! deltas: the arguments are cut into deltas of the given size, one event each, as a model
//! producing that many bytes per event would send them, and the bytes arrive in 4 KiB reads.
//! Gemini and Ollama send a call's arguments whole, as a JSON object inside one event: there the
//! delta size is the size of the network reads the stream arrives in.

use serde_json::{Value, json};
use tool_runtime::adapters::Provider;

/// The size of a network read for providers that stream argument deltas.
pub const READ_SIZE: usize = 4096;

/// The tool name every stream calls.
pub const TOOL_NAME: &str = "bench__ingest";

/// Arguments of about `target` bytes (at least 64): an object holding an array of records
/// with strings, numbers, escapes and non-ASCII text, compact JSON.
#[must_use]
pub fn arguments(target: usize) -> String {
    let mut records = Vec::new();
    let mut size = 16;
    let mut n = 0u64;
    while size < target.max(64) {
        let record = json!({
            "id": n,
            "title": format!("record {n}"),
            "body": "lorem ipsum dolor sit amet, \"quoted\"\tcaf\u{e9}\n",
            "score": 0.25 + f64::from(u32::try_from(n % 100).unwrap_or(0)),
        });
        size += record.to_string().len() + 1;
        records.push(record);
        n += 1;
    }
    json!({ "records": records }).to_string()
}

/// `text` cut into pieces of at most `size` bytes, on character boundaries.
fn deltas(text: &str, size: usize) -> Vec<&str> {
    let mut out = Vec::with_capacity(text.len() / size.max(1) + 1);
    let mut rest = text;
    while !rest.is_empty() {
        let mut end = size.max(1).min(rest.len());
        while !rest.is_char_boundary(end) {
            end += 1;
        }
        let (piece, tail) = rest.split_at(end);
        out.push(piece);
        rest = tail;
    }
    out
}

/// One provider's stream of one call of [`TOOL_NAME`] with `args`.
#[derive(Debug, Clone)]
pub struct Stream {
    /// The provider.
    pub provider: Provider,
    /// The bytes on the wire.
    pub wire: Vec<u8>,
    /// The size of the reads `wire` is fed in.
    pub read_size: usize,
    /// How many bytes of arguments the stream carries.
    pub argument_bytes: usize,
}

impl Stream {
    /// `wire` cut into the reads a network delivers.
    pub fn reads(&self) -> std::slice::Chunks<'_, u8> {
        self.wire.chunks(self.read_size)
    }
}

fn sse(out: &mut String, event: Option<&str>, data: &Value) {
    if let Some(event) = event {
        out.push_str("event: ");
        out.push_str(event);
        out.push('\n');
    }
    out.push_str("data: ");
    out.push_str(&data.to_string());
    out.push_str("\n\n");
}

/// The stream `provider` sends for one call whose arguments are `args`, cut into `delta`-byte
/// deltas (or reads, for providers that send arguments whole).
///
/// # Panics
///
/// When `args` is not JSON (they are always made by [`arguments`]).
#[must_use]
pub fn stream(provider: Provider, args: &str, delta: usize) -> Stream {
    let mut out = String::new();
    let mut read_size = READ_SIZE;
    match provider {
        Provider::OpenAiChat => {
            let chunk = |delta: Value, finish: Value| {
                json!({"id": "chatcmpl-bench", "object": "chat.completion.chunk", "created": 0,
                    "model": "bench", "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]})
            };
            let first = json!({"role": "assistant", "tool_calls": [{"index": 0, "id": "call_1",
                "type": "function", "function": {"name": TOOL_NAME, "arguments": ""}}]});
            sse(&mut out, None, &chunk(first, Value::Null));
            for piece in deltas(args, delta) {
                let delta = json!({"tool_calls": [{"index": 0, "function": {"arguments": piece}}]});
                sse(&mut out, None, &chunk(delta, Value::Null));
            }
            sse(&mut out, None, &chunk(json!({}), json!("tool_calls")));
            out.push_str("data: [DONE]\n\n");
        }
        Provider::OpenAiResponses => {
            let item = |status: &str, arguments: &str| {
                json!({"id": "fc_1", "type": "function_call", "status": status,
                    "arguments": arguments, "call_id": "call_1", "name": TOOL_NAME})
            };
            let head = json!({"id": "resp_1", "object": "response", "status": "in_progress",
                "model": "bench", "output": []});
            sse(
                &mut out,
                Some("response.created"),
                &json!({"type": "response.created", "response": head}),
            );
            sse(
                &mut out,
                Some("response.output_item.added"),
                &json!({"type": "response.output_item.added", "output_index": 0,
                    "item": item("in_progress", "")}),
            );
            for piece in deltas(args, delta) {
                sse(
                    &mut out,
                    Some("response.function_call_arguments.delta"),
                    &json!({"type": "response.function_call_arguments.delta", "item_id": "fc_1",
                        "output_index": 0, "delta": piece}),
                );
            }
            sse(
                &mut out,
                Some("response.function_call_arguments.done"),
                &json!({"type": "response.function_call_arguments.done", "item_id": "fc_1",
                    "output_index": 0, "arguments": args}),
            );
            sse(
                &mut out,
                Some("response.output_item.done"),
                &json!({"type": "response.output_item.done", "output_index": 0,
                    "item": item("completed", args)}),
            );
            let done = json!({"id": "resp_1", "object": "response", "status": "completed",
                "model": "bench", "output": [item("completed", args)]});
            sse(
                &mut out,
                Some("response.completed"),
                &json!({"type": "response.completed", "response": done}),
            );
        }
        Provider::Anthropic => {
            sse(
                &mut out,
                Some("message_start"),
                &json!({"type": "message_start", "message": {"id": "msg_1", "type": "message",
                    "role": "assistant", "model": "bench", "content": [], "stop_reason": null,
                    "usage": {"input_tokens": 1, "output_tokens": 1}}}),
            );
            sse(
                &mut out,
                Some("content_block_start"),
                &json!({"type": "content_block_start", "index": 0, "content_block": {
                    "type": "tool_use", "id": "toolu_1", "name": TOOL_NAME, "input": {}}}),
            );
            for piece in deltas(args, delta) {
                sse(
                    &mut out,
                    Some("content_block_delta"),
                    &json!({"type": "content_block_delta", "index": 0,
                        "delta": {"type": "input_json_delta", "partial_json": piece}}),
                );
            }
            sse(
                &mut out,
                Some("content_block_stop"),
                &json!({"type": "content_block_stop", "index": 0}),
            );
            sse(
                &mut out,
                Some("message_delta"),
                &json!({"type": "message_delta", "delta": {"stop_reason": "tool_use",
                    "stop_sequence": null}, "usage": {"output_tokens": 1}}),
            );
            sse(&mut out, Some("message_stop"), &json!({"type": "message_stop"}));
        }
        Provider::Gemini => {
            let args: Value = serde_json::from_str(args).expect("arguments are JSON");
            sse(
                &mut out,
                None,
                &json!({"candidates": [{"content": {"parts": [{"functionCall": {
                    "name": TOOL_NAME, "args": args}}], "role": "model"}, "index": 0,
                    "finishReason": "STOP"}], "modelVersion": "bench"}),
            );
            read_size = delta.max(1);
        }
        Provider::Ollama => {
            let args: Value = serde_json::from_str(args).expect("arguments are JSON");
            let call = json!({"model": "bench", "created_at": "2026-01-01T00:00:00Z",
                "message": {"role": "assistant", "content": "", "tool_calls": [
                    {"function": {"index": 0, "name": TOOL_NAME, "arguments": args}}]},
                "done": false});
            let done = json!({"model": "bench", "created_at": "2026-01-01T00:00:00Z",
                "message": {"role": "assistant", "content": ""}, "done": true,
                "done_reason": "stop"});
            out.push_str(&call.to_string());
            out.push('\n');
            out.push_str(&done.to_string());
            out.push('\n');
            read_size = delta.max(1);
        }
    }
    Stream { provider, wire: out.into_bytes(), read_size, argument_bytes: args.len() }
}
