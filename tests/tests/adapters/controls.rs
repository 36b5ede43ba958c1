//! Provider-native controls for large catalogs, each pinned by a golden
//! request and backed by behaviour:
//!
//! - Anthropic deferred loading with its tool search tools and the `tool_reference` blocks
//!   they return (<https://docs.anthropic.com/en/docs/agents-and-tools/tool-use/tool-search-tool>);
//! - OpenAI Responses deferred loading, the hosted `tool_search` tool and namespaces
//!   (<https://developers.openai.com/api/docs/guides/tools-tool-search>);
//! - `tool_choice` `allowed_tools` on OpenAI Chat and Responses
//!   (<https://platform.openai.com/docs/guides/function-calling#tool-choice>);
//! - parallel controls: `parallel_tool_calls` (OpenAI), `disable_parallel_tool_use` inside
//!   Anthropic's `tool_choice`;
//! - Gemini `functionCallingConfig` mode `VALIDATED` and `allowedFunctionNames`
//!   (<https://ai.google.dev/gemini-api/docs/function-calling#function_calling_modes>).

use examples::search::SearchDocs;
use examples::time::GetCurrentTime;
use serde_json::{Value, json};
use tool_runtime::adapters::{
    Adapter, Anthropic, DeferLoading, EncodeError, Gemini, Message, ModelRequest, Ollama,
    OpenAiChat, OpenAiResponses, Provider, RequestOptions, StreamEvent, ToolChoice, ToolSearch,
};
use tool_runtime::prelude::*;

fn specs() -> [&'static ToolSpec; 2] {
    [GetCurrentTime::spec(), SearchDocs::spec()]
}

/// The whole request body `adapter` encodes for one user message, the example tools and
/// `choice`.
fn body(adapter: &dyn Adapter, choice: &ToolChoice) -> Result<Value, EncodeError> {
    let tools = specs();
    let messages = [Message::user("What changed in the wire docs?")];
    let request = ModelRequest { messages: &messages, tools: &tools, choice, search: None };
    let options = RequestOptions::new("model-x").stream(false);
    adapter.encode_request(&request, &options).map(Value::Object)
}

fn unsupported(result: Result<Value, EncodeError>) -> (Provider, &'static str) {
    match result {
        Err(EncodeError::Unsupported { provider, feature }) => (provider, feature),
        other => panic!("expected an unsupported control, got {other:?}"),
    }
}

#[test]
fn anthropic_defer_loading_with_bm25_search() {
    let adapter = Anthropic::new()
        .defer_loading(DeferLoading::new(ToolSearch::Bm25).eager(["core__get_current_time"]));
    let body = body(&adapter, &ToolChoice::auto()).unwrap();
    let tools = body["tools"].as_array().unwrap();
    assert_eq!(
        tools[0],
        json!({"type": "tool_search_tool_bm25_20251119", "name": "tool_search_tool_bm25"})
    );
    assert_eq!(tools[1]["name"], "core__get_current_time");
    assert!(tools[1].get("defer_loading").is_none(), "eager tools load up front");
    assert_eq!(
        (&tools[2]["name"], &tools[2]["defer_loading"]),
        (&json!("docs__search"), &json!(true))
    );
    insta::assert_json_snapshot!("anthropic_defer_loading_bm25", body);
}

#[test]
fn anthropic_defer_loading_with_regex_search() {
    let adapter = Anthropic::new().strict(true).defer_loading(DeferLoading::new(ToolSearch::Regex));
    let tools = adapter.tools(&specs()).unwrap();
    assert_eq!(
        tools[0],
        json!({"type": "tool_search_tool_regex_20251119", "name": "tool_search_tool_regex"})
    );
    assert!(tools.as_array().unwrap()[1..].iter().all(|tool| tool["defer_loading"] == json!(true)));
    insta::assert_json_snapshot!("anthropic_defer_loading_regex_strict", tools);
    assert_eq!(
        unsupported(body(
            &Anthropic::new().defer_loading(DeferLoading::new(ToolSearch::Hosted)),
            &ToolChoice::auto()
        ))
        .0,
        Provider::Anthropic
    );
}

/// A response in which the model searched and Anthropic referenced two tools, then wrote text.
const ANTHROPIC_SEARCH: &str = r#"{"type": "message", "role": "assistant", "content": [
    {"type": "text", "text": "Let me find a tool."},
    {"type": "server_tool_use", "id": "srvtoolu_01", "name": "tool_search_tool_bm25", "input": {"query": "docs search"}},
    {"type": "tool_search_tool_result", "tool_use_id": "srvtoolu_01", "content": {
        "type": "tool_search_tool_search_result",
        "tool_references": [{"type": "tool_reference", "tool_name": "docs__search"},
                            {"type": "tool_reference", "tool_name": "core__get_current_time"}]}},
    {"type": "tool_use", "id": "toolu_01", "name": "docs__search", "input": {"query": "wire"}}],
    "stop_reason": "tool_use"}"#;

