//! The import side of MCP 2026-07-28: an imported server's input-required rounds and tasks.
//! The server is this crate's own (`rounds::serve`: refunds wait for approval, `shop__wait` is
//! served as a task), imported over Streamable HTTP. Its approval form reaches who answers the
//! importing call's questions: a UI bound for the call, or the agent loop's user, whose run
//! waits on it and resumes with the answer; the refund runs once. A task is followed to its
//! result.

use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};

use serde_json::json;
use tool_runtime::agent::deferred::{Decisions, StateKey};
use tool_runtime::agent::{Agent, Message, ScriptedModel, ScriptedTurn, StopReason};
use tool_runtime::catalog::ToolCatalog;
use tool_runtime::mcp::{McpImportOptions, McpToolSource, ServerName};
use tool_runtime::policy::ToolPolicy;
use tool_runtime::runner::ToolRunner;
use tool_runtime::runtime::{
    Completion, ElicitRequest, ElicitResponse, Interact, InteractError, InteractFuture, Interactor,
    SampleRequest,
};
use tool_runtime::store::InMemoryStore;
use tool_tests::fixtures::context;

use super::rounds::serve_with;

const REFUND: &str = "mcp__shop__shop__refund";
const WAIT: &str = "mcp__shop__shop__wait";

/// A runner over the shop's tools, imported from `url`. The catalog binds `Interact` (with no
/// backend of its own), so that the agent loop asks its user what the server asks.
async fn importing(url: &str) -> ToolRunner {
    let options = McpImportOptions::new().redact(REFUND, ["refunded"]);
    let name = ServerName::new("shop").unwrap();
    let source = McpToolSource::connect_http(name, url, options).await.unwrap();
    let catalog = ToolCatalog::builder()
        .source(Arc::new(source))
        .capability(Interact::unavailable())
        .build()
        .unwrap();
    // The server asks for the approval; the importing side requires none of its own.
    let policy = format!(r#"{{"allowed_tools": ["{REFUND}", "{WAIT}"], "require_approval": []}}"#);
    ToolRunner::builder(catalog).policy(ToolPolicy::from_json(&policy).unwrap()).build()
}

/// A user at a screen who approves what they are asked, and remembers the questions.
#[derive(Debug, Default)]
struct Approving(Mutex<Vec<ElicitRequest>>);

impl Interactor for Approving {
    fn elicit(&self, request: ElicitRequest) -> InteractFuture<'_, ElicitResponse> {
        self.0.lock().unwrap().push(request);
        Box::pin(async { Ok(ElicitResponse::Accept(json!({"approve": true}))) })
    }

    fn sample(&self, _: SampleRequest) -> InteractFuture<'_, Completion> {
        Box::pin(async { Err(InteractError::Unavailable("no model".into())) })
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_imported_servers_approval_form_reaches_the_calls_user_and_the_refund_runs_once() {
    let served = serve_with(None).await;
    let runner = importing(&served.url).await;
    let user = Arc::new(Approving::default());
    let ctx = context("run-1", "ana", "acme").with_interactor(user.clone());
    let result = runner.exec(REFUND, json!({"order": "A-17", "cents": 500}), &ctx).await;
    assert_eq!(result.value(), Some(&json!({"refunded": 500})), "{result:?}");
    let asked = user.0.lock().unwrap().clone();
    assert_eq!(asked.len(), 1);
    assert_eq!(asked[0].key.as_deref(), Some("approval"));
    assert!(asked[0].message.contains("\"cents\": 500"), "{}", asked[0].message);
    assert_eq!(served.refunds.0.load(Ordering::SeqCst), 1);

    // With nothing to answer the question, the call fails saying so, and nothing runs.
    let alone = context("run-2", "ana", "acme");
    let result = runner.exec(REFUND, json!({"order": "A-18", "cents": 5}), &alone).await;
    let error = result.error().unwrap();
    assert!(error.message.contains("nothing here answers"), "{}", error.message);
    assert_eq!(served.refunds.0.load(Ordering::SeqCst), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn in_the_agent_loop_an_imported_approval_makes_the_run_wait_and_the_answer_resumes_it() {
    let served = serve_with(None).await;
    let runner = importing(&served.url).await;
    let store = Arc::new(InMemoryStore::new());
    let key = StateKey::new(*b"an agent's state key, 32 bytes!!");
    let agent = |turns: Vec<ScriptedTurn>| {
        Agent::new(Arc::new(ScriptedModel::new(turns)), runner.clone())
            .with_state_key(key.clone())
            .with_store(store.clone())
    };
    let call = [("call_1", REFUND, r#"{"order": "A-17", "cents": 500}"#)];
    let ctx = context("run-1", "ana", "acme");
    let first = agent(vec![ScriptedTurn::openai_calls(&call)]);
    let output = first.run(vec![Message::user("Refund A-17.")], &ctx, &|_| {}).await;
    assert_eq!(
        output.done.stop,
        StopReason::Waiting { calls: vec!["call_1".into()] },
        "{:?}",
        output.done.records
    );
    let state = output.state.unwrap();
    let waiting = state.waiting().next().unwrap();
    let question = match &waiting.status {
        tool_runtime::agent::deferred::CallStatus::Waiting { question, .. } => question.clone(),
        other => panic!("{other:?}"),
    };
    let question = question.expect("the run waits on the server's question");
    assert_eq!(question.key.as_deref(), Some("approval"));
    assert_eq!(served.refunds.0.load(Ordering::SeqCst), 0);

    let yes = Decisions::new().answer("call_1", ElicitResponse::Accept(json!({"approve": true})));
    let second = agent(vec![ScriptedTurn::openai_text("Refunded.")]);
    let done = second.resume(state, yes, &ctx, &|_| {}).await.unwrap();
    assert_eq!(done.done.stop, StopReason::Answered);
    assert_eq!(done.done.records[0].result, Some(json!({"refunded": 500})));
    assert_eq!(served.refunds.0.load(Ordering::SeqCst), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_imported_task_is_followed_to_its_result() {
    let served = serve_with(None).await;
    let runner = importing(&served.url).await;
    let result = runner.exec(WAIT, json!({"seconds": 0}), &context("run-1", "ana", "acme")).await;
    let parts = result.output().unwrap_or_else(|| panic!("{result:?}")).parts();
    assert_eq!(parts, [tool_runtime::content::Part::Text("waited 0s".into())]);
}
