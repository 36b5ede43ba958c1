//! The canonical request: the conversation ([`Message`]), the tools and the tool choice
//! ([`ModelRequest`], [`ToolChoice`]), the settings of one call ([`RequestOptions`]) and which
//! tools load only when searched for ([`DeferLoading`]). Each
//! [`Adapter`](crate::adapters::Adapter) encodes them into its provider's whole request body.

use std::collections::HashSet;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::spec::ToolSpec;

use super::result::ToolResult;
use super::turn::Decoded;

/// One entry of a conversation, in provider-independent terms. Adapters turn these into their
/// provider's messages; the model's turns and the tool results keep the provider extras they
/// must echo. Also at `tool_runtime::agent::Message`.
///
/// ```
/// use tool_runtime::adapters::Message;
///
/// let conversation = [Message::system("Be brief."), Message::user("What time is it?")];
/// assert!(matches!(&conversation[1], Message::User(text) if text == "What time is it?"));
/// ```
///
/// A conversation is stored as JSON through `Serialize`/`Deserialize` in a stable,
/// provider-neutral form (see [`stored`](super::stored)), so it can wait between requests or
/// move to another process.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum Message {
    /// Instructions for the model.
    System(String),
    /// What the user said.
    User(String),
    /// What the application (not the user) tells the model in the middle of a conversation,
    /// such as the agent loop's notice that the tool-calling turns are used up. Each adapter
    /// sends it where its provider takes such a notice: a `system` message in place (OpenAI
    /// Chat, Ollama), a `developer` message in place (OpenAI Responses), and for providers
    /// whose instructions stand apart from the conversation, a text block after the tool
    /// results it follows (Anthropic, Gemini): never as something the user said.
    Notice(String),
    /// A turn of the model: its text and its calls.
    Assistant(Decoded),
    /// The results of the previous turn's calls, in the model's call order.
    ToolResults(Vec<ToolResult>),
}

impl Message {
    /// A system message.
    pub fn system(text: impl Into<String>) -> Self {
        Self::System(text.into())
    }

    /// A user message.
    pub fn user(text: impl Into<String>) -> Self {
        Self::User(text.into())
    }

    /// A notice from the application ([`Message::Notice`]).
    pub fn notice(text: impl Into<String>) -> Self {
        Self::Notice(text.into())
    }
}

/// What a model is asked: the conversation so far, the tools it may call and how. Also at
/// `tool_runtime::agent::ModelRequest`, where the agent loop hands it to a
/// [`ChatModel`](crate::agent::ChatModel).
///
/// ```
/// use tool_runtime::adapters::{Message, ModelRequest, ToolChoice};
///
/// let messages = [Message::user("Hello!")];
/// let choice = ToolChoice::auto();
/// let request = ModelRequest::new(&messages, &[], &choice);
/// assert_eq!(request.messages.len(), 1);
/// assert!(request.search.is_none());
/// ```
#[derive(Debug, Clone, Copy)]
pub struct ModelRequest<'a> {
    /// The conversation, oldest first. System messages may stand anywhere; adapters whose
    /// provider takes instructions apart (Anthropic, Gemini, OpenAI Responses) join them.
    pub messages: &'a [Message],
    /// The tools the model may be shown (already filtered by policy). Decoding with them
    /// ([`Adapter::decode_for`](crate::adapters::Adapter::decode_for),
    /// [`Adapter::stream_for`](crate::adapters::Adapter::stream_for)) undoes what lowering changed.
    pub tools: &'a [&'a ToolSpec],
    /// Whether and which tools it must call.
    pub choice: &'a ToolChoice,
    /// The application's own tool search, when the model finds its tools by searching
    /// ([`ClientSearch`]); `None` offers `tools` as they are.
    pub search: Option<ClientSearch<'a>>,
}

impl<'a> ModelRequest<'a> {
    /// A request for `messages` offering `tools` under `choice`, without a tool search.
    #[must_use]
    pub const fn new(
        messages: &'a [Message],
        tools: &'a [&'a ToolSpec],
        choice: &'a ToolChoice,
    ) -> Self {
        Self { messages, tools, choice, search: None }
    }

    /// This request with the model finding its tools through `search`.
    #[must_use]
    pub const fn with_search(self, search: ClientSearch<'a>) -> Self {
        Self { search: Some(search), ..self }
    }
}

/// The name of the search tool of a [`ClientSearch`]: outside the `<namespace>__<tool>` names
/// of tools, so it never stands for one of them.
pub const SEARCH_TOOL: &str = "tool_search";

