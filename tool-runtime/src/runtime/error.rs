use std::borrow::Cow;
use std::fmt;

/// A tool's own failure, as the model and the logs will see it.
///
/// The message is shown to the model (so it can correct itself or explain) and recorded: keep
/// it free of secrets and raw data. Mark a failure retryable when trying again later may
/// succeed (a timeout upstream, a rate limit).
///
/// ```
/// use tool_runtime::prelude::*;
///
/// let error = ToolError::new("no order with that number");
/// assert_eq!(error.to_string(), "no order with that number");
/// assert!(!error.is_retryable());
/// assert!(ToolError::retryable("upstream is busy").is_retryable());
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolError {
    message: Cow<'static, str>,
    retryable: bool,
}

impl ToolError {
    /// A failure that will fail again with the same input.
    pub fn new(message: impl Into<Cow<'static, str>>) -> Self {
        Self { message: message.into(), retryable: false }
    }

    /// A failure that may pass if tried again later.
    pub fn retryable(message: impl Into<Cow<'static, str>>) -> Self {
        Self { message: message.into(), retryable: true }
    }

    /// The safe message.
    #[must_use]
    pub fn message(&self) -> &str {
        &self.message
    }

    /// Whether trying again later may succeed.
    #[must_use]
    pub fn is_retryable(&self) -> bool {
        self.retryable
    }
}

impl fmt::Display for ToolError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for ToolError {}
