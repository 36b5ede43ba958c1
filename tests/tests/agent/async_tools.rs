//! Asynchronous tools (`#[tool(asynchronous)]`): OpenAI Responses is told `async: true`, its
//! model goes on and answers while the call runs, and the call's result arrives later, here at
//! another agent on the same durable store, and goes back to the model by call id.

use std::sync::Arc;

use serde_json::{Value, json};
use tool_runtime::adapters::{Adapter, ModelRequest, OpenAiResponses, Provider, RequestOptions};
use tool_runtime::agent::deferred::{Decisions, StateKey};
use tool_runtime::agent::{Agent, Message, ScriptedModel, ScriptedTurn, StopReason};
use tool_runtime::policy::ToolPolicy;
use tool_runtime::prelude::*;
use tool_runtime::store::{RunStore, SqliteStore};
use tool_tests::fixtures::context;

use super::store::fresh_file;

/// Build the monthly sales report; it takes minutes, and a worker elsewhere builds it.
#[tool(name = "reports__build", effect = read_only, redact = ["url"], client = Report, asynchronous)]
struct BuildReport {
    /// The month, `YYYY-MM`.
    month: String,
}

/// Where the report is.
#[derive(Serialize, ToolSchema)]
struct Report {
    /// The report's address.
    url: String,
}

const KEY: &[u8; 32] = b"the reports desk's key, 32 bytes";

fn agent(store: &Arc<dyn RunStore>, turns: Vec<ScriptedTurn>) -> (Agent, Arc<ScriptedModel>) {
    let model = Arc::new(ScriptedModel::new(turns));
    let catalog = ToolCatalog::builder().register::<BuildReport>().build().unwrap();
    let runner = ToolRunner::builder(catalog).policy(ToolPolicy::allowing(["reports__*"])).build();
    let agent = Agent::new(Arc::clone(&model) as _, runner)
        .with_state_key(StateKey::new(*KEY))
        .with_store(Arc::clone(store));
    (agent, model)
}

/// The model's response: the report started (`async` as given), and an answer meanwhile.
fn started(asynchronous: bool) -> ScriptedTurn {
    let mut call = json!({"type": "function_call", "id": "fc_1", "call_id": "call_1",
        "name": "reports__build", "arguments": "{\"month\": \"2026-10\"}", "status": "completed"});
    if asynchronous {
        call["async"] = json!(true);
    }
    let body = json!({"object": "response", "status": "completed", "output": [call,
        {"type": "message", "role": "assistant", "content": [{"type": "output_text",
         "text": "The October report is being built; October's total was 1.2M."}]}]});
    ScriptedTurn::body(Provider::OpenAiResponses, body.to_string())
}

fn answer(text: &str) -> ScriptedTurn {
    let body = json!({"object": "response", "status": "completed", "output": [
        {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": text}]}]});
    ScriptedTurn::body(Provider::OpenAiResponses, body.to_string())
}

#[tokio::test]
async fn the_model_answers_meanwhile_and_the_result_arrives_later_by_call_id() {
    assert!(BuildReport::spec().is_asynchronous());
    let store: Arc<dyn RunStore> = Arc::new(SqliteStore::open(fresh_file("async")).await.unwrap());
    let ctx = context("run-async", "analyst", "acme");
    let (first, _) = agent(&store, vec![started(true)]);
    let output = first.run(vec![Message::user("October's numbers?")], &ctx, &|_| {}).await;
    assert_eq!(output.done.stop, StopReason::Waiting { calls: vec!["call_1".into()] });
    assert_eq!(output.done.answer, "The October report is being built; October's total was 1.2M.");
    assert_eq!(output.store_error, None);

    // The worker's result reaches another agent on the same store.
    let (second, model) = agent(&store, vec![answer("The report is at https://r/2026-10.")]);
    let report = json!({"url": "https://r/2026-10"});
    let resumed = second
        .resume_stored(Decisions::new().supply("call_1", report), &ctx, &|_| {})
        .await
        .unwrap();
    assert_eq!(resumed.done.stop, StopReason::Answered);
    assert_eq!(resumed.done.answer, "The report is at https://r/2026-10.");

    // What goes to OpenAI: the call as it came (`async` kept), then its output by call id.
    let seen = model.requests();
    let request = ModelRequest {
        messages: &seen[0].messages,
        tools: &[],
        choice: &seen[0].choice,
        search: None,
    };
    let body = OpenAiResponses::new()
        .encode_request(&request, &RequestOptions::new("gpt-x").stream(false))
        .unwrap();
    let input = body["input"].as_array().unwrap();
    let call = input.iter().find(|item| item["type"] == "function_call").unwrap();
    assert_eq!((&call["call_id"], &call["async"]), (&json!("call_1"), &json!(true)));
    let output = input.iter().find(|item| item["type"] == "function_call_output").unwrap();
    assert_eq!(output["call_id"], "call_1");
    let sent: Value = serde_json::from_str(output["output"].as_str().unwrap()).unwrap();
    assert_eq!(sent, json!({"url": "https://r/2026-10"}));
}

/// Without `async` on the call, the model's text beside a call that waits is no answer: it
/// said it before the result it waits for.
#[tokio::test]
async fn a_call_the_model_waits_for_leaves_no_answer() {
    let store: Arc<dyn RunStore> = Arc::new(SqliteStore::open(fresh_file("sync")).await.unwrap());
    let (agent, _) = agent(&store, vec![started(false)]);
    let ctx = context("run-sync", "analyst", "acme");
    let output = agent.run(vec![Message::user("October's numbers?")], &ctx, &|_| {}).await;
    assert_eq!(output.done.stop, StopReason::Waiting { calls: vec!["call_1".into()] });
    assert_eq!(output.done.answer, "");
}
