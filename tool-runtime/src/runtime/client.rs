//! Client tools: declared with a spec like any tool, run by the application or its client.

use std::fmt;

use async_trait::async_trait;
use serde_json::Value;

use super::{
    Arguments, BoundToolRuntime, DynamicTool, DynamicToolBuilder, DynamicToolError,
    ToolCapabilities, ToolError, ToolInvocationContext, ValidatedArgs,
};
use crate::content::ToolOutput;
use crate::schema::{ArgumentsError, ValidationErrors};
use crate::spec::ToolSpec;

/// A tool the model may call that the application (or its client: a browser, a mobile app)
/// runs, not the runner (seed 002 §8.3). Its calls go through policy, approval and argument
/// validation like any other, then end waiting for the client
/// ([`ToolExecResult::is_waiting`](crate::runtime::ToolExecResult::is_waiting),
/// [`WaitsFor::Client`](crate::runtime::WaitsFor::Client)) with their
/// validated arguments; the agent loop stops with a [`RunState`](crate::agent::RunState) that
/// lists them, and the application supplies each result on resume
/// ([`Decisions::supply`](crate::agent::Decisions::supply)). A supplied result is validated
/// against the output schema and redacted like any tool's; one that does not match is that
/// call's `output_validation` error, which the model sees.
///
/// A client tool whose arguments and results are Rust types is declared with the attribute
/// instead, checked at compile time: `#[tool(..., client = Output)]` (see the
/// [attribute's docs](macro@crate::tool#client)). One whose schemas are known only at run time
/// is declared with a [`DynamicTool::builder`] (name, description, input schema, and the output
/// schema and redaction its results must meet) and registered as a bound tool:
///
/// ```
/// use std::sync::Arc;
/// use serde_json::json;
/// use tool_runtime::prelude::*;
/// use tool_runtime::runtime::{BoundToolRuntime, ClientTool, DynamicTool};
///
/// let pick = ClientTool::new(
///     DynamicTool::builder(
///         "ui__pick_date",
///         "Ask the user to pick a date in their calendar.",
///         json!({"type": "object", "properties": {"prompt": {"type": "string"}}, "required": ["prompt"], "additionalProperties": false}),
///     )
///     .effect(ToolEffect::ReadOnly)
///     .output_schema(json!({"type": "object", "properties": {"date": {"type": "string"}}, "required": ["date"], "additionalProperties": false}))
///     .redact(["date"]),
/// )
/// .unwrap();
/// assert!(pick.runs_on_client());
///
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// let catalog = ToolCatalog::builder().register_bound(Arc::new(pick), "the date picker".into()).build().unwrap();
/// let runner = ToolRunner::builder(catalog).policy(ToolPolicy::allowing(["ui__*"])).build();
/// let ctx = ToolInvocationContext::new(ContextIds { run_id: "run-1", actor_id: "user-1", tenant_id: "acme" });
/// let waiting = runner.exec("ui__pick_date", r#"{"prompt": "When?"}"#, &ctx).await;
/// assert!(waiting.is_waiting());
/// assert_eq!(waiting.args(), Some(&json!({"prompt": "When?"})));
/// let refused = runner.exec("ui__pick_date", r#"{"prompt": 3}"#, &ctx).await;
/// assert_eq!(refused.error_code(), Some(ToolErrorCode::Validation));
/// # });
/// ```
pub struct ClientTool(DynamicTool);

impl ClientTool {
    /// A client tool declared by `declaration` (its effect, schemas and redaction count as for
    /// any dynamic tool).
    ///
    /// # Errors
    ///
    /// What [`DynamicToolBuilder::build`] refuses: a bad name, a schema outside the subset, a
    /// redaction path the output schema does not have.
    pub fn new(declaration: DynamicToolBuilder) -> Result<Self, DynamicToolError> {
        declaration
            .build(|_, _, _| async {
                // The runner never runs a client tool; only a caller driving the bound tool by
                // hand gets here.
                Err::<Value, _>(ToolError::new("this tool runs on the client, not in the runner"))
            })
            .map(|tool| Self(tool.for_client()))
    }
}

impl fmt::Debug for ClientTool {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("ClientTool").field(&self.0.spec().name()).finish()
    }
}

#[async_trait]
impl BoundToolRuntime for ClientTool {
    fn spec(&self) -> &ToolSpec {
        self.0.spec()
    }

    fn arguments(&self, args: Arguments<'_>) -> Result<ValidatedArgs, ArgumentsError> {
        self.0.arguments(args)
    }

    async fn exec(
        &self,
        args: ValidatedArgs,
        ctx: &ToolInvocationContext,
        caps: &ToolCapabilities,
    ) -> Result<ToolOutput, ToolError> {
        self.0.exec(args, ctx, caps).await
    }

    fn validate_output(&self, output: &Value) -> Result<(), ValidationErrors> {
        self.0.validate_output(output)
    }
}
