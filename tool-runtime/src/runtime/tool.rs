use std::future::Future;

use serde::de::DeserializeOwned;

use super::{ToolCapabilities, ToolError, ToolInvocationContext};
use crate::content::IntoToolOutput;
use crate::spec::ToolDefinition;

/// The behaviour of a tool: the one trait a tool author implements by hand, on a struct that
/// carries `#[tool(...)]`.
///
/// `run` receives the validated arguments by value, the invocation context (ids only) and the
/// capabilities the tool declared; all IO goes through those capabilities. The returned future
/// must be `Send`, so the runtime can drive it from any thread; writing `async fn run` works.
///
/// Only the runner calls `run`: it alone makes the [`ToolCapabilities`] `run` takes, so every
/// call goes through policy, validation, the output check and redaction. A test runs a tool
/// through a runner too, in one line, with [`testing`](crate::testing).
///
/// ```
/// use tool_runtime::prelude::*;
///
/// /// Add two numbers.
/// #[tool(name = "math__add", effect = read_only, redact = ["sum"])]
/// struct Add { a: i32, b: i32 }
///
/// #[derive(Serialize, ToolSchema)]
/// struct Sum { sum: i64 }
///
/// impl Tool for Add {
///     type Output = Sum;
///     async fn run(self, _ctx: &ToolInvocationContext, _caps: &ToolCapabilities) -> Result<Sum, ToolError> {
///         Ok(Sum { sum: i64::from(self.a) + i64::from(self.b) })
///     }
/// }
///
/// # #[cfg(feature = "runner")]
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// let out = tool_runtime::testing::exec::<Add>(serde_json::json!({"a": 2, "b": 3})).await;
/// assert_eq!(out.value(), Some(&serde_json::json!({"sum": 5})));
/// # });
/// ```
#[diagnostic::on_unimplemented(
    message = "`{Self}` does not implement `Tool`",
    label = "`{Self}` has a `#[tool]` attribute but no behaviour",
    note = "implement it: `impl Tool for {Self} {{ type Output = ...; async fn run(self, ctx: &ToolInvocationContext, caps: &ToolCapabilities) -> Result<Self::Output, ToolError> {{ ... }} }}`"
)]
pub trait Tool: ToolDefinition + DeserializeOwned + Send + Sized + 'static {
    /// What the tool returns: any type with a schema (a struct, `String`, a number, `bool`,
    /// `Vec<T>`, a unit enum, `Option<T>`), whose schema is the tool's output schema and whose
    /// fields `redact` paths name; or a [`Content`](crate::content::Content) of text, images,
    /// audio, files and a structured value.
    type Output: IntoToolOutput;

    /// Runs the tool once.
    fn run(
        self,
        ctx: &ToolInvocationContext,
        caps: &ToolCapabilities,
    ) -> impl Future<Output = Result<Self::Output, ToolError>> + Send;
}
