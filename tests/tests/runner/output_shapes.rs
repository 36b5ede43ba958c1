//! Any output type with a schema runs end to end: strings, numbers, `bool`, `Vec<T>`, unit
//! enums, `Option<T>`, structs and `Content<T, D>`, each redacted by its allowlist, through
//! `exec` and through the agent loop.

use std::sync::Arc;

use serde_json::{Value, json};
use tool_runtime::adapters::{Adapter, ModelRequest, OpenAiChat, RequestOptions, ToolChoice};
use tool_runtime::agent::{Agent, Message, ScriptedModel, ScriptedTurn, StopReason};
use tool_runtime::catalog::ToolCatalog;
use tool_runtime::content::{Content, Part};
use tool_runtime::policy::ToolPolicy;
use tool_runtime::prelude::*;
use tool_runtime::runner::ToolRunner;
use tool_runtime::runtime::{CollectingSink, EventOutcome, ToolEvent};
use tool_tests::fixtures::ctx;

/// Shout the text back.
#[tool(name = "test__shout", effect = read_only, redact = all)]
struct Shout {
    text: String,
}

impl Tool for Shout {
    type Output = String;
    async fn run(
        self,
        _: &ToolInvocationContext,
        _: &ToolCapabilities,
    ) -> Result<String, ToolError> {
        Ok(self.text.to_uppercase())
    }
}

#[derive(Serialize, ToolSchema)]
struct Entry {
    name: String,
    owner: String,
}

/// List the files of a directory.
#[tool(name = "test__list", effect = read_only, redact = ["name"])]
struct List {
    dir: String,
}

impl Tool for List {
    type Output = Vec<Entry>;
    async fn run(
        self,
        _: &ToolInvocationContext,
        _: &ToolCapabilities,
    ) -> Result<Vec<Entry>, ToolError> {
        Ok(["a.txt", "b.txt"]
            .into_iter()
            .map(|name| Entry {
                name: format!("{}/{name}", self.dir),
                owner: "x@example.com".into(),
            })
            .collect())
    }
}

/// Whether the secret is set: the model is told nothing.
#[tool(name = "test__flag", effect = read_only, redact = [])]
struct Flag {}

impl Tool for Flag {
    type Output = bool;
    async fn run(self, _: &ToolInvocationContext, _: &ToolCapabilities) -> Result<bool, ToolError> {
        Ok(true)
    }
}

#[derive(Serialize, ToolSchema)]
#[serde(rename_all = "snake_case")]
enum Light {
    Red,
    Green,
}

/// The light's colour.
#[tool(name = "test__light", effect = read_only, redact = all)]
struct LightTool {
    stop: bool,
}

impl Tool for LightTool {
    type Output = Light;
    async fn run(
        self,
        _: &ToolInvocationContext,
        _: &ToolCapabilities,
    ) -> Result<Light, ToolError> {
        Ok(if self.stop { Light::Red } else { Light::Green })
    }
}

/// Find an entry, if any.
#[tool(name = "test__find", effect = read_only, redact = ["name"])]
struct Find {
    found: bool,
}

impl Tool for Find {
    type Output = Option<Entry>;
    async fn run(
        self,
        _: &ToolInvocationContext,
        _: &ToolCapabilities,
    ) -> Result<Option<Entry>, ToolError> {
        Ok(self.found.then(|| Entry { name: "a.txt".into(), owner: "x".into() }))
    }
}

/// Numbers of lines, whole.
#[tool(name = "test__count", effect = read_only, redact = all)]
struct Count {}

impl Tool for Count {
    type Output = Vec<u32>;
    async fn run(
        self,
        _: &ToolInvocationContext,
        _: &ToolCapabilities,
    ) -> Result<Vec<u32>, ToolError> {
        Ok(vec![3, 1, 4])
    }
}

#[derive(Serialize, ToolSchema)]
struct Size {
    width: u32,
    height: u32,
}

#[derive(Serialize, ToolSchema)]
struct Saved {
    path: String,
    owner: String,
}

/// Take a screenshot.
#[tool(name = "test__shot", effect = read_only, redact = all, redact_details = ["path"])]
struct Shot {}

