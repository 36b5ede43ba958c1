//! [`SqliteStore`]: a [`RunStore`] in one SQLite file, shared by the processes of one host
//! (feature `sqlite`).

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use async_trait::async_trait;
use rusqlite::{Connection, OptionalExtension, TransactionBehavior, params};

use crate::runtime::RawCall;

use super::{
    AuditEntry, AuditOutcome, Decided, RunKey, RunStore, RunSummary, StoreError, StoredRun,
    UnfinishedCall, WaitingCall, WaitingQuery,
};

/// The version of the tables this code reads and writes.
const SCHEMA_VERSION: i64 = 2;

/// The tables of version 1. Every name starts with `tool_runtime_`, so the store can share a
/// database with the application's own tables.
const SCHEMA_V1: &str = "
CREATE TABLE tool_runtime_runs (
    tenant_id TEXT NOT NULL,
    run_id TEXT NOT NULL,
    actor_id TEXT NOT NULL,
    state BLOB NOT NULL,
    revision TEXT NOT NULL,
    saved_at_ms INTEGER NOT NULL,
    expires_at_ms INTEGER NOT NULL,
    resuming_since_ms INTEGER,
    ended INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (tenant_id, run_id)
);
CREATE INDEX tool_runtime_runs_inbox ON tool_runtime_runs (tenant_id, ended, saved_at_ms, run_id);
CREATE INDEX tool_runtime_runs_expiry ON tool_runtime_runs (expires_at_ms);
CREATE TABLE tool_runtime_waiting_calls (
    tenant_id TEXT NOT NULL,
    run_id TEXT NOT NULL,
    position INTEGER NOT NULL,
    call_id TEXT NOT NULL,
    tool_name TEXT NOT NULL,
    waits_for TEXT NOT NULL,
    PRIMARY KEY (tenant_id, run_id, position)
);
CREATE INDEX tool_runtime_waiting_calls_tool ON tool_runtime_waiting_calls (tenant_id, tool_name, run_id);
CREATE TABLE tool_runtime_spent_calls (
    tenant_id TEXT NOT NULL,
    run_id TEXT NOT NULL,
    call_key TEXT NOT NULL,
    decision TEXT NOT NULL,
    spent_at_ms INTEGER NOT NULL,
    ended_at_ms INTEGER,
    PRIMARY KEY (tenant_id, run_id, call_key)
);
CREATE INDEX tool_runtime_spent_calls_unfinished ON tool_runtime_spent_calls (tenant_id, ended_at_ms);
";

/// What version 2 adds: the audit trail.
const SCHEMA_V2: &str = "
CREATE TABLE tool_runtime_audit (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    tenant_id TEXT NOT NULL,
    run_id TEXT NOT NULL,
    actor_id TEXT NOT NULL,
    call_id TEXT NOT NULL,
    tool_name TEXT NOT NULL,
    outcome TEXT NOT NULL,
    record TEXT NOT NULL,
    raw TEXT,
    raw_cut INTEGER NOT NULL,
    recorded_at_ms INTEGER NOT NULL,
    expires_at_ms INTEGER NOT NULL
);
CREATE INDEX tool_runtime_audit_run ON tool_runtime_audit (tenant_id, run_id, seq);
CREATE INDEX tool_runtime_audit_expiry ON tool_runtime_audit (expires_at_ms);
";

/// A [`RunStore`] in one SQLite file (feature `sqlite`; SQLite is compiled in): the embedded
/// default. Several processes on one host share the file through SQLite's own locking, in WAL
/// mode (readers never wait for the writer), each write a transaction that takes the write lock
/// first; a process that finds the file locked waits up to its busy timeout
/// ([`SqliteStore::DEFAULT_BUSY_TIMEOUT`]). The store creates its tables on open, and migrates them,
/// versioned, in one transaction: several processes opening a new file at once is safe.
///
/// Work runs on Tokio's blocking threads, one statement at a time per store; open one store per
/// process and share it (`Arc`).
///
/// ```
/// use tool_runtime::store::{RunKey, RunStore, SqliteStore};
///
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// let dir = std::env::temp_dir().join(format!("store-doc-{}", std::process::id()));
/// std::fs::create_dir_all(&dir).unwrap();
/// let store = SqliteStore::open(dir.join("runs.sqlite")).await?;
/// assert_eq!(store.load(&RunKey::new("acme", "run-1")).await?, None);
/// # std::fs::remove_dir_all(&dir).unwrap();
/// # Ok::<(), tool_runtime::store::StoreError>(())
/// # }).unwrap();
/// ```
#[derive(Debug, Clone)]
pub struct SqliteStore {
    path: Arc<PathBuf>,
    connection: Arc<Mutex<Connection>>,
}

