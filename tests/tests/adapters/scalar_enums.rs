//! Integer, number and boolean enums in run-time schemas: taken, validated, and carried by
//! every encoder (or lowered into the description where a dialect has no such enum).

use serde_json::{Value, json};
use tool_runtime::adapters::{
    Adapter, Anthropic, Gemini, GeminiParameters, Ollama, OpenAiChat, OpenAiResponses,
};
use tool_runtime::catalog::ToolCatalog;
use tool_runtime::prelude::*;
use tool_runtime::runner::ToolRunner;
use tool_runtime::runtime::{BoundToolRuntime, DynamicTool, DynamicToolError};

fn schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "size": {"type": "integer", "description": "Shirt size.", "enum": [2, 4]},
            "ratio": {"type": ["number", "null"], "enum": [0.5, 1.5, null]},
            "on": {"type": "boolean", "enum": [true]}
        },
        "required": ["size"],
        "additionalProperties": false
    })
}

fn tool(schema: Value) -> Result<DynamicTool, DynamicToolError> {
    DynamicTool::builder("shop__pick", "Pick a size.", schema)
        .allow_open_schema()
        .effect(ToolEffect::ReadOnly)
        .redact_all()
        .build(|args, _, _| async move { Ok(args) })
}

#[tokio::test]
async fn a_dynamic_tool_takes_integer_number_and_boolean_enums_and_validates_them() {
    let tool = tool(schema()).expect("an integer enum is in the subset");
    let catalog = ToolCatalog::builder().register_dynamic(tool).build().unwrap();
    let runner = ToolRunner::builder(catalog).policy(ToolPolicy::allowing(["shop__*"])).build();
    let ctx = ToolInvocationContext::new(ContextIds { run_id: "r", actor_id: "a", tenant_id: "t" });
    for good in [
        r#"{"size": 4}"#,
        r#"{"size": 2, "ratio": 1.5, "on": true}"#,
        r#"{"size": 2, "ratio": null}"#,
    ] {
        let result = runner.exec("shop__pick", good.as_bytes(), &ctx).await;
        assert!(result.error_code().is_none(), "{good}: {:?}", result.error_code());
    }
    for bad in [
        r#"{"size": 3}"#,
        r#"{"size": "2"}"#,
        r#"{"size": 2, "ratio": 1.0}"#,
        r#"{"size": 2, "on": false}"#,
    ] {
        let result = runner.exec("shop__pick", bad.as_bytes(), &ctx).await;
        assert_eq!(result.error_code(), Some(ToolErrorCode::Validation), "{bad}");
    }
}

#[test]
fn an_enum_value_that_its_type_refuses_or_that_is_not_a_scalar_is_refused() {
    for (property, at) in [
        (json!({"type": "integer", "enum": [2, "four"]}), "/properties/x/enum/1"),
        (json!({"type": "integer", "enum": [2.5]}), "/properties/x/enum/0"),
        (json!({"type": "string", "enum": [true]}), "/properties/x/enum/0"),
        (json!({"type": "boolean", "enum": [1]}), "/properties/x/enum/0"),
        (json!({"enum": [[1]]}), "/properties/x/enum/0"),
        (json!({"enum": [{"a": 1}]}), "/properties/x/enum/0"),
    ] {
        let schema = json!({"type": "object", "properties": {"x": property}});
        match tool(schema) {
            Err(DynamicToolError::InputSchema(error)) => assert_eq!(error.pointer(), at),
            other => panic!("{property}: {other:?}"),
        }
    }
    // Without a type, any scalar goes; a whole number is an integer whatever its spelling.
    assert!(
        tool(json!({"type": "object", "properties": {"x": {"enum": ["a", 1, true, null]}}}))
            .is_ok()
    );
    assert!(
        tool(json!({"type": "object", "properties": {"x": {"type": "integer", "enum": [2.0]}}}))
            .is_ok()
    );
}

fn size(encoded: &Value) -> Value {
    let mut found = Value::Null;
    let mut stack = vec![encoded];
    while let Some(node) = stack.pop() {
        if let Some(size) = node.get("properties").and_then(|p| p.get("size")) {
            found = size.clone();
        }
        match node {
            Value::Object(map) => stack.extend(map.values()),
            Value::Array(items) => stack.extend(items),
            _ => {}
        }
    }
    found
}

#[test]
fn every_encoder_carries_a_scalar_enum_or_lowers_it_into_the_description() {
    let tool = tool(schema()).expect("an integer enum is in the subset");
    let spec = tool.spec();
    let carrying: [(&str, Box<dyn Adapter>); 8] = [
        ("openai chat", Box::new(OpenAiChat::new())),
        ("openai chat strict", Box::new(OpenAiChat::new().strict(true))),
        ("openai responses", Box::new(OpenAiResponses::new())),
        ("openai responses strict", Box::new(OpenAiResponses::new().strict(true))),
        ("anthropic", Box::new(Anthropic::new())),
        ("anthropic strict", Box::new(Anthropic::new().strict(true))),
        ("gemini json schema", Box::new(Gemini::new().parameters(GeminiParameters::JsonSchema))),
        ("ollama", Box::new(Ollama::new())),
    ];
    for (name, adapter) in carrying {
        let encoded = adapter.tool(spec).unwrap();
        assert_eq!(size(&encoded)["enum"], json!([2, 4]), "{name}: {encoded}");
    }
    // Gemini's OpenAPI subset takes string enums only: the values go into the description,
    // and the runner still validates against them.
    let encoded = Gemini::new().parameters(GeminiParameters::OpenApi).tool(spec).unwrap();
    let size = size(&encoded);
    assert_eq!(size["type"], "INTEGER", "{encoded}");
    assert!(size.get("enum").is_none() && size.get("format").is_none(), "{encoded}");
    assert_eq!(size["description"], "Shirt size. (one of: 2, 4)", "{encoded}");
    let ratio = &encoded[0]["parameters"]["properties"]["ratio"];
    let ratio = if ratio.is_null() { &encoded["parameters"]["properties"]["ratio"] } else { ratio };
    assert_eq!(ratio["description"], "one of: 0.5, 1.5", "{encoded}");
    assert_eq!(ratio["nullable"], true, "{encoded}");
}
