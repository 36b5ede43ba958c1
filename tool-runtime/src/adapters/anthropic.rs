//! Anthropic Messages (`POST /v1/messages`).
//!
//! - Definitions: `{"name", "description", "input_schema", "strict"}`; optional properties
//!   stay out of `required`. Choice: `tool_choice` = `{"type": "auto" | "any" | "none" |
//!   "tool", "name", "disable_parallel_tool_use"}`.
//! - Responses: `content[]` blocks; a call is `{type: "tool_use", id, name, input}` with
//!   `input` an object; `stop_reason` ends the turn.
//! - Streams: SSE events `message_start`, `content_block_start` / `_delta` / `_stop` (tool
//!   input arrives as `input_json_delta.partial_json`), `message_delta` (with `stop_reason`),
//!   `message_stop`, `ping`, `error`. Block indices are scoped to one message.
//! - Results: one `user` message with a `tool_result` block (`tool_use_id`, `content`,
//!   `is_error`) per result; `content` is text, or `text`, `image` and `document` blocks when
//!   the result carries images or files.
//! - Calls from code ([`Callers`]): a tool code may call carries `allowed_callers`
//!   (`["code_execution_20260120"]`, with `"direct"` first for [`Callers::Both`]) and brings
//!   the `code_execution_20260120` tool; its `tool_use` blocks carry `caller`, kept and sent
//!   back; server tool blocks (`server_tool_use`, `*_tool_result`) go back with the turn, and
//!   the latest response's `container` id is sent with the next request, as the API requires
//!   while calls made from code wait for their results.
//! - The application's tool search ([`ClientSearch`]): the search tool is a tool like the
//!   others, every deferred tool is declared with `"defer_loading": true`, and a search's
//!   `tool_result` holds a `tool_reference` block per tool found.

use std::collections::HashMap;

use serde_json::{Map, Value, json};

use crate::content::{Part, Resource, ResourceBody};
use crate::conversation::{
    CALLER, ChoiceMode, ClientSearch, Decoded, DeferLoading, Finish, FinishReason, Limit, Message,
    ModelRequest, Problem, ProviderError, RequestOptions, StreamEvent, TOOL_REFERENCES, ToolChoice,
    ToolOutcome, ToolResult, ToolSearch,
};
use crate::spec::{Callers, ToolSpec};

use super::Examples;
use super::assemble::{Core, DecodeOptions};
use super::budget::AnthropicStrictBudget;
use super::error::{DecodeError, EncodeError};
use super::framing::Frame;
use super::parts::{self, object};
use super::request;
use super::session::{Protocol, Session, StreamSession, body, count_at, payload, str_at};
use super::sse::SseParser;
use super::{Adapter, Provider, input_schema, lower, named_with};

/// The output budget of a request that sets none (the API requires one).
const MAX_TOKENS: u32 = 4096;

/// The key under which thinking blocks are kept in [`Decoded::extras`].
const THINKING: &str = "thinking_blocks";

/// The key under which server tool blocks (a tool search's or code execution's call and
/// result) are kept.
const SERVER_BLOCKS: &str = "server_tool_blocks";

/// The key under which a response's `container` (where code execution ran) is kept: the next
/// request names it, as Anthropic requires while calls made from code wait for results.
const CONTAINER: &str = "container";

/// The code execution tool that programmatic tool calling needs
/// (<https://platform.claude.com/docs/en/agents-and-tools/tool-use/programmatic-tool-calling>),
/// and the caller a tool names in `allowed_callers` to be callable from its code.
const CODE_EXECUTION: &str = "code_execution_20260120";

