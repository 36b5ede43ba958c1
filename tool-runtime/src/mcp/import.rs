//! Importing an MCP server's tools as untrusted dynamic tools.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::sync::{Arc, PoisonError, RwLock, Weak};
use std::time::Duration;

use rmcp::ClientHandler;
use rmcp::model::{
    ClientCapabilities, ClientConfig, ElicitRequestParams, ElicitResult, ElicitationAction,
    Implementation, PaginatedRequestParams, ProgressNotificationParam, ProtocolVersion, Tool,
    ToolAnnotations,
};
use rmcp::service::{
    ClientLifecycleMode, ClientServiceExt, NotificationContext, Peer, RequestContext, RoleClient,
    RunningService,
};
use rmcp::transport::{IntoTransport, StreamableHttpClientTransport, TokioChildProcess};
use serde_json::Value;
use tokio::sync::{Notify, watch};
use tokio_util::sync::CancellationToken;

use super::names::{ServerName, imported_tool_name};
use super::remote::{ProgressRoutes, Remote};
use super::text::{Capped, ERROR_CHARS, capped};
use crate::catalog::ToolSource;
use crate::runner::DEFAULT_SPAN_TEXT_LIMIT;
use crate::runtime::{BoundToolRuntime, DynamicTool, DynamicToolError};
use crate::schema::Untrusted;
use crate::spec::ToolEffect;

/// What the application decides about a server's tools before they are imported, and the
/// limits a server's listing must stay within.
///
/// Limits (a server past one gets a typed [`McpImportError`], and `connect` or `refresh`
/// returns instead of hanging or growing without bound):
///
/// | limit | default | set with |
/// | --- | --- | --- |
/// | pages of one `tools/list` | 100 | [`max_list_pages`](Self::max_list_pages) |
/// | tools in one listing | 10 000 | [`max_tools`](Self::max_tools) |
/// | tool names remembered over the source's life (pins of vanished tools included) | twice `max_tools` | [`max_tools`](Self::max_tools) |
/// | time for the handshake, and for one listing with all its pages | 60 s | [`timeout`](Self::timeout) |
/// | bytes of a tool's description kept (the rest is cut) | 2 KiB | [`max_description_bytes`](Self::max_description_bytes) |
///
/// ```
/// use std::time::Duration;
/// use tool_runtime::mcp::McpImportOptions;
///
/// let options = McpImportOptions::new()
///     .redact("mcp__github__create_issue", ["number", "url"])
///     .allow_open_schema("mcp__github__search")
///     .max_list_pages(10)
///     .max_tools(500)
///     .max_description_bytes(4096)
///     .timeout(Duration::from_secs(10));
/// # let _ = options;
/// ```
#[derive(Debug, Clone)]
#[must_use]
pub struct McpImportOptions {
    redact: BTreeMap<String, Vec<String>>,
    open_schemas: BTreeSet<String>,
    max_pages: usize,
    max_tools: usize,
    max_description_bytes: usize,
    timeout: Duration,
    initialize_only: bool,
}

/// Bytes of an imported tool's description kept by default.
const DESCRIPTION_BYTES: usize = 2048;

impl Default for McpImportOptions {
    fn default() -> Self {
        Self {
            redact: BTreeMap::new(),
            open_schemas: BTreeSet::new(),
            max_pages: 100,
            max_tools: 10_000,
            max_description_bytes: DESCRIPTION_BYTES,
            timeout: Duration::from_secs(60),
            initialize_only: false,
        }
    }
}

impl McpImportOptions {
    /// No allowlists, no open schemas, the default limits: no output field of any imported
    /// tool passes redaction.
    pub fn new() -> Self {
        Self::default()
    }

