//! [`InMemoryStore`]: a [`RunStore`] in one process's memory.

use std::collections::{BTreeMap, HashMap};
use std::sync::{Mutex, MutexGuard, PoisonError};

use async_trait::async_trait;

use super::{
    AuditEntry, Decided, RunKey, RunStore, RunSummary, StoreError, StoredRun, UnfinishedCall,
    WaitingQuery,
};

/// A [`RunStore`] in memory: right for one process and for tests. Nothing survives the
/// process; several processes each have their own.
///
/// ```
/// use tool_runtime::store::{InMemoryStore, RunKey, RunStore};
///
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// let store = InMemoryStore::new();
/// assert_eq!(store.load(&RunKey::new("acme", "run-1")).await, Ok(None));
/// # });
/// ```
#[derive(Debug, Default)]
pub struct InMemoryStore {
    inner: Mutex<Inner>,
}

#[derive(Debug, Default)]
struct Inner {
    /// Runs by key; `ended` ones are kept out of loads and listings.
    runs: BTreeMap<RunKey, Run>,
    /// The ledger: each run's spent calls by key.
    spent: HashMap<RunKey, BTreeMap<String, Spent>>,
    /// The audit trail: each run's entries in the order they were appended.
    audit: HashMap<RunKey, Vec<AuditEntry>>,
}

#[derive(Debug)]
struct Run {
    stored: StoredRun,
    ended: bool,
}

#[derive(Debug)]
struct Spent {
    decision: String,
    spent_at_ms: i64,
    ended: bool,
}

impl Inner {
    /// Ends the spent calls of the run at `key`.
    fn end_spent(&mut self, key: &RunKey) {
        for call in self.spent.get_mut(key).into_iter().flat_map(BTreeMap::values_mut) {
            call.ended = true;
        }
    }
}

impl InMemoryStore {
    /// An empty store.
    #[must_use]
    pub fn new() -> Self {
        Self::default()
    }

    fn lock(&self) -> MutexGuard<'_, Inner> {
        // Every change below is made whole or not at all before the lock is released, so a
        // panic elsewhere leaves nothing half done.
        self.inner.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

#[async_trait]
impl RunStore for InMemoryStore {
    async fn save(&self, mut run: StoredRun) -> Result<(), StoreError> {
        let mut inner = self.lock();
        inner.end_spent(&run.key);
        run.resuming_since_ms = None;
        inner.runs.insert(run.key.clone(), Run { stored: run, ended: false });
        Ok(())
    }

    async fn load(&self, key: &RunKey) -> Result<Option<StoredRun>, StoreError> {
        let inner = self.lock();
        Ok(inner.runs.get(key).filter(|run| !run.ended).map(|run| run.stored.clone()))
    }

    async fn list_waiting(&self, query: &WaitingQuery) -> Result<Vec<RunSummary>, StoreError> {
        let inner = self.lock();
        // The runs of the tenant only (the map is ordered by tenant, then run), as references:
        // a summary is made for the page alone.
        let tenant = RunKey::new(query.tenant_id.clone(), String::new());
        let mut found: Vec<&StoredRun> = inner
            .runs
            .range(tenant..)
            .take_while(|(key, _)| key.tenant_id == query.tenant_id)
            .filter(|(_, run)| !run.ended)
            .map(|(_, run)| &run.stored)
            .filter(|run| query.selects(&run.key, &run.actor_id, &run.waiting, run.saved_at_ms))
            .collect();
        let order = |a: &&StoredRun, b: &&StoredRun| {
            (a.saved_at_ms, &a.key.run_id).cmp(&(b.saved_at_ms, &b.key.run_id))
        };
        if found.len() > query.limit {
            found.select_nth_unstable_by(query.limit, order);
            found.truncate(query.limit);
        }
        found.sort_unstable_by(order);
        Ok(found.into_iter().map(StoredRun::summary).collect())
    }

    async fn spend(
        &self,
        key: &RunKey,
        revision: &str,
        decided: &[Decided],
        now_ms: i64,
    ) -> Result<(), StoreError> {
        let mut inner = self.lock();
        let spent = inner.spent.get(key);
        let again: Vec<String> = decided
            .iter()
            .filter(|call| spent.is_some_and(|spent| spent.contains_key(&call.call_key)))
            .map(|call| call.call_key.clone())
            .collect();
        if !again.is_empty() {
            return Err(StoreError::AlreadySpent { key: key.clone(), call_keys: again });
        }
        let run = inner.runs.get_mut(key).filter(|run| !run.ended);
        let Some(run) = run else { return Err(StoreError::NotFound { key: key.clone() }) };
        let stored = &mut run.stored;
        if now_ms >= stored.expires_at_ms {
            let expired_at_ms = stored.expires_at_ms;
            return Err(StoreError::Expired { key: key.clone(), expired_at_ms });
        }
        if stored.revision != revision {
            return Err(StoreError::Moved { key: key.clone() });
        }
        if let Some(since_ms) = stored.resuming_since_ms {
            return Err(StoreError::Busy { key: key.clone(), since_ms });
        }
        stored.resuming_since_ms = Some(now_ms);
        let spent = inner.spent.entry(key.clone()).or_default();
        for call in decided {
            let entry =
                Spent { decision: call.decision.clone(), spent_at_ms: now_ms, ended: false };
            spent.insert(call.call_key.clone(), entry);
        }
        Ok(())
    }