/// The Anthropic Messages adapter.
///
/// ```
/// use tool_runtime::adapters::{Adapter, Anthropic, FinishReason};
///
/// let decoded = Anthropic::new()
///     .decode(br#"{"type": "message", "role": "assistant", "content": [
///         {"type": "tool_use", "id": "toolu_1", "name": "core__get_current_time", "input": {}}],
///         "stop_reason": "tool_use"}"#)
///     .unwrap();
/// assert_eq!(decoded.finish.reason, FinishReason::ToolCalls);
/// assert!(decoded.calls[0].is_executable());
/// ```
#[derive(Debug, Clone, Default)]
pub struct Anthropic {
    strict: bool,
    input_examples: bool,
    decode: DecodeOptions,
    defer: Option<DeferLoading>,
}

impl Anthropic {
    /// Non-strict definitions, default decoding.
    #[must_use]
    pub fn new() -> Self {
        Self::default()
    }

    /// Strict tool use (`"strict": true`, constraints the grammar cannot carry moved into
    /// descriptions, request limits checked).
    #[must_use]
    pub fn strict(self, strict: bool) -> Self {
        Self { strict, ..self }
    }

    /// Sends a tool's [examples](crate::spec::ToolSpec::examples) as Anthropic's
    /// `input_examples` (a beta: the request needs the header
    /// `anthropic-beta: advanced-tool-use-2025-11-20`: `AnthropicMessages::builder()
    /// .header("anthropic-beta", "advanced-tool-use-2025-11-20")`) rather than at the end of
    /// the description, where they go by default.
    #[must_use]
    pub fn input_examples(self, input_examples: bool) -> Self {
        Self { input_examples, ..self }
    }

    /// How ids are minted and which tools were declared.
    #[must_use]
    pub fn decode_options(self, decode: DecodeOptions) -> Self {
        Self { decode, ..self }
    }

    /// Defers tool definitions behind Anthropic's tool search ([`ToolSearch::Bm25`] or
    /// [`ToolSearch::Regex`]); see [`DeferLoading`]. The search's `server_tool_use` and
    /// `tool_search_tool_result` blocks are kept to be sent back with the turn, and the tools
    /// it referenced are in [`Decoded::tool_references`].
    #[must_use]
    pub fn defer_loading(self, defer: DeferLoading) -> Self {
        Self { defer: Some(defer), ..self }
    }

    /// The tool fields of a request with the application's own tool search: the search tool,
    /// the request's tools that are not deferred, then every deferred tool with
    /// `"defer_loading": true` (those found load through the search's `tool_reference`
    /// blocks), so the array is the same on every turn.
    fn search_request(
        &self,
        request: &ModelRequest<'_>,
        search: ClientSearch<'_>,
    ) -> Result<Map<String, Value>, EncodeError> {
        if self.defer.is_some() {
            return Err(EncodeError::Unsupported {
                provider: Provider::Anthropic,
                feature: "the application's tool search beside Anthropic's (`defer_loading`)",
            });
        }
        let tool = search.tool();
        let mut specs = vec![&tool];
        specs.extend(search.not_deferred(request.tools));
        specs.extend(search.deferred.iter().copied());
        let mut fields = self.request(&specs, request.choice)?;
        if let Some(Value::Array(tools)) = fields.get_mut("tools") {
            let start = tools.len().saturating_sub(search.deferred.len());
            for tool in &mut tools[start..] {
                tool["defer_loading"] = Value::Bool(true);
            }
        }
        Ok(fields)
    }

    fn input_schema(&self, spec: &ToolSpec) -> Result<Map<String, Value>, EncodeError> {
        let schema = input_schema(spec, Provider::Anthropic)?;
        Ok(if self.strict { lower::anthropic_strict(&schema) } else { schema })
    }
}

impl Adapter for Anthropic {
    fn provider(&self) -> Provider {
        Provider::Anthropic
    }

