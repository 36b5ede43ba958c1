//! [`PostgresStore`]: a [`RunStore`] in PostgreSQL, shared by the processes of several hosts
//! (feature `postgres`).

use std::fmt;
use std::str::FromStr;

use async_trait::async_trait;
use deadpool_postgres::{Manager, ManagerConfig, Pool, RecyclingMethod, Runtime};
use tokio_postgres::NoTls;

use crate::runtime::RawCall;

use super::{
    AuditEntry, AuditOutcome, Decided, RunKey, RunStore, RunSummary, StoreError, StoredRun,
    UnfinishedCall, WaitingCall, WaitingQuery,
};

/// The version of the tables this code reads and writes.
const SCHEMA_VERSION: i64 = 2;

/// How a [`PostgresStore`] connects: the database schema its tables live in and how many
/// connections its pool may hold.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PostgresOptions {
    /// The schema (namespace) of the store's tables, created if missing (default
    /// `tool_runtime`): lowercase letters, digits and `_`, starting with a letter or `_`, at
    /// most 63 bytes.
    pub schema: String,
    /// The most connections the pool holds at once (default 8).
    pub max_connections: usize,
}

impl Default for PostgresOptions {
    fn default() -> Self {
        Self { schema: "tool_runtime".into(), max_connections: 8 }
    }
}

/// A [`RunStore`] in PostgreSQL (feature `postgres`): for processes on several hosts. Each
/// change is one transaction; a spend locks its run's row first, so two processes spending the
/// same call take turns and the second finds it spent. The store creates its schema and tables
/// on connect, and migrates them, versioned, under an advisory lock: several processes
/// connecting to a new database at once is safe.
///
/// No TLS: connect over a trusted network or a local socket (a TLS connector is a later
/// option).
///
/// ```no_run
/// use tool_runtime::store::{PostgresOptions, PostgresStore, RunKey, RunStore};
///
/// # async fn demo() -> Result<(), tool_runtime::store::StoreError> {
/// let store = PostgresStore::connect("postgres://app@db.internal/app", PostgresOptions::default()).await?;
/// assert_eq!(store.load(&RunKey::new("acme", "run-1")).await?, None);
/// # Ok(()) }
/// ```
#[derive(Clone)]
pub struct PostgresStore {
    pool: Pool,
    sql: std::sync::Arc<Sql>,
}

impl fmt::Debug for PostgresStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PostgresStore").field("schema", &self.sql.schema).finish_non_exhaustive()
    }
}

/// The statements, with the schema's name in them.
#[derive(Debug)]
struct Sql {
    schema: String,
    save_run: String,
    delete_waiting: String,
    insert_waiting: String,
    load_run: String,
    waiting_of: String,
    list: String,
    lock_run: String,
    spent: String,
    insert_spent: String,
    end_call: String,
    end_spent: String,
    hold: String,
    respend: String,
    unfinished: String,
    end_run: String,
    expire_spent: String,
    expire_waiting: String,
    expire_runs: String,
    delete_spent: String,
    delete_waiting_of_tenant: String,
    delete_runs: String,
    insert_audit: String,
    audit_of: String,
    expire_audit: String,
    delete_audit: String,
}

