//! Real model clients over HTTPS (feature `http`): [`OpenAiCompatible`] for OpenAI Chat
//! Completions and the servers that speak it (Ollama's `/v1`, vLLM, llama.cpp's server), and
//! [`AnthropicMessages`] for the Anthropic Messages API.
//!
//! Both are transport only: the [adapter](crate::adapters) encodes the whole request body
//! ([`Adapter::encode_request`]) and decodes the streamed answer with the request's tools
//! ([`Adapter::stream_for`]): calls, text, finish and usage, exactly as a
//! [`ScriptedModel`](super::ScriptedModel) decodes a recording. Both share:
//!
//! - **Retries** ([`RetryPolicy`]) on `429`, on `5xx` and on connection errors and timeouts,
//!   as long as no byte of the response body has arrived; `retry-after` (seconds or an HTTP
//!   date) and OpenAI's `retry-after-ms` are honoured up to a cap, exponential backoff with
//!   jitter otherwise.
//! - **Timeouts** ([`Timeouts`]): to connect, to the response's headers, and the longest
//!   silence inside the streamed body.
//! - **Errors that say what the provider answered**: a [`ModelError`] of kind
//!   [`Status`](ModelErrorKind::Status) carries the status and the provider's own message
//!   from its JSON error body ([`ProviderError::from_error_body`]), truncated. Errors name
//!   whoever answers: OpenAI, Anthropic, or "the OpenAI-compatible server at {host}".
//! - **A cut stream is an error.** When the connection drops, or the body ends, before the
//!   provider said the turn was over, `respond` fails with [`ModelErrorKind::Transport`]
//!   ("the stream was cut") and no partial turn is returned, so the loop can never run a call
//!   that was cut off. That is never retried: the turn's first events were already
//!   forwarded. A silence longer than [`Timeouts::idle`] fails the same way, with kind
//!   [`Timeout`](ModelErrorKind::Timeout).
//! - **An error the provider sends inside its response is its own kind.** Anthropic's
//!   `error` event (`overloaded_error`), an `error` object in an OpenAI stream, a Responses
//!   `error` or `response.failed`: `respond` fails with [`ModelErrorKind::Provider`], the
//!   provider's error type and message kept (scrubbed and cut as error bodies are), and no
//!   partial turn is returned. It is not retried either: the turn's first events were already
//!   forwarded.
//! - **The key stays secret**: it is sent as a sensitive header, never printed by `Debug`,
//!   and scrubbed from any error message that might echo it.
//! - **Redirects are never followed.** A redirect to another origin would carry the key, the
//!   extra headers (Azure's `api-key`) and, on a `307` or `308`, the whole conversation there;
//!   a model API has no reason to redirect, so one to the same origin is not followed either.
//!   A `3xx` answer fails the turn with [`Status`](ModelErrorKind::Status) and its code,
//!   naming where it pointed (scheme, host and path only), and is not retried: point the base
//!   URL at the new address instead.
//! - **Servers that do not stream**: a `200` with an `application/json` body is decoded
//!   whole.
//!
//! | client | endpoint | settings from the environment |
//! | --- | --- | --- |
//! | [`OpenAiCompatible`] | `POST {base}/chat/completions` | `OPENAI_BASE_URL` (default `https://api.openai.com/v1`), `OPENAI_API_KEY` (optional for a local server), `OPENAI_MODEL` (default `gpt-4o-mini`); one of the first two must be set |
//! | [`AnthropicMessages`] | `POST {base}/v1/messages` | `ANTHROPIC_BASE_URL` (default `https://api.anthropic.com`), `ANTHROPIC_API_KEY` (required), `ANTHROPIC_MODEL` (default `claude-sonnet-4-5`) |
//!
//! ```
//! use std::time::Duration;
//! use tool_runtime::agent::{OpenAiCompatible, RetryPolicy, Timeouts};
//!
//! // A local Ollama: no key needed.
//! let mut timeouts = Timeouts::default();
//! timeouts.idle = Duration::from_secs(60);
//! let model = OpenAiCompatible::builder()
//!     .base_url("http://localhost:11434/v1")
//!     .model("qwen3:8b")
//!     .retry(RetryPolicy::none())
//!     .timeouts(timeouts)
//!     .build()?;
//! assert_eq!(model.endpoint(), "http://localhost:11434/v1/chat/completions");
//! # Ok::<(), tool_runtime::agent::HttpConfigError>(())
//! ```
//!
//! With the environment set, a client drops into the [`Agent`](super::Agent) loop in place of
//! a scripted model:
//!
//! ```no_run
//! use std::sync::Arc;
//! use tool_runtime::agent::{Agent, AnthropicMessages, Message};
//! use tool_runtime::catalog::ToolCatalog;
//! use tool_runtime::runner::ToolRunner;
//! use tool_runtime::runtime::{ContextIds, ToolInvocationContext};
//!
//! # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
//! let runner = ToolRunner::builder(ToolCatalog::builder().build()?).build();
//! let agent = Agent::new(Arc::new(AnthropicMessages::from_env()?), runner);
//! let ctx = ToolInvocationContext::new(ContextIds { run_id: "run-1", actor_id: "user-1", tenant_id: "tenant-1" });
//! let output = agent.run(vec![Message::user("Hello!")], &ctx, &|_| {}).await;
//! println!("{}", output.done.answer);
//! # Ok(())
//! # }
//! ```

