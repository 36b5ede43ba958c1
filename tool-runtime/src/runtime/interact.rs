//! Asking, in the middle of a call: the user for structured input ([`Interact::elicit`]), a
//! model for a completion ([`Interact::sample`]) and an MCP client for its roots
//! ([`Interact::roots`]), through the [`Interact`] capability.

use std::fmt;
use std::future::Future;
use std::marker::PhantomData;
use std::pin::Pin;
use std::sync::Arc;

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};

use super::Capability;
use crate::schema::{Schema, ToolSchema};

/// What a tool asks the user: a message, and the schema of the answer (an object of flat
/// primitive properties: see [`Interact::elicit`]). As JSON (in a run state that waits for
/// it): `{"message": "...", "schema": {...}}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ElicitRequest {
    /// What the user is asked.
    pub message: String,
    /// The JSON Schema of the answer, as sent to the client (`requestedSchema` in MCP).
    pub schema: Map<String, Value>,
    /// The name the question goes by where a protocol names it: its key in an MCP
    /// input-required result's `inputRequests` (`question` when `None`). Set with
    /// [`Elicitation::key`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub key: Option<String>,
}

/// What the user did with an [`ElicitRequest`], the answer still untyped. As JSON, MCP's
/// form: `{"action": "accept", "content": {...}}`, `{"action": "decline"}`,
/// `{"action": "cancel"}`.
///
/// ```
/// use serde_json::json;
/// use tool_runtime::runtime::ElicitResponse;
///
/// let answer: ElicitResponse = serde_json::from_value(json!({"action": "accept", "content": {"go": true}})).unwrap();
/// assert_eq!(answer, ElicitResponse::Accept(json!({"go": true})));
/// assert_eq!(serde_json::to_value(ElicitResponse::Decline).unwrap(), json!({"action": "decline"}));
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "action", content = "content", rename_all = "snake_case", deny_unknown_fields)]
pub enum ElicitResponse {
    /// The user answered: the content, to be checked against the requested schema.
    Accept(Value),
    /// The user said no.
    Decline,
    /// The user dismissed the question without choosing.
    Cancel,
}

/// The user's answer to [`Interact::elicit`], typed.
///
/// ```
/// use tool_runtime::runtime::ElicitAnswer;
///
/// let answer: ElicitAnswer<u8> = ElicitAnswer::Accept(3);
/// assert_eq!(answer.accepted(), Some(3));
/// assert_eq!(ElicitAnswer::<u8>::Decline.accepted(), None);
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ElicitAnswer<T> {
    /// The user answered, and the answer validates against `T`'s schema.
    Accept(T),
    /// The user said no.
    Decline,
    /// The user dismissed the question without choosing.
    Cancel,
}

impl<T> ElicitAnswer<T> {
    /// The answer, if the user gave one.
    pub fn accepted(self) -> Option<T> {
        match self {
            Self::Accept(answer) => Some(answer),
            Self::Decline | Self::Cancel => None,
        }
    }
}

/// Who speaks a message of a [`SampleRequest`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SampleRole {
    /// The user.
    User,
    /// The model.
    Assistant,
}

/// One message of a [`SampleRequest`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SampleMessage {
    /// Who speaks it.
    pub role: SampleRole,
    /// What is said.
    pub text: String,
}

/// What a tool asks a model: a conversation of text messages, optional instructions and an
/// output budget.
///
/// ```
/// use tool_runtime::runtime::SampleRequest;
///
/// let request = SampleRequest::new("Summarise: ...").system("Be brief.").max_tokens(200);
/// assert_eq!(request.messages.len(), 1);
/// assert_eq!(request.max_tokens, 200);
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct SampleRequest {
    /// The conversation, oldest first.
    pub messages: Vec<SampleMessage>,
    /// Instructions for the model.
    pub system: Option<String>,
    /// The most tokens the completion may take.
    pub max_tokens: u32,
    /// Sampling temperature, when the tool cares.
    pub temperature: Option<f32>,
}

