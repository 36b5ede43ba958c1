//! Ollama's native chat (`POST /api/chat`).
//!
//! - Definitions: `{"type": "function", "function": {"name", "description", "parameters"}}`
//!   with the JSON Schema as it is. There is no tool choice: only "auto", and "none" by
//!   leaving the tools out.
//! - Responses: `message.tool_calls[] = {function: {name, arguments, index?}, id?}` with
//!   `arguments` an object, and `done_reason`.
//! - Streams: newline-delimited JSON, one response object per line, the last with
//!   `"done": true`; calls arrive whole.
//! - Results: one `{"role": "tool", "tool_name", "content"}` message per result, with its
//!   images as base64 in `images`.

use serde_json::{Map, Value, json};

use crate::content::Part;
use crate::conversation::{
    ChoiceMode, Decoded, Finish, FinishReason, ModelRequest, Problem, ProviderError,
    RequestOptions, StreamEvent, ToolChoice, ToolOutcome, ToolResult,
};
use crate::spec::ToolSpec;

use super::assemble::{Core, DecodeOptions};
use super::error::{DecodeError, EncodeError};
use super::framing::Frame;
use super::ndjson::NdjsonParser;
use super::request;
use super::session::{Protocol, Session, StreamSession, body, count_at, payload, str_at};
use super::{Adapter, Provider, input_schema, named, parts};

/// The Ollama adapter.
///
/// ```
/// use tool_runtime::adapters::{Adapter, Ollama};
///
/// let decoded = Ollama::new()
///     .decode(br#"{"model": "qwen3", "message": {"role": "assistant", "content": "",
///         "tool_calls": [{"function": {"name": "core__get_current_time", "arguments": {}}}]},
///         "done": true, "done_reason": "stop"}"#)
///     .unwrap();
/// assert_eq!(decoded.calls[0].id, "call_1");
/// ```
#[derive(Debug, Clone, Default)]
pub struct Ollama {
    decode: DecodeOptions,
}

impl Ollama {
    /// Default decoding.
    #[must_use]
    pub fn new() -> Self {
        Self::default()
    }

    /// How ids are minted and which tools were declared.
    #[must_use]
    pub fn decode_options(self, decode: DecodeOptions) -> Self {
        Self { decode }
    }
}

impl Adapter for Ollama {
    fn provider(&self) -> Provider {
        Provider::Ollama
    }

    fn tool(&self, spec: &ToolSpec) -> Result<Value, EncodeError> {
        let function =
            named(spec, [("parameters", Value::Object(input_schema(spec, Provider::Ollama)?))]);
        Ok(json!({"type": "function", "function": function}))
    }

    fn tools(&self, specs: &[&ToolSpec]) -> Result<Value, EncodeError> {
        specs.iter().map(|spec| self.tool(spec)).collect::<Result<Vec<_>, _>>().map(Value::Array)
    }

    /// Only `auto` (and an explicit `parallel(true)`) can be expressed: nothing is written.
    fn tool_choice(&self, choice: &ToolChoice) -> Result<Map<String, Value>, EncodeError> {
        let feature = match (&choice.mode, choice.parallel) {
            (_, Some(false)) => "turning parallel tool calls off",
            (ChoiceMode::Auto, _) => return Ok(Map::new()),
            (ChoiceMode::None, _) => "a tool choice of `none` (leave the tools out instead)",
            (ChoiceMode::Required, _) => "requiring a tool call",
            (ChoiceMode::Tool(_), _) => "forcing a particular tool",
            (ChoiceMode::Allowed { .. }, _) => "limiting calls to some of the tools",
            (ChoiceMode::Validated, _) => "a validated tool choice (Gemini's `VALIDATED`)",
        };
        Err(EncodeError::Unsupported { provider: Provider::Ollama, feature })
    }

    /// As the trait's, except that `none` leaves the tools out, which is how Ollama is told.
    fn request(
        &self,
        specs: &[&ToolSpec],
        choice: &ToolChoice,
    ) -> Result<Map<String, Value>, EncodeError> {
        if choice.mode == ChoiceMode::None && choice.parallel != Some(false) {
            return Ok(Map::new());
        }
        super::check_named(specs, choice)?;
        let mut fields = self.tool_choice(choice)?;
        if !specs.is_empty() {
            fields.insert("tools".to_owned(), self.tools(specs)?);
        }
        Ok(fields)
    }

    /// `model`, `messages` (system and user messages as text), `stream` (always written:
    /// Ollama streams unless told not to), the tool fields, and `options.num_predict` when a
    /// token limit is set.
    fn encode_request(
        &self,
        request: &ModelRequest<'_>,
        options: &RequestOptions,
    ) -> Result<Map<String, Value>, EncodeError> {
        let messages = request::role_messages(self, request.messages)?;
        let mut fields = Map::new();
        fields.insert("model".to_owned(), json!(options.model));
        fields.insert("messages".to_owned(), Value::Array(messages));
        fields.insert("stream".to_owned(), Value::Bool(options.stream));
        // The application's tool search is a function here: the tools it finds are offered
        // from then on, after the others.
        let search_tool = request.search.map(|search| search.tool());
        let specs = request::with_search_tool(search_tool.as_ref(), request);
        fields.extend(self.request(&specs, request.choice)?);
        let mut body = request::body(options, fields);
        if let Some(max_tokens) = options.max_tokens {
            request::insert_nested(&mut body, "options", "num_predict", json!(max_tokens));
        }
        Ok(body)
    }