mod anthropic;
mod embeddings;
mod llama;
mod openai;
mod retry;
mod transport;

use std::fmt;
use std::sync::Arc;

use reqwest::Client;
use reqwest::header::{CONTENT_TYPE, HeaderMap, HeaderName, HeaderValue};
use serde_json::{Map, Value};

use super::model::{provider_error, provider_error_text};
use super::{ModelError, ModelErrorKind, ModelTurn};
#[cfg(doc)]
use crate::adapters::ProviderError;
use crate::adapters::{
    Adapter, DecodeError, Decoded, FinishReason, Limit, ModelRequest, Problem, RequestOptions,
    StreamEvent, StreamLimits,
};
use transport::{Delivered, Transport};

pub use anthropic::{AnthropicMessages, AnthropicMessagesBuilder};
pub use embeddings::{OpenAiEmbeddings, OpenAiEmbeddingsBuilder};
pub use llama::{LlamaServer, LlamaServerBuilder};
pub use openai::{OpenAiCompatible, OpenAiCompatibleBuilder};
pub use retry::RetryPolicy;
pub use transport::Timeouts;

/// A client that could not be built. Nothing was sent.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum HttpConfigError {
    /// The base URL is not an absolute `http` or `https` URL.
    InvalidBaseUrl {
        /// The URL as given.
        url: String,
        /// What is wrong with it.
        reason: String,
    },
    /// No API key was given and the provider requires one.
    MissingApiKey {
        /// The environment variable that would provide it.
        variable: &'static str,
    },
    /// The client was set up from the environment and none of its variables is set, so it
    /// would talk to the public endpoint without a key.
    NotConfigured {
        /// The variables to set (one of them at least).
        variables: &'static [&'static str],
    },
    /// The API key holds characters an HTTP header cannot carry (a line break, say).
    InvalidApiKey,
    /// An extra header has an invalid name or value.
    InvalidHeader {
        /// The header's name.
        name: String,
    },
    /// The HTTP client could not be set up (its TLS configuration, for example).
    Client(String),
}

impl fmt::Display for HttpConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::InvalidBaseUrl { url, reason } => {
                write!(f, "the base URL `{url}` is not an absolute http(s) URL: {reason}")
            }
            Self::MissingApiKey { variable } => {
                write!(f, "no API key: set `{variable}` or give one with `api_key`")
            }
            Self::NotConfigured { variables } => {
                let names: Vec<String> = variables.iter().map(|name| format!("`{name}`")).collect();
                write!(f, "no model endpoint is configured: set {}", names.join(" or "))?;
                // Only a provider that can be pointed elsewhere has a local server to name.
                if variables.iter().any(|name| name.ends_with("_BASE_URL")) {
                    f.write_str(" (a key for the public endpoint, a base URL for a local server)")?;
                }
                Ok(())
            }
            Self::InvalidApiKey => f.write_str(
                "the API key holds characters an HTTP header cannot carry; check for a stray line break",
            ),
            Self::InvalidHeader { name } => write!(f, "the header `{name}` is not a valid header"),
            Self::Client(reason) => write!(f, "the HTTP client could not be set up: {reason}"),
        }
    }
}