    /// Connects with the `initialize` handshake (MCP 2025-11-25) without asking
    /// `server/discover` first, for a server that speaks no 2026-07-28 and answers
    /// `server/discover` with something other than an error. By default the importer discovers
    /// first and falls back to `initialize` when the server says it does not know the method.
    pub fn initialize_only(mut self) -> Self {
        self.initialize_only = true;
        self
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

    /// Imports the tool with this imported name even though its input schema is open: it has
    /// no `properties`, or does not say `"additionalProperties": false`, so arguments the
    /// schema does not describe would reach the server unchecked. Without this such a tool is
    /// [refused](RefusalReason::OpenSchema).
    pub fn allow_open_schema(mut self, tool_name: impl Into<String>) -> Self {
        self.open_schemas.insert(tool_name.into());
        self
    }

    /// The most pages one `tools/list` may take (at least 1).
    pub fn max_list_pages(mut self, pages: usize) -> Self {
        self.max_pages = pages.max(1);
        self
    }

    /// The most tools one listing may hold, over all its pages (default 10 000). The source
    /// also remembers at most twice as many tool names over its life: a name's pin and effect
    /// stay after its tool vanishes, so that it cannot come back changed or less cautious, and
    /// a refresh that would remember more fails with [`McpImportError::TooManyNames`].
    pub fn max_tools(mut self, tools: usize) -> Self {
        self.max_tools = tools;
        self
    }

    /// The most bytes of a tool's description kept (default 2 KiB); a longer one is cut at a
    /// character boundary and ends with `...`. A description is the server's text: it goes
    /// into every request that offers the tool, and into
    /// [selection](crate::catalog::select), where a description stuffed with every word would
    /// otherwise compete for every request. The pin that detects a changed tool covers the
    /// whole description, cut or not.
    ///
    /// ```
    /// use tool_runtime::mcp::McpImportOptions;
    ///
    /// let options = McpImportOptions::new().max_description_bytes(8 * 1024);
    /// # let _ = options;
    /// ```
    pub fn max_description_bytes(mut self, bytes: usize) -> Self {
        self.max_description_bytes = bytes;
        self
    }

    /// How long the handshake, and one listing with all its pages, may each take.
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
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
    /// The server listed the same name twice; the first definition was kept.
    DuplicateName {
        /// The MCP name of the tool that kept the imported name.
        kept: String,
    },
    /// Two different MCP names map to the same imported name (one tool's plain name is the
    /// other's shortened name, see [`imported_tool_name`]): neither is imported, since which
    /// of them a call would reach would depend on the server's order.
    NameCollision {
        /// The MCP name of the other tool.
        other: String,
    },
    /// Its input schema is open (no `properties`, or no `"additionalProperties": false`) and
    /// the application did not [allow that](McpImportOptions::allow_open_schema).
    OpenSchema,
    /// Its description or schemas changed on the server after it was imported (the tool is
    /// pinned to the definition first imported) and the application has not
    /// [accepted the change](McpToolSource::accept_changed).
    Changed,
}

impl fmt::Display for RefusalReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Definition(error) => {
                write!(f, "{}", Capped(&error.to_string(), REASON_CHARS))
            }
            Self::DuplicateName { kept } => {
                write!(f, "its name is already taken by `{}`", Capped(kept, NAME_CHARS))
            }
            Self::NameCollision { other } => write!(
                f,
                "its imported name is also the imported name of `{}`; neither is imported",
                Capped(other, NAME_CHARS)
            ),
            Self::OpenSchema => f.write_str(
                "its input schema is open (no `properties`, or not `\"additionalProperties\": false`); allow it with `McpImportOptions::allow_open_schema`",
            ),
            Self::Changed => f.write_str(
                "its description or schema changed since it was imported; accept the change with `McpToolSource::accept_changed`",
            ),
        }
    }
}

/// The most characters of a server-supplied name shown in a message.
const NAME_CHARS: usize = 64;
/// The most characters of a refusal reason (it quotes schema keys) shown in a message.
const REASON_CHARS: usize = 256;

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
        write!(
            f,
            "`{}` (`{}`): {}",
            Capped(&self.name, NAME_CHARS),
            self.imported_name,
            self.reason
        )
    }
}

