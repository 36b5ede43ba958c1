//! Where runs that wait live: their sealed states, an index of what they wait for, and the
//! ledger of decided calls, shared by every process that may resume them.
//!
//! A run that stops on calls that wait (an approval, a client's result, a user's answer) is a
//! sealed state ([`RunState`](crate::agent::deferred::RunState)). A [`RunStore`] keeps it
//! under its tenant and run ([`RunKey`]) with what an inbox needs to list it without opening
//! it ([`StoredRun`]: the actor, the waiting calls and their tools, when it was saved and when
//! it expires). The ledger is part of the same store: a resume [spends](RunStore::spend) the
//! calls it decided, each with its decision, all or none, in one transaction, so a call runs at
//! most once whichever process resumes it and however often. The spend names the state it
//! decided on (its [revision](StoredRun::revision)) and holds the run until the resume
//! [saves](RunStore::save) the state that follows or [ends](RunStore::end_run) the run, which
//! ends the spent calls with it: two resumes of one run never work on it at once, and none
//! decides on a state that moved on. A call spent and never ended (the process died in
//! between) is neither lost nor run again: [`unfinished`](RunStore::unfinished) lists it for
//! an operator, who [takes the run over](RunStore::take_over) with a new decision.
//!
//! The store decides nothing: it keeps bytes and answers questions. The seal, the caller's
//! identity and the decisions are checked by the agent before anything is spent.
//!
//! [`InMemoryStore`] serves one process (and tests).
//!
//! ```
//! use tool_runtime::runtime::WaitsFor;
//! use tool_runtime::store::{Decided, InMemoryStore, RunKey, RunStore, StoredRun, WaitingCall, WaitingQuery};
//!
//! # tokio::runtime::Runtime::new().unwrap().block_on(async {
//! let store = InMemoryStore::new();
//! let key = RunKey::new("acme", "run-1");
//! let call = WaitingCall { call_id: "call_1".into(), tool_name: "billing__refund".into(), waits_for: WaitsFor::Approval };
//! let run = StoredRun::new(key.clone(), "user-7", vec![call], b"{\"sealed\": true}".to_vec(), "rev-1", 1_000, 86_400_000);
//! store.save(run).await?;
//!
//! // The approvals inbox of the tenant, oldest first.
//! let inbox = store.list_waiting(&WaitingQuery::tenant("acme")).await?;
//! assert_eq!(inbox.len(), 1);
//! assert_eq!(inbox[0].waiting[0].tool_name, "billing__refund");
//!
//! // The first resume spends the call (deciding on the state `rev-1`); a replay finds it spent.
//! let approve = [Decided::new("call_1", "approved")];
//! store.spend(&key, "rev-1", &approve, 2_000).await?;
//! assert!(store.spend(&key, "rev-1", &approve, 2_001).await.is_err());
//! // Spent and not ended yet: an operator would see it here.
//! assert_eq!(store.unfinished("acme").await?.len(), 1);
//! // The run ends: its spent calls end with it.
//! store.end_run(&key, 2_500).await?;
//! assert!(store.unfinished("acme").await?.is_empty());
//! # Ok::<(), tool_runtime::store::StoreError>(())
//! # }).unwrap();
//! ```

use std::fmt;

use async_trait::async_trait;

use crate::runtime::WaitsFor;

mod audit;
mod memory;
#[cfg(feature = "postgres")]
mod postgres;
#[cfg(feature = "sqlite")]
mod sqlite;

pub use audit::{AuditEntry, AuditOutcome};
pub use memory::InMemoryStore;
#[cfg(feature = "postgres")]
pub use postgres::{PostgresOptions, PostgresStore};
#[cfg(feature = "sqlite")]
pub use sqlite::SqliteStore;

/// Milliseconds since the Unix epoch: the clock the stores' callers (the agent, the MCP
/// server) pass in.
#[cfg(feature = "agent")]
pub(crate) fn now_ms() -> i64 {
    let since = std::time::SystemTime::UNIX_EPOCH.elapsed().unwrap_or_default();
    i64::try_from(since.as_millis()).unwrap_or(i64::MAX)
}

/// A run's address in a store: its tenant and its run id. Two tenants may use the same run
/// ids; nothing of one reaches the other.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct RunKey {
    /// The tenant the run belongs to.
    pub tenant_id: String,
    /// The run, unique within its tenant.
    pub run_id: String,
}

