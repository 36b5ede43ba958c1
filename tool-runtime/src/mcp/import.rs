//! Importing an MCP server's tools as untrusted dynamic tools.

use std::collections::BTreeMap;
use std::fmt;
use std::sync::{Arc, PoisonError, RwLock, Weak};

use rmcp::model::{
    ClientCapabilities, ClientConfig, Implementation, ProgressNotificationParam, Tool,
    ToolAnnotations,
};
use rmcp::service::{NotificationContext, Peer, RoleClient, RunningService};
use rmcp::transport::{IntoTransport, StreamableHttpClientTransport, TokioChildProcess};
use rmcp::{ClientHandler, ServiceExt};
use serde_json::Value;
use tokio::sync::{Notify, watch};
use tokio_util::sync::CancellationToken;

use super::names::{ServerName, imported_tool_name};
use super::remote::{ProgressRoutes, Remote};
use crate::catalog::ToolSource;
use crate::runtime::{BoundToolRuntime, DynamicTool, DynamicToolError};
use crate::spec::ToolEffect;

/// What the application decides about a server's tools before they are imported.
///
/// ```
/// use tool_runtime::mcp::McpImportOptions;
///
/// let options = McpImportOptions::new()
///     .redact("mcp__github__create_issue", ["number", "url"]);
/// # let _ = options;
/// ```
#[derive(Debug, Clone, Default)]
#[must_use]
pub struct McpImportOptions {
    redact: BTreeMap<String, Vec<String>>,
}

impl McpImportOptions {
    /// No allowlists: no output field of any imported tool passes redaction.
    pub fn new() -> Self {
        Self::default()
    }

    /// The fields of the structured output (`structuredContent`) of the tool with this imported
    /// name that may leave the runner (dotted paths, as in `#[tool(redact = [...])]`). The
    /// server's content blocks are not fields: they become parts (text, image, audio, resource,
    /// resource link) whether or not the tool has an `outputSchema`.
    pub fn redact<I, S>(mut self, tool_name: impl Into<String>, paths: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.redact.insert(tool_name.into(), paths.into_iter().map(Into::into).collect());
        self
    }
}

/// Why a server's tool was not imported.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum RefusalReason {
    /// Its definition is unusable: a schema outside the allowed subset (with the JSON pointer
    /// of the construct), an invalid schema, or a redaction path the output schema lacks.
    Definition(DynamicToolError),
    /// Another tool of the same server got the same imported name.
    DuplicateName {
        /// The MCP name of the tool that kept the imported name.
        kept: String,
    },
}

impl fmt::Display for RefusalReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Definition(error) => write!(f, "{error}"),
            Self::DuplicateName { kept } => write!(f, "its name is already taken by `{kept}`"),
        }
    }
}

/// A tool the server lists but the importer refused, with the reason.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RefusedTool {
    /// The tool's name on the MCP server.
    pub name: String,
    /// The name it would have had in a catalog.
    pub imported_name: String,
    /// Why it was refused.
    pub reason: RefusalReason,
}

impl fmt::Display for RefusedTool {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "`{}` (`{}`): {}", self.name.escape_debug(), self.imported_name, self.reason)
    }
}

/// Why connecting to an MCP server or listing its tools failed.
#[derive(Debug)]
#[non_exhaustive]
pub enum McpImportError {
    /// The server process could not be started.
    Spawn(std::io::Error),
    /// The MCP handshake failed.
    Handshake(String),
    /// `tools/list` failed.
    List(String),
}

impl fmt::Display for McpImportError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Spawn(error) => write!(f, "the MCP server could not be started: {error}"),
            Self::Handshake(error) => write!(f, "the MCP handshake failed: {error}"),
            Self::List(error) => write!(f, "listing the MCP server's tools failed: {error}"),
        }
    }
}

impl std::error::Error for McpImportError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Self::Spawn(error) => Some(error),
            _ => None,
        }
    }
}

