//! Load: 100 000 calls through one runner, and a chaos run in which 10%
//! of the calls panic, 10% time out and 10% are cancelled mid-flight. Every call id has exactly
//! one start and one result, and memory stays flat: the peak RSS (`VmHWM`, reset through
//! `/proc/self/clear_refs` before each half) of a run's second half is within 50 bytes per call
//! of its first half's, so a leak of 100 bytes per call fails (a test plants one and sees the
//! check fail), and a peak that cannot be read fails rather than passing as 0. Events are
//! counted as they are emitted (a queue of them would grow with the backlog, not with the
//! runner). Nothing is timed.
//!
//! Both runs are in the default `cargo test`; they print their peak RSS (`--nocapture`). A test
//! binary of its own: the peak RSS is the process's, and tests of other suites running beside
//! these in one process would move it.

use std::future::Future;
use std::pin::pin;
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Waker};

use serde_json::json;
use tool_runtime::catalog::ToolCatalog;
use tool_runtime::policy::ToolPolicy;
use tool_runtime::prelude::*;
use tool_runtime::runner::ToolRunner;
use tool_runtime::runtime::{CallOutcome, EventSink, ToolEvent};
use tool_tests::fixtures::context;

/// Peak RSS may grow this much per call of a run's second half: half of what a leak of 100
/// bytes per call would add (50 000 calls keeping 100 bytes each grow it by about 5 MiB), and
/// about twenty times the allocator's own noise between halves (0.1 MiB in a debug build).
const FLAT_BYTES_PER_CALL: u64 = 50;

/// The runs share the process's peak RSS: one at a time.
static SERIAL: Mutex<()> = Mutex::new(());

/// Starts a new peak: the peak RSS becomes the current RSS.
fn reset_peak_rss() {
    std::fs::write("/proc/self/clear_refs", "5").unwrap();
}

/// Peak resident set size of this process since the last reset, in bytes. Linux always reports
/// it; a peak that cannot be read fails the run rather than passing as 0.
fn peak_rss() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status")
        .unwrap_or_else(|error| panic!("cannot read the peak RSS: /proc/self/status: {error}"));
    let line = status.lines().find_map(|line| line.strip_prefix("VmHWM:"));
    let kib = line.and_then(|rest| rest.trim().trim_end_matches("kB").trim().parse::<u64>().ok());
    let kib = kib.unwrap_or_else(|| {
        panic!("cannot read the peak RSS: no `VmHWM: <n> kB` line in /proc/self/status: {line:?}")
    });
    assert!(kib > 0, "cannot read the peak RSS: VmHWM is 0");
    kib * 1024
}

/// Whether a run kept flat memory: its second half (`calls` calls) raised the peak RSS from
/// `half` to `end` bytes by less than [`FLAT_BYTES_PER_CALL`] a call.
fn flat_memory(half: u64, end: u64, calls: usize) -> Result<(), String> {
    let allowed = calls as u64 * FLAT_BYTES_PER_CALL;
    if end.saturating_sub(half) < allowed {
        Ok(())
    } else {
        Err(format!("peak RSS grew from {half} to {end} bytes (less than {allowed} allowed)"))
    }
}

/// Doubles a number; `mode` picks what else happens: 1 panics, 2 never ends (times out), 3
/// cancels its own call's token and waits (cancelled), 4 waits forever (its caller drops the
/// call after one poll: cancelled), anything else returns.
#[tool(name = "load__double", effect = read_only, redact = ["value"])]
struct Double {
    value: u32,
    #[serde(default)]
    mode: u8,
}

#[derive(Serialize, ToolSchema)]
struct Doubled {
    value: u64,
}

impl Tool for Double {
    type Output = Doubled;
    async fn run(
        self,
        ctx: &ToolInvocationContext,
        _: &ToolCapabilities,
    ) -> Result<Doubled, ToolError> {
        tokio::task::yield_now().await;
        match self.mode {
            1 => panic!("load chaos"),
            2 | 4 => std::future::pending().await,
            3 => {
                ctx.cancellation().cancel();
                std::future::pending().await
            }
            _ => Ok(Doubled { value: u64::from(self.value) * 2 }),
        }
    }
}

