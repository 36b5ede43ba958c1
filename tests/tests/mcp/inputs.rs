//! Several requests in one input-required round (MCP 2026-07-28): a call that asks its user, the
//! client's model and the client's roots at once gets them all asked together, answered in any
//! order (what is answered is kept), and runs once, with everything, when the last arrives; a
//! request the client did not declare is `-32021`. The same in a task, updated one key at a time.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use serde_json::{Value, json};
use tool_runtime::agent::StateKey;
use tool_runtime::catalog::ToolCatalog;
use tool_runtime::content::Content;
use tool_runtime::content::Part;
use tool_runtime::mcp::rmcp::transport::StreamableHttpClientTransport;
use tool_runtime::mcp::rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use tool_runtime::mcp::{McpImportOptions, McpToolSource, ServerName};
use tool_runtime::mcp::{McpServer, TaskSupport};
use tool_runtime::policy::ToolPolicy;
use tool_runtime::prelude::*;
use tool_runtime::runner::ToolRunner;
use tool_runtime::runtime::{
    Capability, Completion, ElicitRequest, ElicitResponse, Interact, InteractFuture, InteractKind,
    Interactor, Root, SampleRequest,
};
use tool_runtime::store::InMemoryStore;
use tool_tests::fixtures::context;

use super::rounds::{answering, rpc};
use super::serve::Tokens;
use super::support::on_loopback;

/// How many surveys ran to their end.
#[derive(Debug, Clone, Default)]
struct Ran(Arc<AtomicUsize>);

impl Capability for Ran {
    const NAME: &'static str = "ran";
}

#[derive(Debug, Serialize, Deserialize, ToolSchema)]
struct Name {
    name: String,
}

/// Ask the user's name, the model's greeting and the client's roots, all at once.
#[tool(name = "survey__start", effect = read_only, redact = [], capabilities = [Interact, Ran])]
struct Survey {}

impl Tool for Survey {
    type Output = Content;
    async fn run(
        self,
        _: &ToolInvocationContext,
        caps: &ToolCapabilities,
    ) -> Result<Content, ToolError> {
        let interact = caps.get::<Interact>()?;
        let (name, greeting, roots) = tokio::join!(
            interact.elicitation::<Name>("Your name?").key("name").send(),
            interact.sample(SampleRequest::new("Greet them.").max_tokens(20)),
            interact.roots(),
        );
        let name = name?.accepted().map_or_else(|| "nobody".to_owned(), |answer| answer.name);
        let (greeting, roots) = (greeting?.text, roots?);
        caps.get::<Ran>()?.0.fetch_add(1, Ordering::SeqCst);
        let uris: Vec<&str> = roots.iter().map(|root| root.uri.as_str()).collect();
        Ok(Content::new().text(format!("{greeting} {name} in {}", uris.join(","))))
    }
}

/// Ask the user's name when the client takes questions; greet anyway.
#[tool(name = "survey__polite", effect = read_only, redact = [], capabilities = [Interact])]
struct Polite {}

impl Tool for Polite {
    type Output = Content;
    async fn run(
        self,
        _: &ToolInvocationContext,
        caps: &ToolCapabilities,
    ) -> Result<Content, ToolError> {
        let interact = caps.get::<Interact>()?;
        if !interact.offers(InteractKind::Elicit) {
            return Ok(Content::new().text("hello, whoever you are"));
        }
        let name = interact.elicit::<Name>("Your name?").await?.accepted();
        Ok(Content::new().text(format!("hello, {}", name.map_or("nobody".into(), |n| n.name))))
    }
}

/// Ask the user's name, then work a while on it (a task, once the name is known).
#[tool(name = "survey__onboard", effect = read_only, redact = [], capabilities = [Interact, Ran])]
struct Onboard {}