    fn tool(&self, spec: &ToolSpec) -> Result<Value, EncodeError> {
        let input_schema = Value::Object(self.input_schema(spec)?);
        let examples = if self.input_examples { Examples::Field } else { Examples::InDescription };
        let mut tool = named_with(spec, examples, [("input_schema", input_schema)]);
        if self.strict {
            tool.insert("strict".to_owned(), Value::Bool(true));
        }
        if self.input_examples && !spec.examples().is_empty() {
            tool.insert("input_examples".to_owned(), Value::Array(spec.examples().to_vec()));
        }
        let callers = match spec.callers() {
            Callers::Direct => None,
            Callers::Programmatic => Some(json!([CODE_EXECUTION])),
            Callers::Both => Some(json!(["direct", CODE_EXECUTION])),
        };
        if let Some(callers) = callers {
            tool.insert("allowed_callers".to_owned(), callers);
        }
        Ok(Value::Object(tool))
    }

    fn tools(&self, specs: &[&ToolSpec]) -> Result<Value, EncodeError> {
        let mut budget = AnthropicStrictBudget::default();
        let mut tools = Vec::with_capacity(specs.len() + 1);
        if let Some(defer) = &self.defer {
            tools.push(search_tool(defer.search())?);
        }
        // Before the tools, so that the array only grows at its end as tools are added.
        if specs.iter().any(|spec| spec.callers().allows_programmatic()) {
            tools.push(json!({"type": CODE_EXECUTION, "name": "code_execution"}));
        }
        for spec in specs {
            if self.strict {
                budget.add(spec.name(), &self.input_schema(spec)?)?;
            }
            let mut tool = self.tool(spec)?;
            if let Some(defer) = &self.defer {
                request::mark_deferred(defer, spec.name(), &mut tool);
            }
            tools.push(tool);
        }
        Ok(Value::Array(tools))
    }

    fn tool_choice(&self, choice: &ToolChoice) -> Result<Map<String, Value>, EncodeError> {
        let mut inner = Map::new();
        let kind = match &choice.mode {
            ChoiceMode::Auto => "auto",
            ChoiceMode::None => "none",
            ChoiceMode::Required => "any",
            ChoiceMode::Tool(_) => "tool",
            ChoiceMode::Validated if self.strict => "auto",
            ChoiceMode::Validated => {
                return Err(EncodeError::Unsupported {
                    provider: Provider::Anthropic,
                    feature: "a validated tool choice without strict mode (turn `strict` on)",
                });
            }
            ChoiceMode::Allowed { .. } => {
                return Err(EncodeError::Unsupported {
                    provider: Provider::Anthropic,
                    feature: "limiting calls to some of the tools (send only those tools)",
                });
            }
        };
        inner.insert("type".to_owned(), json!(kind));
        if let ChoiceMode::Tool(name) = &choice.mode {
            inner.insert("name".to_owned(), json!(name));
        }
        if let Some(parallel) = choice.parallel.filter(|_| choice.mode != ChoiceMode::None) {
            inner.insert("disable_parallel_tool_use".to_owned(), Value::Bool(!parallel));
        }
        let mut fields = Map::new();
        fields.insert("tool_choice".to_owned(), Value::Object(inner));
        Ok(fields)
    }

    /// `model`, `max_tokens` (4096 unless set; the API requires it), `system` (the system
    /// messages joined by blank lines), `messages`, `"stream": true` when streaming, then the
    /// tool fields. Consecutive messages of one role are merged into one, tool results first,
    /// and empty ones left out, as the API wants.
    fn encode_request(
        &self,
        request: &ModelRequest<'_>,
        options: &RequestOptions,
    ) -> Result<Map<String, Value>, EncodeError> {
        let mut messages: Vec<Value> = Vec::with_capacity(request.messages.len());
        for message in request.messages {
            match message {
                Message::System(_) => {}
                Message::User(text) | Message::Notice(text) if text.is_empty() => {}
                // A notice has no place of its own: after tool results it is a text block of
                // their user turn, as the API wants text beside results.
                Message::User(text) | Message::Notice(text) => request::push_merged(
                    &mut messages,
                    "user",
                    "content",
                    vec![json!({"type": "text", "text": text})],
                ),
                Message::Assistant(decoded) => {
                    request::append(&mut messages, "content", self.assistant_message(decoded));
                }
                Message::ToolResults(results) => {
                    for message in self.result_messages(results)? {
                        request::append(&mut messages, "content", message);
                    }
                }
            }
        }
        let mut fields = Map::new();
        fields.insert("model".to_owned(), json!(options.model));
        fields.insert("max_tokens".to_owned(), json!(options.max_tokens.unwrap_or(MAX_TOKENS)));
        if let Some(system) = request::system_text(request.messages) {
            fields.insert("system".to_owned(), Value::String(system));
        }
        fields.insert("messages".to_owned(), Value::Array(messages));
        if let Some(container) = last_container(request.messages) {
            fields.insert(CONTAINER.to_owned(), json!(container));
        }
        if options.stream {
            fields.insert("stream".to_owned(), Value::Bool(true));
        }
        fields.extend(match request.search {
            None => self.request(request.tools, request.choice)?,
            Some(search) => self.search_request(request, search)?,
        });
        Ok(request::body(options, fields))
    }

