//! Our MCP server driven by a client no one here wrote: the official Python SDK (`mcp` on PyPI)
//! runs `tests/mcp_client.py`, which spawns the `mcp_server` example binary over stdio, once
//! with the SDK's default negotiation and once with the legacy `initialize` handshake; and
//! which connects over Streamable HTTP to a server this test runs, to receive an image, list two
//! tools whose output is a string (one redacted away, so with no output schema, and one kept
//! whole, its schema and structured content wrapped as `{"result": ...}`, which the SDK
//! validates); and over Streamable HTTP with sampling and elicitation callbacks, to answer a
//! tool's questions.

use std::io::Read;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;
use tool_runtime::catalog::ToolCatalog;
use tool_runtime::content::Content;
use tool_runtime::mcp::McpServer;
use tool_runtime::prelude::*;
use tool_runtime::runner::ToolRunner;
use tool_runtime::runtime::{ElicitAnswer, Interact, SampleRequest};

/// Runs the Python client with `args` and returns what it printed.
pub(crate) fn run_python_client(args: &[&str]) -> Value {
    let python = crate::support::python_with_mcp();
    let script = crate::support::workspace().join("tests").join("mcp_client.py");
    let mut child = Command::new(python)
        .arg(script)
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the Python client starts");
    let deadline = Instant::now() + Duration::from_secs(120);
    let status = loop {
        if let Some(status) = child.try_wait().expect("the Python client can be waited on") {
            break status;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("the Python MCP client did not finish within 120 s");
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let mut stdout = String::new();
    let mut stderr = String::new();
    child.stdout.take().expect("piped").read_to_string(&mut stdout).expect("utf-8 stdout");
    child.stderr.take().expect("piped").read_to_string(&mut stderr).expect("utf-8 stderr");
    assert!(status.success(), "the Python MCP client failed:\n{stderr}");
    serde_json::from_str(&stdout)
        .unwrap_or_else(|error| panic!("not JSON ({error}):\n{stdout}\n{stderr}"))
}

fn input_schema(name: &str) -> Value {
    let spec =
        examples::specs().into_iter().find(|spec| spec.name() == name).expect("an example tool");
    spec.input_schema().to_json()
}

fn check_session(mode: &str, report: &Value) {
    let tools = report["tools"].as_array().expect("tools");
    let names: Vec<&str> = tools.iter().map(|tool| tool["name"].as_str().expect("name")).collect();
    assert_eq!(
        names,
        ["core__get_current_time", "docs__search", "tickets__create_ticket"],
        "{mode}"
    );

    let read_only = json!({"readOnlyHint": true, "destructiveHint": false, "idempotentHint": true, "openWorldHint": false});
    let state_change = json!({"readOnlyHint": false, "destructiveHint": true, "idempotentHint": false, "openWorldHint": false});
    for (tool, annotations) in tools.iter().zip([&read_only, &read_only, &state_change]) {
        let name = tool["name"].as_str().expect("name");
        assert_eq!(&tool["annotations"], annotations, "{mode} {name}");
        assert_eq!(tool["inputSchema"], input_schema(name), "{mode} {name}");
        assert!(tool["description"].as_str().is_some_and(|text| !text.is_empty()), "{mode} {name}");
    }
    // The output schema describes what `structuredContent` carries: redacted fields are gone.
    let ticket_output = &tools[2]["outputSchema"];
    assert_eq!(ticket_output["required"], json!(["number", "url", "status"]), "{mode}");
    assert!(ticket_output["properties"].get("created_by").is_none(), "{mode}");

    let calls = &report["calls"];
    let ok = |label: &str| -> &Value {
        let result = &calls[label]["result"];
        assert_eq!(result["isError"], json!(false), "{mode} {label}: {result}");
        let text = result["content"][0]["text"].as_str().expect("a text block");
        let parsed: Value = serde_json::from_str(text).expect("the text block is JSON");
        assert_eq!(
            parsed, result["structuredContent"],
            "{mode} {label}: text and structured content agree"
        );
        &result["structuredContent"]
    };
    let time = ok("time");
    assert_eq!(time["timezone"], "Europe/Berlin");
    assert!(
        time["iso8601"]
            .as_str()
            .is_some_and(|iso| iso.ends_with("+01:00") || iso.ends_with("+02:00"))
    );

    let search = ok("search");
    let hits = search["hits"].as_array().expect("hits");
    // The redaction check below needs something to check: "schema" finds documents.
    assert!((1..=2).contains(&hits.len()), "{mode}: one or two hits (limit 2): {search}");
    for hit in hits {
        let mut keys: Vec<&str> =
            hit.as_object().expect("a hit").keys().map(String::as_str).collect();
        keys.sort_unstable();
        assert_eq!(keys, ["kind", "score", "title", "url"], "{mode}: redaction applies");
    }

    let ticket = ok("ticket");
    assert_eq!(ticket["status"], "open");
    assert!(ticket.get("created_by").is_none(), "{mode}: redaction applies");

    for (label, message) in
        [("urgent", "urgent tickets need a person's approval"), ("invalid", "/query")]
    {
        let result = &calls[label]["result"];
        assert_eq!(result["isError"], json!(true), "{mode} {label}: {result}");
        assert!(result.get("structuredContent").is_none(), "{mode} {label}");
        let text = result["content"][0]["text"].as_str().expect("a text block");
        assert!(text.contains(message), "{mode} {label}: {text}");
    }

    for label in ["unknown", "hidden"] {
        let error = &calls[label]["error"];
        assert_eq!(error["code"], json!(-32602), "{mode} {label}: {}", calls[label]);
        assert!(error["message"].as_str().is_some_and(|text| text.starts_with("unknown tool")));
    }
}

#[test]
fn python_sdk_lists_and_calls_tools_over_stdio() {
    let server = crate::support::mcp_server();
    let report = run_python_client(&[server.to_str().expect("a UTF-8 path")]);
    assert_eq!(report["auto"]["protocol_version"], "2026-07-28");
    let legacy = report["legacy"]["protocol_version"].as_str().expect("a version");
    assert_ne!(legacy, "2026-07-28", "the legacy handshake negotiates an older version");
    for mode in ["auto", "legacy"] {
        check_session(mode, &report[mode]);
    }
}

/// A screenshot.
#[tool(name = "screen__shot", effect = read_only, redact = [])]
struct Shot {}

impl Tool for Shot {
    type Output = Content;
    async fn run(
        self,
        _: &ToolInvocationContext,
        _: &ToolCapabilities,
    ) -> Result<Content, ToolError> {
        Ok(Content::new()
            .text("the screen:")
            .image("image/png", &b"\x89PNG\r\n\x1a\n\0\0\0\x0dIHDR\0\0\0\x01\0\0\0\x01"[..]))
    }
}

/// The screen's name.
#[tool(name = "screen__name", effect = read_only, redact = [])]
struct ScreenName {}

impl Tool for ScreenName {
    type Output = String;
    async fn run(
        self,
        _: &ToolInvocationContext,
        _: &ToolCapabilities,
    ) -> Result<String, ToolError> {
        Ok("main".into())
    }
}

/// The screen's title, shown to clients whole.
#[tool(name = "screen__title", effect = read_only, redact = all)]
struct ScreenTitle {}

impl Tool for ScreenTitle {
    type Output = String;
    async fn run(
        self,
        _: &ToolInvocationContext,
        _: &ToolCapabilities,
    ) -> Result<String, ToolError> {
        Ok("Main screen".into())
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn python_sdk_receives_images_and_lists_string_tools_over_http() {
    let catalog = ToolCatalog::builder()
        .register::<Shot>()
        .register::<ScreenName>()
        .register::<ScreenTitle>()
        .build()
        .unwrap();
    let runner = ToolRunner::builder(catalog).policy(ToolPolicy::allowing(["screen__*"])).build();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    let shutdown = CancellationToken::new();
    let server = McpServer::builder(runner).build().serve_http(listener, shutdown.clone());
    let serving = tokio::spawn(server);
    let report = tokio::task::spawn_blocking(move || {
        run_python_client(&[&url, "screen__shot", "screen__title"])
    })
    .await
    .unwrap();
    shutdown.cancel();
    serving.await.unwrap().unwrap();

    let names: Vec<&str> = report["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|tool| tool["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        ["screen__name", "screen__shot", "screen__title"],
        "the string tools do not break the list"
    );
    // A string kept whole has an object output schema: the string wrapped as `result`.
    let title_tool = &report["tools"][2];
    assert_eq!(title_tool["outputSchema"]["type"], "object", "{title_tool}");
    assert_eq!(title_tool["outputSchema"]["properties"]["result"]["type"], "string");
    assert_eq!(title_tool["outputSchema"]["required"], json!(["result"]));
    assert!(report["tools"][0].get("outputSchema").is_none(), "a string kept out has none");
    // The SDK validated the structured content against that schema (it refuses otherwise).
    let title = &report["calls"]["screen__title"];
    assert!(title.get("invalid").is_none(), "{title}");
    assert_eq!(title["classes"], json!(["TextContent"]), "{title}");
    assert_eq!(title["result"]["content"][0]["text"], "Main screen", "the model sees text");
    assert_eq!(title["result"]["structuredContent"], json!({"result": "Main screen"}));
    let shot = &report["calls"]["screen__shot"];
    assert_eq!(shot["classes"], json!(["TextContent", "ImageContent"]), "{shot}");
    assert_eq!(shot["result"]["content"][1]["mimeType"], "image/png");
    assert_eq!(shot["result"]["content"][1]["data"], "iVBORw0KGgoAAAANSUhEUgAAAAEAAAAB");
}

/// Asks the client's model.
#[tool(name = "ask__sample", effect = read_only, redact = ["text"], capabilities = [Interact])]
struct AskSample {
    prompt: String,
}

#[derive(Serialize, ToolSchema)]
struct Said {
    text: String,
}

impl Tool for AskSample {
    type Output = Said;
    async fn run(
        self,
        _: &ToolInvocationContext,
        caps: &ToolCapabilities,
    ) -> Result<Said, ToolError> {
        let request = SampleRequest::new(self.prompt).max_tokens(20);
        Ok(Said { text: caps.get::<Interact>()?.sample(request).await?.text })
    }
}

/// A color.
#[derive(Debug, Deserialize, ToolSchema)]
#[serde(rename_all = "snake_case")]
enum Color {
    Red,
    Blue,
}

/// Who the user is.
#[derive(Debug, Deserialize, ToolSchema)]
struct Profile {
    /// Your name.
    name: String,
    /// Your favourite color.
    color: Color,
}

/// Asks the client's user.
#[tool(name = "ask__profile", effect = read_only, redact = ["answer"], capabilities = [Interact])]
struct AskProfile {}

#[derive(Serialize, ToolSchema)]
struct Answer {
    answer: String,
}

impl Tool for AskProfile {
    type Output = Answer;
    async fn run(
        self,
        _: &ToolInvocationContext,
        caps: &ToolCapabilities,
    ) -> Result<Answer, ToolError> {
        let answer = match caps.get::<Interact>()?.elicit::<Profile>("Who are you?").await? {
            ElicitAnswer::Accept(profile) => format!("{} likes {:?}", profile.name, profile.color),
            ElicitAnswer::Decline | ElicitAnswer::Cancel => "no answer".to_owned(),
        };
        Ok(Answer { answer })
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn python_sdk_answers_sampling_and_elicitation_over_http() {
    let catalog = ToolCatalog::builder()
        .register::<AskSample>()
        .register::<AskProfile>()
        .capability(Interact::unavailable())
        .build()
        .unwrap();
    let runner = ToolRunner::builder(catalog).policy(ToolPolicy::allowing(["ask__*"])).build();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    let shutdown = CancellationToken::new();
    let server = McpServer::builder(runner).build().serve_http(listener, shutdown.clone());
    let serving = tokio::spawn(server);
    let report =
        tokio::task::spawn_blocking(move || run_python_client(&["interact", &url])).await.unwrap();
    shutdown.cancel();
    serving.await.unwrap().unwrap();

    let legacy = &report["legacy"];
    let calls = &legacy["calls"];
    assert_eq!(
        calls["ask__sample"]["result"]["structuredContent"],
        json!({"text": "Four."}),
        "{legacy}"
    );
    assert_eq!(
        calls["ask__profile"]["result"]["structuredContent"],
        json!({"answer": "Ada likes Blue"}),
        "{legacy}"
    );
    let asked = legacy["asked"].as_array().unwrap();
    assert_eq!(asked[0]["kind"], "sampling");
    assert_eq!(asked[0]["params"]["maxTokens"], 20);
    assert_eq!(asked[0]["params"]["messages"][0]["content"]["text"], "What is 2 + 2?");
    assert_eq!(asked[1]["kind"], "elicitation");
    assert_eq!(
        asked[1]["params"]["requestedSchema"]["properties"]["color"]["enum"],
        json!(["red", "blue"])
    );

    // 2026-07-28 forbids server-to-client requests within a call: the client is asked nothing
    // there. This server keeps no calls that wait (no `store`), so neither the completion nor
    // the question can become an input-required round (see `rounds.rs`).
    let auto = &report["auto"];
    assert_eq!(auto["protocol_version"], "2026-07-28");
    assert!(auto["asked"].as_array().unwrap().is_empty(), "{auto}");
    for (tool, expected) in [
        ("ask__sample", "this server keeps no calls that wait"),
        ("ask__profile", "this server keeps no calls that wait"),
    ] {
        let result = &auto["calls"][tool]["result"];
        assert_eq!(result["isError"], json!(true), "{auto}");
        let text = result["content"][0]["text"].as_str().unwrap();
        assert!(text.contains(expected), "{text}");
    }
}
