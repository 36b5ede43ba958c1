//! Elicitation and sampling: a tool that declares `Interact` asks, mid-call,
//! the user (`elicitation/create`) or a model (`sampling/createMessage`) through the MCP client
//! of the session that made the call; a client that did not declare the capability gives the
//! tool a typed error; outside MCP the bound backend answers (the agent's model for sampling).

// rmcp marks sampling's types deprecated (SEP-2577); clients still speak it.
#![allow(deprecated)]

use std::sync::{Arc, Mutex};

use crate::support::ctx;
use serde_json::{Value, json};
use tool_runtime::agent::{ChatModel, ChatModelSampler, ScriptedModel, ScriptedTurn};
use tool_runtime::catalog::ToolCatalog;
use tool_runtime::mcp::McpServer;
use tool_runtime::mcp::rmcp::model::{
    CallToolRequestParams, CallToolResult, ClientCapabilities, ClientConfig,
    CreateMessageRequestParams, CreateMessageResult, ElicitRequestParams, ElicitResult,
    ElicitationAction, Implementation, SamplingMessage,
};
use tool_runtime::mcp::rmcp::service::{RequestContext, RoleClient, RunningService};
use tool_runtime::mcp::rmcp::{ClientHandler, ErrorData, ServiceExt};
use tool_runtime::prelude::*;
use tool_runtime::runner::ToolRunner;
use tool_runtime::runtime::{
    ElicitAnswer, Interact, InteractError, SampleRequest, SampleRole, ToolErrorCode,
};

/// Asks the model what the prompt says.
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
        let request = SampleRequest::new(self.prompt)
            .message(SampleRole::Assistant, "Thinking.")
            .system("Be brief.")
            .max_tokens(50);
        let completion = caps.get::<Interact>()?.sample(request).await?;
        Ok(Said { text: completion.text })
    }
}

/// A color.
#[derive(Debug, Serialize, Deserialize, ToolSchema, PartialEq)]
#[serde(rename_all = "snake_case")]
enum Color {
    Red,
    Blue,
}

/// What the user is asked for.
#[derive(Debug, Serialize, Deserialize, ToolSchema)]
struct Profile {
    /// Your name.
    name: String,
    /// Your age, if you like.
    age: Option<u8>,
    /// Your favourite color.
    color: Color,
}

/// Asks the user for a profile.
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
            ElicitAnswer::Accept(profile) => {
                format!("{} {:?} {:?}", profile.name, profile.age, profile.color)
            }
            ElicitAnswer::Decline => "declined".to_owned(),
            ElicitAnswer::Cancel => "cancelled".to_owned(),
        };
        Ok(Answer { answer })
    }
}

#[derive(Debug, Deserialize, ToolSchema)]
#[allow(dead_code)] // never answered: refused before it is asked
struct Inner {
    x: i32,
}

#[derive(Debug, Deserialize, ToolSchema)]
#[allow(dead_code)] // never answered: refused before it is asked
struct Nested {
    inner: Inner,
}

/// Asks for an answer MCP cannot ask for.
#[tool(name = "ask__nested", effect = read_only, redact = ["answer"], capabilities = [Interact])]
struct AskNested {}

impl Tool for AskNested {
    type Output = Answer;
    async fn run(
        self,
        _: &ToolInvocationContext,
        caps: &ToolCapabilities,
    ) -> Result<Answer, ToolError> {
        match caps.get::<Interact>()?.elicit::<Nested>("Nested?").await {
            Err(InteractError::UnsupportedSchema(why)) => Ok(Answer { answer: why }),
            other => Err(ToolError::new(format!("expected an unsupported schema, got {other:?}"))),
        }
    }
}

/// What `ask__form` asks for.
#[derive(Debug, Serialize, Deserialize, ToolSchema)]
struct Form {
    name: String,
    color: Color,
    colors: Vec<Color>,
    nickname: Option<String>,
}

/// Asks with defaults and titles; `mode` picks a mistake to make.
#[tool(name = "ask__form", effect = read_only, redact = ["answer"], capabilities = [Interact])]
struct AskForm {
    mode: String,
}

