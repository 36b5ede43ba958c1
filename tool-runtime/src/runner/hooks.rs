//! Hooks: application code the runner calls on every call, whatever path it came by (direct
//! [`exec`](super::ToolRunner::exec), the agent loop, the MCP server).
//!
//! A **before-call hook** ([`BeforeCallHook`]) runs after the arguments validated and before
//! approval, so an approver sees the arguments that will run. It sees the tool's spec (name,
//! effect, schemas), the context and the validated arguments, and answers
//! [`BeforeCallDecision::Allow`], [`Block`](BeforeCallDecision::Block) (the call ends
//! `hook_blocked`, with the hook's reason as the safe message the model sees),
//! [`Rewrite`](BeforeCallDecision::Rewrite) (the new arguments are validated against the
//! tool's schema again; the call's record keeps both what arrived and what ran) or
//! [`Pending`](BeforeCallDecision::Pending) (the call waits for a decision made later, as with
//! an approver that defers: see [`deferred`](crate::agent::deferred)).
//!
//! An **after-call hook** ([`AfterCallHook`]) runs once the result is redacted and bounded,
//! before the result event: it sees the redacted output or the error, never the tool's raw
//! output, and the call's duration, and may [replace](AfterCallDecision::Replace) the output
//! that is returned, recorded and sent in the event (the replacement is treated like the
//! tool's own output: validated against the output schema, redacted to the allowlist and
//! bounded by the result budgets; one that fails is `hook_failed`). It runs for every call that got past the before-call hooks.
//!
//! Hooks run in the order they were registered; the first before-call hook that blocks ends
//! the call, and each one sees the arguments the previous one left. A hook that returns a
//! [`HookError`] or panics ends the call with `hook_failed`, naming the hook: the call still
//! has its one result and its one result event. Hooks wait within the call's time budget
//! (`max_runtime_ms`, which the tool's run shares): a hook still waiting when it runs out ends
//! the call `timeout`, naming the before-call or after-call hooks.
//!
//! With no hooks registered, the runner does nothing more per call than check that there are
//! none.
//!
//! A guard that blocks, and one that rewrites:
//!
//! ```
//! use tool_runtime::prelude::*;
//! use tool_runtime::runner::{BeforeCallDecision, BeforeCallFn, HookError};
//! use tool_runtime::runtime::ToolErrorCode;
//!
//! /// Send an email.
//! #[tool(name = "mail__send", effect = read_only, redact = ["sent_to"])]
//! struct Send { to: String, subject: String }
//! #[derive(Serialize, ToolSchema)]
//! struct Sent { sent_to: String }
//! impl Tool for Send {
//!     type Output = Sent;
//!     async fn run(self, _: &ToolInvocationContext, _: &ToolCapabilities) -> Result<Sent, ToolError> {
//!         Ok(Sent { sent_to: self.to })
//!     }
//! }
//!
//! // Blocks mail to anyone outside the company.
//! let outside = BeforeCallFn::new("outside_mail_guard", |call| {
//!     let to = call.arguments()["to"].as_str().unwrap_or_default();
//!     Ok(if to.ends_with("@example.com") {
//!         BeforeCallDecision::Allow
//!     } else {
//!         BeforeCallDecision::block("mail may only go to example.com addresses")
//!     })
//! });
//! // Tags every subject; the new arguments are validated again.
//! let tag = BeforeCallFn::new("subject_tag", |call| {
//!     let mut arguments = call.arguments().clone();
//!     let subject = arguments["subject"].as_str().ok_or_else(|| HookError::new("no subject"))?;
//!     arguments["subject"] = format!("[bot] {subject}").into();
//!     Ok(BeforeCallDecision::Rewrite { arguments })
//! });
//!
//! # tokio::runtime::Runtime::new().unwrap().block_on(async {
//! let catalog = ToolCatalog::builder().register::<Send>().build().unwrap();
//! let runner = ToolRunner::builder(catalog)
//!     .policy(ToolPolicy::from_json(r#"{"allowed_tools": ["mail__*"]}"#).unwrap())
//!     .before_call(outside)
//!     .before_call(tag)
//!     .build();
//! let ctx = ToolInvocationContext::new(ContextIds { run_id: "run-1", actor_id: "user-1", tenant_id: "acme" });
//!
//! let blocked = runner.exec("mail__send", r#"{"to": "x@elsewhere.org", "subject": "hi"}"#, &ctx).await;
//! assert_eq!(blocked.error_code(), Some(ToolErrorCode::HookBlocked));
//! assert_eq!(blocked.error().unwrap().message, "mail may only go to example.com addresses");
//!
//! let sent = runner.exec("mail__send", r#"{"to": "ann@example.com", "subject": "hi"}"#, &ctx).await;
//! assert_eq!(sent.args().unwrap()["subject"], "[bot] hi");          // what ran
//! assert_eq!(sent.args_received().unwrap()["subject"], "hi");       // what arrived
//! # });
//! ```