    async fn take_over(
        &self,
        key: &RunKey,
        since_ms: i64,
        decided: &[Decided],
        now_ms: i64,
    ) -> Result<(), StoreError> {
        let mut inner = self.lock();
        let Inner { runs, spent, .. } = &mut *inner;
        let run = runs.get_mut(key).filter(|run| !run.ended);
        let Some(run) = run else { return Err(StoreError::NotFound { key: key.clone() }) };
        let calls = spent.entry(key.clone()).or_default();
        let unfinished =
            |call: &Decided| calls.get(&call.call_key).is_some_and(|spent| !spent.ended);
        if run.stored.resuming_since_ms != Some(since_ms) || !decided.iter().all(unfinished) {
            return Err(StoreError::Moved { key: key.clone() });
        }
        run.stored.resuming_since_ms = Some(super::taken_at(since_ms, now_ms));
        for call in decided {
            let entry =
                Spent { decision: call.decision.clone(), spent_at_ms: now_ms, ended: false };
            calls.insert(call.call_key.clone(), entry);
        }
        Ok(())
    }

    async fn end_calls(
        &self,
        key: &RunKey,
        call_keys: &[String],
        _now_ms: i64,
    ) -> Result<(), StoreError> {
        let mut inner = self.lock();
        if let Some(spent) = inner.spent.get_mut(key) {
            for call_key in call_keys {
                if let Some(call) = spent.get_mut(call_key) {
                    call.ended = true;
                }
            }
        }
        Ok(())
    }

    async fn spent(&self, key: &RunKey, call_keys: &[String]) -> Result<Vec<String>, StoreError> {
        let inner = self.lock();
        let spent = inner.spent.get(key);
        Ok(call_keys
            .iter()
            .filter(|call_key| spent.is_some_and(|spent| spent.contains_key(*call_key)))
            .cloned()
            .collect())
    }

    async fn unfinished(&self, tenant_id: &str) -> Result<Vec<UnfinishedCall>, StoreError> {
        let inner = self.lock();
        let mut found: Vec<UnfinishedCall> = inner
            .spent
            .iter()
            .filter(|(key, _)| key.tenant_id == tenant_id)
            .flat_map(|(key, calls)| {
                calls.iter().filter(|(_, call)| !call.ended).map(|(call_key, call)| {
                    UnfinishedCall {
                        key: key.clone(),
                        call_key: call_key.clone(),
                        decision: call.decision.clone(),
                        spent_at_ms: call.spent_at_ms,
                    }
                })
            })
            .collect();
        found.sort_by(|a, b| {
            (a.spent_at_ms, &a.key, &a.call_key).cmp(&(b.spent_at_ms, &b.key, &b.call_key))
        });
        Ok(found)
    }

    async fn end_run(&self, key: &RunKey, _now_ms: i64) -> Result<(), StoreError> {
        let mut inner = self.lock();
        inner.end_spent(key);
        if let Some(run) = inner.runs.get_mut(key) {
            run.ended = true;
            run.stored.resuming_since_ms = None;
        }
        Ok(())
    }

    async fn append_audit(&self, entries: &[AuditEntry]) -> Result<(), StoreError> {
        let mut inner = self.lock();
        for entry in entries {
            inner.audit.entry(entry.key.clone()).or_default().push(entry.clone());
        }
        Ok(())
    }

    async fn audit(&self, key: &RunKey) -> Result<Vec<AuditEntry>, StoreError> {
        Ok(self.lock().audit.get(key).cloned().unwrap_or_default())
    }

    async fn expire(&self, now_ms: i64) -> Result<usize, StoreError> {
        let mut inner = self.lock();
        inner.audit.retain(|_, entries| {
            entries.retain(|entry| entry.expires_at_ms > now_ms);
            !entries.is_empty()
        });
        let expired: Vec<RunKey> = inner
            .runs
            .iter()
            .filter(|(_, run)| run.stored.expires_at_ms <= now_ms)
            .map(|(key, _)| key.clone())
            .collect();
        for key in &expired {
            inner.runs.remove(key);
            inner.spent.remove(key);
        }
        Ok(expired.len())
    }

    async fn delete_tenant(&self, tenant_id: &str) -> Result<usize, StoreError> {
        let mut inner = self.lock();
        let before = inner.runs.len();
        inner.runs.retain(|key, _| key.tenant_id != tenant_id);
        inner.spent.retain(|key, _| key.tenant_id != tenant_id);
        inner.audit.retain(|key, _| key.tenant_id != tenant_id);
        Ok(before - inner.runs.len())
    }
}