impl std::error::Error for HttpConfigError {}

/// An API key. Its `Debug` never shows it.
#[derive(Clone, PartialEq, Eq)]
struct ApiKey(String);

impl fmt::Debug for ApiKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("ApiKey([redacted])")
    }
}

/// What both builders hold.
#[derive(Clone)]
struct Settings {
    base_url: String,
    api_key: Option<ApiKey>,
    model: String,
    retry: RetryPolicy,
    timeouts: Timeouts,
    headers: Vec<(String, String)>,
    body: Map<String, Value>,
    limits: StreamLimits,
    /// Set when read from an environment that configures nothing; cleared by a base URL or a
    /// key given later.
    unconfigured: Option<&'static [&'static str]>,
}

impl fmt::Debug for Settings {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Extra headers may carry credentials: their names only.
        let headers: Vec<&str> = self.headers.iter().map(|(name, _)| name.as_str()).collect();
        f.debug_struct("Settings")
            .field("base_url", &hide_userinfo(&self.base_url))
            .field("api_key", &self.api_key)
            .field("model", &self.model)
            .field("retry", &self.retry)
            .field("timeouts", &self.timeouts)
            .field("headers", &headers)
            .field("body", &self.body)
            .finish()
    }
}

impl Settings {
    fn new(base_url: &str, model: &str) -> Self {
        Self {
            base_url: base_url.to_owned(),
            api_key: None,
            model: model.to_owned(),
            retry: RetryPolicy::default(),
            timeouts: Timeouts::default(),
            headers: Vec::new(),
            body: Map::new(),
            limits: StreamLimits::default(),
            unconfigured: None,
        }
    }

    /// Reads `{prefix}_BASE_URL`, `{prefix}_API_KEY` and `{prefix}_MODEL` through `var`;
    /// empty values count as unset. Neither a base URL nor a key leaves the settings
    /// [unconfigured](HttpConfigError::NotConfigured) with `needed`.
    fn read_vars(
        mut self,
        prefix: &str,
        needed: &'static [&'static str],
        var: &dyn Fn(&str) -> Option<String>,
    ) -> Self {
        let read = |name: &str| var(&format!("{prefix}_{name}")).filter(|value| !value.is_empty());
        let base = read("BASE_URL");
        self.api_key = read("API_KEY").map(ApiKey);
        if base.is_none() && self.api_key.is_none() {
            self.unconfigured = Some(needed);
        }
        if let Some(base) = base {
            self.base_url = base;
        }
        if let Some(model) = read("MODEL") {
            self.model = model;
        }
        self
    }

    /// The options every request is sent with.
    fn options(&self) -> RequestOptions {
        let mut options = RequestOptions::new(self.model.clone());
        options.extra = self.body.clone();
        options
    }

    /// The transport to `{base}{path}`, with `auth` turning the key into its header.
    /// `label` names whoever answers at the URL, for messages. `key_variable` names the
    /// variable of a key the provider requires (none when it is optional).
    fn transport(
        &self,
        path: &str,
        label: impl FnOnce(&reqwest::Url) -> String,
        auth: impl FnOnce(&str) -> (HeaderName, String),
        key_variable: Option<&'static str>,
        mut headers: HeaderMap,
    ) -> Result<Transport, HttpConfigError> {
        // An environment that sets nothing is reported as such, before what it leaves out.
        if let Some(variables) = self.unconfigured {
            return Err(HttpConfigError::NotConfigured { variables });
        }
        if let (Some(variable), None) = (key_variable, &self.api_key) {
            return Err(HttpConfigError::MissingApiKey { variable });
        }
        let joined = format!("{}{path}", self.base_url.trim_end_matches('/'));
        let invalid = |reason: String| HttpConfigError::InvalidBaseUrl {
            url: hide_userinfo(&self.base_url),
            reason,
        };
        let url = reqwest::Url::parse(&joined).map_err(|error| invalid(error.to_string()))?;
        if !matches!(url.scheme(), "http" | "https") {
            return Err(invalid(format!("the scheme `{}` is not http or https", url.scheme())));
        }
        headers.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
        for (name, value) in &self.headers {
            let bad = || HttpConfigError::InvalidHeader { name: name.clone() };
            let header = HeaderName::from_bytes(name.as_bytes()).map_err(|_| bad())?;
            headers.insert(header, HeaderValue::from_str(value).map_err(|_| bad())?);
        }
        if let Some(key) = &self.api_key {
            let (name, value) = auth(&key.0);
            let mut value =
                HeaderValue::from_str(&value).map_err(|_| HttpConfigError::InvalidApiKey)?;
            value.set_sensitive(true);
            headers.insert(name, value);
        }
        // No redirect is followed: one to another origin would carry the key, the extra headers
        // and (on a 307 or 308) the whole conversation there.
        let client = Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .connect_timeout(self.timeouts.connect)
            .build()
            .map_err(|error| HttpConfigError::Client(error.to_string()))?;
        Ok(Transport {
            client,
            headers,
            retry: self.retry.clone(),
            timeouts: self.timeouts,
            secrets: self.secrets(&url),
            body_limit: self.limits.get(Limit::BodyBytes),
            label: label(&url),
            url,
        })
    }

    /// Every configured value that may be a credential, to scrub from messages: the key, each
    /// extra header's value and the URL's user name and password (as written and decoded).
    /// Values under 8 bytes are left out: none is a credential, and scrubbing them would
    /// mangle ordinary words and numbers.
    fn secrets(&self, url: &reqwest::Url) -> Arc<[String]> {
        let mut secrets: Vec<String> = self.api_key.iter().map(|key| key.0.clone()).collect();
        secrets.extend(self.headers.iter().map(|(_, value)| value.clone()));
        for part in [url.username(), url.password().unwrap_or_default()] {
            secrets.push(part.to_owned());
            secrets.push(percent_decoded(part));
        }
        secrets.retain(|secret| secret.len() >= 8);
        // Longest first, so a secret that contains another is replaced whole.
        secrets.sort_by(|a, b| b.len().cmp(&a.len()).then_with(|| a.cmp(b)));
        secrets.dedup();
        secrets.into()
    }
}