impl SqliteStore {
    /// How long a statement waits for another process's transaction before it gives up (30 s):
    /// contention is waited out, not reported.
    pub const DEFAULT_BUSY_TIMEOUT: Duration = Duration::from_secs(30);

    /// Opens (or creates) the store in the file at `path`, with the default busy timeout.
    ///
    /// # Errors
    ///
    /// [`StoreError::Backend`] when the file cannot be opened or its tables created;
    /// [`StoreError::SchemaTooNew`] when a newer version of this crate migrated it.
    pub async fn open(path: impl AsRef<Path>) -> Result<Self, StoreError> {
        Self::open_with(path, Self::DEFAULT_BUSY_TIMEOUT).await
    }

    /// Opens (or creates) the store in the file at `path`, waiting up to `busy_timeout` for
    /// other processes' transactions.
    ///
    /// # Errors
    ///
    /// As [`open`](Self::open).
    pub async fn open_with(
        path: impl AsRef<Path>,
        busy_timeout: Duration,
    ) -> Result<Self, StoreError> {
        let path = path.as_ref().to_owned();
        let opening = path.clone();
        let connection = blocking("opening the store", move || {
            let mut connection = Connection::open(&opening)?;
            connection.busy_timeout(busy_timeout)?;
            // WAL: readers and the one writer do not wait for each other.
            waiting_out(busy_timeout, || {
                connection.query_row("PRAGMA journal_mode = WAL", [], |row| row.get::<_, String>(0))
            })?;
            connection.pragma_update(None, "synchronous", "NORMAL")?;
            let migrated = migrate(&mut connection);
            Ok(migrated.map(|()| connection))
        })
        .await??;
        Ok(Self { path: Arc::new(path), connection: Arc::new(Mutex::new(connection)) })
    }

    /// The file the store lives in.
    #[must_use]
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Runs `work` on the connection, on a blocking thread; `context` names what it was doing
    /// for an error.
    async fn with<T: Send + 'static>(
        &self,
        context: String,
        work: impl FnOnce(&mut Connection) -> rusqlite::Result<T> + Send + 'static,
    ) -> Result<T, StoreError> {
        let connection = Arc::clone(&self.connection);
        blocking(&context, move || {
            let mut connection = connection.lock().unwrap_or_else(PoisonError::into_inner);
            work(&mut connection)
        })
        .await
    }
}

/// Runs `step` again while the database is busy, up to `timeout`. Switching to WAL needs the
/// database to itself for a moment, and SQLite answers `SQLITE_BUSY` at once (without its busy
/// handler) when another connection opening the same new file holds it.
fn waiting_out<T>(
    timeout: Duration,
    mut step: impl FnMut() -> rusqlite::Result<T>,
) -> rusqlite::Result<T> {
    let until = std::time::Instant::now() + timeout;
    loop {
        match step() {
            Err(rusqlite::Error::SqliteFailure(error, _))
                if error.code == rusqlite::ErrorCode::DatabaseBusy
                    && std::time::Instant::now() < until =>
            {
                std::thread::sleep(Duration::from_millis(5));
            }
            done => return done,
        }
    }
}

