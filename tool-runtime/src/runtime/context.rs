use std::fmt;
use std::sync::{Arc, PoisonError, RwLock};

use tokio_util::sync::CancellationToken;

use super::Interactor;
use super::interact::Asker;

/// Who and what a tool call is for: references only.
///
/// There is deliberately no field for a token, key or header: a tool that needs credentials
/// gets them through a capability bound to [`connection_id`](Self::connection_id), never from
/// its arguments or its context. `Debug` shows only these ids.
///
/// ```
/// use tool_runtime::prelude::*;
///
/// let ctx = ToolInvocationContext::new(ContextIds { run_id: "run-7", actor_id: "user-42", tenant_id: "acme" })
///     .with_tool_call_id("call_1")
///     .with_connection_id("conn-github");
/// assert_eq!(ctx.tenant_id(), "acme");
/// assert_eq!(ctx.connection_id(), Some("conn-github"));
/// assert_eq!(ctx.subject_id(), None);
/// ```
///
/// Cloning is cheap (reference counts only): the runner gives every call its own copy.
///
/// The three ids every context needs are given by name, in a [`ContextIds`], so they cannot be
/// swapped by position.
#[derive(Clone)]
pub struct ToolInvocationContext {
    run_id: Arc<str>,
    tool_call_id: Option<Arc<str>>,
    actor_id: Arc<str>,
    tenant_id: Arc<str>,
    subject_id: Option<Arc<str>>,
    graph_id: Option<Arc<str>>,
    connection_id: Option<Arc<str>>,
    requested_connection_ids: Arc<[String]>,
    tool_set: Option<Arc<[String]>>,
    cancellation: CancellationToken,
    progress: Option<ProgressReporter>,
    logger: Option<LogReporter>,
    /// Set for a call a tool made through [`ToolCalls`](crate::runner::ToolCalls): the calls
    /// above it.
    lineage: Option<Arc<Lineage>>,
    /// Who answers the call's questions, when whoever runs the call says so (an MCP session,
    /// the agent loop, the application). Read by the runner only.
    #[cfg_attr(not(feature = "runner"), allow(dead_code))]
    asker: Option<Asker>,
}

/// The calls above a nested call, outermost first: each one's tool name and call id.
#[derive(Debug)]
pub(crate) struct Lineage {
    pub(crate) ancestors: Vec<(Arc<str>, Arc<str>)>,
}

/// The three ids every [`ToolInvocationContext`] needs, by name: all are required, and none can
/// be passed in another's place without the field name saying so.
///
/// ```
/// use tool_runtime::prelude::*;
///
/// let user = String::from("user-42");
/// let ctx = ToolInvocationContext::new(ContextIds { run_id: "run-7", actor_id: &user, tenant_id: "acme" });
/// assert_eq!((ctx.run_id(), ctx.actor_id(), ctx.tenant_id()), ("run-7", "user-42", "acme"));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ContextIds<'a> {
    /// The run (one agent run, one request) the calls belong to.
    pub run_id: &'a str,
    /// Who asks for the calls: the user or service acting.
    pub actor_id: &'a str,
    /// The tenant the calls run in.
    pub tenant_id: &'a str,
}

/// One progress report of a running tool: `progress` out of `total` (when known), with an
/// optional message. Messages go to the UI and telemetry: keep them free of secrets.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Progress {
    /// Work done so far, in any unit.
    pub progress: f64,
    /// Work in all, when known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub total: Option<f64>,
    /// What is happening.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
}

/// Where a tool's progress reports go (the runner wires it to its events).
///
/// The runner disarms the reporter it made for a call when the call ends, before its result
/// event: a tool that kept a clone of its context and reports (or logs) later reaches nobody,
/// so nothing of a call follows its result.
#[derive(Clone)]
pub struct ProgressReporter(Arc<Reporter<dyn Fn(Progress) + Send + Sync>>);

/// A report function and whether its call is still running. One allocation holds both.
struct Reporter<F: ?Sized> {
    /// Read-locked while a report (or log message) goes out, so disarming waits for one in
    /// flight on another thread and nothing slips out after it.
    live: RwLock<bool>,
    report: F,
}

impl ProgressReporter {
    /// Calls `report` for each progress report.
    pub fn new(report: impl Fn(Progress) + Send + Sync + 'static) -> Self {
        let reporter: Arc<Reporter<dyn Fn(Progress) + Send + Sync>> =
            Arc::new(Reporter { live: RwLock::new(true), report });
        Self(reporter)
    }

