//! Serving a catalog as an MCP server: `tools/list` from the policy-filtered catalog,
//! `tools/call` through [`ToolRunner::exec`].

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicU8, Ordering};
use std::task::Poll;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation,
    ListToolsResult, PaginatedRequestParams, ProgressNotificationParam, ServerConfig, Tool,
    ToolAnnotations,
};
use rmcp::service::{RequestContext, RoleServer};
use rmcp::{ErrorData, ServerHandler, ServiceExt};
use serde_json::Value;

use super::asks::{Answer, Asking, Offered};
use super::auth::{Authenticated, Authenticator};
use super::headers::{self, ParamHeaderError, ParamHeaders};
use super::interact::{ClientApprover, ClientInteractor};
use super::limits::{HttpLimits, SessionSlot};
use super::logging;
use super::prompts::{self, McpPrompt};
use super::results::{complete, object, served_output};
use super::rounds::{self, GoingOn, Pending, Replied, Reply, Rounds};
use super::tasks::{
    Host, Inline, Job, Running, TaskSupport, cancel_task_of, get_task_of, start_after_questions,
    start_task, tasks_capability, update_task_of,
};
use crate::agent::deferred::StateKey;
use crate::agent::resume::{Waited, deciding_runner};
use crate::catalog::{ToolSource, shows};
use crate::runner::ToolRunner;
use crate::runtime::BoundToolRuntime;
use crate::runtime::{
    CallOutcome, ContextIds, LogLevel, LogMessage, LogReporter, Progress, ProgressReporter,
    ToolExecResult, ToolInvocationContext,
};
use crate::schema::Shown;
use crate::spec::{ToolEffect, ToolSpec};
use crate::store::RunStore;

type ContextFn = Arc<dyn Fn() -> ToolInvocationContext + Send + Sync>;

/// A [`ToolRunner`] as an MCP server (an rmcp [`ServerHandler`]). Cheap to clone; each clone
/// serves one client connection.
///
/// - `tools/list` lists the tools the runner's policy shows for the server's
///   [context](McpServerBuilder::context), ordered by name (the [served
///   name](McpServerBuilder::serve_as) when one is set), with `inputSchema`, `outputSchema` and
///   every annotation hint written out (see [`annotations`]). A
///   [`ClientTool`](crate::runtime::ClientTool) is neither listed nor called (`-32602`): the
///   application's own client runs it, and an MCP client's call of it could never end.
/// - `outputSchema` is always an object schema and describes exactly what
///   `structuredContent` carries: narrowed to the fields redaction lets through, and left out
///   when redaction keeps no field it could name (an open object, a scalar the allowlist
///   drops). An output that is not an object (a string, a list, an optional struct) is served
///   wrapped: `{"type": "object", "properties": {"result": <schema>}, "required": ["result"]}`,
///   with `structuredContent` `{"result": <value>}`.
/// - `tools/call` runs [`ToolRunner::exec`]: policy, approval, validation and redaction all
///   apply. The result's [parts](crate::content::Part) become MCP content blocks in order (text,
///   image, audio, embedded resource, resource link; the structured value as a text block: a
///   string as itself, anything else as JSON), plus `structuredContent` when an output schema
///   is served; details never leave the server. A failure is `isError: true` with the safe
///   message and no `structuredContent`; a tool the client cannot see is a protocol error
///   (`-32602`). The client's `notifications/cancelled` cancels the call's token; the tool's
///   progress reports become `notifications/progress` when the request carried a progress
///   token, and its [log messages](ToolInvocationContext::log) become `notifications/message`
///   at or above the level the request asks for in its `_meta`
///   (`io.modelcontextprotocol/logLevel`), else the level the client set with
///   `logging/setLevel` (`info` until it sets one; each session has its own). Sending them
///   never holds up the call: a client that does not read them still sees the call end at its
///   `max_runtime_ms`; at most 64 of a call's notifications wait for a slow client, and newer
///   ones are dropped while the queue is full.
///
/// Serve it with [`serve_stdio`](Self::serve_stdio), [`serve_http`](Self::serve_http),
/// [`http_service`](Self::http_service) (mount it in your own HTTP server), or any rmcp
/// transport through [`rmcp::ServiceExt::serve`].
///
/// ```
/// use tool_runtime::catalog::ToolCatalog;
/// use tool_runtime::mcp::{McpServer, ToolHints};
/// use tool_runtime::policy::ToolPolicy;
/// use tool_runtime::prelude::*;
/// use tool_runtime::runner::ToolRunner;
///
/// /// Add a note.
/// #[tool(name = "notes__add", effect = state_change, redact = ["id"])]
/// struct AddNote { text: String }
/// #[derive(Serialize, ToolSchema)]
/// struct Added { id: u64, owner: String }
/// impl Tool for AddNote {
///     type Output = Added;
///     async fn run(self, _: &ToolInvocationContext, _: &ToolCapabilities) -> Result<Added, ToolError> {
///         Ok(Added { id: 1, owner: "internal".into() })
///     }
/// }
///
/// let catalog = ToolCatalog::builder().register::<AddNote>().build().unwrap();
/// let policy = ToolPolicy::from_json(r#"{"allowed_tools": ["notes__*"]}"#).unwrap();
/// let server = McpServer::builder(ToolRunner::builder(catalog).policy(policy).build())
///     .server_info("notes", "1.0.0")
///     .context(|| ToolInvocationContext::new(ContextIds { run_id: "mcp", actor_id: "alice", tenant_id: "acme" }))
///     .hints("notes__add", ToolHints::new().destructive(false))   // it only adds
///     .build();
/// let tools = server.tools();
/// let hints = tools[0].annotations.as_ref().unwrap();
/// assert_eq!((hints.read_only_hint, hints.destructive_hint), (Some(false), Some(false)));
/// // `owner` is redacted, so the advertised output schema does not promise it.
/// let output = tools[0].output_schema.as_ref().unwrap();
/// assert_eq!(output["required"], serde_json::json!(["id"]));
/// ```
pub struct McpServer {
    inner: Arc<Inner>,
    session: Arc<Session>,
}

/// A clone serves the same tools with the same settings, and is a session of its own: serve one
/// clone per client connection, and each has its own log level.
impl Clone for McpServer {
    fn clone(&self) -> Self {
        self.for_session()
    }
}

struct Inner {
    runner: ToolRunner,
    context: ContextFn,
    info: Implementation,
    instructions: Option<String>,
    hints: BTreeMap<String, ToolHints>,
    names: ServedNames,
    http_limits: HttpLimits,
    authenticator: Option<Arc<dyn Authenticator>>,
    rounds: Option<Rounds>,
    tasks: BTreeMap<String, TaskSupport>,
    running: Running,
    param_headers: ParamHeaders,
    ask_first: BTreeSet<String>,
    prompts: BTreeMap<String, McpPrompt>,
}