#[test]
fn anthropic_tool_references_are_decoded_not_called() {
    let adapter = Anthropic::new();
    let decoded = adapter.decode(ANTHROPIC_SEARCH.as_bytes()).unwrap();
    assert_eq!(
        decoded.tool_references().collect::<Vec<_>>(),
        ["docs__search", "core__get_current_time"]
    );
    assert_eq!(decoded.calls.len(), 1, "the search is the provider's, not a call to run");
    assert_eq!(decoded.calls[0].name, "docs__search");
    assert!(decoded.problems.is_empty(), "{:?}", decoded.problems);
    // The search's blocks go back with the turn.
    let echoed = adapter.assistant_message(&decoded);
    let kinds: Vec<&str> =
        echoed["content"].as_array().unwrap().iter().map(|b| b["type"].as_str().unwrap()).collect();
    assert_eq!(kinds, ["server_tool_use", "tool_search_tool_result", "text", "tool_use"]);
    insta::assert_json_snapshot!("anthropic_tool_search_turn", echoed);
}

/// A call the provider makes itself under another name (the MCP connector's `mcp_tool_use`,
/// its input streamed) is no call of ours: kept whole with its result, to be sent back.
#[test]
fn anthropic_streamed_mcp_connector_call_is_no_call() {
    let frames = [
        r#"{"type": "message_start", "message": {"usage": {"input_tokens": 10, "output_tokens": 1}}}"#,
        r#"{"type": "content_block_start", "index": 0, "content_block": {"type": "mcp_tool_use", "id": "mcptoolu_01", "name": "search", "server_name": "docs", "input": {}}}"#,
        r#"{"type": "content_block_delta", "index": 0, "delta": {"type": "input_json_delta", "partial_json": "{\"q\": \"wire\"}"}}"#,
        r#"{"type": "content_block_stop", "index": 0}"#,
        r#"{"type": "content_block_start", "index": 1, "content_block": {"type": "mcp_tool_result", "tool_use_id": "mcptoolu_01", "is_error": false, "content": [{"type": "text", "text": "found"}]}}"#,
        r#"{"type": "content_block_stop", "index": 1}"#,
        r#"{"type": "message_delta", "delta": {"stop_reason": "end_turn"}, "usage": {"output_tokens": 5}}"#,
    ];
    let stream: String = frames.iter().map(|frame| format!("data: {frame}\n\n")).collect();
    let mut session = Anthropic::new().stream();
    let mut events = Vec::new();
    for piece in stream.as_bytes().chunks(19) {
        events.extend(session.feed(piece));
    }
    let decoded = session.finish();
    assert!(decoded.calls.is_empty(), "{:?}", decoded.calls);
    assert!(!events.iter().any(|event| matches!(event, StreamEvent::CallStarted { .. })));
    let blocks = decoded.extras.get("server_tool_blocks").unwrap();
    assert_eq!(
        (&blocks[0]["type"], &blocks[0]["input"]),
        (&json!("mcp_tool_use"), &json!({"q": "wire"}))
    );
    assert_eq!(blocks[1]["type"], "mcp_tool_result");
}

#[test]
fn anthropic_streamed_tool_search_is_no_call() {
    let frames = [
        r#"{"type": "message_start", "message": {"usage": {"input_tokens": 10, "output_tokens": 1}}}"#,
        r#"{"type": "content_block_start", "index": 0, "content_block": {"type": "server_tool_use", "id": "srvtoolu_01", "name": "tool_search_tool_regex", "input": {}}}"#,
        r#"{"type": "content_block_delta", "index": 0, "delta": {"type": "input_json_delta", "partial_json": "{\"pattern\": "}}"#,
        r#"{"type": "content_block_delta", "index": 0, "delta": {"type": "input_json_delta", "partial_json": "\"docs\"}"}}"#,
        r#"{"type": "content_block_stop", "index": 0}"#,
        r#"{"type": "content_block_start", "index": 1, "content_block": {"type": "tool_search_tool_result", "tool_use_id": "srvtoolu_01", "content": {"type": "tool_search_tool_search_result", "tool_references": [{"type": "tool_reference", "tool_name": "docs__search"}]}}}"#,
        r#"{"type": "content_block_stop", "index": 1}"#,
        r#"{"type": "message_delta", "delta": {"stop_reason": "end_turn"}, "usage": {"output_tokens": 5}}"#,
        r#"{"type": "message_stop"}"#,
    ];
    let stream: String = frames.iter().map(|frame| format!("data: {frame}\n\n")).collect();
    let mut session = Anthropic::new().stream();
    let mut events = Vec::new();
    for piece in stream.as_bytes().chunks(17) {
        events.extend(session.feed(piece));
    }
    let decoded = session.finish();
    assert!(!events.iter().any(|event| matches!(event, StreamEvent::CallStarted { .. })));
    assert!(decoded.calls.is_empty());
    assert_eq!(decoded.tool_references().collect::<Vec<_>>(), ["docs__search"]);
    let blocks = decoded.extras.get("server_tool_blocks").unwrap();
    assert_eq!(blocks[0]["input"], json!({"pattern": "docs"}), "the streamed input is kept whole");
}

