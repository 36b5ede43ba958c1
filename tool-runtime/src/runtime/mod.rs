//! What a running tool sees: its [`ToolInvocationContext`], its [`ToolCapabilities`], the
//! [`Tool`] trait it implements and the [`ToolError`] it may return.

mod capabilities;
mod clock;
mod context;
mod error;
mod tool;

pub use capabilities::{Capability, CapabilityRef, MissingCapability, ToolCapabilities};
pub use clock::Clock;
pub use context::ToolInvocationContext;
pub use error::ToolError;
pub use tool::Tool;