impl SampleRequest {
    /// A request of one user message, with an output budget of 1 000 tokens.
    pub fn new(prompt: impl Into<String>) -> Self {
        Self {
            messages: vec![SampleMessage { role: SampleRole::User, text: prompt.into() }],
            system: None,
            max_tokens: 1000,
            temperature: None,
        }
    }

    /// Adds a message.
    #[must_use]
    pub fn message(mut self, role: SampleRole, text: impl Into<String>) -> Self {
        self.messages.push(SampleMessage { role, text: text.into() });
        self
    }

    /// Sets the instructions.
    #[must_use]
    pub fn system(mut self, system: impl Into<String>) -> Self {
        self.system = Some(system.into());
        self
    }

    /// Sets the output budget.
    #[must_use]
    pub fn max_tokens(mut self, max_tokens: u32) -> Self {
        self.max_tokens = max_tokens;
        self
    }

    /// Sets the temperature.
    #[must_use]
    pub fn temperature(mut self, temperature: f32) -> Self {
        self.temperature = Some(temperature);
        self
    }
}

/// A model's answer to a [`SampleRequest`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Completion {
    /// The text the model wrote.
    pub text: String,
    /// The model that wrote it, when known.
    pub model: Option<String>,
    /// Why it stopped, when known (`endTurn`, `maxTokens`, ...).
    pub stop_reason: Option<String>,
}

/// A root the client shares with its server (MCP `roots/list`): a directory or a place the
/// server may work in, by URI (`file:///home/ann/project`), with an optional display name.
///
/// ```
/// use tool_runtime::runtime::Root;
///
/// let root = Root::new("file:///srv/repo").name("repo");
/// assert_eq!(root.name.as_deref(), Some("repo"));
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Root {
    /// Where it is.
    pub uri: String,
    /// What to call it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
}

impl Root {
    /// A root at `uri`, without a name.
    pub fn new(uri: impl Into<String>) -> Self {
        Self { uri: uri.into(), name: None }
    }

    /// Names it.
    #[must_use]
    pub fn name(mut self, name: impl Into<String>) -> Self {
        self.name = Some(name.into());
        self
    }
}

/// What a call can ask through [`Interact`], to see beforehand whether it is offered
/// ([`Interact::offers`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[non_exhaustive]
pub enum InteractKind {
    /// A question for the user ([`Interact::elicit`]).
    Elicit,
    /// A completion from a model ([`Interact::sample`]).
    Sample,
    /// The roots the client shares ([`Interact::roots`]).
    Roots,
}

/// Why [`Interact::elicit`] or [`Interact::sample`] gave no answer. Converts into a
/// [`ToolError`](super::ToolError) with `?`.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum InteractError {
    /// Nobody here can answer this kind of request: the MCP client did not declare the
    /// capability, or the application bound no backend for it and the call is not one the
    /// agent loop runs. The text says which.
    Unavailable(String),
    /// The question (held here) waits for the user: in the agent loop (feature `agent`), the
    /// call ends waiting on it and the run stops with its state; the answer comes with
    /// `Agent::resume`, and the call then runs again from its start, this question answered.
    /// Return it from the tool (`?` does: the [`ToolError`](super::ToolError) keeps the question). A tool that
    /// goes on without the answer and succeeds is taken at its word; one that returns another
    /// error fails. Present whatever the features, so that a `match` compiles under each; only
    /// the agent loop produces it.
    Waiting(Box<ElicitRequest>),
    /// The answer's type cannot be asked for: elicitation takes an object of flat primitive
    /// properties (strings, numbers, integers, booleans, string enums, arrays of string enums).
    /// Names the offending property.
    UnsupportedSchema(String),
    /// The answer does not match the requested schema (the messages, never the answer).
    InvalidAnswer(String),
    /// The request failed on its way (the connection, the model).
    Failed(String),
}

