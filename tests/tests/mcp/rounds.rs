//! Calls that wait, decided over MCP 2026-07-28 input-required rounds: an approval the policy
//! requires and a tool's question reach the client's user as elicitation forms; the answer
//! comes back with the sealed `requestState`, which is checked and good once. Driven with raw
//! stateless HTTP requests, as a 2026 client sends them (no session, `_meta` on each request).

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use serde_json::{Value, json};
use tool_runtime::agent::StateKey;
use tool_runtime::catalog::ToolCatalog;
use tool_runtime::content::Content;
use tool_runtime::mcp::{McpServer, TaskSupport};
use tool_runtime::policy::ToolPolicy;
use tool_runtime::prelude::*;
use tool_runtime::runner::{DeferAll, ToolRunner};
use tool_runtime::runtime::{Capability, ElicitAnswer, Interact};
use tool_runtime::store::{InMemoryStore, RunStore, WaitingQuery};

use super::serve::Tokens;
use super::support::on_loopback;

/// How many refunds ran, per test (each test gives its server its own counter).
#[derive(Debug, Clone, Default)]
pub(super) struct Refunds(pub(super) Arc<AtomicUsize>);

impl Capability for Refunds {
    const NAME: &'static str = "refunds";
}

/// Refund an order.
#[tool(name = "shop__refund", effect = state_change, redact = ["refunded"], capabilities = [Refunds])]
struct Refund {
    order: String,
    cents: u32,
}

#[derive(Serialize, ToolSchema)]
struct Refunded {
    refunded: u32,
}

impl Tool for Refund {
    type Output = Refunded;
    async fn run(
        self,
        _: &ToolInvocationContext,
        caps: &ToolCapabilities,
    ) -> Result<Refunded, ToolError> {
        if self.order.is_empty() {
            return Err(ToolError::new("no order"));
        }
        caps.get::<Refunds>()?.0.fetch_add(1, Ordering::SeqCst);
        Ok(Refunded { refunded: self.cents })
    }
}

/// Wait a while (served as a task only).
#[tool(name = "shop__wait", effect = read_only, redact = [])]
struct Wait {
    seconds: u32,
}

impl Tool for Wait {
    type Output = Content;
    async fn run(
        self,
        _: &ToolInvocationContext,
        _: &ToolCapabilities,
    ) -> Result<Content, ToolError> {
        tokio::time::sleep(std::time::Duration::from_secs(u64::from(self.seconds))).await;
        Ok(Content::new().text(format!("waited {}s", self.seconds)))
    }
}

/// The answer to the shipping question.
#[derive(Debug, Serialize, Deserialize, ToolSchema)]
struct Address {
    city: String,
}

/// Ship an order, asking where to.
#[tool(name = "shop__ship", effect = read_only, redact = [], capabilities = [Interact])]
struct Ship {
    order: String,
}

impl Tool for Ship {
    type Output = Content;
    async fn run(
        self,
        _: &ToolInvocationContext,
        caps: &ToolCapabilities,
    ) -> Result<Content, ToolError> {
        let interact = caps.get::<Interact>()?;
        match interact.elicitation::<Address>("Ship to which city?").key("city").send().await? {
            ElicitAnswer::Accept(address) => {
                Ok(Content::new().text(format!("{} ships to {}", self.order, address.city)))
            }
            _ => Err(ToolError::new("not shipped: no city")),
        }
    }
}

/// A server on loopback whose refunds wait for approval, its store and its refund counter.
pub(super) struct Served {
    pub(super) url: String,
    pub(super) store: Arc<InMemoryStore>,
    pub(super) refunds: Refunds,
    _shutdown: tokio_util::sync::DropGuard,
}

pub(super) async fn serve() -> Served {
    serve_with(Some(Arc::new(Tokens))).await
}

/// [`serve`], its callers named by `authenticator` (`None`: every call runs in the server's
/// default context).
pub(super) async fn serve_with(authenticator: Option<Arc<Tokens>>) -> Served {
    let refunds = Refunds::default();
    let catalog = ToolCatalog::builder()
        .register::<Refund>()
        .register::<Ship>()
        .register::<Wait>()
        .capability(refunds.clone())
        .capability(Interact::unavailable())
        .build()
        .unwrap();
    let policy = ToolPolicy::from_json(
        r#"{"allowed_tools": ["shop__*"], "require_approval": ["state_change"]}"#,
    )
    .unwrap();
    let runner = ToolRunner::builder(catalog).policy(policy).approver(Arc::new(DeferAll)).build();
    let store = Arc::new(InMemoryStore::new());
    let mut server = McpServer::builder(runner)
        .store(store.clone(), StateKey::new(*b"the replicas' shared secret!!!!!"))
        .task("shop__refund", TaskSupport::Optional)
        .task("shop__wait", TaskSupport::Required);
    if let Some(authenticator) = authenticator {
        server = server.authenticator(authenticator);
    }
    let (url, shutdown) = on_loopback(server.build()).await;
    Served { url, store, refunds, _shutdown: shutdown }
}

