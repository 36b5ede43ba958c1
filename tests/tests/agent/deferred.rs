//! Deferred decisions, resumable runs and client tools.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use serde_json::{Value, json};
use tool_runtime::adapters::ToolOutcome;
use tool_runtime::agent::deferred::{
    CallStatus, Decisions, ResumeError, RunState, StateKey, WaitsFor,
};
use tool_runtime::agent::{Agent, AgentEvent, Message, ScriptedModel, ScriptedTurn, StopReason};
use tool_runtime::catalog::ToolCatalog;
use tool_runtime::policy::ToolPolicy;
use tool_runtime::prelude::*;
use tool_runtime::runner::DeferAll;
use tool_runtime::runner::{
    AfterCallDecision, AfterCallFn, BeforeCallDecision, BeforeCallFn, ToolCalls, ToolRunner,
    ToolRunnerBuilder,
};
use tool_runtime::runtime::{
    CallOutcome, ClientTool, CollectingSink, DynamicTool, ToolErrorCode, ToolEvent,
};
use tool_runtime::store::InMemoryStore;
use tool_tests::fixtures::context;

const KEY: &[u8; 32] = b"an application secret of 32 byte";

fn close_schema() -> Value {
    json!({"type": "object", "properties": {"number": {"type": "integer", "minimum": 1}}, "required": ["number"], "additionalProperties": false})
}

/// Ask the user for a date.
///
/// A client tool declared with the attribute: its client runs it, and the results it supplies
/// are checked against `Picked` and redacted to `date` as a `run`'s would be.
#[tool(name = "ui__pick_date", effect = read_only, redact = ["date"], client = Picked)]
struct PickDate {
    prompt: String,
}

#[derive(Serialize, ToolSchema)]
struct Picked {
    date: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    note: Option<String>,
}

/// `tickets__close` (state-changing, counted), `tickets__read` (read-only), and the client
/// tools `ui__pick_date` (declared with `#[tool]`) and `ui__send_form` (a `ClientTool`).
fn catalog(runs: &Arc<AtomicUsize>, seen: &Arc<Mutex<Vec<Value>>>) -> ToolCatalog {
    let (runs, seen) = (Arc::clone(runs), Arc::clone(seen));
    let close = DynamicTool::builder("tickets__close", "Close a ticket.", close_schema()).allow_open_schema()
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
        .allow_open_schema()
        .effect(ToolEffect::ReadOnly)
        .redact_all()
        .build(|args, _, _| async move { Ok(json!(format!("ticket {}", args["number"]))) })
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
        .register::<PickDate>()
        .register_bound(Arc::new(send), "the form sender".into())
        .build()
        .unwrap()
}

struct World {
    runs: Arc<AtomicUsize>,
    seen: Arc<Mutex<Vec<Value>>>,
    sink: CollectingSink,
    /// Shared by every agent of the world, as by the processes of one application.
    store: Arc<InMemoryStore>,
}

