//! The contract every [`RunStore`] keeps, as one suite: each implementation's test calls
//! [`contract`] with a fresh, empty store of its own.

use std::sync::Arc;

use tool_runtime::runtime::{MAX_RAW_CALL_BYTES, RawCall, ToolErrorCode, WaitsFor};
use tool_runtime::store::{
    AuditEntry, AuditOutcome, Decided, InMemoryStore, PostgresOptions, PostgresStore, RunKey,
    RunStore, SqliteStore, StoreError, StoredRun, WaitingCall, WaitingQuery,
};

/// A day, the time-to-live the suite's runs get.
const DAY_MS: u64 = 86_400_000;

/// A run of `tenant` saved at `at_ms` by `actor`, waiting on `tools` (call ids `call_1`...).
fn run(tenant: &str, run_id: &str, actor: &str, tools: &[&str], at_ms: i64) -> StoredRun {
    let waiting = tools
        .iter()
        .enumerate()
        .map(|(index, tool)| WaitingCall {
            call_id: format!("call_{}", index + 1),
            tool_name: (*tool).to_owned(),
            waits_for: WaitsFor::Approval,
        })
        .collect();
    let state = format!("{{\"run\": \"{run_id}\", \"tenant\": \"{tenant}\"}}").into_bytes();
    StoredRun::new(RunKey::new(tenant, run_id), actor, waiting, state, REV, at_ms, DAY_MS)
}

/// The revision [`run`] saves its states under.
const REV: &str = "rev-1";

/// The same run saved again with the state `revision` (as a resume saves the state that
/// follows), at `at_ms`.
fn saved_again(mut run: StoredRun, revision: &str, at_ms: i64) -> StoredRun {
    revision.clone_into(&mut run.revision);
    run.saved_at_ms = at_ms;
    run
}

fn approve(call_keys: &[&str]) -> Vec<Decided> {
    call_keys.iter().map(|key| Decided::new(*key, "approved")).collect()
}

/// Runs every clause of the contract against `store`, which must be empty. Each clause uses
/// tenants of its own, so the clauses do not see each other's runs.
///
/// # Panics
///
/// When the store breaks a clause.
async fn contract(store: Arc<dyn RunStore>) {
    saved_runs_load_back_whole_and_a_save_replaces(&*store).await;
    the_inbox_lists_by_tenant_actor_and_tool_oldest_first_in_pages(&*store).await;
    a_spend_is_all_or_none_and_a_replay_finds_its_calls_spent(&*store).await;
    a_spend_decides_on_the_stored_state_and_holds_the_run_until_it_is_saved(&*store).await;
    an_operator_takes_over_a_run_whose_resume_died_and_only_one_does(&*store).await;
    tenants_with_equal_run_and_call_ids_each_spend_their_own(&*store).await;
    only_stored_unexpired_runs_are_spent(&*store).await;
    spent_calls_stay_listed_until_they_end(&*store).await;
    an_ended_run_is_gone_from_the_inbox_and_its_ledger_stays(&*store).await;
    expiry_deletes_expired_runs_with_their_ledger_entries(&*store).await;
    the_audit_trail_keeps_a_runs_entries_in_order_until_they_expire(&*store).await;
    a_tenants_runs_are_deleted_and_no_one_elses(&*store).await;
    concurrent_spends_of_one_call_spend_it_once(Arc::clone(&store)).await;
    concurrent_spends_of_other_calls_of_one_run_hold_it_once(store).await;
}

async fn saved_runs_load_back_whole_and_a_save_replaces(store: &dyn RunStore) {
    let key = RunKey::new("t-load", "run-1");
    assert_eq!(store.load(&key).await.unwrap(), None);
    let first = run("t-load", "run-1", "ana", &["billing__refund", "tickets__close"], 1_000);
    store.save(first.clone()).await.unwrap();
    assert_eq!(store.load(&key).await.unwrap(), Some(first));
    let mut again = run("t-load", "run-1", "ana", &["tickets__close"], 2_000);
    again.state = vec![0, 159, 146, 150, 255];
    store.save(again.clone()).await.unwrap();
    assert_eq!(store.load(&key).await.unwrap(), Some(again));
    assert_eq!(store.load(&RunKey::new("t-load-other", "run-1")).await.unwrap(), None);
}