impl Tool for Shot {
    type Output = Content<Size, Saved>;
    async fn run(
        self,
        _: &ToolInvocationContext,
        _: &ToolCapabilities,
    ) -> Result<Content<Size, Saved>, ToolError> {
        Ok(Content::new()
            .text("the screen:")
            .image("image/png", &b"\x89PNG\r\n\x1a\n\0\0\0\x0dIHDR\0\0\0\x01\0\0\0\x01"[..])
            .json(Size { width: 2, height: 1 })
            .details(Saved { path: "/tmp/shot.png".into(), owner: "x@example.com".into() }))
    }
}

const ALLOW: &str = r#"{"allowed_tools": ["test__*"]}"#;

fn runner(sink: &CollectingSink) -> ToolRunner {
    let catalog = ToolCatalog::builder()
        .register::<Shout>()
        .register::<List>()
        .register::<Flag>()
        .register::<LightTool>()
        .register::<Find>()
        .register::<Count>()
        .register::<Shot>()
        .build()
        .unwrap();
    ToolRunner::builder(catalog)
        .policy(ToolPolicy::from_json(ALLOW).unwrap())
        .event_sink(sink.clone())
        .build()
}

async fn value_of(name: &str, args: Value) -> Value {
    let result = runner(&CollectingSink::new()).exec(name, &args, &ctx()).await;
    assert!(result.is_ok(), "{name}: {:?}", result.error());
    result.value().cloned().unwrap()
}

#[tokio::test]
async fn every_output_shape_runs_and_is_redacted_by_its_allowlist() {
    assert_eq!(value_of("test__shout", json!({"text": "hi"})).await, json!("HI"));
    assert_eq!(
        value_of("test__list", json!({"dir": "/d"})).await,
        json!([{"name": "/d/a.txt"}, {"name": "/d/b.txt"}]),
        "`redact = [\"name\"]` keeps the name of every entry of a top-level array"
    );
    assert_eq!(value_of("test__flag", json!({})).await, Value::Null, "`redact = []` keeps nothing");
    assert_eq!(value_of("test__light", json!({"stop": false})).await, json!("green"));
    assert_eq!(value_of("test__light", json!({"stop": true})).await, json!("red"));
    assert_eq!(value_of("test__find", json!({"found": true})).await, json!({"name": "a.txt"}));
    assert_eq!(value_of("test__find", json!({"found": false})).await, Value::Null);
    assert_eq!(value_of("test__count", json!({})).await, json!([3, 1, 4]));
}

#[test]
fn specs_say_which_allowlist_they_carry() {
    assert!(Shout::spec().redaction().is_all());
    assert!(Shout::spec().redaction_keeps_valid_output(), "`all` takes the fast path");
    assert!(!List::spec().redaction_keeps_valid_output(), "`owner` is removed");
    assert!(Flag::spec().redaction().is_empty());
    let json = serde_json::to_value(Shout::spec()).unwrap();
    assert_eq!(json["redaction"], "all");
    assert_eq!(json["output_schema"], json!({"type": "string"}));
    let shot = serde_json::to_value(Shot::spec()).unwrap();
    assert_eq!(shot["details_redaction"], json!(["path"]));
    assert_eq!(shot["details_schema"]["required"], json!(["path", "owner"]));
}

#[tokio::test]
async fn details_are_redacted_by_their_own_allowlist_and_recorded() {
    let sink = CollectingSink::new();
    let result = runner(&sink).exec("test__shot", &json!({}), &ctx()).await;
    let output = result.output().expect("the call succeeds");
    assert_eq!(output.details(), Some(&json!({"path": "/tmp/shot.png"})), "`owner` is removed");
    assert_eq!(output.structured(), Some(&json!({"width": 2, "height": 1})));
    assert!(matches!(&output.parts()[1], Part::Image(image) if image.data.len() == 24));

    let record = result.record();
    assert_eq!(record.details, Some(json!({"path": "/tmp/shot.png"})));
    let kinds: Vec<&str> = record.parts.iter().map(|part| part.kind).collect();
    assert_eq!(kinds, ["text", "image", "json"]);

    let ended = sink.events().into_iter().find_map(|event| match event {
        ToolEvent::ToolCallResult { outcome, .. } => Some(outcome),
        _ => None,
    });
    let Some(EventOutcome::Ok { details, parts, .. }) = ended else { panic!("{ended:?}") };
    assert_eq!(details, Some(json!({"path": "/tmp/shot.png"})));
    assert_eq!(parts[1].sha256.as_deref().map(str::len), Some(64));
}

