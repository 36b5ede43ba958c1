//! Encoding beyond the golden files: request-wide budgets (checked before anything is sent,
//! naming the tool), raising decoded arguments back to the original schema, tool choices that
//! cannot be expressed, and the provider names.

use examples::search::SearchDocs;
use serde_json::{Map, Value, json};
use tool_runtime::adapters::{
    Adapter, Anthropic, Budget, BudgetError, EncodeError, Gemini, Ollama, OpenAiChat,
    OpenAiResponses, Provider, ToolChoice, raise_arguments,
};
use tool_runtime::prelude::*;
use tool_runtime::runtime::{BoundToolRuntime, DynamicTool};
use tool_runtime::schema::parse_arguments;

/// A run-time tool with this input schema.
fn dynamic(name: &str, schema: Value) -> DynamicTool {
    DynamicTool::builder(name, "A generated tool.", schema)
        .allow_open_schema()
        .effect(ToolEffect::ReadOnly)
        .build(|args, _, _| async move { Ok(args) })
        .unwrap_or_else(|error| panic!("{name}: {error}"))
}

fn object(properties: Map<String, Value>, required: &[&str]) -> Value {
    json!({"type": "object", "properties": properties, "required": required, "additionalProperties": false})
}

/// `count` optional string properties named `<prefix>0`, `<prefix>1`, ...
fn strings(prefix: &str, count: usize) -> Map<String, Value> {
    (0..count).map(|n| (format!("{prefix}{n}"), json!({"type": "string"}))).collect()
}

fn budget_error(result: Result<Value, EncodeError>) -> BudgetError {
    match result {
        Err(EncodeError::Budget(error)) => error,
        other => panic!("expected a budget error, got {other:?}"),
    }
}

fn specs(tools: &[DynamicTool]) -> Vec<&ToolSpec> {
    tools.iter().map(BoundToolRuntime::spec).collect()
}

#[test]
fn openai_strict_counts_properties_across_the_request() {
    let tools: Vec<DynamicTool> = (1..=6)
        .map(|n| dynamic(&format!("gen__tool_{n}"), object(strings("p", 1000), &[])))
        .collect();
    for adapter in
        [&OpenAiChat::new().strict(true) as &dyn Adapter, &OpenAiResponses::new().strict(true)]
    {
        let error = budget_error(adapter.tools(&specs(&tools)));
        assert_eq!(error.tool, "gen__tool_6");
        assert_eq!((error.budget, error.limit, error.actual), (Budget::Properties, 5_000, 6_000));
        assert_eq!(
            error.to_string(),
            format!(
                "tool `gen__tool_6` brings the request to 6000 object properties, but {} allows at most 5000",
                adapter.provider().label()
            )
        );
        assert!(adapter.tools(&specs(&tools[..5])).is_ok());
    }
    assert!(OpenAiChat::new().tools(&specs(&tools)).is_ok(), "limits apply to strict mode only");
}

#[test]
fn openai_strict_limits_nesting_per_schema() {
    let nested = |levels: usize| {
        let mut schema = object(Map::new(), &[]);
        for _ in 1..levels {
            let mut properties = Map::new();
            properties.insert("inner".to_owned(), schema);
            schema = object(properties, &["inner"]);
        }
        schema
    };
    let ten = dynamic("gen__ten", nested(10));
    let eleven = dynamic("gen__eleven", nested(11));
    let adapter = OpenAiChat::new().strict(true);
    assert!(adapter.tools(&specs(std::slice::from_ref(&ten))).is_ok());
    let error = budget_error(adapter.tools(&[ten.spec(), eleven.spec()]));
    assert_eq!(
        (error.tool.as_str(), error.budget, error.actual),
        ("gen__eleven", Budget::Nesting, 11)
    );
}