/// Creates or migrates the tables in one transaction that takes the write lock first: a
/// second process opening the file at the same time waits, then finds them made.
fn migrate(connection: &mut Connection) -> Result<(), StoreError> {
    let failed = |error: rusqlite::Error| backend("creating the store's tables", &error);
    let transaction =
        connection.transaction_with_behavior(TransactionBehavior::Immediate).map_err(failed)?;
    transaction
        .execute_batch(
            "CREATE TABLE IF NOT EXISTS tool_runtime_store_version (version INTEGER NOT NULL)",
        )
        .map_err(failed)?;
    let found: Option<i64> = transaction
        .query_row("SELECT max(version) FROM tool_runtime_store_version", [], |row| row.get(0))
        .map_err(failed)?;
    let steps: &[&str] = match found {
        None => &[SCHEMA_V1, SCHEMA_V2],
        Some(1) => &[SCHEMA_V2],
        Some(SCHEMA_VERSION) => &[],
        Some(found) if found > SCHEMA_VERSION => {
            return Err(StoreError::SchemaTooNew { found, supported: SCHEMA_VERSION });
        }
        Some(found) => {
            let message = format!("version {found} has no migration to {SCHEMA_VERSION}");
            return Err(StoreError::Backend { context: "migrating the store".into(), message });
        }
    };
    if !steps.is_empty() {
        for step in steps {
            transaction.execute_batch(step).map_err(failed)?;
        }
        transaction
            .execute(
                "INSERT INTO tool_runtime_store_version (version) VALUES (?1)",
                [SCHEMA_VERSION],
            )
            .map_err(failed)?;
    }
    transaction.commit().map_err(failed)
}

/// Runs `work` on a blocking thread; `context` names it for an error.
async fn blocking<T: Send + 'static>(
    context: &str,
    work: impl FnOnce() -> rusqlite::Result<T> + Send + 'static,
) -> Result<T, StoreError> {
    match tokio::task::spawn_blocking(work).await {
        Ok(done) => done.map_err(|error| backend(context, &error)),
        Err(_) => Err(StoreError::Backend {
            context: context.to_owned(),
            message: "the store's worker thread panicked".into(),
        }),
    }
}

fn backend(context: &str, error: &rusqlite::Error) -> StoreError {
    StoreError::Backend { context: context.to_owned(), message: error.to_string() }
}

/// The calls the run at `key` waits on, in order.
fn waiting_of(connection: &Connection, key: &RunKey) -> rusqlite::Result<Vec<WaitingCall>> {
    let mut statement = connection.prepare_cached(
        "SELECT call_id, tool_name, waits_for FROM tool_runtime_waiting_calls
         WHERE tenant_id = ?1 AND run_id = ?2 ORDER BY position",
    )?;
    let rows = statement.query_map(params![key.tenant_id, key.run_id], |row| {
        let text: String = row.get(2)?;
        let waits_for = super::waits_for_named(&text).ok_or_else(|| {
            rusqlite::Error::FromSqlConversionFailure(
                2,
                rusqlite::types::Type::Text,
                format!("`{text}` is not what a call waits for").into(),
            )
        })?;
        Ok(WaitingCall { call_id: row.get(0)?, tool_name: row.get(1)?, waits_for })
    })?;
    rows.collect()
}

/// Which of `call_keys` were spent for the run at `key`, in their order.
fn spent_of(
    connection: &Connection,
    key: &RunKey,
    call_keys: &[String],
) -> rusqlite::Result<Vec<String>> {
    let mut statement = connection.prepare_cached(
        "SELECT 1 FROM tool_runtime_spent_calls
         WHERE tenant_id = ?1 AND run_id = ?2 AND call_key = ?3",
    )?;
    let mut spent = Vec::new();
    for call_key in call_keys {
        if statement.exists(params![key.tenant_id, key.run_id, call_key])? {
            spent.push(call_key.clone());
        }
    }
    Ok(spent)
}

/// Ends the unfinished spent calls of the run at `key` at `now_ms`.
fn end_spent(connection: &Connection, key: &RunKey, now_ms: i64) -> rusqlite::Result<usize> {
    connection.execute(
        "UPDATE tool_runtime_spent_calls SET ended_at_ms = ?3
         WHERE tenant_id = ?1 AND run_id = ?2 AND ended_at_ms IS NULL",
        params![key.tenant_id, key.run_id, now_ms],
    )
}