    fn decode(&self, bytes: &[u8]) -> Result<Decoded, DecodeError> {
        let message = body(bytes)?;
        if str_at(&message, "type") == Some("error") {
            let error = message.get("error").unwrap_or(&Value::Null);
            return Err(DecodeError::Provider(ProviderError::from_value(error)));
        }
        let content = message
            .get("content")
            .and_then(Value::as_array)
            .ok_or(DecodeError::Shape { expected: "a message with `content`" })?;
        let mut core = Core::new(self.decode.clone());
        let out = &mut Vec::new();
        core.recognised = 1;
        for block in content {
            match str_at(block, "type") {
                Some("text") => core.text(str_at(block, "text").unwrap_or_default(), out),
                Some("tool_use") => {
                    let slot = core.open();
                    start_tool(&mut core, slot, block, out);
                }
                Some("thinking" | "redacted_thinking") => keep_thinking(&mut core, block.clone()),
                Some(kind) if is_server_block(kind) => keep_server_block(&mut core, block.clone()),
                _ => {}
            }
        }
        keep_container(&mut core, message.get(CONTAINER));
        if let Some(reason) = str_at(&message, "stop_reason") {
            core.finish(finish(reason), out);
        }
        read_usage(&mut core, message.get("usage"), out);
        Ok(core.end(out))
    }

    fn stream(&self) -> Box<dyn StreamSession> {
        let core = Core::new(self.decode.clone());
        Box::new(Session::new(SseParser::default(), core, MessagesProtocol::default()))
    }

    fn assistant_message(&self, decoded: &Decoded) -> Value {
        let mut content: Vec<Value> =
            decoded.extras.get(THINKING).and_then(Value::as_array).cloned().unwrap_or_default();
        if let Some(Value::Array(blocks)) = decoded.extras.get(SERVER_BLOCKS) {
            content.extend(blocks.iter().cloned());
        }
        if !decoded.text.is_empty() {
            content.push(json!({"type": "text", "text": decoded.text}));
        }
        for call in &decoded.calls {
            let input = call.arguments.value().cloned().unwrap_or_else(|| json!({}));
            let mut block =
                json!({"type": "tool_use", "id": call.id, "name": call.name, "input": input});
            if let Some(caller) = call.extras.get(CALLER) {
                block[CALLER] = caller.clone();
            }
            content.push(block);
        }
        json!({"role": "assistant", "content": content})
    }

