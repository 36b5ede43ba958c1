//! What a model said in one turn: its calls ([`ToolCall`], with their [`CallArguments`]), how
//! the turn ended ([`Finish`]), what it used ([`Usage`]), the whole turn ([`Decoded`]) and
//! what a streaming session reports on the way ([`StreamEvent`]).

use std::fmt;
use std::sync::Arc;

use serde::ser::SerializeMap;
use serde::{Serialize, Serializer};
use serde_json::{Map, Value};

use crate::schema::JsonError;

use super::problem::Problem;

/// Provider data that has no canonical meaning but must survive a round trip (a Gemini
/// `thoughtSignature`, an OpenAI Responses item `id`). Adapters fill it when decoding and read it
/// when encoding; other code passes it along untouched.
///
/// ```
/// use tool_runtime::adapters::Extras;
///
/// let mut extras = Extras::new();
/// extras.insert("thoughtSignature", "c2ln".into());
/// assert_eq!(extras.get("thoughtSignature").and_then(|v| v.as_str()), Some("c2ln"));
/// ```
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
#[serde(transparent)]
pub struct Extras(Map<String, Value>);

impl Extras {
    /// No extras.
    #[must_use]
    pub fn new() -> Self {
        Self::default()
    }

    /// The value under `key`.
    #[must_use]
    pub fn get(&self, key: &str) -> Option<&Value> {
        self.0.get(key)
    }

    /// Sets `key` to `value`, replacing what was there.
    pub fn insert(&mut self, key: impl Into<String>, value: Value) {
        self.0.insert(key.into(), value);
    }

    /// Whether there is nothing to carry.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Appends `value` to the array under `key`, starting one if needed.
    pub(crate) fn push(&mut self, key: &str, value: Value) {
        match self.0.get_mut(key) {
            Some(Value::Array(items)) => items.push(value),
            _ => {
                self.0.insert(key.to_owned(), Value::Array(vec![value]));
            }
        }
    }

    /// Every key and value, in insertion order.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &Value)> {
        self.0.iter().map(|(key, value)| (key.as_str(), value))
    }
}

/// Why a call's arguments could not be used. The raw text is kept next to it in
/// [`CallArguments::Invalid`]; nothing is repaired or guessed.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum ArgumentsProblem {
    /// Not JSON (syntax, a duplicate key, cut off).
    Json(Arc<JsonError>),
    /// The same JSON value sent several times back to back (`{..}{..}`): the provider re-sent
    /// the full arguments after streaming them.
    Repeated {
        /// How many copies arrived.
        copies: usize,
    },
    /// Several different JSON values back to back: which one was meant is unknowable.
    Concatenated {
        /// How many values arrived.
        values: usize,
    },
    /// Valid JSON, but not an object.
    NotAnObject,
    /// The call's message ended before its arguments were seen complete.
    Cut,
}

impl fmt::Display for ArgumentsProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Json(error) => write!(f, "the arguments are not valid JSON: {error}"),
            Self::Repeated { copies } => write!(
                f,
                "the arguments arrived {copies} times back to back; they are not guessed at"
            ),
            Self::Concatenated { values } => write!(
                f,
                "the arguments hold {values} JSON values back to back; which one was meant is unknown"
            ),
            Self::NotAnObject => f.write_str("the arguments are not a JSON object"),
            Self::Cut => f.write_str("the call was cut off before its arguments were complete"),
        }
    }
}

impl std::error::Error for ArgumentsProblem {}

/// The arguments of a [`ToolCall`]: parsed, or the raw text with the reason it was refused.
#[derive(Debug, Clone)]
pub enum CallArguments {
    /// A JSON object, parsed strictly (duplicate keys are refused).
    Parsed(Value),
    /// What arrived, and why it cannot be used.
    Invalid {
        /// The raw text exactly as the provider sent it.
        raw: String,
        /// Why it was refused.
        problem: ArgumentsProblem,
    },
}

impl CallArguments {
    /// The parsed object, if the arguments were valid.
    #[must_use]
    pub fn value(&self) -> Option<&Value> {
        match self {
            Self::Parsed(value) => Some(value),
            Self::Invalid { .. } => None,
        }
    }

