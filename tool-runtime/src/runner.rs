//! [`ToolRunner::exec`]: the one path every tool call takes.
//!
//! ```text
//!  raw args ──► 1 lookup ──► 2 policy ──► 3 authorize ──► 4 connection ──► 5 parse + validate
//!                 │            │             │                │               │
//!            unavailable  policy_denied  authz_denied    policy_denied   invalid_json
//!                                                                         validation
//!  ──► (approval) ──► 6 capabilities ──► 7 start event ──► 8 run (budget, panics, cancel)
//!          │               │                                  │
//!   approval_denied   authz_denied                   execution / timeout / cancelled
//!  ──► 9 validate output ──► 10 redact + size ──► 11 result event ──► 12 ToolExecResult
//!          │                      │
//!   output_validation     redaction_failed / result_too_large
//! ```
//!
//! Every call yields exactly one [`ToolExecResult`] and one `tool_call_result` event; a call
//! that reaches step 7 also yields one `tool_call_start` event, with the same call id. (A sink
//! whose [`EventSink::enabled`] says `false`, such as [`NullSink`], gets no events, and none
//! are built.) Error messages are safe: they never repeat raw arguments, outputs or secrets.
//!
//! Step 5 first tries the tool's one-pass decoder ([`BoundToolRuntime::validate_raw`]:
//! validation while deserialising, no intermediate JSON value) and falls back to parsing,
//! validating and deserialising in turn, which reports every error.
//!
//! ```
//! use std::sync::Arc;
//! use tool_runtime::catalog::ToolCatalog;
//! use tool_runtime::policy::ToolPolicy;
//! use tool_runtime::prelude::*;
//! use tool_runtime::runner::ToolRunner;
//! use tool_runtime::runtime::{CollectingSink, ToolErrorCode};
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
//! let catalog = ToolCatalog::builder().register::<Add>().build().unwrap();
//! let events = CollectingSink::new();
//! let runner = ToolRunner::builder(catalog)
//!     .policy(ToolPolicy::from_json(r#"{"allowed_tools": ["math__*"]}"#).unwrap())
//!     .event_sink(Arc::new(events.clone()))
//!     .build();
//! let ctx = ToolInvocationContext::new(ContextIds { run_id: "run-1", actor_id: "user-1", tenant_id: "tenant-1" }).with_tool_call_id("call_1");
//!
//! let result = runner.exec("math__add", br#"{"a": 2, "b": 3}"#, &ctx).await;
//! assert_eq!(result.value(), Some(&serde_json::json!({"sum": 5})));   // `debug` is redacted
//! assert_eq!(events.events().len(), 2);                              // start, result
//!
//! let refused = runner.exec("math__add", br#"{"a": "two"}"#, &ctx).await;
//! assert_eq!(refused.error_code(), Some(ToolErrorCode::Validation));
//! # });
//! ```

use std::any::TypeId;
use std::future::{Future, poll_fn};
use std::panic::AssertUnwindSafe;
use std::pin::{Pin, pin};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::task::{Context, Poll};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde_json::Value;
use tracing::Instrument;

use crate::catalog::{ToolCatalog, ToolSource, VisibleTools, visible_tools};
use crate::policy::{
    Approval, ApprovalDecision, ApprovalRequest, Approver, Authorizer, Decision, DenyAll,
    ToolPolicy,
};
use crate::runtime::bound::ArgsJson;
use crate::runtime::{
    Auth, BoundToolRuntime, Clock, EventOutcome, EventSink, ExecError, NullSink, ProgressReporter,
    ToolCapabilities, ToolErrorCode, ToolEvent, ToolExecResult, ToolInvocationContext,
    ValidatedArgs,
};
use crate::schema::{ArgumentsError, Shown, parse_json};