async fn the_inbox_lists_by_tenant_actor_and_tool_oldest_first_in_pages(store: &dyn RunStore) {
    for (run_id, actor, tool, at) in [
        ("run-c", "ana", "billing__refund", 3_000),
        ("run-a", "bo", "tickets__close", 1_000),
        ("run-b", "ana", "tickets__close", 2_000),
        ("run-d", "ana", "billing__refund", 2_000),
    ] {
        store.save(run("t-inbox", run_id, actor, &[tool], at)).await.unwrap();
    }
    store.save(run("t-inbox-other", "run-z", "ana", &["billing__refund"], 0)).await.unwrap();
    let ids = |found: Vec<tool_runtime::store::RunSummary>| -> Vec<String> {
        found.into_iter().map(|run| run.key.run_id).collect()
    };
    let all = store.list_waiting(&WaitingQuery::tenant("t-inbox")).await.unwrap();
    assert_eq!(ids(all.clone()), ["run-a", "run-b", "run-d", "run-c"]);
    assert_eq!(all[0].waiting[0].tool_name, "tickets__close");
    assert_eq!((all[0].saved_at_ms, all[0].expires_at_ms), (1_000, 1_000 + 86_400_000));
    let ana = store.list_waiting(&WaitingQuery::tenant("t-inbox").actor("ana")).await.unwrap();
    assert_eq!(ids(ana), ["run-b", "run-d", "run-c"]);
    let refunds =
        store.list_waiting(&WaitingQuery::tenant("t-inbox").tool("billing__refund")).await;
    assert_eq!(ids(refunds.unwrap()), ["run-d", "run-c"]);
    let first = store.list_waiting(&WaitingQuery::tenant("t-inbox").limit(2)).await.unwrap();
    assert_eq!(ids(first.clone()), ["run-a", "run-b"]);
    let next = WaitingQuery::tenant("t-inbox").limit(2).after(&first[1]);
    assert_eq!(ids(store.list_waiting(&next).await.unwrap()), ["run-d", "run-c"]);
    assert!(store.list_waiting(&WaitingQuery::tenant("t-none")).await.unwrap().is_empty());
}

async fn a_spend_is_all_or_none_and_a_replay_finds_its_calls_spent(store: &dyn RunStore) {
    let key = RunKey::new("t-spend", "run-1");
    let first = run("t-spend", "run-1", "ana", &["a__x", "a__y", "a__z"], 1_000);
    store.save(first.clone()).await.unwrap();
    store.spend(&key, REV, &approve(&["call_1"]), 1_100).await.unwrap();
    let replay = store.spend(&key, REV, &approve(&["call_2", "call_1"]), 1_200).await;
    assert_eq!(
        replay,
        Err(StoreError::AlreadySpent { key: key.clone(), call_keys: vec!["call_1".into()] })
    );
    // `call_2` was not spent by the refused spend: once the resume saved the state that
    // follows (which ends `call_1`), it spends, with `call_3`.
    store.save(saved_again(first, "rev-2", 1_250)).await.unwrap();
    store.spend(&key, "rev-2", &approve(&["call_2", "call_3"]), 1_300).await.unwrap();
    let unfinished = store.unfinished("t-spend").await.unwrap();
    let spent: Vec<(&str, i64)> =
        unfinished.iter().map(|call| (call.call_key.as_str(), call.spent_at_ms)).collect();
    assert_eq!(spent, [("call_2", 1_300), ("call_3", 1_300)]);
    assert!(unfinished.iter().all(|call| call.decision == "approved" && call.key == key));
}

async fn a_spend_decides_on_the_stored_state_and_holds_the_run_until_it_is_saved(
    store: &dyn RunStore,
) {
    let key = RunKey::new("t-hold", "run-1");
    let first = run("t-hold", "run-1", "ana", &["a__x", "a__y"], 1_000);
    store.save(first.clone()).await.unwrap();
    assert_eq!(
        store.spend(&key, "rev-0", &approve(&["call_1"]), 1_100).await,
        Err(StoreError::Moved { key: key.clone() })
    );
    store.spend(&key, REV, &approve(&["call_1"]), 1_100).await.unwrap();
    assert_eq!(store.load(&key).await.unwrap().unwrap().resuming_since_ms, Some(1_100));
    let inbox = store.list_waiting(&WaitingQuery::tenant("t-hold")).await.unwrap();
    assert_eq!(inbox[0].resuming_since_ms, Some(1_100));
    // Another resume of the same state, deciding another call, waits for this one.
    assert_eq!(
        store.spend(&key, REV, &approve(&["call_2"]), 1_200).await,
        Err(StoreError::Busy { key: key.clone(), since_ms: 1_100 })
    );
    store.save(saved_again(first, "rev-2", 1_300)).await.unwrap();
    assert_eq!(store.load(&key).await.unwrap().unwrap().resuming_since_ms, None);
    assert!(store.unfinished("t-hold").await.unwrap().is_empty());
    // The state it decided on moved on: it reads the new one and decides on that.
    assert_eq!(
        store.spend(&key, REV, &approve(&["call_2"]), 1_400).await,
        Err(StoreError::Moved { key: key.clone() })
    );
    store.spend(&key, "rev-2", &approve(&["call_2"]), 1_400).await.unwrap();
    store.end_run(&key, 1_500).await.unwrap();
    assert!(store.unfinished("t-hold").await.unwrap().is_empty());
}

