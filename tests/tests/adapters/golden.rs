//! Golden wire JSON per provider, each backed by behaviour: the example tools' definitions
//! (exact key sets, lowering checked recursively, sample arguments in the model's lowered form
//! validate against the lowered schema and, raised, against the original and deserialise), the
//! tool choice, every fixture decoded, and the messages that carry a turn and its results.

use std::collections::BTreeSet;

use crate::support::{PROVIDERS, adapter, decode_fixture, fixtures, json, specs};
use examples::search::SearchDocs;
use examples::tickets::CreateTicket;
use examples::time::GetCurrentTime;
use serde_json::{Map, Value, json};
use tool_runtime::adapters::{
    Adapter, Anthropic, Gemini, GeminiParameters, Ollama, OpenAiChat, OpenAiResponses, ToolChoice,
    ToolResult, raise_arguments,
};
use tool_runtime::runtime::ToolErrorCode;
use tool_runtime::schema::parse_arguments;

fn keys(value: &Value) -> BTreeSet<&str> {
    value.as_object().map(|map| map.keys().map(String::as_str).collect()).unwrap_or_default()
}

fn set<'a>(names: &[&'a str]) -> BTreeSet<&'a str> {
    names.iter().copied().collect()
}

/// Every schema node below (and including) `node`.
fn nodes(node: &Value) -> Vec<&Map<String, Value>> {
    let mut out = Vec::new();
    if let Some(map) = node.as_object() {
        out.push(map);
        if let Some(properties) = map.get("properties").and_then(Value::as_object) {
            out.extend(properties.values().flat_map(nodes));
        }
        if let Some(items) = map.get("items") {
            out.extend(nodes(items));
        }
    }
    out
}

/// Valid arguments for each example tool: the least and the most a model may send.
fn samples(name: &str) -> Vec<Value> {
    match name {
        "core__get_current_time" => vec![json!({}), json!({"timezone": "Europe/Berlin"})],
        "docs__search" => vec![
            json!({"query": "wire"}),
            json!({"query": "wire", "filters": {"kinds": ["how_to"], "updated_since_year": 2024},
                   "order": "newest", "limit": 5}),
        ],
        "tickets__create_ticket" => vec![
            json!({"title": "Search ignores tags", "body": "Filtering by tag returns everything.",
                   "priority": "high"}),
            json!({"title": "Search ignores tags", "body": "", "priority": "low", "labels": ["bug"]}),
        ],
        other => panic!("no samples for {other}"),
    }
}

/// Deserialises `value` into the example tool named `name`.
fn deserialises(name: &str, value: &Value) -> bool {
    let raw = value.to_string();
    match name {
        "core__get_current_time" => parse_arguments::<GetCurrentTime>(raw.as_bytes()).is_ok(),
        "docs__search" => parse_arguments::<SearchDocs>(raw.as_bytes()).is_ok(),
        "tickets__create_ticket" => parse_arguments::<CreateTicket>(raw.as_bytes()).is_ok(),
        other => panic!("unknown tool {other}"),
    }
}

/// What a model in OpenAI strict mode sends for `value`: every property present, `null` for
/// the ones left out.
fn strict_form(schema: &Value, value: &mut Value) {
    match value {
        Value::Object(map) => {
            let properties = schema.get("properties").and_then(Value::as_object);
            for (name, child) in properties.into_iter().flatten() {
                match map.get_mut(name) {
                    Some(present) => strict_form(child, present),
                    None => {
                        map.insert(name.clone(), Value::Null);
                    }
                }
            }
        }
        Value::Array(items) => {
            for item in items {
                strict_form(schema.get("items").unwrap_or(&Value::Null), item);
            }
        }
        _ => {}
    }
}

fn validator(schema: &Value) -> jsonschema::Validator {
    jsonschema::draft202012::options()
        .should_validate_formats(false)
        .build(schema)
        .expect("the lowered schema compiles")
}

/// Checks the OpenAI strict lowering of one tool's parameters and round-trips its samples.
fn check_openai_strict(name: &str, parameters: &Value) {
    for node in nodes(parameters) {
        if let Some(properties) = node.get("properties").and_then(Value::as_object) {
            let all: Vec<&String> = properties.keys().collect();
            let required: Vec<&str> =
                node["required"].as_array().unwrap().iter().filter_map(Value::as_str).collect();
            assert_eq!(all, required, "{name}: every property is required");
            assert_eq!(node["additionalProperties"], json!(false), "{name}: closed objects");
        }
        for key in ["minLength", "maxLength", "uniqueItems"] {
            assert!(!node.contains_key(key), "{name}: `{key}` is not allowed in strict mode");
        }
    }
    let lowered = validator(parameters);
    let spec = specs().into_iter().find(|spec| spec.name() == name).unwrap();
    let original = spec.input_schema().as_static().unwrap();
    for sample in samples(name) {
        let mut sent = sample.clone();
        strict_form(parameters, &mut sent);
        assert!(lowered.is_valid(&sent), "{name}: {sent} fits the lowered schema");
        raise_arguments(spec.input_schema(), &mut sent);
        assert!(original.is_valid(&sent), "{name}: raised {sent} fits the original schema");
        assert!(deserialises(name, &sent), "{name}: raised {sent} deserialises");
    }
}

