//! Calls served as tasks: the MCP tasks extension (`io.modelcontextprotocol/tasks`, SEP-2663).
//! A call of a tool the application serves as a task, from a client that declared the
//! extension, is saved in the [store](crate::store) as working and answered at once with its
//! task id; it runs on in the background of the replica that took it. Its record (status,
//! result, the question or approval it waits on) lives in the store, sealed with the state key,
//! so any replica answers `tasks/get`, takes the `tasks/update` that answers it and records a
//! `tasks/cancel`.

use std::collections::HashMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use rmcp::ErrorData;
use rmcp::model::{
    CallToolResult, ClientCapabilities, CreateTaskResult, DetailedTask, GetTaskResult, JsonObject,
    Task, TaskPayload, TaskStatus,
};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use super::asks::{Answer, Asking, Offered};
use super::results::result_of;
use super::rounds::{GoingOn, Pending, Replied, Reply, Rounds, now_ms};
use crate::runner::ToolRunner;
use crate::runtime::{
    BoundToolRuntime, CallOutcome, ToolErrorCode, ToolExecResult, ToolInvocationContext,
};
use crate::schema::Shown;
use crate::store::{Decided, RunKey, StoreError, StoredRun, WaitingCall};

/// Whether a tool is served as a task ([`McpServerBuilder::task`](super::McpServerBuilder::task)).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum TaskSupport {
    /// A task for clients that declared the tasks extension; a plain call for the others.
    Optional,
    /// A task always: a client that did not declare the extension is refused (`-32021`,
    /// naming it).
    Required,
}

/// Where a task stands, as its record keeps it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
enum Status {
    Working,
    InputRequired,
    Completed,
    Failed,
    Cancelled,
}

/// A task as the store keeps it (sealed): what `tasks/get` answers from and what a
/// `tasks/update` goes on from.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct Record {
    /// The tool's id, and the name the client called it by.
    tool: String,
    served: String,
    status: Status,
    created_at_ms: i64,
    updated_at_ms: i64,
    ttl_ms: u64,
    /// Completed: the tool's result, as `tools/call` would have answered it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    result: Option<Value>,
    /// Failed: the JSON-RPC error.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    error: Option<Value>,
    /// Input required: the call, waiting.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pending: Option<Pending>,
    /// Working: until when the replica running it vouches for it (it renews the lease while
    /// the call runs). Past it, the replica is taken for dead and the task reads as failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    lease_until_ms: Option<i64>,
}

/// The ledger key a `tasks/cancel` spends for a task running on another replica; the replica
/// running it looks for it every [`POLL`].
const CANCEL: &str = "cancel";

/// How often a client is asked to poll, and a running task looks for a cancellation.
const POLL: Duration = Duration::from_millis(500);

/// How long a running task's replica vouches for it; it renews the lease every
/// [`RENEW_EVERY`] polls (2 s), so a task whose replica died reads as failed within 5 s.
const LEASE: Duration = Duration::from_secs(5);

/// How many polls between two renewals of a running task's lease.
const RENEW_EVERY: u32 = 4;

/// The end of a lease taken now.
fn lease() -> i64 {
    now_ms().saturating_add(i64::try_from(LEASE.as_millis()).unwrap_or(i64::MAX))
}

/// What a task whose replica died reads as: failed, with this JSON-RPC error.
const STOPPED: &str = "the server running the task stopped before it ended; it was not run again";

/// The tasks this process runs: each one's cancellation.
#[derive(Debug, Default)]
pub(super) struct Running(Mutex<HashMap<String, CancellationToken>>);