    /// Reports progress; an empty message is no message. Nothing once disarmed.
    pub(crate) fn report(&self, progress: f64, total: Option<f64>, message: String) {
        self.0.while_live(|| {
            let message = (!message.is_empty()).then_some(message);
            (self.0.report)(Progress { progress, total, message });
        });
    }

    /// The call ended: every later report (and log message through a context holding this
    /// reporter) is dropped. Waits for a report in flight.
    #[cfg(feature = "runner")]
    pub(crate) fn disarm(&self) {
        self.0.disarm();
    }
}

impl<F: ?Sized> Reporter<F> {
    /// Runs `f` while the reporter is held live, if it still is.
    fn while_live(&self, f: impl FnOnce()) {
        let live = self.live.read().unwrap_or_else(PoisonError::into_inner);
        if *live {
            f();
        }
    }

    /// Nothing goes out any more; waits for what is in flight.
    #[cfg(feature = "runner")]
    fn disarm(&self) {
        *self.live.write().unwrap_or_else(PoisonError::into_inner) = false;
    }
}

/// How much a [log message](ToolInvocationContext::log) matters, least first (the syslog levels
/// MCP uses).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum LogLevel {
    /// Detail for debugging.
    Debug,
    /// Normal operation.
    Info,
    /// Normal but significant.
    Notice,
    /// Something may be wrong.
    Warning,
    /// Something failed.
    Error,
    /// A component failed.
    Critical,
    /// Someone must act now.
    Alert,
    /// The system is unusable.
    Emergency,
}

/// One log message of a running tool. Messages go to the client or UI: keep them free of
/// secrets.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct LogMessage {
    /// How much it matters.
    pub level: LogLevel,
    /// What happened.
    pub message: String,
}

/// Where a tool's log messages go (an MCP server sends them to its client as
/// `notifications/message`).
///
/// The runner gives each call a logger of its own in front of this one, which replaces the
/// call's credential with `[redacted]` and is disarmed when the call ends, before its result
/// event, as its progress reporter is.
#[derive(Clone)]
pub struct LogReporter(Arc<Reporter<dyn Fn(LogMessage) + Send + Sync>>);

impl LogReporter {
    /// Calls `log` for each message.
    pub fn new(log: impl Fn(LogMessage) + Send + Sync + 'static) -> Self {
        let reporter: Arc<Reporter<dyn Fn(LogMessage) + Send + Sync>> =
            Arc::new(Reporter { live: RwLock::new(true), report: log });
        Self(reporter)
    }

    /// Sends `message` on. Nothing once disarmed.
    pub(crate) fn send(&self, message: LogMessage) {
        self.0.while_live(|| (self.0.report)(message));
    }

    /// The call ended: every later message is dropped. Waits for a message in flight.
    #[cfg(feature = "runner")]
    pub(crate) fn disarm(&self) {
        self.0.disarm();
    }
}

impl fmt::Debug for LogReporter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("LogReporter")
    }
}

impl fmt::Debug for ProgressReporter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("ProgressReporter")
    }
}

impl fmt::Debug for ToolInvocationContext {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ToolInvocationContext")
            .field("run_id", &self.run_id)
            .field("tool_call_id", &self.tool_call_id)
            .field("actor_id", &self.actor_id)
            .field("tenant_id", &self.tenant_id)
            .field("subject_id", &self.subject_id)
            .field("graph_id", &self.graph_id)
            .field("connection_id", &self.connection_id)
            .field("requested_connection_ids", &self.requested_connection_ids)
            .field("tool_set", &self.tool_set)
            .field("parent_call_id", &self.parent_call_id())
            .field("call_depth", &self.call_depth())
            .field("cancelled", &self.cancellation.is_cancelled())
            .finish_non_exhaustive()
    }
}

impl ToolInvocationContext {
    /// A context for one run, on behalf of `ids.actor_id` within `ids.tenant_id`.
    #[must_use]
    pub fn new(ids: ContextIds<'_>) -> Self {
        Self {
            run_id: Arc::from(ids.run_id),
            tool_call_id: None,
            actor_id: Arc::from(ids.actor_id),
            tenant_id: Arc::from(ids.tenant_id),
            subject_id: None,
            graph_id: None,
            connection_id: None,
            requested_connection_ids: Arc::new([]),
            tool_set: None,
            cancellation: CancellationToken::new(),
            progress: None,
            logger: None,
            lineage: None,
            asker: None,
        }
    }

