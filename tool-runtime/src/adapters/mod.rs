//! Provider adapters: the only place wire formats live.
//!
//! The canonical types are semantic and live in [`conversation`](crate::conversation)
//! ([`ModelRequest`], [`Message`], [`RequestOptions`], [`ToolCall`], [`Decoded`], [`Finish`],
//! [`Usage`], [`ToolResult`], [`ToolChoice`]; re-exported here, so one import brings a codec
//! and the words it speaks); each provider has one file that encodes a whole request (conversation, [`ToolSpec`]s lowered into
//! its tool definitions, tool choice, options) and decodes its responses (whole, or streamed
//! through a [`StreamSession`]): calls, text, finish reason and usage. A model client is
//! transport only. Every adapter implements [`Adapter`]:
//!
//! | provider | type | stream framing |
//! | --- | --- | --- |
//! | OpenAI Chat Completions | [`OpenAiChat`] | SSE |
//! | OpenAI Responses | [`OpenAiResponses`] | SSE |
//! | Anthropic Messages | [`Anthropic`] | SSE |
//! | Google Gemini | [`Gemini`] | SSE (`alt=sse`) |
//! | Ollama `/api/chat` | [`Ollama`] | NDJSON |
//!
//! **Lowering** is total, because schemas have no unions or references: OpenAI strict mode
//! makes every property required and the optional ones nullable; Anthropic leaves optional
//! properties out of `required`; Gemini's `parameters` get one `type` plus `nullable`. What a
//! dialect cannot carry moves into the description. Request-wide limits are checked before
//! anything is sent ([`BudgetError`] names the tool). Lowering can change what a model sends
//! (`null` for a property it left out); decoding with the request's specs
//! ([`Adapter::decode_for`], [`Adapter::stream_for`]) raises that back, so arguments validate
//! against the original schema. That is the one decode path that raises, the one a model
//! client uses; nothing raises a decoded turn again (the agent loop takes it as it is).
//! ([`raise_arguments`] and [`Decoded::raise`] do the same for a response decoded by hand.)
//!
//! **Decoding** assembles calls in linear time: argument text is appended as it arrives and
//! parsed once, strictly, when the turn finishes. Nothing is guessed: `""` means `{}`, invalid
//! or doubled arguments are kept raw with the reason ([`CallArguments::Invalid`]), duplicate
//! ids are re-minted ([`IdOrigin`]), and calls of a cut-off turn are never
//! [ready](StreamEvent::CallReady) or [executable](ToolCall::is_executable). No input makes a
//! decoder panic; what is wrong is a [`Problem`].
//!
//! **Results** go back with every part in the provider's own blocks
//! ([`Adapter::result_messages`]): text as text, images, audio and files as base64 written once
//! into the string that goes on the wire (OpenAI Chat, whose tool messages take text only,
//! sends them in one user message after the turn's tool messages, naming the calls). A part a
//! provider has no form for (audio for Anthropic, a TIFF image) is never dropped silently and
//! never fails the request: in its place the model reads a note naming what was left out, e.g.
//! `[part 1 of this result left out: audio, audio/ogg, 5120 bytes; Anthropic Messages cannot
//! carry it]` (each adapter's [`Adapter::result_messages`] says where the note goes). Details
//! never reach the model.
//!
//! **Local models** without native tool calling get a grammar instead of tool definitions:
//! [`Grammar`](crate::gbnf::Grammar) (in [`gbnf`](crate::gbnf)) turns tools' compile-time schemas into a llama.cpp GBNF grammar for one
//! call.
//!
//! # A round trip
//!
//! ```
//! use serde_json::json;
//! use tool_runtime::adapters::{
//!     Adapter, Message, ModelRequest, OpenAiChat, RequestOptions, StreamEvent, ToolChoice,
//!     ToolResult,
//! };
//! use tool_runtime::prelude::*;
//!
//! /// Search the documentation.
//! #[tool(name = "docs__search", effect = read_only, redact = ["titles"])]
//! struct Search {
//!     /// Words to look for.
//!     query: String,
//!     /// How many hits at most.
//!     #[serde(default)]
//!     limit: u8,
//! }
//!
//! #[derive(Serialize, ToolSchema)]
//! struct Hits { titles: Vec<String> }
//!
//! impl Tool for Search {
//!     type Output = Hits;
//!     async fn run(self, _: &ToolInvocationContext, _: &ToolCapabilities) -> Result<Hits, ToolError> {
//!         Ok(Hits { titles: vec![format!("About {}", self.query)] })
//!     }
//! }
//!
//! let adapter = OpenAiChat::new().strict(true);
//! let specs = [Search::spec()];
//!
//! // 1. Encode the whole request: conversation, options, `tools` and `tool_choice` (limits
//! //    checked).
//! let messages = [Message::user("Find the wire docs.")];
//! let choice = ToolChoice::auto().parallel(false);
//! let request = ModelRequest { messages: &messages, tools: &specs, choice: &choice, search: None };
//! let fields = adapter.encode_request(&request, &RequestOptions::new("gpt-4o-mini"))?;
//! assert_eq!(fields["messages"], json!([{"role": "user", "content": "Find the wire docs."}]));
//! let parameters = &fields["tools"][0]["function"]["parameters"];
//! assert_eq!(parameters["required"], json!(["query", "limit"]));
//! assert_eq!(parameters["properties"]["limit"]["type"], json!(["integer", "null"]));
//! assert_eq!(fields["parallel_tool_calls"], json!(false));
//!
//! // 2. Decode a stream, fed in whatever pieces the network delivers.
//! let stream = concat!(
//!     "data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":\"call_a\",",
//!     "\"type\":\"function\",\"function\":{\"name\":\"docs__search\",\"arguments\":\"\"}}]}}]}\n\n",
//!     "data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,",
//!     "\"function\":{\"arguments\":\"{\\\"query\\\":\\\"wire\\\",\\\"limit\\\":null}\"}}]},",
//!     "\"finish_reason\":\"tool_calls\"}]}\n\n",
//!     "data: [DONE]\n\n",
//! );
//! // Decoding with the specs raises: `null` for the defaulted `limit` means "absent" in the
//! // original schema, so it is taken out.
//! let mut session = adapter.stream_for(&specs);
//! let mut ready = 0;
//! for piece in stream.as_bytes().chunks(7) {
//!     for event in session.feed(piece) {
//!         if let StreamEvent::CallReady { .. } = event {
//!             ready += 1;
//!         }
//!     }
//! }
//! let decoded = session.finish();
//! assert_eq!(ready, 1);
//! let call = &decoded.calls[0];
//! let args = call.arguments.value().unwrap();
//! assert_eq!(args, &json!({"query": "wire"}));
//! assert!(Search::SCHEMA.is_valid(args));
//!
//! // 3. Run the calls (the runner does this) and encode the turn and its results.
//! let results: Vec<ToolResult> = decoded
//!     .executable()
//!     .map(|call| ToolResult::ok(call, json!({"titles": ["About wire"]})))
//!     .collect();
//! let messages = adapter.turn(&decoded, &results)?;
//! assert_eq!(messages[0]["tool_calls"][0]["id"], json!("call_a"));
//! assert_eq!(
//!     messages[1],
//!     json!({"role": "tool", "tool_call_id": "call_a", "content": "{\"titles\":[\"About wire\"]}"}),
//! );
//! # Ok::<(), tool_runtime::adapters::EncodeError>(())
//! ```