impl Running {
    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, CancellationToken>> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// The store's key of the task `id` of `tenant`.
fn key_of(tenant: &str, id: &str) -> RunKey {
    RunKey::new(tenant, format!("mcp-task:{id}"))
}

fn unknown(id: &str) -> ErrorData {
    ErrorData::invalid_params(format!("no task `{}`", Shown(id)), None)
}

fn store_failed(error: &StoreError) -> ErrorData {
    ErrorData::internal_error(format!("the task store failed: {}", Shown(&error.to_string())), None)
}

/// The capability a client lacks to have the tool of a required task run.
pub(super) fn tasks_capability() -> ClientCapabilities {
    ClientCapabilities::builder().enable_tasks().build()
}

/// `ms` since the Unix epoch as an ISO 8601 UTC timestamp (`2026-07-28T12:00:00.000Z`).
fn iso(ms: i64) -> String {
    let (days, rest) = (ms.div_euclid(86_400_000), ms.rem_euclid(86_400_000));
    // Days since 1970-01-01 to a civil date (Howard Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    let (hours, minutes) = (rest / 3_600_000, rest / 60_000 % 60);
    let (seconds, millis) = (rest / 1000 % 60, rest % 1000);
    format!("{year:04}-{month:02}-{day:02}T{hours:02}:{minutes:02}:{seconds:02}.{millis:03}Z")
}

impl Record {
    fn task(&self, id: &str) -> Task {
        let status = match self.status {
            Status::Working => TaskStatus::Working,
            Status::InputRequired => TaskStatus::InputRequired,
            Status::Completed => TaskStatus::Completed,
            Status::Failed => TaskStatus::Failed,
            Status::Cancelled => TaskStatus::Cancelled,
        };
        let poll = u64::try_from(POLL.as_millis()).unwrap_or(u64::MAX);
        Task::new(id, status, iso(self.created_at_ms), iso(self.updated_at_ms))
            .with_ttl_ms(self.ttl_ms)
            .with_poll_interval_ms(poll)
    }

    fn detailed(&self, id: &str) -> DetailedTask {
        let object = |value: &Option<Value>| match value {
            Some(Value::Object(map)) => map.clone(),
            _ => JsonObject::new(),
        };
        let payload = match self.status {
            Status::Working => TaskPayload::Working,
            Status::InputRequired => match &self.pending {
                Some(pending) => TaskPayload::InputRequired {
                    input_requests: Rounds::asking(pending, &self.served, String::new())
                        .input_requests
                        .unwrap_or_default(),
                },
                None => TaskPayload::Working,
            },
            Status::Completed => TaskPayload::Completed { result: object(&self.result) },
            Status::Failed => TaskPayload::Failed { error: object(&self.error) },
            Status::Cancelled => TaskPayload::Cancelled,
        };
        DetailedTask::new(self.task(id), payload)
    }

    fn terminal(&self) -> bool {
        matches!(self.status, Status::Completed | Status::Failed | Status::Cancelled)
    }

    fn with_status(mut self, status: Status) -> Self {
        self.status = status;
        self.updated_at_ms = now_ms();
        if status != Status::Working {
            self.lease_until_ms = None;
        }
        self
    }

    /// The record as it stands at `now`: a working task whose lease ran out is failed (its
    /// replica died; nothing runs it again).
    fn standing_at(mut self, now: i64) -> Self {
        if let (Status::Working, Some(until)) = (self.status, self.lease_until_ms)
            && until < now
        {
            let error = serde_json::json!({"code": -32603, "message": STOPPED});
            self.status = Status::Failed;
            self.updated_at_ms = until;
            self.error = Some(error);
            self.lease_until_ms = None;
        }
        self
    }
}

/// What a task runs: the call, on its runner, in its context.
pub(super) struct Job {
    pub(super) runner: ToolRunner,
    pub(super) ctx: ToolInvocationContext,
    /// The tool's id.
    pub(super) tool: String,
    /// The arguments it runs with, and the ones the client sent (a round is bound to them).
    pub(super) arguments: Value,
    pub(super) request: Value,
    pub(super) answers: Vec<Answer>,
    pub(super) approved: bool,
    /// What the client declared it takes within rounds.
    pub(super) offered: Offered,
}

impl Rounds {
    /// Saves the record of the task `id` of the caller of `ctx`; its revision.
    async fn keep(
        &self,
        tenant: &str,
        actor: &str,
        id: &str,
        record: &Record,
    ) -> Result<String, StoreError> {
        let (sealed, revision) = self.seal(record);
        let waiting = match (&record.pending, record.status) {
            (Some(pending), Status::InputRequired) => vec![WaitingCall {
                call_id: id.to_owned(),
                tool_name: record.tool.clone(),
                waits_for: pending.waits_for,
            }],
            _ => Vec::new(),
        };
        let now = now_ms();
        let expires = record.created_at_ms.saturating_add_unsigned(record.ttl_ms);
        let ttl = u64::try_from(expires.saturating_sub(now)).unwrap_or(0);
        let run = StoredRun::new(
            key_of(tenant, id),
            actor,
            waiting,
            sealed.into_bytes(),
            revision.clone(),
            now,
            ttl,
        );
        self.store.save(run).await?;
        Ok(revision)
    }