    /// Sets the connections this run's request brought. A connection-requiring tool runs only
    /// with a [`connection_id`](Self::connection_id) that is both requested here and granted
    /// by policy.
    #[must_use]
    pub fn with_requested_connections<I, S>(mut self, ids: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.requested_connection_ids = ids.into_iter().map(Into::into).collect();
        self
    }

    /// Narrows this run to the tools named here: the catalog shows the model only those (that
    /// policy lets it see as well), and the runner refuses a call of any other with
    /// `policy_denied`, whatever the model sends. Without a tool set every tool policy allows
    /// is in play; an empty set allows none.
    ///
    /// ```
    /// use tool_runtime::prelude::*;
    ///
    /// let ctx = ToolInvocationContext::new(ContextIds { run_id: "run-7", actor_id: "user-42", tenant_id: "acme" })
    ///     .with_tool_set(["docs__search", "core__get_current_time"]);
    /// assert!(ctx.in_tool_set("docs__search"));
    /// assert!(!ctx.in_tool_set("files__delete"));
    /// assert_eq!(ctx.tool_set().map(<[String]>::len), Some(2));
    /// ```
    #[must_use]
    pub fn with_tool_set<I, S>(mut self, names: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.tool_set = Some(names.into_iter().map(Into::into).collect());
        self
    }

    /// The tools this run is narrowed to, if it is ([`with_tool_set`](Self::with_tool_set)).
    #[must_use]
    pub fn tool_set(&self) -> Option<&[String]> {
        self.tool_set.as_deref()
    }

    /// Whether the tool named `name` is in this run's tool set: always, when the run has none.
    #[must_use]
    #[inline]
    pub fn in_tool_set(&self, name: &str) -> bool {
        self.tool_set.as_ref().is_none_or(|names| names.iter().any(|n| n == name))
    }

    /// Uses `token` to cancel the call: the runner stops waiting for the tool, drops its
    /// future and reports `cancelled`.
    #[must_use]
    pub fn with_cancellation(mut self, token: CancellationToken) -> Self {
        self.cancellation = token;
        self
    }

    /// Sends the tool's progress reports to `reporter`.
    #[must_use]
    pub fn with_progress(mut self, reporter: ProgressReporter) -> Self {
        self.progress = Some(reporter);
        self
    }

    /// Sends the tool's [log messages](Self::log) to `reporter`.
    #[must_use]
    pub fn with_logger(mut self, reporter: LogReporter) -> Self {
        self.logger = Some(reporter);
        self
    }

    /// Where the tool's log messages go, if anywhere.
    #[cfg(feature = "runner")]
    pub(crate) fn logger(&self) -> Option<&LogReporter> {
        self.logger.as_ref()
    }

    /// Logs a message from inside a tool; a no-op when nobody listens. Served over MCP, it
    /// reaches the client as a `notifications/message` when the client's level lets it through.
    ///
    /// ```
    /// use std::sync::{Arc, Mutex};
    /// use tool_runtime::prelude::*;
    /// use tool_runtime::runtime::{LogLevel, LogMessage, LogReporter};
    ///
    /// let seen = Arc::new(Mutex::new(Vec::new()));
    /// let sink = Arc::clone(&seen);
    /// let ctx = ToolInvocationContext::new(ContextIds { run_id: "run", actor_id: "actor", tenant_id: "tenant" })
    ///     .with_logger(LogReporter::new(move |m: LogMessage| sink.lock().unwrap().push(m)));
    /// ctx.log(LogLevel::Info, "fetched page 1");
    /// assert_eq!(seen.lock().unwrap()[0].message, "fetched page 1");
    /// ```
    pub fn log(&self, level: LogLevel, message: impl Into<String>) {
        if let Some(logger) = &self.logger {
            let send = || logger.send(LogMessage { level, message: message.into() });
            // A call's messages end with the call, as its progress does.
            match &self.progress {
                Some(progress) => progress.0.while_live(send),
                None => send(),
            }
        }
    }

    /// The connections this run's request brought.
    #[must_use]
    pub fn requested_connection_ids(&self) -> &[String] {
        &self.requested_connection_ids
    }

    /// The call's cancellation token; a tool may watch it to stop early.
    #[must_use]
    pub fn cancellation(&self) -> &CancellationToken {
        &self.cancellation
    }

