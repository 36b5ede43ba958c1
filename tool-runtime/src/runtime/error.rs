use std::borrow::Cow;
use std::fmt;

use serde::Serialize;

use super::capabilities::MissingCapability;
use super::interact::{ElicitRequest, InteractError};
use crate::content::PartSummary;
use crate::content::limits::Limited;

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

impl From<MissingCapability> for ToolError {
    fn from(error: MissingCapability) -> Self {
        ToolError::new(error.to_string())
    }
}

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
/// Why a call produced no value: one code per step of the pipeline that can refuse or fail.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum ToolErrorCode {
    /// No tool with that name (or it is not visible to this caller).
    Unavailable,
    /// Policy does not allow the call (or its connection).
    PolicyDenied,
    /// The call needed approval and did not get it.
    ApprovalDenied,
    /// The authorization hook refused the call.
    AuthzDenied,
    /// The arguments are not one well-formed JSON value.
    InvalidJson,
    /// The arguments do not match the input schema (or exceed the size budget).
    Validation,
    /// The tool failed (returned an error or panicked).
    Execution,
    /// The tool ran past its time budget and was stopped.
    Timeout,
    /// The call was cancelled.
    Cancelled,
    /// The tool's output does not match its output schema.
    OutputValidation,
    /// The redacted output is larger than the result budget.
    ResultTooLarge,
    /// The call was not run: the model's turn held it although no more tools could be
    /// called, or did not hold it at all (the agent loop answers it so).
    NotRun,
    /// The model's response was cut off before the call was complete, so it was not run (the
    /// agent loop answers it so).
    Truncated,

    /// A before-call hook blocked the call; the message is the hook's safe reason.
    HookBlocked,
    /// A hook failed (returned an error, panicked, or rewrote the arguments or the result into
    /// something the runner refuses); the message names the hook.
    HookFailed,
    /// A tool called another tool deeper than the policy's
    /// [`max_call_depth`](crate::policy::Budgets::max_call_depth) allows.
    CallDepthExceeded,
    /// A tool called a tool that is already on its chain of calling tools.
    CallCycle,
}

impl ToolErrorCode {
    /// The code as written in JSON (`"policy_denied"`).
    #[must_use]
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Unavailable => "unavailable",
            Self::PolicyDenied => "policy_denied",
            Self::ApprovalDenied => "approval_denied",
            Self::AuthzDenied => "authz_denied",
            Self::InvalidJson => "invalid_json",
            Self::Validation => "validation",
            Self::Execution => "execution",
            Self::Timeout => "timeout",
            Self::Cancelled => "cancelled",
            Self::OutputValidation => "output_validation",
            Self::ResultTooLarge => "result_too_large",
            Self::NotRun => "not_run",
            Self::Truncated => "truncated",

            Self::HookBlocked => "hook_blocked",
            Self::HookFailed => "hook_failed",
            Self::CallDepthExceeded => "call_depth_exceeded",
            Self::CallCycle => "call_cycle",
        }
    }
}

impl fmt::Display for ToolErrorCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The step of the runner's pipeline where a call stopped (see [`ExecError::step`]).
///
/// ```
/// use tool_runtime::runtime::CallStep;
///
/// assert_eq!(serde_json::to_string(&CallStep::Hook).unwrap(), r#""hook""#);
/// assert_eq!(CallStep::Approval.as_str(), "approval");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum CallStep {
    /// Finding the tool by name.
    Lookup,
    /// Policy: the allowlist, the connection grant, the call-depth limit.
    Policy,
    /// The application's [`Authorizer`](crate::runner::Authorizer).
    Authorizer,
    /// Parsing and validating the arguments.
    Validation,
    /// A before-call or after-call hook.
    Hook,
    /// The [`Approver`](crate::runner::Approver).
    Approval,
    /// Fetching the call's credential from the connection broker.
    Credential,
    /// The tool's run.
    Run,
    /// Checking the output against the output schema.
    Output,
    /// Redacting and bounding the result.
    Redaction,
}

impl CallStep {
    /// The step as written in JSON (`"credential"`).
    #[must_use]
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Lookup => "lookup",
            Self::Policy => "policy",
            Self::Authorizer => "authorizer",
            Self::Validation => "validation",
            Self::Hook => "hook",
            Self::Approval => "approval",
            Self::Credential => "credential",
            Self::Run => "run",
            Self::Output => "output",
            Self::Redaction => "redaction",
        }
    }
}