async fn an_operator_takes_over_a_run_whose_resume_died_and_only_one_does(store: &dyn RunStore) {
    let key = RunKey::new("t-take", "run-1");
    let first = run("t-take", "run-1", "ana", &["a__x", "a__y", "a__z"], 1_000);
    store.save(first.clone()).await.unwrap();
    store.spend(&key, REV, &approve(&["call_1", "call_2"]), 2_000).await.unwrap();
    let deny = |call: &str| Decided::new(call, "denied");
    assert_eq!(
        store.take_over(&key, 1_999, &[deny("call_1")], 3_000).await,
        Err(StoreError::Moved { key: key.clone() })
    );
    // A call that was not spent (or has ended) cannot be taken over; nothing changes.
    assert_eq!(
        store.take_over(&key, 2_000, &[deny("call_2"), deny("call_3")], 3_000).await,
        Err(StoreError::Moved { key: key.clone() })
    );
    let decisions =
        |calls: Vec<tool_runtime::store::UnfinishedCall>| -> Vec<(String, String, i64)> {
            calls.into_iter().map(|call| (call.call_key, call.decision, call.spent_at_ms)).collect()
        };
    let before = decisions(store.unfinished("t-take").await.unwrap());
    assert_eq!(
        before,
        [("call_1".into(), "approved".into(), 2_000), ("call_2".into(), "approved".into(), 2_000)]
    );
    store.take_over(&key, 2_000, &[deny("call_1")], 3_000).await.unwrap();
    assert_eq!(
        decisions(store.unfinished("t-take").await.unwrap()),
        [("call_2".into(), "approved".into(), 2_000), ("call_1".into(), "denied".into(), 3_000)]
    );
    assert_eq!(store.load(&key).await.unwrap().unwrap().resuming_since_ms, Some(3_000));
    // A second operator, who read the run before, finds it moved.
    assert_eq!(
        store.take_over(&key, 2_000, &approve(&["call_1"]), 3_000).await,
        Err(StoreError::Moved { key: key.clone() })
    );
    // Taken over at the same moment as the hold it replaces, the hold still moves on.
    store.take_over(&key, 3_000, &approve(&["call_2"]), 3_000).await.unwrap();
    assert_eq!(store.load(&key).await.unwrap().unwrap().resuming_since_ms, Some(3_001));
    let missing = RunKey::new("t-take", "run-missing");
    assert_eq!(
        store.take_over(&missing, 2_000, &[], 3_000).await,
        Err(StoreError::NotFound { key: missing })
    );
    store.save(saved_again(first, "rev-2", 4_000)).await.unwrap();
    assert!(store.unfinished("t-take").await.unwrap().is_empty());
}

async fn tenants_with_equal_run_and_call_ids_each_spend_their_own(store: &dyn RunStore) {
    for tenant in ["t-twin-1", "t-twin-2"] {
        store.save(run(tenant, "run-1", "ana", &["a__x"], 1_000)).await.unwrap();
    }
    for tenant in ["t-twin-1", "t-twin-2"] {
        let key = RunKey::new(tenant, "run-1");
        store.spend(&key, REV, &approve(&["call_1"]), 1_100).await.unwrap();
    }
}

async fn only_stored_unexpired_runs_are_spent(store: &dyn RunStore) {
    let missing = RunKey::new("t-expiry", "run-missing");
    assert_eq!(
        store.spend(&missing, REV, &approve(&["call_1"]), 0).await,
        Err(StoreError::NotFound { key: missing })
    );
    let key = RunKey::new("t-expiry", "run-1");
    let mut short = run("t-expiry", "run-1", "ana", &["a__x", "a__y"], 1_000);
    short.expires_at_ms = 5_000;
    store.save(short).await.unwrap();
    store.spend(&key, REV, &approve(&["call_1"]), 4_999).await.unwrap();
    assert_eq!(
        store.spend(&key, REV, &approve(&["call_2"]), 5_000).await,
        Err(StoreError::Expired { key: key.clone(), expired_at_ms: 5_000 })
    );
}

async fn spent_calls_stay_listed_until_they_end(store: &dyn RunStore) {
    let one = RunKey::new("t-unfinished", "run-1");
    let two = RunKey::new("t-unfinished", "run-2");
    store.save(run("t-unfinished", "run-1", "ana", &["a__x", "a__y"], 1_000)).await.unwrap();
    store.save(run("t-unfinished", "run-2", "bo", &["a__x"], 1_000)).await.unwrap();
    store.spend(&two, REV, &[Decided::new("call_1", "denied")], 2_000).await.unwrap();
    store.spend(&one, REV, &approve(&["call_1", "call_2"]), 3_000).await.unwrap();
    let listed = |calls: Vec<tool_runtime::store::UnfinishedCall>| -> Vec<(String, String)> {
        calls.into_iter().map(|call| (call.key.run_id, call.call_key)).collect()
    };
    let all = store.unfinished("t-unfinished").await.unwrap();
    assert_eq!(all[0].decision, "denied");
    assert_eq!(
        listed(all),
        [
            ("run-2".into(), "call_1".into()),
            ("run-1".into(), "call_1".into()),
            ("run-1".into(), "call_2".into())
        ]
    );
    store.end_calls(&one, &["call_2".into(), "call_9".into()], 3_500).await.unwrap();
    store.end_calls(&two, &["call_1".into()], 3_600).await.unwrap();
    assert_eq!(
        listed(store.unfinished("t-unfinished").await.unwrap()),
        [("run-1".to_owned(), "call_1".to_owned())]
    );
    // Ended, it is still spent.
    assert!(matches!(
        store.spend(&one, REV, &approve(&["call_2"]), 4_000).await,
        Err(StoreError::AlreadySpent { .. })
    ));
}