impl Sql {
    fn new(schema: &str) -> Self {
        let runs = format!("{schema}.runs");
        let waiting = format!("{schema}.waiting_calls");
        let spent = format!("{schema}.spent_calls");
        let audit = format!("{schema}.audit");
        Self {
            schema: schema.to_owned(),
            save_run: format!(
                "INSERT INTO {runs} (tenant_id, run_id, actor_id, state, revision, saved_at_ms,
                     expires_at_ms, resuming_since_ms, ended)
                 VALUES ($1, $2, $3, $4, $5, $6, $7, NULL, false)
                 ON CONFLICT (tenant_id, run_id) DO UPDATE SET actor_id = $3, state = $4,
                     revision = $5, saved_at_ms = $6, expires_at_ms = $7,
                     resuming_since_ms = NULL, ended = false"
            ),
            delete_waiting: format!("DELETE FROM {waiting} WHERE tenant_id = $1 AND run_id = $2"),
            insert_waiting: format!(
                "INSERT INTO {waiting} (tenant_id, run_id, position, call_id, tool_name, waits_for)
                 VALUES ($1, $2, $3, $4, $5, $6)"
            ),
            load_run: format!(
                "SELECT actor_id, state, revision, saved_at_ms, expires_at_ms, resuming_since_ms
                 FROM {runs} WHERE tenant_id = $1 AND run_id = $2 AND NOT ended"
            ),
            waiting_of: format!(
                "SELECT run_id, call_id, tool_name, waits_for FROM {waiting}
                 WHERE tenant_id = $1 AND run_id = ANY($2) ORDER BY run_id, position"
            ),
            list: format!(
                "SELECT run_id, actor_id, saved_at_ms, expires_at_ms, resuming_since_ms
                 FROM {runs} AS r
                 WHERE tenant_id = $1 AND NOT ended
                   AND ($2::text IS NULL OR actor_id = $2)
                   AND ($3::text IS NULL OR EXISTS (SELECT 1 FROM {waiting} AS w
                        WHERE w.tenant_id = r.tenant_id AND w.run_id = r.run_id
                          AND w.tool_name = $3))
                   AND (saved_at_ms, run_id) > ($4, $5)
                 ORDER BY saved_at_ms, run_id
                 LIMIT $6"
            ),
            lock_run: format!(
                "SELECT expires_at_ms, revision, resuming_since_ms FROM {runs}
                 WHERE tenant_id = $1 AND run_id = $2 AND NOT ended FOR UPDATE"
            ),
            spent: format!(
                "SELECT call_key FROM {spent}
                 WHERE tenant_id = $1 AND run_id = $2 AND call_key = ANY($3)"
            ),
            insert_spent: format!(
                "INSERT INTO {spent} (tenant_id, run_id, call_key, decision, spent_at_ms)
                 VALUES ($1, $2, $3, $4, $5)"
            ),
            end_call: format!(
                "UPDATE {spent} SET ended_at_ms = $4
                 WHERE tenant_id = $1 AND run_id = $2 AND call_key = ANY($3)
                   AND ended_at_ms IS NULL"
            ),
            end_spent: format!(
                "UPDATE {spent} SET ended_at_ms = $3
                 WHERE tenant_id = $1 AND run_id = $2 AND ended_at_ms IS NULL"
            ),
            hold: format!(
                "UPDATE {runs} SET resuming_since_ms = $3 WHERE tenant_id = $1 AND run_id = $2"
            ),
            respend: format!(
                "UPDATE {spent} SET decision = $4, spent_at_ms = $5
                 WHERE tenant_id = $1 AND run_id = $2 AND call_key = $3 AND ended_at_ms IS NULL"
            ),
            unfinished: format!(
                "SELECT run_id, call_key, decision, spent_at_ms FROM {spent}
                 WHERE tenant_id = $1 AND ended_at_ms IS NULL
                 ORDER BY spent_at_ms, run_id, call_key"
            ),
            end_run: format!(
                "UPDATE {runs} SET ended = true, resuming_since_ms = NULL
                 WHERE tenant_id = $1 AND run_id = $2"
            ),
            expire_spent: format!(
                "DELETE FROM {spent} AS s USING {runs} AS r
                 WHERE s.tenant_id = r.tenant_id AND s.run_id = r.run_id AND r.expires_at_ms <= $1"
            ),
            expire_waiting: format!(
                "DELETE FROM {waiting} AS w USING {runs} AS r
                 WHERE w.tenant_id = r.tenant_id AND w.run_id = r.run_id AND r.expires_at_ms <= $1"
            ),
            expire_runs: format!("DELETE FROM {runs} WHERE expires_at_ms <= $1"),
            delete_spent: format!("DELETE FROM {spent} WHERE tenant_id = $1"),
            delete_waiting_of_tenant: format!("DELETE FROM {waiting} WHERE tenant_id = $1"),
            delete_runs: format!("DELETE FROM {runs} WHERE tenant_id = $1"),
            insert_audit: format!(
                "INSERT INTO {audit} (tenant_id, run_id, actor_id, call_id, tool_name, outcome,
                     record, raw, raw_cut, recorded_at_ms, expires_at_ms)
                 VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)"
            ),
            audit_of: format!(
                "SELECT actor_id, call_id, tool_name, outcome, record, raw, raw_cut,
                     recorded_at_ms, expires_at_ms
                 FROM {audit} WHERE tenant_id = $1 AND run_id = $2 ORDER BY seq"
            ),
            expire_audit: format!("DELETE FROM {audit} WHERE expires_at_ms <= $1"),
            delete_audit: format!("DELETE FROM {audit} WHERE tenant_id = $1"),
        }
    }

    /// The tables of version 1.
    fn schema_v1(&self) -> String {
        let schema = &self.schema;
        format!(
            "CREATE TABLE {schema}.runs (
                tenant_id TEXT NOT NULL,
                run_id TEXT NOT NULL,
                actor_id TEXT NOT NULL,
                state BYTEA NOT NULL,
                revision TEXT NOT NULL,
                saved_at_ms BIGINT NOT NULL,
                expires_at_ms BIGINT NOT NULL,
                resuming_since_ms BIGINT,
                ended BOOLEAN NOT NULL DEFAULT false,
                PRIMARY KEY (tenant_id, run_id)
            );
            CREATE INDEX runs_inbox ON {schema}.runs (tenant_id, ended, saved_at_ms, run_id);
            CREATE INDEX runs_expiry ON {schema}.runs (expires_at_ms);
            CREATE TABLE {schema}.waiting_calls (
                tenant_id TEXT NOT NULL,
                run_id TEXT NOT NULL,
                position INTEGER NOT NULL,
                call_id TEXT NOT NULL,
                tool_name TEXT NOT NULL,
                waits_for TEXT NOT NULL,
                PRIMARY KEY (tenant_id, run_id, position)
            );
            CREATE INDEX waiting_calls_tool ON {schema}.waiting_calls (tenant_id, tool_name, run_id);
            CREATE TABLE {schema}.spent_calls (
                tenant_id TEXT NOT NULL,
                run_id TEXT NOT NULL,
                call_key TEXT NOT NULL,
                decision TEXT NOT NULL,
                spent_at_ms BIGINT NOT NULL,
                ended_at_ms BIGINT,
                PRIMARY KEY (tenant_id, run_id, call_key)
            );
            CREATE INDEX spent_calls_unfinished ON {schema}.spent_calls (tenant_id, ended_at_ms);"
        )
    }

    /// What version 2 adds: the audit trail.
    fn schema_v2(&self) -> String {
        let schema = &self.schema;
        format!(
            "CREATE TABLE {schema}.audit (
                seq BIGSERIAL PRIMARY KEY,
                tenant_id TEXT NOT NULL,
                run_id TEXT NOT NULL,
                actor_id TEXT NOT NULL,
                call_id TEXT NOT NULL,
                tool_name TEXT NOT NULL,
                outcome TEXT NOT NULL,
                record TEXT NOT NULL,
                raw TEXT,
                raw_cut BOOLEAN NOT NULL,
                recorded_at_ms BIGINT NOT NULL,
                expires_at_ms BIGINT NOT NULL
            );
            CREATE INDEX audit_run ON {schema}.audit (tenant_id, run_id, seq);
            CREATE INDEX audit_expiry ON {schema}.audit (expires_at_ms);"
        )
    }
}