fn runner(sink: Arc<Counting>) -> ToolRunner {
    let policy = r#"{"allowed_tools": ["load__double"], "budgets": {"max_runtime_ms": 20}}"#;
    ToolRunner::builder(ToolCatalog::builder().register::<Double>().build().unwrap())
        .policy(ToolPolicy::from_json(policy).unwrap())
        .event_sink(sink)
        .build()
}

/// Counts each call's starts and results as they are emitted (call `c<i>` at index `i`).
#[derive(Debug)]
struct Counting {
    starts: Vec<AtomicU8>,
    results: Vec<AtomicU8>,
    /// Bytes leaked at each result: 0, except to show that the memory check catches a leak.
    leak: usize,
}

impl Counting {
    fn new(calls: usize, leak: usize) -> Self {
        let counts = || (0..calls).map(|_| AtomicU8::new(0)).collect();
        Self { starts: counts(), results: counts(), leak }
    }
}

impl EventSink for Counting {
    fn emit(&self, event: ToolEvent) {
        let index: usize = event.tool_call_id()[1..].parse().unwrap();
        match event {
            ToolEvent::ToolCallStart { .. } => {
                self.starts[index].fetch_add(1, Ordering::Relaxed);
            }
            ToolEvent::ToolCallResult { .. } => {
                assert_eq!(
                    self.starts[index].load(Ordering::Relaxed),
                    1,
                    "c{index} ended before it started"
                );
                self.results[index].fetch_add(1, Ordering::Relaxed);
                if self.leak > 0 {
                    Box::leak(vec![1_u8; self.leak].into_boxed_slice());
                }
            }
            _ => {}
        }
    }
}

/// Polls `future` once and drops it.
fn poll_once_and_drop(future: impl Future) {
    let mut future = pin!(future);
    let _ = future.as_mut().poll(&mut Context::from_waker(Waker::noop()));
}

/// What each call's mode gave, by error code (`ok` for a value that checks out).
#[derive(Debug, Default, PartialEq, Eq)]
struct Tally {
    ok: usize,
    execution: usize,
    timeout: usize,
    cancelled: usize,
    dropped: usize,
}

