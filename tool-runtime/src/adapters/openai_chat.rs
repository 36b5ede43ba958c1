//! OpenAI Chat Completions (`POST /v1/chat/completions`).
//!
//! - Definitions: `{"type": "function", "function": {"name", "description", "parameters",
//!   "strict"}}`; choice: `tool_choice` (`"auto"`, `"none"`, `"required"`,
//!   `{"type": "function", "function": {"name"}}`) and `parallel_tool_calls`.
//! - Responses: `choices[0].message.tool_calls[] = {id, type, function: {name, arguments}}`
//!   with `arguments` a JSON string, and `finish_reason`.
//! - Streams: SSE `data:` chunks with `choices[0].delta.tool_calls[]` fragments keyed by
//!   `index`, ending in `data: [DONE]`; a usage chunk may come with empty `choices`. Only the
//!   first choice (`index` 0) is read; ask for one (`n: 1`, the default).
//! - Results: one `{"role": "tool", "tool_call_id", "content"}` message per result, carrying
//!   text; the images, sounds and files of a turn's results follow in one `user` message that
//!   names the calls ([`OpenAiChat::result_messages`](super::Adapter::result_messages)).

use std::collections::HashMap;

use serde_json::{Map, Value, json};

use crate::content::{Part, Resource, ResourceBody};
use crate::conversation::{
    ChoiceMode, Decoded, Finish, FinishReason, ModelRequest, Problem, ProviderError,
    RequestOptions, StreamEvent, ToolChoice, ToolOutcome, ToolResult,
};
use crate::spec::ToolSpec;

use super::assemble::{Core, DecodeOptions};
use super::budget::OpenAiStrictBudget;
use super::call_ids::CallIdFormat;
use super::error::{DecodeError, EncodeError};
use super::framing::Frame;
use super::parts::{self, object};
use super::request;
use super::session::{Protocol, Session, StreamSession, body, payload, str_at, usage_object};
use super::sse::SseParser;
use super::{Adapter, Provider, input_schema, lower, named};

/// The OpenAI Chat Completions adapter.
///
/// ```
/// use tool_runtime::adapters::{Adapter, OpenAiChat};
///
/// let decoded = OpenAiChat::new()
///     .decode(br#"{"choices": [{"index": 0, "message": {"role": "assistant", "content": null,
///         "tool_calls": [{"id": "call_1", "type": "function",
///             "function": {"name": "core__get_current_time", "arguments": ""}}]},
///         "finish_reason": "tool_calls"}]}"#)
///     .unwrap();
/// assert_eq!(decoded.calls[0].arguments.value(), Some(&serde_json::json!({})));
/// ```
#[derive(Debug, Clone, Default)]
pub struct OpenAiChat {
    strict: bool,
    decode: DecodeOptions,
    call_ids: CallIdFormat,
}

impl OpenAiChat {
    /// Non-strict definitions, default decoding.
    #[must_use]
    pub fn new() -> Self {
        Self::default()
    }

    /// Strict mode (`"strict": true`, every property required, optional ones nullable).
    /// Decoded arguments then need [`raise_arguments`](super::raise_arguments).
    #[must_use]
    pub fn strict(self, strict: bool) -> Self {
        Self { strict, ..self }
    }

    /// The form call ids take in requests (default: as the conversation holds them). For
    /// Mistral, [`CallIdFormat::Mistral`]: a conversation begun with another provider then
    /// goes to it with each id in Mistral's form, and the conversation keeps its own.
    ///
    /// ```
    /// use serde_json::json;
    /// use tool_runtime::adapters::{Adapter, CallIdFormat, Decoded, OpenAiChat, ToolCall};
    ///
    /// let mistral = OpenAiChat::new().call_ids(CallIdFormat::Mistral);
    /// let turn = Decoded::new("", vec![ToolCall::new("toolu_01XFDUDYJgAACzvnptvVoYEL", "core__time", json!({}))]);
    /// let sent = mistral.assistant_message(&turn)["tool_calls"][0]["id"].clone();
    /// assert_eq!(sent, json!(CallIdFormat::Mistral.wire_id("toolu_01XFDUDYJgAACzvnptvVoYEL")));
    /// ```
    #[must_use]
    pub fn call_ids(self, call_ids: CallIdFormat) -> Self {
        Self { call_ids, ..self }
    }