use std::fmt;
use std::sync::Arc;

use async_trait::async_trait;
use serde_json::Value;

use super::drive::CatchUnwind;
use crate::content::ToolOutput;
use crate::runtime::bound::ArgsJson;
use crate::runtime::{ExecError, ToolInvocationContext, ValidatedArgs};
use crate::spec::ToolSpec;

/// What a [`BeforeCallHook`] sees of a call.
#[derive(Debug)]
#[non_exhaustive]
pub struct BeforeCall<'a> {
    /// The tool's spec: its name, effect, schemas.
    pub tool: &'a ToolSpec,
    /// The call's id.
    pub tool_call_id: &'a str,
    /// The call's context.
    pub ctx: &'a ToolInvocationContext,
    /// The validated arguments (as an earlier hook left them), turned into JSON only when a
    /// hook reads them: [`arguments`](Self::arguments).
    pub(crate) args: &'a ValidatedArgs,
}

impl BeforeCall<'_> {
    /// The validated arguments (as an earlier hook left them). The runner decodes arguments
    /// straight into the tool's type; the JSON value is built the first time a hook asks, once
    /// per call.
    #[must_use]
    pub fn arguments(&self) -> &Value {
        self.args.value()
    }
}

/// A [`BeforeCallHook`]'s answer.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum BeforeCallDecision {
    /// Let the call go on.
    Allow,
    /// End the call with `hook_blocked`.
    Block {
        /// The safe reason the model sees (never echo secrets or raw arguments here).
        reason: String,
    },
    /// Run the call with these arguments instead; they are validated against the tool's
    /// schema again (refused: `hook_failed`).
    Rewrite {
        /// The new arguments.
        arguments: Value,
    },
    /// Neither run nor refuse the call now: it ends waiting for approval, like a call whose approver
    /// defers ([`ApprovalDecision::Pending`](crate::runner::ApprovalDecision::Pending)), with
    /// the arguments as the hooks so far left them. The agent loop stops with a run state, and
    /// [`Agent::resume`](crate::agent::Agent::resume) decides the call later (approved calls
    /// then run without asking the before-call hooks again). Where nothing can wait (a direct
    /// `exec`, an MCP client) the caller gets the waiting result; a call another tool makes
    /// cannot wait and ends `approval_denied`.
    Pending {
        /// Why the call waits, for the application (the model sees it only if the run ends
        /// without a decision).
        reason: String,
    },
}

impl BeforeCallDecision {
    /// [`Block`](Self::Block) with this reason.
    ///
    /// ```
    /// use tool_runtime::runner::BeforeCallDecision;
    ///
    /// let block = BeforeCallDecision::block("not on weekends");
    /// assert_eq!(block, BeforeCallDecision::Block { reason: "not on weekends".into() });
    /// ```
    pub fn block(reason: impl Into<String>) -> Self {
        Self::Block { reason: reason.into() }
    }
}