/// Runs calls `range` from `CALLERS` concurrent callers; `chaos` gives call `i` mode
/// `i % 10` (1 to 3: panic, timeout, cancel; 4 at every other ten: dropped mid-flight).
async fn drive(runner: &ToolRunner, range: std::ops::Range<usize>, chaos: bool) -> Tally {
    const CALLERS: usize = 64;
    let mut callers = Vec::new();
    for caller in 0..CALLERS {
        let runner = runner.clone();
        let range = range.clone();
        callers.push(tokio::spawn(async move {
            let mut tally = Tally::default();
            for i in (range.start + caller..range.end).step_by(CALLERS) {
                let mode = if chaos { mode_of(i) } else { 0 };
                let ctx = context("load", "a", "t").with_tool_call_id(format!("c{i}"));
                let raw = format!(r#"{{"value": {i}, "mode": {mode}}}"#);
                if mode == 4 {
                    poll_once_and_drop(runner.exec("load__double", raw.as_bytes(), &ctx));
                    tally.dropped += 1;
                    continue;
                }
                let result = runner.exec("load__double", raw.as_bytes(), &ctx).await;
                match &result.outcome {
                    CallOutcome::Done(_) if result.value() == Some(&json!({"value": i * 2})) => {
                        tally.ok += 1
                    }
                    CallOutcome::Failed(error) => match error.code.as_str() {
                        "execution" => tally.execution += 1,
                        "timeout" => tally.timeout += 1,
                        "cancelled" => tally.cancelled += 1,
                        _ => {}
                    },
                    _ => {}
                }
            }
            tally
        }));
    }
    let mut tally = Tally::default();
    for caller in callers {
        let part = caller.await.unwrap();
        tally.ok += part.ok;
        tally.execution += part.execution;
        tally.timeout += part.timeout;
        tally.cancelled += part.cancelled;
        tally.dropped += part.dropped;
    }
    tally
}

/// 1 panic, 2 timeout, 3 cancelled, and 4 (every other ten) dropped mid-flight: 10% each of
/// panics and timeouts, 10% cancelled (half by token, half by a dropped future).
fn mode_of(i: usize) -> u8 {
    match (i % 10, (i / 10) % 2) {
        (1, _) => 1,
        (2, _) => 2,
        (3, 0) => 3,
        (3, _) => 4,
        _ => 0,
    }
}

/// Runs `calls` calls in two halves, leaking `leak` bytes a call, and checks pairing; returns
/// the tally and whether memory stayed flat.
fn measured_load(calls: usize, chaos: bool, leak: usize) -> (Tally, Result<(), String>) {
    let _serial = SERIAL.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_time()
        .build()
        .unwrap();
    let counting = Arc::new(Counting::new(calls, leak));
    let runner = runner(Arc::clone(&counting));
    let (first, second, peaks) = rt.block_on(async {
        reset_peak_rss();
        let first = drive(&runner, 0..calls / 2, chaos).await;
        let half = peak_rss();
        reset_peak_rss();
        let second = drive(&runner, calls / 2..calls, chaos).await;
        (first, second, (half, peak_rss()))
    });
    drop(runner);
    for (index, (start, result)) in counting.starts.iter().zip(&counting.results).enumerate() {
        let counts = (start.load(Ordering::Relaxed), result.load(Ordering::Relaxed));
        assert_eq!(counts, (1, 1), "c{index}: (starts, results)");
    }
    let (half, end) = peaks;
    eprintln!(
        "load: {calls} calls (chaos: {chaos}, leak: {leak} B/call): peak RSS {:.1} MiB in the first half, {:.1} MiB in the second",
        half as f64 / f64::from(1 << 20),
        end as f64 / f64::from(1 << 20)
    );
    let tally = Tally {
        ok: first.ok + second.ok,
        execution: first.execution + second.execution,
        timeout: first.timeout + second.timeout,
        cancelled: first.cancelled + second.cancelled,
        dropped: first.dropped + second.dropped,
    };
    (tally, flat_memory(half, end, calls - calls / 2))
}

/// Runs `calls` calls in two halves and checks pairing and flat memory; returns the tally.
fn load(calls: usize, chaos: bool) -> Tally {
    let (tally, flat) = measured_load(calls, chaos, 0);
    if let Err(grown) = flat {
        panic!("memory is not flat: {grown}");
    }
    tally
}

#[test]
fn a_hundred_thousand_calls_pair_every_start_with_one_result_in_flat_memory() {
    let tally = load(100_000, false);
    assert_eq!(tally.ok, 100_000);
}

#[test]
fn panics_timeouts_and_cancellations_still_pair_every_start_with_one_result() {
    // Quiet: ten thousand deliberate panics would each print a message.
    let hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(|_| {}));
    let tally = load(100_000, true);
    std::panic::set_hook(hook);
    assert_eq!(
        tally,
        Tally { ok: 70_000, execution: 10_000, timeout: 10_000, cancelled: 5_000, dropped: 5_000 }
    );
}

/// The memory check is able to fail: the same 100 000 calls, each leaking 100 bytes, do not
/// pass it.
#[test]
fn a_leak_of_100_bytes_per_call_fails_the_flat_memory_check() {
    let (tally, flat) = measured_load(100_000, false, 100);
    assert_eq!(tally.ok, 100_000);
    let grown = flat.expect_err("a 100-byte leak per call passed the flat memory check");
    assert!(grown.starts_with("peak RSS grew from"), "{grown}");
}
