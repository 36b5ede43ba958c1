//! What can go wrong in a response without stopping the decoder ([`Problem`]): the
//! provider's own error ([`ProviderError`]) and a cap a peer went over ([`Limit`]).

use std::fmt;
use std::sync::Arc;

use serde_json::Value;

use crate::schema::JsonError;

/// An error the provider itself reported: an error body, an `error` event, a failed response.
/// Its text is the provider's, never the model's arguments.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProviderError {
    /// The provider's error type or code (`overloaded_error`, `server_error`, `429`), if given.
    pub kind: Option<String>,
    /// The provider's message.
    pub message: String,
}

impl ProviderError {
    /// Reads `{"type"|"code"|"status": ..., "message": ...}` (or a bare string) leniently.
    pub(crate) fn from_value(value: &Value) -> Self {
        if let Some(message) = value.as_str() {
            return Self { kind: None, message: message.to_owned() };
        }
        let text = |key: &str| value.get(key).and_then(Value::as_str).map(str::to_owned);
        let kind = text("code")
            .or_else(|| text("type").filter(|kind| kind != "error"))
            .or_else(|| text("status"))
            .or_else(|| value.get("code").and_then(Value::as_i64).map(|code| code.to_string()));
        Self { kind, message: text("message").unwrap_or_else(|| "no message given".to_owned()) }
    }
}

impl ProviderError {
    /// The provider's error from the body of an error response (a `4xx` or `5xx`), whatever
    /// the provider: `error.message` with `error.type` or `error.code` (OpenAI, Anthropic,
    /// Gemini), a string `error` (Ollama), or a top-level `message` or `detail` (proxies,
    /// vLLM). `None` when the body holds none of these.
    ///
    /// ```
    /// use tool_runtime::adapters::ProviderError;
    ///
    /// let body = br#"{"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}"#;
    /// let error = ProviderError::from_error_body(body).unwrap();
    /// assert_eq!(error.kind.as_deref(), Some("overloaded_error"));
    /// assert_eq!(error.message, "Overloaded");
    /// assert!(ProviderError::from_error_body(b"Bad Gateway").is_none());
    /// ```
    #[must_use]
    pub fn from_error_body(bytes: &[u8]) -> Option<Self> {
        let body: Value = serde_json::from_slice(bytes).ok()?;
        let text = |value: &Value| value.as_str().map(str::to_owned);
        let error = body.get("error");
        let message = error
            .and_then(|error| error.get("message"))
            .and_then(text)
            .or_else(|| error.and_then(text))
            .or_else(|| body.get("message").and_then(text))
            .or_else(|| body.get("detail").and_then(text))?;
        let kind = error
            .and_then(|error| error.get("type").or_else(|| error.get("code")))
            .and_then(|kind| kind.as_str().map(str::to_owned).or_else(|| Some(kind.to_string())))
            .filter(|kind| kind != "null" && kind != "error");
        Some(Self { kind, message })
    }
}

impl fmt::Display for ProviderError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.kind {
            Some(kind) => write!(f, "the provider reported an error ({kind}): {}", self.message),
            None => write!(f, "the provider reported an error: {}", self.message),
        }
    }
}

impl std::error::Error for ProviderError {}

