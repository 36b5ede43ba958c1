//! Builders of OpenAI Chat Completions SSE bodies, written the way the API streams them: the
//! recordings a [`ScriptedModel`](crate::agent::ScriptedModel) replays in examples and tests.
//! Also at `tool_runtime::agent::openai_sse`.
//!
//! ```
//! use tool_runtime::adapters::{Adapter, OpenAiChat, openai_sse};
//!
//! let mut session = OpenAiChat::new().stream();
//! session.feed(&openai_sse::calls(&[("call_1", "math__add", r#"{"a": 2}"#)]));
//! let decoded = session.finish();
//! assert_eq!(decoded.calls[0].name, "math__add");
//! ```

use serde_json::{Value, json};

fn chunk(delta: &Value, finish: Option<&str>) -> String {
    let body = json!({
        "id": "chatcmpl-scripted",
        "object": "chat.completion.chunk",
        "created": 0,
        "model": "scripted",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
    });
    format!("data: {body}\n\n")
}

/// Splits `text` into up to three pieces on character boundaries.
fn pieces(text: &str) -> Vec<&str> {
    let bounds: Vec<usize> = text.char_indices().map(|(i, _)| i).collect();
    if bounds.len() < 3 {
        return vec![text];
    }
    let (a, b) = (bounds[bounds.len() / 3], bounds[2 * bounds.len() / 3]);
    vec![&text[..a], &text[a..b], &text[b..]]
}

/// The model writes `text` and stops.
#[must_use]
pub fn text(text: &str) -> Vec<u8> {
    let mut out = chunk(&json!({"role": "assistant", "content": ""}), None);
    for piece in text.split_inclusive(' ') {
        out.push_str(&chunk(&json!({"content": piece}), None));
    }
    out.push_str(&chunk(&json!({}), Some("stop")));
    out.push_str("data: [DONE]\n\n");
    out.into_bytes()
}

/// The model calls tools `(id, name, raw arguments)`; each call's id and name come in its
/// first fragment and its arguments in pieces after it.
#[must_use]
pub fn calls(calls: &[(&str, &str, &str)]) -> Vec<u8> {
    let mut out = chunk(&json!({"role": "assistant", "content": null}), None);
    for (index, (id, name, arguments)) in calls.iter().enumerate() {
        let first = json!({"tool_calls": [{"index": index, "id": id, "type": "function",
            "function": {"name": name, "arguments": ""}}]});
        out.push_str(&chunk(&first, None));
        for piece in pieces(arguments) {
            let delta = json!({"tool_calls": [{"index": index, "function": {"arguments": piece}}]});
            out.push_str(&chunk(&delta, None));
        }
    }
    out.push_str(&chunk(&json!({}), Some("tool_calls")));
    out.push_str("data: [DONE]\n\n");
    out.into_bytes()
}
