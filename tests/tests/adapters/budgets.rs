//! Budgets before the request: every provider limit checked when tools are
//! encoded, each at its limit (accepted) and one past it (a typed error naming the tool, the
//! limit and what the request reached). Nothing is sent when a budget is broken.

use serde_json::{Map, Value, json};
use tool_runtime::adapters::{
    Adapter, Anthropic, Budget, BudgetError, EncodeError, Gemini, OpenAiChat, OpenAiResponses,
    Provider,
};
use tool_runtime::prelude::*;
use tool_runtime::runtime::{BoundToolRuntime, DynamicTool};

fn dynamic(name: &str, schema: Value) -> DynamicTool {
    DynamicTool::builder(name, "A generated tool.", schema)
        .allow_open_schema()
        .effect(ToolEffect::ReadOnly)
        .build(|args, _, _| async move { Ok(args) })
        .unwrap_or_else(|error| panic!("{name}: {error}"))
}

/// An object schema with these properties, all required.
fn required_object(properties: Map<String, Value>) -> Value {
    let names: Vec<String> = properties.keys().cloned().collect();
    json!({"type": "object", "properties": properties, "required": names, "additionalProperties": false})
}

/// `count` required string properties whose names are `width` characters long.
fn named_strings(count: usize, width: usize) -> Map<String, Value> {
    (0..count).map(|n| (format!("{n:0>width$}"), json!({"type": "string"}))).collect()
}

fn one_enum(values: Vec<Value>) -> Value {
    let mut properties = Map::new();
    properties.insert("e".to_owned(), json!({"enum": values}));
    required_object(properties)
}

/// Encodes `tools` with `adapter`: `Ok` when every budget holds.
fn encode(adapter: &dyn Adapter, tools: &[DynamicTool]) -> Result<Value, EncodeError> {
    let specs: Vec<&ToolSpec> = tools.iter().map(BoundToolRuntime::spec).collect();
    adapter.tools(&specs)
}

/// The budget error of encoding `tools`, checked to name `tool` and to say so.
fn broken(adapter: &dyn Adapter, tools: &[DynamicTool], tool: &str) -> BudgetError {
    match encode(adapter, tools) {
        Err(EncodeError::Budget(error)) => {
            assert_eq!(error.tool, tool);
            assert_eq!(error.provider, adapter.provider());
            let message = error.to_string();
            assert!(message.contains(&format!("`{tool}`")), "{message}");
            assert!(message.contains(&format!("at most {}", error.limit)), "{message}");
            error
        }
        other => panic!("expected a budget error naming `{tool}`, got {other:?}"),
    }
}

fn openai_strict() -> [Box<dyn Adapter>; 2] {
    [Box::new(OpenAiChat::new().strict(true)), Box::new(OpenAiResponses::new().strict(true))]
}

#[test]
fn openai_5000_properties() {
    let at = [
        dynamic("gen__a", required_object(named_strings(2_500, 4))),
        dynamic("gen__b", required_object(named_strings(2_500, 4))),
    ];
    let past = [
        dynamic("gen__a", required_object(named_strings(2_500, 4))),
        dynamic("gen__b", required_object(named_strings(2_501, 4))),
    ];
    for adapter in openai_strict() {
        assert!(encode(&*adapter, &at).is_ok());
        let error = broken(&*adapter, &past, "gen__b");
        assert_eq!((error.budget, error.limit, error.actual), (Budget::Properties, 5_000, 5_001));
    }
}

#[test]
fn openai_10_levels_of_nesting() {
    let nested = |levels: usize| {
        let mut schema = required_object(Map::new());
        for _ in 1..levels {
            let mut properties = Map::new();
            properties.insert("inner".to_owned(), schema);
            schema = required_object(properties);
        }
        schema
    };
    for adapter in openai_strict() {
        assert!(encode(&*adapter, &[dynamic("gen__ten", nested(10))]).is_ok());
        let error = broken(&*adapter, &[dynamic("gen__eleven", nested(11))], "gen__eleven");
        assert_eq!((error.budget, error.limit, error.actual), (Budget::Nesting, 10, 11));
    }
}

#[test]
fn openai_120000_characters_of_names_and_enum_values() {
    // 1 000 names of 119 characters and one of 1 000 (or 1 001): 120 000 (or 120 001).
    let tools = |last: usize| {
        let mut properties = named_strings(1_000, 119);
        properties.insert("x".repeat(last), json!({"type": "string"}));
        [dynamic("gen__names", required_object(properties))]
    };
    // Enum values count as well: 119 000 of names and 1 000 (or 1 001) of values.
    let with_values = |width: usize| {
        let mut properties = named_strings(1_000, 119);
        properties.insert(
            "e".to_owned(),
            json!({"enum": ["a".repeat(999), "b".repeat(width - 999 - 1)]}),
        );
        [dynamic("gen__values", required_object(properties))]
    };
    for adapter in openai_strict() {
        assert!(encode(&*adapter, &tools(1_000)).is_ok());
        let error = broken(&*adapter, &tools(1_001), "gen__names");
        assert_eq!(
            (error.budget, error.limit, error.actual),
            (Budget::NameCharacters, 120_000, 120_001)
        );
        assert!(encode(&*adapter, &with_values(1_000)).is_ok());
        let error = broken(&*adapter, &with_values(1_001), "gen__values");
        assert_eq!((error.budget, error.actual), (Budget::NameCharacters, 120_001));
    }
}