    /// How ids are minted and which tools were declared.
    #[must_use]
    pub fn decode_options(self, decode: DecodeOptions) -> Self {
        Self { decode, ..self }
    }

    fn parameters(&self, spec: &ToolSpec) -> Result<Map<String, Value>, EncodeError> {
        let schema = input_schema(spec, Provider::OpenAiChat)?;
        Ok(if self.strict { lower::openai_strict(&schema) } else { schema })
    }
}

impl Adapter for OpenAiChat {
    fn provider(&self) -> Provider {
        Provider::OpenAiChat
    }

    fn tool(&self, spec: &ToolSpec) -> Result<Value, EncodeError> {
        let mut function = named(spec, [("parameters", Value::Object(self.parameters(spec)?))]);
        // Always said, either way: a provider that defaults to strict mode would make every
        // optional property required.
        function.insert("strict".to_owned(), Value::Bool(self.strict));
        Ok(json!({"type": "function", "function": function}))
    }

    fn tools(&self, specs: &[&ToolSpec]) -> Result<Value, EncodeError> {
        let mut budget = OpenAiStrictBudget::new(Provider::OpenAiChat);
        let mut tools = Vec::with_capacity(specs.len());
        for spec in specs {
            if self.strict {
                budget.add(spec.name(), &self.parameters(spec)?)?;
            }
            tools.push(self.tool(spec)?);
        }
        Ok(Value::Array(tools))
    }

    fn tool_choice(&self, choice: &ToolChoice) -> Result<Map<String, Value>, EncodeError> {
        let mut fields = Map::new();
        let mode = match &choice.mode {
            ChoiceMode::Auto => json!("auto"),
            ChoiceMode::None => json!("none"),
            ChoiceMode::Required => json!("required"),
            ChoiceMode::Tool(name) => json!({"type": "function", "function": {"name": name}}),
            // https://platform.openai.com/docs/api-reference/chat/create#chat-create-tool_choice
            ChoiceMode::Allowed { tools, required } => {
                let tools: Vec<Value> = tools
                    .iter()
                    .map(|name| json!({"type": "function", "function": {"name": name}}))
                    .collect();
                let mode = if *required { "required" } else { "auto" };
                json!({"type": "allowed_tools", "allowed_tools": {"mode": mode, "tools": tools}})
            }
            ChoiceMode::Validated if self.strict => json!("auto"),
            ChoiceMode::Validated => {
                return Err(EncodeError::Unsupported {
                    provider: Provider::OpenAiChat,
                    feature: "a validated tool choice without strict mode (turn `strict` on)",
                });
            }
        };
        fields.insert("tool_choice".to_owned(), mode);
        if let Some(parallel) = choice.parallel {
            fields.insert("parallel_tool_calls".to_owned(), Value::Bool(parallel));
        }
        Ok(fields)
    }

    /// `model`, `messages` (system and user messages as text), `max_completion_tokens` when
    /// set, `"stream": true` with `"stream_options": {"include_usage": true}` when streaming,
    /// then the tool fields.
    fn encode_request(
        &self,
        request: &ModelRequest<'_>,
        options: &RequestOptions,
    ) -> Result<Map<String, Value>, EncodeError> {
        self.call_ids.check_distinct(request.messages)?;
        let messages = request::role_messages(self, request.messages)?;
        let mut fields = Map::new();
        fields.insert("model".to_owned(), json!(options.model));
        fields.insert("messages".to_owned(), Value::Array(messages));
        if let Some(max_tokens) = options.max_tokens {
            fields.insert("max_completion_tokens".to_owned(), json!(max_tokens));
        }
        if options.stream {
            fields.insert("stream".to_owned(), Value::Bool(true));
            if options.stream_usage {
                fields.insert("stream_options".to_owned(), json!({"include_usage": true}));
            }
        }
        // The application's tool search is a function here: the tools it finds are offered
        // from then on, after the others.
        let search_tool = request.search.map(|search| search.tool());
        let specs = request::with_search_tool(search_tool.as_ref(), request);
        fields.extend(self.request(&specs, request.choice)?);
        Ok(request::body(options, fields))
    }