/// Whether `schema` is a name the store puts in its statements unquoted.
fn plain_name(schema: &str) -> bool {
    let mut bytes = schema.bytes();
    let first = bytes.next();
    schema.len() <= 63
        && first.is_some_and(|byte| byte.is_ascii_lowercase() || byte == b'_')
        && bytes.all(|byte| byte.is_ascii_lowercase() || byte.is_ascii_digit() || byte == b'_')
}

fn backend(context: impl Into<String>, error: &dyn fmt::Display) -> StoreError {
    StoreError::Backend { context: context.into(), message: error.to_string() }
}

impl PostgresStore {
    /// Connects to the database at `url` (`postgres://user@host:port/database`), creating or
    /// migrating the store's schema and tables.
    ///
    /// # Errors
    ///
    /// [`StoreError::Backend`] when the URL or the schema name is bad, the server does not
    /// answer or the tables cannot be made; [`StoreError::SchemaTooNew`] when a newer version
    /// of this crate migrated them.
    pub async fn connect(url: &str, options: PostgresOptions) -> Result<Self, StoreError> {
        let context = "connecting to the store";
        if !plain_name(&options.schema) {
            let message = format!(
                "the schema name `{}` is not lowercase letters, digits and `_` (at most 63 bytes)",
                crate::schema::Shown(&options.schema)
            );
            return Err(StoreError::Backend { context: context.into(), message });
        }
        let config = tokio_postgres::Config::from_str(url).map_err(|error| {
            // The URL may hold a password: only the parser's message is kept.
            backend(context, &format_args!("the database URL does not parse ({error})"))
        })?;
        let manager = Manager::from_config(
            config,
            NoTls,
            ManagerConfig { recycling_method: RecyclingMethod::Fast },
        );
        let pool = Pool::builder(manager)
            .max_size(options.max_connections.max(1))
            .runtime(Runtime::Tokio1)
            .build()
            .map_err(|error| backend(context, &error))?;
        let store = Self { pool, sql: std::sync::Arc::new(Sql::new(&options.schema)) };
        store.migrate().await?;
        Ok(store)
    }