/// Runs tool calls: the only way a tool runs. Cheap to clone.
#[derive(Debug, Clone)]
pub struct ToolRunner {
    catalog: Arc<ToolCatalog>,
    policy: Arc<ToolPolicy>,
    approver: Arc<dyn Approver>,
    /// `None`: every call that policy allows is authorized, with no hook to await (as by
    /// [`AllowAll`](crate::policy::AllowAll)).
    authorizer: Option<Arc<dyn Authorizer>>,
    sink: Arc<dyn EventSink>,
    clock: Clock,
}

/// Builds a [`ToolRunner`]. Defaults: a policy that allows nothing, an approver that denies,
/// an authorizer that allows, no event sink, the system clock.
#[derive(Debug)]
#[must_use]
pub struct ToolRunnerBuilder {
    catalog: Arc<ToolCatalog>,
    policy: Arc<ToolPolicy>,
    approver: Arc<dyn Approver>,
    authorizer: Option<Arc<dyn Authorizer>>,
    sink: Arc<dyn EventSink>,
    clock: Clock,
}

impl ToolRunnerBuilder {
    /// The policy every call is checked against.
    pub fn policy(mut self, policy: ToolPolicy) -> Self {
        self.policy = Arc::new(policy);
        self
    }

    /// Who decides calls that need approval.
    pub fn approver(mut self, approver: Arc<dyn Approver>) -> Self {
        self.approver = approver;
        self
    }

    /// The per-call authorization hook (by default every call policy allows is authorized,
    /// as with [`AllowAll`](crate::policy::AllowAll)).
    pub fn authorizer(mut self, authorizer: Arc<dyn Authorizer>) -> Self {
        self.authorizer = Some(authorizer);
        self
    }

    /// Where events go: any [`EventSink`], such as a clone of a
    /// [`CollectingSink`](crate::runtime::CollectingSink) whose other clone you keep, or an
    /// `Arc` of one.
    pub fn event_sink(mut self, sink: impl EventSink + 'static) -> Self {
        self.sink = Arc::new(sink);
        self
    }

    /// The clock for timestamps in events and records.
    pub fn clock(mut self, clock: Clock) -> Self {
        self.clock = clock;
        self
    }

    /// The runner.
    pub fn build(self) -> ToolRunner {
        ToolRunner {
            catalog: self.catalog,
            policy: self.policy,
            approver: self.approver,
            authorizer: self.authorizer,
            sink: self.sink,
            clock: self.clock,
        }
    }
}

/// What is known about a call while it goes through the pipeline.
struct Call {
    id: String,
    args: Option<ArgsJson>,
    /// Whether the sink takes events (asked once per call).
    events: bool,
}

/// A call id that is unique within the process and unlikely to repeat across processes.
fn mint_call_id() -> String {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let count = COUNTER.fetch_add(1, Ordering::Relaxed);
    let nanos = SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |since| since.as_nanos());
    format!("call_{:016x}{count:08x}", nanos as u64)
}

/// Turns a panic while polling into an error.
struct CatchUnwind<F>(F);

impl<F: Future + Unpin> Future for CatchUnwind<F> {
    type Output = Result<F::Output, ()>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let inner = &mut self.0;
        match std::panic::catch_unwind(AssertUnwindSafe(|| Pin::new(&mut *inner).poll(cx))) {
            Ok(Poll::Ready(output)) => Poll::Ready(Ok(output)),
            Ok(Poll::Pending) => Poll::Pending,
            Err(_) => Poll::Ready(Err(())),
        }
    }
}

/// Counts the bytes of the compact JSON of a value without building it.
struct ByteCount(usize);