    fn decode(&self, bytes: &[u8]) -> Result<Decoded, DecodeError> {
        let value = body(bytes)?;
        if let Some(error) = value.get("error") {
            return Err(DecodeError::Provider(ProviderError::from_value(error)));
        }
        let shape = DecodeError::Shape { expected: "a chat completion with `choices[0].message`" };
        let choices = value.get("choices").and_then(Value::as_array).ok_or(shape.clone())?;
        let choice = choices
            .iter()
            .find(|choice| choice.get("index").and_then(Value::as_u64).unwrap_or(0) == 0)
            .ok_or(shape.clone())?;
        let message = choice.get("message").ok_or(shape)?;
        let mut core = Core::new(self.decode.clone());
        let out = &mut Vec::new();
        core.recognised = 1;
        if let Some(text) = str_at(message, "content") {
            core.text(text, out);
        }
        let calls = message.get("tool_calls").and_then(Value::as_array).map(Vec::as_slice);
        for call in calls.unwrap_or_default() {
            let slot = core.open();
            whole_call(&mut core, slot, call, out);
        }
        if let Some(call) = message.get("function_call") {
            let slot = core.open();
            whole_call(&mut core, slot, call, out);
        }
        if let Some(reason) = str_at(choice, "finish_reason") {
            core.finish(finish(reason), out);
        }
        read_usage(&mut core, &value, out);
        Ok(core.end(out))
    }

    fn stream(&self) -> Box<dyn StreamSession> {
        let core = Core::new(self.decode.clone());
        Box::new(Session::new(SseParser::default(), core, ChatProtocol::default()))
    }

    fn assistant_message(&self, decoded: &Decoded) -> Value {
        let mut message = Map::new();
        message.insert("role".to_owned(), json!("assistant"));
        let content = if decoded.text.is_empty() { Value::Null } else { json!(decoded.text) };
        message.insert("content".to_owned(), content);
        if !decoded.calls.is_empty() {
            let calls = decoded
                .calls
                .iter()
                .map(|call| {
                    json!({
                        "id": self.call_ids.wire_id(&call.id),
                        "type": "function",
                        "function": {"name": call.name, "arguments": call.arguments.to_json_text()},
                    })
                })
                .collect();
            message.insert("tool_calls".to_owned(), Value::Array(calls));
        }
        Value::Object(message)
    }