/// The conversation of a request, as the OpenAI Chat adapter would send it.
fn wire_messages(messages: &[Message]) -> Vec<Value> {
    let request = ModelRequest { messages, tools: &[], choice: &ToolChoice::auto(), search: None };
    let body = OpenAiChat::new().encode_request(&request, &RequestOptions::new("m")).unwrap();
    body["messages"].as_array().unwrap().clone()
}

fn tool_message<'a>(messages: &'a [Value], call_id: &str) -> &'a Value {
    messages
        .iter()
        .find(|message| message["role"] == "tool" && message["tool_call_id"] == call_id)
        .unwrap_or_else(|| panic!("no tool message for {call_id} in {messages:?}"))
}

#[tokio::test]
async fn the_model_sees_text_as_text_an_array_as_json_and_never_the_details() {
    let model = Arc::new(ScriptedModel::new([
        ScriptedTurn::openai_calls(&[
            ("call_text", "test__shout", r#"{"text": "hello there"}"#),
            ("call_list", "test__list", r#"{"dir": "/d"}"#),
            ("call_shot", "test__shot", "{}"),
        ]),
        ScriptedTurn::openai_text("done"),
    ]));
    let agent = Agent::new(model.clone(), runner(&CollectingSink::new()));
    let output = agent.run(vec![Message::user("go")], &ctx(), &|_| {}).await;
    assert_eq!(output.done.stop, StopReason::Answered);

    let next = &model.requests()[1];
    let wire = wire_messages(&next.messages);
    assert_eq!(tool_message(&wire, "call_text")["content"], "HELLO THERE", "raw text, no quotes");
    let listed = tool_message(&wire, "call_list")["content"].as_str().unwrap();
    assert_eq!(
        serde_json::from_str::<Value>(listed).unwrap(),
        json!([{"name": "/d/a.txt"}, {"name": "/d/b.txt"}])
    );
    let body = serde_json::to_string(&wire).unwrap();
    assert!(!body.contains("x@example.com"), "no redacted field reaches the model: {body}");
    assert!(!body.contains("/tmp/shot.png"), "details never reach the model: {body}");

    let shot = output.done.records.iter().find(|record| record.tool_call_id == "call_shot");
    assert_eq!(shot.unwrap().details, Some(json!({"path": "/tmp/shot.png"})));
}

#[tokio::test]
async fn a_dynamic_tool_redacts_its_details_by_their_allowlist() {
    use tool_runtime::content::ToolOutput;
    use tool_runtime::runtime::{DynamicTool, DynamicToolError};
    use tool_runtime::spec::Redaction;

    let details = json!({"type": "object", "properties": {"path": {"type": "string"}, "owner": {"type": "string"}}});
    let tool = DynamicTool::builder("dyn__save", "Save.", json!({"type": "object"}))
        .allow_open_schema()
        .effect(ToolEffect::ReadOnly)
        .details(details.clone(), Redaction::new(["path"]))
        .build(|_, _, _| async {
            Ok(ToolOutput::from(Part::Text("saved".into()))
                .with_details(json!({"path": "/a", "owner": "x"})))
        })
        .unwrap();
    let runner =
        ToolRunner::builder(ToolCatalog::builder().register_dynamic(tool).build().unwrap())
            .policy(ToolPolicy::allowing(["dyn__*"]))
            .build();
    let result = runner.exec("dyn__save", b"{}", &ctx()).await;
    assert_eq!(result.output().unwrap().details(), Some(&json!({"path": "/a"})));

    let misspelt = DynamicTool::builder("dyn__save", "Save.", json!({"type": "object"}))
        .allow_open_schema()
        .details(details, Redaction::new(["pth"]))
        .build(|_, _, _| async { Ok(json!({})) })
        .unwrap_err();
    assert_eq!(misspelt, DynamicToolError::RedactDetailsPath("pth".into()));
    let no_properties = DynamicTool::builder("dyn__save", "Save.", json!({"type": "object"}))
        .allow_open_schema()
        .details(json!({"type": "object"}), Redaction::new(["path"]))
        .build(|_, _, _| async { Ok(json!({})) })
        .unwrap_err();
    assert_eq!(no_properties, DynamicToolError::RedactDetailsPath("path".into()));
}