impl std::io::Write for ByteCount {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0 += buf.len();
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

fn json_len(value: &Value) -> usize {
    let mut count = ByteCount(0);
    match serde_json::to_writer(&mut count, value) {
        Ok(()) => count.0,
        Err(_) => usize::MAX,
    }
}

/// An upper bound of [`json_len`], without writing anything: every string byte counted as
/// the six of a `\u00XX` escape, every number as the longest a JSON number `serde_json` writes
/// can be.
fn json_len_bound(value: &Value) -> usize {
    /// `-1.7976931348623157e308` has 23 characters; integers have at most 20.
    const NUMBER: usize = 24;
    let string = |text: &str| text.len().saturating_mul(6).saturating_add(2);
    match value {
        Value::Null | Value::Bool(_) => 5,
        Value::Number(_) => NUMBER,
        Value::String(text) => string(text),
        Value::Array(items) => {
            items.iter().fold(2 + items.len(), |sum, item| sum.saturating_add(json_len_bound(item)))
        }
        Value::Object(map) => map.iter().fold(2 + 2 * map.len(), |sum, (key, value)| {
            sum.saturating_add(string(key)).saturating_add(json_len_bound(value))
        }),
    }
}

/// Validates and decodes arguments. Decoding runs the tool type's `Deserialize`, which is user
/// code: a panic there is the tool's failure, not the runner's.
fn decode(
    tool: &dyn BoundToolRuntime,
    value: Value,
    context: &str,
) -> Result<ValidatedArgs, ExecError> {
    let decoded = catch_decode_panic(|| tool.validate_input(value))?;
    decoded.map_err(|error| match error {
        ArgumentsError::Validation(errors) => {
            ExecError::new(ToolErrorCode::Validation, format!("{context}{errors}"))
        }
        other => ExecError::new(ToolErrorCode::Validation, format!("{context}{other}")),
    })
}

/// Runs a tool's argument decoding, which calls the tool type's `Deserialize` (user code): a
/// panic there is the tool's failure, not the runner's.
fn catch_decode_panic<R>(decoding: impl FnOnce() -> R) -> Result<R, ExecError> {
    std::panic::catch_unwind(AssertUnwindSafe(decoding)).map_err(|_| {
        ExecError::new(
            ToolErrorCode::Execution,
            "the tool failed unexpectedly while decoding its arguments (it panicked)",
        )
    })
}

impl ToolRunner {
    /// Starts a runner over `catalog`.
    pub fn builder(catalog: impl Into<Arc<ToolCatalog>>) -> ToolRunnerBuilder {
        ToolRunnerBuilder {
            catalog: catalog.into(),
            policy: Arc::new(ToolPolicy::default()),
            approver: Arc::new(DenyAll),
            authorizer: None,
            sink: Arc::new(NullSink),
            clock: Clock::system(),
        }
    }

    /// The catalog.
    #[must_use]
    pub fn catalog(&self) -> &ToolCatalog {
        &self.catalog
    }

    /// The policy.
    #[must_use]
    pub fn policy(&self) -> &ToolPolicy {
        &self.policy
    }

    /// The tools this caller's model may be shown: [`visible_tools`] over the catalog.
    #[must_use]
    pub fn visible_tools(&self, ctx: &ToolInvocationContext) -> VisibleTools {
        visible_tools(&*self.catalog, &self.policy, ctx)
    }