/// What an [`AfterCallHook`] sees of a call.
#[derive(Debug)]
#[non_exhaustive]
pub struct AfterCall<'a> {
    /// The tool's spec.
    pub tool: &'a ToolSpec,
    /// The call's id.
    pub tool_call_id: &'a str,
    /// The call's context.
    pub ctx: &'a ToolInvocationContext,
    /// The arguments the call ran (or would have run) with: [`arguments`](Self::arguments).
    pub(crate) args: Option<&'a ArgsJson>,
    /// The redacted, bounded output, or the error.
    pub outcome: &'a Result<ToolOutput, ExecError>,
    /// How long the call has taken so far, in ms by the runner's clock.
    pub duration_ms: u64,
}

impl AfterCall<'_> {
    /// The arguments the call ran (or would have run) with; `None` for a call refused before
    /// its arguments were validated. Built as JSON the first time a hook asks, once per call.
    #[must_use]
    pub fn arguments(&self) -> Option<&Value> {
        self.args.map(ArgsJson::get)
    }
}

/// An [`AfterCallHook`]'s answer.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum AfterCallDecision {
    /// Keep the outcome.
    Keep,
    /// Return, record and send this output instead. It is checked like the tool's own: it
    /// must match the tool's output schema, only the allowlisted fields are kept, and it is
    /// bounded by the result budgets; a replacement that fails is `hook_failed`.
    Replace(ToolOutput),
}

/// A hook's failure: the call ends `hook_failed` with this message after the hook's name.
///
/// ```
/// use tool_runtime::runner::HookError;
///
/// assert_eq!(HookError::new("the audit log is down").to_string(), "the audit log is down");
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HookError(String);

impl HookError {
    /// A failure with this safe message.
    pub fn new(message: impl Into<String>) -> Self {
        Self(message.into())
    }
}

impl fmt::Display for HookError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for HookError {}

/// Runs before every call, once its arguments are valid (see the [module docs](self)).
///
/// ```
/// use tool_runtime::runner::{BeforeCall, BeforeCallDecision, BeforeCallHook, HookError};
/// use tool_runtime::spec::ToolEffect;
///
/// /// Refuses side effects outside office hours.
/// #[derive(Debug)]
/// struct OfficeHours { open: bool }
///
/// #[async_trait::async_trait]
/// impl BeforeCallHook for OfficeHours {
///     fn name(&self) -> &str { "office_hours" }
///     async fn before_call(&self, call: &BeforeCall<'_>) -> Result<BeforeCallDecision, HookError> {
///         Ok(match call.tool.effect() {
///             ToolEffect::ReadOnly => BeforeCallDecision::Allow,
///             _ if self.open => BeforeCallDecision::Allow,
///             _ => BeforeCallDecision::block("changes wait for office hours"),
///         })
///     }
/// }
/// # let _ = OfficeHours { open: true };
/// ```
#[async_trait]
pub trait BeforeCallHook: Send + Sync + fmt::Debug {
    /// The hook's name, for errors (`hook_failed`) and logs.
    fn name(&self) -> &str;

    /// Allows, blocks or rewrites one call.
    ///
    /// # Errors
    ///
    /// [`HookError`] when the hook cannot decide; the call ends `hook_failed`.
    async fn before_call(&self, call: &BeforeCall<'_>) -> Result<BeforeCallDecision, HookError>;
}

/// Runs after every call that got past the before-call hooks, on its redacted outcome (see the
/// [module docs](self)).
///
/// ```
/// use tool_runtime::runner::{AfterCall, AfterCallDecision, AfterCallHook, HookError};
///
/// /// Counts failed calls.
/// #[derive(Debug, Default)]
/// struct Failures(std::sync::atomic::AtomicUsize);
///
/// #[async_trait::async_trait]
/// impl AfterCallHook for Failures {
///     fn name(&self) -> &str { "failures" }
///     async fn after_call(&self, call: &AfterCall<'_>) -> Result<AfterCallDecision, HookError> {
///         if call.outcome.is_err() {
///             self.0.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
///         }
///         Ok(AfterCallDecision::Keep)
///     }
/// }
/// # let _ = Failures::default();
/// ```
#[async_trait]
pub trait AfterCallHook: Send + Sync + fmt::Debug {
    /// The hook's name, for errors (`hook_failed`) and logs.
    fn name(&self) -> &str;