mod anthropic;
mod assemble;
mod budget;
mod call_ids;
mod error;
mod framing;
mod gemini;
mod grammar_chat;
mod limits;
mod lower;
mod ndjson;
mod ollama;
mod openai_chat;
mod openai_responses;
pub mod openai_sse;
mod parts;
mod raise;
mod request;
mod session;
mod sse;

use std::borrow::Cow;
use std::fmt;
use std::str::FromStr;

use serde_json::{Map, Value};

use crate::spec::ToolSpec;

pub use anthropic::Anthropic;
pub use assemble::DecodeOptions;
pub use call_ids::CallIdFormat;
pub use error::{Budget, BudgetError, DecodeError, EncodeError};
pub use gemini::{Gemini, GeminiParameters};
pub use grammar_chat::GrammarChat;
pub use limits::StreamLimits;
pub use ollama::Ollama;
pub use openai_chat::OpenAiChat;
pub use openai_responses::OpenAiResponses;

pub use raise::raise_arguments;
pub use session::StreamSession;

// The conversation model the codecs speak, here too so one import brings a codec and its words.
#[doc(no_inline)]
pub use crate::conversation::{
    ArgumentsProblem, CallArguments, ChoiceMode, ClientSearch, ConversationError,
    ConversationProblem, Decoded, DeferLoading, Extras, Finish, FinishReason, IdOrigin, Limit,
    MAX_CALL_ID_LEN, Message, ModelRequest, Problem, ProviderError, RequestOptions, SEARCH_TOOL,
    StreamEvent, ToolCall, ToolChoice, ToolOutcome, ToolResult, ToolSearch, Usage,
    check_conversation, check_ready, stored,
};