/// Marks the run at `key` held by a resume since `since_ms`.
fn hold(connection: &Connection, key: &RunKey, since_ms: i64) -> rusqlite::Result<usize> {
    connection.execute(
        "UPDATE tool_runtime_runs SET resuming_since_ms = ?3 WHERE tenant_id = ?1 AND run_id = ?2",
        params![key.tenant_id, key.run_id, since_ms],
    )
}

#[async_trait]
impl RunStore for SqliteStore {
    async fn save(&self, run: StoredRun) -> Result<(), StoreError> {
        self.with(format!("saving {}", run.key), move |connection| {
            let transaction =
                connection.transaction_with_behavior(TransactionBehavior::Immediate)?;
            let key = &run.key;
            transaction.execute(
                "INSERT INTO tool_runtime_runs (tenant_id, run_id, actor_id, state, revision,
                     saved_at_ms, expires_at_ms, resuming_since_ms, ended)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, NULL, 0)
                 ON CONFLICT (tenant_id, run_id) DO UPDATE SET actor_id = ?3, state = ?4,
                     revision = ?5, saved_at_ms = ?6, expires_at_ms = ?7,
                     resuming_since_ms = NULL, ended = 0",
                params![
                    key.tenant_id,
                    key.run_id,
                    run.actor_id,
                    run.state,
                    run.revision,
                    run.saved_at_ms,
                    run.expires_at_ms
                ],
            )?;
            end_spent(&transaction, key, run.saved_at_ms)?;
            transaction.execute(
                "DELETE FROM tool_runtime_waiting_calls WHERE tenant_id = ?1 AND run_id = ?2",
                params![key.tenant_id, key.run_id],
            )?;
            for (position, call) in run.waiting.iter().enumerate() {
                transaction.execute(
                    "INSERT INTO tool_runtime_waiting_calls
                         (tenant_id, run_id, position, call_id, tool_name, waits_for)
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
                    params![
                        key.tenant_id,
                        key.run_id,
                        i64::try_from(position).unwrap_or(i64::MAX),
                        call.call_id,
                        call.tool_name,
                        call.waits_for.as_str()
                    ],
                )?;
            }
            transaction.commit()
        })
        .await
    }

    async fn load(&self, key: &RunKey) -> Result<Option<StoredRun>, StoreError> {
        let key = key.clone();
        self.with(format!("loading {key}"), move |connection| {
            let found = connection
                .query_row(
                    "SELECT actor_id, state, revision, saved_at_ms, expires_at_ms,
                         resuming_since_ms
                     FROM tool_runtime_runs WHERE tenant_id = ?1 AND run_id = ?2 AND ended = 0",
                    params![key.tenant_id, key.run_id],
                    |row| {
                        Ok(StoredRun {
                            key: key.clone(),
                            actor_id: row.get(0)?,
                            waiting: Vec::new(),
                            state: row.get(1)?,
                            revision: row.get(2)?,
                            saved_at_ms: row.get(3)?,
                            expires_at_ms: row.get(4)?,
                            resuming_since_ms: row.get(5)?,
                        })
                    },
                )
                .optional()?;
            let Some(mut run) = found else { return Ok(None) };
            run.waiting = waiting_of(connection, &key)?;
            Ok(Some(run))
        })
        .await
    }

    async fn list_waiting(&self, query: &WaitingQuery) -> Result<Vec<RunSummary>, StoreError> {
        let query = query.clone();
        let context = format!("listing the waiting runs of tenant `{}`", query.tenant_id);
        self.with(context, move |connection| {
            let (after_at, after_run) = query.after.clone().unwrap_or((i64::MIN, String::new()));
            let mut statement = connection.prepare_cached(
                "SELECT run_id, actor_id, saved_at_ms, expires_at_ms, resuming_since_ms
                 FROM tool_runtime_runs AS r
                 WHERE tenant_id = ?1 AND ended = 0
                   AND (?2 IS NULL OR actor_id = ?2)
                   AND (?3 IS NULL OR EXISTS (SELECT 1 FROM tool_runtime_waiting_calls AS w
                        WHERE w.tenant_id = r.tenant_id AND w.run_id = r.run_id
                          AND w.tool_name = ?3))
                   AND (saved_at_ms > ?4 OR (saved_at_ms = ?4 AND run_id > ?5))
                 ORDER BY saved_at_ms, run_id
                 LIMIT ?6",
            )?;
            let limit = i64::try_from(query.limit).unwrap_or(i64::MAX);
            let rows = statement.query_map(
                params![
                    query.tenant_id,
                    query.actor_id,
                    query.tool_name,
                    after_at,
                    after_run,
                    limit
                ],
                |row| {
                    Ok((
                        row.get::<_, String>(0)?,
                        row.get::<_, String>(1)?,
                        row.get::<_, i64>(2)?,
                        row.get::<_, i64>(3)?,
                        row.get::<_, Option<i64>>(4)?,
                    ))
                },
            )?;
            let rows: Vec<_> = rows.collect::<rusqlite::Result<_>>()?;
            let mut found = Vec::with_capacity(rows.len());
            for (run_id, actor_id, saved_at_ms, expires_at_ms, resuming_since_ms) in rows {
                let key = RunKey::new(query.tenant_id.clone(), run_id);
                let waiting = waiting_of(connection, &key)?;
                found.push(RunSummary {
                    key,
                    actor_id,
                    waiting,
                    saved_at_ms,
                    expires_at_ms,
                    resuming_since_ms,
                });
            }
            Ok(found)
        })
        .await
    }

    async fn spend(
        &self,
        key: &RunKey,
        revision: &str,
        decided: &[Decided],
        now_ms: i64,
    ) -> Result<(), StoreError> {
        let (key, revision, decided) = (key.clone(), revision.to_owned(), decided.to_vec());
        let context = format!("spending calls of {key}");
        self.with(context, move |connection| {
            // The write lock first: two processes spending the same call take turns, and the
            // second sees the first's rows.
            let transaction =
                connection.transaction_with_behavior(TransactionBehavior::Immediate)?;
            let call_keys: Vec<String> = decided.iter().map(|call| call.call_key.clone()).collect();
            let again = spent_of(&transaction, &key, &call_keys)?;
            if !again.is_empty() {
                return Ok(Err(StoreError::AlreadySpent { key, call_keys: again }));
            }
            let run: Option<(i64, String, Option<i64>)> = transaction
                .query_row(
                    "SELECT expires_at_ms, revision, resuming_since_ms FROM tool_runtime_runs
                     WHERE tenant_id = ?1 AND run_id = ?2 AND ended = 0",
                    params![key.tenant_id, key.run_id],
                    |row| Ok((row.get(0)?, row.get(1)?, row.get(2)?)),
                )
                .optional()?;
            let Some((expires_at_ms, stored, resuming)) = run else {
                return Ok(Err(StoreError::NotFound { key }));
            };
            if now_ms >= expires_at_ms {
                return Ok(Err(StoreError::Expired { key, expired_at_ms: expires_at_ms }));
            }
            if stored != revision {
                return Ok(Err(StoreError::Moved { key }));
            }
            if let Some(since_ms) = resuming {
                return Ok(Err(StoreError::Busy { key, since_ms }));
            }
            hold(&transaction, &key, now_ms)?;
            for call in &decided {
                transaction.execute(
                    "INSERT INTO tool_runtime_spent_calls
                         (tenant_id, run_id, call_key, decision, spent_at_ms)
                     VALUES (?1, ?2, ?3, ?4, ?5)",
                    params![key.tenant_id, key.run_id, call.call_key, call.decision, now_ms],
                )?;
            }
            transaction.commit()?;
            Ok(Ok(()))
        })
        .await?
    }

    async fn take_over(
        &self,
        key: &RunKey,
        since_ms: i64,
        decided: &[Decided],
        now_ms: i64,
    ) -> Result<(), StoreError> {
        let (key, decided) = (key.clone(), decided.to_vec());
        self.with(format!("taking over {key}"), move |connection| {
            let transaction =
                connection.transaction_with_behavior(TransactionBehavior::Immediate)?;
            let run: Option<Option<i64>> = transaction
                .query_row(
                    "SELECT resuming_since_ms FROM tool_runtime_runs
                     WHERE tenant_id = ?1 AND run_id = ?2 AND ended = 0",
                    params![key.tenant_id, key.run_id],
                    |row| row.get(0),
                )
                .optional()?;
            let Some(resuming) = run else { return Ok(Err(StoreError::NotFound { key })) };
            if resuming != Some(since_ms) {
                return Ok(Err(StoreError::Moved { key }));
            }
            for call in &decided {
                let changed = transaction.execute(
                    "UPDATE tool_runtime_spent_calls SET decision = ?4, spent_at_ms = ?5
                     WHERE tenant_id = ?1 AND run_id = ?2 AND call_key = ?3
                       AND ended_at_ms IS NULL",
                    params![key.tenant_id, key.run_id, call.call_key, call.decision, now_ms],
                )?;
                if changed == 0 {
                    // Dropped: the transaction rolls back.
                    return Ok(Err(StoreError::Moved { key }));
                }
            }
            hold(&transaction, &key, super::taken_at(since_ms, now_ms))?;
            transaction.commit()?;
            Ok(Ok(()))
        })
        .await?
    }

    async fn end_calls(
        &self,
        key: &RunKey,
        call_keys: &[String],
        now_ms: i64,
    ) -> Result<(), StoreError> {
        let (key, call_keys) = (key.clone(), call_keys.to_vec());
        self.with(format!("ending calls of {key}"), move |connection| {
            let transaction =
                connection.transaction_with_behavior(TransactionBehavior::Immediate)?;
            for call_key in &call_keys {
                transaction.execute(
                    "UPDATE tool_runtime_spent_calls SET ended_at_ms = ?4
                     WHERE tenant_id = ?1 AND run_id = ?2 AND call_key = ?3
                       AND ended_at_ms IS NULL",
                    params![key.tenant_id, key.run_id, call_key, now_ms],
                )?;
            }
            transaction.commit()
        })
        .await
    }

    async fn spent(&self, key: &RunKey, call_keys: &[String]) -> Result<Vec<String>, StoreError> {
        let (key, call_keys) = (key.clone(), call_keys.to_vec());
        self.with(format!("reading the spent calls of {key}"), move |connection| {
            spent_of(connection, &key, &call_keys)
        })
        .await
    }

    async fn unfinished(&self, tenant_id: &str) -> Result<Vec<UnfinishedCall>, StoreError> {
        let tenant_id = tenant_id.to_owned();
        let context = format!("listing the unfinished calls of tenant `{tenant_id}`");
        self.with(context, move |connection| {
            let mut statement = connection.prepare_cached(
                "SELECT run_id, call_key, decision, spent_at_ms FROM tool_runtime_spent_calls
                 WHERE tenant_id = ?1 AND ended_at_ms IS NULL
                 ORDER BY spent_at_ms, run_id, call_key",
            )?;
            let rows = statement.query_map(params![tenant_id], |row| {
                Ok(UnfinishedCall {
                    key: RunKey::new(tenant_id.clone(), row.get::<_, String>(0)?),
                    call_key: row.get(1)?,
                    decision: row.get(2)?,
                    spent_at_ms: row.get(3)?,
                })
            })?;
            rows.collect()
        })
        .await
    }

    async fn end_run(&self, key: &RunKey, now_ms: i64) -> Result<(), StoreError> {
        let key = key.clone();
        self.with(format!("ending {key}"), move |connection| {
            let transaction =
                connection.transaction_with_behavior(TransactionBehavior::Immediate)?;
            transaction.execute(
                "UPDATE tool_runtime_runs SET ended = 1, resuming_since_ms = NULL
                 WHERE tenant_id = ?1 AND run_id = ?2",
                params![key.tenant_id, key.run_id],
            )?;
            end_spent(&transaction, &key, now_ms)?;
            transaction.commit()
        })
        .await
    }

    async fn append_audit(&self, entries: &[AuditEntry]) -> Result<(), StoreError> {
        let Some(first) = entries.first() else { return Ok(()) };
        let context = format!("appending to the audit trail of {}", first.key);
        let entries = entries.to_vec();
        self.with(context, move |connection| {
            let transaction =
                connection.transaction_with_behavior(TransactionBehavior::Immediate)?;
            {
                let mut insert = transaction.prepare_cached(
                    "INSERT INTO tool_runtime_audit (tenant_id, run_id, actor_id, call_id,
                         tool_name, outcome, record, raw, raw_cut, recorded_at_ms, expires_at_ms)
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)",
                )?;
                for entry in &entries {
                    insert.execute(params![
                        entry.key.tenant_id,
                        entry.key.run_id,
                        entry.actor_id,
                        entry.call_id,
                        entry.tool_name,
                        entry.outcome.as_str(),
                        entry.record,
                        entry.raw.as_ref().map(RawCall::text),
                        entry.raw.as_ref().is_some_and(RawCall::was_cut),
                        entry.recorded_at_ms,
                        entry.expires_at_ms
                    ])?;
                }
            }
            transaction.commit()
        })
        .await
    }

    async fn audit(&self, key: &RunKey) -> Result<Vec<AuditEntry>, StoreError> {
        let key = key.clone();
        self.with(format!("reading the audit trail of {key}"), move |connection| {
            let mut statement = connection.prepare_cached(
                "SELECT actor_id, call_id, tool_name, outcome, record, raw, raw_cut,
                     recorded_at_ms, expires_at_ms
                 FROM tool_runtime_audit WHERE tenant_id = ?1 AND run_id = ?2 ORDER BY seq",
            )?;
            let rows = statement.query_map(params![key.tenant_id, key.run_id], |row| {
                let raw: Option<String> = row.get(5)?;
                let cut: bool = row.get(6)?;
                let word: String = row.get(3)?;
                let outcome = AuditOutcome::from_word(&word).ok_or_else(|| {
                    rusqlite::Error::FromSqlConversionFailure(
                        3,
                        rusqlite::types::Type::Text,
                        format!("`{word}` is no outcome of a call").into(),
                    )
                })?;
                Ok(AuditEntry {
                    key: key.clone(),
                    actor_id: row.get(0)?,
                    call_id: row.get(1)?,
                    tool_name: row.get(2)?,
                    outcome,
                    record: row.get(4)?,
                    raw: raw.map(|text| RawCall::restored(&text, cut)),
                    recorded_at_ms: row.get(7)?,
                    expires_at_ms: row.get(8)?,
                })
            })?;
            rows.collect()
        })
        .await
    }

    async fn expire(&self, now_ms: i64) -> Result<usize, StoreError> {
        self.with("expiring runs".to_owned(), move |connection| {
            let transaction =
                connection.transaction_with_behavior(TransactionBehavior::Immediate)?;
            transaction.execute(
                "DELETE FROM tool_runtime_audit WHERE expires_at_ms <= ?1",
                params![now_ms],
            )?;
            for table in ["tool_runtime_spent_calls", "tool_runtime_waiting_calls"] {
                transaction.execute(
                    &format!(
                        "DELETE FROM {table} WHERE (tenant_id, run_id) IN
                         (SELECT tenant_id, run_id FROM tool_runtime_runs
                          WHERE expires_at_ms <= ?1)"
                    ),
                    params![now_ms],
                )?;
            }
            let runs = transaction.execute(
                "DELETE FROM tool_runtime_runs WHERE expires_at_ms <= ?1",
                params![now_ms],
            )?;
            transaction.commit()?;
            Ok(runs)
        })
        .await
    }

    async fn delete_tenant(&self, tenant_id: &str) -> Result<usize, StoreError> {
        let tenant_id = tenant_id.to_owned();
        self.with(format!("deleting the runs of tenant `{tenant_id}`"), move |connection| {
            let transaction =
                connection.transaction_with_behavior(TransactionBehavior::Immediate)?;
            for table in
                ["tool_runtime_spent_calls", "tool_runtime_waiting_calls", "tool_runtime_audit"]
            {
                transaction.execute(
                    &format!("DELETE FROM {table} WHERE tenant_id = ?1"),
                    params![tenant_id],
                )?;
            }
            let runs = transaction.execute(
                "DELETE FROM tool_runtime_runs WHERE tenant_id = ?1",
                params![tenant_id],
            )?;
            transaction.commit()?;
            Ok(runs)
        })
        .await
    }
}