    /// One `{"role": "tool", "tool_call_id", "content"}` message per result, its content the
    /// result's text ([`ToolResult::content_text`]). A tool message takes text only, so the
    /// images, sounds and files of the turn's results follow in ONE `user` message after the
    /// tool messages: for each result that has any, a text part naming the call
    /// (``Attachments of the result of call `ID` (TOOL):``) and then its parts, as
    /// `{"type": "image_url", "image_url": {"url": "data:<mime>;base64,..."}}` (PNG, JPEG,
    /// WebP, GIF), `{"type": "input_audio", "input_audio": {"data", "format"}}` (`wav` or
    /// `mp3`) or `{"type": "file", "file": {"filename", "file_data": "data:<mime>;base64,..."}}`.
    /// The tool message of such a result says that its attachments follow. A part with no form
    /// here (audio other than WAV and MP3, an image other than PNG, JPEG, WebP and GIF, a file
    /// of another type) is a text block naming what was left out (kind, MIME type, size).
    fn result_messages(&self, results: &[ToolResult]) -> Result<Vec<Value>, EncodeError> {
        let mut messages = Vec::with_capacity(results.len() + 1);
        let mut attachments = Vec::new();
        for result in results {
            let call_id = self.call_ids.wire_id(&result.call_id);
            let mut content = result.content_text();
            if let ToolOutcome::Done(output) = &result.outcome
                && output.parts().iter().any(parts::is_binary)
            {
                attachments.push(json!({
                    "type": "text",
                    "text": format!("Attachments of the result of call `{call_id}` ({}):", result.name),
                }));
                for (index, part) in output.parts().iter().enumerate() {
                    if let Some(block) = attachment(index, part) {
                        attachments.push(block);
                    }
                }
                if !content.is_empty() {
                    content.push('\n');
                }
                content.push_str(ATTACHMENTS_FOLLOW);
            }
            messages.push(object([
                ("role", json!("tool")),
                ("tool_call_id", json!(call_id)),
                ("content", Value::String(content)),
            ]));
        }
        if !attachments.is_empty() {
            messages
                .push(object([("role", json!("user")), ("content", Value::Array(attachments))]));
        }
        Ok(messages)
    }
}

/// What the tool message of a result with attachments says about them.
const ATTACHMENTS_FOLLOW: &str =
    "(The images, sounds or files of this result follow in the next user message.)";

/// The user-message block for part `index` of a result, if it is bytes: the part, or a text
/// block naming it where Chat Completions has no form for it.
fn attachment(index: usize, part: &Part) -> Option<Value> {
    let left_out =
        || json!({"type": "text", "text": parts::left_out(Provider::OpenAiChat, index, part)});
    let block = match (part, parts::resource(part)) {
        (Part::Image(media), _) if parts::is_common_image(&media.mime_type) => object([
            ("type", json!("image_url")),
            ("image_url", object([("url", parts::data_url(&media.mime_type, &media.data).into())])),
        ]),
        (Part::Audio(media), _) => {
            let format = match media.mime_type.as_str() {
                "audio/wav" | "audio/x-wav" | "audio/wave" | "audio/vnd.wave" => "wav",
                "audio/mpeg" | "audio/mp3" => "mp3",
                _ => return Some(left_out()),
            };
            object([
                ("type", json!("input_audio")),
                (
                    "input_audio",
                    object([
                        ("data", parts::base64(&media.data).into()),
                        ("format", json!(format)),
                    ]),
                ),
            ])
        }
        (_, Some(Resource { uri, mime_type, body: ResourceBody::Bytes(bytes) })) => {
            let Some(mime) = parts::file_mime(mime_type.as_deref()) else {
                return Some(left_out());
            };
            let file = object([
                ("filename", json!(parts::file_name(uri))),
                ("file_data", parts::data_url(mime, bytes).into()),
            ]);
            object([("type", json!("file")), ("file", file)])
        }
        (Part::Image(_), _) => left_out(),
        _ => return None,
    };
    Some(block)
}

/// A call given whole: `{id, function: {name, arguments}}` (or a legacy `function_call`).
fn whole_call(core: &mut Core, slot: usize, call: &Value, out: &mut Vec<StreamEvent>) {
    if let Some(id) = str_at(call, "id") {
        core.set_id(slot, id, out);
    }
    let function = call.get("function").unwrap_or(call);
    if let Some(name) = str_at(function, "name") {
        core.push_name(slot, name, out);
    }
    match function.get("arguments") {
        Some(Value::String(text)) => core.push_args(slot, text, out),
        Some(Value::Null) | None => {}
        Some(other) => core.set_object(slot, other.clone(), false, out),
    }
}

/// `usage.prompt_tokens` and `usage.completion_tokens`, from the usage chunk (asked for with
/// `stream_options.include_usage`) or a whole response. Whether there was a report.
fn read_usage(core: &mut Core, value: &Value, out: &mut Vec<StreamEvent>) -> bool {
    usage_object(core, value, ["prompt_tokens", "completion_tokens"], out)
}