    /// Creates or migrates the tables in one transaction, under an advisory lock on the
    /// schema's name: a second process connecting at the same time waits, then finds them.
    async fn migrate(&self) -> Result<(), StoreError> {
        let context = "creating the store's tables";
        let failed = |error: tokio_postgres::Error| backend(context, &error);
        let mut client = self.pool.get().await.map_err(|error| backend(context, &error))?;
        let transaction = client.transaction().await.map_err(failed)?;
        let schema = &self.sql.schema;
        transaction
            .execute(
                "SELECT pg_advisory_xact_lock(hashtext($1))",
                &[&format!("tool_runtime.store.{schema}")],
            )
            .await
            .map_err(failed)?;
        transaction
            .batch_execute(&format!(
                "CREATE SCHEMA IF NOT EXISTS {schema};
                 CREATE TABLE IF NOT EXISTS {schema}.store_version (version BIGINT NOT NULL);"
            ))
            .await
            .map_err(failed)?;
        let found: Option<i64> = transaction
            .query_one(&format!("SELECT max(version) FROM {schema}.store_version"), &[])
            .await
            .map_err(failed)?
            .get(0);
        let steps = match found {
            None => vec![self.sql.schema_v1(), self.sql.schema_v2()],
            Some(1) => vec![self.sql.schema_v2()],
            Some(SCHEMA_VERSION) => Vec::new(),
            Some(found) => {
                // Ended here, not when dropped: the advisory lock is held until it ends.
                transaction.rollback().await.map_err(failed)?;
                if found > SCHEMA_VERSION {
                    return Err(StoreError::SchemaTooNew { found, supported: SCHEMA_VERSION });
                }
                let message = format!("version {found} has no migration to {SCHEMA_VERSION}");
                return Err(StoreError::Backend { context: "migrating the store".into(), message });
            }
        };
        if !steps.is_empty() {
            for step in &steps {
                transaction.batch_execute(step).await.map_err(failed)?;
            }
            transaction
                .execute(
                    &format!("INSERT INTO {schema}.store_version (version) VALUES ($1)"),
                    &[&SCHEMA_VERSION],
                )
                .await
                .map_err(failed)?;
        }
        transaction.commit().await.map_err(failed)
    }

