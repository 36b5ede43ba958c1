//! Importing MCP tools as untrusted dynamic tools, from an rmcp test server with good,
//! forbidden-schema and awkwardly named tools; and, round trip, from our own example server
//! over stdio (a child process) and Streamable HTTP.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::support::ctx;
use serde_json::{Value, json};
use tokio::sync::Notify;
use tool_runtime::catalog::{ToolCatalog, ToolSource, visible_tools};
use tool_runtime::content::Part;
use tool_runtime::mcp::rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, JsonObject,
    ListToolsResult, PaginatedRequestParams, ProgressNotificationParam, ServerCapabilities,
    ServerConfig, Tool, ToolAnnotations,
};
use tool_runtime::mcp::rmcp::service::{RequestContext, RoleServer, RunningService};
use tool_runtime::mcp::rmcp::{ErrorData, ServerHandler, ServiceExt};
use tool_runtime::mcp::{
    McpImportOptions, McpToolSource, RefusalReason, ServerName, imported_tool_name,
};
use tool_runtime::policy::ToolPolicy;
use tool_runtime::prelude::*;
use tool_runtime::runner::ToolRunner;
use tool_runtime::runtime::{Progress, ProgressReporter, ToolErrorCode};
use tool_runtime::spec::check_tool_name;

const LONG: &str = "create_a_very_long_tool_name_that_goes_well_past_what_providers_accept";
const DOTTED: &str = "issues.create";

fn obj(value: Value) -> Arc<JsonObject> {
    match value {
        Value::Object(map) => Arc::new(map),
        other => panic!("not an object: {other}"),
    }
}

fn text_input() -> Arc<JsonObject> {
    obj(json!({
        "type": "object",
        "properties": {"text": {"type": "string", "maxLength": 20}},
        "required": ["text"],
        "additionalProperties": false
    }))
}

fn closed_world() -> ToolAnnotations {
    ToolAnnotations::new().open_world(false)
}

/// The upstream server's tools, in the order it lists them.
fn upstream_tools() -> Vec<Tool> {
    let empty = obj(json!({"type": "object", "properties": {}, "additionalProperties": false}));
    vec![
        Tool::new("echo", "Echo the text.", text_input())
            .with_raw_output_schema(obj(json!({
                "type": "object",
                "properties": {"text": {"type": "string"}, "secret": {"type": "string"}},
                "required": ["text", "secret"]
            })))
            .with_annotations(closed_world().read_only(true)),
        Tool::new("lookup", "Look something up.", text_input()),
        Tool::new(
            "union_arg",
            "Takes an id of either type.",
            obj(
                json!({"type": "object", "properties": {"id": {"anyOf": [{"type": "string"}, {"type": "integer"}]}}}),
            ),
        ),
        Tool::new(
            "ref_arg",
            "Uses a definition.",
            obj(
                json!({"type": "object", "properties": {"x": {"$ref": "#/$defs/x"}}, "$defs": {"x": {"type": "string"}}}),
            ),
        ),
        Tool::new(
            "connection_arg",
            "Takes the connection as an argument.",
            obj(json!({"type": "object", "properties": {"connectionId": {"type": "string"}}})),
        ),
        Tool::new("bad_output_schema", "Output is a union.", Arc::clone(&empty))
            .with_raw_output_schema(obj(
                json!({"type": "object", "properties": {"v": {"oneOf": []}}}),
            )),
        Tool::new(LONG, "A tool with a long name.", Arc::clone(&empty))
            .with_annotations(closed_world()),
        Tool::new(DOTTED, "A tool with a dotted name.", Arc::clone(&empty)),
        Tool::new("writer", "Writes.", text_input()).with_annotations(closed_world()),
        Tool::new("wrong_output", "Breaks its promise.", Arc::clone(&empty))
            .with_raw_output_schema(obj(json!({
                "type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]
            }))),
        Tool::new("fails", "Always fails.", Arc::clone(&empty)),
        Tool::new("slow", "Waits until cancelled.", Arc::clone(&empty)),
        Tool::new("progress", "Reports progress.", empty).with_raw_output_schema(obj(json!({
            "type": "object", "properties": {"done": {"type": "boolean"}}, "required": ["done"]
        }))),
    ]
}