    /// The record of the task `id`, if it is the caller's and has not expired; its revision.
    async fn record(
        &self,
        ctx: &ToolInvocationContext,
        id: &str,
    ) -> Result<(Record, String), ErrorData> {
        let stored = self
            .store
            .load(&key_of(ctx.tenant_id(), id))
            .await
            .map_err(|error| store_failed(&error))?;
        let stored = stored
            .filter(|stored| stored.actor_id == ctx.actor_id() && stored.expires_at_ms > now_ms())
            .ok_or_else(|| unknown(id))?;
        let sealed = std::str::from_utf8(&stored.state).map_err(|_| unknown(id))?;
        let unsealed = self
            .unseal::<Record>(sealed)
            .map(|(record, revision)| (record.standing_at(now_ms()), revision));
        unsealed.ok_or_else(|| {
            ErrorData::internal_error(
                format!("the task `{}` is stored unsealed or changed", Shown(id)),
                None,
            )
        })
    }
}

/// What tasks need of the server that runs them.
pub(super) trait Host: Clone + Send + Sync + 'static {
    /// Where calls that wait and tasks are kept, if anywhere.
    fn rounds(&self) -> Option<&Rounds>;
    /// The tasks this process runs.
    fn running(&self) -> &Running;
    /// The tool `id` of the runner's catalog.
    fn tool_of(&self, id: &str) -> Option<Arc<dyn BoundToolRuntime>>;
    /// How the call of `pending` goes on in `ctx` (its call's context) after `reply`.
    fn going_on(&self, pending: &Pending, reply: Reply, ctx: ToolInvocationContext) -> GoingOn;
    /// Ends the call of `pending` refused by the client's user (`approval_denied`).
    fn refuse<'a>(
        &'a self,
        pending: &'a Pending,
        ctx: &'a ToolInvocationContext,
    ) -> impl Future<Output = ToolExecResult> + Send + 'a;
}

/// A task's call, under way: its cancellation, who answers what it asks, and the call itself
/// (it runs as it is polled).
pub(super) struct Started {
    token: CancellationToken,
    pub(super) asking: Arc<Asking>,
    ctx: ToolInvocationContext,
    exec: Pin<Box<dyn Future<Output = ToolExecResult> + Send>>,
}

impl Job {
    /// The call of this job, ready to run: in its context, with the answers it was given, a
    /// cancellation of its own.
    fn start(&self) -> Started {
        let token = CancellationToken::new();
        let asking = Asking::new(self.answers.clone(), self.offered);
        let ctx = self.ctx.clone().with_cancellation(token.clone()).with_interactor(asking.clone());
        let (runner, tool, arguments) =
            (self.runner.clone(), self.tool.clone(), self.arguments.clone());
        let call_ctx = ctx.clone();
        let exec = Box::pin(async move { runner.exec(&tool, arguments, &call_ctx).await });
        Started { token, asking, ctx, exec }
    }
}

/// How long a call that asks before it becomes a task runs within its request: long enough
/// to ask, short enough that a client is not kept waiting on a long call.
const INLINE: Duration = Duration::from_millis(20);

/// What a call that asks before it becomes a task came to within its request.
pub(super) enum Inline {
    /// It stopped on what it asks (or needs what the client did not declare): answered as any
    /// call's round is, with who it asked.
    Stopped(ToolExecResult, Arc<Asking>),
    /// It goes on (or ended already) as a task: its creation.
    Task(CreateTaskResult),
}