    /// Why `decided` calls of the run at `key` cannot be spent at `now_ms` on the state
    /// `revision`, if they cannot: calls spent before, the run not stored or ended, expired,
    /// moved on or held by another resume. Locks the run's row first, so two processes
    /// spending its calls take turns.
    async fn refusal(
        &self,
        transaction: &deadpool_postgres::Transaction<'_>,
        key: &RunKey,
        revision: &str,
        decided: &[Decided],
        now_ms: i64,
    ) -> Result<Option<StoreError>, tokio_postgres::Error> {
        let run = transaction.query_opt(&self.sql.lock_run, &[&key.tenant_id, &key.run_id]).await?;
        let keys: Vec<String> = decided.iter().map(|call| call.call_key.clone()).collect();
        let call_keys = self.spent_of(transaction, key, &keys).await?;
        if !call_keys.is_empty() {
            return Ok(Some(StoreError::AlreadySpent { key: key.clone(), call_keys }));
        }
        let Some(run) = run else { return Ok(Some(StoreError::NotFound { key: key.clone() })) };
        let expires_at_ms: i64 = run.get(0);
        if now_ms >= expires_at_ms {
            let expired_at_ms = expires_at_ms;
            return Ok(Some(StoreError::Expired { key: key.clone(), expired_at_ms }));
        }
        if run.get::<_, &str>(1) != revision {
            return Ok(Some(StoreError::Moved { key: key.clone() }));
        }
        Ok(run
            .get::<_, Option<i64>>(2)
            .map(|since_ms| StoreError::Busy { key: key.clone(), since_ms }))
    }

    /// Which of `call_keys` were spent for the run at `key`, in their order.
    async fn spent_of(
        &self,
        client: &impl deadpool_postgres::GenericClient,
        key: &RunKey,
        call_keys: &[String],
    ) -> Result<Vec<String>, tokio_postgres::Error> {
        let rows =
            client.query(&self.sql.spent, &[&key.tenant_id, &key.run_id, &call_keys]).await?;
        let spent: Vec<String> = rows.iter().map(|row| row.get(0)).collect();
        Ok(call_keys.iter().filter(|call_key| spent.contains(call_key)).cloned().collect())
    }

    /// A connection from the pool.
    async fn client(&self, context: &str) -> Result<deadpool_postgres::Client, StoreError> {
        self.pool.get().await.map_err(|error| backend(context, &error))
    }

    /// The waiting calls of `runs` of `tenant_id`, by run, each in order.
    async fn waiting_of(
        &self,
        client: &deadpool_postgres::Client,
        tenant_id: &str,
        runs: &[String],
        context: &str,
    ) -> Result<std::collections::HashMap<String, Vec<WaitingCall>>, StoreError> {
        let failed = |error: tokio_postgres::Error| backend(context, &error);
        let statement = client.prepare_cached(&self.sql.waiting_of).await.map_err(failed)?;
        let rows = client.query(&statement, &[&tenant_id, &runs]).await.map_err(failed)?;
        let mut found: std::collections::HashMap<String, Vec<WaitingCall>> = Default::default();
        for row in rows {
            let text: String = row.get(3);
            let waits_for = super::waits_for_named(&text).ok_or_else(|| StoreError::Backend {
                context: context.to_owned(),
                message: format!("`{}` is not what a call waits for", crate::schema::Shown(&text)),
            })?;
            found.entry(row.get(0)).or_default().push(WaitingCall {
                call_id: row.get(1),
                tool_name: row.get(2),
                waits_for,
            });
        }
        Ok(found)
    }
}

#[async_trait]
impl RunStore for PostgresStore {
    async fn save(&self, run: StoredRun) -> Result<(), StoreError> {
        let context = format!("saving {}", run.key);
        let failed = |error: tokio_postgres::Error| backend(&context, &error);
        let mut client = self.client(&context).await?;
        let transaction = client.transaction().await.map_err(failed)?;
        let key = &run.key;
        transaction
            .execute(
                &self.sql.save_run,
                &[
                    &key.tenant_id,
                    &key.run_id,
                    &run.actor_id,
                    &run.state,
                    &run.revision,
                    &run.saved_at_ms,
                    &run.expires_at_ms,
                ],
            )
            .await
            .map_err(failed)?;
        transaction
            .execute(&self.sql.end_spent, &[&key.tenant_id, &key.run_id, &run.saved_at_ms])
            .await
            .map_err(failed)?;
        transaction
            .execute(&self.sql.delete_waiting, &[&key.tenant_id, &key.run_id])
            .await
            .map_err(failed)?;
        for (position, call) in run.waiting.iter().enumerate() {
            let position = i32::try_from(position).unwrap_or(i32::MAX);
            transaction
                .execute(
                    &self.sql.insert_waiting,
                    &[
                        &key.tenant_id,
                        &key.run_id,
                        &position,
                        &call.call_id,
                        &call.tool_name,
                        &call.waits_for.as_str(),
                    ],
                )
                .await
                .map_err(failed)?;
        }
        transaction.commit().await.map_err(failed)
    }