/// The providers with an adapter.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Provider {
    /// OpenAI Chat Completions (`/v1/chat/completions`).
    OpenAiChat,
    /// OpenAI Responses (`/v1/responses`).
    OpenAiResponses,
    /// Anthropic Messages (`/v1/messages`).
    Anthropic,
    /// Google Gemini (`generateContent`, `streamGenerateContent?alt=sse`).
    Gemini,
    /// Ollama's native chat (`/api/chat`).
    Ollama,
}

impl Provider {
    /// Every provider.
    pub const ALL: [Self; 5] =
        [Self::OpenAiChat, Self::OpenAiResponses, Self::Anthropic, Self::Gemini, Self::Ollama];

    /// The command-line name: `openai-chat`, `openai-responses`, `anthropic`, `gemini`,
    /// `ollama`.
    #[must_use]
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::OpenAiChat => "openai-chat",
            Self::OpenAiResponses => "openai-responses",
            Self::Anthropic => "anthropic",
            Self::Gemini => "gemini",
            Self::Ollama => "ollama",
        }
    }

    /// The name people use: `OpenAI Chat Completions`, ...
    #[must_use]
    pub const fn label(self) -> &'static str {
        match self {
            Self::OpenAiChat => "OpenAI Chat Completions",
            Self::OpenAiResponses => "OpenAI Responses",
            Self::Anthropic => "Anthropic Messages",
            Self::Gemini => "Google Gemini",
            Self::Ollama => "Ollama",
        }
    }

    /// Whether the provider's models can call tools from code they write (Anthropic's
    /// programmatic tool calling, OpenAI Responses' `programmatic` callers): where a tool
    /// whose [`Callers`](crate::spec::Callers) allow code may be offered that way.
    #[must_use]
    pub const fn calls_from_code(self) -> bool {
        matches!(self, Self::OpenAiResponses | Self::Anthropic)
    }

    /// Whether the provider has a strict (grammar-constrained) mode for tool arguments.
    #[must_use]
    pub const fn has_strict_mode(self) -> bool {
        matches!(self, Self::OpenAiChat | Self::OpenAiResponses | Self::Anthropic)
    }

    /// The provider's adapter with default settings, or in strict mode where it has one.
    ///
    /// ```
    /// use tool_runtime::adapters::Provider;
    ///
    /// let adapter = "anthropic".parse::<Provider>().unwrap().adapter(true);
    /// assert_eq!(adapter.provider(), Provider::Anthropic);
    /// ```
    #[must_use]
    pub fn adapter(self, strict: bool) -> Box<dyn Adapter> {
        match self {
            Self::OpenAiChat => Box::new(OpenAiChat::new().strict(strict)),
            Self::OpenAiResponses => Box::new(OpenAiResponses::new().strict(strict)),
            Self::Anthropic => Box::new(Anthropic::new().strict(strict)),
            Self::Gemini => Box::new(Gemini::new()),
            Self::Ollama => Box::new(Ollama::new()),
        }
    }
}