impl RunKey {
    /// The key of `run_id` in `tenant_id`.
    ///
    /// ```
    /// let key = tool_runtime::store::RunKey::new("acme", "run-1");
    /// assert_eq!((key.tenant_id.as_str(), key.run_id.as_str()), ("acme", "run-1"));
    /// ```
    pub fn new(tenant_id: impl Into<String>, run_id: impl Into<String>) -> Self {
        Self { tenant_id: tenant_id.into(), run_id: run_id.into() }
    }
}

impl fmt::Display for RunKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "run `{}` of tenant `{}`", self.run_id, self.tenant_id)
    }
}

/// One call a stored run waits on, as an inbox lists it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WaitingCall {
    /// The call's id within the run (decisions name it).
    pub call_id: String,
    /// Its tool.
    pub tool_name: String,
    /// What it waits for.
    pub waits_for: WaitsFor,
}

/// A run that waits, as a store keeps it: the sealed state's bytes, exactly as they were
/// written, and what listing it needs.
#[derive(Clone, PartialEq, Eq)]
pub struct StoredRun {
    /// Where it lives.
    pub key: RunKey,
    /// Who started it (the only actor who may resume it).
    pub actor_id: String,
    /// The calls it waits on.
    pub waiting: Vec<WaitingCall>,
    /// The sealed state, as written.
    pub state: Vec<u8>,
    /// A token that names this state and no other (the agent uses its seal): a spend names
    /// the state it decided on, and is refused once another was saved.
    pub revision: String,
    /// When it was saved, in milliseconds since the Unix epoch.
    pub saved_at_ms: i64,
    /// When it expires, in milliseconds since the Unix epoch: from then on it is not resumed,
    /// and [`RunStore::expire`] deletes it with its ledger entries.
    pub expires_at_ms: i64,
    /// Set by the store: when a resume spent calls of this state, if it has not saved the run
    /// or ended it since (it is running them, or its process died).
    pub resuming_since_ms: Option<i64>,
}

impl StoredRun {
    /// The state `revision` of a run, saved at `saved_at_ms`, that expires `ttl_ms` later.
    pub fn new(
        key: RunKey,
        actor_id: impl Into<String>,
        waiting: Vec<WaitingCall>,
        state: Vec<u8>,
        revision: impl Into<String>,
        saved_at_ms: i64,
        ttl_ms: u64,
    ) -> Self {
        let ttl = i64::try_from(ttl_ms).unwrap_or(i64::MAX);
        Self {
            key,
            actor_id: actor_id.into(),
            waiting,
            state,
            revision: revision.into(),
            saved_at_ms,
            expires_at_ms: saved_at_ms.saturating_add(ttl),
            resuming_since_ms: None,
        }
    }

    /// What a listing shows of it: everything but the state.
    #[must_use]
    pub fn summary(&self) -> RunSummary {
        RunSummary {
            key: self.key.clone(),
            actor_id: self.actor_id.clone(),
            waiting: self.waiting.clone(),
            saved_at_ms: self.saved_at_ms,
            expires_at_ms: self.expires_at_ms,
            resuming_since_ms: self.resuming_since_ms,
        }
    }
}

/// The state's bytes are not shown: they hold the conversation.
impl fmt::Debug for StoredRun {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("StoredRun")
            .field("key", &self.key)
            .field("actor_id", &self.actor_id)
            .field("waiting", &self.waiting)
            .field("state", &format_args!("<{} bytes>", self.state.len()))
            .field("revision", &self.revision)
            .field("saved_at_ms", &self.saved_at_ms)
            .field("expires_at_ms", &self.expires_at_ms)
            .field("resuming_since_ms", &self.resuming_since_ms)
            .finish()
    }
}

/// A waiting run as a listing shows it (no state).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunSummary {
    /// Where it lives.
    pub key: RunKey,
    /// Who started it.
    pub actor_id: String,
    /// The calls it waits on.
    pub waiting: Vec<WaitingCall>,
    /// When it was saved (milliseconds since the Unix epoch).
    pub saved_at_ms: i64,
    /// When it expires (milliseconds since the Unix epoch).
    pub expires_at_ms: i64,
    /// When a resume spent calls of it, if that resume has not saved or ended it since
    /// (milliseconds since the Unix epoch): it is running them, or its process died (see
    /// [`RunStore::unfinished`]).
    pub resuming_since_ms: Option<i64>,
}

