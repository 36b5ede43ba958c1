//! OpenAI Chat Completions for a model without native tool calling, constrained by a GBNF
//! grammar: llama.cpp's `llama-server` (`POST /v1/chat/completions` with its `grammar` field).
//!
//! - Definitions: no `tools` field. The tools are described in a system message (name,
//!   description, input schema) with how to call one: answer with only
//!   `{"name": "<tool>", "arguments": {...}}`.
//! - Choice: when a call is required (`required`, a named tool, `allowed` with `required`,
//!   `validated`), the request carries `grammar`, the [GBNF grammar](crate::gbnf) of a call to
//!   one of those tools, so the server can only sample a well-formed call. Under `auto` the
//!   model may answer in text or write a call; under `none` the tools are not described.
//! - Responses: a chat completion whose text is a call (a JSON object with a string `name` and
//!   an object `arguments`) is decoded as that call (id `call_1`, minted), finished
//!   `tool_calls`; any other text is the answer. The call then goes through validation and the
//!   runner like any provider's.
//! - Conversation: the model's calls go back as the JSON text it wrote, one per line; each
//!   result as a `user` message naming the call's tool.
//! - Requests are not streamed (`"stream": false`): a grammar-sampled call is read whole.

use serde_json::{Map, Value, json};

use crate::conversation::{
    ChoiceMode, Decoded, Finish, FinishReason, IdOrigin, Message, ModelRequest, RequestOptions,
    ToolCall, ToolChoice, ToolResult,
};
use crate::gbnf::{Grammar, GrammarError};
use crate::spec::ToolSpec;

use super::error::{DecodeError, EncodeError};
use super::session::StreamSession;
use super::{Adapter, OpenAiChat, Provider, input_schema, request};

/// The adapter for a chat server that samples under a grammar (llama.cpp's `llama-server`):
/// the tools are described to the model in a system message, and when a call is required the
/// request carries the [GBNF grammar](crate::gbnf) of a call to one of them in `grammar`, so
/// the server can only sample `{"name": ..., "arguments": {...}}`; a completion whose text is
/// such a call is decoded as one (id `call_1`) and goes through validation and the runner like
/// any provider's. The model's calls go back as the text it wrote, each result as a `user`
/// message naming the tool; requests are not streamed.
///
/// ```
/// use serde_json::json;
/// use tool_runtime::adapters::{Adapter, GrammarChat};
///
/// let decoded = GrammarChat::new()
///     .decode(br#"{"choices": [{"index": 0, "message": {"role": "assistant",
///         "content": "{\"name\": \"core__get_current_time\", \"arguments\": {\"timezone\": \"UTC\"}}"},
///         "finish_reason": "stop"}]}"#)
///     .unwrap();
/// assert_eq!(decoded.calls[0].name, "core__get_current_time");
/// assert_eq!(decoded.calls[0].arguments.value(), Some(&json!({"timezone": "UTC"})));
/// assert!(decoded.text.is_empty());
/// ```
#[derive(Debug, Clone, Default)]
pub struct GrammarChat {
    chat: OpenAiChat,
}

impl GrammarChat {
    /// The adapter.
    #[must_use]
    pub fn new() -> Self {
        Self::default()
    }

    /// The grammar a request carries: a call to one of the tools `choice` requires a call to,
    /// or none when it requires none.
    ///
    /// # Errors
    ///
    /// [`EncodeError::Unsupported`] for a tool no grammar can be built for (a schema known
    /// only at run time, one no value satisfies).
    pub fn grammar(
        &self,
        specs: &[&ToolSpec],
        choice: &ToolChoice,
    ) -> Result<Option<Grammar>, EncodeError> {
        let required: Vec<&ToolSpec> = match &choice.mode {
            ChoiceMode::Auto | ChoiceMode::None => return Ok(None),
            ChoiceMode::Required | ChoiceMode::Validated => specs.to_vec(),
            ChoiceMode::Tool(name) => {
                specs.iter().copied().filter(|spec| spec.name() == name).collect()
            }
            ChoiceMode::Allowed { required: false, .. } => return Ok(None),
            ChoiceMode::Allowed { tools, required: true } => specs
                .iter()
                .copied()
                .filter(|spec| tools.iter().any(|name| name == spec.name()))
                .collect(),
        };
        match Grammar::for_tools(&required) {
            Ok(grammar) => Ok(Some(grammar)),
            Err(GrammarError::NoTools) => Ok(None),
            Err(GrammarError::RuntimeSchema { .. }) => Err(EncodeError::Unsupported {
                provider: Provider::OpenAiChat,
                feature: "a required call to a tool whose schema is known only at run time (a grammar is built from compile-time schemas)",
            }),
            Err(_) => Err(EncodeError::Unsupported {
                provider: Provider::OpenAiChat,
                feature: "a required call to a tool whose schema no grammar can express",
            }),
        }
    }
}

/// How the model is told to call a tool, before the tools themselves.
const HOW_TO_CALL: &str = "You can call the tools below. To call one, answer with only a JSON object, nothing before or after it: {\"name\": \"<tool name>\", \"arguments\": {<arguments>}}. Otherwise answer in plain text.";

/// The system message describing `specs`: how to call, then each tool's name, description and
/// input schema.
fn tools_text(specs: &[&ToolSpec]) -> Result<String, EncodeError> {
    let mut text = String::from(HOW_TO_CALL);
    for spec in specs {
        let schema = Value::Object(input_schema(spec, Provider::OpenAiChat)?);
        text.push_str(&format!(
            "\n\nTool `{}`: {}\nArguments (JSON Schema): {schema}",
            spec.name(),
            spec.description()
        ));
    }
    Ok(text)
}