    async fn load(&self, key: &RunKey) -> Result<Option<StoredRun>, StoreError> {
        let context = format!("loading {key}");
        let failed = |error: tokio_postgres::Error| backend(&context, &error);
        let client = self.client(&context).await?;
        let statement = client.prepare_cached(&self.sql.load_run).await.map_err(failed)?;
        let row =
            client.query_opt(&statement, &[&key.tenant_id, &key.run_id]).await.map_err(failed)?;
        let Some(row) = row else { return Ok(None) };
        let mut waiting = self
            .waiting_of(&client, &key.tenant_id, std::slice::from_ref(&key.run_id), &context)
            .await?;
        Ok(Some(StoredRun {
            key: key.clone(),
            actor_id: row.get(0),
            waiting: waiting.remove(&key.run_id).unwrap_or_default(),
            state: row.get(1),
            revision: row.get(2),
            saved_at_ms: row.get(3),
            expires_at_ms: row.get(4),
            resuming_since_ms: row.get(5),
        }))
    }

    async fn list_waiting(&self, query: &WaitingQuery) -> Result<Vec<RunSummary>, StoreError> {
        let context = format!("listing the waiting runs of tenant `{}`", query.tenant_id);
        let failed = |error: tokio_postgres::Error| backend(&context, &error);
        let client = self.client(&context).await?;
        let statement = client.prepare_cached(&self.sql.list).await.map_err(failed)?;
        let (after_at, after_run) = query.after.clone().unwrap_or((i64::MIN, String::new()));
        let limit = i64::try_from(query.limit).unwrap_or(i64::MAX);
        let rows = client
            .query(
                &statement,
                &[
                    &query.tenant_id,
                    &query.actor_id,
                    &query.tool_name,
                    &after_at,
                    &after_run,
                    &limit,
                ],
            )
            .await
            .map_err(failed)?;
        let runs: Vec<String> = rows.iter().map(|row| row.get(0)).collect();
        let mut waiting = self.waiting_of(&client, &query.tenant_id, &runs, &context).await?;
        Ok(rows
            .into_iter()
            .map(|row| {
                let run_id: String = row.get(0);
                RunSummary {
                    waiting: waiting.remove(&run_id).unwrap_or_default(),
                    key: RunKey::new(query.tenant_id.clone(), run_id),
                    actor_id: row.get(1),
                    saved_at_ms: row.get(2),
                    expires_at_ms: row.get(3),
                    resuming_since_ms: row.get(4),
                }
            })
            .collect())
    }

    async fn spend(
        &self,
        key: &RunKey,
        revision: &str,
        decided: &[Decided],
        now_ms: i64,
    ) -> Result<(), StoreError> {
        let context = format!("spending calls of {key}");
        let failed = |error: tokio_postgres::Error| backend(&context, &error);
        let mut client = self.client(&context).await?;
        let transaction = client.transaction().await.map_err(failed)?;
        let refusal =
            self.refusal(&transaction, key, revision, decided, now_ms).await.map_err(failed)?;
        if let Some(refusal) = refusal {
            // Ended here, not when dropped: a dropped transaction's rollback waits for the
            // connection to be polled again, and the run's row stays locked until then.
            transaction.rollback().await.map_err(failed)?;
            return Err(refusal);
        }
        transaction
            .execute(&self.sql.hold, &[&key.tenant_id, &key.run_id, &now_ms])
            .await
            .map_err(failed)?;
        for call in decided {
            transaction
                .execute(
                    &self.sql.insert_spent,
                    &[&key.tenant_id, &key.run_id, &call.call_key, &call.decision, &now_ms],
                )
                .await
                .map_err(failed)?;
        }
        transaction.commit().await.map_err(failed)
    }