/// What one client connection set: the lowest level of log messages it receives. A session of
/// an HTTP service also holds its slot among the service's open sessions.
struct Session {
    log_level: AtomicU8,
    _slot: Option<SessionSlot>,
}

impl Session {
    fn new(slot: Option<SessionSlot>) -> Arc<Self> {
        Arc::new(Self { log_level: AtomicU8::new(LogLevel::Info as u8), _slot: slot })
    }

    fn wants(&self, level: LogLevel) -> bool {
        level as u8 >= self.log_level.load(Ordering::Relaxed)
    }
}

/// Tools served under names other than their ids, both ways.
#[derive(Default)]
struct ServedNames {
    by_id: BTreeMap<String, String>,
    by_name: BTreeMap<String, String>,
}

impl ServedNames {
    /// The name clients see for the tool `id`.
    fn name_of<'a>(&'a self, id: &'a str) -> &'a str {
        self.by_id.get(id).map_or(id, String::as_str)
    }

    /// The tool a client means by `name`: a served name, or an id that has none. A tool served
    /// under another name cannot be called by its id.
    fn id_of<'a>(&'a self, name: &'a str) -> Option<&'a str> {
        match self.by_name.get(name) {
            Some(id) => Some(id),
            None if self.by_id.contains_key(name) => None,
            None => Some(name),
        }
    }
}

impl fmt::Debug for McpServer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("McpServer")
            .field("name", &self.inner.info.name)
            .field("version", &self.inner.info.version)
            .finish_non_exhaustive()
    }
}

/// Builds an [`McpServer`].
#[must_use]
pub struct McpServerBuilder {
    runner: ToolRunner,
    context: ContextFn,
    info: Implementation,
    instructions: Option<String>,
    hints: BTreeMap<String, ToolHints>,
    names: ServedNames,
    http_limits: HttpLimits,
    authenticator: Option<Arc<dyn Authenticator>>,
    rounds: Option<Rounds>,
    tasks: BTreeMap<String, TaskSupport>,
    param_headers: ParamHeaders,
    ask_first: BTreeSet<String>,
    prompts: BTreeMap<String, McpPrompt>,
}

impl fmt::Debug for McpServerBuilder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("McpServerBuilder").field("name", &self.info.name).finish_non_exhaustive()
    }
}

/// Overrides of the annotation hints an effect implies, for tools that know better: a
/// `state_change` that only adds (`destructive(false)`), one that may be repeated
/// (`idempotent(true)`). `readOnlyHint` always follows the effect.
///
/// ```
/// use tool_runtime::mcp::ToolHints;
/// let hints = ToolHints::new().destructive(false).idempotent(true);
/// # let _ = hints;
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ToolHints {
    destructive: Option<bool>,
    idempotent: Option<bool>,
    open_world: Option<bool>,
}

impl ToolHints {
    /// No overrides.
    #[must_use]
    pub fn new() -> Self {
        Self::default()
    }

    /// Sets `destructiveHint`.
    #[must_use]
    pub fn destructive(mut self, destructive: bool) -> Self {
        self.destructive = Some(destructive);
        self
    }

    /// Sets `idempotentHint`.
    #[must_use]
    pub fn idempotent(mut self, idempotent: bool) -> Self {
        self.idempotent = Some(idempotent);
        self
    }

    /// Sets `openWorldHint`.
    #[must_use]
    pub fn open_world(mut self, open_world: bool) -> Self {
        self.open_world = Some(open_world);
        self
    }
}

/// The annotations an effect implies, every hint explicit:
///
/// | effect | readOnly | destructive | idempotent | openWorld |
/// | --- | --- | --- | --- | --- |
/// | `read_only` | true | false | true | false |
/// | `state_change` | false | true | false | false |
/// | `external_side_effect` | false | true | false | true |
///
/// `hints` overrides all but `readOnlyHint`.
///
/// ```
/// use tool_runtime::mcp::{ToolHints, annotations};
/// use tool_runtime::prelude::*;
///
/// let hints = annotations(ToolEffect::StateChange, ToolHints::new().destructive(false));
/// assert_eq!(hints.read_only_hint, Some(false));
/// assert_eq!(hints.destructive_hint, Some(false));
/// assert_eq!(hints.open_world_hint, Some(false));
/// ```
#[must_use]
pub fn annotations(effect: ToolEffect, hints: ToolHints) -> ToolAnnotations {
    let (read_only, destructive, idempotent, open_world) = match effect {
        ToolEffect::ReadOnly => (true, false, true, false),
        ToolEffect::StateChange => (false, true, false, false),
        ToolEffect::ExternalSideEffect => (false, true, false, true),
    };
    ToolAnnotations::new()
        .read_only(read_only)
        .destructive(hints.destructive.unwrap_or(destructive))
        .idempotent(hints.idempotent.unwrap_or(idempotent))
        .open_world(hints.open_world.unwrap_or(open_world))
}

impl McpServer {
    /// Starts a server over `runner`. Defaults: calls run in the context with run id `mcp`,
    /// actor id `mcp-client` and tenant id `default`, the server calls itself `tool-runtime`
    /// with this crate's version, no hint overrides.
    pub fn builder(runner: ToolRunner) -> McpServerBuilder {
        McpServerBuilder {
            runner,
            context: Arc::new(|| {
                ToolInvocationContext::new(ContextIds {
                    run_id: "mcp",
                    actor_id: "mcp-client",
                    tenant_id: "default",
                })
            }),
            info: Implementation::new("tool-runtime", env!("CARGO_PKG_VERSION")),
            instructions: None,
            hints: BTreeMap::new(),
            names: ServedNames::default(),
            http_limits: HttpLimits::default(),
            authenticator: None,
            rounds: None,
            tasks: BTreeMap::new(),
            param_headers: ParamHeaders::new(),
            ask_first: BTreeSet::new(),
            prompts: BTreeMap::new(),
        }
    }

    /// The `tools/list` answer for a client that did not authenticate: the tools the policy
    /// shows for the server's [context](McpServerBuilder::context), ordered by name.
    #[must_use]
    pub fn tools(&self) -> Vec<Tool> {
        self.tools_for(&(self.inner.context)())
    }

    /// The `tools/list` answer for the caller of `ctx`.
    fn tools_for(&self, ctx: &ToolInvocationContext) -> Vec<Tool> {
        let names = &self.inner.names;
        let mut tools: Vec<Tool> = self
            .inner
            .runner
            .visible_tools(ctx)
            .specs()
            // A tool whose id another tool is served under stays unlisted: the name is taken.
            .filter(|spec| names.id_of(names.name_of(spec.name())) == Some(spec.name()))
            .filter(|spec| self.serves(spec.name()))
            .map(|spec| self.tool(spec))
            .collect();
        tools.sort_by(|a, b| a.name.cmp(&b.name));
        tools
    }