async fn an_ended_run_is_gone_from_the_inbox_and_its_ledger_stays(store: &dyn RunStore) {
    let key = RunKey::new("t-ended", "run-1");
    store.save(run("t-ended", "run-1", "ana", &["a__x", "a__y"], 1_000)).await.unwrap();
    store.spend(&key, REV, &approve(&["call_1"]), 1_100).await.unwrap();
    store.end_run(&key, 1_150).await.unwrap();
    assert_eq!(store.load(&key).await.unwrap(), None);
    assert!(store.unfinished("t-ended").await.unwrap().is_empty());
    // Its ledger answers still, in the order asked.
    let asked = ["call_2".to_owned(), "call_1".to_owned()];
    assert_eq!(store.spent(&key, &asked).await.unwrap(), ["call_1"]);
    assert!(store.spent(&RunKey::new("t-ended-other", "run-1"), &asked).await.unwrap().is_empty());
    assert!(store.list_waiting(&WaitingQuery::tenant("t-ended")).await.unwrap().is_empty());
    assert_eq!(
        store.spend(&key, REV, &approve(&["call_2"]), 1_200).await,
        Err(StoreError::NotFound { key: key.clone() })
    );
    // Saved again (its state replayed into the store), its spent call is still spent.
    store.save(run("t-ended", "run-1", "ana", &["a__x", "a__y"], 1_300)).await.unwrap();
    assert_eq!(
        store.spend(&key, REV, &approve(&["call_1"]), 1_400).await,
        Err(StoreError::AlreadySpent { key, call_keys: vec!["call_1".into()] })
    );
}

async fn expiry_deletes_expired_runs_with_their_ledger_entries(store: &dyn RunStore) {
    let old = RunKey::new("t-expire", "run-old");
    let mut stale = run("t-expire", "run-old", "ana", &["a__x"], 1_000);
    stale.expires_at_ms = 10_000;
    store.save(stale.clone()).await.unwrap();
    store.save(run("t-expire", "run-new", "ana", &["a__x"], 9_000)).await.unwrap();
    store.spend(&old, REV, &approve(&["call_1"]), 2_000).await.unwrap();
    // Expiry is on a clock the caller gives. The first call takes what earlier clauses left
    // expired by then; the other clauses' runs expire a day after their save.
    store.expire(9_999).await.unwrap();
    assert_eq!(store.expire(9_999).await.unwrap(), 0);
    assert_eq!(store.expire(10_000).await.unwrap(), 1);
    assert_eq!(store.load(&old).await.unwrap(), None);
    let left = store.list_waiting(&WaitingQuery::tenant("t-expire")).await.unwrap();
    assert_eq!(left.len(), 1);
    assert!(store.unfinished("t-expire").await.unwrap().is_empty());
    // Its ledger entries went with it: saved anew, its calls are not spent.
    store.save(run("t-expire", "run-old", "ana", &["a__x"], 20_000)).await.unwrap();
    store.spend(&old, REV, &approve(&["call_1"]), 20_001).await.unwrap();
}

/// The audit entry of call `call_id` of the run at `key`, ended at `at_ms` with `outcome`, as
/// the model sent it in `raw`; it expires at `expires_at_ms`.
fn entry(
    key: &RunKey,
    call_id: &str,
    outcome: AuditOutcome,
    raw: Option<RawCall>,
    at_ms: i64,
    expires_at_ms: i64,
) -> AuditEntry {
    AuditEntry {
        key: key.clone(),
        actor_id: "ana".into(),
        call_id: call_id.into(),
        tool_name: "billing__refund".into(),
        outcome,
        record: format!("{{\"tool_call_id\": \"{call_id}\"}}"),
        raw,
        recorded_at_ms: at_ms,
        expires_at_ms,
    }
}

async fn the_audit_trail_keeps_a_runs_entries_in_order_until_they_expire(store: &dyn RunStore) {
    let key = RunKey::new("t-audit", "run-1");
    let other = RunKey::new("t-audit-other", "run-1");
    let sent = r#"{"id": "call_1", "name": "billing__refund", "arguments": "{\"order\": 7 }"}"#;
    let long = RawCall::new(&format!("{{\"arguments\": \"{}\"}}", "ü".repeat(MAX_RAW_CALL_BYTES)));
    assert!(long.was_cut());
    let entries = vec![
        entry(&key, "call_1", AuditOutcome::Ok, Some(RawCall::new(sent)), 1_000, 10_000),
        entry(
            &key,
            "call_2",
            AuditOutcome::Failed(ToolErrorCode::InvalidJson),
            Some(long),
            1_001,
            12_000,
        ),
        entry(&key, "call_3", AuditOutcome::Waiting(WaitsFor::Client), None, 1_002, 12_000),
    ];
    store.append_audit(&entries[..1]).await.unwrap();
    store.append_audit(&[]).await.unwrap();
    store.append_audit(&entries[1..]).await.unwrap();
    let theirs =
        [entry(&other, "call_1", AuditOutcome::Ok, Some(RawCall::new("{}")), 1_000, 10_000)];
    store.append_audit(&theirs).await.unwrap();
    // Read back whole, in order: the raw text as sent, whether it was cut.
    assert_eq!(store.audit(&key).await.unwrap(), entries);
    assert_eq!(store.audit(&other).await.unwrap(), theirs);
    assert!(store.audit(&RunKey::new("t-audit", "run-2")).await.unwrap().is_empty());
    // A run's ending leaves its entries; their expiry takes them, each on its own time.
    store.save(run("t-audit", "run-1", "ana", &["a__x"], 1_000)).await.unwrap();
    store.end_run(&key, 1_100).await.unwrap();
    assert_eq!(store.audit(&key).await.unwrap(), entries);
    store.expire(10_000).await.unwrap();
    assert_eq!(store.audit(&key).await.unwrap(), entries[1..]);
    assert!(store.audit(&other).await.unwrap().is_empty());
    store.expire(12_000).await.unwrap();
    assert!(store.audit(&key).await.unwrap().is_empty());
}

