//! Pieces every provider's request encoder shares: the system text, `{"role", "content"}`
//! messages, the body over the extra fields, nested fields, merged turns, serialisation at
//! the final size and deferred tool definitions.

use serde_json::{Map, Value, json};

use crate::conversation::{DeferLoading, Message, ModelRequest, RequestOptions};
use crate::spec::ToolSpec;

use super::Adapter;
use super::error::EncodeError;

/// The system messages of `messages`, joined by blank lines, if there are any.
pub(crate) fn system_text(messages: &[Message]) -> Option<String> {
    let parts: Vec<&str> = messages
        .iter()
        .filter_map(|message| match message {
            Message::System(text) => Some(text.as_str()),
            _ => None,
        })
        .collect();
    (!parts.is_empty()).then(|| parts.join("\n\n"))
}

/// The conversation as `{"role", "content"}` messages, for the providers that speak that
/// shape (OpenAI Chat Completions, Ollama): system and user messages as text (a notice as a
/// system message where it stands), the model's turns
/// and the results as `adapter` encodes them.
pub(crate) fn role_messages(
    adapter: &dyn Adapter,
    messages: &[Message],
) -> Result<Vec<Value>, EncodeError> {
    let mut out = Vec::with_capacity(messages.len());
    for message in messages {
        match message {
            Message::System(text) | Message::Notice(text) => {
                out.push(json!({"role": "system", "content": text}));
            }
            Message::User(text) => out.push(json!({"role": "user", "content": text})),
            Message::Assistant(decoded) => out.push(adapter.assistant_message(decoded)),
            Message::ToolResults(results) => out.extend(adapter.result_messages(results)?),
        }
    }
    Ok(out)
}

/// The body: the extra fields, then `fields` over them (in insertion order, an overwritten extra
/// field keeps its place).
pub(crate) fn body(options: &RequestOptions, fields: Map<String, Value>) -> Map<String, Value> {
    let mut body = options.extra.clone();
    body.extend(fields);
    body
}

/// Puts `key: value` into the object `name` of `body`, keeping what the extra fields put there.
pub(crate) fn insert_nested(body: &mut Map<String, Value>, name: &str, key: &str, value: Value) {
    match body.get_mut(name) {
        Some(Value::Object(object)) => {
            object.insert(key.to_owned(), value);
        }
        _ => {
            let mut object = Map::new();
            object.insert(key.to_owned(), value);
            body.insert(name.to_owned(), Value::Object(object));
        }
    }
}

/// Appends an encoded `{"role", key: [...]}` message (an adapter's assistant or result message)
/// with [`push_merged`]: merged into the last one of the same role, left out when empty.
pub(crate) fn append(out: &mut Vec<Value>, key: &str, mut message: Value) {
    let role = message.get("role").and_then(Value::as_str).unwrap_or("user").to_owned();
    let parts = match message.get_mut(key).map(Value::take) {
        Some(Value::Array(parts)) => parts,
        _ => Vec::new(),
    };
    push_merged(out, &role, key, parts);
}

/// Appends `parts` under `role` to `out` (`{"role", key: [...]}`), merged into the last entry
/// when it has the same role; nothing is appended for no parts (providers refuse empty
/// messages).
pub(crate) fn push_merged(out: &mut Vec<Value>, role: &str, key: &str, parts: Vec<Value>) {
    if parts.is_empty() {
        return;
    }
    if let Some(last) = out.last_mut()
        && last.get("role").and_then(Value::as_str) == Some(role)
        && let Some(Value::Array(existing)) = last.get_mut(key)
    {
        existing.extend(parts);
        return;
    }
    let mut message = Map::new();
    message.insert("role".to_owned(), Value::String(role.to_owned()));
    message.insert(key.to_owned(), Value::Array(parts));
    out.push(Value::Object(message));
}

/// `value` as JSON bytes, in a buffer allocated at (about) its final size.
pub(crate) fn to_bytes(value: &Value) -> Vec<u8> {
    let mut out = Vec::with_capacity(size_hint(value));
    match serde_json::to_writer(&mut out, value) {
        Ok(()) => out,
        // Unreachable (a `Value` has string keys, a `Vec` takes every write); the ordinary
        // path gives the same bytes.
        Err(_) => value.to_string().into_bytes(),
    }
}

/// About how many bytes `value` takes as JSON: exact for text without escapes, close for
/// numbers.
fn size_hint(value: &Value) -> usize {
    match value {
        Value::String(text) => text.len() + 2,
        Value::Array(items) => items.iter().map(|item| size_hint(item) + 1).sum::<usize>() + 2,
        Value::Object(map) => {
            map.iter().map(|(key, item)| key.len() + 4 + size_hint(item)).sum::<usize>() + 2
        }
        Value::Null | Value::Bool(_) | Value::Number(_) => 8,
    }
}

/// Marks a tool definition deferred when `defer` says so.
pub(crate) fn mark_deferred(defer: &DeferLoading, name: &str, tool: &mut Value) {
    if defer.defers(name)
        && let Value::Object(tool) = tool
    {
        tool.insert("defer_loading".to_owned(), Value::Bool(true));
    }
}

/// The tools to declare for a provider without a tool search form of its own: the search tool
/// of the request's [`ClientSearch`](crate::conversation::ClientSearch) first (a function like
/// the others, `search_tool`), then the request's tools (the found ones among them, appended
/// as they are found).
pub(crate) fn with_search_tool<'s>(
    search_tool: Option<&'s ToolSpec>,
    request: &ModelRequest<'s>,
) -> Vec<&'s ToolSpec> {
    search_tool.into_iter().chain(request.tools.iter().copied()).collect()
}
