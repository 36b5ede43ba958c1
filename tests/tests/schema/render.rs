//! The JSON Schema the model sees: exact output for every standard-library implementation,
//! deterministic bytes and hash, `schemars` interop, what serde attributes do to `required`, and
//! descriptions. Composite schemas are pinned by snapshots, each backed by a behavioural check.

// The types exist for their schemas; not every field is read back.
#![allow(dead_code)]

use std::collections::{BTreeSet, HashSet};

use serde_json::{Value, json};
use tool_runtime::prelude::*;
use tool_runtime::schema::{parse_arguments, schemars_schema, to_schemars};

fn rendered<T: ToolSchema + ?Sized>() -> Value {
    T::SCHEMA.to_json()
}

/// Every rendered schema is a valid 2020-12 schema, without any combinator or reference.
fn assert_plain(schema: &Value) {
    assert!(jsonschema::draft202012::meta::is_valid(schema), "{schema}");
    let text = schema.to_string();
    for forbidden in ["anyOf", "oneOf", "allOf", "\"not\"", "$ref", "$defs", "patternProperties"] {
        assert!(!text.contains(forbidden), "{forbidden} in {text}");
    }
}

#[test]
fn scalars() {
    let cases = [
        (rendered::<bool>(), json!({"type": "boolean"})),
        (rendered::<i8>(), json!({"type": "integer", "minimum": -128, "maximum": 127})),
        (rendered::<i16>(), json!({"type": "integer", "minimum": -32768, "maximum": 32767})),
        (
            rendered::<i32>(),
            json!({"type": "integer", "minimum": -2_147_483_648_i64, "maximum": 2_147_483_647}),
        ),
        (rendered::<i64>(), json!({"type": "integer", "minimum": i64::MIN, "maximum": i64::MAX})),
        // A JSON number parses to at most i64::MIN..=u64::MAX, so that bounds 128-bit integers.
        (rendered::<i128>(), json!({"type": "integer", "minimum": i64::MIN, "maximum": u64::MAX})),
        (
            rendered::<isize>(),
            json!({"type": "integer", "minimum": isize::MIN, "maximum": isize::MAX}),
        ),
        (rendered::<u8>(), json!({"type": "integer", "minimum": 0, "maximum": 255})),
        (rendered::<u16>(), json!({"type": "integer", "minimum": 0, "maximum": 65535})),
        (rendered::<u32>(), json!({"type": "integer", "minimum": 0, "maximum": 4_294_967_295_u32})),
        (rendered::<u64>(), json!({"type": "integer", "minimum": 0, "maximum": u64::MAX})),
        (rendered::<u128>(), json!({"type": "integer", "minimum": 0, "maximum": u64::MAX})),
        (rendered::<usize>(), json!({"type": "integer", "minimum": 0, "maximum": usize::MAX})),
        // Beyond these an f32 would deserialise as infinity.
        (
            rendered::<f32>(),
            json!({"type": "number", "minimum": -3.402_823_5e38, "maximum": 3.402_823_5e38}),
        ),
        (rendered::<f64>(), json!({"type": "number"})),
        (rendered::<String>(), json!({"type": "string"})),
        (rendered::<char>(), json!({"type": "string", "minLength": 1, "maxLength": 1})),
    ];
    for (actual, expected) in cases {
        assert_eq!(actual, expected);
        assert_plain(&actual);
    }
    // Exact bytes, big bounds included.
    assert_eq!(
        serde_json::to_string(&rendered::<u64>()).unwrap(),
        r#"{"type":"integer","minimum":0,"maximum":18446744073709551615}"#
    );
    assert_eq!(
        serde_json::to_string(&rendered::<f32>()).unwrap(),
        r#"{"type":"number","minimum":-3.4028235e+38,"maximum":3.4028235e+38}"#
    );
}