    /// One `user` message with a `tool_result` block (`tool_use_id`, `content`, `is_error`)
    /// per result. `content` is the result's text ([`ToolResult::content_text`]) when it is
    /// all text, and otherwise blocks in the parts' order: `{"type": "text", "text"}`,
    /// `{"type": "image", "source": {"type": "base64", "media_type", "data"}}` (PNG, JPEG,
    /// WebP, GIF), and `{"type": "document", "source": ..., "title": <uri>}` for a file: a PDF
    /// as `{"type": "base64", "media_type": "application/pdf", "data"}`, a text resource as
    /// `{"type": "text", "media_type": "text/plain", "data"}`. Audio and other bytes have no
    /// form here: a text block names what was left out (kind, MIME type, size) in its place.
    fn result_messages(&self, results: &[ToolResult]) -> Result<Vec<Value>, EncodeError> {
        if results.is_empty() {
            return Ok(Vec::new());
        }
        let mut blocks = Vec::with_capacity(results.len());
        for result in results {
            let content = match &result.outcome {
                // A search's finds load the tools they name.
                ToolOutcome::Done(_) if result.is_search() => found_blocks(result),
                ToolOutcome::Done(output) if output.parts().iter().any(needs_blocks) => {
                    let mut content = Vec::with_capacity(output.parts().len());
                    for (index, part) in output.parts().iter().enumerate() {
                        if let Some(block) = result_block(index, part) {
                            content.push(block);
                        }
                    }
                    Value::Array(content)
                }
                _ => Value::String(result.content_text()),
            };
            blocks.push(object([
                ("type", json!("tool_result")),
                ("tool_use_id", json!(result.call_id)),
                ("content", content),
                ("is_error", json!(result.is_error())),
            ]));
        }
        Ok(vec![object([("role", json!("user")), ("content", Value::Array(blocks))])])
    }
}

/// A tool search's result as `tool_result` content: a `tool_reference` block per tool found
/// (<https://docs.anthropic.com/en/docs/agents-and-tools/tool-use/tool-search-tool>, custom
/// tool search), or a text saying none matched.
fn found_blocks(result: &ToolResult) -> Value {
    let blocks: Vec<Value> =
        result.found().map(|name| json!({"type": "tool_reference", "tool_name": name})).collect();
    if blocks.is_empty() {
        return json!("No tool matched the search.");
    }
    Value::Array(blocks)
}

/// Whether the part needs blocks rather than text: bytes, or a text resource (a document).
fn needs_blocks(part: &Part) -> bool {
    parts::is_binary(part) || matches!(part, Part::Resource(_))
}

/// Part `index` of `result` as a `tool_result` content block; `None` for empty text, which
/// Anthropic refuses as a block.
fn result_block(index: usize, part: &Part) -> Option<Value> {
    let block = match (part, parts::resource(part)) {
        (Part::Image(media), _) if parts::is_common_image(&media.mime_type) => object([
            ("type", json!("image")),
            ("source", base64_source(&media.mime_type, &media.data)),
        ]),
        (_, Some(Resource { uri, body: ResourceBody::Text(text), .. })) => json!({
            "type": "document",
            "source": {"type": "text", "media_type": "text/plain", "data": text},
            "title": uri,
        }),
        (_, Some(Resource { uri, mime_type, body: ResourceBody::Bytes(bytes) }))
            if mime_type.as_deref() == Some("application/pdf") =>
        {
            object([
                ("type", json!("document")),
                ("source", base64_source("application/pdf", bytes)),
                ("title", json!(uri)),
            ])
        }
        _ => match parts::text_of(part) {
            Some(text) if text.is_empty() => return None,
            Some(text) => json!({"type": "text", "text": text}),
            None => {
                json!({"type": "text", "text": parts::left_out(Provider::Anthropic, index, part)})
            }
        },
    };
    Some(block)
}

/// The definition of Anthropic's tool search tool
/// (<https://docs.anthropic.com/en/docs/agents-and-tools/tool-use/tool-search-tool>).
fn search_tool(search: ToolSearch) -> Result<Value, EncodeError> {
    let (kind, name) = match search {
        ToolSearch::Bm25 => ("tool_search_tool_bm25_20251119", "tool_search_tool_bm25"),
        ToolSearch::Regex => ("tool_search_tool_regex_20251119", "tool_search_tool_regex"),
        _ => {
            return Err(EncodeError::Unsupported {
                provider: Provider::Anthropic,
                feature: "a tool search other than `Bm25` or `Regex`",
            });
        }
    };
    Ok(json!({"type": kind, "name": name}))
}