impl fmt::Display for InteractError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Unavailable(why) => write!(f, "not available here: {why}"),
            Self::UnsupportedSchema(why) => {
                write!(f, "this answer type cannot be asked for: {why}")
            }
            Self::InvalidAnswer(why) => write!(f, "the answer does not match its schema: {why}"),
            Self::Failed(why) => write!(f, "the request failed: {why}"),
            Self::Waiting(_) => f.write_str("the question waits for the user's answer"),
        }
    }
}

impl std::error::Error for InteractError {}

/// A boxed future of an [`Interactor`].
pub type InteractFuture<'a, T> =
    Pin<Box<dyn Future<Output = Result<T, InteractError>> + Send + 'a>>;

/// Who answers a tool's questions: an MCP client (the server binds one per session), a model
/// (the agent's, see `tool_runtime::agent::ChatModelSampler`), or an application's own UI.
///
/// ```
/// use tool_runtime::runtime::{
///     Completion, ElicitRequest, ElicitResponse, InteractError, InteractFuture, Interactor,
///     SampleRequest,
/// };
///
/// /// Answers every question with "yes" and every prompt with its own text.
/// #[derive(Debug)]
/// struct Echo;
///
/// impl Interactor for Echo {
///     fn elicit(&self, _: ElicitRequest) -> InteractFuture<'_, ElicitResponse> {
///         Box::pin(async { Ok(ElicitResponse::Accept(serde_json::json!({"answer": "yes"}))) })
///     }
///     fn sample(&self, request: SampleRequest) -> InteractFuture<'_, Completion> {
///         let text = request.messages.last().map(|m| m.text.clone()).unwrap_or_default();
///         Box::pin(async move { Ok(Completion { text, model: None, stop_reason: None }) })
///     }
/// }
/// # let _ = Echo;
/// ```
pub trait Interactor: Send + Sync + fmt::Debug {
    /// Asks the user `request.message`, expecting an answer of `request.schema`.
    fn elicit(&self, request: ElicitRequest) -> InteractFuture<'_, ElicitResponse>;

    /// Asks a model for a completion.
    fn sample(&self, request: SampleRequest) -> InteractFuture<'_, Completion>;

    /// Whether this backend answers questions itself (the default). One that does not (the
    /// agent's `ChatModelSampler`, which samples only) leaves them to the agent loop, which
    /// makes the call wait for the user's answer; outside the loop they are unavailable.
    fn answers_questions(&self) -> bool {
        true
    }

    /// The roots the client shares (MCP `roots/list`). By default there are none to ask for:
    /// [`InteractError::Unavailable`].
    fn roots(&self) -> InteractFuture<'_, Vec<Root>> {
        Box::pin(async {
            Err(InteractError::Unavailable("nothing here shares roots with the tool".to_owned()))
        })
    }

    /// Whether this backend takes requests of `kind` (an MCP client: whether it declared the
    /// capability). By default questions and completions, not roots: a backend that lists
    /// roots says so.
    fn offers(&self, kind: InteractKind) -> bool {
        kind != InteractKind::Roots
    }
}