/// Runs `job` within the request for a moment ([`McpServerBuilder::ask_before_task`](super::McpServerBuilder::ask_before_task)):
/// a call that stops on what it asks is answered as a round; any other goes on as the task `id`,
/// running or ended already.
pub(super) async fn start_after_questions<H: Host>(
    host: &H,
    id: String,
    served: &str,
    job: Job,
) -> Result<Inline, ErrorData> {
    let mut started = job.start();
    if let Ok(result) = tokio::time::timeout(INLINE, &mut started.exec).await {
        let stopped = result.is_waiting() && !started.asking.asked().is_empty();
        if stopped || started.asking.missing().is_some() {
            return Ok(Inline::Stopped(result, started.asking));
        }
        started.exec = Box::pin(std::future::ready(result));
    }
    Ok(Inline::Task(keep_started(host, id, served, job, started).await?))
}

/// Starts `job` as the task `id` for the tool the client called `served`: saved working,
/// then run on this replica in the background. The task's creation, as `tools/call`
/// answers it.
pub(super) async fn start_task<H: Host>(
    host: &H,
    id: String,
    served: &str,
    job: Job,
) -> Result<CreateTaskResult, ErrorData> {
    let started = job.start();
    keep_started(host, id, served, job, started).await
}

/// Saves the task `id` of `job`, whose call is `started`, as working and runs it on in the
/// background; its creation.
async fn keep_started<H: Host>(
    host: &H,
    id: String,
    served: &str,
    job: Job,
    started: Started,
) -> Result<CreateTaskResult, ErrorData> {
    let rounds = host.rounds().ok_or_else(|| unknown(&id))?;
    let now = now_ms();
    let record = Record {
        tool: job.tool.clone(),
        served: served.to_owned(),
        status: Status::Working,
        created_at_ms: now,
        updated_at_ms: now,
        ttl_ms: rounds.ttl_ms,
        result: None,
        error: None,
        pending: None,
        lease_until_ms: Some(lease()),
    };
    let (tenant, actor) = (job.ctx.tenant_id().to_owned(), job.ctx.actor_id().to_owned());
    rounds.keep(&tenant, &actor, &id, &record).await.map_err(|error| store_failed(&error))?;
    let created = CreateTaskResult::new(record.task(&id));
    spawn_task(host, id, record, job, started);
    Ok(created)
}

/// Runs `started`, the call of `job`, as the task `id` (its record `record`, working) until
/// it ends or waits, then keeps what became of it.
fn spawn_task<H: Host>(host: &H, id: String, record: Record, job: Job, started: Started) {
    let server = host.clone();
    let Started { token, asking, ctx, mut exec } = started;
    server.running().lock().insert(id.clone(), token.clone());
    tokio::spawn(async move {
        let Some(rounds) = server.rounds() else { return };
        let Some(tool) = server.tool_of(&job.tool) else { return };
        let spec = tool.spec();
        let (tenant, actor) = (job.ctx.tenant_id().to_owned(), job.ctx.actor_id().to_owned());
        let key = key_of(&tenant, &id);
        // Every poll, between two polls of the call (never while it ends): a cancellation
        // recorded by another replica is looked for, and now and then the lease renewed.
        let mut polls = 0u32;
        let result = loop {
            tokio::select! {
                result = &mut exec => break result,
                () = tokio::time::sleep(POLL) => {}
            }
            let cancelled = rounds.store.spent(&key, &[CANCEL.to_owned()]).await;
            if cancelled.is_ok_and(|spent| !spent.is_empty()) {
                token.cancel();
            }
            polls += 1;
            if polls.is_multiple_of(RENEW_EVERY) {
                let renewed = Record { lease_until_ms: Some(lease()), ..record.clone() };
                if let Err(error) = rounds.keep(&tenant, &actor, &id, &renewed).await {
                    tracing::warn!(%error, task = %id, "a running task's lease was not renewed");
                }
            }
        };
        // Only a call that waits keeps its arguments (in the task's record).
        let arguments = result.is_waiting().then(|| result.args().cloned()).flatten();
        let arguments = arguments.unwrap_or(Value::Null);
        let record = match result.outcome {
            CallOutcome::Waiting(waiting) => {
                let asks = asking.asked();
                let approved =
                    job.approved || (!asks.is_empty() && job.runner.needs_approval(spec.name()));
                let pending = rounds.pending(
                    &ctx,
                    &id,
                    spec,
                    &job.request,
                    arguments,
                    waiting.waits_for,
                    asks,
                    job.answers,
                    approved,
                );
                Record { pending: Some(pending), ..record.with_status(Status::InputRequired) }
            }
            CallOutcome::Failed(error)
                if error.code == ToolErrorCode::Cancelled && token.is_cancelled() =>
            {
                record.with_status(Status::Cancelled)
            }
            // Code that panicked is the server's failure, not a result of the tool's: the
            // task failed (SEP-2663 keeps `completed` with `isError` for errors a tool returns).
            CallOutcome::Failed(error) if error.panicked() => {
                let error = serde_json::json!({"code": -32603, "message": error.message});
                Record { error: Some(error), pending: None, ..record.with_status(Status::Failed) }
            }
            outcome => completed(record, &result_of(outcome, spec)),
        };
        if let Err(error) = rounds.keep(&tenant, &actor, &id, &record).await {
            tracing::warn!(%error, task = %id, "a task ended and the store could not keep it");
        }
        server.running().lock().remove(&id);
    });
}