/// Which waiting runs to list: one tenant's, optionally only one actor's or those waiting on
/// one tool; oldest first, at most `limit`, after a cursor.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WaitingQuery {
    /// The tenant.
    pub tenant_id: String,
    /// Only runs of this actor.
    pub actor_id: Option<String>,
    /// Only runs with a call of this tool waiting.
    pub tool_name: Option<String>,
    /// Only runs saved after this one (the last of the previous page): `(saved_at_ms, run_id)`.
    pub after: Option<(i64, String)>,
    /// At most this many (default 100).
    pub limit: usize,
}

impl WaitingQuery {
    /// Every waiting run of `tenant_id`, the first 100, oldest first.
    pub fn tenant(tenant_id: impl Into<String>) -> Self {
        Self {
            tenant_id: tenant_id.into(),
            actor_id: None,
            tool_name: None,
            after: None,
            limit: 100,
        }
    }

    /// Only `actor_id`'s runs.
    #[must_use]
    pub fn actor(mut self, actor_id: impl Into<String>) -> Self {
        self.actor_id = Some(actor_id.into());
        self
    }

    /// Only runs with a call of `tool_name` waiting.
    #[must_use]
    pub fn tool(mut self, tool_name: impl Into<String>) -> Self {
        self.tool_name = Some(tool_name.into());
        self
    }

    /// The page after `last` (the last run of the page before).
    #[must_use]
    pub fn after(mut self, last: &RunSummary) -> Self {
        self.after = Some((last.saved_at_ms, last.key.run_id.clone()));
        self
    }

    /// At most `limit` runs.
    #[must_use]
    pub const fn limit(mut self, limit: usize) -> Self {
        self.limit = limit;
        self
    }

    /// Whether `run` is one this query lists (the cursor and the limit aside).
    #[must_use]
    pub fn matches(&self, run: &RunSummary) -> bool {
        self.selects(&run.key, &run.actor_id, &run.waiting, run.saved_at_ms)
    }

    /// Whether the run of these parts is one this query lists (the cursor and the limit
    /// aside).
    pub(crate) fn selects(
        &self,
        key: &RunKey,
        actor_id: &str,
        waiting: &[WaitingCall],
        saved_at_ms: i64,
    ) -> bool {
        key.tenant_id == self.tenant_id
            && self.actor_id.as_ref().is_none_or(|actor| actor == actor_id)
            && self
                .tool_name
                .as_ref()
                .is_none_or(|tool| waiting.iter().any(|call| call.tool_name == *tool))
            && self.after.as_ref().is_none_or(|(at, run_id)| {
                (saved_at_ms, key.run_id.as_str()) > (*at, run_id.as_str())
            })
    }
}

/// A decided call, as a resume spends it: the key it is spent under (its call id, or
/// `<call id>#answer-<n>` for the `n`th answer to its questions) and what was decided.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Decided {
    /// The key it is spent under.
    pub call_key: String,
    /// What was decided (`approved`, `edited`, `denied`, `supplied`, `answered`).
    pub decision: String,
}

impl Decided {
    /// `call_key` spent with `decision`.
    pub fn new(call_key: impl Into<String>, decision: impl Into<String>) -> Self {
        Self { call_key: call_key.into(), decision: decision.into() }
    }
}

/// A call spent and never ended: the process that resumed it stopped between the two (or is
/// still running it). An operator decides: [`RunStore::end_calls`] marks it ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnfinishedCall {
    /// Its run.
    pub key: RunKey,
    /// The key it was spent under.
    pub call_key: String,
    /// What was decided.
    pub decision: String,
    /// When it was spent (milliseconds since the Unix epoch).
    pub spent_at_ms: i64,
}

/// Why a store could not answer: the store itself failed (unreachable, a row that does not
/// decode), or the run is not there to resume.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum StoreError {
    /// No such run in the store (never saved, ended, expired and deleted, or its tenant's runs
    /// deleted).
    NotFound {
        /// The run.
        key: RunKey,
    },
    /// The run has expired: it is not resumed.
    Expired {
        /// The run.
        key: RunKey,
        /// When it expired (milliseconds since the Unix epoch).
        expired_at_ms: i64,
    },
    /// These calls of the run were spent before; none was spent now.
    AlreadySpent {
        /// The run.
        key: RunKey,
        /// The keys of the calls spent before.
        call_keys: Vec<String>,
    },
    /// The run is not as the caller read it: another state of it was saved since (a spend
    /// names the state it decided on), or it is no longer held by the resume an operator
    /// takes it over from. Read it again.
    Moved {
        /// The run.
        key: RunKey,
    },
    /// Another resume of the run spent calls and has not saved or ended it yet: it is running
    /// them, or its process died (then an operator [takes it over](RunStore::take_over)).
    Busy {
        /// The run.
        key: RunKey,
        /// Since when (milliseconds since the Unix epoch).
        since_ms: i64,
    },
    /// The state is larger than the configured limit: it was not stored (or, read back, not
    /// parsed).
    TooLarge {
        /// The run.
        key: RunKey,
        /// The state's size.
        bytes: usize,
        /// The limit.
        limit: usize,
    },
    /// The store's tables were made by a newer version of this crate: this one does not read
    /// them, and changes nothing.
    SchemaTooNew {
        /// Their version.
        found: i64,
        /// The newest version this crate reads.
        supported: i64,
    },
    /// The store failed: the database is unreachable, a statement failed, or a row does not
    /// decode. Nothing was changed.
    Backend {
        /// What the store was doing, and the run it was for when there was one.
        context: String,
        /// The backend's message.
        message: String,
    },
}

