//! The tool loop users run: model -> tool calls -> runner -> results -> model, until the model
//! answers.
//!
//! An [`Agent`] asks a [`ChatModel`] for a turn, runs the turn's calls through the
//! [`ToolRunner`](crate::runner::ToolRunner) (several at once, results back in the model's
//! order), feeds the results back, and repeats, within an iteration limit, a wall-clock budget
//! and a cancellation token. [`ScriptedModel`] replays recorded provider streams through the
//! real decoders, so the loop runs with no network and no key.
//!
//! A call that must wait for a person (an approver answered `Pending`) or for a client's
//! result (a [`ClientTool`](crate::runtime::ClientTool)) stops the run with
//! [`StopReason::Waiting`] and a sealed [`RunState`] that [`Agent::resume`] takes up later, in
//! another process: see [`deferred`], the guide to deferred runs.
//!
//! ```
//! use std::sync::{Arc, Mutex};
//! use tool_runtime::agent::{Agent, AgentEvent, Message, ScriptedModel, ScriptedTurn, StopReason};
//! use tool_runtime::prelude::*;
//!
//! /// Add two numbers.
//! #[tool(name = "math__add", effect = read_only, redact = ["sum"])]
//! struct Add { a: i64, b: i64 }
//! #[derive(Serialize, ToolSchema)]
//! struct Sum { sum: i64 }
//! impl Tool for Add {
//!     type Output = Sum;
//!     async fn run(self, _: &ToolInvocationContext, _: &ToolCapabilities) -> Result<Sum, ToolError> {
//!         Ok(Sum { sum: self.a + self.b })
//!     }
//! }
//!
//! # tokio::runtime::Runtime::new().unwrap().block_on(async {
//! let runner = ToolRunner::builder(ToolCatalog::builder().register::<Add>().build().unwrap())
//!     .policy(ToolPolicy::allowing(["math__add"]))
//!     .build();
//! let model = ScriptedModel::new([
//!     ScriptedTurn::openai_calls(&[("call_1", "math__add", r#"{"a": 2, "b": 40}"#)]),
//!     ScriptedTurn::openai_text("2 + 40 = 42."),
//! ]);
//! let agent = Agent::new(Arc::new(model), runner);
//!
//! let text = Mutex::new(String::new());
//! let ctx = ToolInvocationContext::new(ContextIds { run_id: "run-1", actor_id: "user-1", tenant_id: "tenant-1" });
//! let output = agent
//!     .run(vec![Message::user("What is 2 + 40?")], &ctx, &|event| {
//!         if let AgentEvent::TextDelta { text: delta } = event {
//!             text.lock().unwrap().push_str(&delta);
//!         }
//!     })
//!     .await;
//! assert_eq!(output.done.stop, StopReason::Answered);
//! assert_eq!(output.done.answer, "2 + 40 = 42.");
//! assert_eq!(*text.lock().unwrap(), "2 + 40 = 42.");
//! assert_eq!(output.done.records[0].result, Some(serde_json::json!({"sum": 42})));
//! # });
//! ```

mod batch;
mod config;
pub mod deferred;
mod events;
#[cfg(feature = "http")]
pub mod http;
mod ids;
mod keep;
mod model;
pub(crate) mod parking;
pub(crate) mod resume;
mod run;
mod sampling;
mod scripted;
mod search;
mod state;
mod turn;
mod waiting;

#[doc(no_inline)]
pub use crate::adapters::openai_sse;
#[doc(no_inline)]
pub use crate::adapters::{Message, ModelRequest, Usage};
pub use config::{Agent, AgentConfig, SelectionSettings, ToolSearchSettings};
#[doc(no_inline)]
pub use deferred::{Decisions, RunState, StateKey};
pub use events::{AgentDone, AgentEvent, AgentOutput, FoundTools, StopReason};
#[cfg(feature = "http")]
#[doc(no_inline)]
pub use http::{
    AnthropicMessages, AnthropicMessagesBuilder, HttpConfigError, LlamaServer, LlamaServerBuilder,
    OpenAiCompatible, OpenAiCompatibleBuilder, OpenAiEmbeddings, OpenAiEmbeddingsBuilder,
    RetryPolicy, Timeouts,
};
pub use model::{ChatModel, ModelError, ModelErrorKind, ModelTurn};
pub use sampling::ChatModelSampler;
pub use scripted::{ScriptedModel, ScriptedTurn, SeenRequest};