/// An rmcp server that records what it is asked.
#[derive(Clone)]
struct Upstream {
    tools: Arc<Mutex<Vec<Tool>>>,
    calls: Arc<Mutex<Vec<(String, Value)>>>,
    /// Told when a `slow` call starts, and when one was cancelled by the client.
    slow_started: Arc<Notify>,
    slow_cancelled: Arc<Notify>,
}

impl ServerHandler for Upstream {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(
            ServerCapabilities::builder().enable_tools().enable_tool_list_changed().build(),
        )
    }

    async fn list_tools(
        &self,
        _: Option<PaginatedRequestParams>,
        _: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(self.tools.lock().unwrap().clone()))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let args = Value::Object(request.arguments.clone().unwrap_or_default());
        self.calls.lock().unwrap().push((request.name.to_string(), args.clone()));
        let result = match request.name.as_ref() {
            "echo" => {
                CallToolResult::structured(json!({"text": args["text"], "secret": "s3cr3t-token"}))
            }
            "wrong_output" => CallToolResult::structured(json!({"n": "not a number"})),
            "fails" => {
                CallToolResult::error(vec![ContentBlock::text("stack trace: /etc/upstream/secret")])
            }
            "slow" => {
                self.slow_started.notify_one();
                context.ct.cancelled().await;
                self.slow_cancelled.notify_one();
                CallToolResult::error(vec![ContentBlock::text("cancelled")])
            }
            "progress" => {
                let token =
                    context.meta.get_progress_token().expect("the importer asks for progress");
                for step in 1..=2 {
                    let mut report = ProgressNotificationParam::new(token.clone(), f64::from(step));
                    report.total = Some(2.0);
                    report.message = Some(format!("step {step}"));
                    context.peer.notify_progress(report).await.unwrap();
                }
                CallToolResult::structured(json!({"done": true}))
            }
            name => CallToolResult::success(vec![ContentBlock::text(format!("ran {name}"))]),
        };
        Ok(result.into())
    }
}

struct Harness {
    upstream: Upstream,
    server: RunningService<RoleServer, Upstream>,
    source: McpToolSource,
}

fn server_name() -> ServerName {
    ServerName::new("up").unwrap()
}

fn id(tool: &str) -> String {
    imported_tool_name(&server_name(), tool)
}

async fn import(options: McpImportOptions) -> Harness {
    let upstream = Upstream {
        tools: Arc::new(Mutex::new(upstream_tools())),
        calls: Arc::default(),
        slow_started: Arc::default(),
        slow_cancelled: Arc::default(),
    };
    let (client_io, server_io) = tokio::io::duplex(64 * 1024);
    let serving = tokio::spawn(upstream.clone().serve(server_io));
    let source = McpToolSource::connect(server_name(), client_io, options).await.unwrap();
    let server = serving.await.unwrap().unwrap();
    Harness { upstream, server, source }
}

fn runner(source: &McpToolSource, policy: &str) -> ToolRunner {
    let catalog = ToolCatalog::builder().source(Arc::new(source.clone())).build().unwrap();
    ToolRunner::builder(catalog).policy(ToolPolicy::from_json(policy).unwrap()).build()
}

fn allow(ids: &[&str]) -> String {
    let ids: Vec<String> = ids.iter().map(|tool| id(tool)).collect();
    // Imported tools are side effects unless their hints say otherwise: these tests run them
    // without approval, explicitly.
    json!({"allowed_tools": ids, "require_approval": []}).to_string()
}

