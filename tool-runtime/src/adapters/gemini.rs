//! Google Gemini (`models/*:generateContent`, `:streamGenerateContent?alt=sse`).
//!
//! - Definitions: `tools: [{"functionDeclarations": [{"name", "description", "parameters"}]}]`
//!   with `parameters` in Gemini's OpenAPI subset, or `parametersJsonSchema` with the JSON
//!   Schema unchanged. Choice: `toolConfig.functionCallingConfig` with `mode` (`AUTO`, `NONE`,
//!   `ANY`) and `allowedFunctionNames`; there is no switch for parallel calls.
//! - Responses: `candidates[0].content.parts[]`; a call is a part
//!   `{"functionCall": {"name", "args", "id"?}, "thoughtSignature"?}` (whole, never split);
//!   `finishReason` is `STOP` even when functions were called.
//! - Streams: SSE `data:` lines, each a whole `GenerateContentResponse`. A whole body may also
//!   be the JSON array `streamGenerateContent` returns without `alt=sse`.
//! - Results: one `user` content with a `functionResponse` part (`name`, `id` when the call
//!   had one, `response: {"output": ...}` or `{"error": ...}`, and images and PDFs as
//!   `parts: [{"inlineData": ...}]`) per result. The model's turn is
//!   echoed with each part's `thoughtSignature`, which Gemini requires back.

use serde_json::{Map, Value, json};

use crate::content::{Part, Resource, ResourceBody};
use crate::conversation::{
    ChoiceMode, Decoded, Finish, FinishReason, Message, ModelRequest, Problem, ProviderError,
    RequestOptions, StreamEvent, ToolChoice, ToolOutcome, ToolResult,
};
use crate::spec::ToolSpec;

use super::assemble::{Core, DecodeOptions};
use super::budget::gemini_declarations;
use super::error::{DecodeError, EncodeError};
use super::framing::Frame;
use super::parts::{self, object};
use super::request;
use super::session::{Protocol, Session, StreamSession, body, count_at, payload, str_at};
use super::sse::SseParser;
use super::{Adapter, Provider, input_schema, lower, named};

/// Which field of a function declaration carries the parameters.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum GeminiParameters {
    /// `parameters`, lowered to Gemini's OpenAPI subset.
    #[default]
    OpenApi,
    /// `parametersJsonSchema`, the JSON Schema as it is.
    JsonSchema,
}

/// The Gemini adapter.
///
/// ```
/// use tool_runtime::adapters::{Adapter, Gemini, IdOrigin};
///
/// let decoded = Gemini::new()
///     .decode(br#"{"candidates": [{"content": {"role": "model", "parts": [
///         {"functionCall": {"name": "core__get_current_time", "args": {}}, "thoughtSignature": "c2ln"}]},
///         "finishReason": "STOP"}]}"#)
///     .unwrap();
/// let call = &decoded.calls[0];
/// assert_eq!(call.id_origin, IdOrigin::Minted);
/// assert_eq!(call.extras.get("thoughtSignature"), Some(&serde_json::json!("c2ln")));
/// ```
#[derive(Debug, Clone, Default)]
pub struct Gemini {
    parameters: GeminiParameters,
    decode: DecodeOptions,
}

impl Gemini {
    /// `parameters` in the OpenAPI subset, default decoding.
    #[must_use]
    pub fn new() -> Self {
        Self::default()
    }

    /// Which declaration field carries the parameters.
    #[must_use]
    pub fn parameters(self, parameters: GeminiParameters) -> Self {
        Self { parameters, ..self }
    }

    /// How ids are minted and which tools were declared.
    #[must_use]
    pub fn decode_options(self, decode: DecodeOptions) -> Self {
        Self { decode, ..self }
    }
}

impl Adapter for Gemini {
    fn provider(&self) -> Provider {
        Provider::Gemini
    }

    /// One function declaration.
    fn tool(&self, spec: &ToolSpec) -> Result<Value, EncodeError> {
        let schema = input_schema(spec, Provider::Gemini)?;
        let parameters = match self.parameters {
            GeminiParameters::JsonSchema => Some(("parametersJsonSchema", Value::Object(schema))),
            // A function without parameters leaves `parameters` out: Gemini refuses an
            // `OBJECT` without properties.
            GeminiParameters::OpenApi => {
                let empty =
                    schema.get("properties").and_then(Value::as_object).is_none_or(Map::is_empty);
                (!empty).then(|| ("parameters", Value::Object(lower::gemini_openapi(&schema))))
            }
        };
        Ok(Value::Object(named(spec, parameters)))
    }

