//! Tools called from code the model writes (`#[tool(callers = ...)]`), each wire form pinned
//! by a golden body and backed by behaviour:
//!
//! - Anthropic programmatic tool calling: `allowed_callers` with `code_execution_20260120`,
//!   the code execution tool, `tool_use` blocks with a `caller`, the code execution's server
//!   blocks and the `container` the next request must name
//!   (<https://platform.claude.com/docs/en/agents-and-tools/tool-use/programmatic-tool-calling>);
//! - OpenAI Responses programmatic callers: `allowed_callers` with `programmatic`, the
//!   `programmatic_tool_calling` tool, `program` items and calls with a `program` caller;
//! - the providers without calls from code, which refuse a tool only code may call;
//! - every payload above read by the official `anthropic` and `openai` Python SDKs' own types
//!   (`tests/sdk_oracle.py`), which refuse a caller they do not know and a misspelt field.

use serde_json::{Value, json};
use tool_runtime::adapters::{
    Adapter, Anthropic, EncodeError, Gemini, Message, ModelRequest, Ollama, OpenAiChat,
    OpenAiResponses, Provider, RequestOptions, ToolCall, ToolChoice, ToolResult,
};
use tool_runtime::prelude::*;
use tool_runtime::spec::Callers;
use tool_tests::fixtures::{Now, SalesQuery, SalesRevenue};

use crate::support::{sdk_check, top_level};

fn specs() -> [&'static ToolSpec; 3] {
    [Now::spec(), SalesQuery::spec(), SalesRevenue::spec()]
}

/// The request body `adapter` encodes for `messages` and `tools`.
fn body(
    adapter: &dyn Adapter,
    messages: &[Message],
    tools: &[&ToolSpec],
) -> Result<Value, EncodeError> {
    let request = ModelRequest { messages, tools, choice: &ToolChoice::auto(), search: None };
    adapter
        .encode_request(&request, &RequestOptions::new("model-x").stream(false))
        .map(Value::Object)
}

#[test]
fn the_spec_says_who_may_call() {
    assert_eq!(SalesQuery::spec().callers(), Callers::Programmatic);
    assert_eq!(SalesRevenue::spec().callers(), Callers::Both);
    assert_eq!(Now::spec().callers(), Callers::Direct);
    assert_eq!(serde_json::to_value(SalesRevenue::spec()).unwrap()["callers"], "both");
    // A tool that says nothing keeps the spec JSON (and hash) it had before callers existed.
    assert!(serde_json::to_value(Now::spec()).unwrap().get("callers").is_none());
}

#[test]
fn anthropic_offers_code_execution_and_allowed_callers() {
    let body =
        body(&Anthropic::new(), &[Message::user("Which region sold most?")], &specs()).unwrap();
    let tools = body["tools"].as_array().unwrap();
    assert_eq!(tools[0], json!({"type": "code_execution_20260120", "name": "code_execution"}));
    assert!(tools[1].get("allowed_callers").is_none(), "a direct tool says nothing");
    assert_eq!(tools[2]["allowed_callers"], json!(["code_execution_20260120"]));
    assert_eq!(tools[3]["allowed_callers"], json!(["direct", "code_execution_20260120"]));
    insta::assert_json_snapshot!("anthropic_callers_tools", tools);
    // Without a tool code may call, no code execution tool.
    let plain = body_tools(&Anthropic::new(), &[Now::spec()]);
    assert_eq!(plain.as_array().unwrap().len(), 1);
}

#[test]
fn openai_responses_offers_programmatic_calling_and_allowed_callers() {
    let tools = body_tools(&OpenAiResponses::new(), &specs());
    let tools = tools.as_array().unwrap();
    assert_eq!(tools[0], json!({"type": "programmatic_tool_calling"}));
    assert!(tools[1].get("allowed_callers").is_none());
    assert_eq!(tools[2]["allowed_callers"], json!(["programmatic"]));
    assert_eq!(tools[3]["allowed_callers"], json!(["direct", "programmatic"]));
    insta::assert_json_snapshot!("openai_responses_callers_tools", tools);
    let plain = body_tools(&OpenAiResponses::new(), &[Now::spec(), SalesRevenue::spec()]);
    assert_eq!(plain[0]["type"], "programmatic_tool_calling", "`both` allows code too");
}

fn body_tools(adapter: &dyn Adapter, tools: &[&ToolSpec]) -> Value {
    body(adapter, &[Message::user("hi")], tools).unwrap()["tools"].clone()
}