impl Tool for Onboard {
    type Output = Content;
    async fn run(
        self,
        _: &ToolInvocationContext,
        caps: &ToolCapabilities,
    ) -> Result<Content, ToolError> {
        let interact = caps.get::<Interact>()?;
        let name = interact.elicit::<Name>("Your name?").await?.accepted();
        let name = name.map_or_else(|| "nobody".to_owned(), |answer| answer.name);
        tokio::time::sleep(Duration::from_millis(200)).await;
        caps.get::<Ran>()?.0.fetch_add(1, Ordering::SeqCst);
        Ok(Content::new().text(format!("onboarded {name}")))
    }
}

struct Served {
    url: String,
    ran: Ran,
    _shutdown: tokio_util::sync::DropGuard,
}

async fn serve() -> Served {
    let ran = Ran::default();
    let catalog = ToolCatalog::builder()
        .register::<Survey>()
        .register::<Polite>()
        .register::<Onboard>()
        .capability(ran.clone())
        .capability(Interact::unavailable())
        .build()
        .unwrap();
    let runner = ToolRunner::builder(catalog).policy(ToolPolicy::allowing(["survey__*"])).build();
    let server = McpServer::builder(runner)
        .authenticator(Arc::new(Tokens))
        .store(Arc::new(InMemoryStore::new()), StateKey::new(*b"the replicas' shared secret!!!!!"))
        .task("survey__start", TaskSupport::Optional)
        .task("survey__onboard", TaskSupport::Required)
        .ask_before_task("survey__onboard")
        .build();
    let (url, shutdown) = on_loopback(server).await;
    Served { url, ran, _shutdown: shutdown }
}

/// Everything a client can be asked within rounds.
fn takes_all() -> Value {
    json!({"elicitation": {}, "sampling": {}, "roots": {}})
}

async fn call(url: &str, params: Value) -> Value {
    rpc(url, "alice-secret", "tools/call", params, takes_all()).await
}

fn survey() -> Value {
    json!({"name": "survey__start", "arguments": {}})
}

fn name(name: &str) -> Value {
    json!({"action": "accept", "content": {"name": name}})
}

fn completion(text: &str) -> Value {
    json!({"role": "assistant", "content": {"type": "text", "text": text}, "model": "m"})
}

fn roots(uris: &[&str]) -> Value {
    json!({"roots": uris.iter().map(|uri| json!({"uri": uri})).collect::<Vec<_>>()})
}

/// The keys and methods of a round's `inputRequests`.
fn asked(result: &Value) -> Vec<(String, String)> {
    let requests = result["inputRequests"].as_object().unwrap();
    requests.iter().map(|(key, request)| (key.clone(), request["method"].to_string())).collect()
}