#[test]
fn openai_responses_defer_loading_search_and_namespaces() {
    let adapter = OpenAiResponses::new()
        .defer_loading(DeferLoading::new(ToolSearch::Hosted).eager(["core__get_current_time"]))
        .namespace("docs", "Search and read the product documentation.");
    let body = body(&adapter, &ToolChoice::auto()).unwrap();
    let tools = body["tools"].as_array().unwrap();
    assert_eq!(tools[0], json!({"type": "tool_search"}));
    assert_eq!(tools[1]["name"], "core__get_current_time");
    assert!(tools[1].get("defer_loading").is_none());
    assert_eq!((&tools[2]["type"], &tools[2]["name"]), (&json!("namespace"), &json!("docs")));
    let member = &tools[2]["tools"][0];
    assert_eq!((&member["name"], &member["defer_loading"]), (&json!("search"), &json!(true)));
    assert!(tools[2].get("defer_loading").is_none(), "deferral applies to the functions inside");
    insta::assert_json_snapshot!("openai_responses_defer_loading_namespaces", body);
    assert_eq!(
        unsupported(body_with(
            OpenAiResponses::new().defer_loading(DeferLoading::new(ToolSearch::Bm25))
        ))
        .0,
        Provider::OpenAiResponses
    );
    let forced = self::body(&adapter, &ToolChoice::tool("docs__search"));
    assert_eq!(unsupported(forced).1, "a tool choice naming a tool inside a namespace");
    assert!(self::body(&adapter, &ToolChoice::tool("core__get_current_time")).is_ok());
}

fn body_with(adapter: OpenAiResponses) -> Result<Value, EncodeError> {
    body(&adapter, &ToolChoice::auto())
}

#[test]
fn openai_responses_tool_search_output_and_namespaced_calls() {
    let adapter = OpenAiResponses::new().namespace("docs", "Documentation.");
    let response = json!({"status": "completed", "output": [
        {"type": "tool_search_call", "id": "tsc_1", "execution": "server", "status": "completed",
         "arguments": {"query": "documentation search"}},
        {"type": "tool_search_output", "id": "tso_1", "execution": "server", "status": "completed",
         "tools": [{"type": "namespace", "name": "docs", "description": "Documentation.", "tools": []}]},
        {"type": "function_call", "id": "fc_1", "call_id": "call_1", "namespace": "docs",
         "name": "search", "arguments": "{\"query\":\"wire\"}"}]});
    let decoded = adapter.decode(response.to_string().as_bytes()).unwrap();
    assert_eq!(decoded.tool_references().collect::<Vec<_>>(), ["docs"]);
    assert_eq!(decoded.calls.len(), 1);
    assert_eq!(decoded.calls[0].name, "docs__search");
    let items = adapter.assistant_message(&decoded);
    insta::assert_json_snapshot!("openai_responses_tool_search_turn", items);

    // Streamed: the item names the namespace, the arguments' `done` event the bare function.
    let events = [
        json!({"type": "response.output_item.done", "output_index": 0, "item": response["output"][1]}),
        json!({"type": "response.output_item.added", "output_index": 1, "item": {"type": "function_call", "id": "fc_1", "call_id": "call_1", "namespace": "docs", "name": "search", "arguments": ""}}),
        json!({"type": "response.function_call_arguments.delta", "output_index": 1, "item_id": "fc_1", "delta": "{\"query\":\"wire\"}"}),
        json!({"type": "response.function_call_arguments.done", "output_index": 1, "item_id": "fc_1", "name": "search", "arguments": "{\"query\":\"wire\"}"}),
        json!({"type": "response.completed", "response": {"status": "completed", "output": []}}),
    ];
    let stream: String = events.iter().map(|event| format!("data: {event}\n\n")).collect();
    let mut session = adapter.stream();
    session.feed(stream.as_bytes());
    let streamed = session.finish();
    assert_eq!(streamed.calls[0].name, "docs__search");
    assert_eq!(streamed.tool_references().collect::<Vec<_>>(), ["docs"]);
}