#[test]
fn providers_without_calls_from_code_refuse_code_only_tools() {
    let adapters: [&dyn Adapter; 4] =
        [&OpenAiChat::new(), &Gemini::new(), &Ollama::new(), &OpenAiChat::new().strict(true)];
    for adapter in adapters {
        let provider = adapter.provider();
        assert!(!provider.calls_from_code());
        match adapter.tool(SalesQuery::spec()) {
            Err(error @ EncodeError::CodeOnly { .. }) => {
                assert_eq!(error, EncodeError::CodeOnly { provider, tool: "sales__query".into() });
                let message = error.to_string();
                assert!(message.contains("`sales__query`") && message.contains("callers = both"));
            }
            other => panic!("{provider:?}: expected CodeOnly, got {other:?}"),
        }
        // A tool the model may call directly too is offered as a plain one.
        let revenue = adapter.tool(SalesRevenue::spec()).unwrap().to_string();
        assert!(!revenue.contains("allowed_callers"), "{provider:?}: {revenue}");
    }
    assert!(Provider::Anthropic.calls_from_code() && Provider::OpenAiResponses.calls_from_code());
}

/// A response in which the model wrote code that called `sales__query` twice (the calls wait
/// for their results inside the container) and `core__now` directly.
const ANTHROPIC_CODE: &str = r#"{"type": "message", "role": "assistant",
    "container": {"id": "container_011", "expires_at": "2026-11-28T01:00:00Z"},
    "content": [
    {"type": "text", "text": "I'll query each region in code."},
    {"type": "server_tool_use", "id": "srvtoolu_01", "name": "code_execution",
     "input": {"code": "for r in ['West', 'East']:\n    await query(sql=r)"}},
    {"type": "tool_use", "id": "toolu_01", "name": "sales__query", "input": {"sql": "West"},
     "caller": {"type": "code_execution_20260120", "tool_id": "srvtoolu_01"}},
    {"type": "tool_use", "id": "toolu_02", "name": "sales__query", "input": {"sql": "East"},
     "caller": {"type": "code_execution_20260120", "tool_id": "srvtoolu_01"}},
    {"type": "tool_use", "id": "toolu_03", "name": "core__now", "input": {},
     "caller": {"type": "direct"}}],
    "stop_reason": "tool_use"}"#;

#[test]
fn anthropic_calls_from_code_round_trip_with_their_container() {
    let adapter = Anthropic::new();
    let decoded = adapter.decode(ANTHROPIC_CODE.as_bytes()).unwrap();
    assert!(decoded.problems.is_empty(), "{:?}", decoded.problems);
    let from_code: Vec<bool> = decoded.calls.iter().map(ToolCall::from_code).collect();
    assert_eq!(from_code, [true, true, false]);
    assert_eq!(decoded.extras.get("container").unwrap()["id"], "container_011");
    // The next request: the turn with its code execution block and callers, the results,
    // and the container named.
    let results: Vec<ToolResult> = decoded
        .calls
        .iter()
        .map(|call| ToolResult::ok(call, json!(format!("rows for {}", call.id))))
        .collect();
    let messages = [
        Message::user("Which region sold most?"),
        Message::Assistant(decoded),
        Message::ToolResults(results),
    ];
    let next = body(&adapter, &messages, &specs()).unwrap();
    assert_eq!(next["container"], "container_011");
    let turn = next["messages"][1]["content"].as_array().unwrap();
    let kinds: Vec<&str> = turn.iter().map(|block| block["type"].as_str().unwrap()).collect();
    assert_eq!(kinds, ["server_tool_use", "text", "tool_use", "tool_use", "tool_use"]);
    assert_eq!(turn[2]["caller"]["tool_id"], "srvtoolu_01");
    // Results are `tool_result` blocks only, as a code execution's pending calls need.
    let answers = next["messages"][2]["content"].as_array().unwrap();
    assert!(answers.iter().all(|block| block["type"] == "tool_result"));
    insta::assert_json_snapshot!("anthropic_calls_from_code_next_request", next);
    // A conversation without a code execution names no container.
    let plain = body(&adapter, &[Message::user("hi")], &specs()).unwrap();
    assert!(plain.get("container").is_none());
}