/// `tasks/get`: the caller's task `id` as it stands.
pub(super) async fn get_task_of<H: Host>(
    host: &H,
    ctx: &ToolInvocationContext,
    id: &str,
) -> Result<GetTaskResult, ErrorData> {
    let rounds = host.rounds().ok_or_else(|| unknown(id))?;
    let (record, _) = rounds.record(ctx, id).await?;
    Ok(GetTaskResult::new(record.detailed(id)))
}

/// `tasks/update`: the client's answers to what the caller's task `id` waits on. Answered,
/// the round is spent in the store and the call goes on here, in the background; not
/// answered (its key missing), it waits still; a task that waits on nothing ignores them.
pub(super) async fn update_task_of<H: Host>(
    host: &H,
    ctx: &ToolInvocationContext,
    id: &str,
    responses: &rmcp::model::InputResponses,
    offered: Offered,
) -> Result<(), ErrorData> {
    let rounds = host.rounds().ok_or_else(|| unknown(id))?;
    let (record, revision) = rounds.record(ctx, id).await?;
    // Answers to nothing the task waits on are ignored, as answers to keys it did not ask
    // for are (SEP-2663).
    let pending = match (&record.pending, record.status) {
        (Some(pending), Status::InputRequired) => pending.clone(),
        _ => return Ok(()),
    };
    let reply = match Rounds::reply(&pending, Some(responses))? {
        Replied::Nothing => return Ok(()),
        // Answered in part: kept, and the task waits for the rest (`tasks/get` shows only
        // what is still asked).
        Replied::Partial(partial) => {
            let pending = Pending { partial, ..pending };
            let record = Record { pending: Some(pending), ..record };
            let (tenant, actor) = (ctx.tenant_id(), ctx.actor_id());
            rounds.keep(tenant, actor, id, &record).await.map_err(|e| store_failed(&e))?;
            return Ok(());
        }
        Replied::Full(reply) => reply,
    };
    let key = key_of(ctx.tenant_id(), id);
    rounds.spend(&key, &pending, &revision, &reply).await?;
    let Some(tool) = host.tool_of(&pending.tool) else { return Err(unknown(id)) };
    let spec = tool.spec();
    if spec.spec_hash() != pending.spec_hash {
        let message = format!("the tool `{}` changed since the task asked", Shown(spec.name()));
        return Err(ErrorData::invalid_params(message, None));
    }
    let call_ctx = ctx.clone().with_tool_call_id(pending.call.clone());
    let (tenant, actor) = (ctx.tenant_id(), ctx.actor_id());
    match host.going_on(&pending, reply, call_ctx) {
        GoingOn::Refused(call_ctx) => {
            let result = host.refuse(&pending, &call_ctx).await;
            let record = completed(record, &result_of(result.outcome, spec));
            rounds.keep(tenant, actor, id, &record).await.map_err(|e| store_failed(&e))?;
        }
        GoingOn::Runs { runner, ctx: call_ctx, answers, approved } => {
            let record = Record { pending: None, ..record.with_status(Status::Working) };
            rounds.keep(tenant, actor, id, &record).await.map_err(|e| store_failed(&e))?;
            let job = Job {
                runner,
                ctx: call_ctx,
                tool: pending.tool.clone(),
                arguments: pending.arguments.clone(),
                request: Value::Null,
                answers,
                approved,
                offered,
            };
            let started = job.start();
            spawn_task(host, id.to_owned(), record, job, started);
        }
    }
    Ok(())
}