    /// Whether the tool `id` is served: not a [`ClientTool`](crate::runtime::ClientTool), which
    /// the application's own client runs, so an MCP client's call of it could never end.
    fn serves(&self, id: &str) -> bool {
        self.inner.runner.catalog().get(id).is_some_and(|tool| !tool.runs_on_client())
    }

    fn tool(&self, spec: &ToolSpec) -> Tool {
        let hints = self.inner.hints.get(spec.name()).copied().unwrap_or_default();
        let mut input = object(spec.input_schema().to_json());
        if let Some(mirrored) = self.inner.param_headers.get(spec.name()) {
            headers::annotate(&mut input, mirrored);
        }
        let mut tool = Tool::new_with_raw(
            self.inner.names.name_of(spec.name()).to_owned(),
            Some(spec.description_with_examples().into_owned().into()),
            input,
        )
        .with_annotations(annotations(spec.effect(), hints));
        if let Some((schema, _)) = served_output(spec) {
            tool = tool.with_raw_output_schema(Arc::new(schema));
        }
        tool
    }

    /// This server for a new client connection: the same tools and settings, a log level of
    /// its own.
    fn for_session(&self) -> Self {
        Self { inner: Arc::clone(&self.inner), session: Session::new(None) }
    }

    /// This server for a new session of an HTTP service, holding `slot` while it lives.
    pub(super) fn for_http_session(&self, slot: SessionSlot) -> Self {
        Self { inner: Arc::clone(&self.inner), session: Session::new(Some(slot)) }
    }

    /// What HTTP clients may hold of this server.
    pub(super) fn http_limits(&self) -> HttpLimits {
        self.inner.http_limits
    }

    /// Who decides who an HTTP request comes from, if anyone does.
    pub(super) fn authenticator(&self) -> Option<Arc<dyn Authenticator>> {
        self.inner.authenticator.clone()
    }

    /// The context a request's calls run in: the one its [`Authenticator`] gave an HTTP
    /// request, else the server's [context](McpServerBuilder::context).
    fn context_of(&self, request: &RequestContext<RoleServer>) -> ToolInvocationContext {
        // rmcp hands each request's HTTP head to its handler; the authenticator put its
        // context there.
        let parts = request.extensions.get::<hyper::http::request::Parts>();
        match parts.and_then(|parts| parts.extensions.get::<Authenticated>()) {
            Some(Authenticated(ctx)) => ctx.clone(),
            None => (self.inner.context)(),
        }
    }

    /// Serves MCP on this process's stdin and stdout until the client disconnects.
    ///
    /// # Errors
    ///
    /// [`McpServeError`] when the handshake fails or the service task fails.
    pub async fn serve_stdio(self) -> Result<(), McpServeError> {
        let running = self
            .serve(rmcp::transport::stdio())
            .await
            .map_err(|error| McpServeError::Handshake(error.to_string()))?;
        running.waiting().await.map_err(|error| McpServeError::Task(error.to_string()))?;
        Ok(())
    }

    async fn call(
        &self,
        mut request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let inner = &self.inner;
        let mut ctx = self.context_of(&context).with_cancellation(context.ct.clone());
        let tool = inner
            .names
            .id_of(&request.name)
            .and_then(|id| inner.runner.catalog().get(id))
            .filter(|tool| shows(inner.runner.policy(), &ctx, tool.spec()))
            .filter(|tool| !tool.runs_on_client());
        let Some(tool) = tool else {
            return Err(ErrorData::invalid_params(
                format!("unknown tool `{}`", Shown(&request.name)),
                None,
            ));
        };
        let spec = tool.spec();
        // Already parsed by the transport: handed over as they are, never re-encoded.
        let mut args = Value::Object(request.arguments.take().unwrap_or_default());
        // A client of 2026-07-28 is never sent a request within the call: a call that waits
        // becomes an input-required result (when the server keeps such calls), and the tool's
        // questions wait with it. Older clients are asked within the call.
        if !rounds::speaks_2026(&context) {
            return self.call_within(&request, spec, args, ctx, &context).await;
        }
        let rounds = inner.rounds.as_ref();
        let task = inner.tasks.get(spec.name()).filter(|_| rounds.is_some());
        let takes_tasks = context.client_capabilities().is_some_and(|caps| caps.supports_tasks());
        // A task tool that asks first becomes a task only once it has what it asks.
        let ask_first = task.is_some() && takes_tasks && inner.ask_first.contains(spec.name());
        if let (Some(support), None) = (task, &request.request_state) {
            if takes_tasks && !ask_first {
                let id = rounds::call_id();
                let job = Job {
                    runner: inner.runner.clone(),
                    ctx: ctx.with_tool_call_id(id.clone()),
                    tool: spec.name().to_owned(),
                    arguments: args.clone(),
                    request: args,
                    answers: Vec::new(),
                    approved: false,
                    offered: Offered::of(&context),
                };
                return Ok(Box::pin(start_task(self, id, &request.name, job)).await?.into());
            }
            if *support == TaskSupport::Required && !takes_tasks {
                return Err(ErrorData::missing_required_client_capability(tasks_capability()));
            }
        }
        let Some(state) = request.request_state.as_deref() else {
            // A first round: what the call asks waits for the client, as approvals do.
            let call = rounds::call_id();
            ctx = ctx.with_tool_call_id(call.clone());
            let (result, asking) = if ask_first {
                let job = Job {
                    runner: inner.runner.clone(),
                    ctx: ctx.clone(),
                    tool: spec.name().to_owned(),
                    arguments: args.clone(),
                    request: args.clone(),
                    answers: Vec::new(),
                    approved: false,
                    offered: Offered::of(&context),
                };
                match Box::pin(start_after_questions(self, call.clone(), &request.name, job))
                    .await?
                {
                    Inline::Task(created) => return Ok(created.into()),
                    Inline::Stopped(result, asking) => (result, asking),
                }
            } else {
                let asking = Asking::new(Vec::new(), Offered::of(&context));
                let ctx = ctx.clone().with_interactor(asking.clone());
                // The request's arguments are kept for the next round's state only where
                // there can be one: a server without a store copies nothing.
                let runs = if rounds.is_some() { args.clone() } else { std::mem::take(&mut args) };
                (self.exec(&inner.runner, spec.name(), runs, ctx, &context).await, asking)
            };
            if let Some(required) = asking.missing() {
                return Err(ErrorData::missing_required_client_capability(required));
            }
            // Only a call that waits keeps its arguments (in the next round's state).
            let arguments = result.is_waiting().then(|| result.args().cloned()).flatten();
            let arguments = arguments.unwrap_or(Value::Null);
            let waiting = match result.outcome {
                CallOutcome::Waiting(waiting) => waiting,
                outcome => return Ok(complete(outcome, spec)),
            };
            let asks = asking.asked();
            if asks.is_empty() && !rounds::elicits(&context) {
                // Deciding it takes the client's user, whom this client cannot be asked for.
                let mut required = rmcp::model::ClientCapabilities::default();
                required.elicitation = Some(Default::default());
                return Err(ErrorData::missing_required_client_capability(required));
            }
            let Some(rounds) = rounds else {
                let message = format!(
                    "{}; this server keeps no calls that wait, so no MCP client can decide it",
                    waiting.message
                );
                return Ok(CallToolResult::error(vec![ContentBlock::text(message)]).into());
            };
            // A call that asked got past its approval, if policy required one.
            let approved = !asks.is_empty() && inner.runner.needs_approval(spec.name());
            let pending = rounds.pending(
                &ctx,
                &call,
                spec,
                &args,
                arguments,
                waiting.waits_for,
                asks,
                Vec::new(),
                approved,
            );
            return Ok(Box::pin(rounds.ask(&pending, &request.name)).await?.into());
        };
        let Some(rounds) = rounds else {
            return Err(ErrorData::invalid_params(
                "this server issues no requestState: call the tool without it",
                None,
            ));
        };
        Box::pin(self.next_round(rounds, &request, state, spec, &args, ctx, &context, ask_first))
            .await
    }