/// Checks the plain JSON Schema definitions: the samples fit them as they are.
fn check_plain(name: &str, parameters: &Value) {
    let schema = validator(parameters);
    for sample in samples(name) {
        assert!(schema.is_valid(&sample), "{name}: {sample} fits");
        assert!(deserialises(name, &sample), "{name}: {sample} deserialises");
    }
}

#[test]
fn openai_chat_definitions() {
    for strict in [false, true] {
        let tools = OpenAiChat::new().strict(strict).tools(&specs()).unwrap();
        for tool in tools.as_array().unwrap() {
            assert_eq!(keys(tool), set(&["type", "function"]));
            let function = &tool["function"];
            // `strict` is always said, so no provider default decides it.
            assert_eq!(keys(function), set(&["name", "description", "parameters", "strict"]));
            assert_eq!(function["strict"], strict);
            let name = function["name"].as_str().unwrap();
            if strict {
                check_openai_strict(name, &function["parameters"]);
            } else {
                check_plain(name, &function["parameters"]);
            }
        }
        let snapshot =
            if strict { "openai_chat_definitions_strict" } else { "openai_chat_definitions" };
        insta::assert_json_snapshot!(snapshot, tools);
    }
}

#[test]
fn openai_responses_definitions() {
    for strict in [false, true] {
        let tools = OpenAiResponses::new().strict(strict).tools(&specs()).unwrap();
        for tool in tools.as_array().unwrap() {
            assert_eq!(keys(tool), set(&["type", "name", "description", "parameters", "strict"]));
            assert_eq!(tool["strict"], json!(strict), "`strict` is always written");
            let name = tool["name"].as_str().unwrap();
            if strict {
                check_openai_strict(name, &tool["parameters"]);
            } else {
                check_plain(name, &tool["parameters"]);
            }
        }
        let snapshot = if strict {
            "openai_responses_definitions_strict"
        } else {
            "openai_responses_definitions"
        };
        insta::assert_json_snapshot!(snapshot, tools);
    }
}

#[test]
fn anthropic_definitions() {
    for strict in [false, true] {
        let tools = Anthropic::new().strict(strict).tools(&specs()).unwrap();
        for tool in tools.as_array().unwrap() {
            let expected: &[&str] = if strict {
                &["name", "description", "input_schema", "strict"]
            } else {
                &["name", "description", "input_schema"]
            };
            assert_eq!(keys(tool), set(expected));
            let name = tool["name"].as_str().unwrap();
            let schema = &tool["input_schema"];
            for node in nodes(schema) {
                if strict {
                    for key in ["minimum", "maximum", "minLength", "maxLength", "maxItems"] {
                        assert!(!node.contains_key(key), "{name}: `{key}` has no strict grammar");
                    }
                }
                if node.contains_key("properties") {
                    assert_eq!(node["additionalProperties"], json!(false));
                }
            }
            // Optional properties stay optional: the samples fit without any `null`.
            let schema = validator(schema);
            for sample in samples(name) {
                assert!(schema.is_valid(&sample), "{name}: {sample} fits");
            }
        }
        let snapshot =
            if strict { "anthropic_definitions_strict" } else { "anthropic_definitions" };
        insta::assert_json_snapshot!(snapshot, tools);
    }
}

#[test]
fn gemini_definitions() {
    let tools = Gemini::new().tools(&specs()).unwrap();
    let tools_array = tools.as_array().unwrap();
    assert_eq!(tools_array.len(), 1);
    assert_eq!(keys(&tools_array[0]), set(&["functionDeclarations"]));
    for declaration in tools_array[0]["functionDeclarations"].as_array().unwrap() {
        assert_eq!(keys(declaration), set(&["name", "description", "parameters"]));
        for node in nodes(&declaration["parameters"]) {
            for key in
                ["additionalProperties", "$schema", "const", "exclusiveMinimum", "uniqueItems"]
            {
                assert!(!node.contains_key(key), "`{key}` is outside Gemini's subset");
            }
            let kind = node["type"].as_str().expect("one type, never a list");
            assert_eq!(kind, kind.to_ascii_uppercase());
            if let Some(values) = node.get("enum") {
                assert!(values.as_array().unwrap().iter().all(Value::is_string), "string enums");
                assert_eq!(node["format"], json!("enum"));
            }
        }
    }
    insta::assert_json_snapshot!("gemini_definitions", tools);

    let json_schema =
        Gemini::new().parameters(GeminiParameters::JsonSchema).tools(&specs()).unwrap();
    for (declaration, spec) in
        json_schema[0]["functionDeclarations"].as_array().unwrap().iter().zip(specs())
    {
        assert_eq!(keys(declaration), set(&["name", "description", "parametersJsonSchema"]));
        assert_eq!(declaration["parametersJsonSchema"], spec.input_schema().to_json());
    }
    insta::assert_json_snapshot!("gemini_definitions_json_schema", json_schema);
}

