//! What a running tool sees: its [`ToolInvocationContext`], its [`ToolCapabilities`], the
//! [`Tool`] trait it implements and the [`ToolError`] it may return; and how the runner sees a
//! tool ([`BoundToolRuntime`]), what a call produces ([`ToolExecResult`] with its
//! [`CallOutcome`]: done, failed or waiting; [`ToolInvocationRecord`]) and the [`ToolEvent`]s it
//! emits.

mod auth;
pub(crate) mod bound;
mod capabilities;
#[cfg(feature = "dynamic")]
mod client;
mod clock;
pub(crate) mod context;
#[cfg(feature = "dynamic")]
mod dynamic;
mod error;
mod events;
pub(crate) mod interact;
mod outcome;
mod partial;
mod raw;
pub(crate) mod result;
mod tool;

pub use auth::{Auth, BrokerError, ConnectionBroker, Credential};
pub use bound::{Arguments, BoundToolRuntime, StaticTool, ValidatedArgs};
pub use capabilities::{Capability, CapabilityRef, MissingCapability, ToolCapabilities};
#[cfg(feature = "dynamic")]
pub use client::ClientTool;
pub use clock::Clock;
pub use context::{
    ContextIds, LogLevel, LogMessage, LogReporter, Progress, ProgressReporter,
    ToolInvocationContext,
};
#[cfg(feature = "dynamic")]
pub use dynamic::{DynamicFuture, DynamicTool, DynamicToolBuilder, DynamicToolError};
pub use error::{CallStep, ExecError, RefusedOutput, ToolError, ToolErrorCode};
pub use events::{ChannelSink, CollectingSink, EventOutcome, EventSink, NullSink, ToolEvent};
pub use interact::{
    Answered, Completion, ElicitAnswer, ElicitRequest, ElicitResponse, Elicitation, Interact,
    InteractError, InteractFuture, InteractKind, Interactor, Root, SampleMessage, SampleRequest,
    SampleRole,
};
pub use outcome::{CallOutcome, Waiting, WaitsFor};
pub use partial::{MAX_PARTIAL_PARTS, Partial};
pub use raw::{MAX_RAW_CALL_BYTES, RawCall};
pub use result::{ToolCallCounts, ToolCallStats, ToolExecResult, ToolInvocationRecord};
pub use tool::Tool;