#[tokio::test]
async fn forbidden_schemas_are_refused_with_reasons_and_names_are_shortened() {
    let harness = import(McpImportOptions::new()).await;
    let refused = harness.source.refused();
    let names: Vec<&str> = refused.iter().map(|tool| tool.name.as_str()).collect();
    assert_eq!(names, ["union_arg", "ref_arg", "connection_arg", "bad_output_schema"]);
    let reasons: Vec<String> = refused.iter().map(|tool| tool.reason.to_string()).collect();
    assert!(reasons[0].starts_with("input schema: /properties/id/anyOf:"), "{}", reasons[0]);
    assert!(reasons[1].starts_with("input schema: /"), "{}", reasons[1]);
    assert!(
        reasons[2].starts_with("input schema: /properties/connectionId: a connection id property"),
        "{}",
        reasons[2]
    );
    assert!(reasons[3].starts_with("output schema: /properties/v/oneOf:"), "{}", reasons[3]);
    assert!(matches!(refused[0].reason, RefusalReason::Definition(_)));
    assert_eq!(
        refused[0].to_string(),
        format!("`union_arg` (`mcp__up__union_arg`): {}", reasons[0])
    );

    let mut ids: Vec<String> =
        harness.source.tools().iter().map(|tool| tool.name().to_owned()).collect();
    ids.sort();
    let mut expected: Vec<String> =
        ["echo", "lookup", LONG, DOTTED, "writer", "wrong_output", "fails", "slow", "progress"]
            .map(id)
            .to_vec();
    expected.sort();
    assert_eq!(ids, expected);
    for tool_id in &ids {
        assert!(check_tool_name(tool_id).is_ok(), "{tool_id}");
    }
    let long = id(LONG);
    assert_eq!(long.len(), 64);
    assert!(long.starts_with("mcp__up__create_a_very_long_tool_name"), "{long}");
    assert!(id(DOTTED).starts_with("mcp__up__issues_create_"));
}

#[tokio::test]
async fn effects_come_from_annotations_most_cautious_first() {
    let harness = import(McpImportOptions::new()).await;
    let effect = |tool: &str| harness.source.get(&id(tool)).unwrap().effect();
    assert_eq!(effect("echo"), ToolEffect::ReadOnly);
    assert_eq!(effect("writer"), ToolEffect::StateChange);
    assert_eq!(effect(LONG), ToolEffect::StateChange);
    assert_eq!(effect("lookup"), ToolEffect::ExternalSideEffect);
}