    /// Reports progress from inside a tool; a no-op when nobody listens.
    ///
    /// ```
    /// use std::sync::{Arc, Mutex};
    /// use tool_runtime::prelude::*;
    /// use tool_runtime::runtime::{Progress, ProgressReporter};
    ///
    /// let seen = Arc::new(Mutex::new(Vec::new()));
    /// let sink = Arc::clone(&seen);
    /// let ctx = ToolInvocationContext::new(ContextIds { run_id: "run", actor_id: "actor", tenant_id: "tenant" })
    ///     .with_progress(ProgressReporter::new(move |p: Progress| sink.lock().unwrap().push(p.progress)));
    /// ctx.report_progress(1.0, Some(4.0), "fetched page 1");
    /// assert_eq!(*seen.lock().unwrap(), [1.0]);
    /// ```
    pub fn report_progress(&self, progress: f64, total: Option<f64>, message: impl Into<String>) {
        if let Some(reporter) = &self.progress {
            reporter.report(progress, total, message.into());
        }
    }

    /// Where this context's progress goes, if anywhere.
    #[cfg(feature = "runner")]
    pub(crate) fn progress_reporter(&self) -> Option<ProgressReporter> {
        self.progress.clone()
    }

    /// Sets the id of this tool call (as given by the model, or minted by the runtime).
    #[must_use]
    pub fn with_tool_call_id(mut self, id: impl Into<String>) -> Self {
        self.tool_call_id = Some(shared(id));
        self
    }

    /// Sets the subject the call acts upon on behalf of the actor (an on-behalf-of call). Set
    /// it on the server, from the authenticated session, never from a request's parameters.
    /// It reaches the call's record (`subject_id`), its start event and its span
    /// (`tool_runtime.subject_id`), and policy can require one for a tool
    /// ([`ToolOverride::requires_subject`](crate::policy::ToolOverride::requires_subject)).
    #[must_use]
    pub fn with_subject_id(mut self, id: impl Into<String>) -> Self {
        self.subject_id = Some(shared(id));
        self
    }

    /// Sets the graph (agent, workflow) the run belongs to. It reaches the call's record
    /// (`graph_id`), its start event and its span (`tool_runtime.graph_id`), and policy can
    /// limit a tool to some graphs ([`ToolOverride::graphs`](crate::policy::ToolOverride::graphs)).
    #[must_use]
    pub fn with_graph_id(mut self, id: impl Into<String>) -> Self {
        self.graph_id = Some(shared(id));
        self
    }

    /// Sets the connection the call may use; the runtime checks it against the grant.
    #[must_use]
    pub fn with_connection_id(mut self, id: impl Into<String>) -> Self {
        self.connection_id = Some(shared(id));
        self
    }

    /// The subject and graph ids, shared (for the call's result and record).
    #[cfg(feature = "runner")]
    pub(crate) fn subject_and_graph(&self) -> (Option<Arc<str>>, Option<Arc<str>>) {
        (self.subject_id.clone(), self.graph_id.clone())
    }

    /// The run this call belongs to.
    #[must_use]
    pub fn run_id(&self) -> &str {
        &self.run_id
    }

    /// The tool call's id, once known.
    #[must_use]
    pub fn tool_call_id(&self) -> Option<&str> {
        self.tool_call_id.as_deref()
    }

    /// Who asked for the call.
    #[must_use]
    pub fn actor_id(&self) -> &str {
        &self.actor_id
    }

    /// The tenant the call runs in.
    #[must_use]
    pub fn tenant_id(&self) -> &str {
        &self.tenant_id
    }

    /// Whom the call acts upon, if not the actor.
    #[must_use]
    pub fn subject_id(&self) -> Option<&str> {
        self.subject_id.as_deref()
    }

    /// The graph the run belongs to.
    #[must_use]
    pub fn graph_id(&self) -> Option<&str> {
        self.graph_id.as_deref()
    }

    /// The connection the call may use.
    #[must_use]
    pub fn connection_id(&self) -> Option<&str> {
        self.connection_id.as_deref()
    }

