//! [`ToolCalls`]: the capability with which a tool calls other tools through the runner that
//! runs it.

use std::fmt;

use super::ToolRunner;
use crate::runtime::{
    Arguments, CallOutcome, Capability, ExecError, ToolErrorCode, ToolExecResult,
    ToolInvocationContext,
};

/// Lets a tool call other tools, by name with JSON arguments, through the same runner: policy,
/// the authorizer, hooks, approval, validation and redaction all apply to the called tool as
/// to any call, and it emits its own events. The called tool's context names the calling call
/// ([`parent_call_id`](ToolInvocationContext::parent_call_id),
/// [`call_depth`](ToolInvocationContext::call_depth)). Nesting is limited by
/// [`Budgets::max_call_depth`](crate::policy::Budgets::max_call_depth) (`call_depth_exceeded`),
/// and a tool that is already on the chain of calling tools is refused (`call_cycle`).
///
/// A tool declares it (`capabilities = [ToolCalls]`) and the application grants it by binding
/// [`ToolCalls::granted`] in the catalog; the runner then hands each call of that tool one bound
/// to the call.
///
/// ```
/// use tool_runtime::prelude::*;
/// use tool_runtime::runner::ToolCalls;
///
/// /// Add two numbers.
/// #[tool(name = "math__add", effect = read_only, redact = ["sum"])]
/// struct Add { a: i64, b: i64 }
/// #[derive(Serialize, ToolSchema)]
/// struct Sum { sum: i64 }
/// impl Tool for Add {
///     type Output = Sum;
///     async fn run(self, _: &ToolInvocationContext, _: &ToolCapabilities) -> Result<Sum, ToolError> {
///         Ok(Sum { sum: self.a + self.b })
///     }
/// }
///
/// /// Double a number, by adding it to itself.
/// #[tool(name = "math__double", effect = read_only, redact = ["sum"], capabilities = [ToolCalls])]
/// struct Double { n: i64 }
/// impl Tool for Double {
///     type Output = Sum;
///     async fn run(self, _: &ToolInvocationContext, caps: &ToolCapabilities) -> Result<Sum, ToolError> {
///         let calls = caps.get::<ToolCalls>()?;
///         let added = calls.call("math__add", serde_json::json!({"a": self.n, "b": self.n})).await;
///         let sum = added.value().and_then(|v| v["sum"].as_i64());
///         sum.map(|sum| Sum { sum }).ok_or_else(|| ToolError::new("the addition failed"))
///     }
/// }
///
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// let catalog = ToolCatalog::builder()
///     .register::<Add>()
///     .register::<Double>()
///     .capability(ToolCalls::granted())
///     .build()
///     .unwrap();
/// let policy = ToolPolicy::from_json(r#"{"allowed_tools": ["math__*"]}"#).unwrap();
/// let runner = ToolRunner::builder(catalog).policy(policy).build();
/// let ctx = ToolInvocationContext::new(ContextIds { run_id: "run-1", actor_id: "user-1", tenant_id: "acme" });
/// let doubled = runner.exec("math__double", r#"{"n": 21}"#, &ctx).await;
/// assert_eq!(doubled.value(), Some(&serde_json::json!({"sum": 42})));
/// # });
/// ```
#[derive(Clone)]
pub struct ToolCalls {
    bound: Option<Bound>,
}

/// What a [`ToolCalls`] handed to one call holds: the runner, and the calling call's context
/// (whose call id is set).
#[derive(Clone)]
struct Bound {
    runner: ToolRunner,
    tool: String,
    ctx: ToolInvocationContext,
}

impl Capability for ToolCalls {
    const NAME: &'static str = "call_tools";
}

impl fmt::Debug for ToolCalls {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut debug = f.debug_struct("ToolCalls");
        if let Some(bound) = &self.bound {
            debug.field("tool", &bound.tool).field("call_id", &bound.ctx.tool_call_id());
        }
        debug.finish_non_exhaustive()
    }
}

impl ToolCalls {
    /// The grant to bind in the catalog (`.capability(ToolCalls::granted())`): it lets the
    /// tools that declare `ToolCalls` call others. The runner replaces it, for each call, with
    /// one bound to that call; used outside a runner, it calls nothing.
    ///
    /// ```
    /// use tool_runtime::runner::ToolCalls;
    ///
    /// # tokio::runtime::Runtime::new().unwrap().block_on(async {
    /// let unbound = ToolCalls::granted().call("math__add", r#"{"a": 1, "b": 2}"#).await;
    /// assert!(unbound.error().is_some());
    /// # });
    /// ```
    #[must_use]
    pub fn granted() -> Self {
        Self { bound: None }
    }

    /// The capability for one call of `tool`, whose context (with its call id) is `ctx`.
    pub(super) fn bound(runner: ToolRunner, tool: &str, ctx: &ToolInvocationContext) -> Self {
        Self { bound: Some(Bound { runner, tool: tool.to_owned(), ctx: ctx.clone() }) }
    }

    /// Calls the tool `name` with `args` (JSON text or a parsed value, see [`Arguments`]) on
    /// behalf of the calling tool, and returns its result: redacted, as the model would get
    /// it. The called tool gets a fresh call id and a context that names the calling call.
    pub async fn call<'a>(
        &'a self,
        name: &'a str,
        args: impl Into<Arguments<'a>>,
    ) -> ToolExecResult {
        let args = args.into();
        let Some(bound) = &self.bound else {
            return ToolExecResult::new(
                super::drive::mint_call_id(),
                name.to_owned(),
                CallOutcome::Failed(ExecError::new(
                    ToolErrorCode::Unavailable,
                    "this `ToolCalls` is not bound to a call: only tools run by a runner can call tools",
                )),
                ((None, None), None),
                (0, 0),
            );
        };
        let call_id = bound.ctx.tool_call_id().unwrap_or_default();
        let child = bound.ctx.child_of(&bound.tool, call_id);
        // Boxed: a call's future holds the tool's, which may hold this one.
        Box::pin(bound.runner.exec_arguments(name, args, &child, None)).await
    }
}