    /// A call of a client of an older protocol version: its questions, and the approvals the
    /// runner's approver defers, go to the client within the call (when it declared
    /// elicitation); a call that waits fails with what it waits for.
    async fn call_within(
        &self,
        request: &CallToolRequestParams,
        spec: &ToolSpec,
        args: Value,
        mut ctx: ToolInvocationContext,
        context: &RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let inner = &self.inner;
        if request.request_state.is_some() {
            return Err(ErrorData::invalid_params(
                "this server issues no requestState for this client: call the tool without it",
                None,
            ));
        }
        // The call's questions go to this session's client, whatever the catalog bound, and
        // so do the approvals the application's approver defers.
        ctx = ctx.with_interactor(Arc::new(ClientInteractor { peer: context.peer.clone() }));
        let elicits =
            context.peer.peer_info().is_some_and(|info| info.capabilities.elicitation.is_some());
        let asking;
        let runner = if elicits {
            asking = inner.runner.approving_with(|first| {
                let peer = context.peer.clone();
                Arc::new(ClientApprover { first, peer, served: request.name.to_string() })
            });
            &asking
        } else {
            &inner.runner
        };
        let result = self.exec(runner, spec.name(), args, ctx, context).await;
        Ok(match result.outcome {
            CallOutcome::Waiting(waiting) => {
                // The client cannot be asked: it is told what the call waits for.
                CallToolResult::error(vec![ContentBlock::text(waiting.message)]).into()
            }
            outcome => complete(outcome, spec),
        })
    }

    /// A round that answers what the call of `state` waits for: checked, spent, and the call
    /// goes on (it ends, or asks again in a new round).
    #[allow(clippy::too_many_arguments)]
    async fn next_round(
        &self,
        rounds: &Rounds,
        request: &CallToolRequestParams,
        state: &str,
        spec: &ToolSpec,
        args: &Value,
        ctx: ToolInvocationContext,
        context: &RequestContext<RoleServer>,
        ask_first: bool,
    ) -> Result<CallToolResponse, ErrorData> {
        let (pending, revision) = rounds.open(state, &ctx, spec, args)?;
        let reply = match Rounds::reply(&pending, request.input_responses.as_ref())? {
            // Not answered: asked again, with the same state.
            Replied::Nothing => {
                return Ok(Rounds::asking(&pending, &request.name, state.to_owned()).into());
            }
            // Answered in part: what is missing is asked again, the rest kept in a new state
            // (this one is spent with it: the store keeps the newer).
            Replied::Partial(partial) => {
                rounds.current(&pending, &revision).await?;
                let next = Pending { partial, ..pending };
                return Ok(rounds.ask(&next, &request.name).await?.into());
            }
            Replied::Full(reply) => reply,
        };
        rounds.spend(&pending.key(), &pending, &revision, &reply).await?;
        // The call goes on as the round decided: the same call, for the same caller.
        let ctx = ctx.with_tool_call_id(pending.call.clone());
        let offered = Offered::of(context);
        let (runner, ctx, answers, approved) = match self.going_on(&pending, reply, ctx) {
            GoingOn::Refused(ctx) => {
                let result = self.refuse(&pending, &ctx).await;
                rounds.end(&pending).await;
                return Ok(complete(result.outcome, spec));
            }
            GoingOn::Runs { runner, ctx, answers, approved } => (runner, ctx, answers, approved),
        };
        let (result, asking) = if ask_first {
            // It had what it asked for: it goes on as a task, unless it asks more at once.
            let job = Job {
                runner: runner.clone(),
                ctx,
                tool: spec.name().to_owned(),
                arguments: pending.arguments.clone(),
                request: args.clone(),
                answers: answers.clone(),
                approved,
                offered,
            };
            match start_after_questions(self, pending.call.clone(), &request.name, job).await? {
                Inline::Task(created) => {
                    rounds.end(&pending).await;
                    return Ok(created.into());
                }
                Inline::Stopped(result, asking) => (result, asking),
            }
        } else {
            let asking = Asking::new(answers.clone(), offered);
            let ctx = ctx.with_interactor(asking.clone());
            let args = pending.arguments.clone();
            (self.exec(&runner, spec.name(), args, ctx, context).await, asking)
        };
        if let Some(required) = asking.missing() {
            rounds.end(&pending).await;
            return Err(ErrorData::missing_required_client_capability(required));
        }
        Ok(match result.outcome {
            CallOutcome::Waiting(waiting) => {
                // It asked more: the next round asks it, with the arguments it ran with.
                let next = Pending {
                    waits_for: waiting.waits_for,
                    asks: asking.asked(),
                    given: answers,
                    partial: std::collections::BTreeMap::new(),
                    approved,
                    ..pending
                };
                rounds.ask(&next, &request.name).await?.into()
            }
            outcome => {
                rounds.end(&pending).await;
                complete(outcome, spec)
            }
        })
    }