/// A tool search the application answers itself (the agent answers it with its
/// [`ToolSelector`](crate::catalog::select::ToolSelector)): the model is offered a search tool,
/// named [`SEARCH_TOOL`] and taking `{"query": "<what the tools should do>"}`, beside the
/// request's `tools`; the `deferred` tools are not offered until a search finds them. A
/// search's result ([`ToolResult::found`](super::ToolResult::found)) names the tools found, and
/// each adapter hands them to the model the way its provider expects:
///
/// - Anthropic: every deferred tool is declared with `"defer_loading": true` (the model does
///   not see it), and the search's `tool_result` holds a `tool_reference` block per tool
///   found, which loads it;
/// - OpenAI Responses: the search tool is `{"type": "tool_search", "execution": "client"}`, the
///   model's search comes as a `tool_search_call` item and goes back as a
///   `tool_search_output` item carrying the found tools' definitions;
/// - OpenAI Chat, Gemini, Ollama: the search tool is a function, its result carries the found
///   tools' definitions as JSON, and the tools found so far are offered from then on (the
///   caller puts them in `tools`, after the others: the agent does).
///
/// On every provider, the tools array of a request is a prefix of the next one's, so the
/// provider's prompt cache keeps it.
#[derive(Debug, Clone, Copy)]
pub struct ClientSearch<'a> {
    /// What the model is told the search tool does.
    pub description: &'a str,
    /// The tools a search can find. Those of them in the request's `tools` (found earlier)
    /// are declared once.
    pub deferred: &'a [&'a ToolSpec],
}

impl<'a> ClientSearch<'a> {
    /// The tools of `tools` that are not deferred (those always offered), in order.
    pub(crate) fn not_deferred<'t>(&self, tools: &[&'t ToolSpec]) -> Vec<&'t ToolSpec> {
        let deferred: HashSet<&str> = self.deferred.iter().map(|spec| spec.name()).collect();
        tools.iter().copied().filter(|spec| !deferred.contains(spec.name())).collect()
    }

    /// The deferred tool named `name`.
    pub(crate) fn find(&self, name: &str) -> Option<&'a ToolSpec> {
        self.deferred.iter().copied().find(|spec| spec.name() == name)
    }

    /// The search tool as a tool definition: `{"query": string}` in, the found tools out.
    pub(crate) fn tool(&self) -> ToolSpec {
        ToolSpec::answered_by_crate(SEARCH_TOOL, self.description, search_parameters())
    }
}

/// The search tool's input schema.
pub(crate) fn search_parameters() -> Map<String, Value> {
    let schema = serde_json::json!({
        "type": "object",
        "properties": {
            "query": {
                "type": "string",
                "description": "What the tools you need should do, in a few words.",
            },
        },
        "required": ["query"],
        "additionalProperties": false,
    });
    match schema {
        Value::Object(schema) => schema,
        _ => Map::new(),
    }
}

/// The settings of one request that are not conversation: the model, the output budget,
/// whether to stream, and extra body fields.
///
/// ```
/// use serde_json::json;
/// use tool_runtime::adapters::RequestOptions;
///
/// let options = RequestOptions::new("gpt-4o-mini")
///     .max_tokens(1024)
///     .extra("temperature", json!(0.2));
/// assert!(options.stream);
/// assert_eq!(options.extra["temperature"], json!(0.2));
/// ```
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct RequestOptions {
    /// The model's name (Gemini takes it in the URL, not the body, and ignores this).
    pub model: String,
    /// The most tokens the turn may write; `None` keeps the provider's default (Anthropic,
    /// which requires a value, then gets 4096).
    pub max_tokens: Option<u32>,
    /// Whether to ask for a streamed response (default `true`; Gemini takes it in the URL).
    pub stream: bool,
    /// Whether a streamed OpenAI Chat Completions response should end with a usage chunk
    /// (`stream_options`; default `true`). Turn it off for a server that refuses it; other
    /// providers report usage unasked.
    pub stream_usage: bool,
    /// Fields added to the body (`temperature`, `seed`, `thinking`). The adapter's own fields
    /// win over these, except that an object the adapter extends (Gemini's
    /// `generationConfig`, Ollama's `options`) keeps the entries given here.
    pub extra: Map<String, Value>,
}

impl RequestOptions {
    /// Streamed, with a usage report, the provider's default output budget, no extra fields.
    pub fn new(model: impl Into<String>) -> Self {
        Self {
            model: model.into(),
            max_tokens: None,
            stream: true,
            stream_usage: true,
            extra: Map::new(),
        }
    }

    /// The most tokens the turn may write.
    #[must_use]
    pub fn max_tokens(self, max_tokens: u32) -> Self {
        Self { max_tokens: Some(max_tokens), ..self }
    }

    /// Whether to stream.
    #[must_use]
    pub fn stream(self, stream: bool) -> Self {
        Self { stream, ..self }
    }

    /// Whether to ask for a usage report at the end of an OpenAI Chat Completions stream.
    #[must_use]
    pub fn stream_usage(self, stream_usage: bool) -> Self {
        Self { stream_usage, ..self }
    }