/// The effect of an imported tool, read from its (untrusted) annotations, most cautious
/// reading first: `external_side_effect` unless it says `openWorldHint: false` (no
/// annotations at all is the spec's defaults: open world); then `read_only` only if it says
/// `readOnlyHint: true` and does not also say `destructiveHint: true`; else `state_change`.
///
/// ```
/// use tool_runtime::mcp::effect_from_annotations;
/// use tool_runtime::mcp::rmcp::model::ToolAnnotations;
/// use tool_runtime::prelude::*;
///
/// assert_eq!(effect_from_annotations(None), ToolEffect::ExternalSideEffect);
/// let closed = ToolAnnotations::new().open_world(false);
/// assert_eq!(effect_from_annotations(Some(&closed)), ToolEffect::StateChange);
/// let reader = ToolAnnotations::new().open_world(false).read_only(true);
/// assert_eq!(effect_from_annotations(Some(&reader)), ToolEffect::ReadOnly);
/// let web = ToolAnnotations::new().read_only(true);
/// assert_eq!(effect_from_annotations(Some(&web)), ToolEffect::ExternalSideEffect);
/// ```
#[must_use]
pub fn effect_from_annotations(annotations: Option<&ToolAnnotations>) -> ToolEffect {
    let Some(hints) = annotations else { return ToolEffect::ExternalSideEffect };
    if hints.open_world_hint != Some(false) {
        ToolEffect::ExternalSideEffect
    } else if hints.read_only_hint == Some(true) && hints.destructive_hint != Some(true) {
        ToolEffect::ReadOnly
    } else {
        ToolEffect::StateChange
    }
}

/// The importer's side of the MCP connection.
#[derive(Clone)]
struct ImportClient {
    progress: ProgressRoutes,
    list_changed: Arc<Notify>,
}

impl ClientHandler for ImportClient {
    async fn on_progress(
        &self,
        params: ProgressNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        self.progress.route(params);
    }

    async fn on_tool_list_changed(&self, _context: NotificationContext<RoleClient>) {
        self.list_changed.notify_one();
    }

    fn get_info(&self) -> ClientConfig {
        ClientConfig::new(
            ClientCapabilities::default(),
            Implementation::new("tool-runtime", env!("CARGO_PKG_VERSION")),
        )
    }
}

/// The tools of one MCP server, imported as untrusted [`DynamicTool`]s named
/// `mcp__<server>__<tool>` (see [`imported_tool_name`]). Add it to a catalog with
/// [`ToolCatalogBuilder::source`](crate::catalog::ToolCatalogBuilder::source).
///
/// - Nothing is visible by itself: policy shows an `mcp__` tool only when `allowed_tools`
///   names it exactly, so a tool the server adds later stays hidden.
/// - Arguments are validated against the server's `inputSchema` before they are sent;
///   `structuredContent` against its `outputSchema` when it has one; redaction lets no field
///   of it through unless [`McpImportOptions::redact`] allowlists fields. Content blocks
///   become [parts](crate::content::Part) of their kind: an imported image stays an image.
/// - Tools whose definitions cannot be trusted to mean what they say (a schema construct
///   outside the subset, an invalid schema) are [`refused`](Self::refused), with the reason.
/// - On `notifications/tools/list_changed` the list is fetched again: definitions are
///   replaced, new tools are added (still hidden), vanished tools removed; a name's effect
///   never becomes less cautious than it was.
/// - A failed call reports a fixed message, never the server's text.
///
/// ```no_run
/// use std::sync::Arc;
/// use tool_runtime::catalog::ToolCatalog;
/// use tool_runtime::mcp::{McpImportOptions, McpToolSource, ServerName, imported_tool_name};
///
/// # async fn example() -> Result<(), Box<dyn std::error::Error>> {
/// let server = ServerName::new("tracker")?;
/// let create = imported_tool_name(&server, "create_issue");          // "mcp__tracker__create_issue"
/// let options = McpImportOptions::new().redact(create.as_str(), ["number", "url"]);
/// let tracker = McpToolSource::connect_http(server, "http://127.0.0.1:8931/mcp", options).await?;
/// for refused in tracker.refused() {
///     eprintln!("not imported: {refused}");
/// }
/// let catalog = ToolCatalog::builder().source(Arc::new(tracker)).build()?;
/// // Policy must now name `mcp__tracker__create_issue` exactly for the model to see it.
/// # let _ = catalog;
/// # Ok(()) }
/// ```
#[derive(Clone)]
pub struct McpToolSource {
    inner: Arc<SourceInner>,
}