/// The capability to ask the user ([`elicit`](Self::elicit)) or a model
/// ([`sample`](Self::sample)) mid-call, or to list the client's [`roots`](Self::roots). A tool
/// declares it (`capabilities = [Interact]`); the application binds one on the catalog with
/// the backend that answers outside MCP, and an [`McpServer`](crate::mcp::McpServer) answers
/// through the client that made the call, whatever is bound: elicitation becomes
/// `elicitation/create`, sampling `sampling/createMessage`, roots `roots/list` (within the
/// call for clients before 2026-07-28, in input-required rounds for 2026-07-28), each only if
/// the client declared the capability (otherwise [`InteractError::Unavailable`]; see
/// [`offers`](Self::offers)). In the agent loop, bind
/// `Interact::new(ChatModelSampler::new(model))` (feature `agent`): sampling asks the agent's
/// model, and elicitation is a deferred decision: the call waits for the user's answer, the
/// run stops with its state, and the answer comes with the resume (see
/// [`deferred`](crate::agent::deferred)). The same holds with no backend bound
/// ([`unavailable`](Self::unavailable)). A backend of the application's own answers itself.
///
/// A call waiting for an answer runs again from its start when the answer comes, and gets the
/// answers given so far back in order: ask before any side effect.
///
/// ```
/// use tool_runtime::prelude::*;
/// use tool_runtime::runtime::{ElicitAnswer, Interact, SampleRequest};
///
/// #[derive(Deserialize, ToolSchema)]
/// struct Confirm {
///     /// Whether to go ahead.
///     go: bool,
/// }
///
/// /// Delete a file, once the user says so.
/// #[tool(name = "files__delete", effect = state_change, redact = ["deleted"], capabilities = [Interact])]
/// struct Delete { path: String }
/// #[derive(Serialize, ToolSchema)]
/// struct Deleted { deleted: bool }
///
/// impl Tool for Delete {
///     type Output = Deleted;
///     async fn run(self, _: &ToolInvocationContext, caps: &ToolCapabilities) -> Result<Deleted, ToolError> {
///         let interact = caps.get::<Interact>()?;
///         let answer = interact.elicit::<Confirm>(format!("Delete {}?", self.path)).await?;
///         let deleted = matches!(answer, ElicitAnswer::Accept(Confirm { go: true }));
///         let _summary = interact.sample(SampleRequest::new("Say it is done.")).await;
///         Ok(Deleted { deleted })
///     }
/// }
///
/// // Bound without a backend, every request is `Unavailable` (an MCP session still answers).
/// let catalog = ToolCatalog::builder().register::<Delete>().capability(Interact::unavailable()).build().unwrap();
/// # let _ = catalog;
/// ```
#[derive(Clone, Debug)]
pub struct Interact {
    /// What the application bound: answers sampling, and questions unless it leaves them to
    /// the agent loop ([`Interactor::answers_questions`]).
    backend: Option<Arc<dyn Interactor>>,
    /// Who answers this call's questions, set by the runner from the call's context.
    questions: Option<Arc<dyn Interactor>>,
}

/// Who answers the questions of a call, as whoever runs the call put it on its
/// [context](super::ToolInvocationContext).
#[derive(Clone, Debug)]
#[cfg_attr(not(feature = "runner"), allow(dead_code))]
pub(crate) enum Asker {
    /// Answers every request of the call, whatever the catalog bound (an MCP session's client,
    /// an application's UI for one request).
    Session(Arc<dyn Interactor>),
    /// Takes the questions no bound backend answers itself (the agent loop defers them).
    #[cfg_attr(not(feature = "agent"), allow(dead_code))]
    Deferred(Arc<dyn Interactor>),
}

impl Interact {
    /// Answers through `backend` (outside an MCP session).
    pub fn new(backend: impl Interactor + 'static) -> Self {
        Self { backend: Some(Arc::new(backend)), questions: None }
    }

    /// No backend: outside an MCP session and the agent loop every request is
    /// [`InteractError::Unavailable`].
    #[must_use]
    pub fn unavailable() -> Self {
        Self { backend: None, questions: None }
    }

    /// This capability for one call whose context names `asker`: a session answers everything;
    /// a deferring asker takes the questions the bound backend leaves.
    #[cfg(feature = "runner")]
    pub(crate) fn for_call(&self, asker: &Asker) -> Self {
        match asker {
            Asker::Session(session) => {
                Self { backend: Some(Arc::clone(session)), questions: Some(Arc::clone(session)) }
            }
            Asker::Deferred(deferred) => {
                let answers =
                    self.backend.as_ref().is_some_and(|backend| backend.answers_questions());
                Self {
                    backend: self.backend.clone(),
                    questions: (!answers).then(|| Arc::clone(deferred)),
                }
            }
        }
    }

    /// Sends a question: to who answers this call's questions, else the bound backend.
    async fn ask(&self, request: ElicitRequest) -> Result<ElicitResponse, InteractError> {
        match self.questions.as_ref().or(self.backend.as_ref()) {
            Some(asker) => asker.elicit(request).await,
            None => Err(InteractError::Unavailable(
                "nothing answers questions for this call: it is neither served over MCP nor run by the agent loop, and no backend of the application's is bound".to_owned(),
            )),
        }
    }

