//! Serving a catalog as an MCP server: `tools/list` from the policy-filtered catalog,
//! `tools/call` through [`ToolRunner::exec`].

use std::collections::BTreeMap;
use std::fmt;
use std::sync::Arc;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation,
    JsonObject, ListToolsResult, PaginatedRequestParams, ProgressNotificationParam,
    ServerCapabilities, ServerConfig, Tool, ToolAnnotations,
};
use rmcp::service::{RequestContext, RoleServer};
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};
use rmcp::{ErrorData, ServerHandler, ServiceExt};
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::catalog::ToolSource;
use crate::runner::ToolRunner;
use crate::runtime::{ContextIds, Progress, ProgressReporter, ToolInvocationContext};
use crate::schema::Shown;
use crate::spec::{Allowed, Redaction, ToolEffect, ToolSpec, allowed_below};

type ContextFn = Arc<dyn Fn() -> ToolInvocationContext + Send + Sync>;

/// A [`ToolRunner`] as an MCP server (an rmcp [`ServerHandler`]). Cheap to clone.
///
/// - `tools/list` lists the tools the runner's policy shows for the server's
///   [context](McpServerBuilder::context), ordered by name, with `inputSchema`, `outputSchema`
///   (narrowed to the fields redaction lets through, since that is what `structuredContent`
///   carries) and every annotation hint written out (see [`annotations`]).
/// - `tools/call` runs [`ToolRunner::exec`]: policy, approval, validation and redaction all
///   apply. Success is the redacted output as `structuredContent` plus the same JSON as a text
///   block; a failure is `isError: true` with the safe message and no `structuredContent`; a
///   tool the client cannot see is a protocol error (`-32602`). The client's
///   `notifications/cancelled` cancels the call's token; the tool's progress reports become
///   `notifications/progress` when the request carried a progress token.
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
#[derive(Clone)]
pub struct McpServer {
    inner: Arc<Inner>,
}