struct SourceInner {
    server: ServerName,
    options: McpImportOptions,
    peer: Peer<RoleClient>,
    progress: ProgressRoutes,
    service: tokio::sync::Mutex<Option<RunningService<RoleClient, ImportClient>>>,
    state: RwLock<State>,
    changes: watch::Sender<u64>,
    stop: CancellationToken,
}

#[derive(Default)]
struct State {
    tools: BTreeMap<String, Arc<DynamicTool>>,
    refused: Vec<RefusedTool>,
    effects: BTreeMap<String, ToolEffect>,
}

impl Drop for SourceInner {
    fn drop(&mut self) {
        self.stop.cancel();
    }
}

impl fmt::Debug for McpToolSource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let state = self.inner.state.read().unwrap_or_else(PoisonError::into_inner);
        f.debug_struct("McpToolSource")
            .field("server", &self.inner.server)
            .field("tools", &state.tools.keys().collect::<Vec<_>>())
            .field("refused", &state.refused.len())
            .finish_non_exhaustive()
    }
}

impl McpToolSource {
    /// Starts `command` as an MCP server speaking over its stdin and stdout, and imports its
    /// tools.
    ///
    /// # Errors
    ///
    /// [`McpImportError`] when the process cannot start, the handshake fails or the tools
    /// cannot be listed.
    pub async fn connect_stdio(
        server: ServerName,
        command: tokio::process::Command,
        options: McpImportOptions,
    ) -> Result<Self, McpImportError> {
        let transport = TokioChildProcess::new(command).map_err(McpImportError::Spawn)?;
        Self::connect(server, transport, options).await
    }

    /// Connects to an MCP server over Streamable HTTP at `url` and imports its tools.
    ///
    /// # Errors
    ///
    /// [`McpImportError`] when the handshake fails or the tools cannot be listed.
    pub async fn connect_http(
        server: ServerName,
        url: &str,
        options: McpImportOptions,
    ) -> Result<Self, McpImportError> {
        Self::connect(server, StreamableHttpClientTransport::from_uri(url), options).await
    }

    /// Connects over any rmcp client transport and imports the server's tools.
    ///
    /// # Errors
    ///
    /// [`McpImportError`] when the handshake fails or the tools cannot be listed.
    pub async fn connect<T, E, A>(
        server: ServerName,
        transport: T,
        options: McpImportOptions,
    ) -> Result<Self, McpImportError>
    where
        T: IntoTransport<RoleClient, E, A>,
        E: std::error::Error + Send + Sync + 'static,
    {
        let client = ImportClient {
            progress: ProgressRoutes::default(),
            list_changed: Arc::new(Notify::new()),
        };
        let list_changed = Arc::clone(&client.list_changed);
        let progress = client.progress.clone();
        let service = client
            .serve(transport)
            .await
            .map_err(|error| McpImportError::Handshake(error.to_string()))?;
        let inner = Arc::new(SourceInner {
            server,
            options,
            peer: service.peer().clone(),
            progress,
            service: tokio::sync::Mutex::new(Some(service)),
            state: RwLock::new(State::default()),
            changes: watch::Sender::new(0),
            stop: CancellationToken::new(),
        });
        inner.refresh().await?;
        let weak = Arc::downgrade(&inner);
        let stop = inner.stop.clone();
        tokio::spawn(watch_list(weak, list_changed, stop));
        Ok(Self { inner })
    }

    /// The name the application gave the server.
    #[must_use]
    pub fn server(&self) -> &ServerName {
        &self.inner.server
    }

    /// The tools the server lists that were refused, with the reasons, in the server's order.
    #[must_use]
    pub fn refused(&self) -> Vec<RefusedTool> {
        self.inner.state.read().unwrap_or_else(PoisonError::into_inner).refused.clone()
    }

    /// Fetches the server's tool list again (as `list_changed` does).
    ///
    /// # Errors
    ///
    /// [`McpImportError::List`] when `tools/list` fails; the previous tools stay.
    pub async fn refresh(&self) -> Result<(), McpImportError> {
        self.inner.refresh().await
    }

    /// Counts refreshes: the value changes after each one, so a caller can wait for the
    /// refresh a `list_changed` notification started.
    #[must_use]
    pub fn changes(&self) -> watch::Receiver<u64> {
        self.inner.changes.subscribe()
    }

