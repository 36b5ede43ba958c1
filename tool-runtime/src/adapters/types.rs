//! The canonical, provider-independent side of the adapters: what a model asked for
//! ([`ToolCall`], [`Decoded`]), how a turn ended ([`Finish`]), what goes back ([`ToolResult`])
//! and how tool use is steered ([`ToolChoice`]).

use std::fmt;
use std::sync::Arc;

use serde::ser::SerializeMap;
use serde::{Serialize, Serializer};
use serde_json::{Map, Value};

use crate::content::ToolOutput;
use crate::runtime::{CallOutcome, EventOutcome, ExecError, ToolErrorCode, ToolExecResult};
use crate::schema::JsonError;
use crate::spec::ToolSpec;

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
        }
    }

    /// Whether the call may be handed to the runner: the response finished normally and the
    /// arguments parsed into an object.
    #[must_use]
    pub fn is_executable(&self) -> bool {
        self.complete && !self.name.is_empty() && self.arguments.value().is_some()
    }
}

impl ToolCall {
    /// Raises the arguments when the call names one of `specs`.
    pub(crate) fn raise(&mut self, specs: &[&ToolSpec]) {
        if let Some(spec) = specs.iter().find(|spec| spec.name() == self.name)
            && let CallArguments::Parsed(value) = &mut self.arguments
        {
            super::raise_arguments(spec.input_schema(), value);
        }
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

    /// Applies [`raise_arguments`](super::raise_arguments) to every parsed call whose name is
    /// one of `specs`, so arguments lowered for a provider validate against the original
    /// schema again.
    ///
    /// [`Adapter::decode_for`](super::Adapter::decode_for) and
    /// [`Adapter::stream_for`](super::Adapter::stream_for) do this already; call it only on a
    /// response decoded without the specs.
    pub fn raise(&mut self, specs: &[&ToolSpec]) {
        for call in &mut self.calls {
            call.raise(specs);
        }
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

/// What a call that ended is sent to the model as: its output, or its error with the typed
/// code. Built from the runner's [`CallOutcome`] by [`ToolResult::from_exec`] (a call that
/// waits has nothing to send yet).
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum ToolOutcome {
    /// The (already redacted) output: its parts, in order.
    Done(ToolOutput),
    /// A failure the model may read: its [`code`](ExecError::code) and its message, which is
    /// safe to show.
    Failed(ExecError),
}

impl ToolOutcome {
    /// What the model is sent for a call's outcome: the output of a call that is done, the
    /// error of one that failed; `None` for a call that waits (it has no result yet).
    ///
    /// ```
    /// use tool_runtime::adapters::ToolOutcome;
    /// use tool_runtime::runtime::{CallOutcome, ExecError, ToolErrorCode, Waiting, WaitsFor};
    ///
    /// let failed = CallOutcome::Failed(ExecError::new(ToolErrorCode::Timeout, "too slow"));
    /// assert!(matches!(ToolOutcome::from_call(&failed), Some(ToolOutcome::Failed(e)) if e.code == ToolErrorCode::Timeout));
    /// let waiting = CallOutcome::Waiting(Waiting::new(WaitsFor::Approval, "waits"));
    /// assert_eq!(ToolOutcome::from_call(&waiting), None);
    /// ```
    #[must_use]
    pub fn from_call(outcome: &CallOutcome) -> Option<Self> {
        match outcome {
            CallOutcome::Done(output) => Some(Self::Done(output.clone())),
            CallOutcome::Failed(error) => Some(Self::Failed(error.clone())),
            _ => None,
        }
    }

    /// The output, when the call is done.
    #[must_use]
    pub fn output(&self) -> Option<&ToolOutput> {
        match self {
            Self::Done(output) => Some(output),
            Self::Failed(_) => None,
        }
    }

    /// The error, when the call failed.
    #[must_use]
    pub fn error(&self) -> Option<&ExecError> {
        match self {
            Self::Failed(error) => Some(error),
            Self::Done(_) => None,
        }
    }

    /// The outcome as events carry it ([`EventOutcome`]): the output's value, parts and
    /// details without bytes, or the error.
    #[must_use]
    pub fn to_event(&self) -> EventOutcome {
        match self {
            Self::Done(output) => EventOutcome::ok(output),
            Self::Failed(error) => EventOutcome::Err { error: error.clone() },
        }
    }
}

/// A result to send back to the provider: which call it answers and what came of it.
///
/// Build it from the [`ToolCall`] it answers, so provider extras travel along; for a call the
/// runner ran, [`from_exec`](Self::from_exec) takes the runner's result as it is.
///
/// ```
/// use tool_runtime::adapters::{ToolCall, ToolResult};
/// use tool_runtime::runtime::ToolErrorCode;
///
/// let call = ToolCall::new("call_1", "core__get_current_time", serde_json::json!({}));
/// let ok = ToolResult::ok(&call, serde_json::json!({"iso8601": "2026-11-18T08:26:40Z"}));
/// let failed = ToolResult::error(&call, ToolErrorCode::Timeout, "the clock did not answer in time");
/// assert_eq!(ok.call_id, "call_1");
/// assert!(failed.is_error());
/// ```
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct ToolResult {
    /// The [`ToolCall::id`] this answers.
    pub call_id: String,
    /// The tool's name (Gemini and Ollama match results by name).
    pub name: String,
    /// What came of the call.
    pub outcome: ToolOutcome,
    /// The call's [`ToolCall::extras`].
    pub extras: Extras,
}

impl ToolResult {
    /// A result for a call known only by id and name (for example from the runner's record).
    #[must_use]
    pub fn new(call_id: impl Into<String>, name: impl Into<String>, outcome: ToolOutcome) -> Self {
        Self { call_id: call_id.into(), name: name.into(), outcome, extras: Extras::new() }
    }

    /// A successful result answering `call`: a JSON value, or a
    /// [`ToolOutput`] of several parts.
    #[must_use]
    pub fn ok(call: &ToolCall, output: impl Into<ToolOutput>) -> Self {
        Self {
            extras: call.extras.clone(),
            ..Self::new(&call.id, &call.name, ToolOutcome::Done(output.into()))
        }
    }

    /// A failed result answering `call`, with its code and a message safe to show.
    #[must_use]
    pub fn error(call: &ToolCall, code: ToolErrorCode, message: impl Into<String>) -> Self {
        let outcome = ToolOutcome::Failed(ExecError::new(code, message));
        Self { extras: call.extras.clone(), ..Self::new(&call.id, &call.name, outcome) }
    }

    /// What the model is sent for `call`, which the runner ran with the result `executed`:
    /// its redacted output, or its error with the typed code (see
    /// [`ToolOutcome::from_call`]). `None` while the call waits: its result comes when it is
    /// decided.
    ///
    /// ```
    /// use tool_runtime::adapters::{ToolCall, ToolOutcome, ToolResult};
    /// use tool_runtime::prelude::*;
    ///
    /// /// Say hello.
    /// #[tool(name = "text__hello", effect = read_only, redact = ["text"])]
    /// struct Hello {}
    /// #[derive(Serialize, ToolSchema)]
    /// struct Text { text: String }
    /// impl Tool for Hello {
    ///     type Output = Text;
    ///     async fn run(self, _: &ToolInvocationContext, _: &ToolCapabilities) -> Result<Text, ToolError> {
    ///         Ok(Text { text: "hello".into() })
    ///     }
    /// }
    ///
    /// # tokio::runtime::Runtime::new().unwrap().block_on(async {
    /// let catalog = ToolCatalog::builder().register::<Hello>().build().unwrap();
    /// let runner = ToolRunner::builder(catalog).policy(ToolPolicy::allowing(["text__*"])).build();
    /// let call = ToolCall::new("call_1", "text__hello", serde_json::json!({}));
    /// let ctx = ToolInvocationContext::new(ContextIds { run_id: "run-1", actor_id: "user-1", tenant_id: "acme" })
    ///     .with_tool_call_id(&call.id);
    /// let executed = runner.exec(&call.name, "{}", &ctx).await;
    /// let result = ToolResult::from_exec(&call, &executed).unwrap();
    /// assert_eq!(result.content_text(), r#"{"text":"hello"}"#);
    /// # });
    /// ```
    #[must_use]
    pub fn from_exec(call: &ToolCall, executed: &ToolExecResult) -> Option<Self> {
        let outcome = ToolOutcome::from_call(&executed.outcome)?;
        Some(Self { extras: call.extras.clone(), ..Self::new(&call.id, &call.name, outcome) })
    }

    /// Whether this reports a failure.
    #[must_use]
    pub fn is_error(&self) -> bool {
        matches!(self.outcome, ToolOutcome::Failed(_))
    }

    /// The outcome as text, for providers that take a string: the text parts in order, one
    /// line apart (a string output as it is, any other structured value as JSON text, a text
    /// resource's contents, a resource link as
    /// `{"type": "resource_link", "uri", "name", ...}`), or
    /// `{"error": {"code": ..., "message": ...}}` for a failure.
    ///
    /// Bytes (images, audio, byte resources) have no text and are not in it: each adapter
    /// carries them in the provider's own blocks next to this text, or refuses the result with
    /// [`EncodeError::UnsupportedPart`](super::EncodeError::UnsupportedPart). Details are
    /// never in it.
    ///
    /// ```
    /// use tool_runtime::adapters::{ToolCall, ToolResult};
    /// use tool_runtime::content::{Content, IntoToolOutput};
    ///
    /// let call = ToolCall::new("call_1", "media__screenshot", serde_json::json!({}));
    /// let content = Content::new().text("Saved.").image("image/png", vec![1, 2]);
    /// let output = content.json(String::from("shot.png")).into_output().unwrap();
    /// assert_eq!(ToolResult::ok(&call, output).content_text(), "Saved.\nshot.png");
    /// ```
    #[must_use]
    pub fn content_text(&self) -> String {
        match &self.outcome {
            ToolOutcome::Done(output) => super::parts::joined_text(output.parts()),
            ToolOutcome::Failed(_) => Value::Object(self.error_object()).to_string(),
        }
    }

    /// `{"error": {"code": ..., "message": ...}}` for a failure, `{}` otherwise.
    pub(crate) fn error_object(&self) -> Map<String, Value> {
        let mut out = Map::new();
        if let ToolOutcome::Failed(error) = &self.outcome {
            let mut object = Map::new();
            object.insert("code".to_owned(), Value::String(error.code.as_str().to_owned()));
            object.insert("message".to_owned(), Value::String(error.message.clone()));
            out.insert("error".to_owned(), Value::Object(object));
        }
        out
    }
}

/// The key under which [`Decoded::tool_references`] are kept in [`Decoded::extras`].
pub(crate) const TOOL_REFERENCES: &str = "tool_references";

/// Whether and which tools the model must call.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum ChoiceMode {
    /// The model decides (the default everywhere).
    #[default]
    Auto,
    /// The model must not call tools.
    None,
    /// The model must call at least one tool.
    Required,
    /// The model must call this tool.
    Tool(String),
    /// The model may call only these of the request's tools (all of them stay defined, so a
    /// provider's prompt cache survives a change of the allowed set); with `required` it must
    /// call at least one. OpenAI: `tool_choice` `{"type": "allowed_tools", ...}`
    /// (<https://platform.openai.com/docs/guides/function-calling#tool-choice>); Gemini:
    /// `allowedFunctionNames` with mode `VALIDATED`, or `ANY` when required
    /// (<https://ai.google.dev/gemini-api/docs/function-calling#function_calling_modes>);
    /// Anthropic and Ollama cannot express it ([`EncodeError::Unsupported`](super::EncodeError::Unsupported)).
    Allowed {
        /// The tools that may be called; each must be among the request's tools.
        tools: Vec<String>,
        /// Whether a call is required.
        required: bool,
    },
    /// The model decides between text and calls, and its calls are constrained to the tools'
    /// schemas: Gemini's `VALIDATED` mode. OpenAI and Anthropic adapters in strict mode
    /// constrain every call already and send `auto`; without strict mode, and on Ollama, it is
    /// [`EncodeError::Unsupported`](super::EncodeError::Unsupported).
    Validated,
}

/// How tool use is steered for one request: a [`ChoiceMode`] and whether several calls may
/// come in one turn.
///
/// ```
/// use tool_runtime::adapters::{ChoiceMode, ToolChoice};
///
/// let choice = ToolChoice::tool("docs__search").parallel(false);
/// assert_eq!(choice.mode, ChoiceMode::Tool("docs__search".into()));
/// assert_eq!(choice.parallel, Some(false));
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ToolChoice {
    /// Whether and which tools must be called.
    pub mode: ChoiceMode,
    /// `Some(false)` forbids several calls in one turn, `Some(true)` allows them explicitly,
    /// `None` keeps the provider's default.
    pub parallel: Option<bool>,
}

impl ToolChoice {
    /// The model decides.
    #[must_use]
    pub fn auto() -> Self {
        Self::default()
    }

    /// No tool calls.
    #[must_use]
    pub fn none() -> Self {
        Self { mode: ChoiceMode::None, parallel: None }
    }

    /// At least one tool call.
    #[must_use]
    pub fn required() -> Self {
        Self { mode: ChoiceMode::Required, parallel: None }
    }

    /// A call of the named tool.
    #[must_use]
    pub fn tool(name: impl Into<String>) -> Self {
        Self { mode: ChoiceMode::Tool(name.into()), parallel: None }
    }

    /// Only these tools may be called, and the model may also answer with text.
    ///
    /// ```
    /// use tool_runtime::adapters::{ChoiceMode, ToolChoice};
    ///
    /// let choice = ToolChoice::allowed(["docs__search", "docs__open"]);
    /// assert_eq!(
    ///     choice.mode,
    ///     ChoiceMode::Allowed { tools: vec!["docs__search".into(), "docs__open".into()], required: false },
    /// );
    /// ```
    #[must_use]
    pub fn allowed<I, S>(tools: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        let tools = tools.into_iter().map(Into::into).collect();
        Self { mode: ChoiceMode::Allowed { tools, required: false }, parallel: None }
    }

    /// At least one call, of these tools only.
    #[must_use]
    pub fn required_among<I, S>(tools: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        let tools = tools.into_iter().map(Into::into).collect();
        Self { mode: ChoiceMode::Allowed { tools, required: true }, parallel: None }
    }

    /// Text or calls, the calls constrained to the schemas ([`ChoiceMode::Validated`]).
    #[must_use]
    pub fn validated() -> Self {
        Self { mode: ChoiceMode::Validated, parallel: None }
    }

    /// The tool names this choice requires to be among the request's tools.
    pub(crate) fn named_tools(&self) -> &[String] {
        match &self.mode {
            ChoiceMode::Tool(name) => std::slice::from_ref(name),
            ChoiceMode::Allowed { tools, .. } => tools,
            _ => &[],
        }
    }

    /// This choice, with parallel calls allowed or forbidden.
    #[must_use]
    pub fn parallel(self, parallel: bool) -> Self {
        Self { parallel: Some(parallel), ..self }
    }
}

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