/// One stateless 2026-07-28 `tools/call` as `token`: its JSON-RPC response.
pub(super) async fn call(url: &str, token: &str, params: Value) -> Value {
    rpc(url, token, "tools/call", params, json!({"elicitation": {}})).await
}

/// One stateless 2026-07-28 request `method` as `token`, its client declaring `capabilities`:
/// its JSON-RPC response.
pub(super) async fn rpc(
    url: &str,
    token: &str,
    method: &str,
    params: Value,
    capabilities: Value,
) -> Value {
    let mut params = params;
    params["_meta"] = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientInfo": {"name": "rounds-test", "version": "1"},
        "io.modelcontextprotocol/clientCapabilities": capabilities
    });
    // The routing header names what the body does: the tool, or the task.
    let name = params.get("name").or_else(|| params.get("taskId")).and_then(Value::as_str);
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params});
    let mut request = reqwest::Client::new()
        .post(url)
        .header("authorization", format!("Bearer {token}"))
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2026-07-28")
        .header("mcp-method", method);
    if let Some(name) = name {
        request = request.header("mcp-name", name);
    }
    let text = request.json(&body).send().await.unwrap().text().await.unwrap();
    // A JSON body, or an event stream whose last `data:` line is the response.
    let json = text.lines().rev().find_map(|line| line.strip_prefix("data:")).unwrap_or(&text);
    serde_json::from_str(json.trim()).unwrap_or_else(|error| panic!("{error}: {text}"))
}

pub(super) fn refund(cents: u32) -> Value {
    json!({"name": "shop__refund", "arguments": {"order": "A-17", "cents": cents}})
}

/// `params` again with the round's `requestState` and `inputResponses`.
pub(super) fn answering(params: Value, state: &Value, responses: Value) -> Value {
    let mut params = params;
    params["requestState"] = state.clone();
    params["inputResponses"] = responses;
    params
}

pub(super) fn error_message(response: &Value) -> String {
    assert_eq!(response["error"]["code"], -32602, "{response}");
    response["error"]["message"].as_str().unwrap().to_owned()
}

#[tokio::test]
async fn an_approval_over_mcp_runs_the_call_once_for_its_caller_only() {
    let served = serve().await;
    let first = call(&served.url, "alice-secret", refund(500)).await;
    let result = &first["result"];
    assert_eq!(result["resultType"], "input_required", "{first}");
    let form = &result["inputRequests"]["approval"];
    assert_eq!(form["method"], "elicitation/create");
    let message = form["params"]["message"].as_str().unwrap();
    assert!(message.contains("shop__refund") && message.contains("\"cents\": 500"), "{message}");
    assert_eq!(form["params"]["requestedSchema"]["required"], json!(["approve"]));
    let state = &result["requestState"];
    assert_eq!(served.refunds.0.load(Ordering::SeqCst), 0, "nothing ran before the approval");

    // The store lists the call as waiting, under its tenant, as an inbox would.
    let waiting = served.store.list_waiting(&WaitingQuery::tenant("acme")).await.unwrap();
    assert_eq!(waiting.len(), 1);
    assert_eq!(waiting[0].actor_id, "alice");
    assert_eq!(waiting[0].waiting[0].tool_name, "shop__refund");

    let approve = json!({"approval": {"action": "accept", "content": {"approve": true}}});
    // Another caller, other arguments, a changed state: refused, and nothing runs.
    let carol = call(&served.url, "carol-secret", answering(refund(500), state, approve.clone()));
    let carol = carol.await;
    assert!(error_message(&carol).contains("another caller"), "{carol}");
    let other =
        call(&served.url, "alice-secret", answering(refund(50_000), state, approve.clone()));
    assert!(error_message(&other.await).contains("other arguments"));
    let text = state.as_str().unwrap();
    let mut tampered = text.to_owned();
    let at = tampered.len() - 1;
    tampered.replace_range(at.., if text.ends_with('0') { "1" } else { "0" });
    let forged = call(
        &served.url,
        "alice-secret",
        answering(refund(500), &json!(tampered), approve.clone()),
    );
    assert!(error_message(&forged.await).contains("not issued by this server"));
    assert_eq!(served.refunds.0.load(Ordering::SeqCst), 0);

    // Not answered: asked again, with the same state.
    let unanswered = call(&served.url, "alice-secret", answering(refund(500), state, json!({})));
    let unanswered = unanswered.await;
    assert_eq!(unanswered["result"]["resultType"], "input_required");
    assert_eq!(&unanswered["result"]["requestState"], state);

    // Approved: it runs, once.
    let done =
        call(&served.url, "alice-secret", answering(refund(500), state, approve.clone())).await;
    assert_eq!(done["result"]["structuredContent"], json!({"refunded": 500}), "{done}");
    assert_eq!(served.refunds.0.load(Ordering::SeqCst), 1);
    assert!(served.store.list_waiting(&WaitingQuery::tenant("acme")).await.unwrap().is_empty());
    let replay = call(&served.url, "alice-secret", answering(refund(500), state, approve)).await;
    assert!(error_message(&replay).contains("used already"), "{replay}");
    assert_eq!(served.refunds.0.load(Ordering::SeqCst), 1, "a replayed approval ran again");
}