    fn backend(&self) -> Result<&Arc<dyn Interactor>, InteractError> {
        self.backend.as_ref().ok_or_else(|| {
            InteractError::Unavailable("no interaction backend is bound to this call".to_owned())
        })
    }

    /// Asks the user `message` for an answer of type `T`: `T`'s schema is sent as the requested
    /// schema, and an accepted answer is validated against it and decoded. The same as
    /// `self.elicitation::<T>(message).send()`; [`elicitation`](Self::elicitation) adds
    /// defaults and titles.
    ///
    /// # Errors
    ///
    /// [`InteractError::UnsupportedSchema`] when `T` is not an object of flat primitive
    /// properties (what MCP allows; nested objects and arrays other than string-enum
    /// multi-selects are refused); [`InteractError::InvalidAnswer`] when the answer does not
    /// validate; [`InteractError::Unavailable`] or [`InteractError::Failed`] from the backend.
    pub async fn elicit<T: ToolSchema + DeserializeOwned>(
        &self,
        message: impl Into<String>,
    ) -> Result<ElicitAnswer<T>, InteractError> {
        self.elicitation::<T>(message).send().await
    }

    /// A question for the user whose answer is a `T`, to be given defaults (SEP-1034) and
    /// titles for enum values (SEP-1330) before it is [sent](Elicitation::send).
    ///
    /// ```
    /// use tool_runtime::prelude::*;
    /// use tool_runtime::runtime::Interact;
    ///
    /// #[derive(Serialize, Deserialize, ToolSchema)]
    /// #[serde(rename_all = "snake_case")]
    /// enum Size { Small, Large }
    ///
    /// #[derive(Serialize, Deserialize, ToolSchema)]
    /// struct Order { size: Size, count: u8 }
    ///
    /// # async fn ask(interact: &Interact) -> Result<(), ToolError> {
    /// let answer = interact
    ///     .elicitation::<Order>("How many?")
    ///     .defaults(&Order { size: Size::Small, count: 1 })
    ///     .titles("size", [("small", "Small (250 ml)"), ("large", "Large (500 ml)")])
    ///     .send()
    ///     .await?;
    /// # let _ = answer; Ok(()) }
    /// ```
    pub fn elicitation<T: ToolSchema + DeserializeOwned>(
        &self,
        message: impl Into<String>,
    ) -> Elicitation<'_, T> {
        Elicitation {
            interact: self,
            message: message.into(),
            key: None,
            defaults: None,
            titles: Vec::new(),
            answer: PhantomData,
        }
    }

    /// Asks a model for a completion.
    ///
    /// # Errors
    ///
    /// [`InteractError::Unavailable`] or [`InteractError::Failed`] from the backend.
    pub async fn sample(&self, request: SampleRequest) -> Result<Completion, InteractError> {
        self.backend()?.sample(request).await
    }

    /// The roots the client shares with the server (MCP `roots/list`): the directories or
    /// places a tool served over MCP may work in.
    ///
    /// # Errors
    ///
    /// [`InteractError::Unavailable`] when the client declared no roots (or nothing here shares
    /// any), [`InteractError::Failed`] from the backend.
    pub async fn roots(&self) -> Result<Vec<Root>, InteractError> {
        self.backend()?.roots().await
    }

    /// Whether a request of `kind` can be asked in this call: served over MCP, whether the
    /// calling client declared the capability; otherwise whether the bound backend takes it
    /// (questions also when the agent loop defers them). A tool that can do without an
    /// answer asks only what is offered, rather than fail on what is not.
    ///
    /// ```
    /// use tool_runtime::runtime::{Interact, InteractKind};
    ///
    /// assert!(!Interact::unavailable().offers(InteractKind::Sample));
    /// ```
    #[must_use]
    pub fn offers(&self, kind: InteractKind) -> bool {
        let asker = match kind {
            InteractKind::Elicit => self.questions.as_ref().or(self.backend.as_ref()),
            InteractKind::Sample | InteractKind::Roots => self.backend.as_ref(),
        };
        asker.is_some_and(|asker| asker.offers(kind))
    }
}

