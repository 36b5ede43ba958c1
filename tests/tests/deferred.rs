//! Deferred decisions, resumable runs and client tools (issue 14 items 2 and 3).

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use serde_json::{Value, json};
use tool_runtime::adapters::ToolOutcome;
use tool_runtime::agent::deferred::{
    CallStatus, Decisions, InMemoryLedger, ResumeError, RunState, StateKey, WaitsFor,
};
use tool_runtime::agent::{Agent, AgentEvent, Message, ScriptedModel, ScriptedTurn, StopReason};
use tool_runtime::catalog::ToolCatalog;
use tool_runtime::policy::{DeferAll, ToolPolicy};
use tool_runtime::prelude::*;
use tool_runtime::runner::{
    AfterCallDecision, AfterCallFn, BeforeCallDecision, BeforeCallFn, ToolRunner, ToolRunnerBuilder,
};
use tool_runtime::runtime::{ClientTool, CollectingSink, DynamicTool, ToolErrorCode, ToolEvent};

const KEY: &[u8; 32] = b"an application secret of 32 byte";

fn close_schema() -> Value {
    json!({"type": "object", "properties": {"number": {"type": "integer", "minimum": 1}}, "required": ["number"], "additionalProperties": false})
}

/// `tickets__close` (state-changing, counted) and `tickets__read` (read-only).
fn catalog(runs: &Arc<AtomicUsize>, seen: &Arc<Mutex<Vec<Value>>>) -> ToolCatalog {
    let (runs, seen) = (Arc::clone(runs), Arc::clone(seen));
    let close = DynamicTool::builder("tickets__close", "Close a ticket.", close_schema())
        .effect(ToolEffect::StateChange)
        .output_schema(json!({"type": "object", "properties": {"closed": {"type": "integer"}}, "required": ["closed"], "additionalProperties": false}))
        .redact(["closed"])
        .build(move |args, _, _| {
            runs.fetch_add(1, Ordering::SeqCst);
            seen.lock().unwrap().push(args.clone());
            async move { Ok(json!({"closed": args["number"]})) }
        })
        .unwrap();
    let read = DynamicTool::builder("tickets__read", "Read a ticket.", close_schema())
        .effect(ToolEffect::ReadOnly)
        .redact_all()
        .build(|args, _, _| async move { Ok(json!(format!("ticket {}", args["number"]))) })
        .unwrap();
    let pick = ClientTool::new(
        DynamicTool::builder(
            "ui__pick_date",
            "Ask the user for a date.",
            json!({"type": "object", "properties": {"prompt": {"type": "string"}}, "required": ["prompt"], "additionalProperties": false}),
        )
        .effect(ToolEffect::ReadOnly)
        .output_schema(json!({"type": "object", "properties": {"date": {"type": "string"}, "note": {"type": "string"}}, "required": ["date"], "additionalProperties": false}))
        .redact(["date"]),
    )
    .unwrap();
    let send = ClientTool::new(
        DynamicTool::builder(
            "ui__send_form",
            "Submit the form the user filled in.",
            json!({"type": "object", "properties": {}, "additionalProperties": false}),
        )
        .effect(ToolEffect::StateChange),
    )
    .unwrap();
    ToolCatalog::builder()
        .register_dynamic(close)
        .register_dynamic(read)
        .register_bound(Arc::new(pick), "the date picker".into())
        .register_bound(Arc::new(send), "the form sender".into())
        .build()
        .unwrap()
}

struct World {
    runs: Arc<AtomicUsize>,
    seen: Arc<Mutex<Vec<Value>>>,
    sink: CollectingSink,
    /// Shared by every agent of the world, as by the processes of one application.
    ledger: Arc<InMemoryLedger>,
}

impl World {
    fn new() -> Self {
        Self {
            runs: Arc::default(),
            seen: Arc::default(),
            sink: CollectingSink::new(),
            ledger: Arc::default(),
        }
    }

    fn agent(&self, turns: Vec<ScriptedTurn>) -> (Agent, Arc<ScriptedModel>) {
        self.agent_with(turns, |runner| runner)
    }