impl fmt::Display for StoreError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::NotFound { key } => write!(f, "{key} is not in the store"),
            Self::Expired { key, expired_at_ms } => {
                write!(f, "{key} expired at {expired_at_ms} ms since the epoch")
            }
            Self::AlreadySpent { key, call_keys } => {
                write!(f, "calls of {key} were decided already: {}", call_keys.join(", "))
            }
            Self::Moved { key } => {
                write!(f, "{key} changed since it was read: read it again")
            }
            Self::Busy { key, since_ms } => write!(
                f,
                "{key} is being resumed since {since_ms} ms since the epoch (or the process \
                 resuming it died: take it over)"
            ),
            Self::TooLarge { key, bytes, limit } => {
                write!(f, "the state of {key} is {bytes} bytes, over the limit of {limit}")
            }
            Self::SchemaTooNew { found, supported } => write!(
                f,
                "the store's tables are of version {found}, newer than this code reads \
                 ({supported}): upgrade the crate"
            ),
            Self::Backend { context, message } => {
                write!(f, "the store failed {context}: {message}")
            }
        }
    }
}

impl std::error::Error for StoreError {}

/// What a call waits for, from the word a store keeps (`WaitsFor::as_str`); a word this code
/// does not know is a row that does not decode.
fn waits_for_named(word: &str) -> Option<WaitsFor> {
    [WaitsFor::Approval, WaitsFor::Client, WaitsFor::Elicitation]
        .into_iter()
        .find(|waits_for| waits_for.as_str() == word)
}

/// The hold an operator's take-over puts on a run held since `since_ms`: now, or later than
/// `since_ms` if the clock says otherwise, so a second take-over from `since_ms` finds it
/// moved.
fn taken_at(since_ms: i64, now_ms: i64) -> i64 {
    now_ms.max(since_ms.saturating_add(1))
}

/// Keeps runs that wait, the ledger of their decided calls and the audit trail of every call
/// ([`AuditEntry`]) for every process that may resume them. Implementations: [`InMemoryStore`] (one process), `SqliteStore` (one host;
/// feature `sqlite`), `PostgresStore` (several hosts; feature `postgres`).
///
/// Every method is one transaction: it changes all it says or nothing. Times are milliseconds
/// since the Unix epoch, passed in by the caller (the agent's clock), so a store never reads a
/// clock of its own.
#[async_trait]
pub trait RunStore: Send + Sync + fmt::Debug {
    /// Saves `run`, replacing what its key held (a run resumed that waits again, or one that
    /// ended: it waits again). Saving the state that follows a resume releases the run and
    /// ends the calls that resume spent (at `run.saved_at_ms`): the new state holds how they
    /// ended. The ledger entries stay: a call spent before is still spent.
    ///
    /// # Errors
    ///
    /// [`StoreError::Backend`].
    async fn save(&self, run: StoredRun) -> Result<(), StoreError>;

    /// The run at `key`, if it is stored and has not ended.
    ///
    /// # Errors
    ///
    /// [`StoreError::Backend`].
    async fn load(&self, key: &RunKey) -> Result<Option<StoredRun>, StoreError>;

    /// The waiting runs `query` selects, oldest first (by save time, then run id). Runs that
    /// ended are not listed; runs past their expiry are, until [`expire`](Self::expire) deletes
    /// them (each says when it expires), and so are runs a resume holds (each says since
    /// when).
    ///
    /// # Errors
    ///
    /// [`StoreError::Backend`].
    async fn list_waiting(&self, query: &WaitingQuery) -> Result<Vec<RunSummary>, StoreError>;