    /// The arguments as JSON text: the compact rendering when parsed, the raw text otherwise.
    #[must_use]
    pub fn to_json_text(&self) -> String {
        match self {
            Self::Parsed(value) => value.to_string(),
            Self::Invalid { raw, .. } => raw.clone(),
        }
    }
}

/// Where a call's [`ToolCall::id`] came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum IdOrigin {
    /// The provider sent it.
    Provider,
    /// The provider sent none (Gemini, Ollama) or one call stood for several
    /// (`multi_tool_use.parallel`): the decoder made one up, unique in the session.
    Minted,
    /// The provider sent this id for an earlier call of the same response too; the id was
    /// replaced by a unique one (Anthropic refuses duplicate ids in a request).
    Reminted(String),
}

/// One call a model asked for.
///
/// Decoders produce these in model order. A call is executable when it is
/// [`complete`](ToolCall::complete) and its arguments parsed; see [`ToolCall::is_executable`].
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct ToolCall {
    /// Unique within the decoded response; echo it in the result.
    pub id: String,
    /// The tool's name as the model wrote it.
    pub name: String,
    /// The arguments, or why they are unusable.
    pub arguments: CallArguments,
    /// Whether the response finished normally: `false` when it was cut off (output budget,
    /// filter, error, dropped connection), in which case the call must not run.
    pub complete: bool,
    /// Where [`id`](ToolCall::id) came from.
    pub id_origin: IdOrigin,
    /// Provider data to echo when the call is sent back.
    pub extras: Extras,
    /// The arguments exactly as the provider sent them (the text, or for a provider that
    /// sends an object, that object's JSON), for the call's audit record
    /// ([`RawCall`](crate::runtime::RawCall)); `None` for a call built by hand or read from a
    /// stored conversation.
    pub raw_arguments: Option<Arc<str>>,
}

impl ToolCall {
    /// A complete call with parsed arguments and a provider id.
    ///
    /// ```
    /// use tool_runtime::adapters::ToolCall;
    ///
    /// let call = ToolCall::new("call_1", "core__get_current_time", serde_json::json!({}));
    /// assert!(call.is_executable());
    /// ```
    #[must_use]
    pub fn new(id: impl Into<String>, name: impl Into<String>, arguments: Value) -> Self {
        Self {
            id: id.into(),
            name: name.into(),
            arguments: CallArguments::Parsed(arguments),
            complete: true,
            id_origin: IdOrigin::Provider,
            extras: Extras::new(),
            raw_arguments: None,
        }
    }

    /// The call as the model sent it, for its audit record: `{"id", "name", "arguments"}`,
    /// the arguments' text as it arrived ([`raw_arguments`](Self::raw_arguments)), or as this
    /// call holds them when it was built by hand.
    #[must_use]
    pub fn raw_call(&self) -> crate::runtime::RawCall {
        let arguments = self
            .raw_arguments
            .as_deref()
            .map_or_else(|| self.arguments.to_json_text(), str::to_owned);
        let raw = serde_json::json!({"id": self.id, "name": self.name, "arguments": arguments});
        crate::runtime::RawCall::new(&raw.to_string())
    }

    /// Whether code the model wrote made this call (Anthropic's programmatic tool calling,
    /// OpenAI Responses' `program` items) rather than the model itself: the provider's
    /// `caller`, which the adapters keep in [`extras`](Self::extras) under `"caller"` and send
    /// back with the turn, names a type other than `direct`. The agent refuses such a call of
    /// a tool whose [`Callers`](crate::spec::Callers) do not allow code, and a direct call of
    /// one that only code may call (`unavailable`).
    ///
    /// ```
    /// use serde_json::json;
    /// use tool_runtime::adapters::ToolCall;
    ///
    /// let mut call = ToolCall::new("toolu_1", "sales__query", json!({"sql": "select 1"}));
    /// assert!(!call.from_code());
    /// call.extras.insert("caller", json!({"type": "code_execution_20260120", "tool_id": "srvtoolu_1"}));
    /// assert!(call.from_code());
    /// ```
    #[must_use]
    pub fn from_code(&self) -> bool {
        self.extras
            .get(CALLER)
            .and_then(|caller| caller.get("type"))
            .and_then(Value::as_str)
            .is_some_and(|kind| kind != "direct")
    }