impl World {
    fn new() -> Self {
        Self {
            runs: Arc::default(),
            seen: Arc::default(),
            sink: CollectingSink::new(),
            store: Arc::default(),
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
            .with_store(self.store.clone());
        (agent, model)
    }

    fn runs(&self) -> usize {
        self.runs.load(Ordering::SeqCst)
    }
}

fn ctx() -> ToolInvocationContext {
    context("run-1", "user-1", "acme")
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
    assert_eq!(output.done.stop, StopReason::Waiting { calls: vec!["call_1".into()] });
    assert_eq!(world.runs(), 0);
    let seen = seen.lock().unwrap();
    assert!(seen.contains(&AgentEvent::ApprovalRequired {
        id: "call_1".into(),
        name: "tickets__close".into()
    }));
    assert!(
        seen.iter().any(|event| matches!(event, AgentEvent::ToolCallWaiting { id, name, waiting }
        if id == "call_1" && name == "tickets__close" && waiting.waits_for == WaitsFor::Approval))
    );
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
    let pending: Vec<_> = state.waiting().map(|call| call.id.as_str()).collect();
    assert_eq!(pending, ["call_1"]);
    assert!(matches!(state.calls()[1].status, CallStatus::Ran { .. }));
    let events = world.sink.events();
    assert!(events.iter().any(|event| matches!(event, ToolEvent::ToolCallWaiting { tool_call_id, .. } if tool_call_id == "call_1")));
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
    // Decided, then run (the tool starts only now), then answered.
    let call_1: Vec<&AgentEvent> = seen
        .iter()
        .filter(|event| match event {
            AgentEvent::CallDecided { id, .. }
            | AgentEvent::ToolCallRunning { id, .. }
            | AgentEvent::ToolCallResult { id, .. } => id == "call_1",
            _ => false,
        })
        .collect();
    assert!(
        matches!(
            call_1[..],
            [
                AgentEvent::CallDecided { decision: "approved", .. },
                AgentEvent::ToolCallRunning { arguments: None, .. },
                AgentEvent::ToolCallResult { .. },
            ]
        ),
        "{call_1:?}"
    );

    // The same state again: refused, nothing runs.
    let again =
        agent.resume(state.clone(), Decisions::new().approve("call_1"), &ctx(), &|_| {}).await;
    assert_eq!(again.unwrap_err(), ResumeError::AlreadyResumed { call_ids: vec!["call_1".into()] });
    assert_eq!(world.runs(), 1);
}

#[tokio::test]
async fn a_shared_store_refuses_a_replay_in_another_agent() {
    let world = World::new();
    let state = first(&world).await;
    // Two agents of later requests, sharing the world's store.
    let (one, _) = world.agent(vec![ScriptedTurn::openai_text("Closed.")]);
    let (two, _) = world.agent(vec![ScriptedTurn::openai_text("Closed.")]);
    one.resume(state.clone(), Decisions::new().approve("call_1"), &ctx(), &|_| {}).await.unwrap();
    let replay = two.resume(state, Decisions::new().approve("call_1"), &ctx(), &|_| {}).await;
    assert!(matches!(replay, Err(ResumeError::AlreadyResumed { .. })));
    assert_eq!(world.runs(), 1);
}

#[tokio::test]
async fn two_tenants_with_equal_run_and_call_ids_both_resume_through_one_store() {
    let world = World::new();
    let mut runs = Vec::new();
    for tenant in ["acme", "globex"] {
        let ctx = context("run-1", "user-1", tenant);
        let (agent, _) = world.agent(vec![ScriptedTurn::openai_calls(&[(
            "call_1",
            "tickets__close",
            r#"{"number": 7}"#,
        )])]);
        let output = agent.run(vec![Message::user("Close ticket 7.")], &ctx, &|_| {}).await;
        runs.push((ctx, output.state.expect("the call waits")));
    }
    for (ctx, state) in runs {
        let (agent, _) = world.agent(vec![ScriptedTurn::openai_text("Closed.")]);
        let resumed = agent.resume(state, Decisions::new().approve("call_1"), &ctx, &|_| {}).await;
        assert!(resumed.is_ok(), "{}: {:?}", ctx.tenant_id(), resumed.err());
    }
    assert_eq!(world.runs(), 2);
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
    let ToolOutcome::Failed(denied) = &results[0].1 else { panic!("{results:?}") };
    assert_eq!(
        (denied.code, denied.message.as_str()),
        (ToolErrorCode::ApprovalDenied, "the manager said no")
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
    assert_eq!(refused(unsealed, ctx()).await, ResumeError::Unsealed);

    let other_run = context("run-2", "user-1", "acme");
    assert_eq!(
        refused(state.clone(), other_run).await,
        ResumeError::OtherCaller { field: "run_id" }
    );
    let other_tenant = context("run-1", "user-1", "globex");
    assert_eq!(
        refused(state.clone(), other_tenant).await,
        ResumeError::OtherCaller { field: "tenant_id" }
    );

    let other_key = agent.clone().with_state_key(StateKey::new(b"another key".to_vec()));
    assert_eq!(
        other_key.resume(state.clone(), approve(), &ctx(), &|_| {}).await.unwrap_err(),
        ResumeError::UnknownKey { key_id: StateKey::new(*KEY).id().to_owned() }
    );
    // A state that names the agent's key with a seal made by another is forged.
    let resealed =
        tampered(&state, |json| json["key"] = json!(StateKey::new(b"another key".to_vec()).id()));
    assert_eq!(
        other_key.resume(resealed, approve(), &ctx(), &|_| {}).await.unwrap_err(),
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
        ResumeError::NotWaiting { call_ids: vec!["call_2".into(), "call_9".into()] }
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

/// A run state belongs to the actor it was made for: another actor of the same tenant, naming
/// the same run, is refused before anything runs, and the state stays good for its owner.
#[tokio::test]
async fn resuming_as_another_actor_is_refused_and_runs_nothing() {
    let world = World::new();
    let state = first(&world).await;
    let sink_before = world.sink.events().len();
    let (agent, model) = world.agent(vec![ScriptedTurn::openai_text("Closed.")]);
    let (seen, on_event) = events();
    let other_actor = context("run-1", "user-2", "acme");
    let refused = agent
        .resume(state.clone(), Decisions::new().approve("call_1"), &other_actor, &on_event)
        .await
        .unwrap_err();
    assert_eq!(refused, ResumeError::OtherCaller { field: "actor_id" });
    assert_eq!(world.runs(), 0, "the tool did not run");
    assert!(model.requests().is_empty(), "the model was not asked");
    assert!(seen.lock().unwrap().is_empty(), "no agent event");
    assert_eq!(world.sink.events().len(), sink_before, "no tool event");

    agent.resume(state, Decisions::new().approve("call_1"), &ctx(), &|_| {}).await.unwrap();
    assert_eq!(world.runs(), 1, "the refusal did not spend the decision");
}

fn keyless_runner(world: &World) -> ToolRunner {
    ToolRunner::builder(catalog(&world.runs, &world.seen)).build()
}

#[tokio::test]
async fn a_state_is_refused_after_the_tool_changed() {
    let world = World::new();
    let state = first(&world).await;
    let changed = DynamicTool::builder("tickets__close", "Close a ticket.", close_schema())
        .allow_open_schema()
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
        .with_store(world.store.clone());
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
        ("call_4", "tickets__close", r#"{"number": 10}"#),
        ("call_5", "ui__pick_date", r#"{"prompt": "When?"}"#),
    ])]);
    let output = agent.run(vec![Message::user("Close 7 to 10.")], &ctx(), &|_| {}).await;
    let state = output.state.unwrap();
    assert_eq!(state.waiting().count(), 5);

    let (agent, _) = world.agent(vec![ScriptedTurn::openai_text("7 and 11 closed, 8 not.")]);
    let decisions = Decisions::new()
        .approve("call_1")
        .deny("call_2", "no")
        .edit("call_4", json!({"number": 11}))
        .supply("call_5", json!({"date": "2026-12-01"}));
    let partial = agent.resume(stored(&state), decisions, &ctx(), &|_| {}).await.unwrap();
    assert_eq!(partial.done.stop, StopReason::Waiting { calls: vec!["call_3".into()] });
    assert_eq!(world.runs(), 2);
    let state = partial.state.unwrap();
    let statuses: Vec<&str> = state
        .calls()
        .iter()
        .map(|call| match call.status {
            CallStatus::Approved { .. } => "approved",
            CallStatus::Denied { .. } => "denied",
            CallStatus::Waiting { .. } => "waiting",
            CallStatus::Edited { .. } => "edited",
            CallStatus::Supplied { .. } => "supplied",
            _ => "other",
        })
        .collect();
    assert_eq!(statuses, ["approved", "denied", "waiting", "edited", "supplied"]);
    // Every status in its stored form.
    insta::assert_json_snapshot!(
        "run_state_decided_calls",
        serde_json::to_value(&state).unwrap()["calls"]
    );

    let done = agent
        .resume(stored(&state), Decisions::new().approve("call_3"), &ctx(), &|_| {})
        .await
        .unwrap();
    assert_eq!(done.done.stop, StopReason::Answered);
    assert_eq!(world.runs(), 3);
    assert_eq!(
        *world.seen.lock().unwrap(),
        [json!({"number": 7}), json!({"number": 11}), json!({"number": 9})]
    );
}

#[tokio::test]
async fn a_client_tool_waits_with_validated_arguments_and_its_result_is_checked_and_redacted() {
    let world = World::new();
    let (agent, _) = world.agent(vec![ScriptedTurn::openai_calls(&[
        ("call_1", "ui__pick_date", r#"{"prompt": "When?"}"#),
        ("call_2", "ui__pick_date", r#"{"prompt": 5}"#),
    ])]);
    let output = agent.run(vec![Message::user("Book it.")], &ctx(), &|_| {}).await;
    assert_eq!(output.done.stop, StopReason::Waiting { calls: vec!["call_1".into()] });
    let state = output.state.unwrap();
    let CallStatus::Waiting { waits_for, arguments, .. } = &state.calls()[0].status else {
        panic!()
    };
    assert_eq!((*waits_for, arguments), (WaitsFor::Client, &json!({"prompt": "When?"})));
    // Invalid arguments never wait: the model gets the validation error.
    let CallStatus::Ran { result } = &state.calls()[1].status else { panic!() };
    assert!(
        matches!(&result.outcome, ToolOutcome::Failed(error) if error.code == ToolErrorCode::Validation)
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
    let ToolOutcome::Done(sent) = &results[0].1 else { panic!("{results:?}") };
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
        matches!(&last_results(&model)[0].1, ToolOutcome::Failed(error) if error.code == ToolErrorCode::OutputValidation)
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
async fn an_agent_without_a_store_refuses_to_resume() {
    let world = World::new();
    let state = first(&world).await;
    let (agent, _) = world.agent(vec![ScriptedTurn::openai_text("Closed.")]);
    // As the agent of a later request would be, had it not been given the shared store.
    let forgetful = Agent::new(Arc::new(ScriptedModel::new([])), keyless_runner(&world))
        .with_state_key(StateKey::new(*KEY));
    let refused =
        forgetful.resume(state.clone(), Decisions::new().approve("call_1"), &ctx(), &|_| {}).await;
    assert_eq!(refused.unwrap_err(), ResumeError::NoStore);
    assert_eq!(world.runs(), 0);
    // Not spent: the agent with the store resumes it.
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
    let CallStatus::Waiting { arguments, .. } = &state.calls()[0].status else {
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
    assert_eq!(output.done.stop, StopReason::Waiting { calls: vec!["call_1".into()] });
    assert!(seen.lock().unwrap().iter().any(
        |event| matches!(event, AgentEvent::ToolCallWaiting { id, name, waiting }
        if id == "call_1" && name == "tickets__read" && waiting.waits_for == WaitsFor::Approval
            && waiting.message == "ticket 13 needs a manager")
    ));
    let state = output.state.unwrap();
    let CallStatus::Waiting { arguments, .. } = &state.calls()[0].status else {
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

/// Questions to the user: in the agent loop an elicitation is a deferred decision.
mod questions {
    use super::*;
    use tool_runtime::agent::ChatModelSampler;
    use tool_runtime::agent::deferred::CallDecision;
    use tool_runtime::runtime::{
        Answered, Capability, ElicitAnswer, ElicitRequest, ElicitResponse, Interact,
    };

    /// How many rooms, asked of the user.
    #[derive(Serialize, Deserialize, ToolSchema)]
    struct Rooms {
        /// Rooms to book.
        rooms: u8,
    }

    /// Whether breakfast is wanted.
    #[derive(Serialize, Deserialize, ToolSchema)]
    struct Breakfast {
        /// Yes or no.
        breakfast: bool,
    }

    /// Book a hotel, asking the user how many rooms and (for more than one) about breakfast.
    #[tool(name = "hotel__book", effect = state_change, redact = ["booked"], capabilities = [Interact, Bookings])]
    struct Book {
        city: String,
    }

    #[derive(Serialize, ToolSchema)]
    struct Booked {
        booked: String,
    }

    /// Bookings made, by every agent of one test (the side effect that must happen once): each
    /// test binds its own to its catalogs.
    #[derive(Default)]
    struct Bookings(Mutex<Vec<String>>);

    impl Capability for Bookings {
        const NAME: &'static str = "bookings";
    }

    impl Bookings {
        fn of(&self, city: &str) -> Vec<String> {
            self.0.lock().unwrap().iter().filter(|b| b.contains(city)).cloned().collect()
        }
    }

    impl Tool for Book {
        type Output = Booked;
        async fn run(
            self,
            _: &ToolInvocationContext,
            caps: &ToolCapabilities,
        ) -> Result<Booked, ToolError> {
            let interact = caps.get::<Interact>()?;
            let asked = interact.elicit::<Rooms>(format!("How many rooms in {}?", self.city));
            let rooms = match asked.await? {
                ElicitAnswer::Accept(Rooms { rooms }) => rooms,
                ElicitAnswer::Decline | ElicitAnswer::Cancel => {
                    return Ok(Booked { booked: "nothing".into() });
                }
            };
            let breakfast = if rooms > 1 {
                let answer = interact.elicit::<Breakfast>("Breakfast for everyone?").await?;
                matches!(answer, ElicitAnswer::Accept(Breakfast { breakfast: true }))
            } else {
                false
            };
            // The side effect comes after every question.
            let booked = format!("{rooms} in {} (breakfast: {breakfast})", self.city);
            caps.get::<Bookings>()?.0.lock().unwrap().push(booked.clone());
            Ok(Booked { booked })
        }
    }

    /// An agent over `hotel__book` (approval needed when `approvals`, deferred) and the
    /// ticket tools, sharing `ledger`.
    fn hotel_agent(
        turns: Vec<ScriptedTurn>,
        ledger: &Arc<InMemoryStore>,
        sink: &CollectingSink,
        bookings: &Arc<Bookings>,
        approvals: bool,
    ) -> (Agent, Arc<ScriptedModel>) {
        let model = Arc::new(ScriptedModel::new(turns));
        let model_for_tools: Arc<dyn tool_runtime::agent::ChatModel> = model.clone();
        let catalog = ToolCatalog::builder()
            .register::<Book>()
            .capability(Interact::new(ChatModelSampler::new(model_for_tools)))
            .shared_capability(Arc::clone(bookings))
            .build()
            .unwrap();
        let require_approval = if approvals { vec![ToolEffect::StateChange] } else { vec![] };
        let policy = ToolPolicy { require_approval, ..ToolPolicy::allowing(["hotel__*"]) };
        let runner = ToolRunner::builder(catalog)
            .policy(policy)
            .approver(Arc::new(DeferAll))
            .event_sink(sink.clone())
            .build();
        let agent = Agent::new(model.clone(), runner)
            .with_state_key(StateKey::new(*KEY))
            .with_store(ledger.clone());
        (agent, model)
    }

    fn question_of(state: &RunState) -> (WaitsFor, ElicitRequest, Vec<Answered>) {
        let waiting: Vec<_> = state.waiting().collect();
        assert_eq!(waiting.len(), 1, "{waiting:?}");
        let CallStatus::Waiting { waits_for, question, answered, .. } = &waiting[0].status else {
            unreachable!()
        };
        (*waits_for, question.clone().expect("a question"), answered.clone())
    }

    fn kinds(sink: &CollectingSink) -> Vec<&'static str> {
        sink.events()
            .iter()
            .map(|event| match event {
                ToolEvent::ToolCallStart { .. } => "start",
                ToolEvent::ToolCallWaiting { .. } => "waiting",
                ToolEvent::ToolCallResult { .. } => "result",
                _ => "other",
            })
            .collect()
    }

    fn accept(content: Value) -> ElicitResponse {
        ElicitResponse::Accept(content)
    }

    #[tokio::test]
    async fn a_question_waits_and_the_answer_runs_the_call_once() {
        let (ledger, sink) = (Arc::new(InMemoryStore::new()), CollectingSink::new());
        let bookings = Arc::new(Bookings::default());
        let call = [("call_1", "hotel__book", r#"{"city": "Oslo"}"#)];
        let (agent, _) =
            hotel_agent(vec![ScriptedTurn::openai_calls(&call)], &ledger, &sink, &bookings, false);
        let (seen, on_event) = events();
        let output = agent.run(vec![Message::user("Book Oslo.")], &ctx(), &on_event).await;
        assert_eq!(output.done.stop, StopReason::Waiting { calls: vec!["call_1".into()] });
        assert!(output.done.records.is_empty(), "a waiting call has no record yet");
        assert!(seen.lock().unwrap().iter().any(|event| matches!(event, AgentEvent::ToolCallWaiting { id, name, waiting }
            if id == "call_1" && name == "hotel__book" && waiting.waits_for == WaitsFor::Elicitation)));
        assert_eq!(kinds(&sink), ["start", "waiting"]);
        let state = output.state.unwrap();
        let (waits_for, question, answered) = question_of(&state);
        assert_eq!(waits_for, WaitsFor::Elicitation);
        assert_eq!(question.message, "How many rooms in Oslo?");
        assert_eq!(question.schema["properties"]["rooms"]["type"], "integer");
        assert!(answered.is_empty());
        assert!(bookings.of("Oslo").is_empty());

        // Only an answer (or a denial) fits a question.
        let (agent, _) =
            hotel_agent(vec![ScriptedTurn::openai_text("?")], &ledger, &sink, &bookings, false);
        let wrong =
            agent.resume(stored(&state), Decisions::new().approve("call_1"), &ctx(), &|_| {}).await;
        assert_eq!(
            wrong.unwrap_err(),
            ResumeError::InvalidDecision {
                call_id: "call_1".into(),
                waits_for: WaitsFor::Elicitation
            }
        );

        let decisions = Decisions::new().answer("call_1", accept(json!({"rooms": 1})));
        let (agent, _) = hotel_agent(
            vec![ScriptedTurn::openai_text("Booked.")],
            &ledger,
            &sink,
            &bookings,
            false,
        );
        let (seen, on_event) = events();
        let done =
            agent.resume(stored(&state), decisions.clone(), &ctx(), &on_event).await.unwrap();
        assert_eq!(done.done.stop, StopReason::Answered);
        assert_eq!(
            done.done.records[0].result,
            Some(json!({"booked": "1 in Oslo (breakfast: false)"}))
        );
        assert_eq!(bookings.of("Oslo").len(), 1);
        assert!(seen.lock().unwrap().contains(&AgentEvent::CallDecided {
            id: "call_1".into(),
            name: "hotel__book".into(),
            decision: "answered"
        }));
        // Each run of the call starts once and ends once.
        assert_eq!(kinds(&sink), ["start", "waiting", "start", "result"]);

        // The same state answered again runs nothing.
        let (agent, _) = hotel_agent(
            vec![ScriptedTurn::openai_text("Again.")],
            &ledger,
            &sink,
            &bookings,
            false,
        );
        let replay = agent.resume(stored(&state), decisions, &ctx(), &|_| {}).await;
        assert_eq!(
            replay.unwrap_err(),
            ResumeError::AlreadyResumed { call_ids: vec!["call_1".into()] }
        );
        assert_eq!(bookings.of("Oslo").len(), 1);
    }

    #[tokio::test]
    async fn a_second_question_waits_again_and_the_state_keeps_the_first_answer() {
        let (ledger, sink) = (Arc::new(InMemoryStore::new()), CollectingSink::new());
        let bookings = Arc::new(Bookings::default());
        let call = [("call_1", "hotel__book", r#"{"city": "Rome"}"#)];
        let (agent, _) =
            hotel_agent(vec![ScriptedTurn::openai_calls(&call)], &ledger, &sink, &bookings, false);
        let state =
            agent.run(vec![Message::user("Book Rome.")], &ctx(), &|_| {}).await.state.unwrap();

        let (agent, _) = hotel_agent(vec![], &ledger, &sink, &bookings, false);
        let decisions = Decisions::new().answer("call_1", accept(json!({"rooms": 3})));
        let (seen, on_event) = events();
        let second = agent.resume(stored(&state), decisions, &ctx(), &on_event).await.unwrap();
        assert_eq!(second.done.stop, StopReason::Waiting { calls: vec!["call_1".into()] });
        assert!(bookings.of("Rome").is_empty(), "nothing happens before the last answer");
        assert!(seen.lock().unwrap().iter().any(|event| matches!(event, AgentEvent::ToolCallWaiting { id, name, waiting }
            if id == "call_1" && name == "hotel__book" && waiting.waits_for == WaitsFor::Elicitation)));
        let state = second.state.unwrap();
        let (_, question, answered) = question_of(&state);
        assert_eq!(question.message, "Breakfast for everyone?");
        assert_eq!(answered.len(), 1);
        assert_eq!(answered[0].question.message, "How many rooms in Rome?");
        assert_eq!(answered[0].answer, accept(json!({"rooms": 3})));

        // The stored form of a call that waits on its second question.
        let mut json = serde_json::to_value(&state).unwrap();
        json["elapsed_ms"] = json!("[elapsed]");
        json["seal"] = json!("[seal]");
        insta::assert_json_snapshot!("run_state_waiting_on_a_question", json);

        let (agent, _) = hotel_agent(
            vec![ScriptedTurn::openai_text("Booked.")],
            &ledger,
            &sink,
            &bookings,
            false,
        );
        let decisions = Decisions::new().answer("call_1", accept(json!({"breakfast": true})));
        let done = agent.resume(stored(&state), decisions, &ctx(), &|_| {}).await.unwrap();
        assert_eq!(done.done.stop, StopReason::Answered);
        assert_eq!(bookings.of("Rome"), ["3 in Rome (breakfast: true)"]);
    }

    #[tokio::test]
    async fn an_approved_call_that_asks_waits_again_and_runs_under_its_approval() {
        let (ledger, sink) = (Arc::new(InMemoryStore::new()), CollectingSink::new());
        let bookings = Arc::new(Bookings::default());
        let call = [("call_1", "hotel__book", r#"{"city": "Lima"}"#)];
        let (agent, _) =
            hotel_agent(vec![ScriptedTurn::openai_calls(&call)], &ledger, &sink, &bookings, true);
        let state =
            agent.run(vec![Message::user("Book Lima.")], &ctx(), &|_| {}).await.state.unwrap();
        let CallStatus::Waiting { waits_for: WaitsFor::Approval, question: None, .. } =
            &state.calls()[0].status
        else {
            panic!("{:?}", state.calls())
        };

        let (agent, _) = hotel_agent(vec![], &ledger, &sink, &bookings, true);
        let asked =
            agent.resume(stored(&state), Decisions::new().approve("call_1"), &ctx(), &|_| {}).await;
        let state = asked.unwrap().state.unwrap();
        assert_eq!(question_of(&state).0, WaitsFor::Elicitation);
        let CallStatus::Waiting { approved: true, .. } = &state.calls()[0].status else {
            panic!("{:?}", state.calls())
        };

        // The approver (which defers everything) is not asked again: the approval stands.
        let (agent, _) = hotel_agent(
            vec![ScriptedTurn::openai_text("Booked.")],
            &ledger,
            &sink,
            &bookings,
            true,
        );
        let decisions = Decisions::new().answer("call_1", accept(json!({"rooms": 1})));
        let done = agent.resume(stored(&state), decisions, &ctx(), &|_| {}).await.unwrap();
        assert_eq!(done.done.stop, StopReason::Answered);
        assert_eq!(done.done.records[0].error, None);
        assert_eq!(bookings.of("Lima"), ["1 in Lima (breakfast: false)"]);
    }

    /// An answer is no approval: a call that asked without needing one is refused when policy
    /// has come to require approval meanwhile.
    #[tokio::test]
    async fn an_answer_does_not_stand_in_for_an_approval_policy_now_requires() {
        let (ledger, sink) = (Arc::new(InMemoryStore::new()), CollectingSink::new());
        let bookings = Arc::new(Bookings::default());
        let call = [("call_1", "hotel__book", r#"{"city": "Kyiv"}"#)];
        let (agent, _) =
            hotel_agent(vec![ScriptedTurn::openai_calls(&call)], &ledger, &sink, &bookings, false);
        let state =
            agent.run(vec![Message::user("Book Kyiv.")], &ctx(), &|_| {}).await.state.unwrap();
        let CallStatus::Waiting { approved: false, .. } = &state.calls()[0].status else {
            panic!("{:?}", state.calls())
        };

        let (agent, _) =
            hotel_agent(vec![ScriptedTurn::openai_text("No.")], &ledger, &sink, &bookings, true);
        let decisions = Decisions::new().answer("call_1", accept(json!({"rooms": 1})));
        let done = agent.resume(stored(&state), decisions, &ctx(), &|_| {}).await.unwrap();
        let error = done.done.records[0].error.as_ref().expect("refused");
        assert_eq!(error.code, ToolErrorCode::ApprovalDenied, "{}", error.message);
        assert!(error.message.contains("policy now requires approval"), "{}", error.message);
        assert!(bookings.of("Kyiv").is_empty());
    }

    #[tokio::test]
    async fn declined_denied_and_invalid_answers_reach_the_model() {
        let (ledger, sink) = (Arc::new(InMemoryStore::new()), CollectingSink::new());
        let bookings = Arc::new(Bookings::default());
        let calls = [
            ("call_1", "hotel__book", r#"{"city": "Baku"}"#),
            ("call_2", "hotel__book", r#"{"city": "Bern"}"#),
            ("call_3", "hotel__book", r#"{"city": "Bonn"}"#),
            ("call_4", "hotel__book", r#"{"city": "Bari"}"#),
        ];
        let (agent, _) =
            hotel_agent(vec![ScriptedTurn::openai_calls(&calls)], &ledger, &sink, &bookings, false);
        let state =
            agent.run(vec![Message::user("Book four.")], &ctx(), &|_| {}).await.state.unwrap();
        assert_eq!(state.waiting().count(), 4);

        let (agent, _) = hotel_agent(vec![], &ledger, &sink, &bookings, false);
        let decisions = Decisions::new()
            .answer("call_1", ElicitResponse::Decline)
            .deny("call_2", "the user closed the form")
            .decide("call_3", CallDecision::Answer { answer: accept(json!({"rooms": "two"})) });
        let partial = agent.resume(stored(&state), decisions, &ctx(), &|_| {}).await.unwrap();
        assert_eq!(partial.done.stop, StopReason::Waiting { calls: vec!["call_4".into()] });
        // Each decided call's result is kept, under the status of its decision.
        let state = partial.state.unwrap();
        let mut json = serde_json::to_value(&state).unwrap();
        json["elapsed_ms"] = json!("[elapsed]");
        json["seal"] = json!("[seal]");
        insta::assert_json_snapshot!("run_state_with_answered_questions", json["calls"]);

        let (agent, model) =
            hotel_agent(vec![ScriptedTurn::openai_text("None.")], &ledger, &sink, &bookings, false);
        let decisions = Decisions::new().deny("call_4", "later");
        let done = agent.resume(stored(&state), decisions, &ctx(), &|_| {}).await.unwrap();
        assert_eq!(done.done.stop, StopReason::Answered);
        let results = last_results(&model);
        let ToolOutcome::Done(declined) = &results[0].1 else { panic!("{results:?}") };
        assert_eq!(declined.structured(), Some(&json!({"booked": "nothing"})));
        assert!(
            matches!(&results[1].1, ToolOutcome::Failed(error) if error.code == ToolErrorCode::ApprovalDenied && error.message == "the user closed the form"),
            "{results:?}"
        );
        let ToolOutcome::Failed(error) = &results[2].1 else { panic!("{results:?}") };
        assert!(error.message.contains("does not match its schema"), "{error}");
        assert!(bookings.of("Baku").is_empty() && bookings.of("Bern").is_empty());
        assert!(bookings.of("Bonn").is_empty());
    }

    #[test]
    fn answers_are_decisions_in_mcp_form() {
        let decisions: Decisions = serde_json::from_value(json!({
            "call_1": {"decision": "answer", "answer": {"action": "accept", "content": {"rooms": 2}}},
            "call_2": {"decision": "answer", "answer": {"action": "cancel"}},
        }))
        .unwrap();
        assert_eq!(
            decisions,
            Decisions::new()
                .answer("call_1", accept(json!({"rooms": 2})))
                .answer("call_2", ElicitResponse::Cancel)
        );
        let unknown = json!({"call_1": {"decision": "answer", "answer": {"action": "maybe"}}});
        assert!(serde_json::from_value::<Decisions>(unknown).is_err());
    }

    /// A tool that books its trip's hotel through the runner (a child call); a refusal of the
    /// child fails it. Declared with `capabilities`.
    macro_rules! trip_tool {
        ($ty:ident, $name:literal, [$($capability:ident),*]) => {
            /// Plan a trip, booking its hotel.
            #[tool(name = $name, effect = state_change, redact = ["booked"], capabilities = [$($capability),*])]
            struct $ty {
                city: String,
            }

            impl Tool for $ty {
                type Output = Booked;
                async fn run(
                    self,
                    _: &ToolInvocationContext,
                    caps: &ToolCapabilities,
                ) -> Result<Booked, ToolError> {
                    let args = json!({ "city": self.city });
                    let child = caps.get::<ToolCalls>()?.call("hotel__book", args).await;
                    match child.outcome {
                        CallOutcome::Done(output) => {
                            let booked = output.structured().map(|value| value["booked"].clone());
                            Ok(Booked { booked: format!("trip: {}", booked.unwrap_or_default()) })
                        }
                        // The child's question, if it asked one, goes along with its error.
                        CallOutcome::Failed(error) => Err(error.into()),
                        _ => Err(ToolError::new("the child call waits")),
                    }
                }
            }
        };
    }

    // One that may ask the user itself, and one that may not.
    trip_tool!(Plan, "trip__plan", [ToolCalls, Interact]);
    trip_tool!(Quick, "trip__quick", [ToolCalls]);

    /// An agent over the trip tools and `hotel__book`, no approvals needed.
    fn trip_agent(
        turns: Vec<ScriptedTurn>,
        ledger: &Arc<InMemoryStore>,
        bookings: &Arc<Bookings>,
    ) -> Agent {
        let model = Arc::new(ScriptedModel::new(turns));
        let model_for_tools: Arc<dyn tool_runtime::agent::ChatModel> = model.clone();
        let catalog = ToolCatalog::builder()
            .register::<Book>()
            .register::<Plan>()
            .register::<Quick>()
            .capability(ToolCalls::granted())
            .capability(Interact::new(ChatModelSampler::new(model_for_tools)))
            .shared_capability(Arc::clone(bookings))
            .build()
            .unwrap();
        let policy = ToolPolicy {
            require_approval: vec![],
            ..ToolPolicy::allowing(["hotel__*", "trip__*"])
        };
        let runner = ToolRunner::builder(catalog).policy(policy).build();
        Agent::new(model, runner).with_state_key(StateKey::new(*KEY)).with_store(ledger.clone())
    }

    fn result_of(output: &tool_runtime::agent::AgentOutput, tool: &str) -> Option<Value> {
        let record = output.done.records.iter().find(|record| record.tool_name == tool);
        record.and_then(|record| record.result.clone())
    }

    #[tokio::test]
    async fn a_question_a_child_call_asks_waits_on_its_parent_that_may_ask() {
        let ledger = Arc::new(InMemoryStore::new());
        let bookings = Arc::new(Bookings::default());
        let call = [("call_1", "trip__plan", r#"{"city": "Bergen"}"#)];
        let agent = trip_agent(vec![ScriptedTurn::openai_calls(&call)], &ledger, &bookings);
        let output = agent.run(vec![Message::user("Plan Bergen.")], &ctx(), &|_| {}).await;
        assert_eq!(output.done.stop, StopReason::Waiting { calls: vec!["call_1".into()] });
        let state = output.state.unwrap();
        let (waits_for, question, _) = question_of(&state);
        assert_eq!(
            (waits_for, question.message.as_str()),
            (WaitsFor::Elicitation, "How many rooms in Bergen?")
        );
        assert_eq!(state.waiting().next().unwrap().tool_name, "trip__plan");
        assert!(bookings.of("Bergen").is_empty());

        // The parent runs again, calls its child again, and the child gets the answer.
        let decisions = Decisions::new().answer("call_1", accept(json!({"rooms": 1})));
        let agent = trip_agent(vec![ScriptedTurn::openai_text("Planned.")], &ledger, &bookings);
        let done = agent.resume(stored(&state), decisions, &ctx(), &|_| {}).await.unwrap();
        assert_eq!(done.done.stop, StopReason::Answered);
        assert_eq!(
            result_of(&done, "trip__plan"),
            Some(json!({"booked": "trip: \"1 in Bergen (breakfast: false)\""}))
        );
        assert_eq!(bookings.of("Bergen").len(), 1);
    }

    #[tokio::test]
    async fn a_question_a_child_call_asks_under_a_parent_that_cannot_ask_is_refused() {
        let ledger = Arc::new(InMemoryStore::new());
        let bookings = Arc::new(Bookings::default());
        let call = [("call_1", "trip__quick", r#"{"city": "Lima"}"#)];
        let turns = vec![ScriptedTurn::openai_calls(&call), ScriptedTurn::openai_text("Sorry.")];
        let output = trip_agent(turns, &ledger, &bookings)
            .run(vec![Message::user("Plan Lima.")], &ctx(), &|_| {})
            .await;
        // Nothing waits: the child could not, and its parent could not wait for it.
        assert_eq!(output.done.stop, StopReason::Answered);
        assert!(output.state.is_none());
        let record = output.done.records.iter().find(|r| r.tool_name == "trip__quick").unwrap();
        let error = record.error.as_ref().unwrap();
        assert!(
            error.message.starts_with("approval_denied: a call made by another tool cannot wait"),
            "{error:?}"
        );
        assert!(bookings.of("Lima").is_empty());
    }
}