    /// Runs one call of `tool_id` with the model's raw arguments. Never panics and never
    /// fails: the outcome, good or bad, is in the result. The call id is `ctx.tool_call_id()`,
    /// or a fresh one when the model gave none. Needs a Tokio runtime with timers enabled.
    pub async fn exec(
        &self,
        tool_id: &str,
        raw_args: &[u8],
        ctx: &ToolInvocationContext,
    ) -> ToolExecResult {
        let started_ms = self.clock.epoch_ms();
        let mut call = Call {
            id: ctx.tool_call_id().map_or_else(mint_call_id, str::to_owned),
            args: None,
            events: self.sink.enabled(),
        };
        let span = tracing::info_span!(
            "execute_tool",
            gen_ai.operation.name = "execute_tool",
            gen_ai.tool.name = %Shown(tool_id),
            gen_ai.tool.call.id = %call.id,
            error.r#type = tracing::field::Empty,
        );
        // A call cancelled before it starts does nothing. Otherwise the pipeline is polled
        // first: a call that finishes without waiting never registers with the token. (Polled
        // by hand and pinned where it is: the pipeline's future is large, and `select!` would
        // move it once more.)
        let cancelled = || Err(ExecError::new(ToolErrorCode::Cancelled, "the call was cancelled"));
        let outcome = if ctx.cancellation().is_cancelled() {
            cancelled()
        } else {
            let mut pipeline =
                pin!(self.pipeline(&mut call, tool_id, raw_args, ctx).instrument(span.clone()));
            let mut cancellation = None;
            poll_fn(|cx| {
                if let Poll::Ready(outcome) = pipeline.as_mut().poll(cx) {
                    return Poll::Ready(outcome);
                }
                let cancellation =
                    cancellation.get_or_insert_with(|| Box::pin(ctx.cancellation().cancelled()));
                match cancellation.as_mut().poll(cx) {
                    Poll::Ready(()) => Poll::Ready(cancelled()),
                    Poll::Pending => Poll::Pending,
                }
            })
            .await
        };
        if let Err(error) = &outcome {
            span.record("error.type", error.code.as_str());
        }
        let ended_ms = self.clock.epoch_ms();
        if call.events {
            self.sink.emit(ToolEvent::ToolCallResult {
                tool_call_id: call.id.clone(),
                tool_name: tool_id.to_owned(),
                outcome: match &outcome {
                    Ok(value) => EventOutcome::Ok { value: value.clone() },
                    Err(error) => EventOutcome::Err { error: error.clone() },
                },
                at_ms: ended_ms,
            });
        }
        ToolExecResult::new(call.id, tool_id.to_owned(), outcome, call.args, (started_ms, ended_ms))
    }