    /// Whether the model went on working after making this call, without waiting for its
    /// result: OpenAI Responses marks the calls of an
    /// [asynchronous](crate::spec::ToolSpec::is_asynchronous) tool `async: true`, which the
    /// adapter keeps in [`extras`](Self::extras) under `"async"` and sends back with the turn.
    ///
    /// ```
    /// use serde_json::json;
    /// use tool_runtime::adapters::{Adapter, OpenAiResponses};
    ///
    /// let decoded = OpenAiResponses::new()
    ///     .decode(br#"{"status": "completed", "output": [{"type": "function_call", "call_id": "call_1",
    ///         "name": "reports__build", "arguments": "{}", "async": true}]}"#)
    ///     .unwrap();
    /// assert!(decoded.calls[0].is_async());
    /// ```
    #[must_use]
    pub fn is_async(&self) -> bool {
        self.extras.get(ASYNC) == Some(&Value::Bool(true))
    }

    /// Whether the call may be handed to the runner: the response finished normally and the
    /// arguments parsed into an object.
    #[must_use]
    pub fn is_executable(&self) -> bool {
        self.complete && !self.name.is_empty() && self.arguments.value().is_some()
    }
}

impl Serialize for ToolCall {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(None)?;
        map.serialize_entry("id", &self.id)?;
        map.serialize_entry("name", &self.name)?;
        match &self.arguments {
            CallArguments::Parsed(value) => map.serialize_entry("arguments", value)?,
            CallArguments::Invalid { raw, problem } => {
                map.serialize_entry("arguments", &Value::Null)?;
                map.serialize_entry("error", &problem.to_string())?;
                map.serialize_entry("raw_arguments", raw)?;
            }
        }
        map.serialize_entry("complete", &self.complete)?;
        match &self.id_origin {
            IdOrigin::Provider => map.serialize_entry("id_origin", "provider")?,
            IdOrigin::Minted => map.serialize_entry("id_origin", "minted")?,
            IdOrigin::Reminted(original) => {
                map.serialize_entry("id_origin", "reminted")?;
                map.serialize_entry("provider_id", original)?;
            }
        }
        if !self.extras.is_empty() {
            map.serialize_entry("extras", &self.extras)?;
        }
        map.end()
    }
}

/// Why a model's turn ended, in provider-independent terms.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum FinishReason {
    /// The model wants the calls run (also reported when a provider said "stop" although it
    /// called tools).
    ToolCalls,
    /// The model ended its turn without calling tools.
    Stop,
    /// The output budget ran out (`length`, `max_tokens`, `MAX_TOKENS`): whatever was being
    /// written is cut off.
    Length,
    /// A safety filter or refusal stopped the output.
    ContentFilter,
    /// The provider reported an error in the middle of the response.
    Error,
    /// The stream ended before the provider said it was done.
    Unfinished,
    /// Anything else; see [`Finish::provider_reason`].
    Other,
}

impl FinishReason {
    /// Every reason, in declaration order.
    pub const ALL: [Self; 7] = [
        Self::ToolCalls,
        Self::Stop,
        Self::Length,
        Self::ContentFilter,
        Self::Error,
        Self::Unfinished,
        Self::Other,
    ];

    /// The snake_case name used in JSON.
    #[must_use]
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::ToolCalls => "tool_calls",
            Self::Stop => "stop",
            Self::Length => "length",
            Self::ContentFilter => "content_filter",
            Self::Error => "error",
            Self::Unfinished => "unfinished",
            Self::Other => "other",
        }
    }
}

impl fmt::Display for FinishReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// How a turn ended: the canonical reason and the provider's own word for it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finish {
    /// The canonical reason.
    pub reason: FinishReason,
    /// What the provider said (`"stop"`, `"max_tokens"`, `"MALFORMED_FUNCTION_CALL"`), if
    /// anything.
    pub provider_reason: Option<String>,
}

impl Finish {
    /// A finish with the given reason and the provider's word for it.
    #[must_use]
    pub fn new(reason: FinishReason, provider_reason: Option<&str>) -> Self {
        Self { reason, provider_reason: provider_reason.map(str::to_owned) }
    }

