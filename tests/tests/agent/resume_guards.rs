//! A call decided on resume skips only the before-call hooks it already passed, with the same
//! arguments: edited arguments pass them again, and so does every call the decided tool makes
//! through `ToolCalls`. An approver's edit on `exec` passes them too.

use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use serde_json::json;
use tool_runtime::agent::deferred::{Decisions, RunState, StateKey};
use tool_runtime::agent::{Agent, Message, ScriptedModel, ScriptedTurn, StopReason};
use tool_runtime::catalog::ToolCatalog;
use tool_runtime::policy::ToolPolicy;
use tool_runtime::prelude::*;
use tool_runtime::runner::{
    ApprovalDecision, ApprovalRequest, Approver, BeforeCallDecision, BeforeCallFn, DeferAll,
    ToolCalls, ToolRunner,
};
use tool_runtime::runtime::{CallOutcome, DynamicTool, ToolErrorCode};
use tool_runtime::store::InMemoryStore;
use tool_tests::fixtures::context;

const KEY: &[u8; 32] = b"an application secret of 32 byte";

/// Plan a trip: reserves its hotel, in `stay` or else in `city`, through the runner (a child
/// call), so the child's arguments can be ones the hook refuses while the trip's are not.
#[tool(name = "trip__plan", effect = state_change, redact = ["plan"], capabilities = [ToolCalls])]
struct Plan {
    city: String,
    stay: Option<String>,
}

#[derive(Serialize, ToolSchema)]
struct Planned {
    plan: String,
}

impl Tool for Plan {
    type Output = Planned;
    async fn run(
        self,
        _: &ToolInvocationContext,
        caps: &ToolCapabilities,
    ) -> Result<Planned, ToolError> {
        let stay = self.stay.as_deref().unwrap_or(&self.city);
        let child = caps.get::<ToolCalls>()?.call("hotel__reserve", json!({"city": stay})).await;
        match child.outcome {
            CallOutcome::Done(_) => Ok(Planned { plan: format!("trip to {}", self.city) }),
            CallOutcome::Failed(error) => Err(error.into()),
            _ => Err(ToolError::new("the reservation waits")),
        }
    }
}

/// What the tools did and what the hook saw, shared by every agent of a test.
#[derive(Default)]
struct Seen {
    /// Reservations made (the child's side effect).
    reserved: Mutex<Vec<String>>,
    /// `(tool, city)` for each call the before-call hook was asked about.
    asked: Mutex<Vec<(String, String)>>,
}

impl Seen {
    fn asked(&self) -> Vec<(String, String)> {
        self.asked.lock().unwrap().clone()
    }
}

/// The trip and hotel tools; a before-call hook that blocks any call for Oslo; approval for
/// state changes, asked of `approver`.
fn runner(seen: &Arc<Seen>, approver: Arc<dyn Approver>) -> ToolRunner {
    let reserved = Arc::clone(seen);
    let reserve = DynamicTool::builder(
        "hotel__reserve",
        "Reserve a hotel room.",
        json!({"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"], "additionalProperties": false}),
    )
    .effect(ToolEffect::ReadOnly)
    .redact_all()
    .build(move |args, _, _| {
        let city = args["city"].as_str().unwrap_or_default().to_owned();
        reserved.reserved.lock().unwrap().push(city.clone());
        async move { Ok(json!(format!("room in {city}"))) }
    })
    .unwrap();
    let catalog = ToolCatalog::builder()
        .register::<Plan>()
        .register_dynamic(reserve)
        .capability(ToolCalls::granted())
        .build()
        .unwrap();
    let asked = Arc::clone(seen);
    let no_oslo = BeforeCallFn::new("no_oslo", move |call| {
        let city = call.arguments()["city"].as_str().unwrap_or_default().to_owned();
        asked.asked.lock().unwrap().push((call.tool.name().to_owned(), city.clone()));
        Ok(if city == "Oslo" {
            BeforeCallDecision::Block { reason: "no trips to Oslo".into() }
        } else {
            BeforeCallDecision::Allow
        })
    });
    let policy = ToolPolicy {
        require_approval: vec![ToolEffect::StateChange],
        ..ToolPolicy::allowing(["trip__*", "hotel__*"])
    };
    ToolRunner::builder(catalog).policy(policy).approver(approver).before_call(no_oslo).build()
}

fn agent(seen: &Arc<Seen>, ledger: &Arc<InMemoryStore>, turns: Vec<ScriptedTurn>) -> Agent {
    let model = Arc::new(ScriptedModel::new(turns));
    Agent::new(model, runner(seen, Arc::new(DeferAll)))
        .with_state_key(StateKey::new(*KEY))
        .with_store(ledger.clone())
}

fn ctx() -> ToolInvocationContext {
    context("run-1", "user-1", "acme")
}