impl fmt::Display for Provider {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A name that is not one of [`Provider::as_str`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct UnknownProvider;

impl fmt::Display for UnknownProvider {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(
            "unknown provider; expected `openai-chat`, `openai-responses`, `anthropic`, `gemini` or `ollama`",
        )
    }
}

impl std::error::Error for UnknownProvider {}

impl FromStr for Provider {
    type Err = UnknownProvider;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Self::ALL.into_iter().find(|provider| provider.as_str() == s).ok_or(UnknownProvider)
    }
}

/// One provider's wire format: tool definitions and tool choice out, responses in (whole or
/// streamed), and the messages that carry the model's turn and the results back.
///
/// Object safe, so the provider can be chosen at run time ([`Provider::adapter`]).
pub trait Adapter: fmt::Debug + Send + Sync {
    /// Which provider this speaks.
    fn provider(&self) -> Provider;

    /// One tool's definition, lowered for the provider. Request-wide limits are not checked
    /// here; [`Adapter::tools`] checks them.
    ///
    /// # Errors
    ///
    /// [`EncodeError::NotAnObjectSchema`] for a run-time schema that is not an object,
    /// [`EncodeError::McpOnly`] for a tool served to MCP clients only.
    fn tool(&self, spec: &ToolSpec) -> Result<Value, EncodeError>;

    /// The value of the request's tools field (`tools`), after checking the provider's
    /// request-wide limits.
    ///
    /// # Errors
    ///
    /// [`EncodeError::Budget`] naming the tool that crosses a limit, or the errors of
    /// [`Adapter::tool`].
    fn tools(&self, specs: &[&ToolSpec]) -> Result<Value, EncodeError>;

    /// The request fields that carry `choice` (`tool_choice`, `parallel_tool_calls`,
    /// `toolConfig`).
    ///
    /// # Errors
    ///
    /// [`EncodeError::Unsupported`] when the provider cannot express the choice.
    fn tool_choice(&self, choice: &ToolChoice) -> Result<Map<String, Value>, EncodeError>;

    /// Every tool-related request field: the tools and the choice. With no specs it is empty.
    ///
    /// # Errors
    ///
    /// [`EncodeError::UnknownTool`] when `choice` names a tool not in `specs`, and the errors
    /// of [`Adapter::tools`] and [`Adapter::tool_choice`].
    fn request(
        &self,
        specs: &[&ToolSpec],
        choice: &ToolChoice,
    ) -> Result<Map<String, Value>, EncodeError> {
        check_named(specs, choice)?;
        let mut fields = Map::new();
        if specs.is_empty() {
            return Ok(fields);
        }
        fields.insert("tools".to_owned(), self.tools(specs)?);
        fields.extend(self.tool_choice(choice)?);
        Ok(fields)
    }

    /// The whole request body: the conversation, the tools, the tool choice and the options,
    /// in the provider's format. This is the one place a request is built; a model client
    /// only sends it.
    ///
    /// ```
    /// use serde_json::json;
    /// use tool_runtime::adapters::{Adapter, Anthropic, Message, ModelRequest, RequestOptions, ToolChoice};
    ///
    /// let messages = [Message::system("Be brief."), Message::user("Hello!")];
    /// let request = ModelRequest { messages: &messages, tools: &[], choice: &ToolChoice::auto(), search: None };
    /// let body = Anthropic::new().encode_request(&request, &RequestOptions::new("claude-haiku-4-5"))?;
    /// assert_eq!(body["system"], json!("Be brief."));
    /// assert_eq!(body["max_tokens"], json!(4096));
    /// assert_eq!(body["messages"], json!([{"role": "user", "content": [{"type": "text", "text": "Hello!"}]}]));
    /// # Ok::<(), tool_runtime::adapters::EncodeError>(())
    /// ```
    ///
    /// # Errors
    ///
    /// The errors of [`Adapter::request`]: a tool the provider cannot take, a limit crossed,
    /// a choice naming a tool that is not in the request.
    fn encode_request(
        &self,
        request: &ModelRequest<'_>,
        options: &RequestOptions,
    ) -> Result<Map<String, Value>, EncodeError>;

