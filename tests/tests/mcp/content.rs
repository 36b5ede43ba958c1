//! What a served tool's result looks like to an MCP client: parts as content blocks,
//! `structuredContent` matching the served output schema (wrapped when the output is not an
//! object, absent when redaction keeps no field), log messages filtered by the session's level,
//! tools served under other names; and an imported image that stays an image.

#![allow(deprecated)] // rmcp marks MCP logging deprecated (SEP-2577); clients still use it.

use std::sync::Arc;
use std::time::Duration;

use base64_probe::decode;
use serde_json::{Value, json};
use tool_runtime::catalog::{ToolCatalog, ToolSource};
use tool_runtime::content::{Content, Part};
use tool_runtime::mcp::rmcp::model::{
    CallToolRequestParams, LoggingLevel, LoggingMessageNotificationParam, RequestMetaObject,
    SetLevelRequestParams,
};
use tool_runtime::mcp::rmcp::service::{NotificationContext, RoleClient, RunningService};
use tool_runtime::mcp::rmcp::{ClientHandler, ServiceError, ServiceExt};
use tool_runtime::mcp::{McpImportOptions, McpServer, McpToolSource, ServedNameError, ServerName};
use tool_runtime::prelude::*;
use tool_runtime::runner::ToolRunner;
use tool_runtime::runtime::LogLevel;
use tool_tests::fixtures::context;

/// Decodes standard base64 (test-only: checks what the server sent).
mod base64_probe {
    pub fn decode(text: &str) -> Vec<u8> {
        let value = |c: u8| -> u32 {
            match c {
                b'A'..=b'Z' => u32::from(c - b'A'),
                b'a'..=b'z' => u32::from(c - b'a') + 26,
                b'0'..=b'9' => u32::from(c - b'0') + 52,
                b'+' => 62,
                b'/' => 63,
                _ => panic!("not base64: {c}"),
            }
        };
        let mut out = Vec::new();
        for chunk in text.trim_end_matches('=').as_bytes().chunks(4) {
            let bits =
                chunk.iter().fold(0u32, |acc, &c| (acc << 6) | value(c)) << (6 * (4 - chunk.len()));
            let bytes = bits.to_be_bytes();
            out.extend_from_slice(&bytes[1..chunk.len()]);
        }
        out
    }
}

/// A PNG's signature and header (1 x 1 pixels; the runner reads no further).
const PNG: &[u8] = b"\x89PNG\r\n\x1a\n\0\0\0\x0dIHDR\0\0\0\x01\0\0\0\x01";

#[derive(Serialize, ToolSchema)]
struct Shot {
    width: u32,
    height: u32,
}

/// Take a screenshot.
#[tool(name = "shots__take", effect = read_only, redact = ["width"])]
struct Take {}

impl Tool for Take {
    type Output = Content<Shot>;
    async fn run(
        self,
        _: &ToolInvocationContext,
        _: &ToolCapabilities,
    ) -> Result<Content<Shot>, ToolError> {
        Ok(Content::new()
            .text("the screen:")
            .image("image/png", PNG)
            .json(Shot { width: 2, height: 1 }))
    }
}

/// The last screenshot, if any.
#[tool(name = "shots__last", effect = read_only, redact = ["width"])]
struct Last {}

impl Tool for Last {
    type Output = Option<Shot>;
    async fn run(
        self,
        _: &ToolInvocationContext,
        _: &ToolCapabilities,
    ) -> Result<Option<Shot>, ToolError> {
        Ok(Some(Shot { width: 3, height: 4 }))
    }
}

/// The screen's name.
#[tool(name = "shots__name", effect = read_only, redact = [])]
struct Name {}

impl Tool for Name {
    type Output = String;
    async fn run(
        self,
        _: &ToolInvocationContext,
        _: &ToolCapabilities,
    ) -> Result<String, ToolError> {
        Ok("main".into())
    }
}

/// The screen's title, all of it.
#[tool(name = "shots__title", effect = read_only, redact = all)]
struct Title {}

impl Tool for Title {
    type Output = String;
    async fn run(
        self,
        _: &ToolInvocationContext,
        _: &ToolCapabilities,
    ) -> Result<String, ToolError> {
        Ok("Main screen".into())
    }
}

/// Every screen's width.
#[tool(name = "shots__sizes", effect = read_only, redact = ["width"])]
struct Sizes {}