#[tokio::test]
async fn a_round_asks_everything_the_call_asked_and_keeps_what_is_answered() {
    let served = serve().await;
    let first = call(&served.url, survey()).await;
    let result = &first["result"];
    assert_eq!(result["resultType"], "input_required", "{first}");
    let methods = [
        ("completion", "\"sampling/createMessage\""),
        ("name", "\"elicitation/create\""),
        ("roots", "\"roots/list\""),
    ];
    let expected: Vec<(String, String)> =
        methods.iter().map(|(k, m)| ((*k).to_owned(), (*m).to_owned())).collect();
    assert_eq!(asked(result), expected);
    let request = &result["inputRequests"]["completion"]["params"];
    assert_eq!(request["messages"][0]["content"]["text"], "Greet them.");
    assert_eq!(request["maxTokens"], 20);

    // The user answers first: the rest is asked again, the answer kept in a new state.
    let state = &result["requestState"];
    let partly = call(&served.url, answering(survey(), state, json!({"name": name("Ann")}))).await;
    let partly = &partly["result"];
    let keys: Vec<String> = asked(partly).into_iter().map(|(key, _)| key).collect();
    assert_eq!(keys, ["completion", "roots"]);
    assert_ne!(&partly["requestState"], state);
    assert_eq!(served.ran.0.load(Ordering::SeqCst), 0, "nothing ran before every answer");

    let rest = json!({"completion": completion("Hello"), "roots": roots(&["file:///srv"])});
    let done = call(&served.url, answering(survey(), &partly["requestState"], rest.clone())).await;
    assert_eq!(done["result"]["content"][0]["text"], "Hello Ann in file:///srv", "{done}");
    assert_eq!(served.ran.0.load(Ordering::SeqCst), 1);

    // The state that was answered in part was spent with it: it runs nothing again.
    let replay = call(&served.url, answering(survey(), state, rest)).await;
    assert_eq!(replay["error"]["code"], -32602, "{replay}");
    assert_eq!(served.ran.0.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn a_response_of_the_wrong_kind_is_refused_and_a_missing_capability_is_named() {
    let served = serve().await;
    let first = call(&served.url, survey()).await;
    let state = &first["result"]["requestState"];
    // The roots answered with an elicitation result.
    let wrong = json!({"name": name("Ann"), "completion": completion("Hi"), "roots": name("x")});
    let refused = call(&served.url, answering(survey(), state, wrong)).await;
    assert_eq!(refused["error"]["code"], -32602, "{refused}");
    let message = refused["error"]["message"].as_str().unwrap();
    assert!(message.contains("`roots`") && message.contains("roots list"), "{message}");

    // A client that takes questions but not completions or roots: the call needs both.
    let params = survey();
    let asked = rpc(&served.url, "alice-secret", "tools/call", params, json!({"elicitation": {}}));
    let asked = asked.await;
    assert_eq!(asked["error"]["code"], -32021, "{asked}");
    let required = &asked["error"]["data"]["requiredCapabilities"];
    assert!(required.get("sampling").is_some() && required.get("roots").is_some(), "{asked}");
    assert!(required.get("elicitation").is_none(), "{asked}");
    assert_eq!(served.ran.0.load(Ordering::SeqCst), 0);
}

#[tokio::test]
async fn a_tool_asks_only_what_the_client_takes() {
    let served = serve().await;
    let polite = json!({"name": "survey__polite", "arguments": {}});
    let bare = rpc(&served.url, "alice-secret", "tools/call", polite.clone(), json!({})).await;
    assert_eq!(bare["result"]["content"][0]["text"], "hello, whoever you are", "{bare}");
    let asking = call(&served.url, polite).await;
    assert_eq!(asking["result"]["resultType"], "input_required", "{asking}");
}

#[tokio::test]
async fn a_task_waits_until_every_request_is_answered_one_update_at_a_time() {
    let served = serve().await;
    let declares = json!({"elicitation": {}, "sampling": {}, "roots": {}, "extensions": {"io.modelcontextprotocol/tasks": {}}});
    let tasks = |method: &'static str, params: Value| {
        rpc(&served.url, "alice-secret", method, params, declares.clone())
    };
    let created = tasks("tools/call", survey()).await;
    let id = created["result"]["taskId"].as_str().unwrap().to_owned();
    let get = || tasks("tasks/get", json!({"taskId": id}));
    let mut got = get().await;
    for _ in 0..100 {
        if got["result"]["status"] == "input_required" {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
        got = get().await;
    }
    let keys = |got: &Value| -> Vec<String> {
        asked(&got["result"]).into_iter().map(|(k, _)| k).collect()
    };
    assert_eq!(keys(&got), ["completion", "name", "roots"], "{got}");

    let update = |responses: Value| {
        tasks("tasks/update", json!({"taskId": id, "inputResponses": responses}))
    };
    let acked = update(json!({"roots": roots(&["file:///a", "file:///b"])})).await;
    assert_eq!(acked["result"]["resultType"], "complete", "{acked}");
    let got = get().await;
    assert_eq!(got["result"]["status"], "input_required");
    assert_eq!(keys(&got), ["completion", "name"], "the answered key is gone");

    update(json!({"name": name("Bo"), "completion": completion("Hi")})).await;
    let mut done = get().await;
    for _ in 0..100 {
        if done["result"]["status"] != "working" && done["result"]["status"] != "input_required" {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
        done = get().await;
    }
    assert_eq!(done["result"]["status"], "completed", "{done}");
    let text = &done["result"]["result"]["content"][0]["text"];
    assert_eq!(text, "Hi Bo in file:///a,file:///b");
    assert_eq!(served.ran.0.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn a_task_that_asks_first_asks_in_rounds_then_runs_as_a_task() {
    let served = serve().await;
    let declares = json!({"elicitation": {}, "extensions": {"io.modelcontextprotocol/tasks": {}}});
    let send = |method: &'static str, params: Value| {
        rpc(&served.url, "alice-secret", method, params, declares.clone())
    };
    let onboard = json!({"name": "survey__onboard", "arguments": {}});
    let first = send("tools/call", onboard.clone()).await;
    let round = &first["result"];
    assert_eq!(round["resultType"], "input_required", "{first}");
    assert!(round.get("taskId").is_none(), "no task before the call has what it asks");

    let answered =
        answering(onboard.clone(), &round["requestState"], json!({"question": name("Cy")}));
    let created = send("tools/call", answered).await;
    let created = &created["result"];
    assert_eq!(created["resultType"], "task", "{created}");
    assert!(created.get("requestState").is_none() && created.get("inputRequests").is_none());
    let id = created["taskId"].as_str().unwrap().to_owned();
    let mut got = send("tasks/get", json!({"taskId": id})).await;
    for _ in 0..100 {
        if got["result"]["status"] == "completed" {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
        got = send("tasks/get", json!({"taskId": id})).await;
    }
    assert_eq!(got["result"]["result"]["content"][0]["text"], "onboarded Cy", "{got}");
    assert_eq!(served.ran.0.load(Ordering::SeqCst), 1);

    // A client that takes no tasks cannot have it (the task is required).
    let refused =
        rpc(&served.url, "alice-secret", "tools/call", onboard, json!({"elicitation": {}}));
    assert_eq!(refused.await["error"]["code"], -32021);
}

/// A user at a screen with a model at hand and a project open: answers everything.
#[derive(Debug, Default)]
struct Everything(std::sync::Mutex<Vec<String>>);

impl Interactor for Everything {
    fn elicit(&self, request: ElicitRequest) -> InteractFuture<'_, ElicitResponse> {
        self.0.lock().unwrap().push(format!("asked {}", request.message));
        Box::pin(async { Ok(ElicitResponse::Accept(json!({"name": "Dee"}))) })
    }

    fn sample(&self, request: SampleRequest) -> InteractFuture<'_, Completion> {
        self.0.lock().unwrap().push(format!("sampled {}", request.messages[0].text));
        Box::pin(async {
            Ok(Completion { text: "Welcome".into(), model: None, stop_reason: None })
        })
    }

    fn roots(&self) -> InteractFuture<'_, Vec<Root>> {
        Box::pin(async { Ok(vec![Root::new("file:///work").name("work")]) })
    }

    fn offers(&self, _: InteractKind) -> bool {
        true
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_imported_round_asks_the_importing_calls_user_its_model_and_its_roots() {
    let served = serve().await;
    let config = StreamableHttpClientTransportConfig::with_uri(served.url.clone())
        .auth_header("alice-secret");
    let transport = StreamableHttpClientTransport::from_config(config);
    let name = ServerName::new("survey").unwrap();
    let source = McpToolSource::connect(name, transport, McpImportOptions::new()).await.unwrap();
    let catalog = ToolCatalog::builder()
        .source(Arc::new(source))
        .capability(Interact::unavailable())
        .build()
        .unwrap();
    let policy = ToolPolicy::allowing(["mcp__survey__survey__start"]);
    let runner = ToolRunner::builder(catalog).policy(policy).build();
    let user = Arc::new(Everything::default());
    let ctx = context("run-1", "ana", "acme").with_interactor(user.clone());
    let result = runner.exec("mcp__survey__survey__start", json!({}), &ctx).await;
    let parts = result.output().unwrap_or_else(|| panic!("{result:?}")).parts();
    assert_eq!(parts, [Part::Text("Welcome Dee in file:///work".into())]);
    let asked = user.0.lock().unwrap().clone();
    assert_eq!(asked, ["sampled Greet them.", "asked Your name?"], "one round, in key order");
    assert_eq!(served.ran.0.load(Ordering::SeqCst), 1);
}