    async fn take_over(
        &self,
        key: &RunKey,
        since_ms: i64,
        decided: &[Decided],
        now_ms: i64,
    ) -> Result<(), StoreError> {
        let context = format!("taking over {key}");
        let failed = |error: tokio_postgres::Error| backend(&context, &error);
        let mut client = self.client(&context).await?;
        let transaction = client.transaction().await.map_err(failed)?;
        let run = transaction
            .query_opt(&self.sql.lock_run, &[&key.tenant_id, &key.run_id])
            .await
            .map_err(failed)?;
        let mut refusal = match run {
            None => Some(StoreError::NotFound { key: key.clone() }),
            Some(run) if run.get::<_, Option<i64>>(2) != Some(since_ms) => {
                Some(StoreError::Moved { key: key.clone() })
            }
            Some(_) => None,
        };
        for call in decided {
            if refusal.is_some() {
                break;
            }
            let changed = transaction
                .execute(
                    &self.sql.respend,
                    &[&key.tenant_id, &key.run_id, &call.call_key, &call.decision, &now_ms],
                )
                .await
                .map_err(failed)?;
            if changed == 0 {
                refusal = Some(StoreError::Moved { key: key.clone() });
            }
        }
        if let Some(refusal) = refusal {
            transaction.rollback().await.map_err(failed)?;
            return Err(refusal);
        }
        let held = super::taken_at(since_ms, now_ms);
        transaction
            .execute(&self.sql.hold, &[&key.tenant_id, &key.run_id, &held])
            .await
            .map_err(failed)?;
        transaction.commit().await.map_err(failed)
    }

    async fn end_calls(
        &self,
        key: &RunKey,
        call_keys: &[String],
        now_ms: i64,
    ) -> Result<(), StoreError> {
        let context = format!("ending calls of {key}");
        let client = self.client(&context).await?;
        client
            .execute(&self.sql.end_call, &[&key.tenant_id, &key.run_id, &call_keys, &now_ms])
            .await
            .map_err(|error| backend(&context, &error))?;
        Ok(())
    }

    async fn spent(&self, key: &RunKey, call_keys: &[String]) -> Result<Vec<String>, StoreError> {
        let context = format!("reading the spent calls of {key}");
        let client = self.client(&context).await?;
        self.spent_of(&client, key, call_keys).await.map_err(|error| backend(&context, &error))
    }

    async fn unfinished(&self, tenant_id: &str) -> Result<Vec<UnfinishedCall>, StoreError> {
        let context = format!("listing the unfinished calls of tenant `{tenant_id}`");
        let client = self.client(&context).await?;
        let rows = client
            .query(&self.sql.unfinished, &[&tenant_id])
            .await
            .map_err(|error| backend(&context, &error))?;
        Ok(rows
            .into_iter()
            .map(|row| UnfinishedCall {
                key: RunKey::new(tenant_id, row.get::<_, String>(0)),
                call_key: row.get(1),
                decision: row.get(2),
                spent_at_ms: row.get(3),
            })
            .collect())
    }

    async fn end_run(&self, key: &RunKey, now_ms: i64) -> Result<(), StoreError> {
        let context = format!("ending {key}");
        let failed = |error: tokio_postgres::Error| backend(&context, &error);
        let mut client = self.client(&context).await?;
        let transaction = client.transaction().await.map_err(failed)?;
        transaction
            .execute(&self.sql.end_run, &[&key.tenant_id, &key.run_id])
            .await
            .map_err(failed)?;
        transaction
            .execute(&self.sql.end_spent, &[&key.tenant_id, &key.run_id, &now_ms])
            .await
            .map_err(failed)?;
        transaction.commit().await.map_err(failed)
    }