async fn a_tenants_runs_are_deleted_and_no_one_elses(store: &dyn RunStore) {
    for (tenant, run_id) in [("t-gone", "run-1"), ("t-gone", "run-2"), ("t-kept", "run-1")] {
        store.save(run(tenant, run_id, "ana", &["a__x"], 1_000)).await.unwrap();
        let key = RunKey::new(tenant, run_id);
        store.spend(&key, REV, &approve(&["call_1"]), 1_100).await.unwrap();
        store
            .append_audit(&[entry(&key, "call_1", AuditOutcome::Ok, None, 1_100, 90_000_000)])
            .await
            .unwrap();
    }
    assert_eq!(store.delete_tenant("t-gone").await.unwrap(), 2);
    assert!(store.list_waiting(&WaitingQuery::tenant("t-gone")).await.unwrap().is_empty());
    assert!(store.unfinished("t-gone").await.unwrap().is_empty());
    assert_eq!(store.list_waiting(&WaitingQuery::tenant("t-kept")).await.unwrap().len(), 1);
    assert_eq!(store.unfinished("t-kept").await.unwrap().len(), 1);
    assert!(store.audit(&RunKey::new("t-gone", "run-1")).await.unwrap().is_empty());
    assert_eq!(store.audit(&RunKey::new("t-kept", "run-1")).await.unwrap().len(), 1);
}

async fn concurrent_spends_of_one_call_spend_it_once(store: Arc<dyn RunStore>) {
    let key = RunKey::new("t-race", "run-1");
    store.save(run("t-race", "run-1", "ana", &["a__x"], 1_000)).await.unwrap();
    let attempts: Vec<_> = (0..16)
        .map(|_| {
            let (store, key) = (Arc::clone(&store), key.clone());
            tokio::spawn(async move { store.spend(&key, REV, &approve(&["call_1"]), 1_100).await })
        })
        .collect();
    let mut spent = 0;
    for attempt in attempts {
        match attempt.await.unwrap() {
            Ok(()) => spent += 1,
            Err(StoreError::AlreadySpent { .. }) => {}
            Err(other) => panic!("{other}"),
        }
    }
    assert_eq!(spent, 1);
}

async fn concurrent_spends_of_other_calls_of_one_run_hold_it_once(store: Arc<dyn RunStore>) {
    let key = RunKey::new("t-race-calls", "run-1");
    let tools = ["a__x"; 8];
    store.save(run("t-race-calls", "run-1", "ana", &tools, 1_000)).await.unwrap();
    let attempts: Vec<_> = (1..=tools.len())
        .map(|call| {
            let (store, key) = (Arc::clone(&store), key.clone());
            let call = format!("call_{call}");
            tokio::spawn(async move { store.spend(&key, REV, &approve(&[&call]), 1_100).await })
        })
        .collect();
    let mut spent = 0;
    for attempt in attempts {
        match attempt.await.unwrap() {
            Ok(()) => spent += 1,
            Err(StoreError::Busy { since_ms: 1_100, .. }) => {}
            Err(other) => panic!("{other}"),
        }
    }
    assert_eq!(spent, 1);
    assert_eq!(store.unfinished("t-race-calls").await.unwrap().len(), 1);
}

#[tokio::test]
async fn the_in_memory_store_keeps_the_contract() {
    contract(Arc::new(InMemoryStore::new())).await;
}

use tool_tests::stores::admin;
pub(super) use tool_tests::stores::{database_url, drop_schema, fresh_schema, postgres_store};

/// A path for a new SQLite file for `name` (see [`tool_tests::stores::fresh_file`]).
pub(super) fn fresh_file(name: &str) -> std::path::PathBuf {
    tool_tests::stores::fresh_file(std::path::Path::new(env!("CARGO_TARGET_TMPDIR")), name)
}

#[tokio::test]
async fn the_sqlite_store_keeps_the_contract() {
    let store = SqliteStore::open(fresh_file("contract")).await.unwrap();
    contract(Arc::new(store)).await;
}

#[tokio::test]
async fn a_sqlite_store_keeps_its_runs_and_ledger_when_reopened() {
    let path = fresh_file("reopen");
    let key = RunKey::new("t-1", "run-1");
    let saved = run("t-1", "run-1", "ana", &["a__x", "a__y"], 1_000);
    {
        let store = SqliteStore::open(&path).await.unwrap();
        store.save(saved.clone()).await.unwrap();
        store.spend(&key, REV, &approve(&["call_1"]), 1_100).await.unwrap();
    }
    let store = SqliteStore::open(&path).await.unwrap();
    let held = StoredRun { resuming_since_ms: Some(1_100), ..saved };
    assert_eq!(store.load(&key).await.unwrap(), Some(held));
    assert!(matches!(
        store.spend(&key, REV, &approve(&["call_1"]), 1_200).await,
        Err(StoreError::AlreadySpent { .. })
    ));
}