#[test]
fn openai_1000_enum_values() {
    let integers = |count: usize| one_enum((0..count).map(|n| json!(n.to_string())).collect());
    for adapter in openai_strict() {
        assert!(encode(&*adapter, &[dynamic("gen__enum", integers(1_000))]).is_ok());
        let error = broken(&*adapter, &[dynamic("gen__enum", integers(1_001))], "gen__enum");
        assert_eq!((error.budget, error.limit, error.actual), (Budget::EnumValues, 1_000, 1_001));
    }
}

#[test]
fn openai_15000_characters_in_a_string_enum_of_more_than_250_values() {
    // 251 distinct values: 250 of 59 characters and one of 250 (or 251).
    let values = |last: usize| {
        let mut values: Vec<Value> = (0..250).map(|n| json!(format!("{n:0>59}"))).collect();
        values.push(json!("z".repeat(last)));
        one_enum(values)
    };
    for adapter in openai_strict() {
        assert!(encode(&*adapter, &[dynamic("gen__wide", values(250))]).is_ok());
        let error = broken(&*adapter, &[dynamic("gen__wide", values(251))], "gen__wide");
        assert_eq!(
            (error.budget, error.limit, error.actual),
            (Budget::LargeEnumCharacters, 15_000, 15_001)
        );
    }
    // 250 values are not "more than 250": no such limit, however long.
    let long: Vec<Value> = (0..250).map(|n| json!(format!("{n:0>100}"))).collect();
    assert!(
        encode(&OpenAiChat::new().strict(true), &[dynamic("gen__long", one_enum(long))]).is_ok()
    );
}

#[test]
fn anthropic_20_strict_tools() {
    let tools: Vec<DynamicTool> =
        (1..=21).map(|n| dynamic(&format!("gen__tool_{n}"), required_object(Map::new()))).collect();
    let adapter = Anthropic::new().strict(true);
    assert!(encode(&adapter, &tools[..20]).is_ok());
    let error = broken(&adapter, &tools, "gen__tool_21");
    assert_eq!((error.budget, error.limit, error.actual), (Budget::StrictTools, 20, 21));
    assert!(encode(&Anthropic::new(), &tools).is_ok(), "limits apply to strict mode only");
}

#[test]
fn anthropic_24_optional_parameters() {
    let optional = |count: usize| {
        let properties: Map<String, Value> =
            (0..count).map(|n| (format!("o{n}"), json!({"type": "string"}))).collect();
        json!({"type": "object", "properties": properties, "required": [], "additionalProperties": false})
    };
    let adapter = Anthropic::new().strict(true);
    let at = [dynamic("gen__a", optional(12)), dynamic("gen__b", optional(12))];
    assert!(encode(&adapter, &at).is_ok());
    let past = [dynamic("gen__a", optional(12)), dynamic("gen__b", optional(13))];
    let error = broken(&adapter, &past, "gen__b");
    assert_eq!((error.budget, error.limit, error.actual), (Budget::OptionalParameters, 24, 25));
}

#[test]
fn anthropic_16_union_typed_parameters() {
    let unions = |count: usize| {
        required_object(
            (0..count).map(|n| (format!("u{n}"), json!({"type": ["string", "null"]}))).collect(),
        )
    };
    let adapter = Anthropic::new().strict(true);
    assert!(
        encode(&adapter, &[dynamic("gen__a", unions(8)), dynamic("gen__b", unions(8))]).is_ok()
    );
    let error =
        broken(&adapter, &[dynamic("gen__a", unions(8)), dynamic("gen__b", unions(9))], "gen__b");
    assert_eq!((error.budget, error.limit, error.actual), (Budget::UnionParameters, 16, 17));
}

#[test]
fn anthropic_strict_moves_what_its_grammar_cannot_carry_into_descriptions() {
    let mut properties = Map::new();
    properties.insert("count".to_owned(), json!({"type": "integer", "minimum": 1, "maximum": 20}));
    properties
        .insert("name".to_owned(), json!({"type": "string", "minLength": 2, "maxLength": 40}));
    properties.insert(
        "one".to_owned(),
        json!({"type": "array", "items": {"type": "string"}, "minItems": 1}),
    );
    properties.insert(
        "two".to_owned(),
        json!({"type": "array", "items": {"type": "string"}, "minItems": 2}),
    );
    let tool = dynamic("gen__constrained", required_object(properties));
    let tools = encode(&Anthropic::new().strict(true), std::slice::from_ref(&tool)).unwrap();
    let lowered = &tools[0]["input_schema"]["properties"];
    assert_eq!(
        lowered["count"],
        json!({"type": "integer", "description": "at least 1, at most 20"})
    );
    assert_eq!(
        lowered["name"],
        json!({"type": "string", "description": "at least 2 characters, at most 40 characters"})
    );
    assert_eq!(lowered["one"]["minItems"], json!(1), "`minItems` of 0 or 1 is kept");
    assert!(lowered["two"].get("minItems").is_none());
    assert_eq!(lowered["two"]["description"], json!("at least 2 items"));
}

#[test]
fn gemini_128_declarations() {
    let tools: Vec<DynamicTool> = (1..=129)
        .map(|n| dynamic(&format!("gen__tool_{n}"), required_object(Map::new())))
        .collect();
    assert!(encode(&Gemini::new(), &tools[..128]).is_ok());
    let error = broken(&Gemini::new(), &tools, "gen__tool_129");
    assert_eq!(
        (error.provider, error.budget, error.limit, error.actual),
        (Provider::Gemini, Budget::Declarations, 128, 129)
    );
}