#[test]
fn f32_bounds_are_what_an_f32_holds() {
    #[derive(Debug, Deserialize, ToolSchema)]
    struct Single {
        value: f32,
    }
    let max: Single = parse_arguments(br#"{"value": 3.4028235e38}"#).unwrap();
    assert_eq!(max.value, f32::MAX);
    let min: Single = parse_arguments(br#"{"value": -3.4028235e38}"#).unwrap();
    assert_eq!(min.value, f32::MIN);
    // Would be infinity.
    assert!(parse_arguments::<Single>(br#"{"value": 1e39}"#).is_err());
    assert!(parse_arguments::<Single>(br#"{"value": -3.5e38}"#).is_err());
}

#[derive(Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, ToolSchema)]
#[serde(rename_all = "snake_case")]
enum Color {
    Red,
    DarkBlue,
}

#[test]
fn containers() {
    let u8_schema = json!({"type": "integer", "minimum": 0, "maximum": 255});
    let cases = [
        (rendered::<Vec<u8>>(), json!({"type": "array", "items": u8_schema})),
        (
            rendered::<[bool; 3]>(),
            json!({"type": "array", "items": {"type": "boolean"}, "minItems": 3, "maxItems": 3}),
        ),
        (rendered::<Box<u8>>(), u8_schema.clone()),
        (rendered::<Option<String>>(), json!({"type": ["string", "null"]})),
        (
            rendered::<Option<Option<u8>>>(),
            json!({"type": ["integer", "null"], "minimum": 0, "maximum": 255}),
        ),
        (rendered::<Box<Option<bool>>>(), json!({"type": ["boolean", "null"]})),
        (
            rendered::<Option<Vec<Option<bool>>>>(),
            json!({"type": ["array", "null"], "items": {"type": ["boolean", "null"]}}),
        ),
        (
            rendered::<BTreeSet<String>>(),
            json!({"type": "array", "items": {"type": "string"}, "uniqueItems": true}),
        ),
        (
            rendered::<HashSet<u8>>(),
            json!({"type": "array", "items": u8_schema, "uniqueItems": true}),
        ),
        (rendered::<Color>(), json!({"type": "string", "enum": ["red", "dark_blue"]})),
        // `null` is in `enum` too, or `enum` would refuse the `null` that `type` allows.
        (
            rendered::<Option<Color>>(),
            json!({"type": ["string", "null"], "enum": ["red", "dark_blue", null]}),
        ),
        (
            rendered::<Vec<[Option<Color>; 2]>>(),
            json!({"type": "array", "items": {
                "type": "array",
                "items": {"type": ["string", "null"], "enum": ["red", "dark_blue", null]},
                "minItems": 2,
                "maxItems": 2,
            }}),
        ),
    ];
    for (actual, expected) in cases {
        assert_eq!(actual, expected);
        assert_plain(&actual);
    }
    // Only what serde may leave out is optional.
    let optional = [
        <Option<u8>>::OPTIONAL,
        <Box<Option<u8>>>::OPTIONAL,
        <Vec<u8>>::OPTIONAL,
        <Box<u8>>::OPTIONAL,
        <[u8; 0]>::OPTIONAL,
    ];
    assert_eq!(optional, [true, true, false, false, false]);
}

#[test]
fn nullable_enums_accept_null_by_both_keywords() {
    let schema = rendered::<Option<Color>>();
    let validator = jsonschema::draft202012::new(&schema).unwrap();
    for value in [json!(null), json!("red")] {
        assert!(validator.is_valid(&value));
        assert!(<Option<Color>>::SCHEMA.is_valid(&value));
    }
    assert!(!validator.is_valid(&json!("blue")));
    assert!(!validator.is_valid(&json!(["red"])));
}

/// A search request.
#[derive(Debug, Serialize, Deserialize, ToolSchema)]
#[serde(rename_all = "camelCase")]
struct Query {
    /// Words to look for.
    /// Every word must appear.
    #[schema(length(min = 1, max = 200))]
    text: String,
    /// Shown to no model: the attribute wins.
    #[schema(description = "How many hits, at most.", range(min = 1, max = 20))]
    max_hits: Option<u8>,
    #[schema(pattern = "^[a-z]{2}$", format = "language-code")]
    language: String,
    colors: BTreeSet<Color>,
    #[serde(default)]
    exact: bool,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schema(items(max = 3))]
    boosts: Vec<Boost>,
    #[serde(skip)]
    cache_key: u64,
    #[serde(rename = "min_score")]
    #[schema(range(exclusive_min = 0.0, max = 1.0))]
    threshold: Option<f64>,
}

/// A weight for one field.
#[derive(Debug, Serialize, Deserialize, ToolSchema)]
struct Boost {
    field: String,
    #[schema(range(min = -10, exclusive_max = 10))]
    weight: i8,
}

#[test]
fn query_schema_snapshot() {
    let schema = rendered::<Query>();
    assert_plain(&schema);
    insta::assert_json_snapshot!("query", schema);

    // Behaviour behind the snapshot: sample arguments validate and deserialise.
    let raw = json!({
        "text": "rust schema",
        "maxHits": 5,
        "language": "en",
        "colors": ["red"],
        "boosts": [{"field": "title", "weight": 9}],
        "min_score": 0.5,
    });
    let query: Query = parse_arguments(raw.to_string().as_bytes()).unwrap();
    assert_eq!((query.max_hits, query.exact, query.cache_key), (Some(5), false, 0));
    assert_eq!(query.boosts[0].weight, 9);
    let minimal: Query =
        parse_arguments(br#"{"text": "x", "language": "de", "colors": []}"#).unwrap();
    assert!(minimal.boosts.is_empty() && minimal.threshold.is_none());
}

#[test]
fn required_follows_serde() {
    let schema = rendered::<Query>();
    // `Option`, `#[serde(default)]` and `default` + `skip_serializing_if` may be absent.
    assert_eq!(schema["required"], json!(["text", "language", "colors"]));
    let names: Vec<&str> =
        schema["properties"].as_object().unwrap().keys().map(String::as_str).collect();
    // `#[serde(skip)]` is in neither the schema nor the wire format; `rename` beats `rename_all`.
    assert_eq!(names, ["text", "maxHits", "language", "colors", "exact", "boosts", "min_score"]);
    assert_eq!(schema["additionalProperties"], json!(false));
    assert!(
        !Query::SCHEMA
            .is_valid(&json!({"text": "x", "language": "de", "colors": [], "cacheKey": 1}))
    );

    #[derive(Deserialize, ToolSchema)]
    #[serde(default)]
    struct AllDefault {
        a: u8,
        b: String,
    }
    impl Default for AllDefault {
        fn default() -> Self {
            Self { a: 1, b: String::new() }
        }
    }
    assert_eq!(rendered::<AllDefault>()["required"], json!([]));
    let defaults: AllDefault = parse_arguments(b"{}").unwrap();
    assert_eq!(defaults.a, 1);
}

#[test]
fn descriptions_come_from_docs_and_the_attribute() {
    let schema = rendered::<Query>();
    assert_eq!(schema["description"], json!("A search request."));
    assert_eq!(
        schema["properties"]["text"]["description"],
        json!("Words to look for.\nEvery word must appear.")
    );
    assert_eq!(schema["properties"]["maxHits"]["description"], json!("How many hits, at most."));
    assert_eq!(schema["properties"]["language"].get("description"), None);
    // A nested type's own description stays with the type.
    assert_eq!(
        schema["properties"]["boosts"]["items"]["description"],
        json!("A weight for one field.")
    );

    /// Doc text of the container.
    #[derive(Deserialize, ToolSchema)]
    #[schema(description = "Attribute text of the container.")]
    struct Described {
        #[schema(description = "Only the attribute.")]
        a: bool,
    }
    let schema = rendered::<Described>();
    assert_eq!(schema["description"], json!("Attribute text of the container."));
    assert_eq!(schema["properties"]["a"]["description"], json!("Only the attribute."));

    /// A short tag.
    #[derive(Deserialize, ToolSchema)]
    struct Tag(#[schema(length(max = 8))] String);
    assert_eq!(
        rendered::<Tag>(),
        json!({"type": "string", "description": "A short tag.", "maxLength": 8})
    );
}

#[test]
fn rendering_twice_gives_the_same_text_with_keys_in_a_fixed_order() {
    let first = serde_json::to_string(&rendered::<Query>()).unwrap();
    for _ in 0..8 {
        assert_eq!(serde_json::to_string(&rendered::<Query>()).unwrap(), first);
    }
    // Keys in a fixed order: type, description, constraints, then properties, required,
    // additionalProperties; properties in declaration order.
    assert!(first.starts_with(
        r#"{"type":"object","description":"A search request.","properties":{"text":"#
    ));
    assert!(
        first.ends_with(r#""required":["text","language","colors"],"additionalProperties":false}"#)
    );
}

/// Reply with the text.
#[tool(name = "test__echo", effect = read_only, redact = ["text"])]
struct Echo {
    /// The text to echo.
    #[schema(length(max = 16))]
    text: String,
}

/// Reply with the text, shorter.
#[tool(name = "test__echo_short", effect = read_only, redact = ["text"])]
struct EchoShort {
    /// The text to echo.
    #[schema(length(max = 8))]
    text: String,
}

/// Same schemas as `Echo`, another name and description.
#[tool(name = "test__echo_again", effect = state_change, redact = ["text"])]
struct EchoAgain {
    /// The text to echo.
    #[schema(length(max = 16))]
    text: String,
}

#[derive(Serialize, ToolSchema)]
struct Echoed {
    text: String,
}

macro_rules! echo_impl {
    ($($tool:ty),*) => {$(
        impl Tool for $tool {
            type Output = Echoed;
            async fn run(self, _: &ToolInvocationContext, _: &ToolCapabilities) -> Result<Echoed, ToolError> {
                Ok(Echoed { text: self.text })
            }
        }
    )*};
}

echo_impl!(Echo, EchoShort, EchoAgain);

#[test]
fn schema_hash_is_stable_and_tracks_the_schemas() {
    let hash = Echo::spec().schema_hash();
    assert_eq!(hash.len(), 64);
    assert!(hash.bytes().all(|byte| byte.is_ascii_digit() || (b'a'..=b'f').contains(&byte)));
    // Pinned: equal on every build and machine.
    insta::assert_snapshot!("echo_schema_hash", hash);
    assert_eq!(Echo::spec().schema_hash(), hash);
    // One bound changed: another hash. Only the schemas count, not name, description or effect.
    assert_ne!(EchoShort::spec().schema_hash(), hash);
    assert_eq!(EchoAgain::spec().schema_hash(), hash);

    insta::assert_json_snapshot!("echo_spec", Echo::spec());
    let echo: Echo = parse_arguments(br#"{"text": "hello"}"#).unwrap();
    assert_eq!(echo.text, "hello");
    assert!(parse_arguments::<Echo>(br#"{"text": "hello, far too long"}"#).is_err());
}

#[test]
fn schemars_sees_the_same_schema() {
    for (schemars, ours) in [
        (to_schemars::<Query>(), rendered::<Query>()),
        (to_schemars::<Option<Color>>(), rendered::<Option<Color>>()),
        (to_schemars::<[u64; 2]>(), rendered::<[u64; 2]>()),
        (to_schemars::<Echo>(), rendered::<Echo>()),
    ] {
        assert_eq!(schemars.as_value(), &ours);
    }

    #[derive(schemars::JsonSchema)]
    struct Mixed {
        #[schemars(schema_with = "schemars_schema::<Query>")]
        query: Query,
        #[schemars(schema_with = "schemars_schema::<Option<Color>>")]
        color: Option<Color>,
        plain: u8,
    }
    let mixed = schemars::schema_for!(Mixed);
    let mixed = mixed.as_value();
    assert_eq!(mixed["properties"]["query"], rendered::<Query>());
    assert_eq!(mixed["properties"]["color"], rendered::<Option<Color>>());
    // Inlined as ours are, not referenced.
    assert!(mixed.get("$defs").is_none());
}

/// Everything a ticket carries.
#[derive(Debug, Serialize, Deserialize, ToolSchema)]
#[serde(rename_all = "snake_case")]
struct Ticket {
    /// One line.
    #[schema(length(min = 3, max = 120))]
    title: String,
    priority: Option<Color>,
    #[schema(items(max = 5))]
    labels: BTreeSet<Label>,
    grid: [[i16; 2]; 2],
    assignee: Option<Person>,
    initial: char,
    ratio: f32,
}

/// A label.
#[derive(Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize, ToolSchema)]
struct Label(#[schema(length(min = 1, max = 32), pattern = "^[a-z0-9]+(-[a-z0-9]+)*$")] String);

/// A person.
#[derive(Debug, Serialize, Deserialize, ToolSchema)]
struct Person {
    #[schema(format = "email")]
    email: String,
    #[schema(range(min = 0, max = 150))]
    age: Option<u16>,
}

#[test]
fn ticket_schema_snapshot() {
    let schema = rendered::<Ticket>();
    assert_plain(&schema);
    insta::assert_json_snapshot!("ticket", schema);

    let raw = json!({
        "title": "Broken build",
        "priority": null,
        "labels": ["ci", "build-failure"],
        "grid": [[1, -2], [3.0, 4]],
        "assignee": {"email": "a@example.com", "age": 40},
        "initial": "é",
        "ratio": 0.25,
    });
    let ticket: Ticket = parse_arguments(raw.to_string().as_bytes()).unwrap();
    assert_eq!(ticket.grid, [[1, -2], [3, 4]]);
    assert_eq!(ticket.initial, 'é');
    // And the value serialises back inside the same schema.
    assert!(Ticket::SCHEMA.is_valid(&serde_json::to_value(&ticket).unwrap()));
    assert!(
        parse_arguments::<Ticket>(raw.to_string().replace("build-failure", "Build").as_bytes())
            .is_err()
    );
}

#[test]
fn schema_and_spec_hashes_hash_canonical_json_whatever_the_key_order() {
    use tool_runtime::runtime::{BoundToolRuntime, DynamicTool};
    let tool = |input: Value| {
        DynamicTool::builder("notes__add", "Adds a note.", input)
            .allow_open_schema()
            .build(|_, _, _| async { Ok(json!({})) })
            .unwrap()
    };
    let written = tool(json!({
        "type": "object",
        "properties": {"title": {"type": "string", "maxLength": 80}, "body": {"type": "string"}},
        "required": ["title"],
        "additionalProperties": false
    }));
    let reordered = tool(json!({
        "additionalProperties": false,
        "required": ["title"],
        "properties": {"body": {"type": "string"}, "title": {"maxLength": 80, "type": "string"}},
        "type": "object"
    }));
    assert_eq!(written.spec().schema_hash(), reordered.spec().schema_hash());
    assert_eq!(written.spec().spec_hash(), reordered.spec().spec_hash());
    // A value that differs is another hash; so is another name with the same schemas.
    let longer = tool(json!({
        "type": "object",
        "properties": {"title": {"type": "string", "maxLength": 81}, "body": {"type": "string"}},
        "required": ["title"],
        "additionalProperties": false
    }));
    assert_ne!(written.spec().schema_hash(), longer.spec().schema_hash());
    let renamed = DynamicTool::builder("notes__append", "Adds a note.", json!({
        "type": "object",
        "properties": {"title": {"type": "string", "maxLength": 80}, "body": {"type": "string"}},
        "required": ["title"],
        "additionalProperties": false
    }))
    .build(|_, _, _| async { Ok(json!({})) })
    .unwrap();
    assert_eq!(renamed.spec().schema_hash(), written.spec().schema_hash());
    assert_ne!(renamed.spec().spec_hash(), written.spec().spec_hash());
}