    /// Runs the call of `name` on `runner` in `ctx`, the tool's progress and log messages sent
    /// to the client of `context` as they come.
    async fn exec(
        &self,
        runner: &ToolRunner,
        name: &str,
        args: Value,
        mut ctx: ToolInvocationContext,
        context: &RequestContext<RoleServer>,
    ) -> ToolExecResult {
        // Progress and log messages share one queue, so the client sees them in the order the
        // tool sent them. It is bounded: what a client too slow to read them would leave in it
        // is dropped, and the call goes on.
        let (notice_tx, mut notice_rx) = tokio::sync::mpsc::channel::<Notice>(NOTICE_QUEUE);
        let token = context.meta.get_progress_token();
        if token.is_some() {
            let tx = notice_tx.clone();
            ctx = ctx.with_progress(ProgressReporter::new(move |progress| {
                let _ = tx.try_send(Notice::Progress(progress));
            }));
        }
        let session = Arc::clone(&self.session);
        let requested = logging::requested(&context.meta);
        // A client of 2026-07-28 has no session level: it gets log messages only when its
        // request asks for them.
        if requested.is_some() || !rounds::speaks_2026(context) {
            ctx = ctx.with_logger(LogReporter::new(move |message: LogMessage| {
                let wanted = requested
                    .map_or_else(|| session.wants(message.level), |at| message.level >= at);
                if wanted {
                    let _ = notice_tx.try_send(Notice::Log(message));
                }
            }));
        }
        let notify = |notice: Notice| {
            let peer = context.peer.clone();
            let token = token.clone();
            async move {
                // A client that went away cannot be told; the call itself goes on.
                match notice {
                    Notice::Progress(progress) => {
                        let Some(token) = token else { return };
                        let mut param = ProgressNotificationParam::new(token, progress.progress);
                        param.total = progress.total;
                        param.message = progress.message;
                        let _ = peer.notify_progress(param).await;
                    }
                    Notice::Log(message) => logging::notify(&peer, message).await,
                }
            }
        };
        let exec = runner.exec(name, args, &ctx);
        tokio::pin!(exec);
        // The call and the sending of its notices go on side by side: a client that does not
        // read them holds up the sending, never the call (its deadline included).
        let mut sending: Option<Pin<Box<dyn Future<Output = ()> + Send>>> = None;
        let result = std::future::poll_fn(|cx| {
            loop {
                if let Some(notice) = sending.as_mut() {
                    if notice.as_mut().poll(cx).is_pending() {
                        break;
                    }
                    sending = None;
                }
                match notice_rx.poll_recv(cx) {
                    Poll::Ready(Some(notice)) => sending = Some(Box::pin(notify(notice))),
                    Poll::Ready(None) | Poll::Pending => break,
                }
            }
            exec.as_mut().poll(cx)
        })
        .await;
        // What the call sent before its end goes before its result.
        if let Some(notice) = sending {
            notice.await;
        }
        while let Ok(notice) = notice_rx.try_recv() {
            Box::pin(notify(notice)).await;
        }
        result
    }
}

/// How many progress reports and log messages of one call may wait for the client to read
/// them; past it, new ones are dropped (the call goes on).
const NOTICE_QUEUE: usize = 64;

/// A progress report or a log message of a running call, on its way to the client.
enum Notice {
    Progress(Progress),
    Log(LogMessage),
}

impl McpServerBuilder {
    /// The context every call runs in (a fresh one per call): who the MCP client acts for,
    /// which connections its requests bring. The server adds the request's cancellation and
    /// progress. `tools/list` shows what the policy shows for this context.
    pub fn context(
        mut self,
        context: impl Fn() -> ToolInvocationContext + Send + Sync + 'static,
    ) -> Self {
        self.context = Arc::new(context);
        self
    }

    /// Who an HTTP request comes from: every request to the server's HTTP service
    /// ([`serve_http`](McpServer::serve_http), [`http_service`](McpServer::http_service)) is
    /// asked about first. A refused request is answered `401 Unauthorized`; the calls and
    /// listings of an accepted one run in the context the authenticator gave it, in place of
    /// the server's [context](Self::context) (which stays the context of stdio and other
    /// transports that carry no HTTP request). See [`Authenticator`] for an example.
    pub fn authenticator(mut self, authenticator: Arc<dyn Authenticator>) -> Self {
        self.authenticator = Some(authenticator);
        self
    }

    /// The name and version the server reports to clients.
    pub fn server_info(mut self, name: impl Into<String>, version: impl Into<String>) -> Self {
        self.info = Implementation::new(name, version);
        self
    }

    /// Instructions for clients, sent with the handshake.
    pub fn instructions(mut self, instructions: impl Into<String>) -> Self {
        self.instructions = Some(instructions.into());
        self
    }

    /// Overrides the annotation hints of one tool, by name.
    pub fn hints(mut self, tool_name: impl Into<String>, hints: ToolHints) -> Self {
        self.hints.insert(tool_name.into(), hints);
        self
    }

    /// Serves the tool `id` under `name` (and no longer under its id), so that a server can
    /// offer the names a client expects: without the namespace, say. `tools/list` shows `name`,
    /// `tools/call` takes it, and everything else (policy, events, records, [hints](Self::hints))
    /// still speaks of `id`.
    ///
    /// ```
    /// use tool_runtime::catalog::ToolCatalog;
    /// use tool_runtime::mcp::McpServer;
    /// use tool_runtime::prelude::*;
    /// use tool_runtime::runner::ToolRunner;
    ///
    /// /// Say hello.
    /// #[tool(name = "demo__hello", effect = read_only, redact = ["text"])]
    /// struct Hello {}
    /// #[derive(Serialize, ToolSchema)]
    /// struct Greeting { text: String }
    /// impl Tool for Hello {
    ///     type Output = Greeting;
    ///     async fn run(self, _: &ToolInvocationContext, _: &ToolCapabilities) -> Result<Greeting, ToolError> {
    ///         Ok(Greeting { text: "hello".into() })
    ///     }
    /// }
    ///
    /// let catalog = ToolCatalog::builder().register::<Hello>().build().unwrap();
    /// let runner = ToolRunner::builder(catalog).policy(ToolPolicy::allowing(["demo__*"])).build();
    /// let server = McpServer::builder(runner).serve_as("demo__hello", "hello").unwrap().build();
    /// assert_eq!(server.tools()[0].name, "hello");
    /// ```
    ///
    /// # Errors
    ///
    /// [`ServedNameError`] when `name` breaks MCP's tool-name rule (2026-07-28: 1 to 128
    /// characters of `a-z`, `A-Z`, `0-9`, `_`, `-` and `.`), is already served for another
    /// tool, or is the id of another tool in the catalog.
    pub fn serve_as(
        mut self,
        id: impl Into<String>,
        name: impl Into<String>,
    ) -> Result<Self, ServedNameError> {
        let (id, name) = (id.into(), name.into());
        if !served_name_ok(&name) {
            return Err(ServedNameError::Invalid { name });
        }
        let taken_by = match self.names.by_name.get(&name) {
            Some(other) if *other != id => Some(other.clone()),
            _ if name != id && self.runner.catalog().get(&name).is_some() => Some(name.clone()),
            _ => None,
        };
        if let Some(by) = taken_by {
            return Err(ServedNameError::Taken { name, by });
        }
        if let Some(old) = self.names.by_id.insert(id.clone(), name.clone()) {
            self.names.by_name.remove(&old);
        }
        self.names.by_name.insert(name, id);
        Ok(self)
    }