/// Why connecting to an MCP server or listing its tools failed. The server's own text in it is
/// escaped and cut to 256 characters.
#[derive(Debug)]
#[non_exhaustive]
pub enum McpImportError {
    /// The server process could not be started.
    Spawn(std::io::Error),
    /// The MCP handshake failed.
    Handshake(String),
    /// `tools/list` failed.
    List(String),
    /// The listing took more pages than [`McpImportOptions::max_list_pages`] allows.
    TooManyPages {
        /// The limit.
        limit: usize,
    },
    /// The listing held more tools than [`McpImportOptions::max_tools`] allows.
    TooManyTools {
        /// The limit.
        limit: usize,
    },
    /// A refresh would have the source remember more tool names than twice
    /// [`McpImportOptions::max_tools`]: a server that keeps listing new names. The tools
    /// imported before stay.
    TooManyNames {
        /// The limit.
        limit: usize,
    },
    /// The handshake or a listing took longer than [`McpImportOptions::timeout`].
    Timeout {
        /// The limit.
        after: Duration,
    },
}

impl McpImportError {
    fn handshake(error: impl fmt::Display) -> Self {
        Self::Handshake(capped(&error.to_string(), ERROR_CHARS))
    }

    fn list(error: impl fmt::Display) -> Self {
        Self::List(capped(&error.to_string(), ERROR_CHARS))
    }
}

