//! What can go wrong while decoding a whole body ([`DecodeError`]) and while encoding
//! ([`EncodeError`], [`BudgetError`]).

use std::fmt;
use std::sync::Arc;

use crate::conversation::ProviderError;
use crate::schema::JsonError;

use super::Provider;

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
    /// The request names a tool it does not hold: its tool choice, or a tool search's result
    /// that found a tool the request's [`ClientSearch`](crate::adapters::ClientSearch) does
    /// not hold.
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
    /// The tool is for MCP clients only: its input schema leaves the subset providers accept
    /// ([`DynamicToolBuilder::mcp_only`](crate::runtime::DynamicToolBuilder::mcp_only)).
    McpOnly(String),
    /// The tool may be called only from code the model writes
    /// ([`Callers::Programmatic`](crate::spec::Callers::Programmatic)), and the provider's
    /// models cannot call tools from code ([`Provider::calls_from_code`]).
    CodeOnly {
        /// The provider.
        provider: Provider,
        /// The tool.
        tool: String,
    },
    /// Two different call ids of the conversation would be sent as one id in the provider's
    /// form ([`CallIdFormat`](super::CallIdFormat)).
    CallIdClash {
        /// The id met first.
        first: String,
        /// The other id.
        second: String,
        /// The id both would be sent as.
        wire: String,
    },
}

impl fmt::Display for EncodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Budget(error) => fmt::Display::fmt(error, f),
            Self::UnknownTool(name) => write!(
                f,
                "the request names `{name}` (in its tool choice, or as a tool search's find), which is not among its tools; add it or name another"
            ),
            Self::Unsupported { provider, feature } => {
                write!(f, "{} cannot express {feature}", provider.label())
            }
            Self::NotAnObjectSchema(tool) => write!(
                f,
                "the input schema of tool `{tool}` is not an object schema; providers take objects only"
            ),
            Self::McpOnly(tool) => write!(
                f,
                "the tool `{tool}` is for MCP clients only: its input schema leaves the subset providers accept, so no model is offered it"
            ),
            Self::CodeOnly { provider, tool } => write!(
                f,
                "the tool `{tool}` may be called only from code the model writes (`callers = programmatic`), which {} cannot do; allow direct calls too (`callers = both`) or leave the tool out of this request",
                provider.label()
            ),
            Self::CallIdClash { first, second, wire } => write!(
                f,
                "the call ids `{first}` and `{second}` would both be sent as `{wire}` in the provider's id form; give one of the calls another id"
            ),
        }
    }
}

impl std::error::Error for EncodeError {}

impl From<BudgetError> for EncodeError {
    fn from(error: BudgetError) -> Self {
        Self::Budget(error)
    }
}