struct Inner {
    runner: ToolRunner,
    context: ContextFn,
    info: Implementation,
    instructions: Option<String>,
    hints: BTreeMap<String, ToolHints>,
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

/// The part of an output schema that survives `redaction`, mirroring
/// [`Redaction::apply`]: properties not allowlisted are removed (and dropped from `required`),
/// arrays are walked through, an allowlisted property keeps its whole schema.
fn redacted_schema(schema: &Value, redaction: &Redaction) -> Value {
    if redaction.is_all() {
        return schema.clone();
    }
    redaction.with_paths(|paths| narrow(schema, paths)).unwrap_or_else(|| schema.clone())
}

fn narrow(schema: &Value, paths: &[&str]) -> Option<Value> {
    let Value::Object(node) = schema else { return None };
    let mut out = node.clone();
    if let Some(items) = node.get("items") {
        out.insert("items".to_owned(), narrow(items, paths)?);
        return Some(Value::Object(out));
    }
    let properties = node.get("properties").and_then(Value::as_object)?;
    let mut kept = JsonObject::new();
    for (key, child) in properties {
        let child = match allowed_below(paths, key) {
            Allowed::Nothing => None,
            Allowed::All => Some(child.clone()),
            Allowed::Below(below) => narrow(child, &below),
        };
        if let Some(child) = child {
            kept.insert(key.clone(), child);
        }
    }
    if let Some(Value::Array(required)) = node.get("required") {
        let required: Vec<Value> = required
            .iter()
            .filter(|name| name.as_str().is_some_and(|name| kept.contains_key(name)))
            .cloned()
            .collect();
        out.insert("required".to_owned(), Value::Array(required));
    }
    out.insert("properties".to_owned(), Value::Object(kept));
    Some(Value::Object(out))
}

fn object(value: Value) -> JsonObject {
    match value {
        Value::Object(map) => map,
        _ => JsonObject::new(),
    }
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
        }
    }

    /// The `tools/list` answer: the tools the policy shows, ordered by name.
    #[must_use]
    pub fn tools(&self) -> Vec<Tool> {
        let ctx = (self.inner.context)();
        self.inner.runner.visible_tools(&ctx).specs().map(|spec| self.tool(spec)).collect()
    }

    fn tool(&self, spec: &ToolSpec) -> Tool {
        let hints = self.inner.hints.get(spec.name()).copied().unwrap_or_default();
        let mut tool = Tool::new_with_raw(
            spec.name().to_owned(),
            Some(spec.description().to_owned().into()),
            object(spec.input_schema().to_json()),
        )
        .with_annotations(annotations(spec.effect(), hints));
        if let Some(output) = spec.output_schema() {
            let narrowed = redacted_schema(&output.to_json(), spec.redaction());
            tool = tool.with_raw_output_schema(Arc::new(object(narrowed)));
        }
        tool
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

    /// The server as a Streamable HTTP tower service, to mount in an HTTP server (for example
    /// `axum::Router::nest_service("/mcp", ...)`). Each session gets a clone of this server.
    pub fn http_service(
        &self,
        config: StreamableHttpServerConfig,
    ) -> StreamableHttpService<McpServer, LocalSessionManager> {
        let server = self.clone();
        StreamableHttpService::new(
            move || Ok(server.clone()),
            Arc::new(LocalSessionManager::default()),
            config,
        )
    }

    /// Serves Streamable HTTP (HTTP/1.1) on `listener`, at every path, until `shutdown` is
    /// cancelled. rmcp's default config applies: only loopback `Host` headers are accepted.
    ///
    /// # Errors
    ///
    /// The listener's error when accepting a connection fails.
    pub async fn serve_http(
        self,
        listener: tokio::net::TcpListener,
        shutdown: CancellationToken,
    ) -> Result<(), McpServeError> {
        let config =
            StreamableHttpServerConfig::default().with_cancellation_token(shutdown.child_token());
        let service = self.http_service(config);
        loop {
            let (stream, _) = tokio::select! {
                () = shutdown.cancelled() => return Ok(()),
                accepted = listener.accept() => accepted.map_err(McpServeError::Io)?,
            };
            let service = hyper_util::service::TowerToHyperService::new(service.clone());
            let shutdown = shutdown.clone();
            tokio::spawn(async move {
                let connection = hyper::server::conn::http1::Builder::new()
                    .serve_connection(hyper_util::rt::TokioIo::new(stream), service);
                tokio::pin!(connection);
                tokio::select! {
                    _ = connection.as_mut() => {}
                    () = shutdown.cancelled() => {
                        connection.as_mut().graceful_shutdown();
                        let _ = connection.await;
                    }
                }
            });
        }
    }

    async fn call(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResult, ErrorData> {
        let inner = &self.inner;
        let mut ctx = (inner.context)().with_cancellation(context.ct.clone());
        let visible = inner
            .runner
            .catalog()
            .get(&request.name)
            .is_some_and(|tool| inner.runner.policy().shows(&ctx, tool.spec()));
        if !visible {
            return Err(ErrorData::invalid_params(
                format!("unknown tool `{}`", Shown(&request.name)),
                None,
            ));
        }
        // Already parsed by the transport: handed over as they are, never re-encoded.
        let args = Value::Object(request.arguments.unwrap_or_default());
        let (progress_tx, mut progress_rx) = tokio::sync::mpsc::unbounded_channel::<Progress>();
        let token = context.meta.get_progress_token();
        if token.is_some() {
            ctx = ctx.with_progress(ProgressReporter::new(move |progress| {
                let _ = progress_tx.send(progress);
            }));
        }
        let notify = |progress: Progress| {
            let peer = context.peer.clone();
            let token = token.clone();
            async move {
                let Some(token) = token else { return };
                let mut param = ProgressNotificationParam::new(token, progress.progress);
                param.total = progress.total;
                param.message = progress.message;
                // A client that went away cannot be told; the call itself goes on.
                let _ = peer.notify_progress(param).await;
            }
        };
        let exec = inner.runner.exec(&request.name, args, &ctx);
        tokio::pin!(exec);
        let result = loop {
            tokio::select! {
                biased;
                Some(progress) = progress_rx.recv() => notify(progress).await,
                result = &mut exec => break result,
            }
        };
        while let Ok(progress) = progress_rx.try_recv() {
            notify(progress).await;
        }
        Ok(match result.outcome {
            Ok(output) => match output.into_structured() {
                Ok(value) => CallToolResult::structured(value),
                // Text only until parts are served as content blocks.
                Err(output) => CallToolResult::success(
                    output
                        .parts()
                        .iter()
                        .filter_map(|part| match part {
                            crate::content::Part::Text(text) => {
                                Some(ContentBlock::text(text.clone()))
                            }
                            crate::content::Part::Json(value) => {
                                Some(ContentBlock::text(value.to_string()))
                            }
                            _ => None,
                        })
                        .collect(),
                ),
            },
            Err(error) => CallToolResult::error(vec![ContentBlock::text(error.message)]),
        })
    }
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

    /// The server.
    pub fn build(self) -> McpServer {
        McpServer {
            inner: Arc::new(Inner {
                runner: self.runner,
                context: self.context,
                info: self.info,
                instructions: self.instructions,
                hints: self.hints,
            }),
        }
    }
}

impl ServerHandler for McpServer {
    fn get_info(&self) -> ServerConfig {
        let config = ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(self.inner.info.clone());
        match &self.inner.instructions {
            Some(instructions) => config.with_instructions(instructions.clone()),
            None => config,
        }
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(self.tools()))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        self.call(request, context).await.map(CallToolResponse::from)
    }
}

/// Why serving MCP stopped with an error.
#[derive(Debug)]
#[non_exhaustive]
pub enum McpServeError {
    /// The MCP handshake with the client failed.
    Handshake(String),
    /// The task running the service failed.
    Task(String),
    /// Accepting a connection failed.
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

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn redacted_schema_keeps_what_redaction_keeps() {
        let schema = json!({
            "type": "object",
            "properties": {
                "hits": {"type": "array", "items": {"type": "object", "properties": {
                    "title": {"type": "string"}, "owner": {"type": "string"}
                }, "required": ["title", "owner"]}},
                "total": {"type": "integer"},
                "cost": {"type": "integer"}
            },
            "required": ["hits", "total", "cost"],
            "additionalProperties": false
        });
        let narrowed = redacted_schema(&schema, &Redaction::new(["hits.title", "total"]));
        assert_eq!(
            narrowed,
            json!({
                "type": "object",
                "properties": {
                    "hits": {"type": "array", "items": {"type": "object", "properties": {
                        "title": {"type": "string"}
                    }, "required": ["title"]}},
                    "total": {"type": "integer"}
                },
                "required": ["hits", "total"],
                "additionalProperties": false
            })
        );
        let nothing = redacted_schema(&schema, &Redaction::new(Vec::<String>::new()));
        assert_eq!(nothing["properties"], json!({}));
        assert_eq!(nothing["required"], json!([]));
    }
}