#[test]
fn openai_strict_limits_enum_values_and_characters() {
    let enum_of = |count: usize, width: usize| {
        let values: Vec<String> = (0..count).map(|n| format!("{n:0width$}")).collect();
        let mut properties = Map::new();
        properties.insert("choice".to_owned(), json!({"type": "string", "enum": values}));
        object(properties, &["choice"])
    };
    let adapter = OpenAiChat::new().strict(true);

    let first = dynamic("gen__first", enum_of(600, 4));
    let second = dynamic("gen__second", enum_of(401, 4));
    let error = budget_error(adapter.tools(&[first.spec(), second.spec()]));
    assert_eq!(
        (error.tool.as_str(), error.budget, error.actual),
        ("gen__second", Budget::EnumValues, 1_001)
    );

    let wide = dynamic("gen__wide", enum_of(300, 60));
    let error = budget_error(adapter.tools(&[wide.spec()]));
    assert_eq!((error.budget, error.actual), (Budget::LargeEnumCharacters, 18_000));

    let long_names: Map<String, Value> =
        (0..13).map(|n| (format!("{n:0>10000}"), json!({"type": "string"}))).collect();
    let names = dynamic("gen__names", object(long_names, &[]));
    let error = budget_error(adapter.tools(&[names.spec()]));
    assert_eq!((error.budget, error.actual), (Budget::NameCharacters, 130_000));
}

#[test]
fn anthropic_strict_budgets() {
    let adapter = Anthropic::new().strict(true);
    let small: Vec<DynamicTool> =
        (1..=21).map(|n| dynamic(&format!("gen__tool_{n}"), object(Map::new(), &[]))).collect();
    let error = budget_error(adapter.tools(&specs(&small)));
    assert_eq!(
        (error.tool.as_str(), error.budget, error.actual),
        ("gen__tool_21", Budget::StrictTools, 21)
    );
    assert!(adapter.tools(&specs(&small[..20])).is_ok());

    let optional = [
        dynamic("gen__a", object(strings("a", 12), &[])),
        dynamic("gen__b", object(strings("b", 13), &[])),
    ];
    let error = budget_error(adapter.tools(&specs(&optional)));
    assert_eq!(
        (error.tool.as_str(), error.budget, error.actual),
        ("gen__b", Budget::OptionalParameters, 25)
    );

    let unions: Map<String, Value> =
        (0..17).map(|n| (format!("u{n}"), json!({"type": ["string", "null"]}))).collect();
    let names: Vec<String> = unions.keys().cloned().collect();
    let names: Vec<&str> = names.iter().map(String::as_str).collect();
    let union_tool = dynamic("gen__unions", object(unions, &names));
    let error = budget_error(adapter.tools(&[union_tool.spec()]));
    assert_eq!((error.budget, error.actual), (Budget::UnionParameters, 17));

    assert!(Anthropic::new().tools(&specs(&small)).is_ok(), "limits apply to strict mode only");
}

#[test]
fn gemini_allows_128_declarations() {
    let tools: Vec<DynamicTool> = (1..=129)
        .map(|n| dynamic(&format!("gen__tool_{n}"), object(strings("p", 1), &[])))
        .collect();
    let error = budget_error(Gemini::new().tools(&specs(&tools)));
    assert_eq!(
        (error.tool.as_str(), error.budget, error.limit, error.actual),
        ("gen__tool_129", Budget::Declarations, 128, 129)
    );
    assert!(Gemini::new().tools(&specs(&tools[..128])).is_ok());
}

#[test]
fn requests_name_known_tools_and_say_what_cannot_be_expressed() {
    let specs = [SearchDocs::spec()];
    for provider in Provider::ALL {
        let adapter = provider.adapter(false);
        assert_eq!(
            adapter.request(&specs, &ToolChoice::tool("docs__serch")),
            Err(EncodeError::UnknownTool("docs__serch".to_owned())),
            "{provider}"
        );
        assert!(adapter.request(&[], &ToolChoice::auto()).unwrap().is_empty(), "{provider}");
    }
    let fields =
        OpenAiChat::new().request(&specs, &ToolChoice::required().parallel(false)).unwrap();
    let keys: Vec<&str> = fields.keys().map(String::as_str).collect();
    assert_eq!(keys, ["tools", "tool_choice", "parallel_tool_calls"]);

    let gemini = Gemini::new().request(&specs, &ToolChoice::auto().parallel(false));
    assert_eq!(
        gemini.unwrap_err().to_string(),
        "Google Gemini cannot express turning parallel function calls off"
    );
    assert!(
        Ollama::new().request(&specs, &ToolChoice::none()).unwrap().is_empty(),
        "`none` leaves the tools out"
    );
    assert!(Ollama::new().request(&specs, &ToolChoice::required()).is_err());
    let auto = Ollama::new().request(&specs, &ToolChoice::auto()).unwrap();
    assert_eq!(auto.keys().collect::<Vec<_>>(), ["tools"]);
}

