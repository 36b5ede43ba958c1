//! Calls served as tasks (the MCP tasks extension of 2026-07-28): created at once and kept in
//! the store, polled with `tasks/get`, answered with `tasks/update` when they wait for approval,
//! cancelled with `tasks/cancel`, each visible to its own caller only.

use std::sync::atomic::Ordering;
use std::time::Duration;

use serde_json::{Value, json};

use super::rounds::{refund, rpc, serve};

/// What a client that takes tasks and elicitation declares.
fn takes_tasks() -> Value {
    json!({"elicitation": {}, "extensions": {"io.modelcontextprotocol/tasks": {}}})
}

async fn tasks(url: &str, token: &str, method: &str, params: Value) -> Value {
    rpc(url, token, method, params, takes_tasks()).await
}

/// Polls the task `id` until its status is not `status`; its last `tasks/get` answer.
async fn until_not(url: &str, id: &str, status: &str) -> Value {
    for _ in 0..100 {
        let got = tasks(url, "alice-secret", "tasks/get", json!({"taskId": id})).await;
        if got["result"]["status"] != status {
            return got;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("the task `{id}` stayed {status}");
}

#[tokio::test]
async fn a_refund_served_as_a_task_waits_for_approval_is_approved_with_an_update_and_runs_once() {
    let served = serve().await;
    let created = tasks(&served.url, "alice-secret", "tools/call", refund(500)).await;
    let result = &created["result"];
    assert_eq!(result["resultType"], "task", "{created}");
    assert_eq!(result["status"], "working");
    assert!(result["ttlMs"].as_u64().unwrap() > 0 && result.get("requestState").is_none());
    let id = result["taskId"].as_str().unwrap().to_owned();

    // It waits for approval: the form is on the task.
    let waiting = until_not(&served.url, &id, "working").await;
    assert_eq!(waiting["result"]["status"], "input_required", "{waiting}");
    let form = &waiting["result"]["inputRequests"]["approval"];
    assert!(form["params"]["message"].as_str().unwrap().contains("\"cents\": 500"), "{form}");
    assert_eq!(served.refunds.0.load(Ordering::SeqCst), 0);

    // Another caller knows no such task, and cannot answer it.
    let foreign = tasks(&served.url, "carol-secret", "tasks/get", json!({"taskId": id})).await;
    assert_eq!(foreign["error"]["code"], -32602, "{foreign}");
    let approve = json!({"approval": {"action": "accept", "content": {"approve": true}}});
    let update = json!({"taskId": id, "inputResponses": approve});
    let foreign = tasks(&served.url, "carol-secret", "tasks/update", update.clone()).await;
    assert_eq!(foreign["error"]["code"], -32602, "{foreign}");

    // Approved: acked, then it runs, once; answering again changes nothing.
    let acked = tasks(&served.url, "alice-secret", "tasks/update", update.clone()).await;
    assert_eq!(acked["result"]["resultType"], "complete", "{acked}");
    let done = until_not(&served.url, &id, "working").await;
    assert_eq!(done["result"]["status"], "completed", "{done}");
    assert_eq!(done["result"]["result"]["structuredContent"], json!({"refunded": 500}));
    let again = tasks(&served.url, "alice-secret", "tasks/update", update).await;
    assert_eq!(again["result"]["resultType"], "complete", "{again}");
    tokio::time::sleep(Duration::from_millis(100)).await;
    assert_eq!(served.refunds.0.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn a_task_is_cancelled_and_a_required_task_refuses_a_client_without_the_extension() {
    let served = serve().await;
    let wait = json!({"name": "shop__wait", "arguments": {"seconds": 60}});
    let plain = rpc(&served.url, "alice-secret", "tools/call", wait.clone(), json!({})).await;
    assert_eq!(plain["error"]["code"], -32021, "{plain}");
    let required = &plain["error"]["data"]["requiredCapabilities"]["extensions"];
    assert!(required.get("io.modelcontextprotocol/tasks").is_some(), "{plain}");

    let created = tasks(&served.url, "alice-secret", "tools/call", wait).await;
    let id = created["result"]["taskId"].as_str().unwrap().to_owned();
    let cancel = tasks(&served.url, "alice-secret", "tasks/cancel", json!({"taskId": id})).await;
    assert_eq!(cancel["result"]["resultType"], "complete", "{cancel}");
    let ended = until_not(&served.url, &id, "working").await;
    assert_eq!(ended["result"]["status"], "cancelled", "{ended}");
    // Cancelling what ended is acked and changes nothing; an unknown task is -32602.
    let again = tasks(&served.url, "alice-secret", "tasks/cancel", json!({"taskId": id})).await;
    assert_eq!(again["result"]["resultType"], "complete");
    let unknown =
        tasks(&served.url, "alice-secret", "tasks/get", json!({"taskId": "mcp_nothing"})).await;
    assert_eq!(unknown["error"]["code"], -32602);
}

#[tokio::test]
async fn a_task_that_runs_past_its_first_lease_stays_working_while_its_replica_lives() {
    let served = serve().await;
    let wait = json!({"name": "shop__wait", "arguments": {"seconds": 30}});
    let created = tasks(&served.url, "alice-secret", "tools/call", wait).await;
    let id = created["result"]["taskId"].as_str().unwrap().to_owned();
    // The first lease lasts 5 s; the running replica renews it every 2 s.
    tokio::time::sleep(Duration::from_millis(6_500)).await;
    let got = tasks(&served.url, "alice-secret", "tasks/get", json!({"taskId": id})).await;
    assert_eq!(got["result"]["status"], "working", "{got}");
    tasks(&served.url, "alice-secret", "tasks/cancel", json!({"taskId": id})).await;
    assert_eq!(until_not(&served.url, &id, "working").await["result"]["status"], "cancelled");
}