#[test]
fn allowed_tools_on_openai() {
    let auto = ToolChoice::allowed(["docs__search"]);
    let required =
        ToolChoice::required_among(["docs__search", "core__get_current_time"]).parallel(false);
    let chat = OpenAiChat::new();
    let responses = OpenAiResponses::new();
    let table = json!({
        "openai-chat": {
            "auto": Value::Object(chat.tool_choice(&auto).unwrap()),
            "required_serial": Value::Object(chat.tool_choice(&required).unwrap()),
        },
        "openai-responses": {
            "auto": Value::Object(responses.tool_choice(&auto).unwrap()),
            "required_serial": Value::Object(responses.tool_choice(&required).unwrap()),
        },
    });
    assert_eq!(table["openai-chat"]["auto"]["tool_choice"]["allowed_tools"]["mode"], "auto");
    assert_eq!(table["openai-responses"]["required_serial"]["tool_choice"]["mode"], "required");
    assert_eq!(table["openai-responses"]["required_serial"]["parallel_tool_calls"], false);
    insta::assert_json_snapshot!("allowed_tools_openai", table);
    // Every tool defined stays in the request: the allowed set narrows the choice only.
    let body = body(&chat, &auto).unwrap();
    assert_eq!(body["tools"].as_array().unwrap().len(), 2);
}

#[test]
fn allowed_tools_must_name_request_tools() {
    for provider in [Provider::OpenAiChat, Provider::OpenAiResponses, Provider::Gemini] {
        let adapter = provider.adapter(false);
        assert_eq!(
            body(&*adapter, &ToolChoice::allowed(["docs__search", "docs__serch"])).unwrap_err(),
            EncodeError::UnknownTool("docs__serch".to_owned()),
            "{provider}"
        );
    }
}

#[test]
fn parallel_controls() {
    let serial = ToolChoice::auto().parallel(false);
    let table = json!({
        "openai-chat": Value::Object(OpenAiChat::new().tool_choice(&serial).unwrap()),
        "openai-responses": Value::Object(OpenAiResponses::new().tool_choice(&serial).unwrap()),
        "anthropic": Value::Object(Anthropic::new().tool_choice(&serial).unwrap()),
        "anthropic_forced": Value::Object(Anthropic::new().tool_choice(&ToolChoice::tool("docs__search").parallel(false)).unwrap()),
    });
    assert_eq!(table["openai-chat"]["parallel_tool_calls"], false);
    assert_eq!(
        table["anthropic"]["tool_choice"],
        json!({"type": "auto", "disable_parallel_tool_use": true})
    );
    insta::assert_json_snapshot!("parallel_controls", table);
    assert!(matches!(
        Gemini::new().tool_choice(&serial),
        Err(EncodeError::Unsupported { provider: Provider::Gemini, .. })
    ));
}

#[test]
fn gemini_validated_and_allowed_function_names() {
    let gemini = Gemini::new();
    let table = json!({
        "validated": Value::Object(gemini.tool_choice(&ToolChoice::validated()).unwrap()),
        "allowed": Value::Object(gemini.tool_choice(&ToolChoice::allowed(["docs__search"])).unwrap()),
        "required_among": Value::Object(gemini.tool_choice(&ToolChoice::required_among(["docs__search"])).unwrap()),
    });
    assert_eq!(
        table["validated"]["toolConfig"]["functionCallingConfig"],
        json!({"mode": "VALIDATED"})
    );
    assert_eq!(
        table["allowed"]["toolConfig"]["functionCallingConfig"],
        json!({"mode": "VALIDATED", "allowedFunctionNames": ["docs__search"]})
    );
    assert_eq!(table["required_among"]["toolConfig"]["functionCallingConfig"]["mode"], "ANY");
    insta::assert_json_snapshot!("gemini_function_calling_config", table);
}

#[test]
fn controls_a_provider_cannot_express_are_typed_errors() {
    let allowed = ToolChoice::allowed(["docs__search"]);
    assert_eq!(unsupported(body(&Anthropic::new(), &allowed)).0, Provider::Anthropic);
    assert_eq!(unsupported(body(&Ollama::new(), &allowed)).0, Provider::Ollama);
    let validated = ToolChoice::validated();
    for provider in [Provider::OpenAiChat, Provider::OpenAiResponses, Provider::Anthropic] {
        let (which, feature) = unsupported(body(&*provider.adapter(false), &validated));
        assert_eq!(which, provider);
        assert!(feature.contains("strict"), "{feature}");
        // Strict mode constrains every call already: `auto` says the rest.
        let strict = body(&*provider.adapter(true), &validated).unwrap();
        let choice = &strict["tool_choice"];
        assert!(choice == "auto" || choice["type"] == "auto", "{provider}: {choice}");
    }
    assert_eq!(unsupported(body(&Ollama::new(), &validated)).0, Provider::Ollama);
}