    async fn pipeline(
        &self,
        call: &mut Call,
        tool_id: &str,
        raw_args: &[u8],
        ctx: &ToolInvocationContext,
    ) -> Result<Value, ExecError> {
        use ToolErrorCode as Code;
        // 1. Look the tool up.
        let tool = self.catalog.get(tool_id).ok_or_else(|| {
            ExecError::new(
                Code::Unavailable,
                format!("no tool named `{}` is available", Shown(tool_id)),
            )
        })?;
        // 2. Policy.
        let decision = self.policy.decide(ctx, tool_id, tool.effect());
        if let Decision::Deny { reason } = decision {
            return Err(ExecError::new(Code::PolicyDenied, reason));
        }
        // 3. Authorization hook.
        if let Some(authorizer) = &self.authorizer {
            authorizer
                .authorize(ctx, tool.spec())
                .await
                .map_err(|denied| ExecError::new(Code::AuthzDenied, denied.0))?;
        }
        // 4. Connection grant.
        let declares_auth = tool.capabilities().iter().any(|c| c.type_id() == TypeId::of::<Auth>());
        if (tool.requires_connection() || declares_auth) && !self.policy.connection_allowed(ctx) {
            let message = match ctx.connection_id() {
                None => "this tool needs a connection and the call has none",
                Some(_) => "the call's connection is not granted for this request",
            };
            return Err(ExecError::new(Code::PolicyDenied, message));
        }
        // 5. Parse and validate.
        let budgets = self.policy.budgets_for(tool_id);
        if raw_args.len() > budgets.max_argument_bytes {
            return Err(ExecError::new(
                Code::Validation,
                format!(
                    "the arguments are {} bytes; the limit is {}",
                    raw_args.len(),
                    budgets.max_argument_bytes
                ),
            ));
        }
        // A call that needs no approval first tries the tool's one-pass fast path; anything
        // it cannot vouch for (every invalid input among it) takes the ordinary path, which
        // reports every error.
        let fast = match decision {
            Decision::Allow => catch_decode_panic(|| tool.validate_raw(raw_args))?,
            _ => None,
        };
        let mut args = match fast {
            Some(args) => args,
            None => {
                let value = parse_json(raw_args).map_err(|error| {
                    ExecError::new(
                        Code::InvalidJson,
                        format!("the arguments are not valid JSON: {error}"),
                    )
                })?;
                decode(tool.as_ref(), value, "")?
            }
        };
        if decision == Decision::RequireApproval {
            // Recorded even if the approval fails.
            call.args = Some(ArgsJson::from_value(args.value().clone()));
            // Boxed: the approval's state would otherwise make every call's future larger.
            let approval = Box::pin(self.approve(call, tool.as_ref(), args.value(), ctx));
            if let Some(edited) = approval.await? {
                args = edited;
            }
        }
        call.args = Some(args.value_for_record());
        // 6. Capabilities for this call only.
        let caps = self.catalog.capabilities().restricted_to(tool.capabilities());
        let caps =
            if declares_auth { Box::pin(self.with_credential(caps, ctx)).await? } else { caps };
        // 7. Start. Progress becomes an event, and also reaches the reporter the caller put on
        // `ctx`, if any (an MCP server forwards it to its client as notifications). Without
        // events, the caller's context serves as it is when it already names the call.
        let call_ctx;
        let call_ctx = if call.events {
            call_ctx = ctx
                .clone()
                .with_tool_call_id(call.id.clone())
                .with_progress(self.progress_events(&call.id, tool_id, ctx.progress_reporter()));
            self.sink.emit(ToolEvent::ToolCallStart {
                tool_call_id: call.id.clone(),
                tool_name: tool_id.to_owned(),
                run_id: ctx.run_id().to_owned(),
                at_ms: self.clock.epoch_ms(),
            });
            &call_ctx
        } else if ctx.tool_call_id() == Some(call.id.as_str()) {
            ctx
        } else {
            call_ctx = ctx.clone().with_tool_call_id(call.id.clone());
            &call_ctx
        };
        // 8. Run within the budget; a panic is an execution error.
        // The deadline counts from here; the timer is only set up if the tool has to wait.
        let deadline = tokio::time::Instant::now() + Duration::from_millis(budgets.max_runtime_ms);
        let mut run = CatchUnwind(tool.exec(args, call_ctx, &caps));
        let first = poll_fn(|cx| Poll::Ready(Pin::new(&mut run).poll(cx))).await;
        let finished = match first {
            Poll::Ready(finished) => Ok(finished),
            // Boxed: a timer is large, and only a tool that waits needs one.
            Poll::Pending => Box::pin(tokio::time::timeout_at(deadline, run)).await,
        };
        let output = match finished {
            Err(_) => {
                return Err(ExecError::new(
                    Code::Timeout,
                    format!("the tool did not finish within {} ms", budgets.max_runtime_ms),
                ));
            }
            Ok(Err(())) => {
                return Err(ExecError::new(
                    Code::Execution,
                    "the tool failed unexpectedly (it panicked)",
                ));
            }
            Ok(Ok(Err(error))) => {
                return Err(ExecError {
                    code: Code::Execution,
                    message: error.message().to_owned(),
                    retryable: error.is_retryable(),
                });
            }
            Ok(Ok(Ok(output))) => output,
        };
        // 9. Output validation. The details name the unredacted output's fields (an unexpected
        // property's name is text the tool chose), so only their number leaves the runner.
        tool.validate_output(&output).map_err(|errors| {
            ExecError::new(
                Code::OutputValidation,
                format!(
                    "the tool's output does not match its output schema ({} problem{})",
                    errors.len(),
                    if errors.len() == 1 { "" } else { "s" }
                ),
            )
        })?;
        // 10. Redaction and size.
        // A valid output that the allowlist keeps whole needs no walk.
        let redacted = if tool.redaction_keeps_valid_output() {
            output
        } else {
            tool.redact_owned(output)
                .map_err(|error| ExecError::new(Code::RedactionFailed, error.to_string()))?
        };
        // The exact size is only counted when a cheap upper bound exceeds the budget.
        if json_len_bound(&redacted) > budgets.max_result_bytes
            && let size = json_len(&redacted)
            && size > budgets.max_result_bytes
        {
            return Err(ExecError::new(
                Code::ResultTooLarge,
                format!("the result is {size} bytes; the limit is {}", budgets.max_result_bytes),
            ));
        }
        Ok(redacted)
    }