#[tokio::test]
async fn stores_opening_one_new_file_at_once_all_find_it_migrated() {
    let path = fresh_file("migrate-at-once");
    let opening: Vec<_> = (0..3).map(|_| tokio::spawn(SqliteStore::open(path.clone()))).collect();
    let mut stores = Vec::new();
    for store in opening {
        stores.push(store.await.unwrap().unwrap());
    }
    stores[0].save(run("t-1", "run-1", "ana", &["a__x"], 1_000)).await.unwrap();
    let key = RunKey::new("t-1", "run-1");
    for store in &stores {
        assert!(store.load(&key).await.unwrap().is_some());
    }
    let versions: i64 = rusqlite::Connection::open(&path)
        .unwrap()
        .query_row("SELECT count(*) FROM tool_runtime_store_version", [], |row| row.get(0))
        .unwrap();
    assert_eq!(versions, 1);
}

#[tokio::test]
async fn a_store_of_a_newer_schema_is_refused_and_left_as_it_is() {
    let path = fresh_file("newer");
    drop(SqliteStore::open(&path).await.unwrap());
    let newer = rusqlite::Connection::open(&path).unwrap();
    newer.execute("INSERT INTO tool_runtime_store_version (version) VALUES (99)", []).unwrap();
    drop(newer);
    let refused = SqliteStore::open(&path).await.unwrap_err();
    assert_eq!(refused, StoreError::SchemaTooNew { found: 99, supported: 2 });
    assert_eq!(
        refused.to_string(),
        "the store's tables are of version 99, newer than this code reads (2): upgrade the crate"
    );
}

#[tokio::test]
async fn a_store_of_version_1_gets_the_audit_trail_and_keeps_its_runs() {
    let path = fresh_file("version-1");
    let key = RunKey::new("t-1", "run-1");
    let saved = run("t-1", "run-1", "ana", &["a__x"], 1_000);
    drop(SqliteStore::open(&path).await.unwrap());
    // As version 1 left a file: no audit table, version 1 recorded.
    rusqlite::Connection::open(&path)
        .unwrap()
        .execute_batch(
            "DROP TABLE tool_runtime_audit;
             DELETE FROM tool_runtime_store_version;
             INSERT INTO tool_runtime_store_version (version) VALUES (1);",
        )
        .unwrap();
    let store = SqliteStore::open(&path).await.unwrap();
    store.save(saved.clone()).await.unwrap();
    let audited = [entry(&key, "call_1", AuditOutcome::Ok, Some(RawCall::new("{}")), 1_000, 2_000)];
    store.append_audit(&audited).await.unwrap();
    drop(store);
    let store = SqliteStore::open(&path).await.unwrap();
    assert_eq!(store.load(&key).await.unwrap(), Some(saved));
    assert_eq!(store.audit(&key).await.unwrap(), audited);
    let version: i64 = rusqlite::Connection::open(&path)
        .unwrap()
        .query_row("SELECT max(version) FROM tool_runtime_store_version", [], |row| row.get(0))
        .unwrap();
    assert_eq!(version, 2);
}

#[tokio::test]
async fn an_audit_row_of_an_unknown_outcome_is_an_error_naming_the_run() {
    let path = fresh_file("bad-audit-row");
    let store = SqliteStore::open(&path).await.unwrap();
    let key = RunKey::new("t-1", "run-1");
    store
        .append_audit(&[entry(&key, "call_1", AuditOutcome::Ok, None, 1_000, 2_000)])
        .await
        .unwrap();
    rusqlite::Connection::open(&path)
        .unwrap()
        .execute("UPDATE tool_runtime_audit SET outcome = 'a miracle'", [])
        .unwrap();
    let error = store.audit(&key).await.unwrap_err();
    let StoreError::Backend { context, message } = &error else { panic!("{error:?}") };
    assert_eq!(context, "reading the audit trail of run `run-1` of tenant `t-1`");
    assert!(message.contains("`a miracle` is no outcome of a call"), "{message}");
}

#[tokio::test]
async fn a_row_that_does_not_decode_is_an_error_naming_the_run() {
    let path = fresh_file("bad-row");
    let store = SqliteStore::open(&path).await.unwrap();
    store.save(run("t-1", "run-1", "ana", &["a__x"], 1_000)).await.unwrap();
    rusqlite::Connection::open(&path)
        .unwrap()
        .execute("UPDATE tool_runtime_waiting_calls SET waits_for = 'a miracle'", [])
        .unwrap();
    let error = store.load(&RunKey::new("t-1", "run-1")).await.unwrap_err();
    let StoreError::Backend { context, message } = &error else { panic!("{error:?}") };
    assert_eq!(context, "loading run `run-1` of tenant `t-1`");
    assert!(message.contains("`a miracle` is not what a call waits for"), "{message}");
}

#[tokio::test]
async fn the_postgres_store_keeps_the_contract() {
    let schema = fresh_schema("contract").await;
    contract(Arc::new(postgres_store(&schema).await.unwrap())).await;
    drop_schema(&schema).await;
}

