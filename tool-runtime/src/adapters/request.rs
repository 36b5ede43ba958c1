//! The canonical request: the conversation ([`Message`]), the tools and the tool choice
//! ([`ModelRequest`]), and the settings of one call ([`RequestOptions`]). Each [`Adapter`]
//! encodes the three into its provider's whole request body
//! ([`Adapter::encode_request`](super::Adapter::encode_request)).

use serde_json::{Map, Value, json};

use crate::spec::ToolSpec;

use super::Adapter;
use super::problem::EncodeError;
use super::types::{Decoded, ToolChoice, ToolResult};

/// One entry of a conversation, in provider-independent terms. Adapters turn these into their
/// provider's messages; the model's turns and the tool results keep the provider extras they
/// must echo. Also at `tool_runtime::agent::Message`.
///
/// ```
/// use tool_runtime::adapters::Message;
///
/// let conversation = [Message::system("Be brief."), Message::user("What time is it?")];
/// assert!(matches!(&conversation[1], Message::User(text) if text == "What time is it?"));
/// ```
///
/// A conversation is stored as JSON through `Serialize`/`Deserialize` in a stable,
/// provider-neutral form (see [`stored`](super::stored)), so it can wait between requests or
/// move to another process.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum Message {
    /// Instructions for the model.
    System(String),
    /// What the user said (or what the loop tells the model, such as that the tool-calling
    /// limit is reached).
    User(String),
    /// A turn of the model: its text and its calls.
    Assistant(Decoded),
    /// The results of the previous turn's calls, in the model's call order.
    ToolResults(Vec<ToolResult>),
}

impl Message {
    /// A system message.
    pub fn system(text: impl Into<String>) -> Self {
        Self::System(text.into())
    }

    /// A user message.
    pub fn user(text: impl Into<String>) -> Self {
        Self::User(text.into())
    }
}

/// What a model is asked: the conversation so far, the tools it may call and how. Also at
/// `tool_runtime::agent::ModelRequest`, where the agent loop hands it to a
/// [`ChatModel`](crate::agent::ChatModel).
///
/// ```
/// use tool_runtime::adapters::{Message, ModelRequest, ToolChoice};
///
/// let messages = [Message::user("Hello!")];
/// let request = ModelRequest { messages: &messages, tools: &[], choice: &ToolChoice::auto() };
/// assert_eq!(request.messages.len(), 1);
/// ```
#[derive(Debug, Clone, Copy)]
pub struct ModelRequest<'a> {
    /// The conversation, oldest first. System messages may stand anywhere; adapters whose
    /// provider takes instructions apart (Anthropic, Gemini, OpenAI Responses) join them.
    pub messages: &'a [Message],
    /// The tools the model may be shown (already filtered by policy). Decoding with them
    /// ([`Adapter::decode_for`](super::Adapter::decode_for),
    /// [`Adapter::stream_for`](super::Adapter::stream_for)) undoes what lowering changed.
    pub tools: &'a [&'a ToolSpec],
    /// Whether and which tools it must call.
    pub choice: &'a ToolChoice,
}

/// The settings of one request that are not conversation: the model, the output budget,
/// whether to stream, and extra body fields.
///
/// ```
/// use serde_json::json;
/// use tool_runtime::adapters::RequestOptions;
///
/// let options = RequestOptions::new("gpt-4o-mini")
///     .max_tokens(1024)
///     .extra("temperature", json!(0.2));
/// assert!(options.stream);
/// assert_eq!(options.extra["temperature"], json!(0.2));
/// ```
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct RequestOptions {
    /// The model's name (Gemini takes it in the URL, not the body, and ignores this).
    pub model: String,
    /// The most tokens the turn may write; `None` keeps the provider's default (Anthropic,
    /// which requires a value, then gets 4096).
    pub max_tokens: Option<u32>,
    /// Whether to ask for a streamed response (default `true`; Gemini takes it in the URL).
    pub stream: bool,
    /// Whether a streamed OpenAI Chat Completions response should end with a usage chunk
    /// (`stream_options`; default `true`). Turn it off for a server that refuses it; other
    /// providers report usage unasked.
    pub stream_usage: bool,
    /// Fields added to the body (`temperature`, `seed`, `thinking`). The adapter's own fields
    /// win over these, except that an object the adapter extends (Gemini's
    /// `generationConfig`, Ollama's `options`) keeps the entries given here.
    pub extra: Map<String, Value>,
}

impl RequestOptions {
    /// Streamed, with a usage report, the provider's default output budget, no extra fields.
    pub fn new(model: impl Into<String>) -> Self {
        Self {
            model: model.into(),
            max_tokens: None,
            stream: true,
            stream_usage: true,
            extra: Map::new(),
        }
    }

    /// The most tokens the turn may write.
    #[must_use]
    pub fn max_tokens(self, max_tokens: u32) -> Self {
        Self { max_tokens: Some(max_tokens), ..self }
    }