/// The call the text is, if it is one: a JSON object with a string `name` and an object
/// `arguments`, nothing around it.
fn call_of(text: &str) -> Option<ToolCall> {
    let text = text.trim();
    if !text.starts_with('{') {
        return None;
    }
    let Value::Object(mut object) = serde_json::from_str::<Value>(text).ok()? else { return None };
    let Some(Value::String(name)) = object.remove("name") else { return None };
    let arguments @ Value::Object(_) = object.remove("arguments")? else { return None };
    if !object.is_empty() {
        return None;
    }
    let mut call = ToolCall::new("call_1", name, arguments);
    call.id_origin = IdOrigin::Minted;
    Some(call)
}

/// A call as the model writes it.
fn call_text(call: &ToolCall) -> String {
    let arguments = call.arguments.value().cloned().unwrap_or_else(|| json!({}));
    json!({"name": call.name, "arguments": arguments}).to_string()
}

impl Adapter for GrammarChat {
    fn provider(&self) -> Provider {
        Provider::OpenAiChat
    }

    /// `{"name", "description", "parameters"}`: what the system message says of the tool.
    fn tool(&self, spec: &ToolSpec) -> Result<Value, EncodeError> {
        Ok(json!({
            "name": spec.name(),
            "description": spec.description(),
            "parameters": Value::Object(input_schema(spec, Provider::OpenAiChat)?),
        }))
    }

    fn tools(&self, specs: &[&ToolSpec]) -> Result<Value, EncodeError> {
        specs.iter().map(|spec| self.tool(spec)).collect::<Result<Vec<_>, _>>().map(Value::Array)
    }

    /// Nothing: the choice is the grammar, which needs the tools ([`GrammarChat::grammar`]).
    fn tool_choice(&self, _: &ToolChoice) -> Result<Map<String, Value>, EncodeError> {
        Ok(Map::new())
    }

    /// `model`, `messages` (a system message with the instructions and the tools first),
    /// `"stream": false`, `max_tokens` when set, and `grammar` when a call is required.
    fn encode_request(
        &self,
        request: &ModelRequest<'_>,
        options: &RequestOptions,
    ) -> Result<Map<String, Value>, EncodeError> {
        // The application's tool search is a tool like the others here.
        let search_tool = request.search.map(|search| search.tool());
        let tools = request::with_search_tool(search_tool.as_ref(), request);
        super::check_named(&tools, request.choice)?;
        let described = !tools.is_empty() && request.choice.mode != ChoiceMode::None;
        let mut system: Vec<String> = request::system_text(request.messages).into_iter().collect();
        if described {
            system.push(tools_text(&tools)?);
        }
        let mut messages = Vec::with_capacity(request.messages.len() + 1);
        if !system.is_empty() {
            messages.push(json!({"role": "system", "content": system.join("\n\n")}));
        }
        for message in request.messages {
            match message {
                Message::System(_) => {}
                Message::User(text) => messages.push(json!({"role": "user", "content": text})),
                Message::Notice(text) => messages.push(json!({"role": "system", "content": text})),
                Message::Assistant(decoded) => messages.push(self.assistant_message(decoded)),
                Message::ToolResults(results) => messages.extend(self.result_messages(results)?),
            }
        }
        let mut fields = Map::new();
        fields.insert("model".to_owned(), json!(options.model));
        fields.insert("messages".to_owned(), Value::Array(messages));
        fields.insert("stream".to_owned(), Value::Bool(false));
        if let Some(max_tokens) = options.max_tokens {
            fields.insert("max_tokens".to_owned(), json!(max_tokens));
        }
        if let Some(grammar) = self.grammar(&tools, request.choice)? {
            fields.insert("grammar".to_owned(), Value::String(grammar.as_str().to_owned()));
        }
        Ok(request::body(options, fields))
    }

    /// A chat completion; text that is a call becomes the turn's call.
    fn decode(&self, body: &[u8]) -> Result<Decoded, DecodeError> {
        let mut decoded = self.chat.decode(body)?;
        if decoded.calls.is_empty()
            && let Some(call) = call_of(&decoded.text)
        {
            decoded.calls.push(call);
            decoded.text.clear();
            let provider = decoded.finish.provider_reason.take();
            if decoded.finish.reason == FinishReason::Stop {
                decoded.finish = Finish::new(FinishReason::ToolCalls, provider.as_deref());
            } else {
                decoded.finish.provider_reason = provider;
            }
        }
        Ok(decoded)
    }

    /// Text only: requests are not streamed, and a streamed call would be read as text.
    fn stream(&self) -> Box<dyn StreamSession> {
        self.chat.stream()
    }

    /// The model's text, or its calls as it wrote them, one per line.
    fn assistant_message(&self, decoded: &Decoded) -> Value {
        let content = if decoded.calls.is_empty() {
            decoded.text.clone()
        } else {
            decoded.calls.iter().map(call_text).collect::<Vec<_>>().join("\n")
        };
        json!({"role": "assistant", "content": content})
    }

    /// One `user` message per result, naming the call's tool (the model has no tool role).
    fn result_messages(&self, results: &[ToolResult]) -> Result<Vec<Value>, EncodeError> {
        Ok(results
            .iter()
            .map(|result| {
                let verb = if result.is_error() { "failed" } else { "returned" };
                let content =
                    format!("The tool `{}` {verb}:\n{}", result.name, result.content_text());
                json!({"role": "user", "content": content})
            })
            .collect())
    }
}
