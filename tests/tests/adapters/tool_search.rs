//! The application's own tool search ([`ClientSearch`]), each wire form pinned by a golden
//! body and backed by behaviour:
//!
//! - Anthropic: the search tool is a tool like the others, the tools to find are declared with
//!   `"defer_loading": true`, and a search's `tool_result` holds `tool_reference` blocks
//!   (<https://platform.claude.com/docs/en/agents-and-tools/tool-use/tool-search-tool>);
//! - OpenAI Responses: `{"type": "tool_search", "execution": "client"}`, the model's
//!   `tool_search_call` items decoded as calls and sent back as they came, the results as
//!   `tool_search_output` items carrying the found tools
//!   (<https://developers.openai.com/api/docs/guides/tools-tool-search#client-executed-tool-search>);
//! - OpenAI Chat, Gemini, Ollama: a plain search function, the found tools' definitions as its
//!   result, and the found tools offered after the others;
//! - on every provider, the tools array of the request after the search begins with the one
//!   before it (the prompt cache keeps it);
//! - the Anthropic and Responses payloads read by the official `anthropic` and `openai` Python
//!   SDKs' own types (`tests/sdk_oracle.py`).

use serde_json::{Map, Value, json};
use tool_runtime::adapters::{
    Adapter, Anthropic, ClientSearch, Decoded, DeferLoading, EncodeError, Gemini, Message,
    ModelRequest, Ollama, OpenAiChat, OpenAiResponses, Provider, RequestOptions, SEARCH_TOOL,
    ToolCall, ToolChoice, ToolResult, ToolSearch,
};
use tool_runtime::prelude::*;
use tool_tests::fixtures::{Forecast, Now, SendMail};

use crate::support::{sdk_check, stream_in_pieces, top_level};

const DESCRIPTION: &str = "Search the tools you can use.";

/// A Responses turn in which the model searches (client execution).
const RESPONSES_SEARCH: &str = r#"{"object": "response", "status": "completed", "output": [
    {"type": "tool_search_call", "id": "tsc_1", "call_id": "call_s1", "execution": "client",
     "arguments": {"query": "weather forecast"}, "status": "completed"}]}"#;

/// The same turn, streamed.
const RESPONSES_SEARCH_STREAM: &str = concat!(
    "event: response.output_item.added\n",
    r#"data: {"type":"response.output_item.added","sequence_number":1,"output_index":0,"item":{"type":"tool_search_call","id":"tsc_1","call_id":"call_s1","execution":"client","arguments":{},"status":"in_progress"}}"#,
    "\n\n",
    "event: response.output_item.done\n",
    r#"data: {"type":"response.output_item.done","sequence_number":2,"output_index":0,"item":{"type":"tool_search_call","id":"tsc_1","call_id":"call_s1","execution":"client","arguments":{"query":"weather forecast"},"status":"completed"}}"#,
    "\n\n",
    "event: response.completed\n",
    r#"data: {"type":"response.completed","sequence_number":3,"response":{"status":"completed","output":[]}}"#,
    "\n\n",
);

/// The tools to find, in catalog order.
fn deferred() -> [&'static ToolSpec; 2] {
    [SendMail::spec(), Forecast::spec()]
}

/// The model's search turn as `provider` sends it, decoded.
fn search_turn(provider: Provider) -> Decoded {
    match provider {
        Provider::OpenAiResponses => {
            OpenAiResponses::new().decode(RESPONSES_SEARCH.as_bytes()).unwrap()
        }
        _ => {
            let call = ToolCall::new("call_s1", SEARCH_TOOL, json!({"query": "weather forecast"}));
            Decoded::new("", vec![call])
        }
    }
}

/// The request bodies before and after a search found `weather__forecast`: the request after
/// it offers the tools found, as the agent does.
fn bodies(adapter: &dyn Adapter) -> Result<(Value, Value), EncodeError> {
    let deferred = deferred();
    let search = ClientSearch { description: DESCRIPTION, deferred: &deferred };
    let turn = search_turn(adapter.provider());
    let found = ToolResult::search(&turn.calls[0], &[Forecast::spec()]);
    let first = [Message::user("Will it rain in Lisbon?")];
    let second = [first[0].clone(), Message::Assistant(turn), Message::ToolResults(vec![found])];
    let choice = ToolChoice::auto();
    let options = RequestOptions::new("model-x").stream(false);
    let (offered, grown) = ([Now::spec()], [Now::spec(), Forecast::spec()]);
    let before = ModelRequest::new(&first, &offered, &choice).with_search(search);
    let after = ModelRequest::new(&second, &grown, &choice).with_search(search);
    Ok((
        Value::Object(adapter.encode_request(&before, &options)?),
        Value::Object(adapter.encode_request(&after, &options)?),
    ))
}