    /// [`Adapter::encode_request`] as the bytes to send, written into one buffer sized for
    /// the whole body up front (a body carrying a megabyte image is not regrown a dozen times).
    ///
    /// # Errors
    ///
    /// The errors of [`Adapter::encode_request`].
    fn encode_body(
        &self,
        request: &ModelRequest<'_>,
        options: &RequestOptions,
    ) -> Result<Vec<u8>, EncodeError> {
        Ok(self::request::to_bytes(&Value::Object(self.encode_request(request, options)?)))
    }

    /// The provider's decoder of a whole (non-streamed) response body, which
    /// [`Adapter::decode_for`] is built on. Arguments come as the model sent them, lowering
    /// and all: a model client decodes with [`Adapter::decode_for`], the decode path that
    /// raises; this one is for a body whose request's tools are not at hand (a stored turn, a
    /// fuzzer, a test of the wire format).
    ///
    /// # Errors
    ///
    /// [`DecodeError`] when the body is not JSON, not a response, or the provider's error.
    fn decode(&self, body: &[u8]) -> Result<Decoded, DecodeError>;

    /// Decodes a whole response to a request that declared `specs`: the calls of those tools
    /// are [raised](raise_arguments), so arguments lowered for the provider (a strict-mode
    /// `null` for a property the model left out) validate against the original schema.
    ///
    /// With [`Adapter::stream_for`], this is the one place a turn is raised: the decode path
    /// a model client uses (the agent's HTTP clients and scripted model do), and the agent
    /// loop does not raise the turn it gets back again.
    ///
    /// # Errors
    ///
    /// The errors of [`Adapter::decode`].
    fn decode_for(&self, specs: &[&ToolSpec], body: &[u8]) -> Result<Decoded, DecodeError> {
        let mut decoded = self.decode(body)?;
        decoded.raise(specs);
        Ok(decoded)
    }

    /// A new session of the provider's stream decoder, which [`Adapter::stream_for`] is built
    /// on. Arguments come as the model sent them, lowering and all: a model client decodes
    /// with [`Adapter::stream_for`], the decode path that raises.
    fn stream(&self) -> Box<dyn StreamSession>;