    fn decode(&self, bytes: &[u8]) -> Result<Decoded, DecodeError> {
        let mut value = body(bytes)?;
        if let Some(error) = value.get("error") {
            return Err(DecodeError::Provider(ProviderError::from_value(error)));
        }
        if value.get("message").is_none() {
            return Err(DecodeError::Shape { expected: "a chat response with `message`" });
        }
        let mut core = Core::new(self.decode.clone());
        let out = &mut Vec::new();
        on_chunk(&mut core, &mut value, out);
        Ok(core.end(out))
    }

    fn stream(&self) -> Box<dyn StreamSession> {
        let core = Core::new(self.decode.clone());
        Box::new(Session::new(NdjsonParser::default(), core, OllamaProtocol))
    }

    fn assistant_message(&self, decoded: &Decoded) -> Value {
        let mut message = Map::new();
        message.insert("role".to_owned(), json!("assistant"));
        message.insert("content".to_owned(), json!(decoded.text));
        if !decoded.calls.is_empty() {
            let calls = decoded
                .calls
                .iter()
                .enumerate()
                .map(|(index, call)| {
                    let arguments = call.arguments.value().cloned().unwrap_or_else(|| json!({}));
                    json!({
                        "type": "function",
                        "function": {"index": index, "name": call.name, "arguments": arguments},
                    })
                })
                .collect();
            message.insert("tool_calls".to_owned(), Value::Array(calls));
        }
        Value::Object(message)
    }

    /// One `{"role": "tool", "tool_name", "content"}` message per result, its content the
    /// result's text ([`ToolResult::content_text`]) and its images, when it has any, in
    /// `images` as base64 (Ollama's own way of taking images in any message). Audio and files
    /// have no form here: a line of the content names what was left out (kind, MIME type,
    /// size).
    fn result_messages(&self, results: &[ToolResult]) -> Result<Vec<Value>, EncodeError> {
        let mut messages = Vec::with_capacity(results.len());
        for result in results {
            let mut message = Map::new();
            message.insert("role".to_owned(), json!("tool"));
            message.insert("tool_name".to_owned(), json!(result.name));
            let mut content = result.content_text();
            let mut images = Vec::new();
            if let ToolOutcome::Done(output) = &result.outcome {
                for (index, part) in output.parts().iter().enumerate() {
                    match part {
                        Part::Image(media) => {
                            images.push(Value::String(parts::base64(&media.data)))
                        }
                        part if parts::is_binary(part) => {
                            if !content.is_empty() {
                                content.push('\n');
                            }
                            content.push_str(&parts::left_out(Provider::Ollama, index, part));
                        }
                        _ => {}
                    }
                }
            }
            message.insert("content".to_owned(), Value::String(content));
            if !images.is_empty() {
                message.insert("images".to_owned(), Value::Array(images));
            }
            messages.push(Value::Object(message));
        }
        Ok(messages)
    }
}

/// The canonical reason for a `done_reason`.
fn finish(reason: Option<&str>) -> Finish {
    let canonical = match reason {
        None | Some("stop") => FinishReason::Stop,
        Some("length") => FinishReason::Length,
        Some(_) => FinishReason::Other,
    };
    Finish::new(canonical, reason)
}

/// One response object, whole or one line of a stream. Each call's `arguments` are taken out of
/// `chunk`, not copied: they can be the bulk of it.
fn on_chunk(core: &mut Core, chunk: &mut Value, out: &mut Vec<StreamEvent>) {
    if let Some(error) = chunk.get("error") {
        core.recognised += 1;
        core.problem(Problem::Provider(ProviderError::from_value(error)), out);
        core.finish(Finish::new(FinishReason::Error, Some("error")), out);
        return;
    }
    let message = chunk.get("message");
    if message.is_none() && chunk.get("done").is_none() {
        core.problem(Problem::UnexpectedPayload { expected: "an Ollama chat response" }, out);
        return;
    }
    core.recognised += 1;
    let done = chunk.get("done").and_then(Value::as_bool) == Some(true);
    let done = done.then(|| finish(str_at(chunk, "done_reason")));
    if let Some(message) = chunk.get_mut("message") {
        core.text(str_at(message, "content").unwrap_or_default(), out);
        let calls = message.get_mut("tool_calls").and_then(Value::as_array_mut);
        for call in calls.map(Vec::as_mut_slice).unwrap_or_default() {
            let slot = core.open();
            if let Some(id) = str_at(call, "id").filter(|id| !id.is_empty()) {
                core.set_id(slot, id, out);
            }
            let function = call.get_mut("function");
            let name = function.as_deref().and_then(|function| str_at(function, "name"));
            core.push_name(slot, name.unwrap_or_default(), out);
            match function.and_then(|function| function.get_mut("arguments")) {
                Some(Value::String(text)) => core.push_args(slot, text, out),
                Some(Value::Null) | None => core.set_object(slot, json!({}), true, out),
                Some(arguments) => core.set_object(slot, arguments.take(), true, out),
            }
        }
    }
    core.usage(count_at(chunk, "prompt_eval_count"), count_at(chunk, "eval_count"), out);
    if let Some(done) = done {
        core.finish(done, out);
    }
}

/// Stream state: none beyond the shared assembly, since calls arrive whole.
#[derive(Debug)]
struct OllamaProtocol;

impl Protocol for OllamaProtocol {
    fn on_frame(&mut self, core: &mut Core, frame: Frame, out: &mut Vec<StreamEvent>) {
        if let Some(mut chunk) = payload(core, &frame.data, out) {
            on_chunk(core, &mut chunk, out);
        }
    }
}