#[test]
fn anthropic_streamed_calls_from_code_keep_caller_blocks_and_container() {
    let frames = [
        r#"{"type": "message_start", "message": {"container": {"id": "container_022", "expires_at": "2026-11-28T01:00:00Z"}, "usage": {"input_tokens": 10, "output_tokens": 1}}}"#,
        r#"{"type": "content_block_start", "index": 0, "content_block": {"type": "server_tool_use", "id": "srvtoolu_09", "name": "code_execution", "input": {}}}"#,
        r#"{"type": "content_block_delta", "index": 0, "delta": {"type": "input_json_delta", "partial_json": "{\"code\": \"await query(sql='West')\"}"}}"#,
        r#"{"type": "content_block_stop", "index": 0}"#,
        r#"{"type": "content_block_start", "index": 1, "content_block": {"type": "tool_use", "id": "toolu_09", "name": "sales__query", "input": {}, "caller": {"type": "code_execution_20260120", "tool_id": "srvtoolu_09"}}}"#,
        r#"{"type": "content_block_delta", "index": 1, "delta": {"type": "input_json_delta", "partial_json": "{\"sql\": \"West\"}"}}"#,
        r#"{"type": "content_block_stop", "index": 1}"#,
        r#"{"type": "message_delta", "delta": {"stop_reason": "tool_use"}, "usage": {"output_tokens": 20}}"#,
        r#"{"type": "message_stop"}"#,
    ];
    let stream: String = frames.iter().map(|frame| format!("data: {frame}\n\n")).collect();
    let mut session = Anthropic::new().stream();
    for piece in stream.as_bytes().chunks(23) {
        session.feed(piece);
    }
    let decoded = session.finish();
    assert_eq!(decoded.calls.len(), 1);
    assert!(decoded.calls[0].from_code());
    assert_eq!(decoded.calls[0].arguments.value(), Some(&json!({"sql": "West"})));
    assert_eq!(decoded.extras.get("container").unwrap()["id"], "container_022");
    let blocks = decoded.extras.get("server_tool_blocks").unwrap();
    assert_eq!(blocks[0]["input"]["code"], "await query(sql='West')");
}

/// A Responses output in which a program called `sales__query` and the model called
/// `core__now` itself.
const OPENAI_PROGRAM: &str = r#"{"object": "response", "status": "completed", "output": [
    {"type": "program", "id": "prog_1", "call_id": "call_prog_1",
     "code": "const rows = await tools.sales__query({sql: 'West'});", "fingerprint": "fp_opaque"},
    {"type": "function_call", "id": "fc_1", "call_id": "call_1", "name": "sales__query",
     "arguments": "{\"sql\": \"West\"}", "status": "completed",
     "caller": {"type": "program", "caller_id": "call_prog_1"}},
    {"type": "function_call", "id": "fc_2", "call_id": "call_2", "name": "core__now",
     "arguments": "{}", "status": "completed", "caller": {"type": "direct"}}]}"#;

#[test]
fn openai_program_calls_round_trip_with_their_program() {
    let adapter = OpenAiResponses::new();
    let decoded = adapter.decode(OPENAI_PROGRAM.as_bytes()).unwrap();
    let from_code: Vec<bool> = decoded.calls.iter().map(ToolCall::from_code).collect();
    assert_eq!(from_code, [true, false]);
    let results: Vec<ToolResult> =
        decoded.calls.iter().map(|call| ToolResult::ok(call, json!("ok"))).collect();
    let messages = [
        Message::user("West revenue?"),
        Message::Assistant(decoded),
        Message::ToolResults(results),
    ];
    let next = body(&adapter, &messages, &specs()).unwrap();
    let input = next["input"].as_array().unwrap();
    let kinds: Vec<&str> =
        input.iter().map(|item| item["type"].as_str().unwrap_or("message")).collect();
    assert_eq!(
        kinds,
        [
            "message",
            "program",
            "function_call",
            "function_call",
            "function_call_output",
            "function_call_output"
        ]
    );
    assert_eq!(input[1]["fingerprint"], "fp_opaque", "the program goes back as received");
    assert_eq!(input[2]["caller"], json!({"type": "program", "caller_id": "call_prog_1"}));
    assert_eq!(input[4]["caller"], json!({"type": "program", "caller_id": "call_prog_1"}));
    insta::assert_json_snapshot!("openai_program_calls_next_request", next);
}

