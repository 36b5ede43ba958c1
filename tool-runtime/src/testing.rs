//! Unit tests of tools, through a runner: the only way a tool runs.
//!
//! A tool's `run` takes [`ToolCapabilities`](crate::runtime::ToolCapabilities), which only the runner makes, so a test cannot
//! call it directly (and neither can any other code: every call goes through the one execution
//! path, with its validation, output check and redaction). [`exec`] runs one tool the way an
//! application would, in one line; a [`Harness`] adds the capabilities the tool declares, a
//! context of your own or the budgets of a policy.
//!
//! The tool is allowed whatever its effect, with no approval asked, and the result is what a
//! caller of [`ToolRunner::exec`] gets: the redacted output ([`ToolExecResult::value`]), or
//! the error with its code, and the validated arguments.
//!
//! ```
//! use std::time::{Duration, UNIX_EPOCH};
//! use serde_json::json;
//! use tool_runtime::prelude::*;
//! use tool_runtime::runtime::Clock;
//! use tool_runtime::testing::{self, Harness};
//!
//! /// Add two numbers.
//! #[tool(name = "math__add", effect = read_only, redact = ["sum"])]
//! struct Add { a: i32, b: i32 }
//!
//! #[derive(Serialize, ToolSchema)]
//! struct Sum { sum: i64 }
//!
//! impl Tool for Add {
//!     type Output = Sum;
//!     async fn run(self, _: &ToolInvocationContext, _: &ToolCapabilities) -> Result<Sum, ToolError> {
//!         Ok(Sum { sum: i64::from(self.a) + i64::from(self.b) })
//!     }
//! }
//!
//! /// Milliseconds since the Unix epoch.
//! #[tool(name = "core__now", effect = read_only, redact = ["ms"], capabilities = [Clock])]
//! struct Now {}
//!
//! #[derive(Serialize, ToolSchema)]
//! struct Ms { ms: i64 }
//!
//! impl Tool for Now {
//!     type Output = Ms;
//!     async fn run(self, _: &ToolInvocationContext, caps: &ToolCapabilities) -> Result<Ms, ToolError> {
//!         Ok(Ms { ms: caps.get::<Clock>()?.epoch_ms() })
//!     }
//! }
//!
//! # tokio::runtime::Runtime::new().unwrap().block_on(async {
//! // One line per case: arguments as JSON, the runner's result back.
//! let sum = testing::exec::<Add>(json!({"a": 2, "b": 40})).await;
//! assert_eq!(sum.value(), Some(&json!({"sum": 42})));
//! let refused = testing::exec::<Add>(json!({"a": "two", "b": 40})).await;
//! assert_eq!(refused.error_code(), Some(ToolErrorCode::Validation));
//!
//! // With the capabilities the tool declares.
//! let at = UNIX_EPOCH + Duration::from_millis(1_700_000_000_000);
//! let now = Harness::new().capability(Clock::fixed(at)).exec::<Now>(json!({})).await;
//! assert_eq!(now.value(), Some(&json!({"ms": 1_700_000_000_000_i64})));
//! # });
//! ```

use std::sync::Arc;

use serde_json::Value;

use crate::catalog::{ToolCatalog, ToolCatalogBuilder};
use crate::policy::{Budgets, ToolPolicy};
use crate::runner::ToolRunner;
use crate::runtime::{
    CallOutcome, Capability, ConnectionBroker, ContextIds, ExecError, Tool, ToolErrorCode,
    ToolExecResult, ToolInvocationContext,
};

/// Runs `T` once through a runner, with `args`, no capabilities and a test context; see the
/// [module docs](self).
pub async fn exec<T: Tool + Sync>(args: Value) -> ToolExecResult {
    Harness::new().exec::<T>(args).await
}

/// A runner for one tool at a time: the capabilities it is handed, the context it runs in, the
/// budgets it runs within. See the [module docs](self).
#[derive(Debug, Clone)]
#[must_use]
pub struct Harness {
    catalog: ToolCatalogBuilder,
    ctx: ToolInvocationContext,
    budgets: Option<Budgets>,
}

impl Default for Harness {
    fn default() -> Self {
        Self::new()
    }
}

impl Harness {
    /// No capabilities; a context with run id `test-run`, actor `test-actor` and tenant
    /// `test-tenant`; the default budgets.
    pub fn new() -> Self {
        let ids =
            ContextIds { run_id: "test-run", actor_id: "test-actor", tenant_id: "test-tenant" };
        Self {
            catalog: ToolCatalog::builder(),
            ctx: ToolInvocationContext::new(ids),
            budgets: None,
        }
    }

    /// Binds a capability for the tool (it is handed only those it declares).
    pub fn capability<C: Capability>(mut self, capability: C) -> Self {
        self.catalog = self.catalog.capability(capability);
        self
    }

    /// Binds a shared capability, one you keep a handle on to look at after the call.
    pub fn shared_capability<C: Capability>(mut self, capability: Arc<C>) -> Self {
        self.catalog = self.catalog.shared_capability(capability);
        self
    }

    /// The context the call runs in (its ids, a connection, a cancellation token...). Its
    /// connection, if it has one, is granted: by the policy, and as one the request asked for.
    pub fn context(mut self, ctx: ToolInvocationContext) -> Self {
        self.ctx = match ctx.connection_id().map(str::to_owned) {
            Some(connection) if !ctx.requested_connection_ids().contains(&connection) => {
                let mut requested = ctx.requested_connection_ids().to_vec();
                requested.push(connection);
                ctx.with_requested_connections(requested)
            }
            _ => ctx,
        };
        self
    }

    /// The broker that gives a tool declaring [`Auth`](crate::runtime::Auth) its credential.
    pub fn connection_broker(mut self, broker: Arc<dyn ConnectionBroker>) -> Self {
        self.catalog = self.catalog.connection_broker(broker);
        self
    }

    /// The budgets the call runs within (its time, its result's size...).
    pub fn budgets(mut self, budgets: Budgets) -> Self {
        self.budgets = Some(budgets);
        self
    }

    /// Runs `T` once with `args`. A catalog that cannot be built (a capability `T` declares
    /// is not bound) is the call's `unavailable` error, naming what is missing.
    pub async fn exec<T: Tool + Sync>(&self, args: Value) -> ToolExecResult {
        let name = T::spec().name();
        let catalog = match self.catalog.clone().register::<T>().build() {
            Ok(catalog) => catalog,
            Err(error) => {
                let error = ExecError::new(ToolErrorCode::Unavailable, error.to_string());
                let outcome = CallOutcome::Failed(error);
                return ToolExecResult::new(
                    String::new(),
                    name.to_owned(),
                    outcome,
                    ((None, None), None),
                    (0, 0),
                );
            }
        };
        let mut policy = ToolPolicy::allowing([name]);
        policy.require_approval.clear();
        if let Some(budgets) = self.budgets {
            policy.budgets = budgets;
        }
        if let Some(connection) = self.ctx.connection_id() {
            policy.connections.allowed_connection_ids.insert(connection.to_owned());
        }
        let runner = ToolRunner::builder(catalog).policy(policy).build();
        runner.exec(name, &args, &self.ctx).await
    }
}
