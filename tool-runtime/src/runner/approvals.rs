//! Approvals and authorization: the runner's steps 2 and 3 past what policy says.
//!
//! Where [`ToolPolicy`](crate::policy::ToolPolicy) says a call needs approval, the runner asks
//! its [`Approver`]; every call policy allows then passes the [`Authorizer`]. An approval is
//! bound to one exact call ([`Approval`]), so it cannot be replayed.

use std::collections::BTreeSet;
use std::fmt;

use async_trait::async_trait;
use serde_json::Value;

use crate::digest::{canonical_text, parts_hash};
use crate::runtime::ToolInvocationContext;
use crate::spec::{ToolEffect, ToolSpec};

/// An approval of one exact call, good for one use: the SHA-256 of the run, tenant and actor
/// it was given for, the tool's name and [`spec_hash`](ToolSpec::spec_hash), the call id and the canonical
/// validated arguments. It cannot be replayed in another run, for another tenant or actor,
/// after the tool changed, for another call or for other arguments; [`PreApproved`] spends
/// each approval on the first call it approves.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Approval([u8; 32]);

impl Approval {
    /// The approval of calling the tool of `spec` as `tool_call_id` with exactly `arguments`,
    /// for the run, tenant and actor of `ctx` (for approvals given ahead of time, out of band).
    ///
    /// ```
    /// use serde_json::json;
    /// use tool_runtime::runner::Approval;
    /// use tool_runtime::prelude::*;
    ///
    /// /// Close a ticket.
    /// #[tool(name = "tickets__close", effect = state_change, redact = ["closed"])]
    /// struct Close { number: u32, reason: String }
    /// #[derive(Serialize, ToolSchema)]
    /// struct Closed { closed: bool }
    /// impl Tool for Close {
    ///     type Output = Closed;
    ///     async fn run(self, _: &ToolInvocationContext, _: &ToolCapabilities) -> Result<Closed, ToolError> {
    ///         Ok(Closed { closed: true })
    ///     }
    /// }
    ///
    /// let ctx = ToolInvocationContext::new(ContextIds { run_id: "run-1", actor_id: "user-1", tenant_id: "acme" });
    /// let other_run = ToolInvocationContext::new(ContextIds { run_id: "run-2", actor_id: "user-1", tenant_id: "acme" });
    /// let spec = Close::spec();
    /// let approved = Approval::of(&ctx, spec, "call_1", &json!({"number": 7, "reason": "fixed"}));
    /// assert_eq!(approved, Approval::of(&ctx, spec, "call_1", &json!({"reason": "fixed", "number": 7})));
    /// assert_ne!(approved, Approval::of(&ctx, spec, "call_1", &json!({"number": 8, "reason": "fixed"})));
    /// assert_ne!(approved, Approval::of(&ctx, spec, "call_2", &json!({"number": 7, "reason": "fixed"})));
    /// assert_ne!(approved, Approval::of(&other_run, spec, "call_1", &json!({"number": 7, "reason": "fixed"})));
    /// ```
    #[must_use]
    pub fn of(
        ctx: &ToolInvocationContext,
        spec: &ToolSpec,
        tool_call_id: &str,
        arguments: &Value,
    ) -> Self {
        Self::bound(ctx, spec.name(), spec.spec_hash(), tool_call_id, arguments)
    }

    /// [`of`](Self::of) with the spec hash already known.
    pub(crate) fn bound(
        ctx: &ToolInvocationContext,
        tool_name: &str,
        spec_hash: &str,
        tool_call_id: &str,
        arguments: &Value,
    ) -> Self {
        let canonical = canonical_text(arguments);
        Self(parts_hash([
            ctx.run_id(),
            ctx.tenant_id(),
            ctx.actor_id(),
            tool_name,
            spec_hash,
            tool_call_id,
            canonical.as_str(),
        ]))
    }
}

/// A call waiting for approval.
#[derive(Debug)]
pub struct ApprovalRequest<'a> {
    /// The tool's name.
    pub tool_name: &'a str,
    /// The call's id.
    pub tool_call_id: &'a str,
    /// What the tool does to the world.
    pub effect: ToolEffect,
    /// The validated arguments.
    pub arguments: &'a Value,
    /// Who asks.
    pub ctx: &'a ToolInvocationContext,
    /// The tool's spec (an approval is bound to its [`spec_hash`](ToolSpec::spec_hash)).
    pub spec: &'a ToolSpec,
}

impl ApprovalRequest<'_> {
    /// Approves exactly this call, once.
    #[must_use]
    pub fn approve(&self) -> ApprovalDecision {
        ApprovalDecision::Approved(self.approval())
    }

    /// The approval this exact call needs (see [`Approval::of`]).
    #[must_use]
    pub fn approval(&self) -> Approval {
        Approval::of(self.ctx, self.spec, self.tool_call_id, self.arguments)
    }

    /// Denies it, with a message for the model.
    pub fn deny(&self, message: impl Into<String>) -> ApprovalDecision {
        ApprovalDecision::Denied { message: message.into() }
    }

    /// Approves the call with other arguments (a person corrected them). The runner validates
    /// them again against the tool's schema and runs the tool with them.
    #[must_use]
    pub fn edit(&self, arguments: Value) -> ApprovalDecision {
        ApprovalDecision::Edited { arguments }
    }

    /// Decides later: the call ends pending (see [`ApprovalDecision::Pending`]).
    #[must_use]
    pub fn defer(&self) -> ApprovalDecision {
        ApprovalDecision::Pending
    }
}