#[tokio::test]
async fn postgres_stores_connecting_to_one_new_schema_at_once_all_find_it_migrated() {
    let schema = fresh_schema("migrate_at_once").await;
    let connecting: Vec<_> = (0..3)
        .map(|_| {
            let schema = schema.clone();
            tokio::spawn(async move { postgres_store(&schema).await })
        })
        .collect();
    let mut stores = Vec::new();
    for store in connecting {
        stores.push(store.await.unwrap().unwrap());
    }
    stores[0].save(run("t-1", "run-1", "ana", &["a__x"], 1_000)).await.unwrap();
    for store in &stores {
        assert!(store.load(&RunKey::new("t-1", "run-1")).await.unwrap().is_some());
    }
    let versions = admin()
        .await
        .query_one(&format!("SELECT count(*) FROM {schema}.store_version"), &[])
        .await
        .unwrap()
        .get::<_, i64>(0);
    assert_eq!(versions, 1);
    drop_schema(&schema).await;
}

#[tokio::test]
async fn a_postgres_store_of_version_1_gets_the_audit_trail() {
    let schema = fresh_schema("version_1").await;
    drop(postgres_store(&schema).await.unwrap());
    admin()
        .await
        .batch_execute(&format!(
            "DROP TABLE {schema}.audit;
             DELETE FROM {schema}.store_version;
             INSERT INTO {schema}.store_version (version) VALUES (1);"
        ))
        .await
        .unwrap();
    let store = postgres_store(&schema).await.unwrap();
    let key = RunKey::new("t-1", "run-1");
    let audited = [entry(&key, "call_1", AuditOutcome::Ok, Some(RawCall::new("{}")), 1_000, 2_000)];
    store.append_audit(&audited).await.unwrap();
    assert_eq!(store.audit(&key).await.unwrap(), audited);
    drop(store);
    let store = postgres_store(&schema).await.unwrap();
    assert_eq!(store.audit(&key).await.unwrap(), audited);
    drop_schema(&schema).await;
}

#[tokio::test]
async fn a_postgres_store_of_a_newer_schema_is_refused_and_a_bad_row_names_its_run() {
    let schema = fresh_schema("newer").await;
    let store = postgres_store(&schema).await.unwrap();
    store.save(run("t-1", "run-1", "ana", &["a__x"], 1_000)).await.unwrap();
    let client = admin().await;
    client
        .batch_execute(&format!("UPDATE {schema}.waiting_calls SET waits_for = 'a miracle'"))
        .await
        .unwrap();
    let error = store.load(&RunKey::new("t-1", "run-1")).await.unwrap_err();
    let StoreError::Backend { context, message } = &error else { panic!("{error:?}") };
    assert_eq!(context, "loading run `run-1` of tenant `t-1`");
    assert!(message.contains("`a miracle` is not what a call waits for"), "{message}");
    client
        .batch_execute(&format!("INSERT INTO {schema}.store_version (version) VALUES (99)"))
        .await
        .unwrap();
    let refused = postgres_store(&schema).await.unwrap_err();
    assert_eq!(refused, StoreError::SchemaTooNew { found: 99, supported: 2 });
    drop_schema(&schema).await;
}

#[tokio::test]
async fn a_bad_schema_name_or_an_unreachable_server_is_a_typed_error() {
    let bad = postgres_store("Robert'); DROP TABLE students;--").await.unwrap_err();
    let StoreError::Backend { message, .. } = &bad else { panic!("{bad:?}") };
    assert!(message.starts_with("the schema name `Robert"), "{message}");
    // Port 1 on this machine: nothing listens.
    let options = PostgresOptions { schema: "tr_unreachable".into(), max_connections: 1 };
    let url = "postgres://postgres:secret-password@127.0.0.1:1/test";
    let unreachable = PostgresStore::connect(url, options).await.unwrap_err();
    let StoreError::Backend { context, message } = &unreachable else { panic!("{unreachable:?}") };
    assert_eq!(context, "creating the store's tables");
    assert!(!message.contains("secret-password"), "{message}");
}

/// How many runs each cross-process test races on.
const RACES: usize = 100;

/// Saves the [`RACES`] runs the processes race on.
async fn save_races(store: &dyn RunStore) {
    for race in 0..RACES {
        let run_id = format!("run-{race}");
        store.save(run("t-race", &run_id, "ana", &["a__x"], 1_000)).await.unwrap();
    }
}

