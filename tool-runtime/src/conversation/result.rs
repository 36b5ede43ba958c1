//! What is sent back to the model for a call that ended ([`ToolResult`], its [`ToolOutcome`]):
//! built from the runner's result by one conversion that keeps the typed error code.

use serde_json::{Map, Value};

use crate::content::ToolOutput;
use crate::runtime::{CallOutcome, EventOutcome, ExecError, ToolErrorCode, ToolExecResult};

use super::text::joined_text;
use super::turn::{Extras, FOUND, ToolCall};
use crate::spec::ToolSpec;

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

    /// The result of a [tool search](super::ClientSearch) call: the tools `found` (none when
    /// nothing matched), as `{"tools": [{"name", "description", "parameters"}]}` (what
    /// providers without a search form of their own are sent) and by name for the adapters
    /// that hand them over their provider's way ([`ToolResult::found`]).
    ///
    /// ```
    /// use serde_json::json;
    /// use tool_runtime::adapters::{SEARCH_TOOL, ToolCall, ToolResult};
    /// use tool_runtime::prelude::*;
    ///
    /// /// Show the weather forecast for a city.
    /// #[tool(name = "weather__forecast", effect = read_only, redact = [])]
    /// struct Forecast { city: String }
    /// # #[derive(Serialize, ToolSchema)] struct Done {}
    /// # impl Tool for Forecast { type Output = Done; async fn run(self, _: &ToolInvocationContext, _: &ToolCapabilities) -> Result<Done, ToolError> { Ok(Done {}) } }
    ///
    /// let call = ToolCall::new("call_1", SEARCH_TOOL, json!({"query": "rain tomorrow"}));
    /// let result = ToolResult::search(&call, &[&Forecast::spec()]);
    /// assert_eq!(result.found().collect::<Vec<_>>(), ["weather__forecast"]);
    /// assert!(result.content_text().starts_with(r#"{"tools":[{"name":"weather__forecast""#));
    /// ```
    #[must_use]
    pub fn search(call: &ToolCall, found: &[&ToolSpec]) -> Self {
        let tools: Vec<Value> = found
            .iter()
            .map(|spec| {
                serde_json::json!({
                    "name": spec.name(),
                    "description": spec.description(),
                    "parameters": spec.input_schema().to_json(),
                })
            })
            .collect();
        let mut result = Self::ok(call, serde_json::json!({ "tools": tools }));
        let names = found.iter().map(|spec| Value::String(spec.name().to_owned())).collect();
        result.extras.insert(FOUND, Value::Array(names));
        result
    }

    /// The names of the tools a [tool search](super::ClientSearch) found, for its result
    /// ([`ToolResult::search`]); nothing for any other result.
    pub fn found(&self) -> impl Iterator<Item = &str> {
        let names = match self.extras.get(FOUND) {
            Some(Value::Array(names)) => names.as_slice(),
            _ => &[],
        };
        names.iter().filter_map(Value::as_str)
    }

    /// Whether this answers a [tool search](super::ClientSearch) ([`ToolResult::search`]).
    #[must_use]
    pub fn is_search(&self) -> bool {
        self.extras.get(FOUND).is_some()
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
    /// carries them in the provider's own blocks next to this text, or a note naming what it
    /// left out where the provider has no form for them. Details are never in it.
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
            ToolOutcome::Done(output) => joined_text(output.parts()),
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
