//! Real model clients over HTTPS (feature `http`): [`OpenAiCompatible`] for OpenAI Chat
//! Completions and the servers that speak it (Ollama's `/v1`, vLLM, llama.cpp's server), and
//! [`AnthropicMessages`] for the Anthropic Messages API.
//!
//! Both stream (`"stream": true`) through the same [adapters](crate::adapters) the rest of the
//! crate uses, so what the loop sees is decoded exactly as a
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
//!   from its JSON error body, truncated.
//! - **A cut stream is an error.** When the connection drops, or the body ends, before the
//!   provider said the turn was over, `respond` fails with [`ModelErrorKind::Transport`]
//!   ("the stream was cut") and no partial turn is returned, so the loop can never run a call
//!   that was cut off. That is never retried: the turn's first events were already
//!   forwarded. A silence longer than [`Timeouts::idle`] fails the same way, with kind
//!   [`Timeout`](ModelErrorKind::Timeout). (An `error` event the provider sends inside the
//!   stream is the adapter's business: the turn comes back with
//!   [`FinishReason::Error`] and its calls are never run.)
//! - **The key stays secret**: it is sent as a sensitive header, never printed by `Debug`,
//!   and scrubbed from any error message that might echo it.
//! - **Servers that do not stream**: a `200` with an `application/json` body is decoded
//!   whole.
//!
//! | client | endpoint | settings from the environment |
//! | --- | --- | --- |
//! | [`OpenAiCompatible`] | `POST {base}/chat/completions` | `OPENAI_BASE_URL` (default `https://api.openai.com/v1`), `OPENAI_API_KEY` (optional), `OPENAI_MODEL` (default `gpt-4o-mini`) |
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
mod openai;
mod retry;
mod sse_body;
mod transport;

use std::fmt;

use reqwest::Client;
use reqwest::header::{CONTENT_TYPE, HeaderMap, HeaderName, HeaderValue};
use serde_json::{Map, Value};

use super::{ModelError, ModelErrorKind, ModelTurn};
use crate::adapters::{Adapter, Decoded, FinishReason, Problem, StreamEvent};
use crate::spec::ToolSpec;
use sse_body::UsageReader;
use transport::{Delivered, Transport};

pub use anthropic::{AnthropicMessages, AnthropicMessagesBuilder};
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
}

impl fmt::Debug for Settings {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Extra headers may carry credentials: their names only.
        let headers: Vec<&str> = self.headers.iter().map(|(name, _)| name.as_str()).collect();
        f.debug_struct("Settings")
            .field("base_url", &self.base_url)
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
        }
    }

    /// Reads `{prefix}_BASE_URL`, `{prefix}_API_KEY` and `{prefix}_MODEL` through `var`;
    /// empty values count as unset.
    fn read_vars(mut self, prefix: &str, var: &dyn Fn(&str) -> Option<String>) -> Self {
        let read = |name: &str| var(&format!("{prefix}_{name}")).filter(|value| !value.is_empty());
        if let Some(base) = read("BASE_URL") {
            self.base_url = base;
        }
        self.api_key = read("API_KEY").map(ApiKey);
        if let Some(model) = read("MODEL") {
            self.model = model;
        }
        self
    }

    /// The transport to `{base}{path}`, with `auth` turning the key into its header.
    fn transport(
        &self,
        path: &str,
        label: &'static str,
        auth: impl FnOnce(&str) -> (HeaderName, String),
        mut headers: HeaderMap,
    ) -> Result<Transport, HttpConfigError> {
        let joined = format!("{}{path}", self.base_url.trim_end_matches('/'));
        let invalid =
            |reason: String| HttpConfigError::InvalidBaseUrl { url: self.base_url.clone(), reason };
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
        let client = Client::builder()
            .connect_timeout(self.timeouts.connect)
            .build()
            .map_err(|error| HttpConfigError::Client(error.to_string()))?;
        Ok(Transport {
            client,
            url,
            headers,
            retry: self.retry.clone(),
            timeouts: self.timeouts,
            key: self.api_key.clone(),
            label,
        })
    }

    /// The request body: the extra fields, then `fields` over them.
    fn body(&self, fields: Map<String, Value>) -> Result<Vec<u8>, ModelError> {
        let mut body = self.body.clone();
        body.extend(fields);
        serde_json::to_vec(&Value::Object(body))
            .map_err(|error| ModelError::new(ModelErrorKind::Request, error.to_string()))
    }
}

/// The tool fields of a request, or why they cannot be sent.
fn tool_fields(
    adapter: &dyn Adapter,
    request: &super::ModelRequest<'_>,
) -> Result<Map<String, Value>, ModelError> {
    adapter.request(request.tools, request.choice).map_err(|error| {
        ModelError::new(ModelErrorKind::Request, format!("the request cannot be sent: {error}"))
    })
}

/// Sends `body` and turns what came back into a turn: calls raised against `specs`, a cut
/// stream refused.
async fn exchange(
    transport: &Transport,
    adapter: &dyn Adapter,
    read_usage: UsageReader,
    body: Vec<u8>,
    specs: &[&ToolSpec],
    on_event: &(dyn Fn(StreamEvent) + Send + Sync),
) -> Result<ModelTurn, ModelError> {
    let reader = || sse_body::BodyReader::new(adapter.stream(), read_usage);
    let (mut decoded, usage) = match transport.exchange(body, &reader, on_event).await? {
        Delivered::Streamed(reader) => {
            let bytes = reader.bytes();
            let (decoded, usage) = reader.finish(on_event);
            check_complete(&decoded, bytes, transport.label)?;
            (decoded, usage)
        }
        Delivered::Whole(bytes) => {
            let decoded = adapter.decode(&bytes).map_err(|error| {
                let message =
                    format!("the response of {} cannot be decoded: {error}", transport.label);
                transport.scrub(ModelError::new(ModelErrorKind::Decode, message))
            })?;
            if !decoded.text.is_empty() {
                on_event(StreamEvent::TextDelta(decoded.text.clone()));
            }
            let mut usage = super::Usage::default();
            let value: Value = serde_json::from_slice(&bytes).unwrap_or_default();
            (decoded, read_usage(&value, &mut usage).then_some(usage))
        }
    };
    decoded.raise(specs);
    Ok(ModelTurn { decoded, usage })
}

/// A stream that ended before the provider finished the turn is refused whole, so no call of
/// it can run.
fn check_complete(decoded: &Decoded, bytes: u64, label: &str) -> Result<(), ModelError> {
    if decoded.finish.reason != FinishReason::Unfinished {
        return Ok(());
    }
    if decoded.problems.iter().any(|problem| matches!(problem, Problem::NothingRecognised)) {
        let message = format!("nothing in the {bytes}-byte response is a {label} stream event");
        return Err(ModelError::new(ModelErrorKind::Decode, message));
    }
    let message = format!(
        "the stream from {label} was cut after {bytes} bytes, before the turn was finished; its partial turn was dropped"
    );
    Err(ModelError::new(ModelErrorKind::Transport, message))
}
