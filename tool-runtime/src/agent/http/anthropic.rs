//! The Anthropic Messages API over HTTP.

use async_trait::async_trait;
use reqwest::header::{HeaderMap, HeaderName, HeaderValue};

use super::retry::RetryPolicy;
use super::transport::{Timeouts, Transport};
use super::{HttpConfigError, Settings, exchange, shared_setters};
use crate::adapters::{Anthropic, RequestOptions, StreamEvent};
use crate::agent::{ChatModel, ModelError, ModelRequest, ModelTurn};

const BASE_URL: &str = "https://api.anthropic.com";
const MODEL: &str = "claude-sonnet-4-5";
const VERSION: &str = "2023-06-01";
/// What `from_env` needs one of.
const VARIABLES: &[&str] = &[KEY_VARIABLE];
/// Where `from_env` reads the key the API requires.
const KEY_VARIABLE: &str = "ANTHROPIC_API_KEY";

/// A [`ChatModel`] speaking the Anthropic Messages API.
///
/// Each turn is one `POST {base}/v1/messages`, the key as `x-api-key` and
/// `anthropic-version: 2023-06-01`. The whole body is encoded by [`Anthropic`]
/// ([`encode_request`](crate::adapters::Adapter::encode_request)): streamed, system messages
/// in the top-level `system` field, consecutive messages of one role merged. `max_tokens`,
/// which the API requires, defaults to the adapter's 4096. See the [module docs](super) for retries,
/// timeouts and what a cut stream does.
///
/// ```
/// use tool_runtime::agent::{AnthropicMessages, HttpConfigError};
///
/// let model = AnthropicMessages::builder().api_key("sk-ant-test").max_tokens(1024).build()?;
/// assert_eq!(model.endpoint(), "https://api.anthropic.com/v1/messages");
/// assert!(!format!("{model:?}").contains("sk-ant-test"));
///
/// let missing = AnthropicMessages::builder().build().unwrap_err();
/// assert_eq!(missing, HttpConfigError::MissingApiKey { variable: "ANTHROPIC_API_KEY" });
/// # Ok::<(), HttpConfigError>(())
/// ```
#[derive(Debug, Clone)]
pub struct AnthropicMessages {
    transport: Transport,
    options: RequestOptions,
    adapter: Anthropic,
}

/// Settings of an [`AnthropicMessages`] client; [`build`](AnthropicMessagesBuilder::build)
/// makes the client.
#[derive(Debug, Clone)]
#[must_use]
pub struct AnthropicMessagesBuilder {
    settings: Settings,
    adapter: Anthropic,
    /// `None` leaves the output budget to the adapter's default.
    max_tokens: Option<u32>,
}

impl AnthropicMessages {
    /// A builder with the defaults: `https://api.anthropic.com`, `claude-sonnet-4-5`,
    /// `max_tokens` 4096, non-strict tools, and no key yet.
    pub fn builder() -> AnthropicMessagesBuilder {
        AnthropicMessagesBuilder {
            settings: Settings::new(BASE_URL, MODEL),
            adapter: Anthropic::new(),
            max_tokens: None,
        }
    }

    /// A builder with `ANTHROPIC_BASE_URL`, `ANTHROPIC_API_KEY` and `ANTHROPIC_MODEL` read
    /// through `var` (empty values count as unset), the defaults otherwise. With none of them
    /// set (and no base URL or key given to the builder later),
    /// [`build`](AnthropicMessagesBuilder::build) fails with
    /// [`HttpConfigError::NotConfigured`].
    pub fn builder_from_vars(var: impl Fn(&str) -> Option<String>) -> AnthropicMessagesBuilder {
        let mut builder = Self::builder();
        builder.settings = builder.settings.read_vars("ANTHROPIC", VARIABLES, &var);
        builder
    }

    /// A builder with `ANTHROPIC_BASE_URL`, `ANTHROPIC_API_KEY` and `ANTHROPIC_MODEL` read from
    /// the environment, to adjust before [`build`](AnthropicMessagesBuilder::build).
    pub fn builder_from_env() -> AnthropicMessagesBuilder {
        Self::builder_from_vars(|name| std::env::var(name).ok())
    }

    /// A client set up from `ANTHROPIC_BASE_URL` (default `https://api.anthropic.com`),
    /// `ANTHROPIC_API_KEY` (required) and `ANTHROPIC_MODEL` (default `claude-sonnet-4-5`).
    ///
    /// # Errors
    ///
    /// [`HttpConfigError::NotConfigured`] when none is set,
    /// [`HttpConfigError::MissingApiKey`] without a key, and the other [`HttpConfigError`]s
    /// for settings that cannot be used.
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

impl AnthropicMessagesBuilder {
    shared_setters! {
        base_url: "The API's base URL, without `/v1` (`https://api.anthropic.com`).",
        api_key: "The key, sent as `x-api-key`.",
        header: "A header sent with every request (`anthropic-beta`).",
        body_field: "A field added to every request body (`temperature`, `thinking`, `metadata`). `model`, `max_tokens`, `system`, `messages`, `stream` and the tool fields are the client's.",
    }

    /// The most tokens a turn may write (default 4096).
    pub fn max_tokens(mut self, max_tokens: u32) -> Self {
        self.max_tokens = Some(max_tokens);
        self
    }

    /// The adapter encoding requests and decoding responses (strict mode, decode options).
    pub fn adapter(mut self, adapter: Anthropic) -> Self {
        self.adapter = adapter;
        self
    }

    /// The client.
    ///
    /// # Errors
    ///
    /// [`HttpConfigError::NotConfigured`] for settings read from an environment that sets
    /// nothing, [`HttpConfigError::MissingApiKey`] without a key, and the other
    /// [`HttpConfigError`]s for a base URL, key or header that cannot be used.
    pub fn build(self) -> Result<AnthropicMessages, HttpConfigError> {
        let mut headers = HeaderMap::new();
        headers.insert(
            HeaderName::from_static("anthropic-version"),
            HeaderValue::from_static(VERSION),
        );
        let auth = |key: &str| (HeaderName::from_static("x-api-key"), key.to_owned());
        let label = |_: &reqwest::Url| "Anthropic".to_owned();
        let transport =
            self.settings.transport("/v1/messages", label, auth, Some(KEY_VARIABLE), headers)?;
        let mut options = self.settings.options();
        options.max_tokens = self.max_tokens;
        Ok(AnthropicMessages { transport, options, adapter: self.adapter })
    }
}

#[async_trait]
impl ChatModel for AnthropicMessages {
    async fn respond(
        &self,
        request: ModelRequest<'_>,
        on_event: &(dyn Fn(StreamEvent) + Send + Sync),
    ) -> Result<ModelTurn, ModelError> {
        exchange(&self.transport, &self.adapter, &request, &self.options, on_event).await
    }
}