/// Whether a content block of type `kind` is a call the provider makes itself
/// (`server_tool_use`, `mcp_tool_use`): never the application's `tool_use`.
fn is_server_call(kind: &str) -> bool {
    kind != "tool_use" && kind.ends_with("_tool_use")
}

/// Whether a content block of type `kind` is a server tool's: its call ([`is_server_call`]) or
/// its result (`tool_search_tool_result`, `code_execution_tool_result`,
/// `web_search_tool_result`, `mcp_tool_result`, ...), kept whole to be sent back with the turn.
fn is_server_block(kind: &str) -> bool {
    is_server_call(kind) || kind.ends_with("_tool_result")
}

/// Keeps a response's `container` (`{"id", "expires_at"}`) for the next request.
fn keep_container(core: &mut Core, container: Option<&Value>) {
    if let Some(container) = container.filter(|container| container.get("id").is_some()) {
        core.extras.insert(CONTAINER, container.clone());
    }
}

/// The id of the container the conversation's latest response that had one ran code in.
fn last_container(messages: &[Message]) -> Option<&str> {
    messages.iter().rev().find_map(|message| match message {
        Message::Assistant(decoded) => {
            decoded.extras.get(CONTAINER).and_then(|container| str_at(container, "id"))
        }
        _ => None,
    })
}

/// A server tool's block to keep: tool names a search referenced go to [`TOOL_REFERENCES`],
/// the block to the turn's extras, to be sent back.
fn keep_server_block(core: &mut Core, block: Value) {
    if str_at(&block, "type") == Some("tool_search_tool_result") {
        let references = block.pointer("/content/tool_references").and_then(Value::as_array);
        for reference in references.map(Vec::as_slice).unwrap_or_default() {
            if str_at(reference, "type") == Some("tool_reference")
                && let Some(name) = str_at(reference, "tool_name")
            {
                core.extras.push(TOOL_REFERENCES, json!(name));
            }
        }
    }
    core.extras.push(SERVER_BLOCKS, block);
}

/// `{"type": "base64", "media_type", "data"}`.
fn base64_source(media_type: &str, bytes: &[u8]) -> Value {
    object([
        ("type", json!("base64")),
        ("media_type", json!(media_type)),
        ("data", parts::base64(bytes).into()),
    ])
}

/// A `tool_use` block's id, name and (when not empty) input.
fn start_tool(core: &mut Core, slot: usize, block: &Value, out: &mut Vec<StreamEvent>) {
    if let Some(id) = str_at(block, "id") {
        core.set_id(slot, id, out);
    }
    if let Some(name) = str_at(block, "name") {
        core.push_name(slot, name, out);
    }
    if let (Some(caller), Some(extras)) = (block.get(CALLER), core.extras_mut(slot)) {
        extras.insert(CALLER, caller.clone());
    }
    match block.get("input") {
        Some(Value::Object(input)) if input.is_empty() => {}
        Some(input) => core.set_object(slot, input.clone(), false, out),
        None => {}
    }
}

/// Usage from `message_start` (`message.usage`), `message_delta` (`usage`, cumulative) or a
/// whole message (`usage`). Input counts cache writes and reads too.
fn read_usage(core: &mut Core, usage: Option<&Value>, out: &mut Vec<StreamEvent>) {
    let Some(usage) = usage else { return };
    let input = count_at(usage, "input_tokens").map(|tokens| {
        let cached = ["cache_creation_input_tokens", "cache_read_input_tokens"]
            .map(|key| count_at(usage, key).unwrap_or(0));
        // Counts come from the provider: near `u64::MAX` they must not overflow.
        tokens.saturating_add(cached[0]).saturating_add(cached[1])
    });
    core.usage(input, count_at(usage, "output_tokens"), out);
}

fn keep_thinking(core: &mut Core, block: Value) {
    core.extras.push(THINKING, block);
}