/// Three processes (this test binary again, running [`a_spending_process`]) race to spend
/// `call_1` of each of [`RACES`] runs in the store `spec` names: each is handed the go for a
/// run, then they all spend at once. Exactly one spends each run's call; the others find it
/// spent; nothing fails. The store does not exist when the processes start: they create and
/// migrate it at once, with this process, whose `prepare` opens it and saves the runs
/// ([`save_races`]). Returns in how many races all three were spending at the same moment.
fn race_processes(spec: &str, prepare: impl FnOnce()) -> usize {
    use std::process::{Command, Stdio};

    let children: Vec<_> = (0..3)
        .map(|_| {
            Command::new(std::env::current_exe().unwrap())
                .args(["--exact", "store::a_spending_process", "--ignored", "--nocapture"])
                .args(["--test-threads", "1"])
                .env("STORE_UNDER_TEST", spec)
                .stdin(Stdio::piped())
                .stdout(Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    prepare();
    race(children, RACES, "spend ", "spent")
}

/// Runs `races` races between `children` (processes that answer each race number read from
/// their input with a line `<word><race> <outcome> <start ns> <end ns>`): each race number
/// goes to all of them at once. In each race exactly one answers `won`, the others `already`;
/// any other outcome fails the test, as does a process that does not end well once its
/// input is closed. Returns in how many races all of them were in flight at the same moment.
pub(super) fn race(
    mut children: Vec<std::process::Child>,
    races: usize,
    word: &str,
    won: &str,
) -> usize {
    use std::io::{BufRead, BufReader, Write};

    let mut inputs: Vec<_> = children.iter_mut().map(|child| child.stdin.take().unwrap()).collect();
    let mut outputs: Vec<_> = children
        .iter_mut()
        .map(|child| BufReader::new(child.stdout.take().unwrap()).lines())
        .collect();
    let mut together = 0;
    for race in 0..races {
        for input in &mut inputs {
            writeln!(input, "{race}").unwrap();
            input.flush().unwrap();
        }
        let (mut winners, mut spans) = (0, Vec::new());
        for output in &mut outputs {
            // The first answer follows libtest's `test ... ` on its line.
            let line = output
                .by_ref()
                .map(Result::unwrap)
                .find_map(|line| line.find(word).map(|at| line[at..].to_owned()))
                .unwrap_or_else(|| panic!("a racing process ended without answering race {race}"));
            let fields: Vec<&str> = line.split(' ').collect();
            assert_eq!(fields[1], race.to_string(), "{line}");
            match fields[2] {
                outcome if outcome == won => winners += 1,
                "already" => {}
                other => panic!("race {race}: a process got `{other}`: {line}"),
            }
            spans.push((fields[3].parse::<u128>().unwrap(), fields[4].parse::<u128>().unwrap()));
        }
        assert_eq!(winners, 1, "race {race}: {winners} processes won");
        let latest_start = spans.iter().map(|span| span.0).max().unwrap();
        let earliest_end = spans.iter().map(|span| span.1).min().unwrap();
        if latest_start < earliest_end {
            together += 1;
        }
    }
    drop(inputs);
    for mut child in children {
        assert!(child.wait().unwrap().success());
    }
    together
}

/// Not a test of its own: the process [`race_processes`] starts three of. It opens the store
/// `STORE_UNDER_TEST` names (`sqlite:<path>` or `postgres:<schema>`), then for each race
/// number read from its input spends `call_1` of that run and prints `spend <race> <spent |
/// already | error> <start ns> <end ns>`.
#[test]
#[ignore = "a child process of the cross-process races, not a test on its own"]
fn a_spending_process() {
    use std::io::BufRead;

    let Ok(spec) = std::env::var("STORE_UNDER_TEST") else { return };
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    let store: Arc<dyn RunStore> = runtime.block_on(async {
        match spec.split_once(':') {
            Some(("sqlite", path)) => Arc::new(SqliteStore::open(path).await.unwrap()) as _,
            Some(("postgres", schema)) => Arc::new(postgres_store(schema).await.unwrap()) as _,
            _ => panic!("STORE_UNDER_TEST is `sqlite:<path>` or `postgres:<schema>`"),
        }
    });
    let now = || std::time::SystemTime::UNIX_EPOCH.elapsed().unwrap().as_nanos();
    for line in std::io::stdin().lock().lines() {
        let race = line.unwrap();
        let key = RunKey::new("t-race", format!("run-{race}"));
        let start = now();
        let spent = runtime.block_on(store.spend(&key, REV, &approve(&["call_1"]), 2_000));
        let end = now();
        let outcome = match spent {
            Ok(()) => "spent".to_owned(),
            Err(StoreError::AlreadySpent { .. }) => "already".to_owned(),
            Err(other) => format!("error:{}", other.to_string().replace(' ', "_")),
        };
        println!("spend {race} {outcome} {start} {end}");
    }
}

#[test]
fn three_processes_racing_on_a_sqlite_file_spend_each_call_once() {
    let path = fresh_file("race");
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    let together = race_processes(&format!("sqlite:{}", path.display()), || {
        runtime.block_on(async { save_races(&SqliteStore::open(&path).await.unwrap()).await });
    });
    eprintln!("sqlite: all three spending at once in {together} of {RACES} races");
    assert!(together > 0, "the processes never spent at the same time");
    let versions: i64 = rusqlite::Connection::open(&path)
        .unwrap()
        .query_row("SELECT count(*) FROM tool_runtime_store_version", [], |row| row.get(0))
        .unwrap();
    assert_eq!(versions, 1, "four processes migrating one new file made it once");
}

#[test]
fn three_processes_racing_on_postgres_spend_each_call_once() {
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    let schema = runtime.block_on(fresh_schema("race"));
    let together = race_processes(&format!("postgres:{schema}"), || {
        runtime.block_on(async { save_races(&postgres_store(&schema).await.unwrap()).await });
    });
    eprintln!("postgres: all three spending at once in {together} of {RACES} races");
    assert!(together > 0, "the processes never spent at the same time");
    let versions = runtime.block_on(async {
        let sql = format!("SELECT count(*) FROM {schema}.store_version");
        admin().await.query_one(&sql, &[]).await.unwrap().get::<_, i64>(0)
    });
    assert_eq!(versions, 1, "four processes migrating one new schema made it once");
    runtime.block_on(drop_schema(&schema));
}