fn adapters() -> [(&'static str, Box<dyn Adapter>); 5] {
    [
        ("anthropic", Box::new(Anthropic::new())),
        ("openai_responses", Box::new(OpenAiResponses::new())),
        ("openai_chat", Box::new(OpenAiChat::new())),
        ("gemini", Box::new(Gemini::new())),
        ("ollama", Box::new(Ollama::new())),
    ]
}

/// The names a provider's tools array declares, in order (Gemini's inside its one tool).
fn names(provider: &str, body: &Value) -> Vec<String> {
    let tools = match provider {
        "gemini" => &body["tools"][0]["functionDeclarations"],
        _ => &body["tools"],
    };
    let name = |tool: &Value| match provider {
        "openai_chat" | "ollama" => tool["function"]["name"].clone(),
        _ if tool["type"] == "tool_search" => json!("tool_search (client)"),
        _ => tool["name"].clone(),
    };
    tools.as_array().unwrap().iter().map(|tool| name(tool).as_str().unwrap().to_owned()).collect()
}

#[test]
fn every_provider_keeps_its_tools_array_as_tools_are_found() {
    let mut golden = Map::new();
    for (provider, adapter) in adapters() {
        let (before, after) = bodies(adapter.as_ref()).unwrap();
        let (before, after) = (names(provider, &before), names(provider, &after));
        assert!(after.starts_with(&before), "{provider}: {before:?} then {after:?}");
        let expected: &[&str] = match provider {
            // Every tool to find is declared up front, deferred; the search loads it.
            "anthropic" => &["tool_search", "core__now", "mail__send", "weather__forecast"],
            // The found tool travels in the search's output item.
            "openai_responses" => &["tool_search (client)", "core__now"],
            // The found tool is offered after the others.
            _ => &["tool_search", "core__now", "weather__forecast"],
        };
        assert_eq!(after, expected, "{provider}");
        golden.insert(provider.to_owned(), json!({"before": before, "after": after}));
    }
    insta::assert_json_snapshot!("tool_search_tool_arrays", golden);
}

#[test]
fn anthropic_defers_the_tools_and_answers_with_tool_references() {
    let (_, body) = bodies(&Anthropic::new()).unwrap();
    let tools = body["tools"].as_array().unwrap();
    assert_eq!(tools[0]["name"], SEARCH_TOOL);
    assert_eq!(tools[0]["input_schema"]["required"], json!(["query"]));
    assert!(tools[1].get("defer_loading").is_none(), "a tool always offered is not deferred");
    assert!(tools[2..].iter().all(|tool| tool["defer_loading"] == true));
    let result = &body["messages"][2]["content"][0];
    assert_eq!(
        result["content"],
        json!([{"type": "tool_reference", "tool_name": "weather__forecast"}])
    );
    insta::assert_json_snapshot!("anthropic_tool_search_request", body);

    let checks = [
        (
            "anthropic.types.message_create_params.MessageCreateParamsNonStreaming",
            top_level(&body, &["messages", "tools"]),
        ),
        ("anthropic.types.ToolParam", tools[0].clone()),
        ("anthropic.types.ToolParam", tools[2].clone()),
        ("anthropic.types.ToolUseBlockParam", body["messages"][1]["content"][0].clone()),
        ("anthropic.types.ToolResultBlockParam", result.clone()),
    ];
    let results = sdk_check(&checks);
    for ((kind, value), result) in checks.iter().zip(&results) {
        assert!(result.is_ok(), "{kind} refused {value}: {}", result.as_ref().unwrap_err());
    }
}

#[test]
fn chat_providers_offer_a_search_function_and_send_the_definitions() {
    let (_, body) = bodies(&OpenAiChat::new()).unwrap();
    assert_eq!(body["tools"][0]["function"]["name"], SEARCH_TOOL);
    let result = &body["messages"][2];
    assert_eq!((&result["role"], &result["tool_call_id"]), (&json!("tool"), &json!("call_s1")));
    let found: Value = serde_json::from_str(result["content"].as_str().unwrap()).unwrap();
    assert_eq!(found["tools"][0]["name"], "weather__forecast");
    assert_eq!(found["tools"][0]["parameters"]["required"], json!(["city"]));
    insta::assert_json_snapshot!("openai_chat_tool_search_request", body);
}

#[test]
fn anthropic_says_when_a_search_found_nothing() {
    let call = ToolCall::new("toolu_1", SEARCH_TOOL, json!({"query": "teleport"}));
    let result = ToolResult::search(&call, &[]);
    let blocks = Anthropic::new().result_messages(&[result]).unwrap();
    assert_eq!(blocks[0]["content"][0]["content"], "No tool matched the search.");
}

#[test]
fn openai_responses_runs_the_search_on_the_client() {
    let adapter = OpenAiResponses::new();
    // The model's search, whole and streamed, is a call of the search tool.
    let whole = adapter.decode(RESPONSES_SEARCH.as_bytes()).unwrap();
    let streamed = stream_in_pieces(&adapter, RESPONSES_SEARCH_STREAM.as_bytes(), 9);
    for decoded in [&whole, &streamed] {
        let call = &decoded.calls[0];
        assert_eq!((call.id.as_str(), call.name.as_str()), ("call_s1", SEARCH_TOOL));
        assert_eq!(call.arguments.value(), Some(&json!({"query": "weather forecast"})));
    }
    assert_eq!(streamed.calls.len(), 1);

    // The stream's events, as the SDK's stream oracle reads them.
    let events: Vec<Value> = (RESPONSES_SEARCH_STREAM.lines())
        .filter_map(|line| line.strip_prefix("data: "))
        .map(|data| serde_json::from_str(data).unwrap())
        .collect();
    let event = |index: usize| events[index].clone();

    let (_, body) = bodies(&adapter).unwrap();
    let tools = body["tools"].as_array().unwrap();
    assert_eq!(
        (&tools[0]["type"], &tools[0]["execution"], &tools[0]["description"]),
        (&json!("tool_search"), &json!("client"), &json!(DESCRIPTION))
    );
    let input = body["input"].as_array().unwrap();
    // The search goes back as it came, and its output carries the tool it found.
    let original: Value = serde_json::from_str(RESPONSES_SEARCH).unwrap();
    assert_eq!(input[1], original["output"][0]);
    let output = &input[2];
    assert_eq!(
        (&output["type"], &output["call_id"], &output["execution"]),
        (&json!("tool_search_output"), &json!("call_s1"), &json!("client"))
    );
    assert_eq!(output["tools"][0]["name"], "weather__forecast");
    assert_eq!(output["tools"][0]["defer_loading"], true);
    assert_eq!(output["tools"][0]["parameters"]["required"], json!(["city"]));
    insta::assert_json_snapshot!("openai_responses_tool_search_request", body);

    let checks = [
        (
            "openai.types.responses.response_create_params.ResponseCreateParamsNonStreaming",
            top_level(&body, &["input", "tools"]),
        ),
        ("openai.types.responses.ToolSearchToolParam", tools[0].clone()),
        ("openai.types.responses.FunctionToolParam", tools[1].clone()),
        ("openai.types.responses.response_input_item_param.ToolSearchCall", input[1].clone()),
        ("openai.types.responses.ResponseToolSearchOutputItemParamParam", output.clone()),
        ("openai.types.responses.FunctionToolParam", output["tools"][0].clone()),
        ("openai.types.responses.ResponseToolSearchCall", original["output"][0].clone()),
        ("openai.types.responses.ResponseOutputItemAddedEvent", event(0)),
        ("openai.types.responses.ResponseOutputItemDoneEvent", event(1)),
    ];
    let results = sdk_check(&checks);
    for ((kind, value), result) in checks.iter().zip(&results) {
        assert!(result.is_ok(), "{kind} refused {value}: {}", result.as_ref().unwrap_err());
    }
}

#[test]
fn a_search_result_outside_the_request_carries_its_own_definitions() {
    // Without the request's search (a result encoded on its own), the definition the result
    // carries goes out.
    let adapter = OpenAiResponses::new();
    let turn = adapter.decode(RESPONSES_SEARCH.as_bytes()).unwrap();
    let result = ToolResult::search(&turn.calls[0], &[Forecast::spec()]);
    let items = adapter.result_messages(&[result]).unwrap();
    assert_eq!(items[0]["tools"][0]["name"], "weather__forecast");
    assert_eq!(items[0]["tools"][0]["description"], "Show the weather forecast for a city.");
    // The providers without a search form send the definitions as the result's text.
    let call = ToolCall::new("call_s1", SEARCH_TOOL, json!({"query": "weather"}));
    let text = ToolResult::search(&call, &[Forecast::spec()]).content_text();
    let parsed: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(parsed["tools"][0]["parameters"]["properties"]["city"]["type"], "string");
}

#[test]
fn a_provider_search_and_the_applications_do_not_mix() {
    let deferred = deferred();
    let search = ClientSearch { description: DESCRIPTION, deferred: &deferred };
    let messages = [Message::user("Rain?")];
    let choice = ToolChoice::auto();
    let request = ModelRequest::new(&messages, &[], &choice).with_search(search);
    let options = RequestOptions::new("m");
    let anthropic = Anthropic::new().defer_loading(DeferLoading::new(ToolSearch::Bm25));
    let responses = OpenAiResponses::new().defer_loading(DeferLoading::new(ToolSearch::Hosted));
    for adapter in [&anthropic as &dyn Adapter, &responses] {
        let error = adapter.encode_request(&request, &options).unwrap_err();
        assert!(matches!(error, EncodeError::Unsupported { .. }), "{error}");
    }
}
