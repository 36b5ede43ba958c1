//! Durable runs: an agent on a run store. A run that waits is saved and listed; a resume,
//! in this process or another, spends its calls in the store and runs each once; expiry, a
//! changed tool, rotated keys and tampered bytes are refused; two resumes of one run take
//! turns; an operator takes over a run whose resume died. The cross-process tests start this
//! test binary again ([`a_resuming_process`]).

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::json;
use tool_runtime::agent::deferred::{Decisions, ResumeError, StateKey};
use tool_runtime::agent::{Agent, AgentConfig, Message, ScriptedModel, ScriptedTurn, StopReason};
use tool_runtime::catalog::ToolCatalog;
use tool_runtime::policy::ToolPolicy;
use tool_runtime::prelude::*;
use tool_runtime::runner::DeferAll;
use tool_runtime::runtime::{DynamicTool, ToolErrorCode};
use tool_runtime::store::{
    AuditEntry, InMemoryStore, RunKey, RunStore, SqliteStore, StoreError, WaitingQuery,
};
use tool_tests::fixtures::context;

use super::store::{database_url, drop_schema, fresh_file, fresh_schema, postgres_store, race};

const KEY: &[u8; 32] = b"the support desk's key, 32 bytes";

/// What the refund tool does when it runs, given the order.
type OnRefund = Arc<dyn Fn(u64) + Send + Sync>;

/// An agent of the support desk over `store`: `billing__refund` (a state change, so it waits
/// for a person) does `on_refund`; the model plays `turns`.
fn desk(store: Arc<dyn RunStore>, turns: Vec<ScriptedTurn>, on_refund: OnRefund) -> Agent {
    desk_with(store, turns, on_refund, "Refund an order in full.")
}

/// As [`desk`], the refund tool described as `description` (another description is another
/// spec: a deploy that changed the tool).
fn desk_with(
    store: Arc<dyn RunStore>,
    turns: Vec<ScriptedTurn>,
    on_refund: OnRefund,
    description: &str,
) -> Agent {
    let refund = DynamicTool::builder(
        "billing__refund",
        description,
        json!({"type": "object", "properties": {"order": {"type": "integer"}}, "required": ["order"], "additionalProperties": false}),
    )
    .effect(ToolEffect::StateChange)
    .redact_all()
    .build(move |args, _, _| {
        let order = args["order"].as_u64().unwrap_or(0);
        on_refund(order);
        async move { Ok(json!(format!("refunded order {order}"))) }
    })
    .unwrap();
    let policy = ToolPolicy {
        require_approval: vec![ToolEffect::StateChange],
        ..ToolPolicy::allowing(["billing__*"])
    };
    let runner =
        ToolRunner::builder(ToolCatalog::builder().register_dynamic(refund).build().unwrap())
            .policy(policy)
            .approver(Arc::new(DeferAll))
            .build();
    Agent::new(Arc::new(ScriptedModel::new(turns)), runner)
        .with_state_key(StateKey::new(*KEY))
        .with_store(store)
}