    /// What HTTP clients may hold of the server: a header-read timeout, caps on connections
    /// and sessions, an idle timeout for sessions. [`McpServer::serve_http`] applies them all,
    /// [`McpServer::http_service`] the ones about sessions. The defaults are
    /// [`HttpLimits::default`].
    ///
    /// ```
    /// use std::time::Duration;
    /// use tool_runtime::catalog::ToolCatalog;
    /// use tool_runtime::mcp::{HttpLimits, McpServer};
    /// use tool_runtime::runner::ToolRunner;
    ///
    /// let runner = ToolRunner::builder(ToolCatalog::builder().build().unwrap()).build();
    /// let server = McpServer::builder(runner)
    ///     .http_limits(HttpLimits::new().max_connections(32).header_read_timeout(Duration::from_secs(5)))
    ///     .build();
    /// # let _ = server;
    /// ```
    pub fn http_limits(mut self, limits: HttpLimits) -> Self {
        self.http_limits = limits;
        self
    }

    /// Keeps the calls that wait in `store`, so that a client that speaks MCP 2026-07-28 and
    /// declares elicitation can decide them: a call that waits for approval, or for its
    /// user's answer to a question the tool asks ([`Interact`](crate::runtime::Interact)),
    /// ends its `tools/call` with an input-required result instead of an error. Its
    /// `inputRequests` hold the elicitation form `approval` (a yes/no, `{"approve": true}`,
    /// with the tool and the arguments that will run), or everything the tool asked before it
    /// stopped: questions (`question`, or the key the tool gave), completions from the
    /// client's model (`completion`) and its roots (`roots`), each only if the client declared
    /// the capability (else `-32021`); its `requestState` carries the call, sealed with `key`.
    ///
    /// The client calls again with the same tool, the same arguments, its answer in
    /// `inputResponses` and the `requestState`. Any server sharing `store` and `key` takes it
    /// (nothing of the call stays in one process): the state is checked (sealed with `key` or a
    /// [retired key](Self::retired_state_key), issued to this caller, for this tool as it is now
    /// and these arguments, not expired) and spent in the store, so it is good once; then the
    /// approved call runs (the approval is bound to it as the runner's approver's is), a
    /// refused one fails with `approval_denied`, an answered tool runs again from its start
    /// with its answers. A tampered, foreign, expired or spent state is a protocol error
    /// (`-32602`) and nothing runs. Each call that waits is listed in the store
    /// ([`RunStore::list_waiting`]) as the run `mcp:<call id>` of its tenant, until it ends or
    /// [expires](Self::state_ttl).
    ///
    /// Clients of older protocol versions are asked within the call (`elicitation/create`) when
    /// they declared elicitation, with or without a store: a question as the tool put it, an
    /// approval the runner's approver defers as the same yes/no form. Otherwise the call fails
    /// with what it waits for.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use tool_runtime::agent::StateKey;
    /// use tool_runtime::catalog::ToolCatalog;
    /// use tool_runtime::mcp::McpServer;
    /// use tool_runtime::runner::{DeferAll, ToolRunner};
    /// use tool_runtime::store::InMemoryStore;
    ///
    /// let runner = ToolRunner::builder(ToolCatalog::builder().build().unwrap())
    ///     .approver(Arc::new(DeferAll)) // approvals are decided by the client's user
    ///     .build();
    /// let server = McpServer::builder(runner)
    ///     .store(Arc::new(InMemoryStore::new()), StateKey::new(*b"a secret all replicas share!!!!!"))
    ///     .build();
    /// # let _ = server;
    /// ```
    pub fn store(mut self, store: Arc<dyn RunStore>, key: StateKey) -> Self {
        self.rounds = Some(Rounds { store, keys: vec![key], ttl_ms: DEFAULT_STATE_TTL_MS });
        self
    }

    /// A key states were sealed with before [`store`](Self::store)'s key replaced it: states
    /// it sealed are still taken, new ones are sealed with the current key. Call it after
    /// `store`, once per retired key.
    pub fn retired_state_key(mut self, key: StateKey) -> Self {
        if let Some(rounds) = self.rounds.as_mut() {
            rounds.keys.push(key);
        }
        self
    }

    /// How long a call that waits may be decided, from the round that asked (default 24
    /// hours). Call it after [`store`](Self::store).
    pub fn state_ttl(mut self, ttl: std::time::Duration) -> Self {
        if let Some(rounds) = self.rounds.as_mut() {
            rounds.ttl_ms = u64::try_from(ttl.as_millis()).unwrap_or(u64::MAX);
        }
        self
    }

    /// Serves the tool `id` as a task (the MCP tasks extension, `io.modelcontextprotocol/tasks`)
    /// for clients that declared it: a long-running call, or one that waits. Needs a
    /// [`store`](Self::store), where tasks live; without one, the tool is served as any other.
    ///
    /// A call of it is saved as a working task and answered at once with the task's id
    /// (`resultType: "task"`); it runs on in the background of the replica that took it. The
    /// client polls `tasks/get` (any replica answers, from the store): `working`, then
    /// `completed` with the result `tools/call` would have given (a tool's error is a completed
    /// task whose result says `isError`), or `input_required` with the form of the approval or
    /// question it waits on, which the client answers with `tasks/update` (taken by any replica,
    /// spent once, and the call goes on there). `tasks/cancel` cancels it: at once on the
    /// replica running it, within half a second from another. Tasks are the caller's: another
    /// caller's task id is unknown (`-32602`). A task is kept for [`state_ttl`](Self::state_ttl)
    /// from its creation.
    ///
    /// With [`TaskSupport::Required`], a client that did not declare the extension is refused
    /// (`-32021`); with [`TaskSupport::Optional`], it gets a plain call.
    ///
    /// The replica running a task renews a lease on it every 2 s; a replica that dies leaves
    /// its tasks to read as `failed` within 5 s. The call is not run again elsewhere (it may
    /// have done part of its work).
    pub fn task(mut self, id: impl Into<String>, support: TaskSupport) -> Self {
        self.tasks.insert(id.into(), support);
        self
    }

    /// Lets the calls of the [task](Self::task) tool `id` ask what they need within
    /// `tools/call` before they become tasks (MCP 2026-07-28 with tasks, SEP-2663): each call
    /// first runs within its request, and one that stops on what it asks (its user's answer,
    /// a completion, roots) is answered with an input-required round, as a plain call's is;
    /// once it has everything and goes on (past a moment within the request), it becomes a
    /// task, and the client gets the task's creation. A call that ends within that moment is a
    /// task that ended already. Without it, a task tool's call is a task from its first
    /// request, and what it asks is asked through `tasks/get` and `tasks/update`.
    pub fn ask_before_task(mut self, id: impl Into<String>) -> Self {
        self.ask_first.insert(id.into());
        self
    }

