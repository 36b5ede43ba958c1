//! What can go wrong while decoding ([`Problem`], [`ProviderError`], [`DecodeError`]) and while
//! encoding ([`EncodeError`], [`BudgetError`]).

use std::fmt;
use std::sync::Arc;

use serde_json::Value;

use crate::schema::JsonError;

use super::Provider;
use super::limits::Limit;
use super::parts::UnsupportedPart;

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
    /// The peer went over one of the [`StreamLimits`](super::StreamLimits): decoding stopped
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

/// A response body that cannot be decoded at all.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum DecodeError {
    /// The body is not JSON.
    Json(Arc<JsonError>),
    /// The body is JSON of the wrong shape.
    Shape {
        /// What was expected.
        expected: &'static str,
    },
    /// The body is the provider's error response.
    Provider(ProviderError),
}

impl fmt::Display for DecodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Json(error) => write!(f, "the response body is not JSON: {error}"),
            Self::Shape { expected } => write!(f, "the response body is not {expected}"),
            Self::Provider(error) => fmt::Display::fmt(error, f),
        }
    }
}

impl std::error::Error for DecodeError {}

/// Which request-wide limit a [`BudgetError`] is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Budget {
    /// Object properties across every strict schema (OpenAI: 5 000).
    Properties,
    /// Levels of object nesting in one schema (OpenAI: 10).
    Nesting,
    /// Characters of property names and enum values across every strict schema (OpenAI:
    /// 120 000).
    NameCharacters,
    /// Enum values across every strict schema (OpenAI: 1 000).
    EnumValues,
    /// Characters of one enum with more than 250 values (OpenAI: 15 000).
    LargeEnumCharacters,
    /// Strict tools in one request (Anthropic: 20).
    StrictTools,
    /// Optional parameters across every strict tool (Anthropic: 24).
    OptionalParameters,
    /// Parameters with a union type (`["string", "null"]`) across every strict tool
    /// (Anthropic: 16).
    UnionParameters,
    /// Function declarations in one request (Gemini: 128).
    Declarations,
}

impl Budget {
    const fn what(self) -> &'static str {
        match self {
            Self::Properties => "object properties",
            Self::Nesting => "levels of object nesting",
            Self::NameCharacters => "characters of property names and enum values",
            Self::EnumValues => "enum values",
            Self::LargeEnumCharacters => "characters in one enum of more than 250 values",
            Self::StrictTools => "strict tools",
            Self::OptionalParameters => "optional parameters",
            Self::UnionParameters => "parameters with a union type",
            Self::Declarations => "function declarations",
        }
    }
}

/// A request would break a provider's limit; nothing was sent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BudgetError {
    /// The provider whose limit it is.
    pub provider: Provider,
    /// The tool that brought the request over the limit.
    pub tool: String,
    /// Which limit.
    pub budget: Budget,
    /// The limit.
    pub limit: usize,
    /// What the request reached with this tool.
    pub actual: usize,
}

impl fmt::Display for BudgetError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "tool `{}` brings the request to {} {}, but {} allows at most {}",
            self.tool,
            self.actual,
            self.budget.what(),
            self.provider.label(),
            self.limit
        )
    }
}

impl std::error::Error for BudgetError {}

/// Tool definitions or a tool choice that cannot be encoded.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum EncodeError {
    /// A provider limit would be broken.
    Budget(BudgetError),
    /// The tool choice names a tool that is not in the request.
    UnknownTool(String),
    /// The provider has no way to express this.
    Unsupported {
        /// The provider.
        provider: Provider,
        /// What cannot be expressed.
        feature: &'static str,
    },
    /// A run-time schema is not a JSON object schema.
    NotAnObjectSchema(String),
    /// A tool result holds a part the provider cannot carry (audio on Anthropic, a TIFF
    /// image): which call, which part, what kind. Nothing is sent.
    UnsupportedPart(UnsupportedPart),
}

impl fmt::Display for EncodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Budget(error) => fmt::Display::fmt(error, f),
            Self::UnknownTool(name) => write!(
                f,
                "the tool choice names `{name}`, which is not among the request's tools; add it or name another"
            ),
            Self::Unsupported { provider, feature } => {
                write!(f, "{} cannot express {feature}", provider.label())
            }
            Self::NotAnObjectSchema(tool) => write!(
                f,
                "the input schema of tool `{tool}` is not an object schema; providers take objects only"
            ),
            Self::UnsupportedPart(part) => fmt::Display::fmt(part, f),
        }
    }
}

impl std::error::Error for EncodeError {}

impl From<BudgetError> for EncodeError {
    fn from(error: BudgetError) -> Self {
        Self::Budget(error)
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