/// The canonical reason for a `stop_reason`.
fn finish(reason: &str) -> Finish {
    let canonical = match reason {
        "end_turn" | "stop_sequence" => FinishReason::Stop,
        "tool_use" => FinishReason::ToolCalls,
        "max_tokens" | "model_context_window_exceeded" => FinishReason::Length,
        "refusal" => FinishReason::ContentFilter,
        _ => FinishReason::Other,
    };
    Finish::new(canonical, Some(reason))
}

/// What a content block index stands for within the current message.
#[derive(Debug)]
enum Block {
    Tool(usize),
    Thinking(Map<String, Value>),
    /// A server tool's call (its input streamed as JSON text), kept whole at its stop.
    Server(Map<String, Value>, String),
    Other,
}

/// Stream state: the blocks of the current message.
#[derive(Debug, Default)]
struct MessagesProtocol {
    blocks: HashMap<u64, Block>,
}

impl Protocol for MessagesProtocol {
    fn on_frame(&mut self, core: &mut Core, frame: Frame, out: &mut Vec<StreamEvent>) {
        let Some(event) = payload(core, &frame.data, out) else { return };
        let Some(kind) = str_at(&event, "type").or(frame.event.as_deref()) else {
            core.problem(
                Problem::UnexpectedPayload { expected: "a Messages event with a `type`" },
                out,
            );
            return;
        };
        core.recognised += 1;
        let index = event.get("index").and_then(Value::as_u64).unwrap_or(0);
        match kind {
            // Block indices restart with every message.
            "message_start" => {
                // A tool block of the previous message that never stopped lost its input.
                for block in self.blocks.values() {
                    if let Block::Tool(slot) = block {
                        core.cut(*slot);
                    }
                }
                self.blocks.clear();
                read_usage(core, event.pointer("/message/usage"), out);
                keep_container(core, event.pointer("/message/container"));
            }
            "content_block_start" => {
                let block = event.get("content_block").unwrap_or(&Value::Null);
                let entry = match str_at(block, "type") {
                    Some("tool_use") => {
                        let slot = core.open();
                        start_tool(core, slot, block, out);
                        Block::Tool(slot)
                    }
                    Some("thinking") => {
                        Block::Thinking(block.as_object().cloned().unwrap_or_default())
                    }
                    Some("redacted_thinking") => {
                        keep_thinking(core, block.clone());
                        Block::Other
                    }
                    // Its input may stream as JSON text, as a call's does.
                    Some(kind) if is_server_call(kind) => {
                        Block::Server(block.as_object().cloned().unwrap_or_default(), String::new())
                    }
                    Some(kind) if is_server_block(kind) => {
                        keep_server_block(core, block.clone());
                        Block::Other
                    }
                    Some("text") => {
                        core.text(str_at(block, "text").unwrap_or_default(), out);
                        Block::Other
                    }
                    _ => Block::Other,
                };
                self.blocks.insert(index, entry);
            }
            "content_block_delta" => {
                self.delta(core, index, event.get("delta").unwrap_or(&Value::Null), out)
            }
            "content_block_stop" => {
                match self.blocks.remove(&index) {
                    Some(Block::Thinking(block)) => keep_thinking(core, Value::Object(block)),
                    Some(Block::Server(mut block, input)) => {
                        if let Ok(input) = serde_json::from_str::<Value>(&input) {
                            block.insert("input".to_owned(), input);
                        }
                        keep_server_block(core, Value::Object(block));
                    }
                    // The tool's input is complete; a later delta at this index starts anew.
                    Some(Block::Tool(_) | Block::Other) | None => {}
                }
            }
            "message_delta" => {
                // Usage first: it belongs to the turn the stop reason ends.
                read_usage(core, event.get("usage"), out);
                keep_container(core, event.pointer("/delta/container"));
                if let Some(reason) = event.pointer("/delta/stop_reason").and_then(Value::as_str) {
                    core.finish(finish(reason), out);
                }
            }
            "error" => {
                let error = event.get("error").unwrap_or(&Value::Null);
                core.problem(Problem::Provider(ProviderError::from_value(error)), out);
                core.finish(Finish::new(FinishReason::Error, Some("error")), out);
            }
            _ => {}
        }
    }
}