    /// An agent whose runner `hooks` adds hooks to.
    fn agent_with(
        &self,
        turns: Vec<ScriptedTurn>,
        hooks: impl FnOnce(ToolRunnerBuilder) -> ToolRunnerBuilder,
    ) -> (Agent, Arc<ScriptedModel>) {
        let policy = ToolPolicy {
            require_approval: vec![ToolEffect::StateChange],
            ..ToolPolicy::allowing(["tickets__*", "ui__*"])
        };
        let runner = ToolRunner::builder(catalog(&self.runs, &self.seen))
            .policy(policy)
            .approver(Arc::new(DeferAll))
            .event_sink(self.sink.clone());
        let runner = hooks(runner).build();
        let model = Arc::new(ScriptedModel::new(turns));
        let agent = Agent::new(model.clone(), runner)
            .with_state_key(StateKey::new(*KEY))
            .with_ledger(self.ledger.clone());
        (agent, model)
    }

    fn runs(&self) -> usize {
        self.runs.load(Ordering::SeqCst)
    }
}

fn ctx() -> ToolInvocationContext {
    ToolInvocationContext::new(ContextIds {
        run_id: "run-1",
        actor_id: "user-1",
        tenant_id: "acme",
    })
}

fn events() -> (Arc<Mutex<Vec<AgentEvent>>>, impl Fn(AgentEvent) + Send + Sync) {
    let events = Arc::new(Mutex::new(Vec::new()));
    let sink = Arc::clone(&events);
    (events, move |event| sink.lock().unwrap().push(event))
}