    /// Mirrors the argument `property` of the tool `id` into the HTTP header
    /// `Mcp-Param-<header>` (MCP 2026-07-28), so that a load balancer or gateway in front of
    /// replicas can route on it (a region, a tenant, a shard) without reading the body.
    /// `tools/list` marks the property `"x-mcp-header": "<header>"`; a client of 2026-07-28
    /// sends the value again in the header (Base64 in `=?base64?...?=` when it is not plain
    /// ASCII), and a call over HTTP whose header is missing, malformed or differs from the
    /// argument is refused with `400 Bad Request` and `-32020` before anything runs. Older
    /// clients send no such headers and are not asked for them.
    ///
    /// ```
    /// use tool_runtime::catalog::ToolCatalog;
    /// use tool_runtime::mcp::McpServer;
    /// use tool_runtime::prelude::*;
    /// use tool_runtime::runner::ToolRunner;
    ///
    /// /// Deploy a service to a region.
    /// #[tool(name = "ops__deploy", effect = state_change, redact = ["id"])]
    /// struct Deploy { service: String, region: String }
    /// #[derive(Serialize, ToolSchema)]
    /// struct Deployed { id: String }
    /// impl Tool for Deploy {
    ///     type Output = Deployed;
    ///     async fn run(self, _: &ToolInvocationContext, _: &ToolCapabilities) -> Result<Deployed, ToolError> {
    ///         Ok(Deployed { id: format!("{}@{}", self.service, self.region) })
    ///     }
    /// }
    ///
    /// let catalog = ToolCatalog::builder().register::<Deploy>().build().unwrap();
    /// let runner = ToolRunner::builder(catalog).policy(ToolPolicy::allowing(["ops__*"])).build();
    /// let server = McpServer::builder(runner).param_header("ops__deploy", "region", "Region").unwrap().build();
    /// let listed = server.tools();
    /// assert_eq!(listed[0].input_schema["properties"]["region"]["x-mcp-header"], "Region");
    /// ```
    ///
    /// # Errors
    ///
    /// [`ParamHeaderError`] when the catalog has no tool `id`, its input schema has no
    /// top-level `property` or it is not a plain string, integer or boolean (optional fields
    /// are `["string", "null"]`: they cannot be mirrored), `header` is not an HTTP token, or
    /// the tool mirrors the property or the header (without case) already.
    pub fn param_header(
        mut self,
        id: impl Into<String>,
        property: impl Into<String>,
        header: impl Into<String>,
    ) -> Result<Self, ParamHeaderError> {
        let (id, property, header) = (id.into(), property.into(), header.into());
        let Some(tool) = self.runner.catalog().get(&id) else {
            return Err(ParamHeaderError::UnknownTool(id));
        };
        let schema = tool.spec().input_schema().to_json();
        let mirrored = self.param_headers.entry(id.clone()).or_default();
        headers::check(&id, &schema, &property, &header, mirrored)?;
        mirrored.push((property, header));
        Ok(self)
    }

    /// Offers `prompt` to clients (`prompts/list`, `prompts/get`). Its handler may ask the
    /// client first, as a tool with [`Interact`](crate::runtime::Interact) does: within the
    /// request for clients before 2026-07-28, in input-required rounds for 2026-07-28 (the
    /// `requestState` sealed with the [store](Self::store)'s key, bound to the caller, the
    /// prompt and its arguments; a prompt has no side effects, so a state is not spent).
    ///
    /// ```
    /// use tool_runtime::catalog::ToolCatalog;
    /// use tool_runtime::mcp::{McpPrompt, McpServer};
    /// use tool_runtime::mcp::rmcp::model::{PromptMessage, Role};
    /// use tool_runtime::runner::ToolRunner;
    ///
    /// let runner = ToolRunner::builder(ToolCatalog::builder().build().unwrap()).build();
    /// let greet = McpPrompt::new("greet", "Greet someone.", |request| async move {
    ///     let name = request.arguments.get("name").cloned().unwrap_or_default();
    ///     Ok(vec![PromptMessage::new_text(Role::User, format!("Say hello to {name}."))])
    /// })
    /// .argument("name", "Who to greet.", true);
    /// let server = McpServer::builder(runner).prompt(greet).unwrap().build();
    /// # let _ = server;
    /// ```
    ///
    /// # Errors
    ///
    /// [`ServedNameError`] when the name breaks MCP's name rule (1 to 128 characters of
    /// `a-z`, `A-Z`, `0-9`, `_`, `-` and `.`) or another prompt has it.
    pub fn prompt(mut self, prompt: McpPrompt) -> Result<Self, ServedNameError> {
        let name = prompt.name().to_owned();
        if !served_name_ok(&name) {
            return Err(ServedNameError::Invalid { name });
        }
        if self.prompts.contains_key(&name) {
            return Err(ServedNameError::Taken { by: name.clone(), name });
        }
        self.prompts.insert(name, prompt);
        Ok(self)
    }

    /// The server.
    pub fn build(self) -> McpServer {
        McpServer {
            inner: Arc::new(Inner {
                runner: self.runner,
                context: self.context,
                info: self.info,
                instructions: self.instructions,
                hints: self.hints,
                names: self.names,
                http_limits: self.http_limits,
                authenticator: self.authenticator,
                rounds: self.rounds,
                tasks: self.tasks,
                running: Running::default(),
                param_headers: self.param_headers,
                ask_first: self.ask_first,
                prompts: self.prompts,
            }),
            session: Session::new(None),
        }
    }
}

impl Host for McpServer {
    /// How the call of `pending` goes on in `ctx` (its call's context) after `reply`: refused,
    /// or run on a runner that decides it (approved exactly this call, once, when it was
    /// approved; an answered question runs again under the approval it had before it asked,
    /// if it had one) with the answers its questions get.
    fn going_on(&self, pending: &Pending, reply: Reply, ctx: ToolInvocationContext) -> GoingOn {
        let (approved, answers) = match reply {
            Reply::Deny => return GoingOn::Refused(ctx),
            Reply::Approve => (true, pending.given.clone()),
            Reply::Answers(answers) => {
                let mut given: Vec<Answer> = pending.given.clone();
                given.extend(answers);
                (pending.approved, given)
            }
        };
        let waited = Waited {
            name: &pending.tool,
            spec_hash: &pending.spec_hash,
            call_id: &pending.call,
            stored: &pending.arguments,
            arguments: &pending.arguments,
        };
        let runner = deciding_runner(&self.inner.runner, &ctx, waited, approved);
        GoingOn::Runs { runner, ctx, answers, approved }
    }