    fn tools(&self, specs: &[&ToolSpec]) -> Result<Value, EncodeError> {
        let names: Vec<&str> = specs.iter().map(|spec| spec.name()).collect();
        gemini_declarations(&names)?;
        let declarations =
            specs.iter().map(|spec| self.tool(spec)).collect::<Result<Vec<_>, _>>()?;
        Ok(json!([{"functionDeclarations": declarations}]))
    }

    fn tool_choice(&self, choice: &ToolChoice) -> Result<Map<String, Value>, EncodeError> {
        if choice.parallel == Some(false) {
            return Err(EncodeError::Unsupported {
                provider: Provider::Gemini,
                feature: "turning parallel function calls off",
            });
        }
        let config = match &choice.mode {
            ChoiceMode::Auto => json!({"mode": "AUTO"}),
            ChoiceMode::None => json!({"mode": "NONE"}),
            ChoiceMode::Required => json!({"mode": "ANY"}),
            ChoiceMode::Tool(name) => json!({"mode": "ANY", "allowedFunctionNames": [name]}),
            // https://ai.google.dev/api/caching#FunctionCallingConfig: names are allowed with
            // `ANY` and `VALIDATED` only.
            ChoiceMode::Allowed { tools, required } => {
                let mode = if *required { "ANY" } else { "VALIDATED" };
                json!({"mode": mode, "allowedFunctionNames": tools})
            }
            ChoiceMode::Validated => json!({"mode": "VALIDATED"}),
        };
        let mut fields = Map::new();
        fields.insert("toolConfig".to_owned(), json!({"functionCallingConfig": config}));
        Ok(fields)
    }

    /// `systemInstruction` (the system messages joined by blank lines), `contents` (one
    /// content per turn, consecutive ones of a role merged), the tool fields, and
    /// `generationConfig.maxOutputTokens` when set. The model and streaming are chosen by the
    /// URL (`models/{model}:streamGenerateContent?alt=sse`), not the body.
    fn encode_request(
        &self,
        request: &ModelRequest<'_>,
        options: &RequestOptions,
    ) -> Result<Map<String, Value>, EncodeError> {
        let mut contents: Vec<Value> = Vec::with_capacity(request.messages.len());
        let mut append = |content: Value| request::append(&mut contents, "parts", content);
        for message in request.messages {
            match message {
                Message::System(_) => {}
                Message::User(text) | Message::Notice(text) if text.is_empty() => {}
                // A notice has no place of its own: a text part of the turn it follows (after
                // tool results, beside their function responses).
                Message::User(text) | Message::Notice(text) => {
                    append(json!({"role": "user", "parts": [{"text": text}]}));
                }
                Message::Assistant(decoded) => append(self.assistant_message(decoded)),
                Message::ToolResults(results) => {
                    self.result_messages(results)?.into_iter().for_each(&mut append);
                }
            }
        }
        let mut fields = Map::new();
        if let Some(system) = request::system_text(request.messages) {
            fields.insert("systemInstruction".to_owned(), json!({"parts": [{"text": system}]}));
        }
        fields.insert("contents".to_owned(), Value::Array(contents));
        // The application's tool search is a function here: the tools it finds are offered
        // from then on, after the others.
        let search_tool = request.search.map(|search| search.tool());
        let specs = request::with_search_tool(search_tool.as_ref(), request);
        fields.extend(self.request(&specs, request.choice)?);
        let mut body = request::body(options, fields);
        if let Some(max_tokens) = options.max_tokens {
            request::insert_nested(
                &mut body,
                "generationConfig",
                "maxOutputTokens",
                json!(max_tokens),
            );
        }
        Ok(body)
    }

    fn decode(&self, bytes: &[u8]) -> Result<Decoded, DecodeError> {
        let mut value = body(bytes)?;
        let chunks = match &mut value {
            Value::Array(chunks) => chunks.as_mut_slice(),
            single => std::slice::from_mut(single),
        };
        if let [single] = chunks
            && let Some(error) = single.get("error")
        {
            return Err(DecodeError::Provider(ProviderError::from_value(error)));
        }
        if !chunks
            .iter()
            .any(|chunk| chunk.get("candidates").is_some() || chunk.get("promptFeedback").is_some())
        {
            return Err(DecodeError::Shape {
                expected: "a GenerateContentResponse with `candidates`",
            });
        }
        let mut core = Core::new(self.decode.clone());
        let out = &mut Vec::new();
        for chunk in chunks {
            on_chunk(&mut core, chunk, out);
        }
        Ok(core.end(out))
    }

