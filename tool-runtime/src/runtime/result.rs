use std::sync::Arc;

use serde::{Serialize, Serializer};
use serde_json::Value;

use super::bound::ArgsJson;
use super::error::{ExecError, ToolErrorCode};
use super::outcome::{CallOutcome, Waiting};
use crate::content::limits::Limited;
use crate::content::{PartSummary, ToolOutput};

/// What one call through the runner produced: exactly one per call.
///
/// It holds each part of the call once; [`record`](Self::record) (a copy) and
/// [`into_record`](Self::into_record) (no copy) give the call's [`ToolInvocationRecord`], and
/// [`ToolResult::from_exec`](crate::adapters::ToolResult::from_exec) what the model is sent
/// for it.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolExecResult {
    /// The call's id, the same in every event of the call.
    pub tool_call_id: String,
    /// The name of the tool that was asked for.
    pub tool_name: String,
    /// How the call ended: its redacted output, its error, or what it waits for.
    pub outcome: CallOutcome,
    args: Option<ArgsJson>,
    /// The arguments as they arrived, kept only when a hook rewrote them.
    args_received: Option<Box<Value>>,
    started_ms: i64,
    ended_ms: i64,
    /// What few calls have (boxed, so a result stays small for the many that have none).
    pub(crate) rare: Option<Box<Rare>>,
}

/// The validated arguments of a result, and those that arrived when a hook rewrote them.
#[cfg(feature = "runner")]
pub(crate) type ResultArgs = (Option<ArgsJson>, Option<Box<Value>>);

/// The parts of a result few calls have.
#[derive(Debug, Clone, PartialEq, Default)]
pub(crate) struct Rare {
    /// Why the call was cut off, when its output is what the tool had kept by then.
    pub(crate) partial: Option<ExecError>,
    /// The context's subject and graph ids, for the record.
    pub(crate) subject_id: Option<Arc<str>>,
    pub(crate) graph_id: Option<Arc<str>>,
}

impl ToolExecResult {
    /// Built in place by the runner (a result is large: a builder that moves it costs a copy).
    #[cfg(feature = "runner")]
    pub(crate) fn new(
        tool_call_id: String,
        tool_name: String,
        outcome: CallOutcome,
        ((args, args_received), rare): (ResultArgs, Option<Box<Rare>>),
        (started_ms, ended_ms): (i64, i64),
    ) -> Self {
        Self { tool_call_id, tool_name, outcome, args, args_received, started_ms, ended_ms, rare }
    }

    /// For a call whose tool was cut off (`timeout`, `cancelled`) after it kept some of its
    /// result in its [`Partial`](super::Partial): why it was cut off. The outcome is then
    /// [`Done`](CallOutcome::Done) with what the tool had kept, and a closing text part tells
    /// the model the result is partial. `None` for every other call.
    #[must_use]
    pub fn partial(&self) -> Option<&ExecError> {
        self.rare.as_ref().and_then(|rare| rare.partial.as_ref())
    }

    /// Whether the call produced its output ([`CallOutcome::Done`]).
    #[must_use]
    #[inline]
    pub fn is_ok(&self) -> bool {
        self.outcome.is_done()
    }

    /// Whether the call waits for a decision, a client's result or the user's answer rather
    /// than having ended ([`CallOutcome::Waiting`]): it is not a failure, and it has no error;
    /// [`args`](Self::args) are the validated arguments it waits with.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use tool_runtime::runner::DeferAll;
    /// use tool_runtime::prelude::*;
    /// use tool_runtime::runtime::WaitsFor;
    ///
    /// /// Delete a file.
    /// #[tool(name = "fs__delete", effect = state_change, redact = ["deleted"])]
    /// struct Delete { path: String }
    /// #[derive(Serialize, ToolSchema)]
    /// struct Deleted { deleted: bool }
    /// impl Tool for Delete {
    ///     type Output = Deleted;
    ///     async fn run(self, _: &ToolInvocationContext, _: &ToolCapabilities) -> Result<Deleted, ToolError> {
    ///         Ok(Deleted { deleted: true })
    ///     }
    /// }
    ///
    /// # tokio::runtime::Runtime::new().unwrap().block_on(async {
    /// let policy = ToolPolicy { require_approval: vec![ToolEffect::StateChange], ..ToolPolicy::allowing(["fs__*"]) };
    /// let runner = ToolRunner::builder(ToolCatalog::builder().register::<Delete>().build().unwrap())
    ///     .policy(policy)
    ///     .approver(Arc::new(DeferAll))
    ///     .build();
    /// let ctx = ToolInvocationContext::new(ContextIds { run_id: "run-1", actor_id: "user-1", tenant_id: "acme" });
    /// let result = runner.exec("fs__delete", r#"{"path": "a.txt"}"#, &ctx).await;
    /// assert!(result.is_waiting() && !result.is_ok() && result.error().is_none());
    /// assert_eq!(result.waiting().map(|waiting| waiting.waits_for), Some(WaitsFor::Approval));
    /// assert_eq!(result.args(), Some(&serde_json::json!({"path": "a.txt"})));
    /// # });
    /// ```
    #[must_use]
    #[inline]
    pub fn is_waiting(&self) -> bool {
        matches!(self.outcome, CallOutcome::Waiting(_))
    }

