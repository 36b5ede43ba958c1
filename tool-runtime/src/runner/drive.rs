//! The mechanics under the pipeline's steps: call ids, panic guards, the hand-polled call
//! against its cancellation token, the time budget, and the cheap bound on a value's JSON size.
//! Nothing here decides anything; each piece is shaped by what it costs per call (see
//! BENCHMARKS.md, "Runner overhead").

use std::future::{Future, poll_fn};
use std::panic::AssertUnwindSafe;
use std::pin::Pin;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicU64, Ordering};
use std::task::{Context, Poll};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::runtime::{ExecError, ToolErrorCode};

/// A call id that is unique within the process and unlikely to repeat across processes.
pub(super) fn mint_call_id() -> String {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let count = COUNTER.fetch_add(1, Ordering::Relaxed);
    let nanos = SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |since| since.as_nanos());
    format!("call_{:016x}{count:08x}", nanos as u64)
}

/// The error of a call cancelled through its token.
pub(super) fn cancelled() -> ExecError {
    ExecError::new(ToolErrorCode::Cancelled, "the call was cancelled")
}

/// Polls `pipeline` to its end unless `token` is cancelled first. The pipeline is polled
/// first, so a call that finishes without waiting never registers with the token; it is
/// polled where the caller pinned it (its future is large, and `select!` would move it once
/// more).
///
/// A panic in any step (a hook, the output check, redaction, the event sink) ends the call
/// with an `execution` error instead of unwinding into the caller: the call still gets its one
/// result. (The tool's own run is guarded closer, in [`within_budget`].)
pub(super) async fn until_cancelled<T, E: From<ExecError>>(
    mut pipeline: Pin<&mut impl Future<Output = Result<T, E>>>,
    token: &CancellationToken,
) -> Result<T, E> {
    let mut cancellation = None;
    let mut panicked = false;
    poll_fn(|cx| {
        if panicked {
            return Poll::Ready(Err(step_panicked().into()));
        }
        match std::panic::catch_unwind(AssertUnwindSafe(|| pipeline.as_mut().poll(cx))) {
            Ok(Poll::Ready(outcome)) => return Poll::Ready(outcome),
            Ok(Poll::Pending) => {}
            Err(_) => {
                panicked = true;
                return Poll::Ready(Err(step_panicked().into()));
            }
        }
        let cancellation = cancellation.get_or_insert_with(|| Box::pin(token.cancelled()));
        match cancellation.as_mut().poll(cx) {
            Poll::Ready(()) => Poll::Ready(Err(cancelled().into())),
            Poll::Pending => Poll::Pending,
        }
    })
    .await
}

/// The error of a call one of whose steps panicked.
pub(super) fn step_panicked() -> ExecError {
    ExecError::new(
        ToolErrorCode::Execution,
        "the call failed unexpectedly in the runner (a hook, check or event sink panicked)",
    )
    .after_panic()
}

/// Runs `step` (user code the runner calls: an event sink, a progress hook), swallowing a
/// panic: what it reports on has happened either way.
#[inline]
pub(super) fn guarded<R>(step: impl FnOnce() -> R) -> Option<R> {
    std::panic::catch_unwind(AssertUnwindSafe(step)).ok()
}

/// The time budget of one call: the authorizer, the approver, the credential broker, the hooks
/// and the tool's run all fit in it. The clock starts when the call first waits (what comes before is
/// bounded work on the call's own thread: lookup, policy, validation), so a call that never
/// waits never reads it. A budget past the clock's range has no deadline.
#[derive(Debug)]
pub(super) struct Deadline {
    at: OnceLock<Option<tokio::time::Instant>>,
    budget_ms: u64,
}

impl Deadline {
    /// `budget_ms` from the call's first wait.
    pub(super) fn after(budget_ms: u64) -> Self {
        Self { at: OnceLock::new(), budget_ms }
    }

    /// A deadline at the same instant (fixed now if it was not yet), for a step that waits
    /// after this one is gone.
    pub(super) fn shared(&self) -> Self {
        Self { at: OnceLock::from(self.at()), budget_ms: self.budget_ms }
    }