    /// Whether calls made before this finish are whole and may run.
    ///
    /// ```
    /// use tool_runtime::adapters::{Finish, FinishReason};
    ///
    /// assert!(Finish::new(FinishReason::ToolCalls, Some("tool_use")).allows_execution());
    /// assert!(!Finish::new(FinishReason::Length, Some("max_tokens")).allows_execution());
    /// ```
    #[must_use]
    pub fn allows_execution(&self) -> bool {
        matches!(self.reason, FinishReason::ToolCalls | FinishReason::Stop)
    }
}

impl Serialize for Finish {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.reason.as_str())
    }
}

/// A decoded model response: its calls in model order, its text, how it ended, and every
/// problem met on the way (nothing is dropped silently).
///
/// Serialised (this is what `wire decode` prints), its keys are `tool_calls`, `text`, `finish`,
/// `provider_finish`, `problems` and, when not empty, `extras`; [`usage`](Decoded::usage) is
/// accounting, not part of the turn, and is left out.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct Decoded {
    /// The calls, in the order the model wrote them.
    pub calls: Vec<ToolCall>,
    /// The text the model wrote besides its calls.
    pub text: String,
    /// How the turn ended.
    pub finish: Finish,
    /// Everything that went wrong without stopping the decoder.
    pub problems: Vec<Problem>,
    /// Response-level provider data to echo in the assistant turn (Anthropic thinking blocks,
    /// OpenAI Responses reasoning items).
    pub extras: Extras,
    /// The tokens the turn used, when the provider reported them.
    pub usage: Option<Usage>,
}

impl Decoded {
    /// A turn built by hand (a test, a stored conversation): its text and calls, finished
    /// normally (`tool_calls` when it has calls, `stop` otherwise), with no problems, extras or
    /// usage.
    ///
    /// ```
    /// use tool_runtime::adapters::{Decoded, FinishReason, ToolCall};
    ///
    /// let turn = Decoded::new("", vec![ToolCall::new("call_1", "core__time", serde_json::json!({}))]);
    /// assert_eq!(turn.finish.reason, FinishReason::ToolCalls);
    /// assert_eq!(Decoded::new("Hello!", Vec::new()).finish.reason, FinishReason::Stop);
    /// ```
    #[must_use]
    pub fn new(text: impl Into<String>, calls: Vec<ToolCall>) -> Self {
        let reason = if calls.is_empty() { FinishReason::Stop } else { FinishReason::ToolCalls };
        Self {
            calls,
            text: text.into(),
            finish: Finish::new(reason, None),
            problems: Vec::new(),
            extras: Extras::new(),
            usage: None,
        }
    }

    /// The tools a provider-side tool search loaded on this turn
    /// ([`DeferLoading`](super::DeferLoading)): Anthropic's `tool_reference` blocks, OpenAI's
    /// `tool_search_output` items. They are not calls: the provider has made those tools'
    /// definitions available, and the model may call them on a later turn (the search's own
    /// blocks travel back with the turn, in [`Decoded::extras`]).
    ///
    /// ```
    /// use tool_runtime::adapters::{Adapter, Anthropic};
    ///
    /// let decoded = Anthropic::new().decode(br#"{"type": "message", "role": "assistant", "content": [
    ///     {"type": "server_tool_use", "id": "srvtoolu_1", "name": "tool_search_tool_bm25", "input": {"query": "weather"}},
    ///     {"type": "tool_search_tool_result", "tool_use_id": "srvtoolu_1", "content": {
    ///         "type": "tool_search_tool_search_result",
    ///         "tool_references": [{"type": "tool_reference", "tool_name": "weather__forecast"}]}}],
    ///     "stop_reason": "end_turn"}"#).unwrap();
    /// assert_eq!(decoded.tool_references().collect::<Vec<_>>(), ["weather__forecast"]);
    /// assert!(decoded.calls.is_empty());
    /// ```
    pub fn tool_references(&self) -> impl Iterator<Item = &str> {
        let names = match self.extras.get(TOOL_REFERENCES) {
            Some(Value::Array(names)) => names.as_slice(),
            _ => &[],
        };
        names.iter().filter_map(Value::as_str)
    }

    /// The calls that may be handed to the runner: none when the response as a whole ended
    /// in a way that allows no execution (a limit exceeded after a turn had finished makes
    /// the response an error, and its calls do not run either).
    pub fn executable(&self) -> impl Iterator<Item = &ToolCall> {
        let allowed = self.finish.allows_execution();
        self.calls.iter().filter(move |call| allowed && call.is_executable())
    }
}