#[tokio::test]
async fn only_exact_ids_make_imported_tools_visible_or_runnable() {
    let harness = import(McpImportOptions::new()).await;
    let catalog = ToolCatalog::builder().source(Arc::new(harness.source.clone())).build().unwrap();
    // A wildcard over imported tools would allow nothing: it is refused when the policy is built.
    for wildcard in [r#"{"allowed_tools": ["mcp__*"]}"#, r#"{"allowed_tools": ["mcp__up__*"]}"#] {
        assert!(ToolPolicy::from_json(wildcard).is_err(), "{wildcard}");
    }
    let policy = ToolPolicy::from_json(&allow(&["echo"])).unwrap();
    let visible: Vec<String> =
        visible_tools(&catalog, &policy, &ctx()).names().map(str::to_owned).collect();
    assert_eq!(visible, [id("echo")]);

    let denied = runner(&harness.source, &allow(&["echo"]))
        .exec(&id("lookup"), br#"{"text": "x"}"#, &ctx())
        .await;
    assert_eq!(denied.error_code(), Some(ToolErrorCode::PolicyDenied));
    assert!(harness.upstream.calls.lock().unwrap().is_empty());
}

#[tokio::test]
async fn arguments_are_validated_before_anything_is_sent() {
    let harness = import(McpImportOptions::new().redact(id("echo"), ["text"])).await;
    let runner = runner(&harness.source, &allow(&["echo"]));
    for bad in [
        r#"{"text": 5}"#,
        r#"{"text": "x", "extra": 1}"#,
        r#"{"text": "longer than twenty characters"}"#,
        "{}",
    ] {
        let result = runner.exec(&id("echo"), bad.as_bytes(), &ctx()).await;
        assert_eq!(result.error_code(), Some(ToolErrorCode::Validation), "{bad}");
    }
    assert!(harness.upstream.calls.lock().unwrap().is_empty());
    let result = runner.exec(&id("echo"), br#"{"text": "hi"}"#, &ctx()).await;
    assert_eq!(result.value(), Some(&json!({"text": "hi"})));
    assert_eq!(
        *harness.upstream.calls.lock().unwrap(),
        [("echo".to_owned(), json!({"text": "hi"}))]
    );
}

#[tokio::test]
async fn redaction_lets_nothing_through_unless_allowlisted() {
    let plain = import(McpImportOptions::new()).await;
    let policy = allow(&["echo", "lookup"]);
    let result =
        runner(&plain.source, &policy).exec(&id("echo"), br#"{"text": "hi"}"#, &ctx()).await;
    assert_eq!(result.value(), Some(&json!({})));
    // Without an output schema there is no structured value to redact: the server's content
    // blocks are parts.
    let result =
        runner(&plain.source, &policy).exec(&id("lookup"), br#"{"text": "hi"}"#, &ctx()).await;
    assert_eq!(result.value(), None);
    let parts = result.output().map(|output| output.parts().to_vec());
    assert_eq!(parts, Some(vec![Part::Text("ran lookup".into())]));

    let options = McpImportOptions::new().redact(id("echo"), ["text"]);
    let allowed = import(options).await;
    let runner = runner(&allowed.source, &policy);
    let echoed = runner.exec(&id("echo"), br#"{"text": "hi"}"#, &ctx()).await;
    assert_eq!(echoed.value(), Some(&json!({"text": "hi"})), "the secret stays behind");

    // A redaction path the output schema does not have refuses the tool, with the reason.
    let typo = import(McpImportOptions::new().redact(id("echo"), ["txt"])).await;
    let refused = typo.source.refused();
    let echo = refused.iter().find(|tool| tool.name == "echo").expect("echo is refused");
    assert_eq!(echo.reason.to_string(), "`redact` entry `txt` names no field of the output schema");
}

#[tokio::test]
async fn outputs_are_validated_and_failures_stay_opaque() {
    let harness = import(McpImportOptions::new()).await;
    let runner = runner(&harness.source, &allow(&["wrong_output", "fails"]));
    let wrong = runner.exec(&id("wrong_output"), b"{}", &ctx()).await;
    assert_eq!(wrong.error_code(), Some(ToolErrorCode::OutputValidation));
    let failed = runner.exec(&id("fails"), b"{}", &ctx()).await;
    assert_eq!(failed.error_code(), Some(ToolErrorCode::Execution));
    let message = &failed.error().unwrap().message;
    assert_eq!(message, "the MCP tool reported an error");
}

#[tokio::test]
async fn shortened_ids_dispatch_with_the_original_name() {
    let harness = import(McpImportOptions::new()).await;
    let runner = runner(&harness.source, &allow(&[LONG, DOTTED]));
    for (tool, name) in [(LONG, LONG), (DOTTED, DOTTED)] {
        let result = runner.exec(&id(tool), b"{}", &ctx()).await;
        assert!(result.is_ok(), "{tool}: {:?}", result.outcome);
        assert_eq!(harness.upstream.calls.lock().unwrap().last().unwrap().0, name);
    }
}

#[tokio::test]
async fn list_changed_refreshes_without_enabling_anything() {
    let harness = import(McpImportOptions::new()).await;
    let policy = allow(&["echo", "lookup", "writer"]);
    let catalog = ToolCatalog::builder().source(Arc::new(harness.source.clone())).build().unwrap();
    let visible = |policy: &str| -> Vec<String> {
        let policy = ToolPolicy::from_json(policy).unwrap();
        visible_tools(&catalog, &policy, &ctx()).names().map(str::to_owned).collect()
    };
    let before = visible(&policy);

    let mut changes = harness.source.changes();
    changes.mark_unchanged();
    {
        let mut tools = harness.upstream.tools.lock().unwrap();
        tools.retain(|tool| tool.name != "lookup");
        tools.push(
            Tool::new("added_later", "New.", text_input())
                .with_annotations(closed_world().read_only(true)),
        );
        let writer = tools.iter_mut().find(|tool| tool.name == "writer").unwrap();
        // Now it claims to be harmless: the effect must not become less cautious.
        *writer = Tool::new("writer", "Writes.", text_input())
            .with_annotations(closed_world().read_only(true));
    }
    harness.server.peer().notify_tool_list_changed().await.unwrap();
    tokio::time::timeout(Duration::from_secs(5), changes.changed()).await.unwrap().unwrap();

    assert!(harness.source.get(&id("added_later")).is_some(), "the new tool is imported");
    assert!(harness.source.get(&id("lookup")).is_none(), "the vanished tool is gone");
    assert_eq!(harness.source.get(&id("writer")).unwrap().effect(), ToolEffect::StateChange);
    let after = visible(&policy);
    assert_eq!(after, before.into_iter().filter(|tool| *tool != id("lookup")).collect::<Vec<_>>());
    assert!(ToolPolicy::from_json(r#"{"allowed_tools": ["mcp__*", "mcp__up__*"]}"#).is_err());
}

#[tokio::test]
async fn cancellation_and_progress_cross_the_connection() {
    let harness = import(McpImportOptions::new().redact(id("progress"), ["done"])).await;
    let runner = runner(&harness.source, &allow(&["slow", "progress"]));

    let heard = Arc::new(Mutex::new(Vec::new()));
    let sink = Arc::clone(&heard);
    let reporting = ctx().with_progress(ProgressReporter::new(move |progress: Progress| {
        sink.lock().unwrap().push((progress.progress, progress.total, progress.message));
    }));
    let result = runner.exec(&id("progress"), b"{}", &reporting).await;
    assert_eq!(result.value(), Some(&json!({"done": true})));
    assert_eq!(
        *heard.lock().unwrap(),
        [(1.0, Some(2.0), Some("step 1".to_owned())), (2.0, Some(2.0), Some("step 2".to_owned()))]
    );

    let token = tokio_util::sync::CancellationToken::new();
    let cancelling = ctx().with_cancellation(token.clone());
    let cancel = async {
        harness.upstream.slow_started.notified().await;
        token.cancel();
    };
    let slow = id("slow");
    let (result, ()) = tokio::join!(runner.exec(&slow, b"{}", &cancelling), cancel);
    assert_eq!(result.error_code(), Some(ToolErrorCode::Cancelled));
    // A guard against a hang, not a time limit.
    let told =
        tokio::time::timeout(Duration::from_secs(30), harness.upstream.slow_cancelled.notified());
    assert!(told.await.is_ok(), "the server was not told");
}

/// Our server's tools, imported again: annotations written by one side read back as the same
/// effects on the other.
async fn check_round_trip(source: &McpToolSource) {
    assert!(source.refused().is_empty(), "{:?}", source.refused());
    let server = ServerName::new("examples").unwrap();
    let time = imported_tool_name(&server, "core__get_current_time");
    let ticket = imported_tool_name(&server, "tickets__create_ticket");
    assert_eq!(source.get(&time).unwrap().effect(), ToolEffect::ReadOnly);
    assert_eq!(source.get(&ticket).unwrap().effect(), ToolEffect::StateChange);
    let runner = runner(source, &json!({"allowed_tools": [time]}).to_string());
    let result = runner.exec(&time, br#"{"timezone": "UTC"}"#, &ctx()).await;
    assert_eq!(result.value(), Some(&json!({})), "nothing passes without an allowlist");
    let bad = runner.exec(&time, br#"{"timezone": "no spaces allowed"}"#, &ctx()).await;
    assert_eq!(bad.error_code(), Some(ToolErrorCode::Validation));
}

#[tokio::test]
async fn round_trip_over_stdio_with_the_example_binary() {
    let binary = tokio::task::spawn_blocking(crate::support::mcp_server).await.unwrap();
    let server = ServerName::new("examples").unwrap();
    let time = imported_tool_name(&server, "core__get_current_time");
    let options = McpImportOptions::new().redact(time.clone(), ["timezone"]);
    let source =
        McpToolSource::connect_stdio(server, tokio::process::Command::new(binary), options)
            .await
            .unwrap();
    let runner = runner(&source, &json!({"allowed_tools": [time]}).to_string());
    let result = runner.exec(&time, br#"{"timezone": "Europe/Paris"}"#, &ctx()).await;
    assert_eq!(result.value(), Some(&json!({"timezone": "Europe/Paris"})));
    source.close().await;

    let plain = McpToolSource::connect_stdio(
        ServerName::new("examples").unwrap(),
        tokio::process::Command::new(crate::support::mcp_server()),
        McpImportOptions::new(),
    )
    .await
    .unwrap();
    check_round_trip(&plain).await;
    plain.close().await;
}

#[tokio::test]
async fn round_trip_over_streamable_http() {
    let server = examples::mcp::server(
        tool_runtime::runtime::Clock::system(),
        examples::tickets::TicketStore::new(),
        Arc::new(tool_runtime::runtime::NullSink),
    )
    .unwrap();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    let shutdown = tokio_util::sync::CancellationToken::new();
    let serving = tokio::spawn(server.serve_http(listener, shutdown.clone()));
    let source = McpToolSource::connect_http(
        ServerName::new("examples").unwrap(),
        &url,
        McpImportOptions::new(),
    )
    .await
    .unwrap();
    check_round_trip(&source).await;
    source.close().await;
    shutdown.cancel();
    tokio::time::timeout(Duration::from_secs(5), serving).await.unwrap().unwrap().unwrap();
}