impl fmt::Display for CallStep {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A failed call as the model, the UI and telemetry see it: a code and a safe message (it never
/// repeats raw arguments, outputs or secrets).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ExecError {
    /// Which step refused or failed.
    pub code: ToolErrorCode,
    /// What happened, safe to show.
    pub message: String,
    /// Whether trying again later may succeed.
    pub retryable: bool,
    /// Where in the runner's pipeline the call stopped; set by the runner on every error it
    /// returns (`None` on an error made elsewhere).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub step: Option<CallStep>,
    #[serde(skip)]
    pub(super) refused: Option<Box<RefusedOutput>>,
    /// A question the call asked that waits for the user: a call another tool made cannot wait
    /// itself, so it fails with the question, which its caller may wait on (see
    /// [`ToolError`]'s `From<ExecError>`).
    #[serde(skip)]
    question: Option<Box<ElicitRequest>>,
    /// Whether code the runner called panicked (see [`ExecError::panicked`]).
    #[serde(skip)]
    panicked: bool,
}

/// What the tool returned when the runner refused its result over a limit (step 10) or because
/// it does not match its output schema (step 9): the parts, without their bytes, and what was
/// cut, resized or refused (nothing, for a schema mismatch). Kept in the call's record, so what
/// the tool did is not lost.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RefusedOutput {
    /// The tool's parts, as far as the runner got with them.
    pub parts: Vec<PartSummary>,
    /// What was done to them; the refusal is last. Empty when the output failed its schema.
    pub limited: Vec<Limited>,
}

impl ExecError {
    /// An error with this code and message, not retryable.
    pub fn new(code: ToolErrorCode, message: impl Into<String>) -> Self {
        Self {
            code,
            message: message.into(),
            retryable: false,
            step: None,
            refused: None,
            question: None,
            panicked: false,
        }
    }

    /// This error, marked as the failure of code that panicked.
    #[cfg(feature = "runner")]
    pub(crate) fn after_panic(mut self) -> Self {
        self.panicked = true;
        self
    }

    /// Whether the call failed because code the runner called panicked: the tool (its `run`,
    /// or the decoding of its arguments), a hook, a check or an event sink. Its code is
    /// [`Execution`](ToolErrorCode::Execution) or [`HookFailed`](ToolErrorCode::HookFailed),
    /// as for an error the code returned; this tells the two apart (an MCP task reads as
    /// `failed` after a panic, `completed` with `isError` after a returned error). Not kept
    /// when the error is serialised.
    ///
    /// ```
    /// use tool_runtime::runtime::{ExecError, ToolErrorCode};
    ///
    /// assert!(!ExecError::new(ToolErrorCode::Execution, "disk full").panicked());
    /// ```
    #[must_use]
    pub fn panicked(&self) -> bool {
        self.panicked
    }

    /// The error of a result refused over its limits: `limited` ends with the refusal, whose
    /// code and message the error takes.
    #[cfg(feature = "runner")]
    pub(crate) fn refused(parts: Vec<PartSummary>, limited: Vec<Limited>) -> Self {
        let (code, message) = limited.last().map_or_else(
            || (ToolErrorCode::ResultTooLarge, "the result is over its limits".to_owned()),
            |refusal| (refusal.error_code(), refusal.to_string()),
        );
        Self {
            refused: Some(Box::new(RefusedOutput { parts, limited })),
            ..Self::new(code, message)
        }
    }

    /// The error of a result the runner refused for another reason (its output schema): keeps
    /// what the tool returned for the record, with nothing limited.
    #[cfg(feature = "runner")]
    pub(crate) fn with_output(mut self, parts: Vec<PartSummary>) -> Self {
        self.refused = Some(Box::new(RefusedOutput { parts, limited: Vec::new() }));
        self
    }

    /// This error, carrying a question that waits for the user (see the field).
    #[cfg(feature = "runner")]
    pub(crate) fn with_question(mut self, question: Option<Box<ElicitRequest>>) -> Self {
        self.question = question;
        self
    }

    pub(crate) fn take_question(&mut self) -> Option<Box<ElicitRequest>> {
        self.question.take()
    }

    /// When the runner refused the tool's result (over a limit, or not matching its output
    /// schema): what the tool returned and what was refused.
    ///
    /// ```
    /// use tool_runtime::runtime::{ExecError, ToolErrorCode};
    ///
    /// assert!(ExecError::new(ToolErrorCode::Execution, "disk full").refused_output().is_none());
    /// ```
    #[must_use]
    pub fn refused_output(&self) -> Option<&RefusedOutput> {
        self.refused.as_deref()
    }
}

impl fmt::Display for ExecError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.code, self.message)
    }
}

impl std::error::Error for ExecError {}