    /// Closes the connection (and ends a stdio server's process). The tools stay listed; calls
    /// fail from now on.
    pub async fn close(&self) {
        if let Some(service) = self.inner.service.lock().await.take() {
            let _ = service.cancel().await;
        }
    }
}

async fn watch_list(source: Weak<SourceInner>, list_changed: Arc<Notify>, stop: CancellationToken) {
    loop {
        tokio::select! {
            () = stop.cancelled() => return,
            () = list_changed.notified() => {}
        }
        let Some(source) = source.upgrade() else { return };
        if let Err(error) = source.refresh().await {
            tracing::warn!(server = %source.server, %error, "refreshing MCP tools failed");
        }
    }
}

impl SourceInner {
    async fn refresh(&self) -> Result<(), McpImportError> {
        let listed = self
            .peer
            .list_all_tools()
            .await
            .map_err(|error| McpImportError::List(error.to_string()))?;
        let news = {
            let mut state = self.state.write().unwrap_or_else(PoisonError::into_inner);
            let mut tools = BTreeMap::new();
            let mut refused = Vec::new();
            let mut owners: BTreeMap<String, String> = BTreeMap::new();
            for tool in listed {
                let imported = imported_tool_name(&self.server, &tool.name);
                if let Some(kept) = owners.get(&imported) {
                    let reason = RefusalReason::DuplicateName { kept: kept.clone() };
                    refused.push(RefusedTool {
                        name: tool.name.to_string(),
                        imported_name: imported,
                        reason,
                    });
                    continue;
                }
                owners.insert(imported.clone(), tool.name.to_string());
                let effect = effect_from_annotations(tool.annotations.as_ref())
                    .max(state.effects.get(&imported).copied().unwrap_or(ToolEffect::ReadOnly));
                state.effects.insert(imported.clone(), effect);
                match self.bind(&imported, &tool, effect) {
                    Ok(bound) => {
                        tools.insert(imported, Arc::new(bound));
                    }
                    Err(error) => refused.push(RefusedTool {
                        name: tool.name.to_string(),
                        imported_name: imported,
                        reason: RefusalReason::Definition(error),
                    }),
                }
            }
            // Logged once: a refresh that refuses the same tool for the same reason is quiet.
            let news: Vec<String> = refused
                .iter()
                .filter(|tool| !state.refused.contains(tool))
                .map(ToString::to_string)
                .collect();
            state.tools = tools;
            state.refused = refused;
            news
        };
        for tool in &news {
            tracing::warn!(server = %self.server, refused = %tool, "MCP tool not imported");
        }
        self.changes.send_modify(|count| *count += 1);
        Ok(())
    }

    fn bind(
        &self,
        name: &str,
        tool: &Tool,
        effect: ToolEffect,
    ) -> Result<DynamicTool, DynamicToolError> {
        let redact = self.options.redact.get(name).cloned().unwrap_or_default();
        let description = tool.description.as_deref().unwrap_or_default();
        let mut builder =
            DynamicTool::builder(name, description, Value::Object((*tool.input_schema).clone()))
                .effect(effect)
                .redact(redact)
                .imported();
        if let Some(output) = &tool.output_schema {
            builder = builder.output_schema(Value::Object((**output).clone()));
        }
        let remote = Remote {
            peer: self.peer.clone(),
            progress: self.progress.clone(),
            name: tool.name.to_string(),
            structured: tool.output_schema.is_some(),
        };
        builder.build(move |args, ctx, caps| {
            let remote = remote.clone();
            async move { remote.call(args, &ctx, &caps).await }
        })
    }
}

impl ToolSource for McpToolSource {
    fn tools(&self) -> Vec<Arc<dyn BoundToolRuntime>> {
        let state = self.inner.state.read().unwrap_or_else(PoisonError::into_inner);
        state.tools.values().map(|tool| Arc::clone(tool) as Arc<dyn BoundToolRuntime>).collect()
    }

    fn get(&self, name: &str) -> Option<Arc<dyn BoundToolRuntime>> {
        let state = self.inner.state.read().unwrap_or_else(PoisonError::into_inner);
        state.tools.get(name).map(|tool| Arc::clone(tool) as Arc<dyn BoundToolRuntime>)
    }
}