    /// Whether to stream.
    #[must_use]
    pub fn stream(self, stream: bool) -> Self {
        Self { stream, ..self }
    }

    /// Whether to ask for a usage report at the end of an OpenAI Chat Completions stream.
    #[must_use]
    pub fn stream_usage(self, stream_usage: bool) -> Self {
        Self { stream_usage, ..self }
    }

    /// A field added to the body.
    #[must_use]
    pub fn extra(mut self, name: impl Into<String>, value: Value) -> Self {
        self.extra.insert(name.into(), value);
        self
    }
}

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
/// shape (OpenAI Chat Completions, Ollama): system and user messages as text, the model's turns
/// and the results as `adapter` encodes them.
pub(crate) fn role_messages(
    adapter: &dyn Adapter,
    messages: &[Message],
) -> Result<Vec<Value>, EncodeError> {
    let mut out = Vec::with_capacity(messages.len());
    for message in messages {
        match message {
            Message::System(text) => out.push(json!({"role": "system", "content": text})),
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

/// Which search tool a provider runs over deferred tool definitions.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ToolSearch {
    /// Anthropic's natural-language search, `tool_search_tool_bm25_20251119`.
    Bm25,
    /// Anthropic's regular-expression search, `tool_search_tool_regex_20251119`.
    Regex,
    /// OpenAI Responses' hosted `tool_search` tool.
    Hosted,
}

/// Provider-native deferred loading: every tool of a request is sent with
/// `"defer_loading": true` (the model sees its name and what the search tool reveals, not its
/// schema) except the eager ones, and the provider's search tool is added in front. The model
/// then searches and the provider loads what it finds: Anthropic answers with `tool_reference`
/// blocks, OpenAI with `tool_search_output` items ([`Decoded::tool_references`]).
///
/// - Anthropic, with [`ToolSearch::Bm25`] or [`ToolSearch::Regex`]
///   (<https://docs.anthropic.com/en/docs/agents-and-tools/tool-use/tool-search-tool>; the
///   request needs the `anthropic-beta: advanced-tool-use-2025-11-20` header while the tool is
///   in beta).
/// - OpenAI Responses, with [`ToolSearch::Hosted`]
///   (<https://developers.openai.com/api/docs/guides/tools-tool-search>).
///
/// Any other pairing is an [`EncodeError::Unsupported`] when the tools are encoded.
///
/// ```
/// use serde_json::json;
/// use tool_runtime::adapters::{Adapter, Anthropic, DeferLoading, ToolSearch};
/// use tool_runtime::prelude::*;
///
/// /// Tell the time.
/// #[tool(name = "core__time", effect = read_only, redact = [])]
/// struct Time {}
/// /// Search the docs.
/// #[tool(name = "docs__search", effect = read_only, redact = [])]
/// struct Search { query: String }
/// # #[derive(Serialize, ToolSchema)] struct Done {}
/// # impl Tool for Time { type Output = Done; async fn run(self, _: &ToolInvocationContext, _: &ToolCapabilities) -> Result<Done, ToolError> { Ok(Done {}) } }
/// # impl Tool for Search { type Output = Done; async fn run(self, _: &ToolInvocationContext, _: &ToolCapabilities) -> Result<Done, ToolError> { Ok(Done {}) } }
///
/// let adapter = Anthropic::new().defer_loading(DeferLoading::new(ToolSearch::Bm25).eager(["core__time"]));
/// let (time, search) = (Time::spec(), Search::spec());
/// let tools = adapter.tools(&[&time, &search])?;
/// assert_eq!(tools[0], json!({"type": "tool_search_tool_bm25_20251119", "name": "tool_search_tool_bm25"}));
/// assert_eq!(tools[1].get("defer_loading"), None);
/// assert_eq!(tools[2]["defer_loading"], json!(true));
/// # Ok::<(), tool_runtime::adapters::EncodeError>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeferLoading {
    search: ToolSearch,
    eager: Vec<String>,
}

impl DeferLoading {
    /// Every tool deferred, found through `search`.
    #[must_use]
    pub fn new(search: ToolSearch) -> Self {
        Self { search, eager: Vec::new() }
    }

    /// These tools are sent whole, up front (the few every turn needs).
    #[must_use]
    pub fn eager<I, S>(mut self, names: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.eager.extend(names.into_iter().map(Into::into));
        self.eager.sort_unstable();
        self.eager.dedup();
        self
    }

    /// The search tool.
    #[must_use]
    pub fn search(&self) -> ToolSearch {
        self.search
    }

    /// Whether the tool named `name` is deferred.
    #[must_use]
    pub fn defers(&self, name: &str) -> bool {
        self.eager.binary_search_by(|eager| eager.as_str().cmp(name)).is_err()
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