/// `tasks/cancel`: the caller's task `id` is cancelled. Running here, its call is
/// cancelled now; running on another replica, the cancellation is recorded in the store
/// and that replica cancels it within a poll; waiting, it ends cancelled. A task that
/// ended stays as it ended.
pub(super) async fn cancel_task_of<H: Host>(
    host: &H,
    ctx: &ToolInvocationContext,
    id: &str,
) -> Result<(), ErrorData> {
    let rounds = host.rounds().ok_or_else(|| unknown(id))?;
    // A few tries: the task may change between reading and recording.
    for _ in 0..3 {
        let (record, revision) = rounds.record(ctx, id).await?;
        if record.terminal() {
            return Ok(());
        }
        if let Some(token) = host.running().lock().get(id) {
            token.cancel();
            return Ok(());
        }
        if record.status == Status::InputRequired {
            let record = Record { pending: None, ..record.with_status(Status::Cancelled) };
            let (tenant, actor) = (ctx.tenant_id(), ctx.actor_id());
            rounds.keep(tenant, actor, id, &record).await.map_err(|e| store_failed(&e))?;
            return Ok(());
        }
        let key = key_of(ctx.tenant_id(), id);
        let cancel = [Decided::new(CANCEL, "cancelled")];
        match rounds.store.spend(&key, &revision, &cancel, now_ms()).await {
            Ok(()) | Err(StoreError::AlreadySpent { .. }) => return Ok(()),
            Err(StoreError::Moved { .. } | StoreError::Busy { .. }) => continue,
            Err(StoreError::NotFound { .. } | StoreError::Expired { .. }) => {
                return Err(unknown(id));
            }
            Err(error) => return Err(store_failed(&error)),
        }
    }
    Ok(())
}

/// `record`, completed with `result` (a tool's error is a completed task whose result says
/// `isError`).
fn completed(record: Record, result: &CallToolResult) -> Record {
    let result = serde_json::to_value(result).ok();
    Record { result, pending: None, ..record.with_status(Status::Completed) }
}

#[cfg(test)]
mod tests {
    use super::{Record, Status, iso};

    #[test]
    fn a_working_task_whose_lease_ran_out_reads_as_failed() {
        let working = Record {
            tool: "t".into(),
            served: "t".into(),
            status: Status::Working,
            created_at_ms: 0,
            updated_at_ms: 0,
            ttl_ms: 60_000,
            result: None,
            error: None,
            pending: None,
            lease_until_ms: Some(5_000),
        };
        assert_eq!(working.clone().standing_at(4_999).status, Status::Working);
        let stopped = working.standing_at(5_001);
        assert_eq!(stopped.status, Status::Failed);
        assert_eq!(stopped.error.unwrap()["code"], -32603);
        assert_eq!(stopped.updated_at_ms, 5_000);
    }

    #[test]
    fn timestamps_are_iso_8601_utc() {
        assert_eq!(iso(0), "1970-01-01T00:00:00.000Z");
        assert_eq!(iso(951_782_400_123), "2000-02-29T00:00:00.123Z");
        assert_eq!(iso(1_785_240_000_000), "2026-07-28T12:00:00.000Z");
    }
}