    /// A field added to the body.
    #[must_use]
    pub fn extra(mut self, name: impl Into<String>, value: Value) -> Self {
        self.extra.insert(name.into(), value);
        self
    }
}

/// Whether and which tools the model must call. In configuration: `"auto"`, `"none"`,
/// `"required"`, `"validated"`, `{"tool": "<name>"}`, `{"allowed": {"tools": [...],
/// "required": false}}`.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
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
    /// Anthropic and Ollama cannot express it ([`EncodeError::Unsupported`](crate::adapters::EncodeError::Unsupported)).
    Allowed {
        /// The tools that may be called; each must be among the request's tools.
        tools: Vec<String>,
        /// Whether a call is required.
        required: bool,
    },
    /// The model decides between text and calls, and its calls are constrained to the tools'
    /// schemas: Gemini's `VALIDATED` mode. OpenAI and Anthropic adapters in strict mode
    /// constrain every call already and send `auto`; without strict mode, and on Ollama, it is
    /// [`EncodeError::Unsupported`](crate::adapters::EncodeError::Unsupported).
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
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
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

/// Which search tool a provider runs over deferred tool definitions.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ToolSearch {
    /// Anthropic's natural-language search, `tool_search_tool_bm25_20251119`.
    Bm25,
    /// Anthropic's regular-expression search, `tool_search_tool_regex_20251119`.
    Regex,
    /// OpenAI Responses' hosted `tool_search` tool.
    Hosted,
}

/// Provider-native deferred loading: every tool of a request is sent with
/// `"defer_loading": true` (the model sees its name and what the search tool reveals, not its
/// schema) except the eager ones, and the provider's search tool is added in front. The model
/// then searches and the provider loads what it finds: Anthropic answers with `tool_reference`
/// blocks, OpenAI with `tool_search_output` items ([`Decoded::tool_references`]).
///
/// - Anthropic, with [`ToolSearch::Bm25`] or [`ToolSearch::Regex`]
///   (<https://docs.anthropic.com/en/docs/agents-and-tools/tool-use/tool-search-tool>; the
///   request needs the `anthropic-beta: advanced-tool-use-2025-11-20` header while the tool is
///   in beta).
/// - OpenAI Responses, with [`ToolSearch::Hosted`]
///   (<https://developers.openai.com/api/docs/guides/tools-tool-search>).
///
/// Any other pairing is an [`EncodeError::Unsupported`](crate::adapters::EncodeError::Unsupported) when the tools are encoded.
///
/// ```
/// use serde_json::json;
/// use tool_runtime::adapters::{Adapter, Anthropic, DeferLoading, ToolSearch};
/// use tool_runtime::prelude::*;
///
/// /// Tell the time.
/// #[tool(name = "core__time", effect = read_only, redact = [])]
/// struct Time {}
/// /// Search the docs.
/// #[tool(name = "docs__search", effect = read_only, redact = [])]
/// struct Search { query: String }
/// # #[derive(Serialize, ToolSchema)] struct Done {}
/// # impl Tool for Time { type Output = Done; async fn run(self, _: &ToolInvocationContext, _: &ToolCapabilities) -> Result<Done, ToolError> { Ok(Done {}) } }
/// # impl Tool for Search { type Output = Done; async fn run(self, _: &ToolInvocationContext, _: &ToolCapabilities) -> Result<Done, ToolError> { Ok(Done {}) } }
///
/// let adapter = Anthropic::new().defer_loading(DeferLoading::new(ToolSearch::Bm25).eager(["core__time"]));
/// let (time, search) = (Time::spec(), Search::spec());
/// let tools = adapter.tools(&[&time, &search])?;
/// assert_eq!(tools[0], json!({"type": "tool_search_tool_bm25_20251119", "name": "tool_search_tool_bm25"}));
/// assert_eq!(tools[1].get("defer_loading"), None);
/// assert_eq!(tools[2]["defer_loading"], json!(true));
/// # Ok::<(), tool_runtime::adapters::EncodeError>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeferLoading {
    search: ToolSearch,
    eager: Vec<String>,
}

impl DeferLoading {
    /// Every tool deferred, found through `search`.
    #[must_use]
    pub fn new(search: ToolSearch) -> Self {
        Self { search, eager: Vec::new() }
    }

    /// These tools are sent whole, up front (the few every turn needs).
    #[must_use]
    pub fn eager<I, S>(mut self, names: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.eager.extend(names.into_iter().map(Into::into));
        self.eager.sort_unstable();
        self.eager.dedup();
        self
    }

    /// The search tool.
    #[must_use]
    pub fn search(&self) -> ToolSearch {
        self.search
    }

    /// Whether the tool named `name` is deferred.
    #[must_use]
    pub fn defers(&self, name: &str) -> bool {
        self.eager.binary_search_by(|eager| eager.as_str().cmp(name)).is_err()
    }
}