    /// For a call a tool made through [`ToolCalls`](crate::runner::ToolCalls): the id of the
    /// call that made it. `None` for a call made by a model or an application.
    ///
    /// ```
    /// use tool_runtime::prelude::*;
    ///
    /// let ctx = ToolInvocationContext::new(ContextIds { run_id: "run", actor_id: "actor", tenant_id: "tenant" });
    /// assert_eq!((ctx.parent_call_id(), ctx.call_depth()), (None, 0));
    /// ```
    #[must_use]
    pub fn parent_call_id(&self) -> Option<&str> {
        self.lineage.as_ref().and_then(|lineage| lineage.ancestors.last()).map(|(_, id)| &**id)
    }

    /// How many tool calls this call is nested in: 0 for a call made by a model or an
    /// application, 1 for a call its tool made, and so on.
    #[must_use]
    pub fn call_depth(&self) -> usize {
        self.lineage.as_ref().map_or(0, |lineage| lineage.ancestors.len())
    }

    /// The names of the tools whose calls this call is nested in, outermost first (empty for a
    /// call made by a model or an application).
    pub fn calling_tools(&self) -> impl Iterator<Item = &str> {
        self.lineage.iter().flat_map(|lineage| lineage.ancestors.iter().map(|(tool, _)| &**tool))
    }

    /// The calls above this one, if it is nested.
    #[cfg(feature = "runner")]
    pub(crate) fn lineage(&self) -> Option<&Lineage> {
        self.lineage.as_deref()
    }

    /// Has `interactor` answer every question and sampling request of the calls run with this
    /// context (and the calls they make), whatever [`Interact`](super::Interact) backend the
    /// catalog bound: how an MCP server puts the client of the session that made a call in
    /// charge, or how an application answers through the UI of the request at hand.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use tool_runtime::prelude::*;
    /// use tool_runtime::runtime::{Completion, ElicitRequest, ElicitResponse, InteractFuture, Interactor, SampleRequest};
    ///
    /// #[derive(Debug)]
    /// struct AlwaysNo;
    /// impl Interactor for AlwaysNo {
    ///     fn elicit(&self, _: ElicitRequest) -> InteractFuture<'_, ElicitResponse> {
    ///         Box::pin(async { Ok(ElicitResponse::Decline) })
    ///     }
    ///     fn sample(&self, _: SampleRequest) -> InteractFuture<'_, Completion> {
    ///         Box::pin(async { Ok(Completion { text: String::new(), model: None, stop_reason: None }) })
    ///     }
    /// }
    ///
    /// let ctx = ToolInvocationContext::new(ContextIds { run_id: "run-1", actor_id: "user-1", tenant_id: "acme" })
    ///     .with_interactor(Arc::new(AlwaysNo));
    /// # let _ = ctx;
    /// ```
    #[must_use]
    pub fn with_interactor(mut self, interactor: Arc<dyn Interactor>) -> Self {
        self.asker = Some(Asker::Session(interactor));
        self
    }

    /// Has `deferred` take the questions that no bound backend answers itself (the agent loop,
    /// which makes such a call wait for the user's answer).
    #[cfg(feature = "agent")]
    pub(crate) fn with_deferred_questions(mut self, deferred: Arc<dyn Interactor>) -> Self {
        self.asker = Some(Asker::Deferred(deferred));
        self
    }

    /// Who answers the call's questions, if the context says.
    #[cfg(feature = "runner")]
    pub(crate) fn asker(&self) -> Option<&Asker> {
        self.asker.as_ref()
    }

    /// Who answers the call's questions, whichever way the context says it (an imported MCP
    /// tool hands its server's questions on to it).
    #[cfg(feature = "mcp-client")]
    pub(crate) fn questions(&self) -> Option<&Arc<dyn Interactor>> {
        match self.asker.as_ref()? {
            Asker::Session(asker) | Asker::Deferred(asker) => Some(asker),
        }
    }

    /// The context of a call that the call `call_id` of the tool `tool` makes: the same ids,
    /// connection, cancellation, reporters and who answers its questions, no call id of its
    /// own yet, one level deeper.
    #[cfg(feature = "runner")]
    pub(crate) fn child_of(&self, tool: &str, call_id: &str) -> Self {
        let mut ancestors = self.lineage.as_ref().map_or_else(Vec::new, |l| l.ancestors.clone());
        ancestors.push((Arc::from(tool), Arc::from(call_id)));
        let mut child = self.clone();
        child.tool_call_id = None;
        child.lineage = Some(Arc::new(Lineage { ancestors }));
        child
    }
}

/// An id as the context keeps it: shared by every clone.
fn shared(id: impl Into<String>) -> Arc<str> {
    Arc::from(id.into())
}
