//! OpenAI Chat Completions over HTTP, for OpenAI and the servers that speak its protocol.

use async_trait::async_trait;
use reqwest::header::{AUTHORIZATION, HeaderMap};
use serde_json::{Map, Value, json};

use super::retry::RetryPolicy;
use super::sse_body::count;
use super::transport::{Timeouts, Transport};
use super::{HttpConfigError, Settings, exchange, tool_fields};
use crate::adapters::{Adapter, OpenAiChat, StreamEvent};
use crate::agent::{ChatModel, Message, ModelError, ModelRequest, ModelTurn, Usage};

const BASE_URL: &str = "https://api.openai.com/v1";
const MODEL: &str = "gpt-4o-mini";

/// A [`ChatModel`] speaking OpenAI Chat Completions: OpenAI itself, or a local server with an
/// OpenAI-compatible `/v1` (Ollama, vLLM, llama.cpp's `llama-server`, LM Studio).
///
/// Each turn is one `POST {base}/chat/completions` with `"stream": true` and
/// `"stream_options": {"include_usage": true}`, the key (if any) as `Authorization: Bearer`.
/// The conversation is encoded by [`OpenAiChat`]: system and user messages as text, the
/// model's turns with [`Adapter::assistant_message`], results with
/// [`Adapter::result_messages`]. Usage is read from the stream's usage chunk. See the
/// [module docs](super) for retries, timeouts and what a cut stream does.
///
/// ```
/// use tool_runtime::agent::OpenAiCompatible;
///
/// // What `OpenAiCompatible::from_env()` reads, from a map instead of the environment.
/// let vars = [("OPENAI_BASE_URL", "http://127.0.0.1:8000/v1"), ("OPENAI_MODEL", "qwen")];
/// let lookup = |name: &str| vars.iter().find(|(key, _)| *key == name).map(|(_, v)| v.to_string());
/// let model = OpenAiCompatible::builder_from_vars(lookup).build()?;
/// assert_eq!(model.model(), "qwen");
/// assert_eq!(model.endpoint(), "http://127.0.0.1:8000/v1/chat/completions");
/// # Ok::<(), tool_runtime::agent::HttpConfigError>(())
/// ```
#[derive(Debug, Clone)]
pub struct OpenAiCompatible {
    transport: Transport,
    settings: Settings,
    adapter: OpenAiChat,
    include_usage: bool,
}

/// Settings of an [`OpenAiCompatible`] client; [`build`](OpenAiCompatibleBuilder::build)
/// makes the client.
#[derive(Debug, Clone)]
#[must_use]
pub struct OpenAiCompatibleBuilder {
    settings: Settings,
    adapter: OpenAiChat,
    include_usage: bool,
}

impl OpenAiCompatible {
    /// A builder with the defaults: `https://api.openai.com/v1`, no key, `gpt-4o-mini`,
    /// non-strict tools.
    pub fn builder() -> OpenAiCompatibleBuilder {
        OpenAiCompatibleBuilder {
            settings: Settings::new(BASE_URL, MODEL),
            adapter: OpenAiChat::new(),
            include_usage: true,
        }
    }

    /// A builder with `OPENAI_BASE_URL`, `OPENAI_API_KEY` and `OPENAI_MODEL` read through
    /// `var` (empty values count as unset), the defaults otherwise.
    pub fn builder_from_vars(var: impl Fn(&str) -> Option<String>) -> OpenAiCompatibleBuilder {
        let mut builder = Self::builder();
        builder.settings = builder.settings.read_vars("OPENAI", &var);
        builder
    }

    /// A builder with `OPENAI_BASE_URL`, `OPENAI_API_KEY` and `OPENAI_MODEL` read from the
    /// environment, to adjust before [`build`](OpenAiCompatibleBuilder::build).
    pub fn builder_from_env() -> OpenAiCompatibleBuilder {
        Self::builder_from_vars(|name| std::env::var(name).ok())
    }

    /// A client set up from `OPENAI_BASE_URL` (default `https://api.openai.com/v1`),
    /// `OPENAI_API_KEY` (optional, for local servers) and `OPENAI_MODEL` (default
    /// `gpt-4o-mini`).
    ///
    /// # Errors
    ///
    /// [`HttpConfigError`] for a base URL or key that cannot be used.
    pub fn from_env() -> Result<Self, HttpConfigError> {
        Self::builder_from_env().build()
    }

    /// The model's name, as sent.
    #[must_use]
    pub fn model(&self) -> &str {
        &self.settings.model
    }

