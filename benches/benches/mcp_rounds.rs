//! MCP 2026-07-28 over Streamable HTTP on loopback (issue 26), each request a stateless
//! `tools/call` with its `_meta` and routing headers, as a 2026 client sends it:
//!
//! - `plain_call`: a call that runs at once (`tickets__list`, read-only, of the
//!   `approval_runner` fixture): the baseline;
//! - `approval_round_trip`: a call that waits for approval (`tickets__close`): round 1 answers
//!   `input_required` with the sealed `requestState` (the call kept in the store), round 2
//!   brings the approval, spends it and runs the call; on the in-memory store and on SQLite;
//! - `task_create_poll_result`: `tickets__list` served as a task: `tools/call` creates it (saved
//!   in the store), `tasks/get` is polled until it is completed and carries the result.

use std::sync::Arc;
use std::time::Duration;

use criterion::{Criterion, criterion_group, criterion_main};
use serde_json::{Value, json};
use tool_benches::approval_runner;
use tool_runtime::agent::deferred::StateKey;
use tool_runtime::mcp::{McpServer, TaskSupport};
use tool_runtime::store::{InMemoryStore, RunStore, SqliteStore};

/// The server on a loopback port over `store`, `tickets__list` also served as a task; its URL.
async fn serve(store: Arc<dyn RunStore>, tasks: bool) -> String {
    let mut server = McpServer::builder(approval_runner())
        .store(store, StateKey::new(*b"bench key, 32 bytes long, really"));
    if tasks {
        server = server.task("tickets__list", TaskSupport::Optional);
    }
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("a port");
    let url = format!("http://{}/mcp", listener.local_addr().expect("an address"));
    let shutdown = tokio_util::sync::CancellationToken::new();
    tokio::spawn(server.build().serve_http(listener, shutdown));
    url
}

/// One stateless 2026-07-28 request; its JSON-RPC result.
async fn rpc(http: &reqwest::Client, url: &str, method: &str, params: Value) -> Value {
    let mut params = params;
    params["_meta"] = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {
            "elicitation": {}, "extensions": {"io.modelcontextprotocol/tasks": {}}
        }
    });
    let name = params.get("name").or_else(|| params.get("taskId")).and_then(Value::as_str);
    let name = name.unwrap_or_default().to_owned();
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params});
    let text = http
        .post(url)
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2026-07-28")
        .header("mcp-method", method)
        .header("mcp-name", name)
        .json(&body)
        .send()
        .await
        .expect("the server answers")
        .text()
        .await
        .expect("a body");
    let json = text.lines().rev().find_map(|line| line.strip_prefix("data:")).unwrap_or(&text);
    let mut response: Value = serde_json::from_str(json.trim()).expect("JSON-RPC");
    assert!(response.get("error").is_none(), "{response}");
    response["result"].take()
}

fn close() -> Value {
    json!({"name": "tickets__close", "arguments": {"number": 7}})
}

async fn approval_round_trip(http: &reqwest::Client, url: &str) {
    let asked = rpc(http, url, "tools/call", close()).await;
    assert_eq!(asked["resultType"], "input_required");
    let mut params = close();
    params["requestState"] = asked["requestState"].clone();
    params["inputResponses"] =
        json!({"approval": {"action": "accept", "content": {"approve": true}}});
    let done = rpc(http, url, "tools/call", params).await;
    assert_eq!(done["isError"], false, "{done}");
}

async fn task_create_poll_result(http: &reqwest::Client, url: &str) {
    let list = json!({"name": "tickets__list", "arguments": {}});
    let created = rpc(http, url, "tools/call", list).await;
    let id = created["taskId"].as_str().expect("a task").to_owned();
    loop {
        let got = rpc(http, url, "tasks/get", json!({"taskId": id})).await;
        if got["status"] == "completed" {
            break;
        }
    }
}

fn mcp_rounds(c: &mut Criterion) {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("a runtime");
    let http = reqwest::Client::new();
    let dir = std::env::temp_dir().join(format!("tool-runtime-bench-mcp-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a folder for the SQLite file");
    let sqlite: Arc<dyn RunStore> = Arc::new(
        runtime.block_on(SqliteStore::open(dir.join("runs.sqlite"))).expect("the store opens"),
    );
    let memory: Arc<dyn RunStore> = Arc::new(InMemoryStore::new());
    let plain = runtime.block_on(serve(Arc::clone(&memory), false));
    let on_memory = runtime.block_on(serve(Arc::clone(&memory), true));
    let on_sqlite = runtime.block_on(serve(sqlite, true));

    let mut group = c.benchmark_group("mcp_rounds");
    group.sample_size(30).measurement_time(Duration::from_secs(5));
    group.bench_function("plain_call", |b| {
        let list = json!({"name": "tickets__list", "arguments": {}});
        b.iter(|| runtime.block_on(rpc(&http, &plain, "tools/call", list.clone())));
    });
    for (name, url) in [("memory", &on_memory), ("sqlite", &on_sqlite)] {
        group.bench_function(format!("approval_round_trip/{name}"), |b| {
            b.iter(|| runtime.block_on(approval_round_trip(&http, url)));
        });
        group.bench_function(format!("task_create_poll_result/{name}"), |b| {
            b.iter(|| runtime.block_on(task_create_poll_result(&http, url)));
        });
    }
    group.finish();
    let _ = std::fs::remove_dir_all(&dir);
}

criterion_group!(benches, mcp_rounds);
criterion_main!(benches);