impl Capability for Interact {
    const NAME: &'static str = "interact";
}

/// A question a call asked on an earlier run and the user's answer to it, as a run state keeps
/// them: the call runs again from its start on resume and gets the answers back in order.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Answered {
    /// What was asked.
    pub question: ElicitRequest,
    /// What the user did.
    pub answer: ElicitResponse,
}

/// How the titles of an enum property are sent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum TitleStyle {
    /// `oneOf` of `{const, title}` (a single select), `items.anyOf` (a multi-select).
    Titled,
    /// `enum` with `enumNames` (the deprecated form, for older clients).
    Legacy,
}

/// Titles for one enum property: the field, how they are sent, `(value, title)` pairs.
type FieldTitles = (String, TitleStyle, Vec<(String, String)>);

/// A question for the user being prepared: see [`Interact::elicitation`].
#[derive(Debug)]
#[must_use = "an elicitation asks nothing until it is sent"]
pub struct Elicitation<'i, T> {
    interact: &'i Interact,
    message: String,
    key: Option<String>,
    defaults: Option<Result<Value, String>>,
    titles: Vec<FieldTitles>,
    answer: PhantomData<fn() -> T>,
}

impl<T: ToolSchema + DeserializeOwned> Elicitation<'_, T> {
    /// Names the question (see [`ElicitRequest::key`]): a client that answers MCP
    /// input-required rounds finds it under this key. Unnamed, it is `question`.
    pub fn key(mut self, key: impl Into<String>) -> Self {
        self.key = Some(key.into());
        self
    }

    /// Pre-fills the form: each field of `defaults` becomes its property's `default` (SEP-1034;
    /// a `None` field gives none).
    pub fn defaults(mut self, defaults: &T) -> Self
    where
        T: Serialize,
    {
        self.defaults = Some(serde_json::to_value(defaults).map_err(|error| error.to_string()));
        self
    }

    /// Titles for the values of the enum property `field` (SEP-1330): a single select is sent
    /// as `oneOf` of `{"const", "title"}`, a multi-select (an array of an enum) as
    /// `items.anyOf`. A value without a title is shown as itself.
    pub fn titles<'a>(
        self,
        field: impl Into<String>,
        titles: impl IntoIterator<Item = (&'a str, &'a str)>,
    ) -> Self {
        self.titled(field.into(), TitleStyle::Titled, titles)
    }

    /// Titles for a single-select enum property in the deprecated form (`enumNames` beside
    /// `enum`), for clients that predate SEP-1330.
    pub fn legacy_titles<'a>(
        self,
        field: impl Into<String>,
        titles: impl IntoIterator<Item = (&'a str, &'a str)>,
    ) -> Self {
        self.titled(field.into(), TitleStyle::Legacy, titles)
    }

    fn titled<'a>(
        mut self,
        field: String,
        style: TitleStyle,
        titles: impl IntoIterator<Item = (&'a str, &'a str)>,
    ) -> Self {
        let titles = titles.into_iter().map(|(v, t)| (v.to_owned(), t.to_owned())).collect();
        self.titles.push((field, style, titles));
        self
    }

    /// Asks, and types the answer (see [`Interact::elicit`]).
    ///
    /// # Errors
    ///
    /// As [`Interact::elicit`]; also [`InteractError::UnsupportedSchema`] when the defaults
    /// cannot be serialised, or titles name a field that is not an enum or a value it lacks.
    pub async fn send(self) -> Result<ElicitAnswer<T>, InteractError> {
        let mut schema = elicitation_schema(T::SCHEMA)?;
        if let Some(defaults) = self.defaults {
            let defaults = defaults.map_err(InteractError::UnsupportedSchema)?;
            with_defaults(&mut schema, &defaults);
        }
        for (field, style, titles) in &self.titles {
            with_titles(&mut schema, field, *style, titles)?;
        }
        let request = ElicitRequest { message: self.message, schema, key: self.key };
        match self.interact.ask(request).await? {
            ElicitResponse::Accept(content) => {
                T::SCHEMA
                    .validate(&content)
                    .map_err(|errors| InteractError::InvalidAnswer(errors.to_string()))?;
                serde_json::from_value(content)
                    .map(ElicitAnswer::Accept)
                    .map_err(|error| InteractError::InvalidAnswer(error.to_string()))
            }
            ElicitResponse::Decline => Ok(ElicitAnswer::Decline),
            ElicitResponse::Cancel => Ok(ElicitAnswer::Cancel),
        }
    }
}