#[tokio::test]
async fn a_refused_approval_fails_the_call_without_running_it() {
    let served = serve().await;
    let first = call(&served.url, "alice-secret", refund(700)).await;
    let state = &first["result"]["requestState"];
    let no = json!({"approval": {"action": "accept", "content": {"approve": false}}});
    let refused = call(&served.url, "alice-secret", answering(refund(700), state, no)).await;
    assert_eq!(refused["result"]["isError"], true, "{refused}");
    let text = refused["result"]["content"][0]["text"].as_str().unwrap();
    assert!(text.contains("refused"), "{text}");
    let declined = json!({"approval": {"action": "decline"}});
    let replay = call(&served.url, "alice-secret", answering(refund(700), state, declined)).await;
    assert!(error_message(&replay).contains("used already"));
    // An answer that is no yes or no is refused as such, and spends nothing.
    let second = call(&served.url, "alice-secret", refund(800)).await;
    let state = &second["result"]["requestState"];
    let odd = json!({"approval": {"action": "accept", "content": {"approve": "maybe"}}});
    let odd = call(&served.url, "alice-secret", answering(refund(800), state, odd)).await;
    assert!(error_message(&odd).contains("approve"));
    let yes = json!({"approval": {"action": "accept", "content": {"approve": true}}});
    let done = call(&served.url, "alice-secret", answering(refund(800), state, yes)).await;
    assert_eq!(done["result"]["structuredContent"], json!({"refunded": 800}), "{done}");
    assert_eq!(served.refunds.0.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn a_tools_question_is_an_input_request_under_its_key_and_its_answer_goes_back_to_it() {
    let served = serve().await;
    let ship = json!({"name": "shop__ship", "arguments": {"order": "A-17"}});
    let first = call(&served.url, "alice-secret", ship.clone()).await;
    let form = &first["result"]["inputRequests"]["city"];
    assert_eq!(form["params"]["message"], "Ship to which city?", "{first}");
    assert_eq!(form["params"]["requestedSchema"]["required"], json!(["city"]));
    let state = &first["result"]["requestState"];
    let answer = json!({"city": {"action": "accept", "content": {"city": "Lyon"}}});
    let done = call(&served.url, "alice-secret", answering(ship.clone(), state, answer.clone()));
    let done = done.await;
    assert_eq!(done["result"]["content"][0]["text"], "A-17 ships to Lyon", "{done}");
    let replay = call(&served.url, "alice-secret", answering(ship, state, answer)).await;
    assert!(error_message(&replay).contains("used already"));
}

#[tokio::test]
async fn a_client_of_2025_gets_what_the_call_waits_for_and_a_request_state_is_refused() {
    use tool_runtime::mcp::rmcp::ServiceExt;
    use tool_runtime::mcp::rmcp::model::CallToolRequestParams;
    use tool_runtime::mcp::rmcp::transport::StreamableHttpClientTransport;
    use tool_runtime::mcp::rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;

    let served = serve().await;
    let config = StreamableHttpClientTransportConfig::with_uri(served.url.clone())
        .auth_header("alice-secret");
    let client = ().serve(StreamableHttpClientTransport::from_config(config)).await.unwrap();
    let arguments = json!({"order": "A-17", "cents": 5}).as_object().unwrap().clone();
    let params = CallToolRequestParams::new("shop__refund").with_arguments(arguments);
    let result = client.call_tool(params.clone()).await.unwrap();
    assert_eq!(result.is_error, Some(true));
    assert!(format!("{:?}", result.content).contains("waits for approval"));
    let mut forged = params;
    forged.request_state = Some("trs1.e30.0000000000000000.00".to_owned());
    let refused = client.call_tool(forged).await.unwrap_err();
    assert!(refused.to_string().contains("issues no requestState"), "{refused}");
    assert_eq!(served.refunds.0.load(Ordering::SeqCst), 0);
    client.cancel().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_official_python_sdk_approves_a_refund_over_mcp_and_it_runs_once() {
    let served = serve_with(None).await;
    let url = served.url.clone();
    let report = tokio::task::spawn_blocking(move || {
        crate::python_client::run_python_client(&["approve", &url])
    })
    .await
    .unwrap();
    // 2026-07-28: an input-required round; 2025-11-25: an elicitation within the call.
    for (mode, version) in [("auto", "2026-07-28"), ("legacy", "2025-11-25")] {
        let report = &report[mode];
        assert_eq!(report["protocol_version"], version, "{report}");
        assert_eq!(report["result"]["structuredContent"], json!({"refunded": 500}), "{report}");
        let asked = report["asked"].as_array().unwrap();
        assert_eq!(asked.len(), 1, "{report}");
        let message = asked[0]["message"].as_str().unwrap();
        assert!(
            message.contains("shop__refund") && message.contains("\"cents\": 500"),
            "{message}"
        );
    }
    assert_eq!(served.refunds.0.load(Ordering::SeqCst), 2, "one refund per approval");
}