#[test]
fn raising_undoes_strict_nulls_at_every_depth() {
    let mut sent = json!({
        "query": "wire",
        "filters": {"kinds": null, "tags": null, "updated_since_year": null},
        "order": null,
        "limit": null
    });
    assert!(parse_arguments::<SearchDocs>(sent.to_string().as_bytes()).is_err());
    raise_arguments(SearchDocs::spec().input_schema(), &mut sent);
    assert_eq!(sent, json!({"query": "wire", "filters": {"updated_since_year": null}}));
    assert!(parse_arguments::<SearchDocs>(sent.to_string().as_bytes()).is_ok());

    // The same through a decoded response.
    let body = json!({"choices": [{"index": 0, "finish_reason": "tool_calls", "message": {
        "role": "assistant", "tool_calls": [{"id": "call_1", "type": "function", "function": {
            "name": "docs__search",
            "arguments": "{\"query\":\"wire\",\"filters\":null,\"order\":null,\"limit\":null}"}}]}}]});
    let mut decoded = OpenAiChat::new().strict(true).decode(body.to_string().as_bytes()).unwrap();
    decoded.raise(&[SearchDocs::spec()]);
    let args = decoded.calls[0].arguments.value().unwrap();
    assert_eq!(
        args,
        &json!({"query": "wire", "filters": null}),
        "`filters` is nullable: its null stays"
    );
    assert!(parse_arguments::<SearchDocs>(args.to_string().as_bytes()).is_ok());
}

#[test]
fn raising_run_time_schemas() {
    let mut properties = Map::new();
    properties.insert("name".to_owned(), json!({"type": "string"}));
    properties.insert("note".to_owned(), json!({"type": ["string", "null"]}));
    properties.insert("tags".to_owned(), json!({"type": "array", "items": {"type": "string"}}));
    let tool = dynamic("gen__person", object(properties, &["name"]));
    let mut sent = json!({"name": "Ada", "note": null, "tags": null});
    raise_arguments(tool.spec().input_schema(), &mut sent);
    assert_eq!(sent, json!({"name": "Ada", "note": null}));
}

#[test]
fn strict_dialects_move_what_they_cannot_carry_into_descriptions() {
    let anthropic = Anthropic::new().strict(true).tool(SearchDocs::spec()).unwrap();
    let limit = &anthropic["input_schema"]["properties"]["limit"];
    assert_eq!(
        limit["description"],
        json!("How many hits to return at most. (at least 1, at most 20)")
    );
    assert!(limit.get("minimum").is_none() && limit.get("maximum").is_none());
    let chat = OpenAiChat::new().strict(true).tool(SearchDocs::spec()).unwrap();
    let limit = &chat["function"]["parameters"]["properties"]["limit"];
    assert_eq!((limit["minimum"].clone(), limit["maximum"].clone()), (json!(1), json!(20)));
}

#[test]
fn provider_names_round_trip() {
    for provider in Provider::ALL {
        assert_eq!(provider.as_str().parse::<Provider>(), Ok(provider));
        assert_eq!(provider.adapter(true).provider(), provider);
    }
    assert_eq!(
        "openai".parse::<Provider>().unwrap_err().to_string(),
        "unknown provider; expected `openai-chat`, `openai-responses`, `anthropic`, `gemini` or `ollama`"
    );
}
