//! Model Context Protocol interop, over [`rmcp`] (the official Rust MCP SDK; feature `mcp`, or
//! `mcp-server` or `mcp-client` for one side).
//!
//! Two directions:
//!
//! - **Serve**: [`McpServer`] turns a [`ToolRunner`](crate::runner::ToolRunner) into an MCP
//!   server, over stdio ([`McpServer::serve_stdio`]), Streamable HTTP
//!   ([`McpServer::serve_http`], [`McpServer::http_service`], within [`HttpLimits`]) or any
//!   rmcp transport. Clients see exactly what the runner's policy shows, and every call goes
//!   through [`ToolRunner::exec`](crate::runner::ToolRunner::exec): policy, approval, validation,
//!   budgets and redaction all apply. Results go out as MCP content blocks (text, images,
//!   audio, resources) with `structuredContent` matching an always-object `outputSchema`; a
//!   tool's [log messages](crate::runtime::ToolInvocationContext::log) and progress reach the
//!   client; [`McpServerBuilder::serve_as`] serves a tool under the name a client expects. A
//!   tool that declares [`Interact`](crate::runtime::Interact) asks the calling client's user
//!   (`elicitation/create`) or model (`sampling/createMessage`), when the client declared the
//!   capability.
//! - **Import**: [`McpToolSource`] connects to an MCP server (a child process over stdio, or
//!   Streamable HTTP) and offers its tools as untrusted dynamic tools named
//!   `mcp__<server>__<tool>` ([`imported_tool_name`]). Policy shows them only when
//!   `allowed_tools` names them exactly; their arguments and outputs are validated against the
//!   server's schemas; content blocks become [parts](crate::content::Part) (an image stays an
//!   image); redaction lets no structured field through unless the application allowlists fields
//!   ([`McpImportOptions::redact`]); tools with forbidden schema constructs are
//!   [refused with the reason](McpToolSource::refused); effects are read from annotations,
//!   most cautious reading first ([`effect_from_annotations`]).
//!
//! The round trip below serves a catalog and imports it again over an in-memory pipe:
//!
//! ```
//! use tool_runtime::catalog::{ToolCatalog, ToolSource, visible_tools};
//! use tool_runtime::mcp::{McpImportOptions, McpServer, McpToolSource, ServerName};
//! use tool_runtime::policy::ToolPolicy;
//! use tool_runtime::prelude::*;
//! use tool_runtime::runner::ToolRunner;
//!
//! /// Add two numbers.
//! #[tool(name = "math__add", effect = read_only, redact = ["sum"])]
//! struct Add { a: i32, b: i32 }
//! #[derive(Serialize, ToolSchema)]
//! struct Sum { sum: i64, debug: String }
//! impl Tool for Add {
//!     type Output = Sum;
//!     async fn run(self, _: &ToolInvocationContext, _: &ToolCapabilities) -> Result<Sum, ToolError> {
//!         Ok(Sum { sum: i64::from(self.a) + i64::from(self.b), debug: "internal".into() })
//!     }
//! }
//!
//! # tokio::runtime::Runtime::new().unwrap().block_on(async {
//! // Serve: the policy decides what clients see.
//! let catalog = ToolCatalog::builder().register::<Add>().build().unwrap();
//! let policy = ToolPolicy::from_json(r#"{"allowed_tools": ["math__*"]}"#).unwrap();
//! let server = McpServer::builder(ToolRunner::builder(catalog).policy(policy).build()).build();
//! let listed = server.tools();
//! assert_eq!(listed[0].name, "math__add");
//! assert_eq!(listed[0].annotations.as_ref().unwrap().read_only_hint, Some(true));
//!
//! let (ours, theirs) = tokio::io::duplex(64 * 1024);
//! tokio::spawn(async move {
//!     use tool_runtime::mcp::rmcp::ServiceExt;
//!     if let Ok(running) = server.serve(theirs).await {
//!         let _ = running.waiting().await;
//!     }
//! });
//!
//! // Import: untrusted until the policy names the tool exactly.
//! let options = McpImportOptions::new().redact("mcp__calc__math__add", ["sum"]);
//! let source = McpToolSource::connect(ServerName::new("calc").unwrap(), ours, options).await.unwrap();
//! assert!(source.get("mcp__calc__math__add").is_some());
//!
//! let ctx = ToolInvocationContext::new(ContextIds { run_id: "run-1", actor_id: "user-1", tenant_id: "tenant-1" });
//! let catalog = ToolCatalog::builder().source(std::sync::Arc::new(source)).build().unwrap();
//! assert!(ToolPolicy::from_json(r#"{"allowed_tools": ["mcp__*"]}"#).is_err(), "exact names only");
//! let hidden = ToolPolicy::from_json(r#"{"allowed_tools": ["math__*"]}"#).unwrap();
//! assert!(visible_tools(&catalog, &hidden, &ctx).is_empty());
//!
//! let policy = ToolPolicy::from_json(r#"{"allowed_tools": ["mcp__calc__math__add"]}"#).unwrap();
//! let runner = ToolRunner::builder(catalog).policy(policy).build();
//! let result = runner.exec("mcp__calc__math__add", br#"{"a": 2, "b": 3}"#, &ctx).await;
//! assert_eq!(result.value(), Some(&serde_json::json!({"sum": 5})));
//! # });
//! ```
//!
//! A binary serving over stdio, and an import from a child process:
//!
//! ```no_run
//! # use tool_runtime::mcp::{McpImportOptions, McpServer, McpToolSource, ServerName};
//! # use tool_runtime::runner::ToolRunner;
//! # async fn serve(runner: ToolRunner) -> Result<(), Box<dyn std::error::Error>> {
//! McpServer::builder(runner).server_info("my-tools", "1.0.0").build().serve_stdio().await?;
//! # Ok(()) }
//! # async fn import() -> Result<(), Box<dyn std::error::Error>> {
//! let mut command = tokio::process::Command::new("github-mcp-server");
//! command.arg("stdio");
//! let github = McpToolSource::connect_stdio(ServerName::new("github")?, command, McpImportOptions::new()).await?;
//! for refused in github.refused() {
//!     eprintln!("not imported: {refused}");
//! }
//! # Ok(()) }
//! ```