/// The canonical reason for a Chat Completions `finish_reason`.
fn finish(reason: &str) -> Finish {
    let canonical = match reason {
        "stop" => FinishReason::Stop,
        "tool_calls" | "function_call" => FinishReason::ToolCalls,
        "length" => FinishReason::Length,
        "content_filter" => FinishReason::ContentFilter,
        _ => FinishReason::Other,
    };
    Finish::new(canonical, Some(reason))
}

/// Stream state: which slot each `index` currently stands for.
#[derive(Debug, Default)]
struct ChatProtocol {
    by_index: HashMap<u64, usize>,
    last: Option<usize>,
}

impl Protocol for ChatProtocol {
    fn on_frame(&mut self, core: &mut Core, frame: Frame, out: &mut Vec<StreamEvent>) {
        let data = frame.data.trim();
        if data == "[DONE]" {
            core.recognised += 1;
            if !core.finished() {
                // The server says the response is complete; only the reason was left out. A
                // call that got its name and not a byte of arguments was cut there.
                core.cut_nameonly();
                core.finish(Finish::new(FinishReason::Stop, None), out);
            }
            return;
        }
        let Some(chunk) = payload(core, data, out) else { return };
        if let Some(error) = chunk.get("error") {
            core.recognised += 1;
            core.problem(Problem::Provider(ProviderError::from_value(error)), out);
            core.finish(Finish::new(FinishReason::Error, Some("error")), out);
            return;
        }
        let Some(choices) = chunk.get("choices").and_then(Value::as_array) else {
            // Some servers send the usage chunk without `choices` at all.
            if read_usage(core, &chunk, out) {
                core.recognised += 1;
            } else {
                core.problem(
                    Problem::UnexpectedPayload { expected: "a chat completion chunk" },
                    out,
                );
            }
            return;
        };
        core.recognised += 1;
        for choice in choices {
            if choice.get("index").and_then(Value::as_u64).unwrap_or(0) != 0 {
                continue;
            }
            if let Some(delta) = choice.get("delta").or_else(|| choice.get("message")) {
                if let Some(text) = str_at(delta, "content") {
                    core.text(text, out);
                }
                let fragments = delta.get("tool_calls").and_then(Value::as_array);
                for fragment in fragments.map(Vec::as_slice).unwrap_or_default() {
                    self.fragment(core, fragment, out);
                }
                if let Some(call) = delta.get("function_call") {
                    let slot = self.slot(core, Some(0), None);
                    whole_call(core, slot, call, out);
                }
            }
            if let Some(reason) = str_at(choice, "finish_reason") {
                core.finish(finish(reason), out);
            }
        }
        read_usage(core, &chunk, out);
    }
}

impl ChatProtocol {
    /// The slot a fragment belongs to. An `index` names a slot until a different id arrives
    /// under it (the index was reused for a new call); without an index the id decides, and
    /// without either the fragment continues the latest call.
    fn slot(&mut self, core: &mut Core, index: Option<u64>, id: Option<&str>) -> usize {
        let slot = match index {
            Some(index) => match self.by_index.get(&index).copied() {
                Some(slot)
                    if id.is_none_or(|id| {
                        core.provider_id(slot).is_none_or(|known| known == id)
                    }) =>
                {
                    slot
                }
                _ => {
                    let slot = core.open();
                    self.by_index.insert(index, slot);
                    slot
                }
            },
            None => match id {
                Some(id) => core.slot_with_id(id).unwrap_or_else(|| core.open()),
                None => self.last.unwrap_or_else(|| core.open()),
            },
        };
        self.last = Some(slot);
        slot
    }

    fn fragment(&mut self, core: &mut Core, fragment: &Value, out: &mut Vec<StreamEvent>) {
        let index = fragment.get("index").and_then(Value::as_u64);
        let id = str_at(fragment, "id").filter(|id| !id.is_empty());
        let slot = self.slot(core, index, id);
        whole_call(core, slot, fragment, out);
    }
}