/// The model's turn asking to refund each of `orders` (call ids `call_1`...).
fn refunds(orders: &[u32]) -> ScriptedTurn {
    let calls: Vec<(String, &str, String)> = orders
        .iter()
        .enumerate()
        .map(|(index, order)| {
            (format!("call_{}", index + 1), "billing__refund", format!(r#"{{"order": {order}}}"#))
        })
        .collect();
    let calls: Vec<(&str, &str, &str)> =
        calls.iter().map(|(id, name, args)| (id.as_str(), *name, args.as_str())).collect();
    ScriptedTurn::openai_calls(&calls)
}

/// Counts the refunds made.
fn counter() -> (Arc<AtomicUsize>, OnRefund) {
    let made = Arc::new(AtomicUsize::new(0));
    let counted = Arc::clone(&made);
    (
        made,
        Arc::new(move |_| {
            counted.fetch_add(1, Ordering::SeqCst);
        }),
    )
}

fn ctx(run_id: &str) -> ToolInvocationContext {
    context(run_id, "agent-ana", "acme")
}

/// Starts `run_id`: the model asks for the refunds of `orders`, which wait.
async fn waiting_run(store: &Arc<dyn RunStore>, run_id: &str, orders: &[u32], on_refund: OnRefund) {
    let agent = desk(Arc::clone(store), vec![refunds(orders)], on_refund);
    let output = agent.run(vec![Message::user("Refund my orders.")], &ctx(run_id), &|_| {}).await;
    assert!(matches!(output.done.stop, StopReason::Waiting { .. }), "{:?}", output.done.stop);
    assert_eq!(output.store_error, None);
}

#[tokio::test]
async fn a_run_that_waits_is_listed_and_resumes_from_the_store_once() {
    let store: Arc<dyn RunStore> = Arc::new(InMemoryStore::new());
    let (made, on_refund) = counter();
    let agent = desk(Arc::clone(&store), vec![refunds(&[1001])], on_refund.clone());
    let first = agent.run(vec![Message::user("Refund order 1001.")], &ctx("run-1"), &|_| {}).await;
    assert_eq!(first.done.stop, StopReason::Waiting { calls: vec!["call_1".into()] });
    let inbox = store.list_waiting(&WaitingQuery::tenant("acme").tool("billing__refund")).await;
    let inbox = inbox.unwrap();
    assert_eq!(inbox.len(), 1);
    assert_eq!((inbox[0].key.run_id.as_str(), inbox[0].actor_id.as_str()), ("run-1", "agent-ana"));
    assert_eq!(inbox[0].waiting[0].call_id, "call_1");
    let week = 7 * 24 * 3_600_000;
    assert_eq!(inbox[0].expires_at_ms - inbox[0].saved_at_ms, week);

    // The approval arrives at another agent (another request, maybe another process).
    let second =
        desk(Arc::clone(&store), vec![ScriptedTurn::openai_text("Refunded.")], on_refund.clone());
    let stored = second.load(&ctx("run-1")).await.unwrap();
    assert_eq!(stored.waiting().next().unwrap().tool_name, "billing__refund");
    let resumed = second
        .resume_stored(Decisions::new().approve("call_1"), &ctx("run-1"), &|_| {})
        .await
        .unwrap();
    assert_eq!((resumed.done.stop, resumed.store_error), (StopReason::Answered, None));
    assert_eq!(made.load(Ordering::SeqCst), 1);
    assert!(store.list_waiting(&WaitingQuery::tenant("acme")).await.unwrap().is_empty());
    assert!(store.unfinished("acme").await.unwrap().is_empty());

    // A replay of the first state, or of the approval by run id: refused, nothing runs.
    let third = desk(Arc::clone(&store), vec![ScriptedTurn::openai_text("Again.")], on_refund);
    let replay = third
        .resume(first.state.unwrap(), Decisions::new().approve("call_1"), &ctx("run-1"), &|_| {})
        .await;
    assert_eq!(
        replay.unwrap_err(),
        ResumeError::AlreadyResumed { call_ids: vec!["call_1".into()] }
    );
    let again =
        third.resume_stored(Decisions::new().approve("call_1"), &ctx("run-1"), &|_| {}).await;
    assert_eq!(again.unwrap_err(), ResumeError::AlreadyResumed { call_ids: vec!["call_1".into()] });
    let unknown =
        third.resume_stored(Decisions::new().approve("call_1"), &ctx("run-9"), &|_| {}).await;
    let not_found = StoreError::NotFound { key: RunKey::new("acme", "run-9") };
    assert_eq!(unknown.unwrap_err(), ResumeError::Store(not_found));
    assert_eq!(made.load(Ordering::SeqCst), 1);
}

/// The model's turn asking to refund order 1001 (`call_1`, its arguments oddly spaced) and
/// sending arguments that are not JSON (`call_2`).
fn refund_and_broken_call() -> ScriptedTurn {
    ScriptedTurn::openai_calls(&[
        ("call_1", "billing__refund", r#"{"order":  1001}"#),
        ("call_2", "billing__refund", r#"{"order": "#),
    ])
}

/// The call ids and outcomes of `trail`, in order.
fn outcomes(trail: &[AuditEntry]) -> Vec<(&str, &str)> {
    trail.iter().map(|entry| (entry.call_id.as_str(), entry.outcome.as_str())).collect()
}

#[tokio::test]
async fn every_call_of_a_run_and_its_resume_is_audited_with_what_the_model_sent() {
    let store: Arc<dyn RunStore> = Arc::new(SqliteStore::open(fresh_file("audit")).await.unwrap());
    let (made, on_refund) = counter();
    let agent = desk(Arc::clone(&store), vec![refund_and_broken_call()], on_refund.clone());
    let first = agent.run(vec![Message::user("Refund order 1001.")], &ctx("run-a"), &|_| {}).await;
    assert_eq!(first.done.stop, StopReason::Waiting { calls: vec!["call_1".into()] });
    assert_eq!(first.store_error, None);
    // Both are audited at once: the refused call, and the one that waits (its record proper
    // comes when it is decided).
    let key = RunKey::new("acme", "run-a");
    let trail = store.audit(&key).await.unwrap();
    assert_eq!(outcomes(&trail), [("call_2", "invalid_json"), ("call_1", "waiting_for_approval")]);
    let raw = |entry: &AuditEntry| entry.raw.as_ref().expect("kept").text().to_owned();
    assert!(raw(&trail[0]).contains(r#"{\"order\": "#), "{}", raw(&trail[0]));
    // What the model sent, as it sent it (the arguments' text with its spacing), beside a
    // record that serialises without it.
    assert!(raw(&trail[1]).contains(r#"{\"order\":  1001}"#), "{}", raw(&trail[1]));
    assert!(trail[1].record.contains(r#""args":{"order":1001}"#), "{}", trail[1].record);
    assert!(!trail[1].record.contains(r#"\"order\":  1001"#), "{}", trail[1].record);
    assert!(trail.iter().all(|entry| entry.actor_id == "agent-ana"));
    let month = 30 * 24 * 3_600_000;
    assert_eq!(trail[0].expires_at_ms - trail[0].recorded_at_ms, month);

    // The resume, in another agent, appends the call it ran under the same run.
    let second = desk(Arc::clone(&store), vec![ScriptedTurn::openai_text("Done.")], on_refund);
    let resumed = second
        .resume_stored(Decisions::new().approve("call_1"), &ctx("run-a"), &|_| {})
        .await
        .unwrap();
    assert_eq!(resumed.store_error, None);
    assert_eq!(made.load(Ordering::SeqCst), 1);
    let trail = store.audit(&key).await.unwrap();
    assert_eq!(
        outcomes(&trail),
        [("call_2", "invalid_json"), ("call_1", "waiting_for_approval"), ("call_1", "ok")]
    );
    // The sealed state never held the model's text: the resumed entry has none, the waiting
    // one keeps it.
    assert_eq!(trail[2].raw, None);
}

/// An audit trail that cannot be written is an error of its own: the run is still saved and
/// listed, and nothing says it was not (`store_error` stays for the state).
#[tokio::test]
async fn a_failed_audit_append_is_its_own_error_and_the_run_is_still_saved() {
    let path = fresh_file("audit-fails");
    let store: Arc<dyn RunStore> = Arc::new(SqliteStore::open(&path).await.unwrap());
    rusqlite::Connection::open(&path)
        .unwrap()
        .execute_batch("DROP TABLE tool_runtime_audit")
        .unwrap();
    let (_, on_refund) = counter();
    let agent = desk(Arc::clone(&store), vec![refund_and_broken_call()], on_refund);
    let output = agent.run(vec![Message::user("Refund order 1001.")], &ctx("run-c"), &|_| {}).await;
    assert!(matches!(output.done.stop, StopReason::Waiting { .. }));
    assert_eq!(output.store_error, None);
    let Some(StoreError::Backend { context, message }) = &output.audit_error else {
        panic!("{:?}", output.audit_error)
    };
    assert_eq!(context, "appending to the audit trail of run `run-c` of tenant `acme`");
    assert!(message.contains("tool_runtime_audit"), "{message}");
    assert_eq!(store.list_waiting(&WaitingQuery::tenant("acme")).await.unwrap().len(), 1);
}

#[tokio::test]
async fn an_agent_configured_without_an_audit_trail_appends_none() {
    let store: Arc<dyn RunStore> = Arc::new(InMemoryStore::new());
    let (_, on_refund) = counter();
    let config = AgentConfig { audit: false, ..AgentConfig::default() };
    let agent =
        desk(Arc::clone(&store), vec![refund_and_broken_call()], on_refund).with_config(config);
    let output = agent.run(vec![Message::user("Refund order 1001.")], &ctx("run-b"), &|_| {}).await;
    assert!(matches!(output.done.stop, StopReason::Waiting { .. }));
    assert_eq!(output.done.records.len(), 1);
    assert!(output.done.records[0].raw.is_some());
    assert!(store.audit(&RunKey::new("acme", "run-b")).await.unwrap().is_empty());
    assert_eq!(store.list_waiting(&WaitingQuery::tenant("acme")).await.unwrap().len(), 1);
}

#[tokio::test]
async fn an_expired_run_is_refused_and_expiry_deletes_it() {
    let store: Arc<dyn RunStore> = Arc::new(InMemoryStore::new());
    let (made, on_refund) = counter();
    let config = AgentConfig { state_ttl: Duration::from_millis(20), ..AgentConfig::default() };
    let agent =
        desk(Arc::clone(&store), vec![refunds(&[1001])], on_refund.clone()).with_config(config);
    agent.run(vec![Message::user("Refund order 1001.")], &ctx("run-1"), &|_| {}).await;
    tokio::time::sleep(Duration::from_millis(40)).await;
    let late = desk(Arc::clone(&store), vec![ScriptedTurn::openai_text("Refunded.")], on_refund);
    let refused =
        late.resume_stored(Decisions::new().approve("call_1"), &ctx("run-1"), &|_| {}).await;
    assert!(matches!(refused, Err(ResumeError::Store(StoreError::Expired { .. }))), "{refused:?}");
    assert_eq!(made.load(Ordering::SeqCst), 0);
    let now = std::time::SystemTime::UNIX_EPOCH.elapsed().unwrap().as_millis();
    assert_eq!(store.expire(i64::try_from(now).unwrap()).await.unwrap(), 1);
    assert!(store.list_waiting(&WaitingQuery::tenant("acme")).await.unwrap().is_empty());
}

#[tokio::test]
async fn a_run_whose_tool_changed_is_refused_and_stays_listed() {
    let store: Arc<dyn RunStore> = Arc::new(InMemoryStore::new());
    let (made, on_refund) = counter();
    waiting_run(&store, "run-1", &[1001], on_refund.clone()).await;
    let deployed = desk_with(
        Arc::clone(&store),
        vec![ScriptedTurn::openai_text("Refunded.")],
        on_refund.clone(),
        "Refund an order, in full or in part.",
    );
    let refused =
        deployed.resume_stored(Decisions::new().approve("call_1"), &ctx("run-1"), &|_| {}).await;
    assert_eq!(
        refused.unwrap_err(),
        ResumeError::ToolChanged { call_id: "call_1".into(), tool_name: "billing__refund".into() }
    );
    assert_eq!(made.load(Ordering::SeqCst), 0);
    let inbox = store.list_waiting(&WaitingQuery::tenant("acme")).await.unwrap();
    assert_eq!((inbox.len(), inbox[0].resuming_since_ms), (1, None));
    assert!(store.unfinished("acme").await.unwrap().is_empty());
    // Nothing was spent: an agent with the tool as it was resumes it.
    let old = desk(Arc::clone(&store), vec![ScriptedTurn::openai_text("Refunded.")], on_refund);
    old.resume_stored(Decisions::new().approve("call_1"), &ctx("run-1"), &|_| {}).await.unwrap();
    assert_eq!(made.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn a_state_sealed_with_a_retired_key_resumes_and_an_unknown_key_is_named() {
    let store: Arc<dyn RunStore> = Arc::new(InMemoryStore::new());
    let (made, on_refund) = counter();
    waiting_run(&store, "run-1", &[1001], on_refund.clone()).await;
    let new_key = StateKey::new(*b"next year's secret of 32 bytes!!");
    let turns = || vec![ScriptedTurn::openai_text("Refunded.")];
    let without_old =
        desk(Arc::clone(&store), turns(), on_refund.clone()).with_state_key(new_key.clone());
    let refused = without_old.load(&ctx("run-1")).await.unwrap_err();
    assert_eq!(refused, ResumeError::UnknownKey { key_id: StateKey::new(*KEY).id().to_owned() });
    assert!(refused.to_string().contains("which this agent does not hold"), "{refused}");
    let rotated = desk(Arc::clone(&store), turns(), on_refund)
        .with_state_key(new_key.clone())
        .with_retired_state_key(StateKey::new(*KEY));
    let resumed =
        rotated.resume_stored(Decisions::new().approve("call_1"), &ctx("run-1"), &|_| {}).await;
    assert_eq!(resumed.unwrap().done.stop, StopReason::Answered);
    assert_eq!(made.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn a_state_that_waits_again_is_sealed_with_the_new_key() {
    let store: Arc<dyn RunStore> = Arc::new(InMemoryStore::new());
    let (_, on_refund) = counter();
    waiting_run(&store, "run-1", &[1001, 1002], on_refund.clone()).await;
    let new_key = StateKey::new(*b"next year's secret of 32 bytes!!");
    let rotated = desk(Arc::clone(&store), vec![], on_refund.clone())
        .with_state_key(new_key.clone())
        .with_retired_state_key(StateKey::new(*KEY));
    let output = rotated
        .resume_stored(Decisions::new().approve("call_1"), &ctx("run-1"), &|_| {})
        .await
        .unwrap();
    assert_eq!(output.done.stop, StopReason::Waiting { calls: vec!["call_2".into()] });
    // The old key is gone: the state saved by the resume reads with the new one alone.
    let renewed = desk(Arc::clone(&store), vec![], on_refund).with_state_key(new_key);
    assert_eq!(renewed.load(&ctx("run-1")).await.unwrap().waiting().count(), 1);
}

/// Rewrites the stored bytes of the run `run_id` of `acme` with `change`.
async fn tamper(store: &Arc<dyn RunStore>, run_id: &str, change: impl FnOnce(&mut Vec<u8>)) {
    let mut stored = store.load(&RunKey::new("acme", run_id)).await.unwrap().unwrap();
    change(&mut stored.state);
    store.save(stored).await.unwrap();
}

#[tokio::test]
async fn stored_bytes_are_checked_before_they_are_parsed() {
    let store: Arc<dyn RunStore> = Arc::new(InMemoryStore::new());
    let (made, on_refund) = counter();
    let agent = desk(Arc::clone(&store), vec![], on_refund.clone());
    let header_end = |bytes: &[u8]| bytes.iter().position(|byte| *byte == b'\n').unwrap();

    waiting_run(&store, "run-1", &[1001], on_refund.clone()).await;
    let stored = store.load(&RunKey::new("acme", "run-1")).await.unwrap().unwrap();
    let header = String::from_utf8(stored.state[..header_end(&stored.state)].to_vec()).unwrap();
    assert!(
        header.starts_with(&format!("tool-runtime-state/1 {} ", StateKey::new(*KEY).id())),
        "{header}"
    );
    // One byte of the JSON changed: the order to refund.
    tamper(&store, "run-1", |bytes| {
        let at = bytes.windows(4).position(|window| window == b"1001").unwrap();
        bytes[at] = b'9';
    })
    .await;
    assert_eq!(agent.load(&ctx("run-1")).await.unwrap_err(), ResumeError::Forged);

    for (run_id, bytes) in [
        ("run-2", b"not a state at all".to_vec()),
        ("run-3", b"tool-runtime-state/1 nothing\n{}".to_vec()),
        ("run-4", vec![0xff; 4096]),
    ] {
        waiting_run(&store, run_id, &[1001], on_refund.clone()).await;
        tamper(&store, run_id, |stored| *stored = bytes).await;
        assert_eq!(agent.load(&ctx(run_id)).await.unwrap_err(), ResumeError::Forged, "{run_id}");
    }
    waiting_run(&store, "run-5", &[1001], on_refund.clone()).await;
    tamper(&store, "run-5", |bytes| {
        let end = header_end(bytes);
        let json = bytes[end..].to_vec();
        *bytes = b"tool-runtime-state/1 0123456789abcdef 00".to_vec();
        bytes.extend_from_slice(&json);
    })
    .await;
    assert_eq!(
        agent.load(&ctx("run-5")).await.unwrap_err(),
        ResumeError::UnknownKey { key_id: "0123456789abcdef".into() }
    );
    let refused =
        agent.resume_stored(Decisions::new().approve("call_1"), &ctx("run-1"), &|_| {}).await;
    assert_eq!(refused.unwrap_err(), ResumeError::Forged);
    assert_eq!(made.load(Ordering::SeqCst), 0);
}

#[tokio::test]
async fn a_state_over_the_size_cap_is_not_stored_and_not_read_back() {
    let store: Arc<dyn RunStore> = Arc::new(InMemoryStore::new());
    let (made, on_refund) = counter();
    let small = AgentConfig { max_state_bytes: 512, ..AgentConfig::default() };
    let agent = desk(Arc::clone(&store), vec![refunds(&[1001])], on_refund.clone())
        .with_config(small.clone());
    let output = agent.run(vec![Message::user("Refund order 1001.")], &ctx("run-1"), &|_| {}).await;
    let Some(StoreError::TooLarge { bytes, limit: 512, .. }) = output.store_error else {
        panic!("{:?}", output.store_error)
    };
    assert!(bytes > 512);
    // The state is still the application's, and nothing is listed.
    assert!(output.state.is_some());
    assert!(store.list_waiting(&WaitingQuery::tenant("acme")).await.unwrap().is_empty());

    waiting_run(&store, "run-2", &[1001], on_refund.clone()).await;
    let reader = desk(Arc::clone(&store), vec![], on_refund).with_config(small);
    let refused =
        reader.resume_stored(Decisions::new().approve("call_1"), &ctx("run-2"), &|_| {}).await;
    assert!(
        matches!(refused, Err(ResumeError::Store(StoreError::TooLarge { limit: 512, .. }))),
        "{refused:?}"
    );
    assert_eq!(made.load(Ordering::SeqCst), 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_resumes_of_one_run_deciding_other_calls_take_turns() {
    use std::sync::mpsc;

    let store: Arc<dyn RunStore> = Arc::new(InMemoryStore::new());
    waiting_run(&store, "run-1", &[1001, 1002], Arc::new(|_| {})).await;
    let state =
        desk(Arc::clone(&store), vec![], Arc::new(|_| {})).load(&ctx("run-1")).await.unwrap();
    let made = Arc::new(Mutex::new(Vec::new()));
    let recording: OnRefund = {
        let made = Arc::clone(&made);
        Arc::new(move |order| made.lock().unwrap().push(order))
    };

    // The first resume approves call_1; its refund holds until released, and the run with it.
    let (started, running) = mpsc::channel();
    let (release, released) = mpsc::channel::<()>();
    let released = Mutex::new(released);
    let holding: OnRefund = {
        let recording = Arc::clone(&recording);
        Arc::new(move |order| {
            recording(order);
            started.send(()).unwrap();
            released.lock().unwrap().recv().unwrap();
        })
    };
    let first = desk(Arc::clone(&store), vec![], holding);
    let resuming = {
        let state = state.clone();
        tokio::spawn(async move {
            first.resume(state, Decisions::new().approve("call_1"), &ctx("run-1"), &|_| {}).await
        })
    };
    running.recv().unwrap();
    let turns = vec![ScriptedTurn::openai_text("Both refunded.")];
    let second = desk(Arc::clone(&store), turns, recording);
    let busy = second
        .resume(state.clone(), Decisions::new().approve("call_2"), &ctx("run-1"), &|_| {})
        .await;
    assert!(matches!(busy, Err(ResumeError::Store(StoreError::Busy { .. }))), "{busy:?}");
    release.send(()).unwrap();
    let first = resuming.await.unwrap().unwrap();
    assert_eq!(first.done.stop, StopReason::Waiting { calls: vec!["call_2".into()] });

    // The state it decided on moved on: deciding on it again is refused, the new one resumes.
    let stale =
        second.resume(state, Decisions::new().approve("call_2"), &ctx("run-1"), &|_| {}).await;
    let moved = StoreError::Moved { key: RunKey::new("acme", "run-1") };
    assert_eq!(stale.unwrap_err(), ResumeError::Store(moved));
    let output = second
        .resume_stored(Decisions::new().approve("call_2"), &ctx("run-1"), &|_| {})
        .await
        .unwrap();
    assert_eq!(output.done.stop, StopReason::Answered);
    assert_eq!(*made.lock().unwrap(), [1001, 1002]);
}

#[tokio::test]
async fn an_operator_takes_over_a_run_whose_resume_died() {
    let store: Arc<dyn RunStore> = Arc::new(InMemoryStore::new());
    let (made, on_refund) = counter();
    waiting_run(&store, "run-1", &[1001, 1002], on_refund.clone()).await;
    let key = RunKey::new("acme", "run-1");
    // A resume that spent both calls and died before it ran or saved anything.
    let stored = store.load(&key).await.unwrap().unwrap();
    let dead = [
        tool_runtime::store::Decided::new("call_1", "approved"),
        tool_runtime::store::Decided::new("call_2", "approved"),
    ];
    store.spend(&key, &stored.revision, &dead, 1).await.unwrap();
    let operator = |turns| desk(Arc::clone(&store), turns, on_refund.clone());

    // A resume finds it held; the operator must decide every call the dead resume spent.
    let busy = operator(vec![])
        .resume_stored(Decisions::new().approve("call_1"), &ctx("run-1"), &|_| {})
        .await;
    assert!(matches!(busy, Err(ResumeError::AlreadyResumed { .. })), "{busy:?}");
    let partial = operator(vec![])
        .take_over(Decisions::new().approve("call_1"), &ctx("run-1"), &|_| {})
        .await;
    assert_eq!(partial.unwrap_err(), ResumeError::Undecided { call_ids: vec!["call_2".into()] });

    // Run call_1 again, mark call_2 failed.
    let decisions = Decisions::new()
        .approve("call_1")
        .deny("call_2", "the refund system stopped during this refund");
    let output = operator(vec![ScriptedTurn::openai_text("One refunded, one failed.")])
        .take_over(decisions.clone(), &ctx("run-1"), &|_| {})
        .await
        .unwrap();
    assert_eq!((output.done.stop, output.store_error), (StopReason::Answered, None));
    assert_eq!(made.load(Ordering::SeqCst), 1);
    let denied = output.done.records.iter().find(|record| record.tool_call_id == "call_2").unwrap();
    assert_eq!(denied.error.as_ref().unwrap().code, ToolErrorCode::ApprovalDenied);
    assert!(store.unfinished("acme").await.unwrap().is_empty());
    // The take-over's calls are audited after the two that waited.
    let trail = store.audit(&key).await.unwrap();
    assert_eq!(
        outcomes(&trail),
        [
            ("call_1", "waiting_for_approval"),
            ("call_2", "waiting_for_approval"),
            ("call_1", "ok"),
            ("call_2", "approval_denied")
        ]
    );
    // Taken over once: a second operator finds nothing to take over.
    let again = operator(vec![]).take_over(decisions.clone(), &ctx("run-1"), &|_| {}).await;
    assert_eq!(again.unwrap_err(), ResumeError::Store(StoreError::NotFound { key }));
    let replay = operator(vec![]).resume_stored(decisions, &ctx("run-1"), &|_| {}).await;
    let both = vec!["call_1".to_owned(), "call_2".to_owned()];
    assert_eq!(replay.unwrap_err(), ResumeError::AlreadyResumed { call_ids: both });
    assert_eq!(made.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn a_run_no_resume_holds_has_nothing_to_take_over() {
    let store: Arc<dyn RunStore> = Arc::new(InMemoryStore::new());
    let (made, on_refund) = counter();
    waiting_run(&store, "run-1", &[1001], on_refund.clone()).await;
    let operator = desk(Arc::clone(&store), vec![], on_refund);
    let refused =
        operator.take_over(Decisions::new().approve("call_1"), &ctx("run-1"), &|_| {}).await;
    let moved = StoreError::Moved { key: RunKey::new("acme", "run-1") };
    assert_eq!(refused.unwrap_err(), ResumeError::Store(moved));
    assert_eq!(made.load(Ordering::SeqCst), 0);
}

/// How many runs the cross-process race resumes.
const RACES: usize = 100;

/// The store `spec` names (`sqlite:<path>` or `postgres:<schema>`).
async fn open(spec: &str) -> Arc<dyn RunStore> {
    match spec.split_once(':') {
        Some(("sqlite", path)) => Arc::new(SqliteStore::open(path).await.unwrap()),
        Some(("postgres", schema)) => Arc::new(postgres_store(schema).await.unwrap()),
        _ => panic!("a store is `sqlite:<path>` or `postgres:<schema>`"),
    }
}

/// Starts this test binary again as [`a_resuming_process`] in `mode` over the store `spec`;
/// refunds are appended to `log`.
fn resuming_process(mode: &str, spec: &str, log: &std::path::Path) -> std::process::Child {
    use std::process::{Command, Stdio};
    Command::new(std::env::current_exe().unwrap())
        .args(["--exact", "durable::a_resuming_process", "--ignored", "--nocapture"])
        .args(["--test-threads", "1"])
        .env("DURABLE_UNDER_TEST", format!("{mode}|{spec}|{}", log.display()))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap()
}

/// The next line of `output` that holds `word`, from it on (libtest may print first on the
/// same line).
fn answer(output: &mut impl Iterator<Item = std::io::Result<String>>, word: &str) -> String {
    output
        .map(Result::unwrap)
        .find_map(|line| line.find(word).map(|at| line[at..].to_owned()))
        .unwrap_or_else(|| panic!("the process ended without `{word}`"))
}

/// Three processes resume each of [`RACES`] runs (saved waiting by this process) at the same
/// moment, all approving its refund: each refund is made exactly once (counted in a log the
/// tool appends to), one process resumes each run and the others are told it was resumed
/// already; nothing fails. Returns in how many races all three were resuming at once.
fn race_resumes(spec: &str, name: &str) -> usize {
    let log = fresh_file(&format!("{name}-refunds")).with_extension("log");
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    runtime.block_on(async {
        let store = open(spec).await;
        for race in 0..RACES {
            let order = u32::try_from(race).unwrap();
            waiting_run(&store, &format!("run-{race}"), &[order], Arc::new(|_| {})).await;
        }
    });
    let children: Vec<_> = (0..3).map(|_| resuming_process("race", spec, &log)).collect();
    let together = race(children, RACES, "resume ", "resumed");
    let made = std::fs::read_to_string(&log).unwrap();
    let mut orders: Vec<usize> = made.lines().map(|line| line.parse().unwrap()).collect();
    orders.sort_unstable();
    assert_eq!(orders, (0..RACES).collect::<Vec<_>>(), "each refund made exactly once");
    std::fs::remove_file(&log).unwrap();
    together
}

/// A resume that dies: a process approves the refund of `run-1` and is killed (SIGKILL) while
/// the refund runs, after the spend committed. The call is listed as spent and not ended, the
/// run as held; an operator takes it over and the refund runs once more, on the new decision.
fn a_killed_resume_is_taken_over(spec: &str, name: &str) {
    use std::io::{BufRead, BufReader, Write};

    let log = fresh_file(&format!("{name}-refunds")).with_extension("log");
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    let store = runtime.block_on(async {
        let store = open(spec).await;
        waiting_run(&store, "run-1", &[1001], Arc::new(|_| {})).await;
        store
    });
    let mut child = resuming_process("pause", spec, &log);
    let mut input = child.stdin.take().unwrap();
    writeln!(input, "run-1").unwrap();
    input.flush().unwrap();
    let mut output = BufReader::new(child.stdout.take().unwrap()).lines();
    assert_eq!(answer(&mut output, "paused"), "paused in the refund of 1001");
    child.kill().unwrap();
    child.wait().unwrap();
    runtime.block_on(async {
        let unfinished = store.unfinished("acme").await.unwrap();
        assert_eq!(unfinished.len(), 1);
        assert_eq!(
            (unfinished[0].call_key.as_str(), unfinished[0].decision.as_str()),
            ("call_1", "approved")
        );
        let inbox = store.list_waiting(&WaitingQuery::tenant("acme")).await.unwrap();
        assert!(inbox[0].resuming_since_ms.is_some());
        let (made, on_refund) = counter();
        let operator =
            desk(Arc::clone(&store), vec![ScriptedTurn::openai_text("Refunded.")], on_refund);
        let output = operator
            .take_over(Decisions::new().approve("call_1"), &ctx("run-1"), &|_| {})
            .await
            .unwrap();
        assert_eq!((output.done.stop, output.store_error), (StopReason::Answered, None));
        assert_eq!(made.load(Ordering::SeqCst), 1);
        assert!(store.unfinished("acme").await.unwrap().is_empty());
        assert!(store.list_waiting(&WaitingQuery::tenant("acme")).await.unwrap().is_empty());
    });
    // The killed process began the refund (the log says so); the operator ran it again.
    assert_eq!(std::fs::read_to_string(&log).unwrap(), "1001\n");
    std::fs::remove_file(&log).unwrap();
}

/// Not a test of its own: the process the cross-process tests start. `DURABLE_UNDER_TEST` is
/// `<mode>|<store>|<log>`. In mode `race`, for each race number read from its input it
/// resumes `run-<race>` from the store approving `call_1` (the refund appends the order to
/// the log) and prints `resume <race> <resumed | already | error> <start ns> <end ns>`. In
/// mode `pause`, it resumes the run named on its input, and its refund prints `paused` and
/// waits to be killed.
#[test]
#[ignore = "a child process of the cross-process tests, not a test on its own"]
fn a_resuming_process() {
    use std::io::{BufRead, Write};

    let Ok(spec) = std::env::var("DURABLE_UNDER_TEST") else { return };
    let mut parts = spec.splitn(3, '|');
    let (mode, store, log) = (parts.next().unwrap(), parts.next().unwrap(), parts.next().unwrap());
    let log = log.to_owned();
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    let store = runtime.block_on(open(store));
    let append: OnRefund = Arc::new(move |order| {
        let mut file = std::fs::OpenOptions::new().create(true).append(true).open(&log).unwrap();
        file.write_all(format!("{order}\n").as_bytes()).unwrap();
    });
    let now = || std::time::SystemTime::UNIX_EPOCH.elapsed().unwrap().as_nanos();
    for line in std::io::stdin().lock().lines() {
        let line = line.unwrap();
        if mode == "pause" {
            let append = Arc::clone(&append);
            let pause: OnRefund = Arc::new(move |order| {
                append(order);
                println!("paused in the refund of {order}");
                std::io::stdout().flush().unwrap();
                std::thread::sleep(Duration::from_secs(60));
            });
            let agent =
                desk(Arc::clone(&store), vec![ScriptedTurn::openai_text("Refunded.")], pause);
            let ctx = ctx(&line);
            let resumed = agent.resume_stored(Decisions::new().approve("call_1"), &ctx, &|_| {});
            let _ = runtime.block_on(resumed);
            panic!("the paused process was not killed");
        }
        let agent = desk(
            Arc::clone(&store),
            vec![ScriptedTurn::openai_text("Refunded.")],
            Arc::clone(&append),
        );
        let run_id = format!("run-{line}");
        let start = now();
        let resumed = runtime.block_on(agent.resume_stored(
            Decisions::new().approve("call_1"),
            &ctx(&run_id),
            &|_| {},
        ));
        let end = now();
        let outcome = match resumed {
            Ok(output)
                if output.done.stop == StopReason::Answered && output.store_error.is_none() =>
            {
                "resumed".to_owned()
            }
            Ok(output) => {
                format!("error:{:?}/{:?}", output.done.stop, output.store_error).replace(' ', "_")
            }
            Err(ResumeError::AlreadyResumed { .. }) => "already".to_owned(),
            Err(other) => format!("error:{}", other.to_string().replace(' ', "_")),
        };
        println!("resume {line} {outcome} {start} {end}");
    }
}

#[test]
fn three_processes_resuming_one_state_on_sqlite_make_each_refund_once() {
    let path = fresh_file("durable-race");
    let together = race_resumes(&format!("sqlite:{}", path.display()), "sqlite-race");
    eprintln!("sqlite: all three resuming at once in {together} of {RACES} races");
    assert!(together > 0, "the processes never resumed at the same time");
}

#[test]
fn three_processes_resuming_one_state_on_postgres_make_each_refund_once() {
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    let schema = runtime.block_on(fresh_schema("durable_race"));
    let together = race_resumes(&format!("postgres:{schema}"), "postgres-race");
    eprintln!("postgres: all three resuming at once in {together} of {RACES} races");
    assert!(together > 0, "the processes never resumed at the same time");
    runtime.block_on(drop_schema(&schema));
}

#[test]
fn a_resume_killed_after_its_spend_on_sqlite_is_listed_and_taken_over() {
    let path = fresh_file("durable-killed");
    a_killed_resume_is_taken_over(&format!("sqlite:{}", path.display()), "sqlite-killed");
}

#[test]
fn a_resume_killed_after_its_spend_on_postgres_is_listed_and_taken_over() {
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    let schema = runtime.block_on(fresh_schema("durable_killed"));
    a_killed_resume_is_taken_over(&format!("postgres:{schema}"), "postgres-killed");
    runtime.block_on(drop_schema(&schema));
}

/// The approvals example's story ([`examples::approvals::play`]) on two server processes
/// (this test binary again, as [`an_approvals_server`]) over the store `database` names: `None`
/// for the default, a SQLite file in the shop's folder, or a PostgreSQL schema.
fn the_approvals_example_plays(database: Option<&str>, name: &str) {
    let dir = fresh_file(name).with_extension("shop");
    std::fs::create_dir_all(&dir).unwrap();
    let server = || {
        let mut command = std::process::Command::new(std::env::current_exe().unwrap());
        command
            .args(["--exact", "durable::an_approvals_server", "--ignored", "--nocapture"])
            .env("APPROVALS_DIR", &dir)
            .env_remove("DATABASE_URL");
        if let Some(schema) = database {
            command.env("DATABASE_URL", database_url()).env("APPROVALS_SCHEMA", schema);
        }
        command
    };
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    let played = runtime.block_on(examples::approvals::play(server, &dir, ["run-42", "run-43"]));
    let played = played.unwrap();
    assert_eq!((played.refunds, played.replayed), (1, 409));
    assert_eq!(played.inbox_after_restart, ["run-43"]);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn the_approvals_example_plays_on_two_processes_over_its_sqlite_file() {
    the_approvals_example_plays(None, "approvals-sqlite");
}

#[test]
fn the_approvals_example_plays_on_two_processes_over_postgres() {
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    let schema = runtime.block_on(fresh_schema("approvals"));
    the_approvals_example_plays(Some(&schema), "approvals-postgres");
    runtime.block_on(drop_schema(&schema));
}

/// Not a test of its own: a server process of the approvals example, on the shop folder
/// `APPROVALS_DIR` ([`examples::approvals::run_server`]).
#[test]
#[ignore = "a child process of the approvals example's tests, not a test on its own"]
fn an_approvals_server() {
    let Ok(dir) = std::env::var("APPROVALS_DIR") else { return };
    let runtime =
        tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build();
    let served =
        runtime.unwrap().block_on(examples::approvals::run_server(std::path::Path::new(&dir)));
    panic!("the server stopped: {served:?}");
}