/// Something wrong in a response that did not stop the decoder. Collected in
/// [`Decoded::problems`](super::Decoded::problems) and reported as
/// [`StreamEvent::Problem`](super::StreamEvent::Problem).
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum Problem {
    /// A line of the stream is not UTF-8; it was skipped.
    InvalidUtf8,
    /// An event's payload is not JSON; it was skipped.
    InvalidPayload(Arc<JsonError>),
    /// An event's payload is JSON of an unexpected shape; it was skipped.
    UnexpectedPayload {
        /// What was expected instead.
        expected: &'static str,
    },
    /// The provider reported an error.
    Provider(ProviderError),
    /// A fragment arrived for a call whose turn had already finished; it was ignored.
    LateFragment {
        /// The call's number in the session.
        index: usize,
    },
    /// A call never got a name; it cannot run.
    Unnamed {
        /// The call's number in the session.
        index: usize,
    },
    /// The stream ended before the provider said the turn was over.
    Unfinished,
    /// Nothing in the input looked like this provider's stream.
    NothingRecognised,
    /// Bytes were fed after the session finished; they were ignored.
    AfterFinish,
    /// The peer went over one of the [`StreamLimits`](crate::adapters::StreamLimits): decoding stopped
    /// here, the turn ended as an error and none of its calls is ready to run.
    LimitExceeded {
        /// Which cap.
        limit: Limit,
        /// Its value.
        value: usize,
    },
    /// A call's message ended before its arguments were seen complete (a second Anthropic
    /// `message_start` inside an open `tool_use` block, an OpenAI-compatible `[DONE]` without
    /// a finish right after a call's name): it never runs.
    CutCall {
        /// The call's number in the session.
        index: usize,
    },
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::InvalidUtf8 => f.write_str("a line of the stream is not UTF-8; it was skipped"),
            Self::InvalidPayload(error) => {
                write!(f, "an event's payload is not JSON ({error}); it was skipped")
            }
            Self::UnexpectedPayload { expected } => {
                write!(f, "an event's payload is not {expected}; it was skipped")
            }
            Self::Provider(error) => fmt::Display::fmt(error, f),
            Self::LateFragment { index } => write!(
                f,
                "call {index} received a fragment after its turn finished; the fragment was ignored"
            ),
            Self::Unnamed { index } => write!(f, "call {index} never received a name"),
            Self::Unfinished => {
                f.write_str("the stream ended before the provider said the turn was over")
            }
            Self::NothingRecognised => {
                f.write_str("nothing in the input is an event of this provider")
            }
            Self::AfterFinish => {
                f.write_str("bytes arrived after the session finished; they were ignored")
            }
            Self::LimitExceeded { limit, value } => write!(
                f,
                "the response went over the limit of {value} {}; decoding stopped and no call of the turn runs",
                limit.what()
            ),
            Self::CutCall { index } => write!(
                f,
                "call {index} was cut off before its arguments were complete; it is not run"
            ),
        }
    }
}

impl std::error::Error for Problem {}

/// Which cap of [`StreamLimits`](crate::adapters::StreamLimits) a peer went over.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Limit {
    /// Bytes of one response body ([`StreamLimits::body_bytes`](crate::adapters::StreamLimits::body_bytes)).
    BodyBytes,
    /// Bytes of one SSE or NDJSON line, or of one event's joined `data`
    /// ([`StreamLimits::line_bytes`](crate::adapters::StreamLimits::line_bytes)).
    LineBytes,
    /// Bytes of one call's argument text ([`StreamLimits::argument_bytes`](crate::adapters::StreamLimits::argument_bytes)).
    ArgumentBytes,
    /// Bytes of one call's name ([`StreamLimits::name_bytes`](crate::adapters::StreamLimits::name_bytes)).
    NameBytes,
    /// Bytes of one call's id as the provider sent it ([`StreamLimits::call_id_bytes`](crate::adapters::StreamLimits::call_id_bytes)).
    CallIdBytes,
    /// Bytes of the model's text in one response ([`StreamLimits::text_bytes`](crate::adapters::StreamLimits::text_bytes)).
    TextBytes,
    /// Calls in one response ([`StreamLimits::calls`](crate::adapters::StreamLimits::calls)).
    Calls,
    /// Problems in one response ([`StreamLimits::problems`](crate::adapters::StreamLimits::problems)).
    Problems,
}

impl Limit {
    /// What the limit counts, for messages.
    #[must_use]
    pub const fn what(self) -> &'static str {
        match self {
            Self::BodyBytes => "bytes in the response body",
            Self::LineBytes => "bytes in one line or event",
            Self::ArgumentBytes => "bytes of arguments in one call",
            Self::NameBytes => "bytes in one call's name",
            Self::CallIdBytes => "bytes in one call's id",
            Self::TextBytes => "bytes of model text in one response",
            Self::Calls => "calls in one response",
            Self::Problems => "problems in one response",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn error_bodies_of_every_provider() {
        let read = |body: &[u8]| {
            ProviderError::from_error_body(body).map(|error| (error.kind, error.message))
        };
        let openai = br#"{"error": {"message": "Incorrect API key provided", "type": "invalid_request_error", "code": "invalid_api_key"}}"#;
        assert_eq!(
            read(openai),
            Some((Some("invalid_request_error".into()), "Incorrect API key provided".into()))
        );
        let anthropic = br#"{"type": "error", "error": {"type": "authentication_error", "message": "invalid x-api-key"}}"#;
        assert_eq!(
            read(anthropic),
            Some((Some("authentication_error".into()), "invalid x-api-key".into()))
        );
        let numeric =
            br#"{"error": {"code": 429, "message": "slow down", "status": "RESOURCE_EXHAUSTED"}}"#;
        assert_eq!(read(numeric), Some((Some("429".into()), "slow down".into())));
        assert_eq!(
            read(br#"{"error": "model 'x' not found"}"#),
            Some((None, "model 'x' not found".into()))
        );
        assert_eq!(read(br#"{"detail": "Not Found"}"#), Some((None, "Not Found".into())));
        assert_eq!(read(b"Bad Gateway"), None);
    }
}
