//! Serving a catalog over MCP, driven by an rmcp client: `tools/list` (order, annotations,
//! narrowed output schemas), `tools/call` (structured results, tool errors, protocol errors),
//! progress notifications, cancellation reaching the running tool, and Streamable HTTP.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Value, json};
use tokio::sync::Notify;
use tool_runtime::catalog::ToolCatalog;
use tool_runtime::mcp::McpServer;
use tool_runtime::mcp::ToolHints;
use tool_runtime::mcp::rmcp::model::{CallToolRequestParams, ProgressNotificationParam};
use tool_runtime::mcp::rmcp::service::{NotificationContext, RoleClient, RunningService};
use tool_runtime::mcp::rmcp::transport::StreamableHttpClientTransport;
use tool_runtime::mcp::rmcp::{ClientHandler, ServiceError, ServiceExt};
use tool_runtime::policy::ToolPolicy;
use tool_runtime::prelude::*;
use tool_runtime::runner::ToolRunner;
use tool_runtime::runtime::{Capability, CollectingSink, Progress, ProgressReporter, ToolEvent};
use tool_tests::fixtures::context;

/// Count to `to`, reporting each step.
#[tool(name = "test__count", effect = read_only, redact = ["count"])]
struct Count {
    #[schema(range(min = 1, max = 10))]
    to: u8,
}

#[derive(Serialize, ToolSchema)]
struct Counted {
    count: u8,
    internal: String,
}

impl Tool for Count {
    type Output = Counted;
    async fn run(
        self,
        ctx: &ToolInvocationContext,
        _: &ToolCapabilities,
    ) -> Result<Counted, ToolError> {
        for step in 1..=self.to {
            ctx.report_progress(
                f64::from(step),
                Some(f64::from(self.to)),
                format!("counted {step}"),
            );
        }
        Ok(Counted { count: self.to, internal: "not for clients".into() })
    }
}

/// What a test sees of its server's `test__wait` calls: a start, and at the drop of the running
/// tool whether its cancellation token had fired. Each server is given its own.
#[derive(Default)]
struct WaitProbe {
    started: Notify,
    dropped: Notify,
    cancelled_at_drop: Mutex<Option<bool>>,
}

impl Capability for WaitProbe {
    const NAME: &'static str = "wait_probe";
}

/// Records, when the running tool is dropped, whether its cancellation token had fired.
struct DropProbe<'a>(ToolInvocationContext, &'a WaitProbe);

impl Drop for DropProbe<'_> {
    fn drop(&mut self) {
        *self.1.cancelled_at_drop.lock().unwrap() = Some(self.0.cancellation().is_cancelled());
        self.1.dropped.notify_one();
    }
}

/// Wait until cancelled.
#[tool(name = "test__wait", effect = read_only, redact = [], capabilities = [WaitProbe])]
struct Wait {
    seconds: u8,
}

impl Tool for Wait {
    type Output = Counted;
    async fn run(
        self,
        ctx: &ToolInvocationContext,
        caps: &ToolCapabilities,
    ) -> Result<Counted, ToolError> {
        let probe = caps.get::<WaitProbe>()?;
        let _probe = DropProbe(ctx.clone(), probe);
        probe.started.notify_one();
        tokio::time::sleep(Duration::from_secs(u64::from(self.seconds))).await;
        Ok(Counted { count: 0, internal: String::new() })
    }
}

/// Append a line to the log.
#[tool(name = "test__append", effect = state_change, redact = ["count"])]
struct Append {
    line: String,
}

impl Tool for Append {
    type Output = Counted;
    async fn run(
        self,
        _: &ToolInvocationContext,
        _: &ToolCapabilities,
    ) -> Result<Counted, ToolError> {
        if self.line == "boom" {
            return Err(ToolError::new("the log is full"));
        }
        Ok(Counted { count: 1, internal: self.line })
    }
}

/// Send a message to someone.
#[tool(name = "test__send", effect = external_side_effect, redact = [])]
struct Send {
    to: String,
}

