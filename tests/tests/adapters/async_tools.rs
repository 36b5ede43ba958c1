//! Asynchronous tools (`#[tool(asynchronous)]`) on OpenAI Responses, pinned by a golden
//! definition and read by the official `openai` SDK's types: `async: true` on the definition,
//! the calls' `async` kept and sent back
//! (<https://developers.openai.com/api/docs/guides/async-tool-calling>). Other providers have
//! no such mode: the tool is a plain one there.

use serde_json::{Value, json};
use tool_runtime::adapters::{
    Adapter, Anthropic, Message, ModelRequest, OpenAiChat, OpenAiResponses, RequestOptions,
    ToolChoice, ToolResult,
};
use tool_runtime::prelude::*;

use crate::support::{sdk_check, top_level};

/// Build the monthly sales report (takes minutes).
#[tool(name = "reports__build", effect = read_only, redact = all, asynchronous)]
struct BuildReport {
    /// The month, `YYYY-MM`.
    month: String,
}

impl Tool for BuildReport {
    type Output = String;
    async fn run(
        self,
        _: &ToolInvocationContext,
        _: &ToolCapabilities,
    ) -> Result<String, ToolError> {
        Ok(format!("https://r/{}", self.month))
    }
}

/// A response in which the model started the report and answered meanwhile.
const STARTED: &str = r#"{"object": "response", "status": "completed", "output": [
    {"type": "function_call", "id": "fc_1", "call_id": "call_1", "name": "reports__build",
     "arguments": "{\"month\": \"2026-10\"}", "status": "completed", "async": true},
    {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "Building it."}]}]}"#;

#[test]
fn openai_responses_marks_the_tool_and_its_calls_async() {
    let adapter = OpenAiResponses::new();
    let definition = adapter.tool(BuildReport::spec()).unwrap();
    assert_eq!(definition["async"], true);
    insta::assert_json_snapshot!("openai_responses_async_tool", definition);
    let decoded = adapter.decode(STARTED.as_bytes()).unwrap();
    assert!(decoded.calls[0].is_async());
    assert_eq!(decoded.text, "Building it.");
    // The result, whenever it comes, goes back by call id after the call as it was.
    let results = vec![ToolResult::ok(&decoded.calls[0], json!("https://r/2026-10"))];
    let messages =
        [Message::user("October?"), Message::Assistant(decoded), Message::ToolResults(results)];
    let specs = [BuildReport::spec()];
    let request = ModelRequest {
        messages: &messages,
        tools: &specs,
        choice: &ToolChoice::auto(),
        search: None,
    };
    let body = Value::Object(
        adapter.encode_request(&request, &RequestOptions::new("gpt-x").stream(false)).unwrap(),
    );
    let input = body["input"].as_array().unwrap();
    assert_eq!((&input[1]["role"], &input[2]["async"]), (&json!("assistant"), &json!(true)));
    assert_eq!(
        (&input[3]["type"], &input[3]["call_id"]),
        (&json!("function_call_output"), &json!("call_1"))
    );

    // The official SDK reads each of them.
    let checks = [
        (
            "openai.types.responses.response_create_params.ResponseCreateParamsNonStreaming",
            top_level(&body, &["input", "tools"]),
        ),
        ("openai.types.responses.FunctionToolParam", body["tools"][0].clone()),
        ("openai.types.responses.EasyInputMessageParam", input[1].clone()),
        ("openai.types.responses.ResponseFunctionToolCallParam", input[2].clone()),
        ("openai.types.responses.response_input_item_param.FunctionCallOutput", input[3].clone()),
        (
            "openai.types.responses.ResponseFunctionToolCall",
            serde_json::from_str::<Value>(STARTED).unwrap()["output"][0].clone(),
        ),
    ];
    let results = sdk_check(&checks);
    for ((kind, value), result) in checks.iter().zip(&results) {
        assert!(result.is_ok(), "{kind} refused {value}: {}", result.as_ref().unwrap_err());
    }
    assert_eq!(results[5].as_ref().unwrap()["async"], true, "the SDK reads the call as async");
}

#[test]
fn providers_without_async_calls_offer_a_plain_tool() {
    for adapter in [&OpenAiChat::new() as &dyn Adapter, &Anthropic::new()] {
        let definition = adapter.tool(BuildReport::spec()).unwrap().to_string();
        assert!(!definition.contains("async"), "{definition}");
    }
    assert_eq!(serde_json::to_value(BuildReport::spec()).unwrap()["asynchronous"], true);
}
