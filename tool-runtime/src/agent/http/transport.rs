//! One streamed POST with retries and timeouts, shared by the provider clients.

use std::error::Error as _;
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use futures_util::StreamExt;
use reqwest::header::{CONTENT_TYPE, HeaderMap, LOCATION};
use reqwest::{Client, Url};

use super::retry::{RetryPolicy, retry_after, retryable_status};
use crate::adapters::{ProviderError, StreamEvent, StreamSession};
use crate::agent::model::{cut_message, provider_error_text};
use crate::agent::{ModelError, ModelErrorKind};
use crate::runner::DEFAULT_SPAN_TEXT_LIMIT;
use crate::schema::Untrusted;

/// How long a client waits.
///
/// ```
/// use std::time::Duration;
/// use tool_runtime::agent::Timeouts;
///
/// let mut timeouts = Timeouts::default();
/// timeouts.idle = Duration::from_secs(30);
/// assert_eq!(timeouts.connect, Duration::from_secs(10));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct Timeouts {
    /// To open the connection (TCP and TLS; default 10 s).
    pub connect: Duration,
    /// From sending the request to the response's status and headers (default 300 s; a model
    /// that is still loading can be slow to answer).
    pub response: Duration,
    /// The longest silence between two pieces of the body (default 300 s). A long answer
    /// is not cut as long as it keeps streaming.
    pub idle: Duration,
}

impl Default for Timeouts {
    fn default() -> Self {
        Self {
            connect: Duration::from_secs(10),
            response: Duration::from_secs(300),
            idle: Duration::from_secs(300),
        }
    }
}

/// Bytes of an error body read to find the provider's message.
const ERROR_BODY_LIMIT: usize = 64 * 1024;

/// An endpoint and how to reach it.
#[derive(Clone)]
pub(super) struct Transport {
    pub(super) client: Client,
    pub(super) url: Url,
    pub(super) headers: HeaderMap,
    pub(super) retry: RetryPolicy,
    pub(super) timeouts: Timeouts,
    /// The key, header values and URL credentials, kept only to scrub them out of any
    /// message that might echo them.
    pub(super) secrets: Arc<[String]>,
    /// The most bytes one response body may have.
    pub(super) body_limit: usize,
    /// Who is answering, for messages: `OpenAI`, `Anthropic`, `the OpenAI-compatible server at
    /// localhost:8000`.
    pub(super) label: String,
}

impl std::fmt::Debug for Transport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Transport")
            .field("url", &shown_url(&self.url))
            .field("secrets", &format_args!("[{} redacted]", self.secrets.len()))
            .field("retry", &self.retry)
            .field("timeouts", &self.timeouts)
            .finish_non_exhaustive()
    }
}

/// A streamed body on its way into the adapter's session.
pub(super) struct StreamedBody<'s> {
    /// The session the bytes went to.
    pub(super) session: Box<dyn StreamSession + 's>,
    /// How many bytes arrived.
    pub(super) bytes: u64,
}

impl StreamedBody<'_> {
    fn feed(&mut self, chunk: &[u8], on_event: &(dyn Fn(StreamEvent) + Send + Sync)) {
        self.bytes += chunk.len() as u64;
        self.session.feed(chunk).into_iter().for_each(on_event);
    }
}

/// What a successful exchange delivered.
pub(super) enum Delivered<'s> {
    /// The body was streamed into the session.
    Streamed(StreamedBody<'s>),
    /// The server answered with a whole JSON body although a stream was asked for.
    Whole(Vec<u8>),
}

/// A failed attempt and whether another may follow.
struct Failure {
    error: ModelError,
    /// `Some(what the server asked for)` when the attempt may be repeated.
    retry: Option<Option<Duration>>,
}

impl Failure {
    fn fatal(error: ModelError) -> Self {
        Self { error, retry: None }
    }

    fn retryable(error: ModelError, asked: Option<Duration>) -> Self {
        Self { error, retry: Some(asked) }
    }
}

