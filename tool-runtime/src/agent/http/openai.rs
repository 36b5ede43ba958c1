//! OpenAI Chat Completions over HTTP, for OpenAI and the servers that speak its protocol.

use async_trait::async_trait;
use reqwest::header::{AUTHORIZATION, HeaderMap};

use super::retry::RetryPolicy;
use super::transport::{Timeouts, Transport};
use super::{HttpConfigError, Settings, authority, exchange, shared_setters};
use crate::adapters::{OpenAiChat, RequestOptions, StreamEvent};
use crate::agent::{ChatModel, ModelError, ModelRequest, ModelTurn};

const BASE_URL: &str = "https://api.openai.com/v1";
const MODEL: &str = "gpt-4o-mini";
/// What `from_env` needs one of.
const VARIABLES: &[&str] = &["OPENAI_API_KEY", "OPENAI_BASE_URL"];

/// A [`ChatModel`] speaking OpenAI Chat Completions: OpenAI itself, or a local server with an
/// OpenAI-compatible `/v1` (Ollama, vLLM, llama.cpp's `llama-server`, LM Studio).
///
/// Each turn is one `POST {base}/chat/completions`, the key (if any) as `Authorization:
/// Bearer`. The whole body is encoded by [`OpenAiChat`]
/// ([`encode_request`](crate::adapters::Adapter::encode_request)): streamed, with a usage
/// chunk asked for. Errors name OpenAI only when the endpoint is OpenAI's; any other is "the
/// OpenAI-compatible server at {host}". See the [module docs](super) for retries, timeouts
/// and what a cut stream does.
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
    options: RequestOptions,
    adapter: OpenAiChat,
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
    /// `var` (empty values count as unset), the defaults otherwise. With neither a base URL
    /// nor a key (and none given to the builder later), [`build`](OpenAiCompatibleBuilder::build)
    /// fails with [`HttpConfigError::NotConfigured`].
    ///
    /// ```
    /// use tool_runtime::agent::{HttpConfigError, OpenAiCompatible};
    ///
    /// let error = OpenAiCompatible::builder_from_vars(|_| None).build().unwrap_err();
    /// assert!(matches!(error, HttpConfigError::NotConfigured { .. }));
    /// ```
    pub fn builder_from_vars(var: impl Fn(&str) -> Option<String>) -> OpenAiCompatibleBuilder {
        let mut builder = Self::builder();
        builder.settings = builder.settings.read_vars("OPENAI", VARIABLES, &var);
        builder
    }

    /// A builder with `OPENAI_BASE_URL`, `OPENAI_API_KEY` and `OPENAI_MODEL` read from the
    /// environment, to adjust before [`build`](OpenAiCompatibleBuilder::build).
    pub fn builder_from_env() -> OpenAiCompatibleBuilder {
        Self::builder_from_vars(|name| std::env::var(name).ok())
    }

    /// A client set up from `OPENAI_BASE_URL` (default `https://api.openai.com/v1`),
    /// `OPENAI_API_KEY` (optional for local servers) and `OPENAI_MODEL` (default
    /// `gpt-4o-mini`). One of the base URL and the key must be set.
    ///
    /// # Errors
    ///
    /// [`HttpConfigError::NotConfigured`] when neither `OPENAI_BASE_URL` nor `OPENAI_API_KEY`
    /// is set, and the other [`HttpConfigError`]s for a base URL or key that cannot be used.
    pub fn from_env() -> Result<Self, HttpConfigError> {
        Self::builder_from_env().build()
    }

    /// The model's name, as sent.
    #[must_use]
    pub fn model(&self) -> &str {
        &self.options.model
    }

    /// The URL requests go to.
    #[must_use]
    pub fn endpoint(&self) -> &str {
        self.transport.url.as_str()
    }
}

impl OpenAiCompatibleBuilder {
    shared_setters! {
        base_url: "The API's base URL, up to and including `/v1` (`http://localhost:11434/v1`).",
        api_key: "The key, sent as `Authorization: Bearer {key}`.",
        header: "A header sent with every request (`OpenAI-Organization`, a proxy's token).",
        body_field: "A field added to every request body (`temperature`, `max_completion_tokens`, `seed`). `model`, `messages`, `stream`, `stream_options` and the tool fields are the client's.",
    }

    /// The adapter encoding requests and decoding responses (strict mode, decode options).
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

    /// The client.
    ///
    /// # Errors
    ///
    /// [`HttpConfigError`] for a base URL, key or header that cannot be used, settings read
    /// from an environment that configures nothing, or an HTTP client that cannot be set up.
    pub fn build(self) -> Result<OpenAiCompatible, HttpConfigError> {
        let auth = |key: &str| (AUTHORIZATION, format!("Bearer {key}"));
        let label = |url: &reqwest::Url| match url.host_str() {
            Some("api.openai.com") => "OpenAI".to_owned(),
            _ => format!("the OpenAI-compatible server at {}", authority(url)),
        };
        let transport =
            self.settings.transport("/chat/completions", label, auth, None, HeaderMap::new())?;
        let options = self.settings.options().stream_usage(self.include_usage);
        Ok(OpenAiCompatible { transport, options, adapter: self.adapter })
    }
}

#[async_trait]
impl ChatModel for OpenAiCompatible {
    async fn respond(
        &self,
        request: ModelRequest<'_>,
        on_event: &(dyn Fn(StreamEvent) + Send + Sync),
    ) -> Result<ModelTurn, ModelError> {
        exchange(&self.transport, &self.adapter, &request, &self.options, on_event).await
    }
}