    /// Spends `decided` calls of the run at `key` at `now_ms`, all or none, for a resume that
    /// decided them on the state `revision`: the resume that spends a call is the only one
    /// that runs it. The run is then held by that resume until it saves the state that
    /// follows or ends the run.
    ///
    /// # Errors
    ///
    /// In this order: [`StoreError::AlreadySpent`] naming the calls spent before (none is
    /// spent now), [`StoreError::NotFound`] for a run not stored or ended,
    /// [`StoreError::Expired`] for a run past its expiry, [`StoreError::Moved`] when another
    /// state than `revision` is stored, [`StoreError::Busy`] when another resume holds the
    /// run, [`StoreError::Backend`].
    async fn spend(
        &self,
        key: &RunKey,
        revision: &str,
        decided: &[Decided],
        now_ms: i64,
    ) -> Result<(), StoreError>;

    /// Takes over the run at `key` from a resume that holds it since `since_ms` and will not
    /// save it (its process died): the calls `decided` names, spent by that resume and never
    /// ended, are spent again with the new decisions at `now_ms`, and the run is held by the
    /// caller from then on. Of two operators taking one run over, one does.
    ///
    /// # Errors
    ///
    /// [`StoreError::NotFound`], [`StoreError::Moved`] when the run is not held since
    /// `since_ms` (it was saved, ended or taken over since) or a call of `decided` is not
    /// spent and unfinished in it, [`StoreError::Backend`].
    async fn take_over(
        &self,
        key: &RunKey,
        since_ms: i64,
        decided: &[Decided],
        now_ms: i64,
    ) -> Result<(), StoreError>;

    /// Records that the spent calls `call_keys` of the run at `key` ended at `now_ms`, for an
    /// operator who settled them outside the agent ([`save`](Self::save) and
    /// [`end_run`](Self::end_run) end a resume's calls themselves). Keys not spent are
    /// ignored.
    ///
    /// # Errors
    ///
    /// [`StoreError::Backend`].
    async fn end_calls(
        &self,
        key: &RunKey,
        call_keys: &[String],
        now_ms: i64,
    ) -> Result<(), StoreError>;

    /// Which of `call_keys` were spent for the run at `key`, in their order, ended or not.
    /// The ledger outlives [`end_run`](Self::end_run): this answers for a run that ended too
    /// (a replay after the end).
    ///
    /// # Errors
    ///
    /// [`StoreError::Backend`].
    async fn spent(&self, key: &RunKey, call_keys: &[String]) -> Result<Vec<String>, StoreError>;

    /// The calls of `tenant_id` spent and never ended, oldest first: calls a resume is running
    /// now, and calls whose process died (an operator takes their run over).
    ///
    /// # Errors
    ///
    /// [`StoreError::Backend`].
    async fn unfinished(&self, tenant_id: &str) -> Result<Vec<UnfinishedCall>, StoreError>;

    /// Marks the run at `key` ended at `now_ms`: it is no longer listed or loaded, and the
    /// calls spent for it end. Its ledger entries stay, so a replay of its state still finds
    /// its calls spent.
    ///
    /// # Errors
    ///
    /// [`StoreError::Backend`].
    async fn end_run(&self, key: &RunKey, now_ms: i64) -> Result<(), StoreError>;

    /// Appends `entries` to the audit trail, all or none, in their order. An entry belongs to
    /// its run's key whether or not a run is stored there (most runs never wait).
    ///
    /// # Errors
    ///
    /// [`StoreError::Backend`].
    async fn append_audit(&self, entries: &[AuditEntry]) -> Result<(), StoreError>;

    /// The audit entries of the run at `key` that have not been deleted, in the order they were
    /// appended: a run's ending does not delete them, their expiry does.
    ///
    /// # Errors
    ///
    /// [`StoreError::Backend`], also for an entry that does not decode.
    async fn audit(&self, key: &RunKey) -> Result<Vec<AuditEntry>, StoreError>;

    /// Deletes the runs that expired before `now_ms`, with their ledger entries, and the audit
    /// entries that expired before `now_ms`; returns how many runs it deleted.
    ///
    /// # Errors
    ///
    /// [`StoreError::Backend`].
    async fn expire(&self, now_ms: i64) -> Result<usize, StoreError>;

    /// Deletes everything stored for `tenant_id` (its runs, their states, ledger and audit
    /// entries): conversations may hold personal data. Returns how many runs it deleted.
    ///
    /// # Errors
    ///
    /// [`StoreError::Backend`].
    async fn delete_tenant(&self, tenant_id: &str) -> Result<usize, StoreError>;
}