    async fn append_audit(&self, entries: &[AuditEntry]) -> Result<(), StoreError> {
        let Some(first) = entries.first() else { return Ok(()) };
        let context = format!("appending to the audit trail of {}", first.key);
        let failed = |error: tokio_postgres::Error| backend(&context, &error);
        let mut client = self.client(&context).await?;
        let transaction = client.transaction().await.map_err(failed)?;
        let insert = transaction.prepare_cached(&self.sql.insert_audit).await.map_err(failed)?;
        for entry in entries {
            let raw = entry.raw.as_ref();
            transaction
                .execute(
                    &insert,
                    &[
                        &entry.key.tenant_id,
                        &entry.key.run_id,
                        &entry.actor_id,
                        &entry.call_id,
                        &entry.tool_name,
                        &entry.outcome.as_str(),
                        &entry.record,
                        &raw.map(RawCall::text),
                        &raw.is_some_and(RawCall::was_cut),
                        &entry.recorded_at_ms,
                        &entry.expires_at_ms,
                    ],
                )
                .await
                .map_err(failed)?;
        }
        transaction.commit().await.map_err(failed)
    }

    async fn audit(&self, key: &RunKey) -> Result<Vec<AuditEntry>, StoreError> {
        let context = format!("reading the audit trail of {key}");
        let failed = |error: tokio_postgres::Error| backend(&context, &error);
        let client = self.client(&context).await?;
        let rows = client
            .query(&self.sql.audit_of, &[&key.tenant_id, &key.run_id])
            .await
            .map_err(failed)?;
        rows.iter()
            .map(|row| {
                let raw: Option<String> = row.try_get(5).map_err(failed)?;
                let cut: bool = row.try_get(6).map_err(failed)?;
                let word: String = row.try_get(3).map_err(failed)?;
                let outcome = AuditOutcome::from_word(&word).ok_or_else(|| {
                    backend(&context, &format_args!("`{word}` is no outcome of a call"))
                })?;
                Ok(AuditEntry {
                    key: key.clone(),
                    actor_id: row.try_get(0).map_err(failed)?,
                    call_id: row.try_get(1).map_err(failed)?,
                    tool_name: row.try_get(2).map_err(failed)?,
                    outcome,
                    record: row.try_get(4).map_err(failed)?,
                    raw: raw.map(|text| RawCall::restored(&text, cut)),
                    recorded_at_ms: row.try_get(7).map_err(failed)?,
                    expires_at_ms: row.try_get(8).map_err(failed)?,
                })
            })
            .collect()
    }

    async fn expire(&self, now_ms: i64) -> Result<usize, StoreError> {
        let context = "expiring runs";
        let failed = |error: tokio_postgres::Error| backend(context, &error);
        let mut client = self.client(context).await?;
        let transaction = client.transaction().await.map_err(failed)?;
        for statement in [&self.sql.expire_spent, &self.sql.expire_waiting, &self.sql.expire_audit]
        {
            transaction.execute(statement, &[&now_ms]).await.map_err(failed)?;
        }
        let runs = transaction.execute(&self.sql.expire_runs, &[&now_ms]).await.map_err(failed)?;
        transaction.commit().await.map_err(failed)?;
        Ok(usize::try_from(runs).unwrap_or(usize::MAX))
    }

    async fn delete_tenant(&self, tenant_id: &str) -> Result<usize, StoreError> {
        let context = format!("deleting the runs of tenant `{tenant_id}`");
        let failed = |error: tokio_postgres::Error| backend(&context, &error);
        let mut client = self.client(&context).await?;
        let transaction = client.transaction().await.map_err(failed)?;
        for statement in
            [&self.sql.delete_spent, &self.sql.delete_waiting_of_tenant, &self.sql.delete_audit]
        {
            transaction.execute(statement, &[&tenant_id]).await.map_err(failed)?;
        }
        let runs =
            transaction.execute(&self.sql.delete_runs, &[&tenant_id]).await.map_err(failed)?;
        transaction.commit().await.map_err(failed)?;
        Ok(usize::try_from(runs).unwrap_or(usize::MAX))
    }
}