impl Serialize for Decoded {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(None)?;
        map.serialize_entry("tool_calls", &self.calls)?;
        map.serialize_entry("text", &self.text)?;
        map.serialize_entry("finish", &self.finish)?;
        map.serialize_entry("provider_finish", &self.finish.provider_reason)?;
        let problems: Vec<String> = self.problems.iter().map(ToString::to_string).collect();
        map.serialize_entry("problems", &problems)?;
        if !self.extras.is_empty() {
            map.serialize_entry("extras", &self.extras)?;
        }
        map.end()
    }
}

/// Tokens a model turn used, as the provider reported them, in provider-independent terms.
///
/// Decoders read it from wherever the provider puts it (an OpenAI usage chunk, Anthropic's
/// `message_start` and `message_delta`, Gemini's usage metadata, Ollama's eval counts) and
/// report it as [`StreamEvent::Usage`] and in [`Decoded::usage`]. Input tokens include
/// cached ones (Anthropic reports cache reads and writes apart).
///
/// ```
/// use tool_runtime::adapters::{Adapter, Anthropic, Usage};
///
/// let decoded = Anthropic::new()
///     .decode(br#"{"content": [], "stop_reason": "end_turn",
///         "usage": {"input_tokens": 10, "cache_read_input_tokens": 5, "output_tokens": 3}}"#)
///     .unwrap();
/// assert_eq!(decoded.usage, Some(Usage { input_tokens: 15, output_tokens: 3 }));
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Usage {
    /// Tokens read.
    pub input_tokens: u64,
    /// Tokens written.
    pub output_tokens: u64,
}

/// The key under which a call's `caller` is kept in [`ToolCall::extras`] (see
/// [`ToolCall::from_code`]).
pub(crate) const CALLER: &str = "caller";

/// The key of a tool the model does not wait for, on its definition and its calls, which
/// keep it in [`ToolCall::extras`] (see [`ToolCall::is_async`]).
pub(crate) const ASYNC: &str = "async";

/// The key under which a tool search's result keeps the names of the tools it found, in
/// [`ToolResult::extras`](super::ToolResult::extras) (see
/// [`ToolResult::found`](super::ToolResult::found)).
pub(crate) const FOUND: &str = "found_tools";

/// The key of a search call that came as OpenAI Responses' `tool_search_call` item, in
/// [`ToolCall::extras`] (its result goes back as a `tool_search_output` item).
pub(crate) const SEARCH_CALL: &str = "tool_search_call";

/// The key under which [`Decoded::tool_references`] are kept in [`Decoded::extras`].
pub(crate) const TOOL_REFERENCES: &str = "tool_references";

/// What a streaming session reports while bytes arrive.
///
/// `index` numbers the calls of the session in the order the model started them. The final
/// [`Decoded`] is authoritative: a name that keeps growing after [`StreamEvent::CallStarted`]
/// is reported whole there.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum StreamEvent {
    /// A call began (reported once its name is known and its arguments start). A
    /// `multi_tool_use.parallel` call is reported as the calls it stands for, each under the id
    /// its [`ToolCall`] carries, when its turn finishes; every call of [`Decoded::calls`] with
    /// a name is started exactly once.
    CallStarted {
        /// The call's number in the session (the calls of one split wrapper share it).
        index: usize,
        /// Its id (minted when the provider sends none).
        id: String,
        /// Its name so far.
        name: String,
    },
    /// More argument text for a started call.
    ArgumentsDelta {
        /// The call's number in the session.
        index: usize,
        /// The raw text, exactly as sent.
        delta: String,
    },
    /// A call is whole and its turn finished normally: it may run (check its arguments).
    /// Calls of a cut-off turn are never reported ready.
    CallReady {
        /// The number of the streamed call (several ready calls share it when one
        /// `multi_tool_use.parallel` call is unwrapped).
        index: usize,
        /// The finished call.
        call: ToolCall,
    },
    /// More text from the model.
    TextDelta(String),
    /// The provider said the turn is over.
    Finish(Finish),
    /// The provider reported the tokens used so far (the total, not an increment); the last
    /// report is [`Decoded::usage`].
    Usage(Usage),
    /// Something was wrong in the stream; decoding went on.
    Problem(Problem),
}