/// A run whose model plans a trip to `city`: it waits for approval.
async fn waiting_for(seen: &Arc<Seen>, ledger: &Arc<InMemoryStore>, city: &str) -> RunState {
    let arguments = json!({"city": city}).to_string();
    let turns = vec![ScriptedTurn::openai_calls(&[("call_1", "trip__plan", &arguments)])];
    let output =
        agent(seen, ledger, turns).run(vec![Message::user("Plan it.")], &ctx(), &|_| {}).await;
    assert_eq!(output.done.stop, StopReason::Waiting { calls: vec!["call_1".into()] });
    output.state.expect("the plan waits for approval")
}

fn error_of(output: &tool_runtime::agent::AgentOutput, tool: &str) -> Option<ToolErrorCode> {
    let record = output.done.records.iter().find(|record| record.tool_name == tool);
    record.and_then(|record| record.error.as_ref().map(|error| error.code))
}

#[tokio::test]
async fn a_call_made_by_a_call_approved_on_resume_passes_the_before_call_hooks() {
    let (seen, ledger) = (Arc::new(Seen::default()), Arc::new(InMemoryStore::new()));
    let state = waiting_for(&seen, &ledger, "Bergen").await;
    assert_eq!(seen.asked(), [("trip__plan".to_owned(), "Bergen".to_owned())]);
    let turns = vec![ScriptedTurn::openai_text("Planned.")];
    let resumed = agent(&seen, &ledger, turns)
        .resume(state, Decisions::new().approve("call_1"), &ctx(), &|_| {})
        .await
        .unwrap();
    assert_eq!(error_of(&resumed, "trip__plan"), None);
    assert_eq!(*seen.reserved.lock().unwrap(), ["Bergen"]);
    // The decided call itself was not asked about again; the reservation it made was.
    assert_eq!(
        seen.asked(),
        [
            ("trip__plan".to_owned(), "Bergen".to_owned()),
            ("hotel__reserve".to_owned(), "Bergen".to_owned()),
        ]
    );
}

#[tokio::test]
async fn a_call_the_hooks_refuse_made_by_a_call_approved_on_resume_is_refused() {
    let (seen, ledger) = (Arc::new(Seen::default()), Arc::new(InMemoryStore::new()));
    let turns = vec![ScriptedTurn::openai_calls(&[(
        "call_1",
        "trip__plan",
        r#"{"city": "Bergen", "stay": "Oslo"}"#,
    )])];
    let output =
        agent(&seen, &ledger, turns).run(vec![Message::user("Go.")], &ctx(), &|_| {}).await;
    let state = output.state.expect("the plan waits for approval");
    let resumed = agent(&seen, &ledger, vec![ScriptedTurn::openai_text("Done.")])
        .resume(state, Decisions::new().approve("call_1"), &ctx(), &|_| {})
        .await
        .unwrap();
    // The reservation in Oslo was refused by the hook, so nothing was reserved and the
    // plan failed with the child's refusal (passed on with `?`, as `execution`).
    assert!(seen.reserved.lock().unwrap().is_empty(), "a child call ran unguarded");
    assert!(seen.asked().contains(&("hotel__reserve".to_owned(), "Oslo".to_owned())));
    let record = resumed.done.records.iter().find(|record| record.tool_name == "trip__plan");
    let error = record.and_then(|record| record.error.as_ref()).expect("the plan failed");
    assert_eq!(error.code, ToolErrorCode::Execution);
    assert!(error.message.contains("hook_blocked"), "{error}");
}

#[tokio::test]
async fn edited_arguments_on_resume_pass_the_before_call_hooks() {
    let (seen, ledger) = (Arc::new(Seen::default()), Arc::new(InMemoryStore::new()));
    let state = waiting_for(&seen, &ledger, "Bergen").await;
    let turns = vec![ScriptedTurn::openai_text("Planned.")];
    let resumed = agent(&seen, &ledger, turns)
        .resume(state, Decisions::new().edit("call_1", json!({"city": "Oslo"})), &ctx(), &|_| {})
        .await
        .unwrap();
    assert_eq!(error_of(&resumed, "trip__plan"), Some(ToolErrorCode::HookBlocked));
    assert!(seen.reserved.lock().unwrap().is_empty());
    assert_eq!(seen.asked().last(), Some(&("trip__plan".to_owned(), "Oslo".to_owned())));
}

/// Approves every call, moving it to Oslo.
#[derive(Debug)]
struct ToOslo;

#[async_trait]
impl Approver for ToOslo {
    async fn review(&self, request: &ApprovalRequest<'_>) -> ApprovalDecision {
        request.edit(json!({"city": "Oslo"}))
    }
}

#[tokio::test]
async fn arguments_an_approver_edits_pass_the_before_call_hooks() {
    let seen = Arc::new(Seen::default());
    let runner = runner(&seen, Arc::new(ToOslo));
    let ctx = ctx().with_tool_call_id("call_1");
    let result = runner.exec("trip__plan", r#"{"city": "Bergen"}"#, &ctx).await;
    assert_eq!(result.error_code(), Some(ToolErrorCode::HookBlocked), "{:?}", result.value());
    assert!(seen.reserved.lock().unwrap().is_empty());
    assert_eq!(
        seen.asked(),
        [
            ("trip__plan".to_owned(), "Bergen".to_owned()),
            ("trip__plan".to_owned(), "Oslo".to_owned())
        ]
    );
}