    /// What the call waits for, if it waits.
    #[must_use]
    #[inline]
    pub fn waiting(&self) -> Option<&Waiting> {
        self.outcome.waiting()
    }

    /// The redacted structured value, if the call produced one.
    #[must_use]
    #[inline]
    pub fn value(&self) -> Option<&Value> {
        self.outcome.output().and_then(ToolOutput::structured)
    }

    /// The redacted output (every part, and the details), if the call produced it.
    #[must_use]
    #[inline]
    pub fn output(&self) -> Option<&ToolOutput> {
        self.outcome.output()
    }

    /// The error, if the call failed.
    #[must_use]
    #[inline]
    pub fn error(&self) -> Option<&ExecError> {
        self.outcome.error()
    }

    /// The error's code, if the call failed.
    #[must_use]
    pub fn error_code(&self) -> Option<ToolErrorCode> {
        self.error().map(|error| error.code)
    }

    /// The validated arguments the tool ran with (absent when they never validated).
    #[must_use]
    pub fn args(&self) -> Option<&Value> {
        self.args.as_ref().map(ArgsJson::get)
    }

    /// The arguments as they arrived, when a before-call hook rewrote them into
    /// [`args`](Self::args) (`None` when they ran as they came).
    #[must_use]
    pub fn args_received(&self) -> Option<&Value> {
        self.args_received.as_deref()
    }

    /// How long the call took in the runner, in ms by the runner's clock (never negative).
    #[must_use]
    pub fn duration_ms(&self) -> u64 {
        u64::try_from(self.ended_ms.saturating_sub(self.started_ms)).unwrap_or(0)
    }

    /// The call's record, copied.
    #[must_use]
    pub fn record(&self) -> ToolInvocationRecord {
        self.clone().into_record()
    }

    /// The call's record, made from this result without copying.
    #[must_use]
    pub fn into_record(self) -> ToolInvocationRecord {
        let rare = self.rare.map(|rare| *rare).unwrap_or_default();
        let (mut result, mut parts, mut details, mut limited) =
            (None, Vec::new(), None, Vec::new());
        let (mut error, mut waiting) = (None, None);
        match self.outcome {
            CallOutcome::Done(mut output) => {
                parts = output.part_summaries();
                limited = output.take_limited();
                (result, details) = output.into_structured_and_details();
            }
            CallOutcome::Failed(mut failed) => {
                if let Some(refused) = failed.refused.take() {
                    (parts, limited) = (refused.parts, refused.limited);
                }
                error = Some(failed);
            }
            CallOutcome::Waiting(waits) => waiting = Some(waits),
        }
        ToolInvocationRecord {
            tool_call_id: self.tool_call_id,
            tool_name: self.tool_name,
            args: self.args.map(ArgsJson::into_value),
            args_received: self.args_received.map(|received| *received),
            result,
            parts,
            details,
            limited,
            error,
            waiting,
            started_ms: self.started_ms,
            ended_ms: self.ended_ms,
            partial: rare.partial,
            subject_id: rare.subject_id.as_deref().map(str::to_owned),
            graph_id: rare.graph_id.as_deref().map(str::to_owned),
            raw: None,
        }
    }
}

impl Serialize for ToolExecResult {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut map = serializer.serialize_map(None)?;
        map.serialize_entry("tool_call_id", &self.tool_call_id)?;
        map.serialize_entry("tool_name", &self.tool_name)?;
        map.serialize_entry("ok", &self.is_ok())?;
        match &self.outcome {
            CallOutcome::Done(output) => {
                map.serialize_entry("value", output.structured().unwrap_or(&Value::Null))?;
                if !output.is_structured_only() {
                    map.serialize_entry("parts", &output.summaries())?;
                }
                if let Some(details) = output.details() {
                    map.serialize_entry("details", details)?;
                }
                if !output.limited().is_empty() {
                    map.serialize_entry("limited", output.limited())?;
                }
            }
            CallOutcome::Failed(error) => {
                map.serialize_entry("error_code", &error.code)?;
                map.serialize_entry("message", &error.message)?;
            }
            CallOutcome::Waiting(waiting) => {
                map.serialize_entry("waiting", waiting)?;
            }
        }
        if let Some(cut) = self.partial() {
            map.serialize_entry("partial", cut)?;
        }
        map.end()
    }
}

