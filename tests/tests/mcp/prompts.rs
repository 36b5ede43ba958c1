//! Prompts served over MCP (`McpServerBuilder::prompt`): listed, made from their arguments, and
//! asking the client's user first: within the request for an older client, in input-required
//! rounds whose sealed state is bound to caller, prompt and arguments for 2026-07-28.

use std::sync::Arc;

use serde_json::{Value, json};
use tool_runtime::agent::StateKey;
use tool_runtime::catalog::ToolCatalog;
use tool_runtime::mcp::rmcp::model::{
    ElicitationAction, GetPromptRequestParams, PromptMessage, Role,
};
use tool_runtime::mcp::{McpPrompt, McpServer, ServedNameError};
use tool_runtime::prelude::*;
use tool_runtime::runner::ToolRunner;
use tool_runtime::store::InMemoryStore;

use super::interact::connect_to;
use super::rounds::rpc;
use super::serve::Tokens;
use super::support::on_loopback;

#[derive(Debug, Serialize, Deserialize, ToolSchema)]
struct Audience {
    audience: String,
}

/// Explains a topic to an audience it asks the user for.
fn explain() -> McpPrompt {
    McpPrompt::new("explain", "Explain a topic to an audience.", |request| async move {
        let topic = request.arguments.get("topic").cloned().unwrap_or_default();
        let answer = request.interact.elicitation::<Audience>("For whom?").key("audience").send();
        let audience = answer.await?.accepted().map_or_else(|| "anyone".to_owned(), |a| a.audience);
        let text = format!("Explain {topic} to {audience}, for {}.", request.ctx.actor_id());
        Ok(vec![PromptMessage::new_text(Role::User, text)])
    })
    .argument("topic", "What to explain.", true)
}

fn server() -> McpServer {
    let runner = ToolRunner::builder(ToolCatalog::builder().build().unwrap()).build();
    McpServer::builder(runner)
        .authenticator(Arc::new(Tokens))
        .store(Arc::new(InMemoryStore::new()), StateKey::new(*b"the replicas' shared secret!!!!!"))
        .prompt(explain())
        .unwrap()
        .prompt(McpPrompt::new("boom", "Panics.", |_| async { panic!("a prompt handler's bug") }))
        .unwrap()
        .build()
}

async fn get(url: &str, token: &str, params: Value) -> Value {
    rpc(url, token, "prompts/get", params, json!({"elicitation": {}})).await
}

fn explaining(topic: &str) -> Value {
    json!({"name": "explain", "arguments": {"topic": topic}})
}

#[tokio::test]
async fn a_prompt_asks_a_2026_client_in_a_round_bound_to_its_caller_and_arguments() {
    let (url, shutdown) = on_loopback(server()).await;
    let listed = rpc(&url, "alice-secret", "prompts/list", json!({}), json!({})).await;
    let explain = &listed["result"]["prompts"][1];
    assert_eq!(explain["name"], "explain", "{listed}");
    assert_eq!(explain["arguments"][0]["required"], true);

    let first = get(&url, "alice-secret", explaining("tides")).await;
    let result = &first["result"];
    assert_eq!(result["resultType"], "input_required", "{first}");
    assert_eq!(result["inputRequests"]["audience"]["params"]["message"], "For whom?");
    let state = result["requestState"].clone();
    let answer = json!({"audience": {"action": "accept", "content": {"audience": "children"}}});
    let answered = |params: Value| {
        let mut params = params;
        params["requestState"] = state.clone();
        params["inputResponses"] = answer.clone();
        params
    };

    let made = get(&url, "alice-secret", answered(explaining("tides"))).await;
    let text = &made["result"]["messages"][0]["content"]["text"];
    assert_eq!(text, "Explain tides to children, for alice.", "{made}");

    // Another caller, other arguments, a changed state: refused.
    for (token, params) in [
        ("carol-secret", answered(explaining("tides"))),
        ("alice-secret", answered(explaining("volcanoes"))),
    ] {
        let refused = get(&url, token, params).await;
        assert_eq!(refused["error"]["code"], -32602, "{refused}");
    }
    let mut tampered = answered(explaining("tides"));
    tampered["requestState"] = json!(format!("{}x", state.as_str().unwrap()));
    assert_eq!(get(&url, "alice-secret", tampered).await["error"]["code"], -32602);
    drop(shutdown);
}

#[tokio::test]
async fn bad_prompt_requests_are_refused_with_what_is_wrong() {
    let (url, shutdown) = on_loopback(server()).await;
    for (params, says) in [
        (json!({"name": "summarise"}), "unknown prompt"),
        (json!({"name": "explain"}), "needs the argument `topic`"),
        (json!({"name": "explain", "arguments": {"topic": 7}}), "must be a string"),
    ] {
        let refused = get(&url, "alice-secret", params).await;
        assert_eq!(refused["error"]["code"], -32602, "{refused}");
        assert!(refused["error"]["message"].as_str().unwrap().contains(says), "{refused}");
    }
    // A handler that panics fails its request; the server goes on.
    let failed = get(&url, "alice-secret", json!({"name": "boom"})).await;
    assert_eq!(failed["error"]["code"], -32603, "{failed}");
    assert!(failed["error"]["message"].as_str().unwrap().contains("panicked"), "{failed}");
    let listed = rpc(&url, "alice-secret", "prompts/list", json!({}), json!({})).await;
    assert_eq!(listed["result"]["prompts"].as_array().unwrap().len(), 2, "{listed}");
    drop(shutdown);
    let runner = ToolRunner::builder(ToolCatalog::builder().build().unwrap()).build();
    let twice = McpServer::builder(runner).prompt(explain()).unwrap().prompt(explain());
    assert!(matches!(twice.err(), Some(ServedNameError::Taken { .. })));
}

#[tokio::test]
async fn a_prompt_asks_an_older_client_within_the_request() {
    let (service, client) = connect_to(server(), true).await;
    *client.elicit.lock().unwrap() = (ElicitationAction::Accept, json!({"audience": "sailors"}));
    let mut params = GetPromptRequestParams::new("explain");
    params.arguments = Some(json!({"topic": "knots"}).as_object().unwrap().clone());
    let made = service.peer().get_prompt(params).await.unwrap();
    let text = serde_json::to_value(&made.messages).unwrap()[0]["content"]["text"].clone();
    assert_eq!(text, "Explain knots to sailors, for mcp-client.");
    assert_eq!(client.asked.lock().unwrap()[0]["message"], "For whom?");
}