    /// Observes one call's outcome, and may replace its output.
    ///
    /// # Errors
    ///
    /// [`HookError`] when the hook fails; the call ends `hook_failed`.
    async fn after_call(&self, call: &AfterCall<'_>) -> Result<AfterCallDecision, HookError>;
}

/// The function signature of a [`BeforeCallFn`].
type BeforeFn = dyn Fn(&BeforeCall<'_>) -> Result<BeforeCallDecision, HookError> + Send + Sync;
/// The function signature of an [`AfterCallFn`].
type AfterFn = dyn Fn(&AfterCall<'_>) -> Result<AfterCallDecision, HookError> + Send + Sync;

/// A [`BeforeCallHook`] made of a name and a function that answers at once (see the
/// [module docs](self) for examples).
#[derive(Clone)]
pub struct BeforeCallFn {
    name: String,
    hook: Arc<BeforeFn>,
}

impl BeforeCallFn {
    /// The hook `name`, answering with `hook`.
    pub fn new(
        name: impl Into<String>,
        hook: impl Fn(&BeforeCall<'_>) -> Result<BeforeCallDecision, HookError> + Send + Sync + 'static,
    ) -> Self {
        Self { name: name.into(), hook: Arc::new(hook) }
    }
}

impl fmt::Debug for BeforeCallFn {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("BeforeCallFn").field("name", &self.name).finish_non_exhaustive()
    }
}

#[async_trait]
impl BeforeCallHook for BeforeCallFn {
    fn name(&self) -> &str {
        &self.name
    }

    async fn before_call(&self, call: &BeforeCall<'_>) -> Result<BeforeCallDecision, HookError> {
        (self.hook)(call)
    }
}

/// An [`AfterCallHook`] made of a name and a function that answers at once.
///
/// ```
/// use tool_runtime::runner::{AfterCallDecision, AfterCallFn};
///
/// let log = AfterCallFn::new("log", |call| {
///     println!("{} took {} ms", call.tool.name(), call.duration_ms);
///     Ok(AfterCallDecision::Keep)
/// });
/// # let _ = log;
/// ```
#[derive(Clone)]
pub struct AfterCallFn {
    name: String,
    hook: Arc<AfterFn>,
}

impl AfterCallFn {
    /// The hook `name`, answering with `hook`.
    pub fn new(
        name: impl Into<String>,
        hook: impl Fn(&AfterCall<'_>) -> Result<AfterCallDecision, HookError> + Send + Sync + 'static,
    ) -> Self {
        Self { name: name.into(), hook: Arc::new(hook) }
    }
}

impl fmt::Debug for AfterCallFn {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AfterCallFn").field("name", &self.name).finish_non_exhaustive()
    }
}

#[async_trait]
impl AfterCallHook for AfterCallFn {
    fn name(&self) -> &str {
        &self.name
    }

    async fn after_call(&self, call: &AfterCall<'_>) -> Result<AfterCallDecision, HookError> {
        (self.hook)(call)
    }
}

/// The hooks of a runner, in registration order.
#[derive(Debug, Default)]
pub(super) struct Hooks {
    pub(super) before: Vec<Arc<dyn BeforeCallHook>>,
    pub(super) after: Vec<Arc<dyn AfterCallHook>>,
}

/// The error of a hook that failed; `what` says how.
pub(super) fn hook_failed(kind: &str, name: &str, what: impl fmt::Display) -> ExecError {
    ExecError::new(
        crate::runtime::ToolErrorCode::HookFailed,
        format!("the {kind} hook `{}` failed: {what}", crate::schema::Shown(name)),
    )
}

/// Awaits a hook's answer, turning a panic into `hook_failed`.
pub(super) async fn caught<T>(
    kind: &str,
    name: &str,
    answer: impl Future<Output = Result<T, HookError>>,
) -> Result<T, ExecError> {
    let answer = std::pin::pin!(answer);
    match CatchUnwind(answer).await {
        Ok(Ok(value)) => Ok(value),
        Ok(Err(error)) => Err(hook_failed(kind, name, error)),
        Err(()) => Err(hook_failed(kind, name, "it panicked").after_panic()),
    }
}