impl Transport {
    /// POSTs `body` and streams the answer into a session made by `session`, retrying what may
    /// be retried. Events are forwarded as the body arrives; once a byte of it has arrived, a
    /// failure is final.
    pub(super) async fn exchange<'s>(
        &self,
        body: Vec<u8>,
        session: &(dyn Fn() -> Box<dyn StreamSession + 's> + Sync),
        on_event: &(dyn Fn(StreamEvent) + Send + Sync),
    ) -> Result<Delivered<'s>, ModelError> {
        // Every attempt sends the same bytes: shared, not copied.
        let body = bytes::Bytes::from(body);
        let mut attempt = 1;
        loop {
            let reader = StreamedBody { session: session(), bytes: 0 };
            let outcome = self.attempt(body.clone(), reader, on_event).await;
            match outcome
                .map_err(|Failure { error, retry }| Failure { error: self.scrub(error), retry })
            {
                Ok(delivered) => return Ok(delivered),
                Err(Failure { error, retry: Some(asked) })
                    if self.retry.allows_another(attempt) =>
                {
                    let wait = self.retry.delay(attempt, asked);
                    let error = error.to_string();
                    let error = Untrusted { text: &error, max: DEFAULT_SPAN_TEXT_LIMIT };
                    tracing::warn!(
                        provider = %self.label,
                        attempt,
                        wait_ms = u64::try_from(wait.as_millis()).unwrap_or(u64::MAX),
                        error = %error,
                        "model request failed; retrying"
                    );
                    tokio::time::sleep(wait).await;
                    attempt += 1;
                }
                Err(Failure { error, retry }) => {
                    return Err(if retry.is_some() && attempt > 1 {
                        ModelError::new(
                            error.kind(),
                            format!("{} (after {attempt} attempts)", error.message()),
                        )
                    } else {
                        error
                    });
                }
            }
        }
    }

    async fn attempt<'s>(
        &self,
        body: bytes::Bytes,
        mut reader: StreamedBody<'s>,
        on_event: &(dyn Fn(StreamEvent) + Send + Sync),
    ) -> Result<Delivered<'s>, Failure> {
        let request = self.client.post(self.url.clone()).headers(self.headers.clone()).body(body);
        let response = match tokio::time::timeout(self.timeouts.response, request.send()).await {
            Err(_) => {
                let message =
                    format!("{} did not answer within {:?}", self.label, self.timeouts.response);
                return Err(Failure::retryable(
                    ModelError::new(ModelErrorKind::Timeout, message),
                    None,
                ));
            }
            Ok(Err(error)) => {
                let message = format!("could not reach {}: {}", self.label, describe(&error));
                return Err(Failure::retryable(
                    ModelError::new(ModelErrorKind::Transport, message),
                    None,
                ));
            }
            Ok(Ok(response)) => response,
        };
        let status = response.status();
        if status.is_redirection() {
            let message = redirected(&self.label, &self.url, response.headers());
            return Err(Failure::fatal(ModelError::new(
                ModelErrorKind::Status(status.as_u16()),
                message,
            )));
        }
        if !status.is_success() {
            let asked = retry_after(response.headers(), SystemTime::now());
            let text = self.error_body(response).await;
            let error = ModelError::new(ModelErrorKind::Status(status.as_u16()), text);
            return Err(if retryable_status(status) {
                Failure::retryable(error, asked)
            } else {
                Failure::fatal(error)
            });
        }
        let whole = response
            .headers()
            .get(CONTENT_TYPE)
            .and_then(|value| value.to_str().ok())
            .is_some_and(|kind| kind.trim_start().starts_with("application/json"));
        let mut stream = response.bytes_stream();
        let mut whole_body = Vec::new();
        loop {
            let next = tokio::time::timeout(self.timeouts.idle, stream.next()).await;
            let received = if whole { whole_body.len() as u64 } else { reader.bytes };
            // A cut before any event was passed on may be retried; after, it is final.
            let cut = |error| {
                if received == 0 || whole {
                    Failure::retryable(error, None)
                } else {
                    Failure::fatal(error)
                }
            };
            let chunk = match next {
                Ok(Some(Ok(chunk))) => chunk,
                Ok(None) => break,
                Err(_) => {
                    let error = ModelError::new(
                        ModelErrorKind::Timeout,
                        format!(
                            "{} sent nothing for {:?}; the stream was cut after {received} bytes",
                            self.label, self.timeouts.idle
                        ),
                    );
                    return Err(cut(error));
                }
                Ok(Some(Err(error))) => {
                    let message = format!(
                        "the connection to {} dropped; the stream was cut after {received} bytes: {}",
                        self.label,
                        describe(&error)
                    );
                    return Err(cut(ModelError::new(ModelErrorKind::Transport, message)));
                }
            };
            if received.saturating_add(chunk.len() as u64) > self.body_limit as u64 {
                let message = format!(
                    "the response from {} went over the limit of {} bytes in the response body; it was dropped",
                    self.label, self.body_limit
                );
                return Err(Failure::fatal(ModelError::new(ModelErrorKind::Decode, message)));
            }
            if whole {
                whole_body.extend_from_slice(&chunk);
            } else {
                reader.feed(&chunk, on_event);
            }
        }
        Ok(if whole { Delivered::Whole(whole_body) } else { Delivered::Streamed(reader) })
    }

    /// The provider's message from an error response: `error.message` (OpenAI, Anthropic), a
    /// string `error` (Ollama), `message`, or the start of the body as text.
    async fn error_body(&self, response: reqwest::Response) -> String {
        let mut bytes = Vec::new();
        let mut stream = response.bytes_stream();
        while bytes.len() < ERROR_BODY_LIMIT {
            match tokio::time::timeout(self.timeouts.idle, stream.next()).await {
                Ok(Some(Ok(chunk))) => bytes.extend_from_slice(&chunk),
                _ => break,
            }
        }
        provider_message(&bytes, &self.secrets)
    }

    /// The error with every occurrence of a configured secret (key, header value, URL
    /// credential) replaced.
    pub(super) fn scrub(&self, error: ModelError) -> ModelError {
        match scrubbed(error.message(), &self.secrets) {
            Some(message) => ModelError::new(error.kind(), message),
            None => error,
        }
    }
}