impl MessagesProtocol {
    fn delta(&mut self, core: &mut Core, index: u64, delta: &Value, out: &mut Vec<StreamEvent>) {
        let text = |key: &str| str_at(delta, key).unwrap_or_default();
        match str_at(delta, "type") {
            Some("text_delta") => core.text(text("text"), out),
            Some("input_json_delta") => {
                let slot = match self.blocks.get_mut(&index) {
                    Some(Block::Tool(slot)) => *slot,
                    Some(Block::Server(_, input)) => {
                        let fragment = text("partial_json");
                        if input.len().saturating_add(fragment.len())
                            > core.limits().get(Limit::ArgumentBytes)
                        {
                            core.exceeded(Limit::ArgumentBytes, out);
                        } else {
                            input.push_str(fragment);
                        }
                        return;
                    }
                    // Input for a block that never started: keep it; it is reported unnamed.
                    _ => {
                        let slot = core.open();
                        self.blocks.insert(index, Block::Tool(slot));
                        slot
                    }
                };
                core.push_args(slot, text("partial_json"), out);
            }
            Some(kind @ ("thinking_delta" | "signature_delta")) => {
                if let Some(Block::Thinking(block)) = self.blocks.get_mut(&index) {
                    let key = if kind == "thinking_delta" { "thinking" } else { "signature" };
                    match block.get_mut(key) {
                        Some(Value::String(value)) => value.push_str(text(key)),
                        _ => {
                            block.insert(key.to_owned(), Value::String(text(key).to_owned()));
                        }
                    }
                }
            }
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::adapters::{ToolCall, Usage};

    #[test]
    fn roles_are_merged_and_system_goes_apart() {
        let call = ToolCall::new("toolu_1", "math__add", json!({"a": 1}));
        let mut turn =
            Anthropic::new().decode(br#"{"content": [], "stop_reason": "tool_use"}"#).unwrap();
        turn.calls.push(call.clone());
        let conversation = [
            Message::system("Be brief."),
            Message::user("Add."),
            Message::Assistant(turn),
            Message::ToolResults(vec![ToolResult::ok(&call, json!({"sum": 1}))]),
            Message::user("Answer now."),
            Message::system("Really brief."),
        ];
        let request = ModelRequest {
            messages: &conversation,
            tools: &[],
            choice: &ToolChoice::auto(),
            search: None,
        };
        let body = Anthropic::new()
            .encode_request(&request, &RequestOptions::new("m").stream(false))
            .unwrap();
        assert_eq!(body["system"], json!("Be brief.\n\nReally brief."));
        assert_eq!(body.get("stream"), None);
        let messages = body["messages"].as_array().unwrap();
        assert_eq!(messages.len(), 3);
        assert_eq!(messages[2]["role"], "user");
        assert_eq!(messages[2]["content"][0]["type"], "tool_result");
        assert_eq!(messages[2]["content"][1], json!({"type": "text", "text": "Answer now."}));
    }

    #[test]
    fn usage_with_cache_across_the_stream() {
        let mut session = Anthropic::new().stream();
        let events = session.feed(
            concat!(
                "event: message_start\n",
                "data: {\"type\":\"message_start\",\"message\":{\"usage\":{\"input_tokens\":10,",
                "\"cache_read_input_tokens\":5,\"output_tokens\":1}}}\n\n",
                "event: message_delta\n",
                "data: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\"},",
                "\"usage\":{\"output_tokens\":7}}\n\n",
            )
            .as_bytes(),
        );
        let reported: Vec<Usage> = events
            .iter()
            .filter_map(|event| match event {
                StreamEvent::Usage(usage) => Some(*usage),
                _ => None,
            })
            .collect();
        let total = Usage { input_tokens: 15, output_tokens: 7 };
        assert_eq!(reported, [Usage { input_tokens: 15, output_tokens: 1 }, total]);
        assert_eq!(session.finish().usage, Some(total));
    }
}