    fn stream(&self) -> Box<dyn StreamSession> {
        let core = Core::new(self.decode.clone());
        Box::new(Session::new(SseParser::default(), core, GeminiProtocol))
    }

    fn assistant_message(&self, decoded: &Decoded) -> Value {
        let mut parts = Vec::new();
        if !decoded.text.is_empty() {
            parts.push(json!({"text": decoded.text}));
        }
        for call in &decoded.calls {
            let mut function = Map::new();
            if let Some(id) = call.extras.get("id") {
                function.insert("id".to_owned(), id.clone());
            }
            function.insert("name".to_owned(), json!(call.name));
            function.insert(
                "args".to_owned(),
                call.arguments.value().cloned().unwrap_or_else(|| json!({})),
            );
            let mut part = Map::new();
            part.insert("functionCall".to_owned(), Value::Object(function));
            if let Some(signature) = call.extras.get("thoughtSignature") {
                part.insert("thoughtSignature".to_owned(), signature.clone());
            }
            parts.push(Value::Object(part));
        }
        json!({"role": "model", "parts": parts})
    }

    /// One `user` content with a `functionResponse` part (`id` when the call had one,
    /// `name`, `response`, `parts`) per result. `response` is `{"output": <value>}` for a
    /// structured value alone, `{"output": <text>}` for text ([`ToolResult::content_text`]),
    /// `{}` for bytes alone and `{"error": ...}` for a failure; images (PNG, JPEG, WebP) and PDF
    /// files go in `parts` as `{"inlineData": {"mimeType", "data"}}`, Gemini's multimodal
    /// function responses. Audio and other bytes have no form here: the response's
    /// `left_out` (an array of text) names what was left out (kind, MIME type, size).
    fn result_messages(&self, results: &[ToolResult]) -> Result<Vec<Value>, EncodeError> {
        if results.is_empty() {
            return Ok(Vec::new());
        }
        let mut responses = Vec::with_capacity(results.len());
        for result in results {
            let mut response = Map::new();
            if let Some(id) = result.extras.get("id") {
                response.insert("id".to_owned(), id.clone());
            }
            response.insert("name".to_owned(), json!(result.name));
            let mut inline = Vec::new();
            let mut left_out = Vec::new();
            let body = match &result.outcome {
                ToolOutcome::Done(output) => {
                    for (index, part) in output.parts().iter().enumerate() {
                        match inline_data(part) {
                            Some(data) => inline.push(data),
                            None if parts::is_binary(part) => left_out.push(Value::String(
                                parts::left_out(Provider::Gemini, index, part),
                            )),
                            None => {}
                        }
                    }
                    let mut texts = output.parts().iter().filter(|part| !parts::is_binary(part));
                    let mut body = match (texts.next(), texts.next()) {
                        (Some(Part::Json(value)), None) => object([("output", value.clone())]),
                        (None, _) => json!({}),
                        _ => object([("output", Value::String(result.content_text()))]),
                    };
                    if !left_out.is_empty()
                        && let Value::Object(body) = &mut body
                    {
                        body.insert("left_out".to_owned(), Value::Array(left_out));
                    }
                    body
                }
                ToolOutcome::Failed(_) => Value::Object(result.error_object()),
            };
            response.insert("response".to_owned(), body);
            if !inline.is_empty() {
                response.insert("parts".to_owned(), Value::Array(inline));
            }
            responses.push(object([("functionResponse", Value::Object(response))]));
        }
        Ok(vec![object([("role", json!("user")), ("parts", Value::Array(responses))])])
    }
}

/// A part as a `functionResponse` part, if it is bytes Gemini takes there.
fn inline_data(part: &Part) -> Option<Value> {
    let (mime, bytes) = match (part, parts::resource(part)) {
        (Part::Image(media), _)
            if matches!(media.mime_type.as_str(), "image/png" | "image/jpeg" | "image/webp") =>
        {
            (media.mime_type.as_str(), &media.data)
        }
        (_, Some(Resource { mime_type: Some(mime), body: ResourceBody::Bytes(bytes), .. }))
            if mime == "application/pdf" =>
        {
            (mime.as_str(), bytes)
        }
        _ => return None,
    };
    let data = object([("mimeType", json!(mime)), ("data", parts::base64(bytes).into())]);
    Some(object([("inlineData", data)]))
}