/// What a redirect is refused with: where it pointed (scheme, host, port and path; never a
/// user name, password or query) and why it was not followed.
fn redirected(label: &str, url: &Url, headers: &HeaderMap) -> String {
    let target = headers
        .get(LOCATION)
        .and_then(|value| value.to_str().ok())
        .and_then(|location| url.join(location).ok())
        .map(|mut target| {
            target.set_query(None);
            target.set_fragment(None);
            // Only fails for URLs that cannot have credentials.
            let _ = target.set_username("");
            let _ = target.set_password(None);
            format!("`{target}`")
        })
        .unwrap_or_else(|| "no usable location".to_owned());
    format!(
        "{label} redirected the request to {target}; redirects are never followed, so the key, \
         the headers and the conversation go only to the configured endpoint: set the base URL \
         to the new address if you trust it"
    )
}

/// `text` with every occurrence of each of `secrets` replaced; `None` when it holds none.
fn scrubbed(text: &str, secrets: &[String]) -> Option<String> {
    if !secrets.iter().any(|secret| text.contains(secret.as_str())) {
        return None;
    }
    let mut text = text.to_owned();
    for secret in secrets {
        text = text.replace(secret.as_str(), "[redacted]");
    }
    Some(text)
}

/// `url` without its user name and password.
fn shown_url(url: &Url) -> String {
    if url.username().is_empty() && url.password().is_none() {
        return url.as_str().to_owned();
    }
    let mut shown = url.clone();
    // Only fails for URLs that cannot have credentials, which these have.
    let _ = shown.set_username("");
    let _ = shown.set_password(None);
    shown.as_str().replacen("://", "://[redacted]@", 1)
}

/// What the provider said in an error body, with `secrets` replaced and then truncated (the
/// other way round, the start of a secret the cut went through would stay): its error as the
/// adapters read it, else the body as text.
pub(super) fn provider_message(bytes: &[u8], secrets: &[String]) -> String {
    let message = match ProviderError::from_error_body(bytes) {
        Some(error) => provider_error_text(&error),
        None => String::from_utf8_lossy(bytes).trim().to_owned(),
    };
    provider_said(&message, secrets)
}

/// What a provider said (an error body's message, an error event's), with `secrets` replaced
/// and then cut, in that order.
pub(super) fn provider_said(said: &str, secrets: &[String]) -> String {
    let said = if said.is_empty() { "no error message given" } else { said };
    cut_message(scrubbed(said, secrets).unwrap_or_else(|| said.to_owned()))
}

/// A reqwest error with its causes (`error sending request: connection refused`).
fn describe(error: &reqwest::Error) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        let cause_text = cause.to_string();
        if !text.contains(&cause_text) {
            text.push_str(": ");
            text.push_str(&cause_text);
        }
        source = cause.source();
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent::model::PROVIDER_MESSAGE_LIMIT as MESSAGE_LIMIT;

    #[test]
    fn provider_messages() {
        assert_eq!(provider_message(b"  Bad Gateway \n", &[]), "Bad Gateway");
        assert_eq!(provider_message(b"", &[]), "no error message given");
        let long = "\u{e9}".repeat(MESSAGE_LIMIT + 10);
        assert_eq!(provider_message(long.as_bytes(), &[]).chars().count(), MESSAGE_LIMIT + 3);
    }
}