impl Tool for AskForm {
    type Output = Answer;
    async fn run(
        self,
        _: &ToolInvocationContext,
        caps: &ToolCapabilities,
    ) -> Result<Answer, ToolError> {
        let defaults = Form {
            name: "Ada".into(),
            color: Color::Blue,
            colors: vec![Color::Red],
            nickname: None,
        };
        let interact = caps.get::<Interact>()?;
        let question = interact.elicitation::<Form>("Fill in").defaults(&defaults);
        let question = match self.mode.as_str() {
            "titled" => question
                .titles("color", [("red", "Crimson")])
                .titles("colors", [("red", "Crimson"), ("blue", "Navy")]),
            "legacy" => question.legacy_titles("color", [("red", "Crimson"), ("blue", "Navy")]),
            "not_an_enum" => question.titles("name", [("a", "A")]),
            "unknown_value" => question.titles("color", [("green", "Green")]),
            _ => question.legacy_titles("colors", [("red", "Crimson")]),
        };
        match question.send().await {
            Ok(answer) => {
                Ok(Answer { answer: format!("{:?}", answer.accepted().map(|form| form.name)) })
            }
            Err(InteractError::UnsupportedSchema(why)) => Ok(Answer { answer: why }),
            Err(error) => Err(error.into()),
        }
    }
}

fn catalog(interact: Interact) -> ToolCatalog {
    ToolCatalog::builder()
        .register::<AskSample>()
        .register::<AskProfile>()
        .register::<AskNested>()
        .register::<AskForm>()
        .capability(interact)
        .build()
        .unwrap()
}

fn runner(interact: Interact) -> ToolRunner {
    ToolRunner::builder(catalog(interact)).policy(ToolPolicy::allowing(["ask__*"])).build()
}

/// A client that answers sampling and elicitation as told, and records what it was asked.
#[derive(Clone)]
pub(super) struct Client {
    capable: bool,
    pub(super) elicit: Arc<Mutex<(ElicitationAction, Value)>>,
    pub(super) asked: Arc<Mutex<Vec<Value>>>,
}

impl ClientHandler for Client {
    async fn create_message(
        &self,
        params: CreateMessageRequestParams,
        _: RequestContext<RoleClient>,
    ) -> Result<CreateMessageResult, ErrorData> {
        self.asked.lock().unwrap().push(serde_json::to_value(&params).unwrap());
        let message = SamplingMessage::assistant_text("Four.");
        Ok(CreateMessageResult::new(message, "test-model".to_owned()).with_stop_reason("endTurn"))
    }