/// The setters both builders share, each documented with what differs per provider.
macro_rules! shared_setters {
    (base_url: $base_url:literal, api_key: $api_key:literal, header: $header:literal, body_field: $body_field:literal $(,)?) => {
        #[doc = $base_url]
        pub fn base_url(mut self, url: impl Into<String>) -> Self {
            self.settings.base_url = url.into();
            self.settings.unconfigured = None;
            self
        }

        #[doc = $api_key]
        pub fn api_key(mut self, key: impl Into<String>) -> Self {
            self.settings.api_key = Some(super::ApiKey(key.into()));
            self.settings.unconfigured = None;
            self
        }

        /// The model to ask.
        pub fn model(mut self, model: impl Into<String>) -> Self {
            self.settings.model = model.into();
            self
        }

        #[doc = $header]
        pub fn header(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
            self.settings.headers.push((name.into(), value.into()));
            self
        }

        #[doc = $body_field]
        pub fn body_field(mut self, name: impl Into<String>, value: serde_json::Value) -> Self {
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

        /// Caps on what one response may make the client hold. The client enforces
        /// [`StreamLimits::body_bytes`](crate::adapters::StreamLimits::body_bytes) (a larger
        /// body fails the turn with [`ModelErrorKind::Decode`](crate::agent::ModelErrorKind));
        /// the stream decoder enforces the others as its adapter's
        /// [`DecodeOptions::limits`](crate::adapters::DecodeOptions::limits) say.
        pub fn limits(mut self, limits: crate::adapters::StreamLimits) -> Self {
            self.settings.limits = limits;
            self
        }
    };
}
use shared_setters;

/// `%XX` escapes of `text` decoded (lossily: a credential is compared, never used).
fn percent_decoded(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut at = 0;
    while let Some(&byte) = bytes.get(at) {
        let hex = bytes.get(at + 1..at + 3).and_then(|hex| std::str::from_utf8(hex).ok());
        match hex.and_then(|hex| u8::from_str_radix(hex, 16).ok()).filter(|_| byte == b'%') {
            Some(decoded) => {
                out.push(decoded);
                at += 3;
            }
            None => {
                out.push(byte);
                at += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// `url` as written, with any user name and password before its host replaced: for messages
/// about a URL that may not even parse.
fn hide_userinfo(url: &str) -> String {
    let start = url.find("://").map_or(0, |at| at + 3);
    let authority_end = url[start..].find(['/', '?', '#']).map_or(url.len(), |end| start + end);
    match url[start..authority_end].rfind('@') {
        Some(at) => format!("{}[redacted]{}", &url[..start], &url[start + at..]),
        None => url.to_owned(),
    }
}

/// `host` or `host:port` of `url`, to name a server in messages.
fn authority(url: &reqwest::Url) -> String {
    let host = url.host_str().unwrap_or_default();
    match url.port() {
        Some(port) => format!("{host}:{port}"),
        None => host.to_owned(),
    }
}

/// Encodes `request` with `adapter`, sends it and decodes what came back with the request's
/// tools (so lowered arguments are raised); a cut stream is refused.
async fn exchange(
    transport: &Transport,
    adapter: &dyn Adapter,
    request: &ModelRequest<'_>,
    options: &RequestOptions,
    on_event: &(dyn Fn(StreamEvent) + Send + Sync),
) -> Result<ModelTurn, ModelError> {
    let body = adapter.encode_body(request, options).map_err(|error| {
        ModelError::new(ModelErrorKind::Request, format!("the request cannot be sent: {error}"))
    })?;
    let specs = request.tools;
    let session = || adapter.stream_for(specs);
    let decoded = match transport.exchange(body, &session, on_event).await? {
        Delivered::Streamed(mut body) => {
            body.session.close().into_iter().for_each(on_event);
            let decoded = body.session.finish();
            check_complete(&decoded, body.bytes, adapter, &transport.label)?;
            decoded
        }
        Delivered::Whole(bytes) => {
            let decoded = adapter.decode_for(specs, &bytes).map_err(|error| match error {
                DecodeError::Provider(error) => {
                    provider_failed(transport, &provider_error_text(&error))
                }
                error => {
                    let message =
                        format!("the response of {} cannot be decoded: {error}", transport.label);
                    transport.scrub(ModelError::new(ModelErrorKind::Decode, message))
                }
            })?;
            if !decoded.text.is_empty() {
                on_event(StreamEvent::TextDelta(decoded.text.clone()));
            }
            decoded
        }
    };
    if let Some(said) = provider_error(&decoded) {
        return Err(provider_failed(transport, &said));
    }
    Ok(ModelTurn::from(decoded))
}

/// The error for a turn the provider ended with an error of its own (`said`, as
/// `type: message`), scrubbed and cut.
fn provider_failed(transport: &Transport, said: &str) -> ModelError {
    let said = transport::provider_said(said, &transport.secrets);
    let message = format!("{} reported an error in its response: {said}", transport.label);
    ModelError::new(ModelErrorKind::Provider, message)
}

/// A stream that ended before the provider finished the turn is refused whole, so no call of
/// it can run.
fn check_complete(
    decoded: &Decoded,
    bytes: u64,
    adapter: &dyn Adapter,
    label: &str,
) -> Result<(), ModelError> {
    if let Some(problem) =
        decoded.problems.iter().find(|problem| matches!(problem, Problem::LimitExceeded { .. }))
    {
        let message = format!("the stream from {label} was refused after {bytes} bytes: {problem}");
        return Err(ModelError::new(ModelErrorKind::Decode, message));
    }
    if decoded.finish.reason != FinishReason::Unfinished {
        return Ok(());
    }
    if decoded.problems.iter().any(|problem| matches!(problem, Problem::NothingRecognised)) {
        let message = format!(
            "nothing in the {bytes}-byte response from {label} is a {} stream event",
            adapter.provider().label()
        );
        return Err(ModelError::new(ModelErrorKind::Decode, message));
    }
    let message = format!(
        "the stream from {label} was cut after {bytes} bytes, before the turn was finished; its partial turn was dropped"
    );
    Err(ModelError::new(ModelErrorKind::Transport, message))
}