impl fmt::Display for McpImportError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Spawn(error) => write!(f, "the MCP server could not be started: {error}"),
            Self::Handshake(error) => write!(f, "the MCP handshake failed: {error}"),
            Self::List(error) => write!(f, "listing the MCP server's tools failed: {error}"),
            Self::TooManyPages { limit } => {
                write!(f, "the MCP server's tool list takes more than {limit} pages")
            }
            Self::TooManyTools { limit } => {
                write!(f, "the MCP server lists more than {limit} tools")
            }
            Self::TooManyNames { limit } => write!(
                f,
                "the MCP server has listed more than {limit} different tool names since it was \
                 imported"
            ),
            Self::Timeout { after } => {
                write!(f, "the MCP server did not answer within {} ms", after.as_millis())
            }
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

    /// A server of an older protocol version asks within a call, and nothing here knows which
    /// call (or whose user) it is about: the question is cancelled, never answered for anyone.
    /// Servers of 2026-07-28 ask in input-required rounds, which reach the call's user.
    async fn create_elicitation(
        &self,
        _request: ElicitRequestParams,
        _context: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, rmcp::ErrorData> {
        Ok(ElicitResult::new(ElicitationAction::Cancel))
    }

    /// A server of an older protocol version asks for a completion within a call: as for a
    /// question, nothing here knows which call it is for, so it is refused. Servers of
    /// 2026-07-28 ask in input-required rounds, which reach what answers the call's requests.
    #[allow(deprecated)] // sampling: see `wire`
    async fn create_message(
        &self,
        _params: rmcp::model::CreateMessageRequestParams,
        _context: RequestContext<RoleClient>,
    ) -> Result<rmcp::model::CreateMessageResult, rmcp::ErrorData> {
        Err(rmcp::ErrorData::invalid_request(
            "this client gives completions only in input-required rounds (MCP 2026-07-28), where it knows the call they are for",
            None,
        ))
    }

    fn get_info(&self) -> ClientConfig {
        // Elicitation, sampling, roots: what a server asks in input-required rounds reaches
        // what answers the call's requests (its user, its model, its roots).
        // Tasks: a server may answer a call with a task, which the call follows to its end.
        let mut capabilities = ClientCapabilities::default();
        let extensions = capabilities.extensions.get_or_insert_with(Default::default);
        extensions.insert(rmcp::model::TASKS_EXTENSION_ID.to_owned(), Default::default());
        capabilities.elicitation = Some(Default::default());
        capabilities.sampling = Some(Default::default());
        capabilities.roots = Some(Default::default());
        ClientConfig::new(
            capabilities,
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
/// - Tools with an open input schema (no `properties`, or no `"additionalProperties": false`)
///   are refused unless the application [allows it](McpImportOptions::allow_open_schema).
/// - Two MCP names that map to one imported name are both refused, naming each other.
/// - On `notifications/tools/list_changed` the list is fetched again: new tools are added
///   (still hidden), vanished tools removed; a name's effect never becomes less cautious than
///   it was. Every imported tool is pinned to the description and schemas it was first imported
///   with (the source does not know which tools the policy allows, so it pins them all): a tool
///   whose definition changed is [refused](RefusalReason::Changed), and out of the catalog,
///   until the application [accepts the change](Self::accept_changed); unchanged tools keep
///   running.
/// - The listing is bounded in pages, tools and time ([`McpImportOptions`]); a server's
///   progress messages are cut to 256 characters and at most 100 are forwarded per call; its
///   error text reaches errors and logs escaped and cut.
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
    /// What calls read; written only to swap in a refresh's result.
    state: RwLock<State>,
    /// One refresh at a time: each builds on what the previous one installed.
    refreshing: tokio::sync::Mutex<()>,
    changes: watch::Sender<u64>,
    stop: CancellationToken,
}

#[derive(Default, Clone)]
struct State {
    tools: BTreeMap<String, Arc<DynamicTool>>,
    refused: Vec<RefusedTool>,
    effects: BTreeMap<String, ToolEffect>,
    /// The definition hash each imported tool is pinned to.
    pins: BTreeMap<String, String>,
    /// The hash of a changed definition waiting for [`McpToolSource::accept_changed`].
    changed: BTreeMap<String, String>,
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
        let timeout = options.timeout;
        // `server/discover` first (2026-07-28), the `initialize` handshake for older servers.
        let lifecycle = if options.initialize_only {
            ClientLifecycleMode::Initialize
        } else {
            ClientLifecycleMode::Auto {
                preferred_versions: vec![ProtocolVersion::V_2026_07_28],
                legacy_version: Some(ProtocolVersion::V_2025_11_25),
            }
        };
        let service =
            tokio::time::timeout(timeout, client.serve_with_lifecycle(transport, lifecycle))
                .await
                .map_err(|_| McpImportError::Timeout { after: timeout })?
                .map_err(McpImportError::handshake)?;
        let inner = Arc::new(SourceInner {
            server,
            options,
            peer: service.peer().clone(),
            progress,
            service: tokio::sync::Mutex::new(Some(service)),
            state: RwLock::new(State::default()),
            refreshing: tokio::sync::Mutex::new(()),
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
    /// [`McpImportError`] when `tools/list` fails or the listing is past a limit of
    /// [`McpImportOptions`]; the previous tools stay.
    pub async fn refresh(&self) -> Result<(), McpImportError> {
        self.inner.refresh().await
    }

    /// Accepts the changed definition of the tool with this imported name (see
    /// [`RefusalReason::Changed`]): the tool is pinned to the definition the server listed
    /// last and imported again by a refresh. Returns `false`, and does nothing, when no change
    /// of that tool is waiting. A definition that changed again since is refused again.
    ///
    /// # Errors
    ///
    /// [`McpImportError`] when the refresh fails; the acceptance stays.
    pub async fn accept_changed(&self, imported_name: &str) -> Result<bool, McpImportError> {
        let _one = self.inner.refreshing.lock().await;
        {
            let mut state = self.inner.state.write().unwrap_or_else(PoisonError::into_inner);
            let Some(hash) = state.changed.remove(imported_name) else { return Ok(false) };
            state.pins.insert(imported_name.to_owned(), hash);
        }
        self.inner.refresh_locked().await?;
        Ok(true)
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
            let error = error.to_string();
            let error = Untrusted { text: &error, max: DEFAULT_SPAN_TEXT_LIMIT };
            tracing::warn!(server = %source.server, %error, "refreshing MCP tools failed");
        }
    }
}

impl SourceInner {
    async fn refresh(&self) -> Result<(), McpImportError> {
        let _one = self.refreshing.lock().await;
        self.refresh_locked().await
    }

    /// A refresh, for a caller that holds `refreshing`.
    async fn refresh_locked(&self) -> Result<(), McpImportError> {
        let listed = self.list().await?;
        let before = self.state.read().unwrap_or_else(PoisonError::into_inner).clone();
        // Validators are compiled here, with no lock held: calls keep reading the old tools.
        let after = self.prepare(listed, &before);
        // What is remembered of vanished tools must not grow without bound either (effects
        // and changes are kept only for pinned names).
        let limit = self.options.max_tools.saturating_mul(2);
        if after.pins.len() > limit {
            return Err(McpImportError::TooManyNames { limit });
        }
        let news: Vec<String> = after
            .refused
            .iter()
            .filter(|tool| !before.refused.contains(tool))
            .map(ToString::to_string)
            .collect();
        *self.state.write().unwrap_or_else(PoisonError::into_inner) = after;
        // Logged once: a refresh that refuses the same tool for the same reason is quiet.
        for tool in &news {
            let refused = Untrusted { text: tool, max: DEFAULT_SPAN_TEXT_LIMIT };
            tracing::warn!(server = %self.server, %refused, "MCP tool not imported");
        }
        self.changes.send_modify(|count| *count += 1);
        Ok(())
    }

    /// `tools/list`, every page, within the limits of the options.
    async fn list(&self) -> Result<Vec<Tool>, McpImportError> {
        let McpImportOptions { max_pages, max_tools, timeout, .. } = self.options;
        let pages = async {
            let mut tools = Vec::new();
            let mut cursor = None;
            for _ in 0..max_pages {
                let params = PaginatedRequestParams::default().with_cursor(cursor);
                let page =
                    self.peer.list_tools(Some(params)).await.map_err(McpImportError::list)?;
                if tools.len() + page.tools.len() > max_tools {
                    return Err(McpImportError::TooManyTools { limit: max_tools });
                }
                tools.extend(page.tools);
                cursor = page.next_cursor;
                if cursor.is_none() {
                    return Ok(tools);
                }
            }
            Err(McpImportError::TooManyPages { limit: max_pages })
        };
        tokio::time::timeout(timeout, pages)
            .await
            .map_err(|_| McpImportError::Timeout { after: timeout })?
    }

    /// The state a listing leads to from `before`; takes no lock.
    fn prepare(&self, listed: Vec<Tool>, before: &State) -> State {
        let mut after = State {
            effects: before.effects.clone(),
            pins: before.pins.clone(),
            ..State::default()
        };
        let named: Vec<(String, Tool)> = listed
            .into_iter()
            .map(|tool| (imported_tool_name(&self.server, &tool.name), tool))
            .collect();
        let mut owners: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
        for (imported, tool) in &named {
            let names = owners.entry(imported).or_default();
            if !names.contains(&tool.name.as_ref()) {
                names.push(&tool.name);
            }
        }
        let mut kept: BTreeSet<&str> = BTreeSet::new();
        for (imported, tool) in &named {
            let refuse = |reason| RefusedTool {
                name: tool.name.to_string(),
                imported_name: imported.clone(),
                reason,
            };
            let names = &owners[imported.as_str()];
            if let Some(other) = names.iter().find(|name| **name != tool.name.as_ref()) {
                after
                    .refused
                    .push(refuse(RefusalReason::NameCollision { other: (*other).to_owned() }));
                continue;
            }
            if !kept.insert(imported) {
                let reason = RefusalReason::DuplicateName { kept: tool.name.to_string() };
                after.refused.push(refuse(reason));
                continue;
            }
            let hash = definition_hash(tool);
            match after.pins.get(imported) {
                Some(pinned) if *pinned != hash => {
                    after.changed.insert(imported.clone(), hash);
                    after.refused.push(refuse(RefusalReason::Changed));
                    continue;
                }
                _ => {}
            }
            let effect = effect_from_annotations(tool.annotations.as_ref())
                .max(after.effects.get(imported).copied().unwrap_or(ToolEffect::ReadOnly));
            // The definition's own faults first: they say more than "open".
            let bound = self.bind(imported, tool, effect).map(|bound| {
                let open = crate::schema::is_open(&tool.input_schema)
                    && !self.options.open_schemas.contains(imported);
                (!open).then_some(bound)
            });
            match bound {
                Ok(None) => after.refused.push(refuse(RefusalReason::OpenSchema)),
                Ok(Some(bound)) => {
                    after.effects.insert(imported.clone(), effect);
                    after.pins.insert(imported.clone(), hash);
                    after.tools.insert(imported.clone(), Arc::new(bound));
                }
                Err(error) => after.refused.push(refuse(RefusalReason::Definition(error))),
            }
        }
        after
    }

    fn bind(
        &self,
        name: &str,
        tool: &Tool,
        effect: ToolEffect,
    ) -> Result<DynamicTool, DynamicToolError> {
        let redact = self.options.redact.get(name).cloned().unwrap_or_default();
        let description =
            cut_description(tool.description.as_deref().unwrap_or_default(), &self.options);
        let mut input = (*tool.input_schema).clone();
        super::headers::strip(&mut input);
        let mut builder = DynamicTool::builder(name, description, Value::Object(input))
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

/// `description` cut to [`McpImportOptions::max_description_bytes`] (`...` included), at a
/// character boundary.
fn cut_description(description: &str, options: &McpImportOptions) -> String {
    const MARK: &str = "...";
    let max = options.max_description_bytes;
    if description.len() <= max {
        return description.to_owned();
    }
    let end = description.floor_char_boundary(max.saturating_sub(MARK.len()));
    let mut cut = description[..end].to_owned();
    if max >= MARK.len() {
        cut.push_str(MARK);
    }
    cut
}

/// What an imported tool is pinned to: SHA-256 over the canonical JSON (keys sorted) of its
/// name, description and schemas (annotations are not pinned: the effect they give only grows more
/// cautious).
fn definition_hash(tool: &Tool) -> String {
    let definition = serde_json::json!({
        "name": tool.name,
        "description": tool.description,
        "input_schema": *tool.input_schema,
        "output_schema": tool.output_schema.as_deref(),
    });
    // A server that lists the same schema with its keys in another order has not changed it.
    crate::digest::json_hash(&definition)
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

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use rmcp::model::{ServerCapabilities, ServerConfig, Tool};
    use rmcp::{ServerHandler, ServiceExt};
    use serde_json::json;

    use super::{McpImportOptions, McpToolSource, PoisonError, State, definition_hash};
    use crate::mcp::ServerName;

    #[test]
    fn the_pin_does_not_depend_on_the_order_of_keys() {
        let schema = |value: serde_json::Value| Arc::new(value.as_object().unwrap().clone());
        let one = Tool::new(
            "t",
            "d",
            schema(
                json!({"type": "object", "properties": {"a": {"type": "string"}}, "additionalProperties": false}),
            ),
        );
        let other = Tool::new(
            "t",
            "d",
            schema(
                json!({"additionalProperties": false, "properties": {"a": {"type": "string"}}, "type": "object"}),
            ),
        );
        let changed = Tool::new(
            "t",
            "d",
            schema(
                json!({"type": "object", "properties": {"a": {"type": "integer"}}, "additionalProperties": false}),
            ),
        );
        assert_eq!(definition_hash(&one), definition_hash(&other));
        assert_ne!(definition_hash(&one), definition_hash(&changed));
    }

    #[derive(Clone)]
    struct NoTools;

    impl ServerHandler for NoTools {
        fn get_info(&self) -> ServerConfig {
            ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
        }
    }

    #[tokio::test]
    async fn a_refresh_compiles_validators_with_no_lock_held() {
        let (ours, theirs) = tokio::io::duplex(4096);
        let serving = tokio::spawn(NoTools.serve(theirs));
        let server = ServerName::new("up").unwrap();
        let source = McpToolSource::connect(server, ours, McpImportOptions::new()).await.unwrap();
        let _server = serving.await.unwrap().unwrap();
        let schema = json!({
            "type": "object",
            "properties": {"q": {"type": "string", "pattern": "^[a-z]+$"}},
            "additionalProperties": false
        });
        let serde_json::Value::Object(schema) = schema else { unreachable!() };
        let listed = vec![Tool::new("search", "Search.", Arc::new(schema))];
        // Held by this thread: were preparing to take the lock, it would deadlock or panic.
        let held = source.inner.state.write().unwrap_or_else(PoisonError::into_inner);
        let after = source.inner.prepare(listed, &State::default());
        drop(held);
        assert!(after.tools.contains_key("mcp__up__search"));
        assert!(after.refused.is_empty());
    }
}