impl Tool for Send {
    type Output = Counted;
    async fn run(
        self,
        _: &ToolInvocationContext,
        _: &ToolCapabilities,
    ) -> Result<Counted, ToolError> {
        Ok(Counted { count: 1, internal: self.to })
    }
}

/// Not allowed by the policy.
#[tool(name = "other__secret", effect = read_only, redact = [])]
struct Secret {}

impl Tool for Secret {
    type Output = Counted;
    async fn run(
        self,
        _: &ToolInvocationContext,
        _: &ToolCapabilities,
    ) -> Result<Counted, ToolError> {
        Ok(Counted { count: 0, internal: String::new() })
    }
}

fn test_server() -> McpServer {
    probed_server(&Arc::default())
}

/// The test server, its `test__wait` calls reporting to `probe`.
fn probed_server(probe: &Arc<WaitProbe>) -> McpServer {
    let catalog = ToolCatalog::builder()
        .shared_capability(Arc::clone(probe))
        .register::<Wait>()
        .register::<Count>()
        .register::<Send>()
        .register::<Append>()
        .register::<Secret>()
        .build()
        .unwrap();
    let policy =
        ToolPolicy::from_json(r#"{"allowed_tools": ["test__*"], "require_approval": []}"#).unwrap();
    let runner = ToolRunner::builder(catalog).policy(policy).build();
    McpServer::builder(runner).hints("test__append", ToolHints::new().destructive(false)).build()
}

/// A client that forwards progress notifications to a channel.
#[derive(Clone)]
struct ProgressClient(tokio::sync::mpsc::UnboundedSender<ProgressNotificationParam>);

impl ClientHandler for ProgressClient {
    async fn on_progress(
        &self,
        params: ProgressNotificationParam,
        _: NotificationContext<RoleClient>,
    ) {
        let _ = self.0.send(params);
    }
}

type Client = RunningService<RoleClient, ProgressClient>;

async fn connect(
    server: McpServer,
) -> (Client, tokio::sync::mpsc::UnboundedReceiver<ProgressNotificationParam>) {
    let (client_io, server_io) = tokio::io::duplex(64 * 1024);
    tokio::spawn(async move {
        if let Ok(running) = server.serve(server_io).await {
            let _ = running.waiting().await;
        }
    });
    let (sender, receiver) = tokio::sync::mpsc::unbounded_channel();
    let client = ProgressClient(sender).serve(client_io).await.unwrap();
    (client, receiver)
}

fn call(name: &str, arguments: Value) -> CallToolRequestParams {
    let Value::Object(arguments) = arguments else { panic!("arguments are an object") };
    CallToolRequestParams::new(name.to_owned()).with_arguments(arguments)
}

#[tokio::test]
async fn list_is_ordered_with_explicit_hints_and_redacted_output_schemas() {
    let (client, _) = connect(test_server()).await;
    let tools = client.list_all_tools().await.unwrap();
    let names: Vec<&str> = tools.iter().map(|tool| tool.name.as_ref()).collect();
    assert_eq!(names, ["test__append", "test__count", "test__send", "test__wait"]);
    let hints: Vec<Value> =
        tools.iter().map(|tool| serde_json::to_value(&tool.annotations).unwrap()).collect();
    assert_eq!(
        hints,
        [
            json!({"readOnlyHint": false, "destructiveHint": false, "idempotentHint": false, "openWorldHint": false}),
            json!({"readOnlyHint": true, "destructiveHint": false, "idempotentHint": true, "openWorldHint": false}),
            json!({"readOnlyHint": false, "destructiveHint": true, "idempotentHint": false, "openWorldHint": true}),
            json!({"readOnlyHint": true, "destructiveHint": false, "idempotentHint": true, "openWorldHint": false}),
        ]
    );
    let count = &tools[1];
    assert_eq!(
        Value::Object((*count.input_schema).clone()),
        Count::spec().input_schema().to_json()
    );
    let output = Value::Object((**count.output_schema.as_ref().unwrap()).clone());
    assert_eq!(output["properties"].as_object().unwrap().keys().collect::<Vec<_>>(), ["count"]);
    assert_eq!(output["required"], json!(["count"]));
    // A tool that lets nothing through promises an empty object.
    let send = Value::Object((**tools[2].output_schema.as_ref().unwrap()).clone());
    assert_eq!(send["properties"], json!({}));
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn a_client_tool_is_neither_listed_nor_called_over_mcp() {
    use tool_runtime::runtime::{ClientTool, DynamicTool};
    let pick = ClientTool::new(
        DynamicTool::builder(
            "test__pick_date",
            "Ask the user for a date.",
            json!({"type": "object", "properties": {}, "additionalProperties": false}),
        )
        .effect(ToolEffect::ReadOnly)
        .redact_all(),
    )
    .unwrap();
    let catalog = ToolCatalog::builder()
        .register::<Count>()
        .register_bound(Arc::new(pick), "the date picker".into())
        .build()
        .unwrap();
    let policy = ToolPolicy::from_json(r#"{"allowed_tools": ["test__*"]}"#).unwrap();
    let server = McpServer::builder(ToolRunner::builder(catalog).policy(policy).build()).build();
    assert_eq!(server.tools().len(), 1);
    let (client, _) = connect(server).await;
    let tools = client.list_all_tools().await.unwrap();
    let names: Vec<&str> = tools.iter().map(|tool| tool.name.as_ref()).collect();
    assert_eq!(names, ["test__count"]);
    let refused = client.call_tool(call("test__pick_date", json!({}))).await.unwrap_err();
    let ServiceError::McpError(error) = refused else { panic!("{refused:?}") };
    assert_eq!(error.code.0, -32602);
    assert!(error.message.contains("unknown tool `test__pick_date`"), "{}", error.message);
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn calls_return_structured_content_tool_errors_and_protocol_errors() {
    let (client, _) = connect(test_server()).await;

    let ok = client.call_tool(call("test__append", json!({"line": "hello"}))).await.unwrap();
    assert_eq!(ok.is_error, Some(false));
    assert_eq!(ok.structured_content, Some(json!({"count": 1})));
    let text = ok.content[0].as_text().unwrap().text.clone();
    assert_eq!(serde_json::from_str::<Value>(&text).unwrap(), json!({"count": 1}));

    let failed = client.call_tool(call("test__append", json!({"line": "boom"}))).await.unwrap();
    assert_eq!(failed.is_error, Some(true));
    assert_eq!(failed.structured_content, None);
    assert_eq!(failed.content[0].as_text().unwrap().text, "the log is full");

    let invalid =
        client.call_tool(call("test__count", json!({"to": 11, "extra": true}))).await.unwrap();
    assert_eq!(invalid.is_error, Some(true));
    let message = &invalid.content[0].as_text().unwrap().text;
    assert!(message.contains("/to") && message.contains("extra"), "{message}");

    for unknown in ["other__secret", "nobody__home"] {
        match client.call_tool(call(unknown, json!({}))).await {
            Err(ServiceError::McpError(error)) => {
                assert_eq!(error.code.0, -32602);
                assert_eq!(error.message, format!("unknown tool `{unknown}`"));
            }
            other => panic!("{unknown}: expected a protocol error, got {other:?}"),
        }
    }
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn progress_reports_become_progress_notifications() {
    let (client, mut progress) = connect(test_server()).await;
    let result = client.call_tool(call("test__count", json!({"to": 3}))).await.unwrap();
    assert_eq!(result.structured_content, Some(json!({"count": 3})));
    let mut seen = Vec::new();
    while seen.len() < 3 {
        let report =
            tokio::time::timeout(Duration::from_secs(5), progress.recv()).await.unwrap().unwrap();
        seen.push((report.progress, report.total, report.message));
    }
    assert_eq!(
        seen,
        [
            (1.0, Some(3.0), Some("counted 1".to_owned())),
            (2.0, Some(3.0), Some("counted 2".to_owned())),
            (3.0, Some(3.0), Some("counted 3".to_owned())),
        ]
    );
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn client_cancellation_reaches_the_running_tool() {
    let probe = Arc::new(WaitProbe::default());
    let (client, _) = connect(probed_server(&probe)).await;
    {
        let pending = client.call_tool(call("test__wait", json!({"seconds": 60})));
        tokio::pin!(pending);
        tokio::select! {
            result = &mut pending => panic!("the call finished early: {result:?}"),
            () = probe.started.notified() => {}
        }
        // Dropping the request makes rmcp send `notifications/cancelled`.
    }
    // A guard against a hang, not a time limit: the 60 s tool is dropped when cancelled.
    let dropped = tokio::time::timeout(Duration::from_secs(30), probe.dropped.notified()).await;
    assert!(dropped.is_ok(), "the tool was not stopped");
    let cancelled = probe.cancelled_at_drop.lock().unwrap().expect("recorded at the drop");
    assert!(cancelled, "the tool's cancellation token fired before it was dropped");
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn streamable_http_serves_the_example_app() {
    let server = examples::mcp::server(
        tool_runtime::runtime::Clock::system(),
        examples::tickets::TicketStore::new(),
        Arc::new(tool_runtime::runtime::NullSink),
    )
    .unwrap();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    let shutdown = tokio_util::sync::CancellationToken::new();
    let serving = tokio::spawn(server.serve_http(listener, shutdown.clone()));

    let transport = StreamableHttpClientTransport::from_uri(format!("http://{address}/mcp"));
    let client = ().serve(transport).await.unwrap();
    let names: Vec<String> = client
        .list_all_tools()
        .await
        .unwrap()
        .into_iter()
        .map(|tool| tool.name.into_owned())
        .collect();
    assert_eq!(names, ["core__get_current_time", "docs__search", "tickets__create_ticket"]);
    let result = client
        .call_tool(call("core__get_current_time", json!({"timezone": "Asia/Tokyo"})))
        .await
        .unwrap();
    let structured = result.structured_content.unwrap();
    assert_eq!(structured["timezone"], "Asia/Tokyo");
    assert!(structured["iso8601"].as_str().unwrap().ends_with("+09:00"));
    client.cancel().await.unwrap();

    shutdown.cancel();
    tokio::time::timeout(Duration::from_secs(5), serving).await.unwrap().unwrap().unwrap();
}

/// The runner reports progress as events and also to the reporter the caller put on the
/// context (how the MCP server hears about it).
#[tokio::test]
async fn runner_chains_the_callers_progress_reporter() {
    let catalog = ToolCatalog::builder().register::<Count>().build().unwrap();
    let events = CollectingSink::new();
    let runner = ToolRunner::builder(catalog)
        .policy(ToolPolicy::from_json(r#"{"allowed_tools": ["test__*"]}"#).unwrap())
        .event_sink(Arc::new(events.clone()))
        .build();
    let heard = Arc::new(Mutex::new(Vec::new()));
    let sink = Arc::clone(&heard);
    let ctx = context("run", "actor", "tenant").with_progress(ProgressReporter::new(
        move |progress: Progress| sink.lock().unwrap().push(progress),
    ));
    let result = runner.exec("test__count", br#"{"to": 2}"#, &ctx).await;
    assert_eq!(result.value(), Some(&json!({"count": 2})));
    let heard: Vec<(f64, Option<String>)> =
        heard.lock().unwrap().iter().map(|p| (p.progress, p.message.clone())).collect();
    assert_eq!(heard, [(1.0, Some("counted 1".to_owned())), (2.0, Some("counted 2".to_owned()))]);
    let events = events.events();
    let progress_events =
        events.iter().filter(|event| matches!(event, ToolEvent::ToolCallProgress { .. })).count();
    assert_eq!(progress_events, 2);
}

/// Bearer tokens of a fixed table: `alice-secret` is alice of acme, `carol-secret` carol of
/// acme too, `bob-secret` bob of globex.
#[derive(Debug)]
pub(super) struct Tokens;

#[async_trait::async_trait]
impl tool_runtime::mcp::Authenticator for Tokens {
    async fn authenticate(
        &self,
        request: &tool_runtime::mcp::http::request::Parts,
    ) -> Result<ToolInvocationContext, tool_runtime::mcp::Unauthorized> {
        let token = request.headers.get("authorization").and_then(|value| value.to_str().ok());
        let (tenant, actor) = match token {
            Some("Bearer alice-secret") => ("acme", "alice"),
            Some("Bearer carol-secret") => ("acme", "carol"),
            Some("Bearer bob-secret") => ("globex", "bob"),
            Some(_) => return Err(tool_runtime::mcp::Unauthorized::new("the token is not known")),
            None => return Err(tool_runtime::mcp::Unauthorized::new("a bearer token is required")),
        };
        Ok(context("mcp", actor, tenant))
    }
}

/// Says who calls.
#[tool(name = "test__whoami", effect = read_only, redact = ["tenant", "actor"])]
struct WhoAmI {}

#[derive(Serialize, ToolSchema)]
struct Me {
    tenant: String,
    actor: String,
}

impl Tool for WhoAmI {
    type Output = Me;
    async fn run(self, ctx: &ToolInvocationContext, _: &ToolCapabilities) -> Result<Me, ToolError> {
        Ok(Me { tenant: ctx.tenant_id().to_owned(), actor: ctx.actor_id().to_owned() })
    }
}

#[tokio::test]
async fn an_authenticator_names_each_http_caller_and_refuses_the_others_with_401() {
    use tool_runtime::mcp::rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;

    let catalog = ToolCatalog::builder().register::<WhoAmI>().build().unwrap();
    let policy = ToolPolicy::allowing(["test__whoami"]);
    let server = McpServer::builder(ToolRunner::builder(catalog).policy(policy).build())
        .authenticator(Arc::new(Tokens))
        .build();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    let shutdown = tokio_util::sync::CancellationToken::new();
    let serving = tokio::spawn(server.serve_http(listener, shutdown.clone()));
    let url = format!("http://{address}/mcp");

    // No token, or an unknown one: 401 before anything else, saying why.
    let http = reqwest::Client::new();
    let initialize = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}});
    for token in [None, Some("Bearer mallory")] {
        let mut request = http
            .post(&url)
            .header("accept", "application/json, text/event-stream")
            .json(&initialize);
        if let Some(token) = token {
            request = request.header("authorization", token);
        }
        let refused = request.send().await.unwrap();
        assert_eq!(refused.status(), 401, "{token:?}");
        assert_eq!(refused.headers()["www-authenticate"], "Bearer");
        let body: Value = refused.json().await.unwrap();
        let expected =
            if token.is_some() { "the token is not known" } else { "a bearer token is required" };
        assert_eq!(body["error"], expected);
    }
    let anonymous = ().serve(StreamableHttpClientTransport::from_uri(url.clone())).await;
    assert!(anonymous.is_err(), "a client without a token got a session");

    // Each caller's calls run as that caller.
    for (token, tenant, actor) in
        [("alice-secret", "acme", "alice"), ("bob-secret", "globex", "bob")]
    {
        let config = StreamableHttpClientTransportConfig::with_uri(url.clone()).auth_header(token);
        let client = ().serve(StreamableHttpClientTransport::from_config(config)).await.unwrap();
        let result = client.call_tool(call("test__whoami", json!({}))).await.unwrap();
        assert_eq!(result.structured_content.unwrap(), json!({"tenant": tenant, "actor": actor}));
        client.cancel().await.unwrap();
    }
    shutdown.cancel();
    tokio::time::timeout(Duration::from_secs(5), serving).await.unwrap().unwrap().unwrap();
}