    /// A new session for one streamed response to a request that declared `specs`: the calls
    /// of [`StreamEvent::CallReady`] and of the final [`Decoded`] are
    /// [raised](raise_arguments), once (see [`Adapter::decode_for`]).
    ///
    /// ```
    /// use serde_json::json;
    /// use tool_runtime::adapters::{Adapter, OpenAiChat};
    /// use tool_runtime::prelude::*;
    ///
    /// /// Search.
    /// #[tool(name = "docs__search", effect = read_only, redact = ["hits"])]
    /// struct Search { query: String, #[serde(default)] limit: u8 }
    /// # #[derive(Serialize, ToolSchema)] struct Hits { hits: Vec<String> }
    /// # impl Tool for Search {
    /// #     type Output = Hits;
    /// #     async fn run(self, _: &ToolInvocationContext, _: &ToolCapabilities) -> Result<Hits, ToolError> {
    /// #         Ok(Hits { hits: vec![] })
    /// #     }
    /// # }
    ///
    /// let spec = Search::spec();
    /// let specs = [spec];
    /// let mut session = OpenAiChat::new().strict(true).stream_for(&specs);
    /// session.feed(concat!(
    ///     "data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":\"c1\",",
    ///     "\"function\":{\"name\":\"docs__search\",\"arguments\":\"{\\\"query\\\":\\\"x\\\",\\\"limit\\\":null}\"}}]},",
    ///     "\"finish_reason\":\"tool_calls\"}]}\n\n",
    /// ).as_bytes());
    /// let decoded = session.finish();
    /// assert_eq!(decoded.calls[0].arguments.value(), Some(&json!({"query": "x"})));
    /// ```
    fn stream_for<'s>(&self, specs: &'s [&'s ToolSpec]) -> Box<dyn StreamSession + 's> {
        Box::new(raise::RaisingSession::new(self.stream(), specs))
    }

    /// The model's turn as the provider expects it in the next request's history, with the
    /// provider extras that must round-trip (Gemini thought signatures, Anthropic thinking
    /// blocks, Responses reasoning items).
    fn assistant_message(&self, decoded: &Decoded) -> Value;

    /// The messages (or input items) that carry `results` back, every part in the
    /// provider's own form (the adapter's docs say which): text as text, images, audio and
    /// files as the provider's blocks, in base64 written once into the string that goes on
    /// the wire. A result's details never reach the model.
    ///
    /// ```
    /// use tool_runtime::adapters::{Adapter, OpenAiResponses, ToolCall, ToolResult};
    /// use tool_runtime::content::{Content, IntoToolOutput};
    ///
    /// let call = ToolCall::new("call_1", "media__screenshot", serde_json::json!({}));
    /// let output = Content::new().text("The page:").image("image/png", vec![1, 2, 3]).into_output().unwrap();
    /// let items = OpenAiResponses::new().result_messages(&[ToolResult::ok(&call, output)])?;
    /// assert_eq!(items[0]["output"][1]["image_url"], "data:image/png;base64,AQID");
    /// # Ok::<(), tool_runtime::adapters::EncodeError>(())
    /// ```
    ///
    /// A part the provider has no form for is replaced by a note naming what was left out
    /// (kind, MIME type, size), so one result never makes the conversation unusable.
    ///
    /// # Errors
    ///
    /// None of the built-in adapters fails here; the `Result` is for adapters of other
    /// providers.
    fn result_messages(&self, results: &[ToolResult]) -> Result<Vec<Value>, EncodeError>;

    /// What to append to the conversation after a turn with calls: the model's turn, then
    /// the results.
    ///
    /// # Errors
    ///
    /// The errors of [`Adapter::result_messages`].
    fn turn(&self, decoded: &Decoded, results: &[ToolResult]) -> Result<Vec<Value>, EncodeError> {
        let mut messages = vec![self.assistant_message(decoded)];
        messages.extend(self.result_messages(results)?);
        Ok(messages)
    }
}

/// [`EncodeError::UnknownTool`] for the first tool `choice` names that is not among `specs`.
fn check_named(specs: &[&ToolSpec], choice: &ToolChoice) -> Result<(), EncodeError> {
    match choice.named_tools().iter().find(|name| !specs.iter().any(|spec| spec.name() == *name)) {
        Some(name) => Err(EncodeError::UnknownTool(name.clone())),
        None => Ok(()),
    }
}

/// A tool's input schema as a JSON object schema; refused for a tool no model is offered, and
/// for a tool only code may call when `provider`'s models cannot call tools from code.
fn input_schema(spec: &ToolSpec, provider: Provider) -> Result<Map<String, Value>, EncodeError> {
    if spec.is_mcp_only() {
        return Err(EncodeError::McpOnly(spec.name().to_owned()));
    }
    if !spec.callers().allows_direct() && !provider.calls_from_code() {
        return Err(EncodeError::CodeOnly { provider, tool: spec.name().to_owned() });
    }
    match spec.input_schema().to_json() {
        Value::Object(schema) if schema.get("type").and_then(Value::as_str) == Some("object") => {
            Ok(schema)
        }
        _ => Err(EncodeError::NotAnObjectSchema(spec.name().to_owned())),
    }
}

/// `{"name": ..., "description": ...}` plus `rest`, the description left out when empty.
fn named(
    spec: &ToolSpec,
    rest: impl IntoIterator<Item = (&'static str, Value)>,
) -> Map<String, Value> {
    named_with(spec, Examples::InDescription, rest)
}

/// Where a tool definition carries the tool's [examples](ToolSpec::examples).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Examples {
    /// At the end of the description, for providers without a field for them.
    InDescription,
    /// In a field of their own (Anthropic's `input_examples`), so not in the description.
    Field,
}

fn named_with(
    spec: &ToolSpec,
    examples: Examples,
    rest: impl IntoIterator<Item = (&'static str, Value)>,
) -> Map<String, Value> {
    let mut out = Map::new();
    out.insert("name".to_owned(), Value::String(spec.name().to_owned()));
    let description = match examples {
        Examples::InDescription => spec.description_with_examples(),
        Examples::Field => Cow::Borrowed(spec.description()),
    };
    if !description.is_empty() {
        out.insert("description".to_owned(), Value::String(description.into_owned()));
    }
    for (key, value) in rest {
        out.insert(key.to_owned(), value);
    }
    out
}