fn properties(schema: &mut Map<String, Value>) -> Option<&mut Map<String, Value>> {
    schema.get_mut("properties").and_then(Value::as_object_mut)
}

/// Each non-null field of `defaults` as its property's `default`.
fn with_defaults(schema: &mut Map<String, Value>, defaults: &Value) {
    let (Some(properties), Some(defaults)) = (properties(schema), defaults.as_object()) else {
        return;
    };
    for (name, value) in defaults {
        if let (Some(Value::Object(property)), false) = (properties.get_mut(name), value.is_null())
        {
            property.insert("default".to_owned(), value.clone());
        }
    }
}

/// The enum property `field` with titles for its values, in `style`.
fn with_titles(
    schema: &mut Map<String, Value>,
    field: &str,
    style: TitleStyle,
    titles: &[(String, String)],
) -> Result<(), InteractError> {
    let unsupported = |why: &str| {
        InteractError::UnsupportedSchema(format!("titles for `{}`: {why}", field.escape_debug()))
    };
    let property = properties(schema)
        .and_then(|properties| properties.get_mut(field))
        .and_then(Value::as_object_mut)
        .ok_or_else(|| unsupported("no such property"))?;
    let multi = property.get("type").and_then(Value::as_str) == Some("array");
    let node =
        if multi { property.get("items").and_then(Value::as_object) } else { Some(&*property) };
    let values: Vec<String> = node
        .and_then(|node| node.get("enum"))
        .and_then(Value::as_array)
        .ok_or_else(|| unsupported("not an enum"))?
        .iter()
        .filter_map(|value| value.as_str().map(str::to_owned))
        .collect();
    if let Some((value, _)) = titles.iter().find(|(value, _)| !values.contains(value)) {
        let why = format!("`{}` is not one of its values", value.escape_debug());
        return Err(unsupported(&why));
    }
    let title_of = |value: &String| {
        titles.iter().find(|(v, _)| v == value).map_or_else(|| value.clone(), |(_, t)| t.clone())
    };
    let titled: Vec<Value> =
        values.iter().map(|value| json!({"const": value, "title": title_of(value)})).collect();
    match (style, multi) {
        (TitleStyle::Titled, false) => {
            property.remove("enum");
            property.insert("oneOf".to_owned(), Value::Array(titled));
        }
        (TitleStyle::Titled, true) => {
            property.insert("items".to_owned(), json!({"anyOf": titled}));
        }
        (TitleStyle::Legacy, false) => {
            let names = values.iter().map(|value| Value::String(title_of(value))).collect();
            property.insert("enumNames".to_owned(), Value::Array(names));
        }
        (TitleStyle::Legacy, true) => {
            return Err(unsupported("legacy titles (`enumNames`) are for single selects only"));
        }
    }
    Ok(())
}