#[cfg(feature = "mcp-server")]
mod asks;
#[cfg(feature = "mcp-server")]
mod auth;
mod headers;
#[cfg(feature = "mcp-client")]
mod import;
#[cfg(feature = "mcp-server")]
mod interact;
#[cfg(feature = "mcp-server")]
mod limits;
#[cfg(feature = "mcp-server")]
mod logging;
mod names;
#[cfg(feature = "mcp-server")]
mod prompts;
#[cfg(feature = "mcp-client")]
mod remote;
#[cfg(feature = "mcp-server")]
mod results;
#[cfg(feature = "mcp-server")]
mod rounds;
#[cfg(feature = "mcp-server")]
mod serve;
#[cfg(feature = "mcp-server")]
mod streamable;
#[cfg(feature = "mcp-server")]
mod tasks;
mod text;
#[cfg(feature = "mcp-server")]
mod wire;

#[cfg(feature = "mcp-server")]
pub use auth::{Authenticator, Unauthorized};
#[cfg(feature = "mcp-server")]
pub use headers::ParamHeaderError;
#[cfg(feature = "mcp-client")]
pub use import::{
    McpImportError, McpImportOptions, McpToolSource, RefusalReason, RefusedTool,
    effect_from_annotations,
};
#[cfg(feature = "mcp-server")]
pub use limits::HttpLimits;
pub use names::{ServerName, ServerNameError, imported_tool_name};
#[cfg(feature = "mcp-server")]
pub use prompts::{McpPrompt, PromptFuture, PromptRequest};
#[cfg(feature = "mcp-server")]
pub use serve::{
    McpServeError, McpServer, McpServerBuilder, ServedNameError, ToolHints, annotations,
};
#[cfg(feature = "mcp-server")]
pub use streamable::McpHttpService;
#[cfg(feature = "mcp-server")]
pub use tasks::TaskSupport;

/// The rmcp crate this module is built on, for transports, the model types and clients.
pub use rmcp;

/// The `http` crate's types an [`Authenticator`] reads a request through.
#[cfg(feature = "mcp-server")]
pub use hyper::http;