    /// The progress hook of a call whose sink takes events: each report becomes a
    /// `tool_call_progress` event and also goes to `caller`'s reporter, if any.
    fn progress_events(
        &self,
        call_id: &str,
        tool_id: &str,
        caller: Option<ProgressReporter>,
    ) -> ProgressReporter {
        let sink = Arc::clone(&self.sink);
        let (call_id, tool_id) = (call_id.to_owned(), tool_id.to_owned());
        ProgressReporter::new(move |progress| {
            if let Some(caller) = &caller {
                let message = progress.message.clone().unwrap_or_default();
                caller.report(progress.progress, progress.total, message);
            }
            sink.emit(ToolEvent::ToolCallProgress {
                tool_call_id: call_id.clone(),
                tool_name: tool_id.clone(),
                progress,
            });
        })
    }

    /// Asks the approver; `Some` holds the arguments an approver edited, validated.
    async fn approve(
        &self,
        call: &Call,
        tool: &dyn BoundToolRuntime,
        arguments: &Value,
        ctx: &ToolInvocationContext,
    ) -> Result<Option<ValidatedArgs>, ExecError> {
        let request = ApprovalRequest {
            tool_id: tool.id(),
            tool_call_id: &call.id,
            effect: tool.effect(),
            arguments,
            ctx,
        };
        match self.approver.review(&request).await {
            ApprovalDecision::Approved(approval)
                if approval == Approval::of(tool.id(), &call.id, arguments) =>
            {
                Ok(None)
            }
            ApprovalDecision::Approved(_) => Err(ExecError::new(
                ToolErrorCode::ApprovalDenied,
                "the approval was given for another call or other arguments",
            )),
            ApprovalDecision::Denied { message } => {
                Err(ExecError::new(ToolErrorCode::ApprovalDenied, message))
            }
            ApprovalDecision::Edited { arguments } => {
                decode(tool, arguments, "the approver's edited arguments: ").map(Some)
            }
        }
    }

    /// Adds the call's credential to `caps`, for a tool that declares [`Auth`].
    async fn with_credential(
        &self,
        caps: ToolCapabilities,
        ctx: &ToolInvocationContext,
    ) -> Result<ToolCapabilities, ExecError> {
        let denied = |message: String| ExecError::new(ToolErrorCode::AuthzDenied, message);
        let connection =
            ctx.connection_id().ok_or_else(|| denied("the call has no connection".to_owned()))?;
        let broker = self
            .catalog
            .broker()
            .ok_or_else(|| denied("no connection broker is bound".to_owned()))?;
        let credential =
            broker.credential(ctx, connection).await.map_err(|error| denied(error.to_string()))?;
        Ok(caps.with(Auth::new(connection.to_owned(), credential)))
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::{json_len, json_len_bound};

    #[test]
    fn the_size_bound_is_never_below_the_size() {
        let values = [
            json!(null),
            json!(true),
            json!(false),
            json!(-9_223_372_036_854_775_808_i64),
            json!(u64::MAX),
            json!(-1.797_693_134_862_315_7e308),
            json!(5e-324),
            json!(""),
            json!("\u{0}\u{1f}\"\\\n caf\u{e9} \u{1F600}"),
            json!([]),
            json!([null, [[]], {}]),
            json!({"": "", "\u{7}": [1, 2.5, {"k\"": null}], "long": "x".repeat(1000)}),
        ];
        for value in &values {
            assert!(json_len_bound(value) >= json_len(value), "{value}");
        }
        assert_eq!(json_len(&json!({"a": [1, "b"]})), r#"{"a":[1,"b"]}"#.len());
    }
}