/// `schema` as an elicitation's requested schema: an object whose properties are flat
/// primitives (nullable ones sent as their type, left out of `required`).
fn elicitation_schema(schema: &Schema) -> Result<Map<String, Value>, InteractError> {
    let mut root = schema.to_json_object();
    if root.get("type").and_then(Value::as_str) != Some("object") {
        return Err(InteractError::UnsupportedSchema("the answer must be an object".to_owned()));
    }
    root.remove("additionalProperties");
    if let Some(Value::Object(properties)) = root.get_mut("properties") {
        for (name, property) in properties.iter_mut() {
            let Value::Object(property) = property else { continue };
            // `Option<T>`: `["T", "null"]`, already left out of `required`.
            if let Some(Value::Array(kinds)) = property.get("type") {
                let kinds: Vec<Value> =
                    kinds.iter().filter(|kind| *kind != "null").cloned().collect();
                if let [kind] = kinds.as_slice() {
                    property.insert("type".to_owned(), kind.clone());
                }
            }
            // `Option<Enum>` lists `null` among its values: an elicitation form leaves the
            // field empty instead (it is not required).
            if let Some(Value::Array(values)) = property.get_mut("enum") {
                values.retain(|value| !value.is_null());
            }
            // MCP's integer bounds are 64-bit signed; the answer is checked against the full
            // schema afterwards, so a wider bound is left out rather than refused.
            for bound in ["minimum", "maximum"] {
                let wide = property
                    .get(bound)
                    .is_some_and(|value| value.is_u64() && value.as_i64().is_none());
                if wide {
                    property.remove(bound);
                }
            }
            string_enum(property);
            if let Some(Value::Object(items)) = property.get_mut("items") {
                string_enum(items);
            }
            if !flat(property) {
                return Err(InteractError::UnsupportedSchema(format!(
                    "property `{}` is not a string, number, integer, boolean or string enum",
                    name.escape_debug()
                )));
            }
        }
    }
    Ok(root)
}

/// An enum of strings says so (`"type": "string"`), as MCP's enum forms do.
fn string_enum(node: &mut Map<String, Value>) {
    let strings = node
        .get("enum")
        .and_then(Value::as_array)
        .is_some_and(|values| values.iter().all(Value::is_string));
    if strings && !node.contains_key("type") {
        node.insert("type".to_owned(), Value::String("string".to_owned()));
    }
}

/// Whether a property is one MCP elicitation takes.
fn flat(property: &Map<String, Value>) -> bool {
    match property.get("type").and_then(Value::as_str) {
        Some("string" | "number" | "integer" | "boolean") => true,
        Some("array") => property
            .get("items")
            .and_then(Value::as_object)
            .is_some_and(|items| items.contains_key("enum")),
        None => property.contains_key("enum"),
        Some(_) => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schema::{Property, Schema};

    /// Found in review: `Option<Enum>` kept `null` among the enum's values and a `u64` field
    /// sent a maximum MCP's 64-bit signed bounds cannot hold.
    #[test]
    fn nullable_enums_and_wide_integers_become_mcp_forms() {
        const PROPERTIES: &[Property] = &[
            Property {
                name: "size",
                aliases: &[],
                schema: &Schema::string_enum(&["s", "m"]).nullable(),
                required: false,
            },
            Property {
                name: "count",
                aliases: &[],
                schema: &Schema::integer(Some(0), Some(u64::MAX as i128)),
                required: true,
            },
        ];
        let schema = elicitation_schema(&Schema::object(PROPERTIES)).unwrap();
        let properties = &schema["properties"];
        assert_eq!(properties["size"]["enum"], serde_json::json!(["s", "m"]));
        assert_eq!(properties["size"]["type"], "string");
        assert_eq!(properties["count"]["minimum"], 0);
        assert!(properties["count"].get("maximum").is_none(), "{properties}");
    }

    #[test]
    fn flat_schemas_pass_and_nested_ones_are_named() {
        let flat_one = serde_json::json!({"type": "string"});
        assert!(flat(flat_one.as_object().unwrap()));
        let object = serde_json::json!({"type": "object", "properties": {}});
        assert!(!flat(object.as_object().unwrap()));
        let multi =
            serde_json::json!({"type": "array", "items": {"type": "string", "enum": ["a"]}});
        assert!(flat(multi.as_object().unwrap()));
        let list = serde_json::json!({"type": "array", "items": {"type": "string"}});
        assert!(!flat(list.as_object().unwrap()));
    }
}