#[test]
fn ollama_definitions() {
    let tools = Ollama::new().tools(&specs()).unwrap();
    for tool in tools.as_array().unwrap() {
        assert_eq!(keys(tool), set(&["type", "function"]));
        assert_eq!(keys(&tool["function"]), set(&["name", "description", "parameters"]));
        check_plain(tool["function"]["name"].as_str().unwrap(), &tool["function"]["parameters"]);
    }
    insta::assert_json_snapshot!("ollama_definitions", tools);
}

#[test]
fn tool_choices() {
    let choices = [
        ("auto", ToolChoice::auto()),
        ("none", ToolChoice::none()),
        ("required", ToolChoice::required()),
        ("tool", ToolChoice::tool("docs__search")),
        ("auto_serial", ToolChoice::auto().parallel(false)),
        ("required_parallel", ToolChoice::required().parallel(true)),
    ];
    let mut table = Map::new();
    for provider in PROVIDERS {
        let adapter = adapter(provider);
        let mut row = Map::new();
        for (label, choice) in &choices {
            let cell = match adapter.tool_choice(choice) {
                Ok(fields) => Value::Object(fields),
                Err(error) => json!({"error": error.to_string()}),
            };
            row.insert((*label).to_owned(), cell);
        }
        table.insert(provider.to_owned(), Value::Object(row));
    }
    insta::assert_json_snapshot!("tool_choices", table);
}

#[test]
fn decoded_fixtures() {
    for provider in PROVIDERS {
        for (name, _) in fixtures(provider) {
            let decoded = decode_fixture(provider, &name);
            let stem = name.rsplit_once('.').map_or(name.as_str(), |(stem, _)| stem);
            insta::assert_json_snapshot!(format!("decoded_{provider}_{stem}"), json(&decoded));
        }
    }
}

#[test]
fn streamed_and_whole_responses_agree() {
    for provider in PROVIDERS {
        let stream =
            if provider == "ollama" { "stream_parallel.ndjson" } else { "stream_parallel.sse" };
        let streamed = json(&decode_fixture(provider, stream));
        let whole = json(&decode_fixture(provider, "nonstream_parallel.json"));
        assert_eq!(streamed["tool_calls"], whole["tool_calls"], "{provider}");
        assert_eq!(streamed["finish"], json!("tool_calls"), "{provider}");
        assert_eq!(whole["finish"], json!("tool_calls"), "{provider}");
    }
}

/// The turn of the parallel fixture and its results (the first ok, the second failed).
fn turn(provider: &str, fixture: &str) -> Value {
    let decoded = decode_fixture(provider, fixture);
    let adapter = adapter(provider);
    let results: Vec<ToolResult> = decoded
        .calls
        .iter()
        .enumerate()
        .map(|(i, call)| match i {
            0 => ToolResult::ok(
                call,
                json!({"iso8601": "2026-11-18T08:26:40+01:00", "timezone": "Europe/Berlin"}),
            ),
            _ => ToolResult::error(
                call,
                ToolErrorCode::Timeout,
                "the tool did not answer within 5 seconds",
            ),
        })
        .collect();
    json!({
        "assistant": adapter.assistant_message(&decoded),
        "results": adapter.result_messages(&results).unwrap(),
        "turn_length": adapter.turn(&decoded, &results).unwrap().len(),
    })
}

#[test]
fn messages() {
    for provider in PROVIDERS {
        let stream =
            if provider == "ollama" { "stream_parallel.ndjson" } else { "stream_parallel.sse" };
        let messages = turn(provider, stream);
        insta::assert_json_snapshot!(format!("messages_{provider}"), messages);
    }
    insta::assert_json_snapshot!(
        "messages_anthropic_thinking",
        turn("anthropic", "stream_thinking.sse")
    );
}

#[test]
fn result_messages_have_exact_keys() {
    let chat = turn("openai-chat", "stream_parallel.sse");
    for message in chat["results"].as_array().unwrap() {
        assert_eq!(keys(message), set(&["role", "tool_call_id", "content"]));
    }
    let responses = turn("openai-responses", "stream_parallel.sse");
    for item in responses["results"].as_array().unwrap() {
        assert_eq!(keys(item), set(&["type", "call_id", "output"]));
    }
    let anthropic = turn("anthropic", "stream_parallel.sse");
    let blocks = anthropic["results"][0]["content"].as_array().unwrap();
    for block in blocks {
        assert_eq!(keys(block), set(&["type", "tool_use_id", "content", "is_error"]));
    }
    assert_eq!(blocks[1]["is_error"], json!(true));
    let gemini = turn("gemini", "stream_parallel.sse");
    for part in gemini["results"][0]["parts"].as_array().unwrap() {
        assert_eq!(keys(&part["functionResponse"]), set(&["name", "response"]));
    }
    assert_eq!(gemini["assistant"]["parts"][1]["thoughtSignature"], json!("CiQB0e2Kb1n2cMfaRvS1"));
    let ollama = turn("ollama", "stream_parallel.ndjson");
    for message in ollama["results"].as_array().unwrap() {
        assert_eq!(keys(message), set(&["role", "tool_name", "content"]));
    }
}