/// The canonical reason for a `finishReason`.
fn finish(reason: &str) -> Finish {
    let canonical = match reason {
        "STOP" => FinishReason::Stop,
        "MAX_TOKENS" => FinishReason::Length,
        "SAFETY" | "RECITATION" | "LANGUAGE" | "BLOCKLIST" | "PROHIBITED_CONTENT" | "SPII"
        | "IMAGE_SAFETY" => FinishReason::ContentFilter,
        _ => FinishReason::Other,
    };
    Finish::new(canonical, Some(reason))
}

/// One `GenerateContentResponse`, whole or one chunk of a stream. Each call's `args` are
/// taken out of `chunk`, not copied: they can be the bulk of it.
fn on_chunk(core: &mut Core, chunk: &mut Value, out: &mut Vec<StreamEvent>) {
    if let Some(error) = chunk.get("error") {
        core.recognised += 1;
        core.problem(Problem::Provider(ProviderError::from_value(error)), out);
        core.finish(Finish::new(FinishReason::Error, Some("error")), out);
        return;
    }
    let Some(chunk) = chunk.as_object_mut().filter(|chunk| {
        chunk.get("candidates").is_some_and(Value::is_array)
            || chunk.contains_key("promptFeedback")
            || chunk.contains_key("usageMetadata")
    }) else {
        core.problem(Problem::UnexpectedPayload { expected: "a GenerateContentResponse" }, out);
        return;
    };
    if let Some(usage) = chunk.get("usageMetadata") {
        // Thinking tokens are written and billed like the answer's.
        let written =
            [count_at(usage, "candidatesTokenCount"), count_at(usage, "thoughtsTokenCount")];
        let output = written.iter().flatten().copied().reduce(u64::saturating_add);
        core.usage(count_at(usage, "promptTokenCount"), output, out);
    }
    let feedback = chunk.get("promptFeedback");
    let block_reason = feedback.and_then(|feedback| str_at(feedback, "blockReason"));
    let block_reason = block_reason.map(str::to_owned);
    core.recognised += 1;
    let candidate =
        chunk.get_mut("candidates").and_then(Value::as_array_mut).and_then(|candidates| {
            candidates
                .iter_mut()
                .find(|candidate| candidate.get("index").and_then(Value::as_u64).unwrap_or(0) == 0)
        });
    let Some(candidate) = candidate else {
        if let Some(reason) = block_reason {
            core.finish(Finish::new(FinishReason::ContentFilter, Some(&reason)), out);
        }
        return;
    };
    let parts = candidate.pointer_mut("/content/parts").and_then(Value::as_array_mut);
    for part in parts.map(Vec::as_mut_slice).unwrap_or_default() {
        if let Some(call) = part.get("functionCall") {
            let slot = core.open();
            if let Some(id) = str_at(call, "id").filter(|id| !id.is_empty()) {
                core.set_id(slot, id, out);
                if let Some(extras) = core.extras_mut(slot) {
                    extras.insert("id", json!(id));
                }
            }
            core.push_name(slot, str_at(call, "name").unwrap_or_default(), out);
            if let (Some(signature), Some(extras)) =
                (part.get("thoughtSignature"), core.extras_mut(slot))
            {
                extras.insert("thoughtSignature", signature.clone());
            }
            let args = part.get_mut("functionCall").and_then(|call| call.get_mut("args"));
            core.set_object(slot, args.map_or_else(|| json!({}), Value::take), true, out);
        } else if part.get("thought").and_then(Value::as_bool) != Some(true) {
            core.text(str_at(part, "text").unwrap_or_default(), out);
        }
    }
    if let Some(reason) = str_at(candidate, "finishReason") {
        core.finish(finish(reason), out);
    }
}

/// Stream state: none beyond the shared assembly, since calls arrive whole.
#[derive(Debug)]
struct GeminiProtocol;

impl Protocol for GeminiProtocol {
    fn on_frame(&mut self, core: &mut Core, frame: Frame, out: &mut Vec<StreamEvent>) {
        if let Some(mut chunk) = payload(core, &frame.data, out) {
            on_chunk(core, &mut chunk, out);
        }
    }
}