/// The record of one call: what was asked, what came back, when.
///
/// `args` are the validated arguments the tool ran with; `result` is the redacted output. `raw`
/// keeps the call as the model sent it, for audit only: it is never serialised and its `Debug`
/// shows its size alone, so it stays out of every UI, log and telemetry path (see
/// [`RawCall`](super::RawCall)).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ToolInvocationRecord {
    /// The call's id.
    pub tool_call_id: String,
    /// The name of the tool that was asked for.
    pub tool_name: String,
    /// The validated arguments (absent when they never validated).
    pub args: Option<Value>,
    /// The arguments as they arrived, when a before-call hook rewrote them into `args`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub args_received: Option<Value>,
    /// The redacted structured value.
    pub result: Option<Value>,
    /// Every part of the result, in order, as MIME type, size and digest (no bytes): empty for
    /// a result that is its structured value alone.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub parts: Vec<PartSummary>,
    /// The redacted details.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub details: Option<Value>,
    /// What the runner cut (`truncated`), resized or refused to keep the result within its
    /// budgets, and why; empty when it did nothing. For a refused result, `parts` still
    /// summarises what the tool returned.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub limited: Vec<Limited>,
    /// The error, for a call that failed.
    pub error: Option<ExecError>,
    /// What the call waits for, for a call that waits (it has neither result nor error).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub waiting: Option<Waiting>,
    /// When the call entered the runner, in ms since the Unix epoch.
    pub started_ms: i64,
    /// When it left, in ms since the Unix epoch.
    pub ended_ms: i64,
    /// For a call cut off (`timeout`, `cancelled`) whose `result` and `parts` are what its tool
    /// had kept by then ([`Partial`](super::Partial)): why it was cut off.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub partial: Option<ExecError>,
    /// On whose behalf the call ran: the context's
    /// [`subject_id`](super::ToolInvocationContext::subject_id), when it had one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub subject_id: Option<String>,
    /// The graph the call ran in: the context's
    /// [`graph_id`](super::ToolInvocationContext::graph_id), when it had one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub graph_id: Option<String>,
    /// The call as the model sent it, in its provider's JSON, capped: the agent loop keeps it
    /// for every call it hands the runner in the run the model sent it, refused ones included.
    /// A call decided on resume has none (the sealed state never holds the model's text; the
    /// audit entry made when the call started waiting does). Never serialised; `Debug` shows
    /// its size only.
    #[serde(skip)]
    pub raw: Option<super::RawCall>,
}

impl ToolInvocationRecord {
    /// How long the call took in the runner, in ms (never negative).
    #[must_use]
    pub fn duration_ms(&self) -> u64 {
        u64::try_from(self.ended_ms.saturating_sub(self.started_ms)).unwrap_or(0)
    }
}

/// Counts and latencies of tool calls, over a run or any set of records.
///
/// ```
/// use tool_runtime::runtime::ToolCallStats;
///
/// let stats = ToolCallStats::from_records(&[]);
/// assert_eq!((stats.calls, stats.ok, stats.failed, stats.max_ms), (0, 0, 0, 0));
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct ToolCallStats {
    /// Calls made.
    pub calls: usize,
    /// Calls that produced a value.
    pub ok: usize,
    /// Calls that ended with an error.
    pub failed: usize,
    /// Calls that wait (for an approval, a client, an answer): not failures.
    pub waiting: usize,
    /// Their durations added up, in ms.
    pub total_ms: u64,
    /// The longest one, in ms.
    pub max_ms: u64,
    /// The same counts for each tool, by name.
    #[serde(skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub by_tool: std::collections::BTreeMap<String, ToolCallCounts>,
}

/// Counts and latencies of the calls of one tool (see [`ToolCallStats::by_tool`]).
///
/// ```
/// use tool_runtime::runtime::ToolCallCounts;
///
/// assert_eq!(ToolCallCounts::default().calls, 0);
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct ToolCallCounts {
    /// Calls made.
    pub calls: usize,
    /// Calls that produced a value.
    pub ok: usize,
    /// Calls that ended with an error.
    pub failed: usize,
    /// Calls that wait (for an approval, a client, an answer): not failures.
    pub waiting: usize,
    /// Their durations added up, in ms.
    pub total_ms: u64,
    /// The longest one, in ms.
    pub max_ms: u64,
}

impl ToolCallCounts {
    fn add(&mut self, record: &ToolInvocationRecord, duration_ms: u64) {
        self.calls += 1;
        if record.error.is_some() {
            self.failed += 1;
        } else if record.waiting.is_some() {
            self.waiting += 1;
        } else {
            self.ok += 1;
        }
        self.total_ms = self.total_ms.saturating_add(duration_ms);
        self.max_ms = self.max_ms.max(duration_ms);
    }
}

impl ToolCallStats {
    /// The stats of these calls.
    #[must_use]
    pub fn from_records(records: &[ToolInvocationRecord]) -> Self {
        let mut all = ToolCallCounts::default();
        let mut by_tool = std::collections::BTreeMap::<String, ToolCallCounts>::new();
        for record in records {
            let duration = record.duration_ms();
            all.add(record, duration);
            match by_tool.get_mut(&record.tool_name) {
                Some(counts) => counts.add(record, duration),
                None => {
                    let mut counts = ToolCallCounts::default();
                    counts.add(record, duration);
                    by_tool.insert(record.tool_name.clone(), counts);
                }
            }
        }
        Self {
            calls: all.calls,
            ok: all.ok,
            failed: all.failed,
            waiting: all.waiting,
            total_ms: all.total_ms,
            max_ms: all.max_ms,
            by_tool,
        }
    }
}