impl Tool for Sizes {
    type Output = Vec<Shot>;
    async fn run(
        self,
        _: &ToolInvocationContext,
        _: &ToolCapabilities,
    ) -> Result<Vec<Shot>, ToolError> {
        Ok(vec![Shot { width: 1, height: 2 }, Shot { width: 3, height: 4 }])
    }
}

/// Log at three levels.
#[tool(name = "shots__chatty", effect = read_only, redact = [])]
struct Chatty {}

impl Tool for Chatty {
    type Output = Content;
    async fn run(
        self,
        ctx: &ToolInvocationContext,
        _: &ToolCapabilities,
    ) -> Result<Content, ToolError> {
        ctx.log(LogLevel::Debug, "details");
        ctx.log(LogLevel::Info, "working");
        ctx.log(LogLevel::Warning, "almost out of film");
        Ok(Content::new().text("done"))
    }
}

fn runner() -> ToolRunner {
    let catalog = ToolCatalog::builder()
        .register::<Take>()
        .register::<Last>()
        .register::<Name>()
        .register::<Chatty>()
        .register::<Title>()
        .register::<Sizes>()
        .build()
        .unwrap();
    ToolRunner::builder(catalog).policy(ToolPolicy::allowing(["shots__*"])).build()
}

/// A client that forwards log messages to a channel.
#[derive(Clone)]
struct LogClient(tokio::sync::mpsc::UnboundedSender<LoggingMessageNotificationParam>);

impl ClientHandler for LogClient {
    async fn on_logging_message(
        &self,
        params: LoggingMessageNotificationParam,
        _: NotificationContext<RoleClient>,
    ) {
        let _ = self.0.send(params);
    }
}

type Client = RunningService<RoleClient, LogClient>;

async fn connect(
    server: McpServer,
) -> (Client, tokio::sync::mpsc::UnboundedReceiver<LoggingMessageNotificationParam>) {
    let (client_io, server_io) = tokio::io::duplex(64 * 1024);
    tokio::spawn(async move {
        if let Ok(running) = server.serve(server_io).await {
            let _ = running.waiting().await;
        }
    });
    let (sender, receiver) = tokio::sync::mpsc::unbounded_channel();
    let client = LogClient(sender).serve(client_io).await.unwrap();
    (client, receiver)
}

fn call(name: &str) -> CallToolRequestParams {
    CallToolRequestParams::new(name.to_owned())
}

fn schema_of(tools: &[tool_runtime::mcp::rmcp::model::Tool], name: &str) -> Option<Value> {
    let tool = tools.iter().find(|tool| tool.name == name).expect("listed");
    tool.output_schema.as_ref().map(|schema| Value::Object((**schema).clone()))
}

#[tokio::test]
async fn output_schemas_are_objects_and_promise_only_what_redaction_keeps() {
    let server = McpServer::builder(runner()).build();
    let tools = server.tools();
    assert_eq!(
        schema_of(&tools, "shots__take"),
        Some(
            json!({"type": "object", "properties": {"width": {"type": "integer", "minimum": 0, "maximum": 4_294_967_295_u32}},
            "required": ["width"], "additionalProperties": false})
        )
    );
    // An optional struct is not an object schema: wrapped, and still narrowed.
    let last = schema_of(&tools, "shots__last").expect("served wrapped");
    assert_eq!(last["type"], "object");
    assert_eq!(last["required"], json!(["result"]));
    assert_eq!(last["properties"]["result"]["type"], json!(["object", "null"]));
    assert_eq!(last["properties"]["result"]["required"], json!(["width"]));
    // A string that redaction drops has no field to promise: no schema (it used to be
    // `{"type": "string"}`, which clients reject and which redaction never lets through).
    assert_eq!(schema_of(&tools, "shots__name"), None);
    assert_eq!(schema_of(&tools, "shots__chatty"), None);
    // A string kept whole is served wrapped.
    let title = schema_of(&tools, "shots__title").expect("served wrapped");
    assert_eq!(title["properties"]["result"], json!({"type": "string"}));
    let sizes = schema_of(&tools, "shots__sizes").expect("served wrapped");
    assert_eq!(sizes["properties"]["result"]["items"]["required"], json!(["width"]));
    for tool in &tools {
        if let Some(schema) = &tool.output_schema {
            assert_eq!(schema["type"], "object", "{}", tool.name);
        }
    }
}