#[test]
fn the_official_sdks_take_every_payload_of_calls_from_code() {
    // Anthropic: the request after a turn of calls from code, block by block.
    let anthropic = Anthropic::new();
    let decoded = anthropic.decode(ANTHROPIC_CODE.as_bytes()).unwrap();
    let results: Vec<ToolResult> =
        decoded.calls.iter().map(|call| ToolResult::ok(call, json!("rows"))).collect();
    let messages = [
        Message::user("Which region?"),
        Message::Assistant(decoded),
        Message::ToolResults(results),
    ];
    let next = body(&anthropic, &messages, &specs()).unwrap();
    let mut checks = vec![(
        "anthropic.types.message_create_params.MessageCreateParamsNonStreaming",
        top_level(&next, &["messages", "tools"]),
    )];
    let tools = next["tools"].as_array().unwrap();
    checks.push(("anthropic.types.CodeExecutionTool20260120Param", tools[0].clone()));
    checks.extend(tools[1..].iter().map(|tool| ("anthropic.types.ToolParam", tool.clone())));
    for message in next["messages"].as_array().unwrap() {
        for block in message["content"].as_array().unwrap() {
            let kind = match block["type"].as_str().unwrap() {
                "text" => "anthropic.types.TextBlockParam",
                "server_tool_use" => "anthropic.types.ServerToolUseBlockParam",
                "tool_use" => "anthropic.types.ToolUseBlockParam",
                "tool_result" => "anthropic.types.ToolResultBlockParam",
                other => panic!("unexpected block {other}"),
            };
            checks.push((kind, block.clone()));
        }
    }
    // The response's blocks as the SDK reads them.
    let response: Value = serde_json::from_str(ANTHROPIC_CODE).unwrap();
    checks.push(("anthropic.types.Container", response["container"].clone()));
    for block in response["content"].as_array().unwrap() {
        let kind = match block["type"].as_str().unwrap() {
            "text" => "anthropic.types.TextBlock",
            "server_tool_use" => "anthropic.types.ServerToolUseBlock",
            _ => "anthropic.types.ToolUseBlock",
        };
        checks.push((kind, block.clone()));
    }
    // OpenAI Responses: the request after a turn with a program, item by item.
    let openai = OpenAiResponses::new();
    let decoded = openai.decode(OPENAI_PROGRAM.as_bytes()).unwrap();
    let results: Vec<ToolResult> =
        decoded.calls.iter().map(|call| ToolResult::ok(call, json!("ok"))).collect();
    let messages =
        [Message::user("West?"), Message::Assistant(decoded), Message::ToolResults(results)];
    let next = body(&openai, &messages, &specs()).unwrap();
    checks.push((
        "openai.types.responses.response_create_params.ResponseCreateParamsNonStreaming",
        top_level(&next, &["input", "tools"]),
    ));
    let tools = next["tools"].as_array().unwrap();
    checks.push(("openai.types.responses.tool_param.ProgrammaticToolCalling", tools[0].clone()));
    checks.extend(
        tools[1..].iter().map(|tool| ("openai.types.responses.FunctionToolParam", tool.clone())),
    );
    for item in next["input"].as_array().unwrap() {
        let kind = match item["type"].as_str() {
            None => "openai.types.responses.EasyInputMessageParam",
            Some("program") => "openai.types.responses.response_input_item_param.Program",
            Some("function_call") => "openai.types.responses.ResponseFunctionToolCallParam",
            Some("function_call_output") => {
                "openai.types.responses.response_input_item_param.FunctionCallOutput"
            }
            Some(other) => panic!("unexpected item {other}"),
        };
        checks.push((kind, item.clone()));
    }
    let response: Value = serde_json::from_str(OPENAI_PROGRAM).unwrap();
    let output = response["output"].as_array().unwrap();
    checks.push(("openai.types.responses.response_output_item.Program", output[0].clone()));
    checks.push(("openai.types.responses.ResponseFunctionToolCall", output[1].clone()));
    // The oracle is sharp: a caller the SDK does not know, and a misspelt field, are refused.
    let mut wrong_caller = tools[2].clone();
    wrong_caller["allowed_callers"] = json!(["code"]);
    checks.push(("openai.types.responses.FunctionToolParam", wrong_caller));
    let mut misspelt = tools[2].clone();
    misspelt["allowed_caller"] = json!(["programmatic"]);
    checks.push(("openai.types.responses.FunctionToolParam", misspelt));

    let results = sdk_check(&checks);
    let (checked, sharp) = results.split_at(results.len() - 2);
    for ((kind, value), result) in checks.iter().zip(checked) {
        assert!(result.is_ok(), "{kind} refused {value}: {}", result.as_ref().unwrap_err());
    }
    assert!(sharp.iter().all(Result::is_err), "{sharp:?}");
    // What the SDKs made of the callers.
    let parsed: Vec<&Value> = checked.iter().map(|result| result.as_ref().unwrap()).collect();
    let callers: Vec<&Value> = parsed.iter().filter_map(|value| value.get("caller")).collect();
    assert!(
        callers.contains(&&json!({"type": "code_execution_20260120", "tool_id": "srvtoolu_01"}))
    );
    assert!(callers.contains(&&json!({"type": "program", "caller_id": "call_prog_1"})));
}