/// An approver's answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ApprovalDecision {
    /// Approved; the runner checks the approval matches the call.
    Approved(Approval),
    /// Denied, with a message for the model.
    Denied {
        /// Why, safe to show.
        message: String,
    },
    /// Approved with these arguments instead of the model's; they are validated again.
    Edited {
        /// The arguments to run the tool with.
        arguments: Value,
    },
    /// Not decided yet: someone decides later (a person answers in another HTTP request). The
    /// call does not run and ends waiting ([`WaitsFor::Approval`](crate::runtime::WaitsFor)),
    /// which is not a failure: its
    /// [`ToolExecResult::is_waiting`](crate::runtime::ToolExecResult::is_waiting) says so and
    /// the sink gets a [`ToolCallWaiting`](crate::runtime::ToolEvent::ToolCallWaiting) event
    /// instead of a result. The agent loop stops with a resumable
    /// [`RunState`](crate::agent::RunState) (see [`agent::deferred`](crate::agent::deferred)).
    Pending,
}

/// Decides calls that policy marks [`Decision::RequireApproval`](crate::policy::Decision::RequireApproval) (a person in a UI, a rules
/// engine). Supplied by the application; the default, [`DenyAll`], says no.
#[async_trait]
pub trait Approver: Send + Sync + fmt::Debug {
    /// Approves, denies or defers one call.
    async fn review(&self, request: &ApprovalRequest<'_>) -> ApprovalDecision;
}

/// Denies every call that needs approval.
#[derive(Debug, Clone, Copy, Default)]
pub struct DenyAll;

#[async_trait]
impl Approver for DenyAll {
    async fn review(&self, request: &ApprovalRequest<'_>) -> ApprovalDecision {
        request.deny("this call needs approval and no approver is configured")
    }
}

/// Defers every call that needs approval: each ends waiting, for a person to decide later
/// (see [`ApprovalDecision::Pending`]).
///
/// ```
/// use std::sync::Arc;
/// use tool_runtime::runner::DeferAll;
/// use tool_runtime::prelude::*;
///
/// let runner = ToolRunner::builder(ToolCatalog::builder().build().unwrap())
///     .approver(Arc::new(DeferAll))
///     .build();
/// # let _ = runner;
/// ```
#[derive(Debug, Clone, Copy, Default)]
pub struct DeferAll;

#[async_trait]
impl Approver for DeferAll {
    async fn review(&self, request: &ApprovalRequest<'_>) -> ApprovalDecision {
        request.defer()
    }
}

/// Approves exactly the calls approved ahead of time (see [`Approval::of`]), each once: an
/// approval is spent by the first call it approves, so a second call with the same binding
/// (a retry, a replay) is denied.
///
/// ```
/// use serde_json::json;
/// use tool_runtime::runner::{Approval, ApprovalDecision, ApprovalRequest, Approver, PreApproved};
/// use tool_runtime::prelude::*;
///
/// /// Close a ticket.
/// #[tool(name = "tickets__close", effect = state_change, redact = ["closed"])]
/// struct Close { number: u32 }
/// #[derive(Serialize, ToolSchema)]
/// struct Closed { closed: bool }
/// impl Tool for Close {
///     type Output = Closed;
///     async fn run(self, _: &ToolInvocationContext, _: &ToolCapabilities) -> Result<Closed, ToolError> {
///         Ok(Closed { closed: true })
///     }
/// }
///
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// let ctx = ToolInvocationContext::new(ContextIds { run_id: "run-1", actor_id: "user-1", tenant_id: "acme" });
/// let arguments = json!({"number": 7});
/// let approver = PreApproved::new([Approval::of(&ctx, Close::spec(), "call_1", &arguments)]);
/// let request = ApprovalRequest {
///     tool_name: "tickets__close",
///     tool_call_id: "call_1",
///     effect: ToolEffect::StateChange,
///     arguments: &arguments,
///     ctx: &ctx,
///     spec: Close::spec(),
/// };
/// assert!(matches!(approver.review(&request).await, ApprovalDecision::Approved(_)));
/// assert!(matches!(approver.review(&request).await, ApprovalDecision::Denied { .. }));
/// # });
/// ```
#[derive(Debug, Default)]
pub struct PreApproved(std::sync::Mutex<BTreeSet<[u8; 32]>>);

impl PreApproved {
    /// Approves these calls, each once, and no others.
    pub fn new(approvals: impl IntoIterator<Item = Approval>) -> Self {
        Self(std::sync::Mutex::new(approvals.into_iter().map(|approval| approval.0).collect()))
    }
}

#[async_trait]
impl Approver for PreApproved {
    async fn review(&self, request: &ApprovalRequest<'_>) -> ApprovalDecision {
        let approval = request.approval();
        let spent =
            self.0.lock().unwrap_or_else(std::sync::PoisonError::into_inner).remove(&approval.0);
        if spent {
            ApprovalDecision::Approved(approval)
        } else {
            request.deny("this call was not approved (or its approval was used already)")
        }
    }
}

/// A per-call authorization hook, run after policy: row-level rules, tenant checks.
/// The default, [`AllowAll`], allows everything policy allows.
#[async_trait]
pub trait Authorizer: Send + Sync + fmt::Debug {
    /// Allows or refuses one call.
    ///
    /// # Errors
    ///
    /// [`AuthzDenied`] with a safe message.
    async fn authorize(
        &self,
        ctx: &ToolInvocationContext,
        spec: &ToolSpec,
    ) -> Result<(), AuthzDenied>;
}

/// An authorizer's refusal.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AuthzDenied(pub String);

impl fmt::Display for AuthzDenied {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for AuthzDenied {}

/// Allows every call.
#[derive(Debug, Clone, Copy, Default)]
pub struct AllowAll;

#[async_trait]
impl Authorizer for AllowAll {
    async fn authorize(
        &self,
        _ctx: &ToolInvocationContext,
        _spec: &ToolSpec,
    ) -> Result<(), AuthzDenied> {
        Ok(())
    }
}