#[tokio::test]
async fn parts_become_content_blocks_with_structured_content() {
    let (client, _) = connect(McpServer::builder(runner()).build()).await;
    let taken = client.call_tool(call("shots__take")).await.unwrap();
    assert_eq!(taken.is_error, Some(false));
    let blocks = serde_json::to_value(&taken.content).unwrap();
    assert_eq!(blocks[0], json!({"type": "text", "text": "the screen:"}));
    assert_eq!(blocks[1]["type"], "image");
    assert_eq!(blocks[1]["mimeType"], "image/png");
    assert_eq!(decode(blocks[1]["data"].as_str().unwrap()), PNG);
    assert_eq!(blocks[2], json!({"type": "text", "text": r#"{"width":2}"#}), "redacted JSON");
    assert_eq!(taken.structured_content, Some(json!({"width": 2})));

    let last = client.call_tool(call("shots__last")).await.unwrap();
    assert_eq!(last.structured_content, Some(json!({"result": {"width": 3}})));

    // A text output is text to the client, and `{"result": ..}` where a schema is served.
    let title = client.call_tool(call("shots__title")).await.unwrap();
    assert_eq!(
        serde_json::to_value(&title.content).unwrap(),
        json!([{"type": "text", "text": "Main screen"}])
    );
    assert_eq!(title.structured_content, Some(json!({"result": "Main screen"})));
    // An array of objects, each redacted.
    let sizes = client.call_tool(call("shots__sizes")).await.unwrap();
    assert_eq!(
        serde_json::to_value(&sizes.content).unwrap(),
        json!([{"type": "text", "text": r#"[{"width":1},{"width":3}]"#}])
    );
    assert_eq!(sizes.structured_content, Some(json!({"result": [{"width": 1}, {"width": 3}]})));

    let chatty = client.call_tool(call("shots__chatty")).await.unwrap();
    assert_eq!(
        serde_json::to_value(&chatty.content).unwrap(),
        json!([{"type": "text", "text": "done"}])
    );
    assert_eq!(chatty.structured_content, None);
    client.cancel().await.unwrap();
}

/// Calls `shots__chatty` and returns the `expected` log messages that reach the client.
/// rmcp hands each notification to its own task, so they are awaited (the timeout only keeps a
/// broken server from hanging the test); a round trip afterwards shows nothing else came.
async fn logged(
    client: &Client,
    logs: &mut tokio::sync::mpsc::UnboundedReceiver<LoggingMessageNotificationParam>,
    expected: usize,
) -> Vec<(LoggingLevel, Value)> {
    logged_with(client, logs, call("shots__chatty"), expected).await
}

/// [`logged`] with the request given.
async fn logged_with(
    client: &Client,
    logs: &mut tokio::sync::mpsc::UnboundedReceiver<LoggingMessageNotificationParam>,
    request: CallToolRequestParams,
    expected: usize,
) -> Vec<(LoggingLevel, Value)> {
    client.call_tool(request).await.unwrap();
    let mut seen = Vec::new();
    while seen.len() < expected {
        let message = tokio::time::timeout(Duration::from_secs(5), logs.recv())
            .await
            .expect("the log messages arrive")
            .expect("the client is connected");
        seen.push((message.level, message.data));
    }
    client.list_all_tools().await.unwrap();
    for _ in 0..8 {
        tokio::task::yield_now().await;
    }
    assert!(logs.try_recv().is_err(), "more log messages than {expected}");
    seen.sort_by_key(|(level, _)| *level as u8);
    seen
}

#[tokio::test]
async fn log_messages_follow_each_sessions_level() {
    let server = McpServer::builder(runner()).build();
    let (first, mut first_logs) = connect(server.clone()).await;
    let (second, mut second_logs) = connect(server).await;
    let default = [
        (LoggingLevel::Info, json!("working")),
        (LoggingLevel::Warning, json!("almost out of film")),
    ];
    assert_eq!(logged(&first, &mut first_logs, 2).await, default, "info and above by default");
    first.set_level(SetLevelRequestParams::new(LoggingLevel::Error)).await.unwrap();
    assert_eq!(logged(&first, &mut first_logs, 0).await, []);
    first.set_level(SetLevelRequestParams::new(LoggingLevel::Debug)).await.unwrap();
    assert_eq!(
        logged(&first, &mut first_logs, 3).await[0],
        (LoggingLevel::Debug, json!("details"))
    );
    assert_eq!(logged(&second, &mut second_logs, 2).await, default, "a level per session");
    // A request may carry its own level (`_meta`, SEP-2575), whatever the session's.
    let mut request = call("shots__chatty");
    let mut meta = RequestMetaObject::default();
    meta.set_log_level(LoggingLevel::Warning);
    request.meta = Some(meta);
    assert_eq!(
        logged_with(&first, &mut first_logs, request, 1).await,
        [(LoggingLevel::Warning, json!("almost out of film"))]
    );
    first.cancel().await.unwrap();
    second.cancel().await.unwrap();
}

#[tokio::test]
async fn tools_can_be_served_under_other_names() {
    let server = McpServer::builder(runner())
        .serve_as("shots__take", "take")
        .unwrap()
        .serve_as("shots__name", "screen-name")
        .unwrap()
        .build();
    let names: Vec<String> = server.tools().iter().map(|tool| tool.name.to_string()).collect();
    assert_eq!(
        names,
        ["screen-name", "shots__chatty", "shots__last", "shots__sizes", "shots__title", "take"]
    );
    let (client, _) = connect(server).await;
    let taken = client.call_tool(call("take")).await.unwrap();
    assert_eq!(taken.structured_content, Some(json!({"width": 2})));
    match client.call_tool(call("shots__take")).await {
        Err(ServiceError::McpError(error)) => assert_eq!(error.code.0, -32602),
        other => panic!("the id of a renamed tool is not served: {other:?}"),
    }
    client.cancel().await.unwrap();

    let invalid = McpServer::builder(runner()).serve_as("shots__take", "take a shot").unwrap_err();
    assert_eq!(invalid, ServedNameError::Invalid { name: "take a shot".into() });
    // MCP's rule (2026-07-28), not the models': `.` and up to 128 characters.
    let dotted = "camera.shots.take-1";
    let long = "t".repeat(128);
    for name in [dotted, long.as_str()] {
        let server = McpServer::builder(runner()).serve_as("shots__take", name).unwrap().build();
        assert!(server.tools().iter().any(|tool| tool.name == name), "{name}");
    }
    let too_long = "t".repeat(129);
    let refused = McpServer::builder(runner()).serve_as("shots__take", too_long.clone());
    assert_eq!(refused.unwrap_err(), ServedNameError::Invalid { name: too_long });
    let twice = McpServer::builder(runner())
        .serve_as("shots__take", "shot")
        .unwrap()
        .serve_as("shots__last", "shot")
        .unwrap_err();
    assert_eq!(twice, ServedNameError::Taken { name: "shot".into(), by: "shots__take".into() });
    let an_id = McpServer::builder(runner()).serve_as("shots__take", "shots__last").unwrap_err();
    assert_eq!(
        an_id,
        ServedNameError::Taken { name: "shots__last".into(), by: "shots__last".into() }
    );
}

#[tokio::test]
async fn an_imported_image_stays_an_image() {
    let server = McpServer::builder(runner()).build();
    let (ours, theirs) = tokio::io::duplex(64 * 1024);
    tokio::spawn(async move {
        if let Ok(running) = server.serve(theirs).await {
            let _ = running.waiting().await;
        }
    });
    let options = McpImportOptions::new().redact("mcp__cam__shots__take", ["width"]);
    let source =
        McpToolSource::connect(ServerName::new("cam").unwrap(), ours, options).await.unwrap();
    assert!(source.get("mcp__cam__shots__take").is_some());
    let catalog = ToolCatalog::builder().source(Arc::new(source)).build().unwrap();
    let runner = ToolRunner::builder(catalog)
        .policy(ToolPolicy::allowing(["mcp__cam__shots__take"]))
        .build();
    let ctx = context("r", "a", "t");
    let result = runner.exec("mcp__cam__shots__take", b"{}", &ctx).await;
    let output = result.output().expect("the call succeeds");
    match output.parts() {
        [Part::Text(text), Part::Image(image), Part::Json(value)] => {
            assert_eq!(text, "the screen:");
            assert_eq!((image.mime_type.as_str(), &image.data[..]), ("image/png", PNG));
            assert_eq!(value, &json!({"width": 2}));
        }
        other => panic!("expected text, image and JSON parts, got {other:?}"),
    }
}
