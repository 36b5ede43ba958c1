use std::borrow::Cow;
use std::fmt;

use super::interact::{ElicitRequest, InteractError};
use super::result::ExecError;

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
///
/// A tool whose question to the user waits (an [`InteractError::Waiting`] it returns with `?`,
/// or the error of a call it made that failed on such a question, converted with `?` or
/// `into()`) hands the question back with its error: the runner then ends the call waiting on it
/// when the tool declares [`Interact`](super::Interact), and failed otherwise.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolError {
    message: Cow<'static, str>,
    retryable: bool,
    question: Option<Box<ElicitRequest>>,
}

impl ToolError {
    /// A failure that will fail again with the same input.
    pub fn new(message: impl Into<Cow<'static, str>>) -> Self {
        Self { message: message.into(), retryable: false, question: None }
    }

    /// A failure that may pass if tried again later.
    pub fn retryable(message: impl Into<Cow<'static, str>>) -> Self {
        Self { message: message.into(), retryable: true, question: None }
    }

    /// The question to the user this failure waits on, if any (see above).
    #[cfg(feature = "runner")]
    pub(crate) fn take_question(&mut self) -> Option<Box<ElicitRequest>> {
        self.question.take()
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

/// A failed call a tool made (through [`ToolCalls`](crate::runner::ToolCalls)) as the calling
/// tool's own failure: the message is the error's `code: message`, and a question the called
/// tool left waiting goes along (the caller then waits on it, if it declares `Interact`).
///
/// ```
/// use tool_runtime::prelude::*;
/// use tool_runtime::runtime::{ExecError, ToolErrorCode};
///
/// let failed = ExecError::new(ToolErrorCode::Timeout, "the hotel did not answer");
/// assert_eq!(ToolError::from(failed).message(), "timeout: the hotel did not answer");
/// ```
impl From<ExecError> for ToolError {
    fn from(mut error: ExecError) -> Self {
        let question = error.take_question();
        Self { message: error.to_string().into(), retryable: error.retryable, question }
    }
}

impl From<InteractError> for ToolError {
    fn from(error: InteractError) -> Self {
        let message = error.to_string().into();
        let question = match error {
            InteractError::Waiting(question) => Some(question),
            _ => None,
        };
        Self { message, retryable: false, question }
    }
}