    /// When the budget runs out, fixed the first time it is asked.
    fn at(&self) -> Option<tokio::time::Instant> {
        *self.at.get_or_init(|| {
            tokio::time::Instant::now().checked_add(Duration::from_millis(self.budget_ms))
        })
    }

    /// Awaits `step` (named `what` for the message) within the budget -> `timeout`.
    pub(super) async fn bound<F: Future>(
        &self,
        step: F,
        what: &str,
    ) -> Result<F::Output, ExecError> {
        let mut step = std::pin::pin!(step);
        // Most steps (a hook that decides at once, an authorizer with its answer at hand) end
        // on their first poll: they read no clock and set no timer. A step that ends at once
        // also wins over a budget already spent, as it would under the timer.
        let first = poll_fn(|cx| Poll::Ready(step.as_mut().poll(cx))).await;
        if let Poll::Ready(output) = first {
            return Ok(output);
        }
        let Some(at) = self.at() else { return Ok(step.await) };
        // Boxed: only the steps that wait pay for a timer.
        Box::pin(tokio::time::timeout_at(at, step)).await.map_err(|_| {
            ExecError::new(
                ToolErrorCode::Timeout,
                format!(
                    "the call did not finish within {} ms (it was waiting for {what})",
                    self.budget_ms
                ),
            )
        })
    }
}

/// How a tool's run ended.
pub(super) enum Ran<T> {
    /// It returned.
    Finished(T),
    /// It panicked.
    Panicked,
    /// It was still running when its time budget ran out (and was dropped).
    TimedOut,
}

/// Runs `run` until `deadline` (what is left of the call's budget), catching panics. The
/// timer is only set up if the tool has to wait.
pub(super) async fn within_budget<F: Future + Unpin>(
    run: F,
    deadline: &Deadline,
) -> Ran<F::Output> {
    let mut run = CatchUnwind(run);
    let first = poll_fn(|cx| Poll::Ready(Pin::new(&mut run).poll(cx))).await;
    let finished = match first {
        Poll::Ready(finished) => finished,
        // Boxed: a timer is large, and only a tool that waits needs one.
        Poll::Pending => match deadline.at() {
            Some(at) => match Box::pin(tokio::time::timeout_at(at, run)).await {
                Ok(finished) => finished,
                Err(_) => return Ran::TimedOut,
            },
            None => run.await,
        },
    };
    match finished {
        Ok(output) => Ran::Finished(output),
        Err(()) => Ran::Panicked,
    }
}

/// Turns a panic while polling into an error.
pub(crate) struct CatchUnwind<F>(pub(crate) F);

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

/// Runs a tool's argument decoding, which calls the tool type's `Deserialize` (user code): a
/// panic there is the tool's failure, not the runner's.
pub(super) fn catch_decode_panic<R>(decoding: impl FnOnce() -> R) -> Result<R, ExecError> {
    std::panic::catch_unwind(AssertUnwindSafe(decoding)).map_err(|_| {
        ExecError::new(
            ToolErrorCode::Execution,
            "the tool failed unexpectedly while decoding its arguments (it panicked)",
        )
        .after_panic()
    })
}

/// `text` with every occurrence of `secret` replaced; `None` when it holds none.
pub(super) fn scrubbed(text: &str, secret: &str) -> Option<String> {
    (!secret.is_empty() && text.contains(secret)).then(|| text.replace(secret, "[redacted]"))
}

/// The size of `value`'s compact JSON when it exceeds `limit`; `None` when it does not. The
/// exact size is only counted when a cheap upper bound exceeds the limit.
pub(super) fn json_len_over(value: &Value, limit: usize) -> Option<usize> {
    if json_len_bound(value) <= limit {
        return None;
    }
    Some(json_len(value)).filter(|size| *size > limit)
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

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::{json_len, json_len_bound, json_len_over};

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

    #[test]
    fn only_a_size_over_the_limit_is_reported() {
        let value = json!({"a": [1, "b"]}); // 13 bytes, bound far above
        assert_eq!(json_len_over(&value, 13), None);
        assert_eq!(json_len_over(&value, 12), Some(13));
        assert_eq!(json_len_over(&value, 1000), None);
    }
}
