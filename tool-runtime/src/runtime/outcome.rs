//! How a call ended: [`CallOutcome`], one of done, failed or waiting. Waiting is not a failure:
//! the call did not run (or ran up to a question) and will be decided later.

use serde::{Deserialize, Serialize};

use super::error::ExecError;
use super::interact::ElicitRequest;
use crate::content::ToolOutput;

/// How one call through the runner ended: the one vocabulary the runner, its events, the
/// records, the agent loop, the MCP server and telemetry share.
///
/// - [`Done`](Self::Done): the tool ran and its output passed every check; what is held is
///   redacted and bounded.
/// - [`Failed`](Self::Failed): a step refused the call or the tool failed; the error has a
///   typed [code](super::ToolErrorCode) and a safe message.
/// - [`Waiting`](Self::Waiting): the call waits for something outside the runner (an
///   approval, a client's result, the user's answer). It is not a failure: nothing counts it as
///   an error, and its span carries no error status.
///
/// ```
/// use tool_runtime::runtime::{CallOutcome, ExecError, ToolErrorCode};
///
/// let failed = CallOutcome::Failed(ExecError::new(ToolErrorCode::Timeout, "too slow"));
/// assert_eq!(failed.error().map(|error| error.code), Some(ToolErrorCode::Timeout));
/// assert!(!failed.is_done() && failed.waiting().is_none());
/// ```
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum CallOutcome {
    /// The redacted output: every part, and the details.
    Done(ToolOutput),
    /// The error.
    Failed(ExecError),
    /// What the call waits for.
    Waiting(Waiting),
}

impl CallOutcome {
    /// Whether the call produced its output.
    #[must_use]
    #[inline]
    pub fn is_done(&self) -> bool {
        matches!(self, Self::Done(_))
    }

    /// The output, when the call is done.
    #[must_use]
    #[inline]
    pub fn output(&self) -> Option<&ToolOutput> {
        match self {
            Self::Done(output) => Some(output),
            _ => None,
        }
    }

    /// The error, when the call failed.
    #[must_use]
    #[inline]
    pub fn error(&self) -> Option<&ExecError> {
        match self {
            Self::Failed(error) => Some(error),
            _ => None,
        }
    }

    /// What the call waits for, when it waits.
    #[must_use]
    #[inline]
    pub fn waiting(&self) -> Option<&Waiting> {
        match self {
            Self::Waiting(waiting) => Some(waiting),
            _ => None,
        }
    }

    /// The outcome as a `Result` of the output, for code that treats a waiting call like any
    /// call without output: `Err` holds the error, or `None` for a call that waits.
    ///
    /// # Errors
    ///
    /// When the call did not produce its output.
    #[inline]
    pub fn as_result(&self) -> Result<&ToolOutput, Option<&ExecError>> {
        match self {
            Self::Done(output) => Ok(output),
            Self::Failed(error) => Err(Some(error)),
            Self::Waiting(_) => Err(None),
        }
    }
}

/// What a waiting call waits for.
///
/// As JSON: `"approval"`, `"client"`, `"elicitation"`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum WaitsFor {
    /// A person's (or a system's) approval: an [`Approver`](crate::runner::Approver) or a
    /// before-call hook deferred the decision. Decided with approve, edit or deny.
    Approval,
    /// The result of a [`ClientTool`](crate::runtime::ClientTool), which the application's
    /// client runs. Decided with supply (or deny).
    Client,
    /// The user's answer to a question the tool asked
    /// ([`Interact::elicit`](crate::runtime::Interact::elicit)) where nobody could answer at
    /// once (the agent loop). Decided with answer (or deny).
    Elicitation,
}

impl WaitsFor {
    /// The word as written in JSON (`"approval"`).
    #[must_use]
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Approval => "approval",
            Self::Client => "client",
            Self::Elicitation => "elicitation",
        }
    }
}

/// A call that waits: for what, a message safe to show, and for a question the question.
///
/// ```
/// use tool_runtime::runtime::{Waiting, WaitsFor};
///
/// let waiting = Waiting::new(WaitsFor::Approval, "the call waits for approval");
/// assert_eq!(
///     serde_json::to_value(&waiting).unwrap(),
///     serde_json::json!({"waits_for": "approval", "message": "the call waits for approval"})
/// );
/// ```
#[derive(Debug, Clone, PartialEq, Serialize)]
#[non_exhaustive]
pub struct Waiting {
    /// For what.
    pub waits_for: WaitsFor,
    /// What it waits for, in words safe to show (an approver's or a hook's reason).
    pub message: String,
    /// For [`WaitsFor::Elicitation`]: the question the user is to answer.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub question: Option<ElicitRequest>,
}

impl Waiting {
    /// A call that waits for `waits_for`, with a message safe to show.
    pub fn new(waits_for: WaitsFor, message: impl Into<String>) -> Self {
        Self { waits_for, message: message.into(), question: None }
    }

    /// A call that waits for the user's answer to `question`.
    #[must_use]
    pub fn question(question: ElicitRequest) -> Self {
        Self {
            waits_for: WaitsFor::Elicitation,
            message: "the call waits for the user's answer".to_owned(),
            question: Some(question),
        }
    }
}