    /// Ends the call of `pending` refused by the client's user (`approval_denied`).
    fn refuse<'a>(
        &'a self,
        pending: &'a Pending,
        ctx: &'a ToolInvocationContext,
    ) -> impl Future<Output = ToolExecResult> + Send + 'a {
        let message = "the client's user refused the call";
        self.inner.runner.deny_deferred(&pending.tool, &pending.arguments, message, ctx)
    }

    /// Where the server keeps calls that wait and tasks, if it does.
    fn rounds(&self) -> Option<&Rounds> {
        self.inner.rounds.as_ref()
    }

    /// The tasks this process runs.
    fn running(&self) -> &Running {
        &self.inner.running
    }

    /// The tool `id` of the runner's catalog.
    fn tool_of(&self, id: &str) -> Option<Arc<dyn BoundToolRuntime>> {
        self.inner.runner.catalog().get(id)
    }
}

impl ServerHandler for McpServer {
    fn get_info(&self) -> ServerConfig {
        let tasks = self.inner.rounds.is_some() && !self.inner.tasks.is_empty();
        let config = ServerConfig::new(logging::capabilities(tasks))
            .with_server_info(self.inner.info.clone());
        match &self.inner.instructions {
            Some(instructions) => config.with_instructions(instructions.clone()),
            None => config,
        }
    }

    /// The listed definition of a tool that mirrors arguments into headers, for rmcp's HTTP
    /// service to check a call's `Mcp-Param-*` headers against its body; `None` for the others
    /// (they have no such headers to check, and no definition is built per call for them).
    fn get_tool(&self, name: &str) -> Option<Tool> {
        let id = self.inner.names.id_of(name)?;
        if !self.inner.param_headers.contains_key(id) || !self.serves(id) {
            return None;
        }
        Some(self.tool(self.tool_of(id)?.spec()))
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(self.tools_for(&self.context_of(&context))))
    }

    // Prompts are the application's (`McpServerBuilder::prompt`); a server of tools serves no
    // resources: that list is empty (with the caching hints 2026-07-28 asks for), so clients
    // that list everything get an answer.
    async fn list_prompts(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<rmcp::model::ListPromptsResult, ErrorData> {
        let listed = self.inner.prompts.values().map(|prompt| prompt.listed().clone());
        Ok(rmcp::model::ListPromptsResult::with_all_items(listed.collect()))
    }

    async fn get_prompt(
        &self,
        request: rmcp::model::GetPromptRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<rmcp::model::GetPromptResponse, ErrorData> {
        let Some(prompt) = self.inner.prompts.get(&request.name) else {
            let message = format!("unknown prompt `{}`", Shown(&request.name));
            return Err(ErrorData::invalid_params(message, None));
        };
        let ctx = self.context_of(&context).with_cancellation(context.ct.clone());
        Box::pin(prompts::get_prompt(prompt, request, ctx, self.inner.rounds.as_ref(), &context))
            .await
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<rmcp::model::ListResourcesResult, ErrorData> {
        Ok(rmcp::model::ListResourcesResult::with_all_items(Vec::new()))
    }

    async fn list_resource_templates(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<rmcp::model::ListResourceTemplatesResult, ErrorData> {
        Ok(rmcp::model::ListResourceTemplatesResult::with_all_items(Vec::new()))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        // rmcp spawns one task per request, whose future is as large as the largest of this
        // handler's methods' futures and is copied when spawned. A call's state machine is
        // kilobytes large (its rare rounds are boxed in turn): boxed here, and in the task and
        // prompt handlers, each method's future is a pointer.
        Box::pin(self.call(request, context)).await
    }

    async fn get_task(
        &self,
        request: rmcp::model::GetTaskParams,
        context: RequestContext<RoleServer>,
    ) -> Result<rmcp::model::GetTaskResult, ErrorData> {
        Box::pin(get_task_of(self, &self.context_of(&context), &request.task_id)).await
    }

    async fn update_task(
        &self,
        request: rmcp::model::UpdateTaskParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        let ctx = self.context_of(&context);
        let offered = Offered::of(&context);
        Box::pin(update_task_of(self, &ctx, &request.task_id, &request.input_responses, offered))
            .await
    }

    async fn cancel_task(
        &self,
        request: rmcp::model::CancelTaskParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        Box::pin(cancel_task_of(self, &self.context_of(&context), &request.task_id)).await
    }

    #[allow(deprecated)] // see `logging`
    async fn set_level(
        &self,
        request: rmcp::model::SetLevelRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        let level = logging::level(request.level);
        self.session.log_level.store(level as u8, Ordering::Relaxed);
        Ok(())
    }
}

/// How long a call that waits may be decided by default: 24 hours.
const DEFAULT_STATE_TTL_MS: u64 = 24 * 60 * 60 * 1000;

/// The longest name a tool may be served under (MCP 2026-07-28: 1 to 128 characters).
const MAX_SERVED_NAME: usize = 128;

/// Whether `name` is a tool name MCP allows (2026-07-28): 1 to 128 characters of `A-Z`, `a-z`,
/// `0-9`, `_`, `-` and `.`. Wider than the names models take (no `.`, 64 at most): a served
/// name is only ever seen by MCP clients.
fn served_name_ok(name: &str) -> bool {
    (1..=MAX_SERVED_NAME).contains(&name.len())
        && name
            .bytes()
            .all(|byte| byte.is_ascii_alphanumeric() || matches!(byte, b'_' | b'-' | b'.'))
}

/// Why a tool cannot be [served under a name](McpServerBuilder::serve_as).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ServedNameError {
    /// The name breaks the tool-name rule.
    Invalid {
        /// The name.
        name: String,
    },
    /// The name is served for another tool, or is another tool's id.
    Taken {
        /// The name.
        name: String,
        /// The id of the tool that has it.
        by: String,
    },
}

impl fmt::Display for ServedNameError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Invalid { name } => write!(
                f,
                "`{}` cannot be served as a tool name: use 1 to {MAX_SERVED_NAME} characters of \
                 a-z, A-Z, 0-9, `_`, `-` and `.`",
                Shown(name)
            ),
            Self::Taken { name, by } => {
                write!(f, "the served name `{}` is already taken by `{by}`", Shown(name))
            }
        }
    }
}

impl std::error::Error for ServedNameError {}

/// Why serving MCP stopped with an error.
#[derive(Debug)]
#[non_exhaustive]
pub enum McpServeError {
    /// The MCP handshake with the client failed.
    Handshake(String),
    /// The task running the service failed.
    Task(String),
    /// Accepting a connection failed. [`McpServer::serve_http`] no longer returns it (it logs
    /// the error and retries); kept for code that matches on it.
    Io(std::io::Error),
}

impl fmt::Display for McpServeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Handshake(error) => write!(f, "the MCP handshake failed: {error}"),
            Self::Task(error) => write!(f, "the MCP service task failed: {error}"),
            Self::Io(error) => write!(f, "accepting an MCP connection failed: {error}"),
        }
    }
}

impl std::error::Error for McpServeError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Self::Io(error) => Some(error),
            _ => None,
        }
    }
}