    /// The URL requests go to.
    #[must_use]
    pub fn endpoint(&self) -> &str {
        self.transport.url.as_str()
    }

    fn messages(&self, messages: &[Message]) -> Vec<Value> {
        let mut out = Vec::with_capacity(messages.len());
        for message in messages {
            match message {
                Message::System(text) => out.push(json!({"role": "system", "content": text})),
                Message::User(text) => out.push(json!({"role": "user", "content": text})),
                Message::Assistant(decoded) => out.push(self.adapter.assistant_message(decoded)),
                Message::ToolResults(results) => out.extend(self.adapter.result_messages(results)),
            }
        }
        out
    }
}

impl OpenAiCompatibleBuilder {
    /// The API's base URL, up to and including `/v1` (`http://localhost:11434/v1`).
    pub fn base_url(mut self, url: impl Into<String>) -> Self {
        self.settings.base_url = url.into();
        self
    }

    /// The key, sent as `Authorization: Bearer {key}`.
    pub fn api_key(mut self, key: impl Into<String>) -> Self {
        self.settings.api_key = Some(super::ApiKey(key.into()));
        self
    }

    /// The model to ask.
    pub fn model(mut self, model: impl Into<String>) -> Self {
        self.settings.model = model.into();
        self
    }

    /// The adapter encoding tools and decoding the stream (strict mode, decode options).
    pub fn adapter(mut self, adapter: OpenAiChat) -> Self {
        self.adapter = adapter;
        self
    }

    /// Whether to ask for a usage chunk (`stream_options.include_usage`; default `true`). Turn
    /// it off for a server that refuses `stream_options`.
    pub fn include_usage(mut self, include: bool) -> Self {
        self.include_usage = include;
        self
    }

    /// A header sent with every request (`OpenAI-Organization`, a proxy's token).
    pub fn header(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.settings.headers.push((name.into(), value.into()));
        self
    }

    /// A field added to every request body (`temperature`, `max_completion_tokens`, `seed`).
    /// `model`, `messages`, `stream`, `stream_options` and the tool fields are the client's.
    pub fn body_field(mut self, name: impl Into<String>, value: Value) -> Self {
        self.settings.body.insert(name.into(), value);
        self
    }

    /// How failed requests are retried.
    pub fn retry(mut self, retry: RetryPolicy) -> Self {
        self.settings.retry = retry;
        self
    }

    /// How long to wait.
    pub fn timeouts(mut self, timeouts: Timeouts) -> Self {
        self.settings.timeouts = timeouts;
        self
    }

    /// The client.
    ///
    /// # Errors
    ///
    /// [`HttpConfigError`] for a base URL, key or header that cannot be used, or an HTTP
    /// client that cannot be set up.
    pub fn build(self) -> Result<OpenAiCompatible, HttpConfigError> {
        let auth = |key: &str| (AUTHORIZATION, format!("Bearer {key}"));
        let transport =
            self.settings.transport("/chat/completions", "OpenAI", auth, HeaderMap::new())?;
        Ok(OpenAiCompatible {
            transport,
            settings: self.settings,
            adapter: self.adapter,
            include_usage: self.include_usage,
        })
    }
}

#[async_trait]
impl ChatModel for OpenAiCompatible {
    async fn respond(
        &self,
        request: ModelRequest<'_>,
        on_event: &(dyn Fn(StreamEvent) + Send + Sync),
    ) -> Result<ModelTurn, ModelError> {
        let mut fields = Map::new();
        fields.insert("model".to_owned(), json!(self.settings.model));
        fields.insert("messages".to_owned(), Value::Array(self.messages(request.messages)));
        fields.insert("stream".to_owned(), Value::Bool(true));
        if self.include_usage {
            fields.insert("stream_options".to_owned(), json!({"include_usage": true}));
        }
        fields.extend(tool_fields(&self.adapter, &request)?);
        let body = self.settings.body(fields)?;
        exchange(&self.transport, &self.adapter, read_usage, body, request.tools, on_event).await
    }
}

/// `usage.prompt_tokens` and `usage.completion_tokens`, from the usage chunk (or a whole
/// response).
fn read_usage(value: &Value, usage: &mut Usage) -> bool {
    let input = count(value, "/usage/prompt_tokens");
    let output = count(value, "/usage/completion_tokens");
    if let Some(tokens) = input {
        usage.input_tokens = tokens;
    }
    if let Some(tokens) = output {
        usage.output_tokens = tokens;
    }
    input.is_some() || output.is_some()
}