    async fn create_elicitation(
        &self,
        request: ElicitRequestParams,
        _: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, ErrorData> {
        self.asked.lock().unwrap().push(serde_json::to_value(&request).unwrap());
        let (action, content) = self.elicit.lock().unwrap().clone();
        Ok(ElicitResult::new(action).with_content(content))
    }

    fn get_info(&self) -> ClientConfig {
        let capabilities: ClientCapabilities = if self.capable {
            serde_json::from_value(json!({"sampling": {}, "elicitation": {}})).unwrap()
        } else {
            ClientCapabilities::default()
        };
        ClientConfig::new(capabilities, Implementation::new("test-client", "1.0.0"))
    }
}

async fn connect(capable: bool) -> (RunningService<RoleClient, Client>, Client) {
    connect_to(McpServer::builder(runner(Interact::unavailable())).build(), capable).await
}

/// A client of `server` (2025-11-25, over an in-memory pipe) that declares sampling and
/// elicitation when `capable`.
pub(super) async fn connect_to(
    server: McpServer,
    capable: bool,
) -> (RunningService<RoleClient, Client>, Client) {
    let (ours, theirs) = tokio::io::duplex(64 * 1024);
    tokio::spawn(async move {
        if let Ok(running) = server.serve(theirs).await {
            let _ = running.waiting().await;
        }
    });
    let client = Client {
        capable,
        elicit: Arc::new(Mutex::new((ElicitationAction::Decline, Value::Null))),
        asked: Arc::default(),
    };
    (client.clone().serve(ours).await.unwrap(), client)
}

async fn call(
    service: &RunningService<RoleClient, Client>,
    name: &str,
    args: Value,
) -> CallToolResult {
    let Value::Object(args) = args else { panic!("not an object") };
    let params = CallToolRequestParams::new(name.to_owned()).with_arguments(args);
    service.peer().call_tool(params).await.unwrap()
}

fn text(result: &CallToolResult) -> String {
    serde_json::to_value(&result.content).unwrap()[0]["text"]
        .as_str()
        .unwrap_or_default()
        .to_owned()
}

#[tokio::test]
async fn sampling_over_mcp_asks_the_calling_client() {
    let (service, client) = connect(true).await;
    let result = call(&service, "ask__sample", json!({"prompt": "What is 2 + 2?"})).await;
    assert_eq!(result.is_error, Some(false), "{result:?}");
    assert_eq!(result.structured_content, Some(json!({"text": "Four."})));
    let asked = client.asked.lock().unwrap();
    assert_eq!(asked.len(), 1);
    assert_eq!(asked[0]["maxTokens"], 50);
    assert_eq!(asked[0]["systemPrompt"], "Be brief.");
    assert_eq!(asked[0]["messages"][0]["role"], "user");
    assert_eq!(asked[0]["messages"][0]["content"]["text"], "What is 2 + 2?");
    assert_eq!(asked[0]["messages"][1]["role"], "assistant");
}

#[tokio::test]
async fn elicitation_over_mcp_sends_the_answer_types_flat_schema_and_types_the_answer() {
    let (service, client) = connect(true).await;
    *client.elicit.lock().unwrap() =
        (ElicitationAction::Accept, json!({"name": "Ada", "age": 36, "color": "blue"}));
    let result = call(&service, "ask__profile", json!({})).await;
    assert_eq!(
        result.structured_content,
        Some(json!({"answer": "Ada Some(36) Blue"})),
        "{result:?}"
    );
    let asked = client.asked.lock().unwrap()[0].clone();
    assert_eq!(asked["message"], "Who are you?");
    let schema = &asked["requestedSchema"];
    assert_eq!(schema["type"], "object");
    assert_eq!(schema["properties"]["name"]["type"], "string");
    assert_eq!(schema["properties"]["name"]["description"], "Your name.");
    assert_eq!(schema["properties"]["age"]["type"], "integer", "an option is sent as its type");
    assert_eq!(schema["properties"]["color"]["enum"], json!(["red", "blue"]));
    assert_eq!(schema["required"], json!(["name", "color"]));

    *client.elicit.lock().unwrap() = (ElicitationAction::Decline, Value::Null);
    let result = call(&service, "ask__profile", json!({})).await;
    assert_eq!(result.structured_content, Some(json!({"answer": "declined"})));
    *client.elicit.lock().unwrap() = (ElicitationAction::Cancel, Value::Null);
    let result = call(&service, "ask__profile", json!({})).await;
    assert_eq!(result.structured_content, Some(json!({"answer": "cancelled"})));
}

#[tokio::test]
async fn an_answer_that_breaks_its_schema_is_a_typed_error_for_the_tool() {
    let (service, client) = connect(true).await;
    *client.elicit.lock().unwrap() =
        (ElicitationAction::Accept, json!({"name": "Ada", "age": 300, "color": "green"}));
    let result = call(&service, "ask__profile", json!({})).await;
    assert_eq!(result.is_error, Some(true));
    assert!(text(&result).contains("the answer does not match its schema"), "{}", text(&result));
}

#[tokio::test]
async fn a_client_without_the_capabilities_gives_the_tool_a_typed_error() {
    let (service, client) = connect(false).await;
    let result = call(&service, "ask__sample", json!({"prompt": "Hi"})).await;
    assert_eq!(result.is_error, Some(true));
    assert!(
        text(&result).contains("did not declare the `sampling` capability"),
        "{}",
        text(&result)
    );
    let result = call(&service, "ask__profile", json!({})).await;
    assert!(
        text(&result).contains("did not declare the `elicitation` capability"),
        "{}",
        text(&result)
    );
    assert!(client.asked.lock().unwrap().is_empty(), "nothing was sent");
}

#[tokio::test]
async fn answer_types_mcp_cannot_ask_for_are_refused_before_anything_is_sent() {
    let (service, client) = connect(true).await;
    let result = call(&service, "ask__nested", json!({})).await;
    assert_eq!(result.is_error, Some(false), "{result:?}");
    let why = result.structured_content.unwrap()["answer"].as_str().unwrap().to_owned();
    assert!(why.contains("`inner`"), "{why}");
    assert!(client.asked.lock().unwrap().is_empty());
}

#[tokio::test]
async fn defaults_and_titles_shape_the_requested_schema() {
    let (service, client) = connect(true).await;
    *client.elicit.lock().unwrap() =
        (ElicitationAction::Accept, json!({"name": "Bo", "color": "red", "colors": ["blue"]}));
    let result = call(&service, "ask__form", json!({"mode": "titled"})).await;
    assert_eq!(result.structured_content, Some(json!({"answer": "Some(\"Bo\")"})), "{result:?}");
    let schema = client.asked.lock().unwrap()[0]["requestedSchema"].clone();
    let properties = &schema["properties"];
    assert_eq!(properties["name"]["default"], "Ada");
    assert_eq!(properties["color"]["default"], "blue");
    assert_eq!(properties["colors"]["default"], json!(["red"]));
    assert!(properties["nickname"].get("default").is_none(), "a `None` gives no default");
    assert_eq!(
        properties["color"]["oneOf"],
        json!([{"const": "red", "title": "Crimson"}, {"const": "blue", "title": "blue"}])
    );
    assert!(properties["color"].get("enum").is_none());
    assert_eq!(
        properties["colors"]["items"],
        json!({"anyOf": [{"const": "red", "title": "Crimson"}, {"const": "blue", "title": "Navy"}]})
    );

    let result = call(&service, "ask__form", json!({"mode": "legacy"})).await;
    assert_eq!(result.is_error, Some(false), "{result:?}");
    let schema = client.asked.lock().unwrap()[1]["requestedSchema"].clone();
    assert_eq!(schema["properties"]["color"]["enum"], json!(["red", "blue"]));
    assert_eq!(schema["properties"]["color"]["enumNames"], json!(["Crimson", "Navy"]));

    for (mode, why) in [
        ("not_an_enum", "titles for `name`: not an enum"),
        ("unknown_value", "titles for `color`: `green` is not one of its values"),
        (
            "legacy_multi",
            "titles for `colors`: legacy titles (`enumNames`) are for single selects only",
        ),
    ] {
        let result = call(&service, "ask__form", json!({"mode": mode})).await;
        assert_eq!(result.structured_content, Some(json!({"answer": why})), "{mode}");
    }
    assert_eq!(client.asked.lock().unwrap().len(), 2, "refused questions are never sent");
}

#[tokio::test]
async fn outside_mcp_the_bound_backend_answers() {
    let unbound = runner(Interact::unavailable());
    let result = unbound.exec("ask__sample", br#"{"prompt": "Hi"}"#, &ctx()).await;
    assert_eq!(result.error_code(), Some(ToolErrorCode::Execution));

    // The agent's model samples; its elicitation is the agent loop's deferred decision, so
    // a direct `exec` has no one to ask (the `agent` binary's `deferred::questions` has the
    // agent loop).
    let model: Arc<dyn ChatModel> =
        Arc::new(ScriptedModel::new([ScriptedTurn::openai_text("Four.")]));
    let agent_side = runner(Interact::new(ChatModelSampler::new(model)));
    let result = agent_side.exec("ask__sample", br#"{"prompt": "2 + 2?"}"#, &ctx()).await;
    assert_eq!(result.value(), Some(&json!({"text": "Four."})));
    let result = agent_side.exec("ask__profile", b"{}", &ctx()).await;
    assert_eq!(result.error_code(), Some(ToolErrorCode::Execution));
    let message = result.error().unwrap().message.clone();
    assert!(message.contains("not available here: nothing answers questions"), "{message}");
}