/// A first request: close 7 (waits) and read 7 (runs).
async fn first(world: &World) -> RunState {
    let (agent, _) = world.agent(vec![ScriptedTurn::openai_calls(&[
        ("call_1", "tickets__close", r#"{"number": 7}"#),
        ("call_2", "tickets__read", r#"{"number": 7}"#),
    ])]);
    let (seen, on_event) = events();
    let output = agent.run(vec![Message::user("Close ticket 7.")], &ctx(), &on_event).await;
    assert_eq!(output.done.stop, StopReason::Pending { calls: vec!["call_1".into()] });
    assert_eq!(world.runs(), 0);
    let seen = seen.lock().unwrap();
    assert!(seen.contains(&AgentEvent::ApprovalRequired {
        id: "call_1".into(),
        name: "tickets__close".into()
    }));
    assert!(seen.contains(&AgentEvent::ToolCallPending {
        id: "call_1".into(),
        name: "tickets__close".into(),
        waits_for: WaitsFor::Approval
    }));
    // The read ran; its record is in this part of the run.
    assert_eq!(output.done.records.len(), 1);
    assert_eq!(output.done.records[0].tool_name, "tickets__read");
    output.state.expect("a pending run hands back its state")
}

/// The state as another process reads it.
fn stored(state: &RunState) -> RunState {
    serde_json::from_str(&serde_json::to_string(state).unwrap()).unwrap()
}

fn last_results(model: &ScriptedModel) -> Vec<(String, ToolOutcome)> {
    let requests = model.requests();
    let Some(Message::ToolResults(results)) = requests[0].messages.last() else {
        panic!("the model got no results")
    };
    results.iter().map(|result| (result.call_id.clone(), result.outcome.clone())).collect()
}

#[tokio::test]
async fn a_deferred_call_waits_and_the_sink_says_so() {
    let world = World::new();
    let state = first(&world).await;
    let pending: Vec<_> = state.pending().map(|call| call.id.as_str()).collect();
    assert_eq!(pending, ["call_1"]);
    assert!(matches!(state.calls()[1].status, CallStatus::Ran { .. }));
    let events = world.sink.events();
    assert!(events.iter().any(|event| matches!(event, ToolEvent::ToolCallPending { tool_call_id, .. } if tool_call_id == "call_1")));
    assert!(!events.iter().any(|event| matches!(event, ToolEvent::ToolCallResult { tool_call_id, .. } if tool_call_id == "call_1")));
    assert!(!events.iter().any(|event| matches!(event, ToolEvent::ToolCallStart { tool_call_id, .. } if tool_call_id == "call_1")));
}

#[tokio::test]
async fn an_approved_call_runs_once_on_resume_in_a_fresh_agent_and_never_again() {
    let world = World::new();
    let state = stored(&first(&world).await);
    let (agent, model) = world.agent(vec![ScriptedTurn::openai_text("Closed.")]);
    let (seen, on_event) = events();
    let output = agent
        .resume(state.clone(), Decisions::new().approve("call_1"), &ctx(), &on_event)
        .await
        .unwrap();
    assert_eq!(output.done.stop, StopReason::Answered);
    assert_eq!(output.done.answer, "Closed.");
    assert_eq!(world.runs(), 1);
    assert_eq!(output.done.records[0].result, Some(json!({"closed": 7})));
    // Both results reach the model, in model order.
    let results = last_results(&model);
    assert_eq!(results.iter().map(|(id, _)| id.as_str()).collect::<Vec<_>>(), ["call_1", "call_2"]);
    let seen = seen.lock().unwrap().clone();
    assert!(matches!(seen[0], AgentEvent::Resumed { decided: 1, waiting: 0 }));
    assert!(seen.contains(&AgentEvent::CallDecided {
        id: "call_1".into(),
        name: "tickets__close".into(),
        decision: "approved"
    }));

    // The same state again: refused, nothing runs.
    let again =
        agent.resume(state.clone(), Decisions::new().approve("call_1"), &ctx(), &|_| {}).await;
    assert_eq!(again.unwrap_err(), ResumeError::AlreadyResumed { call_ids: vec!["call_1".into()] });
    assert_eq!(world.runs(), 1);
}

#[tokio::test]
async fn a_shared_ledger_refuses_a_replay_in_another_agent() {
    let world = World::new();
    let state = first(&world).await;
    let ledger = Arc::new(InMemoryLedger::default());
    let (one, _) = world.agent(vec![ScriptedTurn::openai_text("Closed.")]);
    let (two, _) = world.agent(vec![ScriptedTurn::openai_text("Closed.")]);
    let one = one.with_ledger(ledger.clone());
    let two = two.with_ledger(ledger);
    one.resume(state.clone(), Decisions::new().approve("call_1"), &ctx(), &|_| {}).await.unwrap();
    let replay = two.resume(state, Decisions::new().approve("call_1"), &ctx(), &|_| {}).await;
    assert!(matches!(replay, Err(ResumeError::AlreadyResumed { .. })));
    assert_eq!(world.runs(), 1);
}

#[tokio::test]
async fn a_denied_call_goes_back_to_the_model_as_a_denial() {
    let world = World::new();
    let state = first(&world).await;
    let (agent, model) = world.agent(vec![ScriptedTurn::openai_text("Not closed.")]);
    let output = agent
        .resume(state, Decisions::new().deny("call_1", "the manager said no"), &ctx(), &|_| {})
        .await
        .unwrap();
    assert_eq!(world.runs(), 0);
    assert_eq!(output.done.records[0].error.as_ref().unwrap().code, ToolErrorCode::ApprovalDenied);
    let results = last_results(&model);
    assert_eq!(
        results[0].1,
        ToolOutcome::Error {
            code: Some("approval_denied".into()),
            message: "the manager said no".into()
        }
    );
    assert!(world.sink.events().iter().any(|event| matches!(event, ToolEvent::ToolCallResult { tool_call_id, .. } if tool_call_id == "call_1")));
}

#[tokio::test]
async fn edited_arguments_are_validated_again() {
    let world = World::new();
    let state = first(&world).await;
    let (agent, _) = world.agent(vec![ScriptedTurn::openai_text("Done.")]);
    let output = agent
        .resume(
            state.clone(),
            Decisions::new().edit("call_1", json!({"number": 8})),
            &ctx(),
            &|_| {},
        )
        .await
        .unwrap();
    assert_eq!(world.runs(), 1);
    assert_eq!(*world.seen.lock().unwrap(), [json!({"number": 8})]);
    assert_eq!(output.done.records[0].args, Some(json!({"number": 8})));

    let world = World::new();
    let state = first(&world).await;
    let (agent, _) = world.agent(vec![ScriptedTurn::openai_text("Done.")]);
    let output = agent
        .resume(state, Decisions::new().edit("call_1", json!({"number": 0})), &ctx(), &|_| {})
        .await
        .unwrap();
    assert_eq!(world.runs(), 0);
    assert_eq!(output.done.records[0].error.as_ref().unwrap().code, ToolErrorCode::Validation);
}

/// The state's JSON with one change.
fn tampered(state: &RunState, change: impl FnOnce(&mut Value)) -> RunState {
    let mut json = serde_json::to_value(state).unwrap();
    change(&mut json);
    serde_json::from_value(json).unwrap()
}

#[tokio::test]
async fn a_forged_or_stale_state_runs_nothing() {
    let world = World::new();
    let state = first(&world).await;
    let (agent, _) = world.agent(vec![ScriptedTurn::openai_text("Closed.")]);
    let approve = || Decisions::new().approve("call_1");
    let refused = |state: RunState, ctx: ToolInvocationContext| {
        let agent = agent.clone();
        async move { agent.resume(state, approve(), &ctx, &|_| {}).await.unwrap_err() }
    };
    let edited_arguments =
        tampered(&state, |json| json["calls"][0]["arguments"] = json!({"number": 9}));
    assert_eq!(refused(edited_arguments, ctx()).await, ResumeError::Forged);
    let swapped_tool =
        tampered(&state, |json| json["calls"][0]["tool_name"] = json!("tickets__read"));
    assert_eq!(refused(swapped_tool, ctx()).await, ResumeError::Forged);
    let other_tenant = tampered(&state, |json| json["tenant_id"] = json!("globex"));
    assert_eq!(refused(other_tenant, ctx()).await, ResumeError::Forged);
    let unsealed = tampered(&state, |json| {
        json.as_object_mut().unwrap().remove("seal");
    });
    assert_eq!(refused(unsealed, ctx()).await, ResumeError::Forged);

    let other_run = ToolInvocationContext::new(ContextIds {
        run_id: "run-2",
        actor_id: "user-1",
        tenant_id: "acme",
    });
    assert_eq!(
        refused(state.clone(), other_run).await,
        ResumeError::OtherCaller { field: "run_id" }
    );
    let other_tenant = ToolInvocationContext::new(ContextIds {
        run_id: "run-1",
        actor_id: "user-1",
        tenant_id: "globex",
    });
    assert_eq!(
        refused(state.clone(), other_tenant).await,
        ResumeError::OtherCaller { field: "tenant_id" }
    );

    let other_key = agent.clone().with_state_key(StateKey::new(b"another key".to_vec()));
    assert_eq!(
        other_key.resume(state.clone(), approve(), &ctx(), &|_| {}).await.unwrap_err(),
        ResumeError::Forged
    );

    let keyless = Agent::new(Arc::new(ScriptedModel::new([])), keyless_runner(&world));
    assert_eq!(
        keyless.resume(state.clone(), approve(), &ctx(), &|_| {}).await.unwrap_err(),
        ResumeError::NoKey
    );

    let not_pending = agent
        .resume(state.clone(), approve().approve("call_2").approve("call_9"), &ctx(), &|_| {})
        .await;
    assert_eq!(
        not_pending.unwrap_err(),
        ResumeError::NotPending { call_ids: vec!["call_2".into(), "call_9".into()] }
    );

    let supply = agent
        .resume(state.clone(), Decisions::new().supply("call_1", json!({})), &ctx(), &|_| {})
        .await;
    assert!(matches!(
        supply.unwrap_err(),
        ResumeError::InvalidDecision { waits_for: WaitsFor::Approval, .. }
    ));

    assert_eq!(world.runs(), 0);
    // None of the refusals spent the call.
    agent.resume(state, approve(), &ctx(), &|_| {}).await.unwrap();
    assert_eq!(world.runs(), 1);
}

fn keyless_runner(world: &World) -> ToolRunner {
    ToolRunner::builder(catalog(&world.runs, &world.seen)).build()
}

#[tokio::test]
async fn a_state_is_refused_after_the_tool_changed() {
    let world = World::new();
    let state = first(&world).await;
    let changed = DynamicTool::builder("tickets__close", "Close a ticket.", close_schema())
        .effect(ToolEffect::StateChange)
        .redact_all()
        .build(|_, _, _| async { Ok(json!("closed")) })
        .unwrap();
    let runner =
        ToolRunner::builder(ToolCatalog::builder().register_dynamic(changed).build().unwrap())
            .policy(ToolPolicy::allowing(["tickets__*"]))
            .build();
    let agent = Agent::new(Arc::new(ScriptedModel::new([])), runner)
        .with_state_key(StateKey::new(*KEY))
        .with_ledger(world.ledger.clone());
    let refused = agent.resume(state, Decisions::new().approve("call_1"), &ctx(), &|_| {}).await;
    assert_eq!(
        refused.unwrap_err(),
        ResumeError::ToolChanged { call_id: "call_1".into(), tool_name: "tickets__close".into() }
    );
}

#[tokio::test]
async fn undecided_calls_keep_waiting_and_nothing_decided_is_lost() {
    let world = World::new();
    let (agent, _) = world.agent(vec![ScriptedTurn::openai_calls(&[
        ("call_1", "tickets__close", r#"{"number": 7}"#),
        ("call_2", "tickets__close", r#"{"number": 8}"#),
        ("call_3", "tickets__close", r#"{"number": 9}"#),
    ])]);
    let output = agent.run(vec![Message::user("Close 7, 8, 9.")], &ctx(), &|_| {}).await;
    let state = output.state.unwrap();
    assert_eq!(state.pending().count(), 3);

    let (agent, _) = world.agent(vec![ScriptedTurn::openai_text("7 closed, 8 not.")]);
    let partial = agent
        .resume(
            stored(&state),
            Decisions::new().approve("call_1").deny("call_2", "no"),
            &ctx(),
            &|_| {},
        )
        .await
        .unwrap();
    assert_eq!(partial.done.stop, StopReason::Pending { calls: vec!["call_3".into()] });
    assert_eq!(world.runs(), 1);
    let state = partial.state.unwrap();
    let statuses: Vec<&str> = state
        .calls()
        .iter()
        .map(|call| match call.status {
            CallStatus::Approved { .. } => "approved",
            CallStatus::Denied { .. } => "denied",
            CallStatus::Pending { .. } => "pending",
            _ => "other",
        })
        .collect();
    assert_eq!(statuses, ["approved", "denied", "pending"]);

    let done = agent
        .resume(stored(&state), Decisions::new().approve("call_3"), &ctx(), &|_| {})
        .await
        .unwrap();
    assert_eq!(done.done.stop, StopReason::Answered);
    assert_eq!(world.runs(), 2);
    assert_eq!(*world.seen.lock().unwrap(), [json!({"number": 7}), json!({"number": 9})]);
}

#[tokio::test]
async fn a_client_tool_waits_with_validated_arguments_and_its_result_is_checked_and_redacted() {
    let world = World::new();
    let (agent, _) = world.agent(vec![ScriptedTurn::openai_calls(&[
        ("call_1", "ui__pick_date", r#"{"prompt": "When?"}"#),
        ("call_2", "ui__pick_date", r#"{"prompt": 5}"#),
    ])]);
    let output = agent.run(vec![Message::user("Book it.")], &ctx(), &|_| {}).await;
    assert_eq!(output.done.stop, StopReason::Pending { calls: vec!["call_1".into()] });
    let state = output.state.unwrap();
    let CallStatus::Pending { waits_for, arguments, .. } = &state.calls()[0].status else {
        panic!()
    };
    assert_eq!((*waits_for, arguments), (WaitsFor::Client, &json!({"prompt": "When?"})));
    // Invalid arguments never wait: the model gets the validation error.
    let CallStatus::Ran { result } = &state.calls()[1].status else { panic!() };
    assert!(
        matches!(&result.outcome, ToolOutcome::Error { code: Some(code), .. } if code == "validation")
    );

    let (agent, model) = world.agent(vec![ScriptedTurn::openai_text("Booked.")]);
    let supplied = json!({"date": "2026-12-01", "note": "private"});
    let output = agent
        .resume(stored(&state), Decisions::new().supply("call_1", supplied), &ctx(), &|_| {})
        .await
        .unwrap();
    assert_eq!(output.done.stop, StopReason::Answered);
    assert_eq!(output.done.records[0].result, Some(json!({"date": "2026-12-01"})), "redacted");
    let results = last_results(&model);
    let ToolOutcome::Ok(sent) = &results[0].1 else { panic!("{results:?}") };
    assert_eq!(sent.structured(), Some(&json!({"date": "2026-12-01"})));

    // A supplied result that does not match the output schema is that call's error.
    let world = World::new();
    let (agent, _) = world.agent(vec![ScriptedTurn::openai_calls(&[(
        "call_1",
        "ui__pick_date",
        r#"{"prompt": "When?"}"#,
    )])]);
    let state = agent.run(vec![Message::user("Book it.")], &ctx(), &|_| {}).await.state.unwrap();
    let (agent, model) = world.agent(vec![ScriptedTurn::openai_text("Sorry.")]);
    let output = agent
        .resume(state, Decisions::new().supply("call_1", json!({"day": 1})), &ctx(), &|_| {})
        .await
        .unwrap();
    assert_eq!(
        output.done.records[0].error.as_ref().unwrap().code,
        ToolErrorCode::OutputValidation
    );
    assert!(
        matches!(&last_results(&model)[0].1, ToolOutcome::Error { code: Some(code), .. } if code == "output_validation")
    );
}

/// A client tool whose effect needs approval: a result the client supplies does not stand in
/// for the approval no one gave (found in review: the supplied result used to be accepted).
#[tokio::test]
async fn a_supplied_result_does_not_stand_in_for_an_approval() {
    let world = World::new();
    let (agent, _) =
        world.agent(vec![ScriptedTurn::openai_calls(&[("call_1", "ui__send_form", "{}")])]);
    let output = agent.run(vec![Message::user("Send it.")], &ctx(), &|_| {}).await;
    let state = output.state.expect("the call waits");
    let (agent, _) = world.agent(vec![ScriptedTurn::openai_text("Not sent.")]);
    let output = agent
        .resume(state, Decisions::new().supply("call_1", json!({})), &ctx(), &|_| {})
        .await
        .unwrap();
    let error = output.done.records[0].error.as_ref().expect("refused");
    assert_eq!(error.code, ToolErrorCode::ApprovalDenied, "{}", error.message);
}

#[tokio::test]
async fn the_stored_format_is_pinned() {
    let world = World::new();
    let state = first(&world).await;
    let mut json = serde_json::to_value(&state).unwrap();
    // Wall-clock time, and the seal over it, differ from run to run.
    assert!(json["elapsed_ms"].is_u64());
    assert_eq!(json["seal"].as_str().unwrap().len(), 64);
    json["elapsed_ms"] = json!("[elapsed]");
    json["seal"] = json!("[seal]");
    insta::assert_json_snapshot!("run_state", json);
    // What is pinned reads back, and resumes.
    let (agent, _) = world.agent(vec![ScriptedTurn::openai_text("Closed.")]);
    agent
        .resume(stored(&state), Decisions::new().approve("call_1"), &ctx(), &|_| {})
        .await
        .unwrap();
    assert_eq!(world.runs(), 1);
}

#[tokio::test]
async fn the_approvals_example_runs_the_refund_once_over_http() {
    use examples::approvals::{Shop, post, serve};
    let dir =
        std::env::temp_dir().join(format!("tool-runtime-approvals-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let shop = Arc::new(Shop::new(&dir));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let server = tokio::spawn(serve(listener, Arc::clone(&shop)));
    let client = reqwest::Client::new();

    let (status, first) = post(&client, addr, "/chat", "Refund 1001.").await.unwrap();
    assert_eq!(status, 200);
    assert_eq!(first["stop"], json!({"kind": "pending", "calls": ["call_1"]}));
    assert_eq!(shop.refunds(), 0);
    let (status, second) = post(&client, addr, "/approve", "call_1").await.unwrap();
    assert_eq!((status, &second["answer"]), (200, &json!("Order 1001 is refunded.")));
    assert_eq!(shop.refunds(), 1);
    let (status, third) = post(&client, addr, "/approve", "call_1").await.unwrap();
    assert_eq!(status, 409);
    assert!(third["refused"].as_str().unwrap().contains("decided already"), "{third}");
    assert_eq!(shop.refunds(), 1);
    let (status, _) = post(&client, addr, "/refund", "call_1").await.unwrap();
    assert_eq!(status, 404);
    server.abort();
    std::fs::remove_dir_all(&dir).unwrap();
}

#[tokio::test]
async fn an_agent_without_a_ledger_refuses_to_resume() {
    let world = World::new();
    let state = first(&world).await;
    let (agent, _) = world.agent(vec![ScriptedTurn::openai_text("Closed.")]);
    // As the agent of a later request would be, had it not been given the shared ledger.
    let forgetful = Agent::new(Arc::new(ScriptedModel::new([])), keyless_runner(&world))
        .with_state_key(StateKey::new(*KEY));
    let refused =
        forgetful.resume(state.clone(), Decisions::new().approve("call_1"), &ctx(), &|_| {}).await;
    assert_eq!(refused.unwrap_err(), ResumeError::NoLedger);
    assert_eq!(world.runs(), 0);
    // Not spent: the agent with the ledger resumes it.
    agent.resume(state, Decisions::new().approve("call_1"), &ctx(), &|_| {}).await.unwrap();
    assert_eq!(world.runs(), 1);
}

/// Counts the before-call hook's calls of `tickets__close`; the hook adds 100 to the ticket
/// number each time it sees one (so a second look would change the arguments again).
fn renumbering(asked: &Arc<AtomicUsize>) -> BeforeCallFn {
    let asked = Arc::clone(asked);
    BeforeCallFn::new("renumber", move |call| {
        if call.tool.name() != "tickets__close" {
            return Ok(BeforeCallDecision::Allow);
        }
        asked.fetch_add(1, Ordering::SeqCst);
        let mut arguments = call.arguments().clone();
        arguments["number"] = json!(arguments["number"].as_u64().unwrap_or(0) + 100);
        Ok(BeforeCallDecision::Rewrite { arguments })
    })
}

#[tokio::test]
async fn a_rewriting_hook_sees_a_deferred_call_once_and_the_approval_runs_what_it_left() {
    let world = World::new();
    let asked = Arc::new(AtomicUsize::new(0));
    let turns =
        vec![ScriptedTurn::openai_calls(&[("call_1", "tickets__close", r#"{"number": 7}"#)])];
    let (agent, _) = world.agent_with(turns, |runner| runner.before_call(renumbering(&asked)));
    let output = agent.run(vec![Message::user("Close ticket 7.")], &ctx(), &|_| {}).await;
    let state = output.state.expect("the close waits");
    // What the person approves is what the hook left.
    let CallStatus::Pending { arguments, .. } = &state.calls()[0].status else {
        panic!("call_1 waits")
    };
    assert_eq!(arguments, &json!({"number": 107}));

    let (agent, _) = world.agent_with(vec![ScriptedTurn::openai_text("Closed.")], |runner| {
        runner.before_call(renumbering(&asked))
    });
    let resumed = agent
        .resume(stored(&state), Decisions::new().approve("call_1"), &ctx(), &|_| {})
        .await
        .unwrap();
    assert_eq!(resumed.done.records[0].error, None);
    assert_eq!(resumed.done.records[0].result, Some(json!({"closed": 107})));
    assert_eq!(*world.seen.lock().unwrap(), [json!({"number": 107})]);
    assert_eq!(asked.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn a_before_call_hook_can_defer_a_call_that_resume_then_runs() {
    let world = World::new();
    let asked = Arc::new(AtomicUsize::new(0));
    let hook = {
        let asked = Arc::clone(&asked);
        // Reads of ticket 13 wait for a person; the tool's effect needs no approval.
        BeforeCallFn::new("ticket_13", move |call| {
            asked.fetch_add(1, Ordering::SeqCst);
            Ok(if call.arguments()["number"] == 13 {
                BeforeCallDecision::Pending { reason: "ticket 13 needs a manager".into() }
            } else {
                BeforeCallDecision::Allow
            })
        })
    };
    let turns = vec![ScriptedTurn::openai_calls(&[
        ("call_1", "tickets__read", r#"{"number": 13}"#),
        ("call_2", "tickets__read", r#"{"number": 12}"#),
    ])];
    let (agent, _) = world.agent_with(turns, |runner| runner.before_call(hook.clone()));
    let (seen, on_event) = events();
    let output = agent.run(vec![Message::user("Read 13 and 12.")], &ctx(), &on_event).await;
    assert_eq!(output.done.stop, StopReason::Pending { calls: vec!["call_1".into()] });
    assert!(seen.lock().unwrap().contains(&AgentEvent::ToolCallPending {
        id: "call_1".into(),
        name: "tickets__read".into(),
        waits_for: WaitsFor::Approval
    }));
    let state = output.state.unwrap();
    let CallStatus::Pending { arguments, .. } = &state.calls()[0].status else {
        panic!("call_1 waits")
    };
    assert_eq!(arguments, &json!({"number": 13}));
    assert!(matches!(state.calls()[1].status, CallStatus::Ran { .. }));
    assert_eq!(asked.load(Ordering::SeqCst), 2);

    let (agent, _) = world.agent_with(vec![ScriptedTurn::openai_text("Read.")], |runner| {
        runner.before_call(hook.clone())
    });
    let resumed = agent
        .resume(stored(&state), Decisions::new().approve("call_1"), &ctx(), &|_| {})
        .await
        .unwrap();
    assert_eq!(resumed.done.stop, StopReason::Answered);
    let record = &resumed.done.records[0];
    assert_eq!((record.tool_name.as_str(), record.error.as_ref()), ("tickets__read", None));
    assert_eq!(record.result, Some(json!("ticket 13")), "the approved read ran");
    // The hook was not asked again: the decision stands.
    assert_eq!(asked.load(Ordering::SeqCst), 2);
}

#[tokio::test]
async fn after_call_hooks_see_calls_denied_or_supplied_on_resume() {
    let world = World::new();
    let saw = Arc::new(Mutex::new(Vec::new()));
    let hook = {
        let saw = Arc::clone(&saw);
        AfterCallFn::new("audit", move |call| {
            let outcome = match call.outcome {
                Ok(output) => output.structured().cloned().unwrap_or(Value::Null),
                Err(error) => json!(error.code.as_str()),
            };
            saw.lock().unwrap().push((call.tool_call_id.to_owned(), outcome));
            Ok(AfterCallDecision::Keep)
        })
    };
    let turns = vec![ScriptedTurn::openai_calls(&[
        ("call_1", "tickets__close", r#"{"number": 7}"#),
        ("call_2", "ui__pick_date", r#"{"prompt": "When?"}"#),
    ])];
    let (agent, _) = world.agent_with(turns, |runner| runner.after_call(hook.clone()));
    let state = agent.run(vec![Message::user("Close 7 on a date.")], &ctx(), &|_| {}).await.state;
    assert!(saw.lock().unwrap().is_empty(), "waiting calls have no outcome yet");

    let (agent, _) = world.agent_with(vec![ScriptedTurn::openai_text("Done.")], |runner| {
        runner.after_call(hook.clone())
    });
    let decisions = Decisions::new()
        .deny("call_1", "not today")
        .supply("call_2", json!({"date": "2026-12-01", "note": "kept from the model"}));
    agent.resume(state.unwrap(), decisions, &ctx(), &|_| {}).await.unwrap();
    assert_eq!(
        *saw.lock().unwrap(),
        [
            ("call_1".to_owned(), json!("approval_denied")),
            ("call_2".to_owned(), json!({"date": "2026-12-01"})),
        ]
    );
}
