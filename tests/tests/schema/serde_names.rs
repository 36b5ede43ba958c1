//! Property names and enum values in the schema are exactly the names serde writes and reads,
//! for every `rename_all` rule, with `rename` overriding it, on fields and on variants.

use serde::de::DeserializeOwned;
use serde_json::Value;
use tool_runtime::prelude::*;
use tool_runtime::runtime::{Arguments, BoundToolRuntime, StaticTool};
use tool_runtime::schema::{
    ArgumentsError, Constraint, SchemaKind, decode_checked, parse_arguments,
};

/// The schema's property names equal the keys serde writes for `value`, in order; the written
/// object validates and reads back as `value`.
fn check_struct<T>(value: &T, expected: &[&str])
where
    T: ToolSchema + Serialize + DeserializeOwned + PartialEq + std::fmt::Debug,
{
    let schema_names: Vec<&str> =
        T::SCHEMA.properties().expect("an object").iter().map(|property| property.name).collect();
    let written = serde_json::to_value(value).unwrap();
    let written_names: Vec<&str> =
        written.as_object().expect("an object").keys().map(String::as_str).collect();
    assert_eq!(schema_names, written_names, "schema vs serde");
    assert_eq!(schema_names, expected);

    T::SCHEMA.validate(&written).expect("what serde writes validates");
    let read: T = parse_arguments(&serde_json::to_vec(&written).unwrap()).unwrap();
    assert_eq!(&read, value);
}

/// The schema's `enum` equals the strings serde writes for `variants`, in order, and each reads
/// back as its variant.
fn check_enum<T>(variants: &[T], expected: &[&str])
where
    T: ToolSchema + Serialize + DeserializeOwned + PartialEq + std::fmt::Debug,
{
    let SchemaKind::Enum(schema_values) = T::SCHEMA.kind else {
        panic!("an enum schema");
    };
    let written: Vec<String> = variants
        .iter()
        .map(|variant| match serde_json::to_value(variant).unwrap() {
            Value::String(text) => text,
            other => panic!("a unit variant is written as a string, not {other}"),
        })
        .collect();
    assert_eq!(schema_values, written, "schema vs serde");
    assert_eq!(schema_values, expected);

    for (variant, text) in variants.iter().zip(&written) {
        let raw = serde_json::to_vec(text).unwrap();
        assert_eq!(&parse_arguments::<T>(&raw).unwrap(), variant);
    }
    // Another spelling of a valid name is refused by the schema before serde sees it.
    let shouted = serde_json::to_vec(&format!("{}!", written[0])).unwrap();
    assert!(parse_arguments::<T>(&shouted).is_err());
}

macro_rules! rename_all {
    ($test:ident, $rule:tt, fields: $fields:expr, variants: $variants:expr $(,)?) => {
        #[test]
        fn $test() {
            #[derive(Debug, PartialEq, Serialize, Deserialize, ToolSchema)]
            #[serde(rename_all = $rule)]
            struct Fields {
                epoch_ms_total: u64,
                user_id: String,
                name: bool,
                v2_api: Option<u8>,
                r#type: Option<u8>,
                #[serde(rename = "Custom_name-1")]
                renamed: i8,
            }

            #[derive(Debug, PartialEq, Serialize, Deserialize, ToolSchema)]
            #[serde(rename_all = $rule)]
            enum Variants {
                MostRelevant,
                Newest,
                HTTPStatus,
                V2Api,
                #[serde(rename = "legacy_Name-1")]
                Legacy,
            }

            let value = Fields {
                epoch_ms_total: 1_795_000_000_000,
                user_id: "u-42".to_owned(),
                name: true,
                v2_api: Some(2),
                r#type: Some(1),
                renamed: -1,
            };
            check_struct(&value, &$fields);
            use Variants::*;
            check_enum(&[MostRelevant, Newest, HTTPStatus, V2Api, Legacy], &$variants);
        }
    };
}

rename_all!(
    lowercase,
    "lowercase",
    fields: ["epoch_ms_total", "user_id", "name", "v2_api", "type", "Custom_name-1"],
    variants: ["mostrelevant", "newest", "httpstatus", "v2api", "legacy_Name-1"],
);

rename_all!(
    uppercase,
    "UPPERCASE",
    fields: ["EPOCH_MS_TOTAL", "USER_ID", "NAME", "V2_API", "TYPE", "Custom_name-1"],
    variants: ["MOSTRELEVANT", "NEWEST", "HTTPSTATUS", "V2API", "legacy_Name-1"],
);

rename_all!(
    pascal_case,
    "PascalCase",
    fields: ["EpochMsTotal", "UserId", "Name", "V2Api", "Type", "Custom_name-1"],
    variants: ["MostRelevant", "Newest", "HTTPStatus", "V2Api", "legacy_Name-1"],
);

rename_all!(
    camel_case,
    "camelCase",
    fields: ["epochMsTotal", "userId", "name", "v2Api", "type", "Custom_name-1"],
    variants: ["mostRelevant", "newest", "hTTPStatus", "v2Api", "legacy_Name-1"],
);

rename_all!(
    snake_case,
    "snake_case",
    fields: ["epoch_ms_total", "user_id", "name", "v2_api", "type", "Custom_name-1"],
    variants: ["most_relevant", "newest", "h_t_t_p_status", "v2_api", "legacy_Name-1"],
);

rename_all!(
    screaming_snake_case,
    "SCREAMING_SNAKE_CASE",
    fields: ["EPOCH_MS_TOTAL", "USER_ID", "NAME", "V2_API", "TYPE", "Custom_name-1"],
    variants: ["MOST_RELEVANT", "NEWEST", "H_T_T_P_STATUS", "V2_API", "legacy_Name-1"],
);

rename_all!(
    kebab_case,
    "kebab-case",
    fields: ["epoch-ms-total", "user-id", "name", "v2-api", "type", "Custom_name-1"],
    variants: ["most-relevant", "newest", "h-t-t-p-status", "v2-api", "legacy_Name-1"],
);

rename_all!(
    screaming_kebab_case,
    "SCREAMING-KEBAB-CASE",
    fields: ["EPOCH-MS-TOTAL", "USER-ID", "NAME", "V2-API", "TYPE", "Custom_name-1"],
    variants: ["MOST-RELEVANT", "NEWEST", "H-T-T-P-STATUS", "V2-API", "legacy_Name-1"],
);

#[test]
fn without_rename_all_names_are_the_rust_names() {
    #[derive(Debug, PartialEq, Serialize, Deserialize, ToolSchema)]
    struct Plain {
        epoch_ms_total: u64,
        #[serde(rename = "userId")]
        user_id: String,
    }
    #[derive(Debug, PartialEq, Serialize, Deserialize, ToolSchema)]
    enum Order {
        MostRelevant,
        #[serde(rename = "newest")]
        Newest,
    }
    check_struct(
        &Plain { epoch_ms_total: 1, user_id: "u".to_owned() },
        &["epoch_ms_total", "userId"],
    );
    check_enum(&[Order::MostRelevant, Order::Newest], &["MostRelevant", "newest"]);
}

#[test]
fn nested_types_keep_their_own_rules() {
    #[derive(Debug, PartialEq, Serialize, Deserialize, ToolSchema)]
    #[serde(rename_all = "kebab-case")]
    enum Sort {
        MostRelevant,
    }
    #[derive(Debug, PartialEq, Serialize, Deserialize, ToolSchema)]
    #[serde(rename_all = "SCREAMING_SNAKE_CASE")]
    struct Inner {
        page_size: u8,
        sort_order: Sort,
    }
    #[derive(Debug, PartialEq, Serialize, Deserialize, ToolSchema)]
    #[serde(rename_all = "camelCase")]
    struct Outer {
        inner_value: Inner,
        all_items: Vec<Inner>,
    }
    let value = Outer {
        inner_value: Inner { page_size: 1, sort_order: Sort::MostRelevant },
        all_items: vec![Inner { page_size: 2, sort_order: Sort::MostRelevant }],
    };
    check_struct(&value, &["innerValue", "allItems"]);
    let inner = Outer::SCHEMA.properties().unwrap()[0].schema;
    let names: Vec<&str> =
        inner.properties().unwrap().iter().map(|property| property.name).collect();
    assert_eq!(names, ["PAGE_SIZE", "SORT_ORDER"]);
    assert_eq!(
        serde_json::to_value(&value).unwrap()["allItems"][0],
        serde_json::json!({"PAGE_SIZE": 2, "SORT_ORDER": "most-relevant"})
    );
}

/// Tool arguments follow the same rules.
#[tool(name = "test__names", effect = read_only, redact = ["resultCount"])]
#[derive(Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
struct Names {
    search_text: String,
    #[serde(rename = "max")]
    max_results: Option<u8>,
}

#[derive(Serialize, ToolSchema)]
#[serde(rename_all = "camelCase")]
struct NamesOutput {
    result_count: u32,
}

impl Tool for Names {
    type Output = NamesOutput;
    async fn run(
        self,
        _: &ToolInvocationContext,
        _: &ToolCapabilities,
    ) -> Result<NamesOutput, ToolError> {
        Ok(NamesOutput { result_count: 0 })
    }
}

#[test]
fn tool_arguments_follow_serde() {
    check_struct(
        &Names { search_text: "rust".to_owned(), max_results: Some(3) },
        &["searchText", "max"],
    );
    let output = serde_json::to_value(NamesOutput { result_count: 1 }).unwrap();
    assert_eq!(output, serde_json::json!({"resultCount": 1}));
    assert!(NamesOutput::SCHEMA.is_valid(&output));
}

// ---------------------------------------------------------------------------------------------
// `#[serde(alias = "...")]`: accepted on input as a synonym of the name, never rendered
// ---------------------------------------------------------------------------------------------

#[derive(Debug, PartialEq, Serialize, Deserialize, ToolSchema)]
struct Query {
    #[serde(alias = "query")]
    q: String,
}

/// The issue's case: `{"query": "x"}` for a field `q` with `alias = "query"` was refused as
/// `/q: missing required property; /query: unknown property`.
#[test]
fn an_alias_is_accepted_as_the_property() {
    let raw = br#"{"query": "x"}"#;
    let value = serde_json::from_slice::<Value>(raw).unwrap();
    assert_eq!(Query::SCHEMA.validate(&value), Ok(()));
    assert_eq!(parse_arguments::<Query>(raw).unwrap(), Query { q: "x".to_owned() });
    // The one-pass decoder leaves an alias to the ordinary path, which renames it.
    assert_eq!(decode_checked::<Query>(raw), None);
    // The name works on both paths.
    assert_eq!(parse_arguments::<Query>(br#"{"q": "y"}"#).unwrap(), Query { q: "y".to_owned() });
    assert_eq!(decode_checked::<Query>(br#"{"q": "y"}"#), Some(Query { q: "y".to_owned() }));
}

#[test]
fn the_rendered_schema_names_the_primary_name_only() {
    assert_eq!(
        Query::SCHEMA.to_json(),
        serde_json::json!({
            "type": "object",
            "properties": {"q": {"type": "string"}},
            "required": ["q"],
            "additionalProperties": false,
        })
    );
    let property = Query::SCHEMA.properties().unwrap()[0];
    assert_eq!((property.name, property.aliases), ("q", &["query"][..]));
    // A field without an alias has none.
    let plain = Names::SCHEMA.properties().unwrap();
    assert!(plain.iter().all(|property| property.aliases.is_empty()));
}

#[test]
fn a_property_given_under_two_names_is_refused() {
    let raw = br#"{"q": "a", "query": "b"}"#;
    let value = serde_json::from_slice::<Value>(raw).unwrap();
    let errors = Query::SCHEMA.validate(&value).unwrap_err();
    let messages: Vec<String> = errors.iter().map(ToString::to_string).collect();
    assert_eq!(messages, ["/query: property `q` given twice, as `q` and `query`"]);
    assert_eq!(
        errors.iter().next().unwrap().constraint(),
        Constraint::GivenTwice { property: "q" }
    );
    // The document order does not matter: the error is on the alias.
    let swapped = serde_json::json!({"query": "b", "q": "a"});
    let errors = Query::SCHEMA.validate(&swapped).unwrap_err();
    assert_eq!(errors.iter().map(|error| error.pointer()).collect::<Vec<_>>(), ["/query"]);

    assert!(matches!(parse_arguments::<Query>(raw), Err(ArgumentsError::Validation(_))));
    assert_eq!(decode_checked::<Query>(raw), None);
}

#[test]
fn errors_point_at_the_key_as_sent() {
    let errors = Query::SCHEMA.validate(&serde_json::json!({"query": 5})).unwrap_err();
    let messages: Vec<String> = errors.iter().map(ToString::to_string).collect();
    assert_eq!(messages, ["/query: expected string, got integer"]);
    // Absent under every name: the error names the property by its name.
    let errors = Query::SCHEMA.validate(&serde_json::json!({})).unwrap_err();
    let messages: Vec<String> = errors.iter().map(ToString::to_string).collect();
    assert_eq!(messages, ["/q: missing required property"]);
    // An unknown key is still unknown.
    let errors = Query::SCHEMA.validate(&serde_json::json!({"q": "x", "qq": 1})).unwrap_err();
    let messages: Vec<String> = errors.iter().map(ToString::to_string).collect();
    assert_eq!(messages, ["/qq: unknown property `qq`"]);
}

/// Seed 002 §6.1's tolerance, where an author asks for it: a camelCase schema that also takes
/// snake_case keys, through nested objects and arrays, with two aliases on one field.
#[derive(Debug, PartialEq, Serialize, Deserialize, ToolSchema)]
#[serde(rename_all = "camelCase")]
struct Tolerant {
    #[serde(alias = "user_id", alias = "uid")]
    user_id: String,
    #[serde(alias = "page_size")]
    #[schema(range(min = 1, max = 50))]
    page_size: Option<u8>,
    #[serde(alias = "sort_keys")]
    sort_keys: Vec<SortKey>,
}

#[derive(Debug, PartialEq, Serialize, Deserialize, ToolSchema)]
#[serde(rename_all = "camelCase")]
struct SortKey {
    #[serde(alias = "field_name")]
    field_name: String,
}

#[test]
fn aliases_work_at_any_depth() {
    let expected = Tolerant {
        user_id: "u-1".to_owned(),
        page_size: Some(3),
        sort_keys: vec![
            SortKey { field_name: "a".to_owned() },
            SortKey { field_name: "b".to_owned() },
        ],
    };
    let camel = br#"{"userId": "u-1", "pageSize": 3, "sortKeys": [{"fieldName": "a"}, {"fieldName": "b"}]}"#;
    let snake = br#"{"user_id": "u-1", "page_size": 3, "sort_keys": [{"field_name": "a"}, {"fieldName": "b"}]}"#;
    let short = br#"{"sort_keys": [{"field_name": "a"}, {"field_name": "b"}], "uid": "u-1", "pageSize": 3}"#;
    for raw in [&camel[..], &snake[..], &short[..]] {
        assert_eq!(parse_arguments::<Tolerant>(raw).unwrap(), expected);
    }
    assert_eq!(decode_checked::<Tolerant>(camel).as_ref(), Some(&expected));
    // Every alias, at any depth, is the ordinary path's, which names each property by its name
    // and keeps the entries where they were.
    for raw in [&snake[..], &short[..]] {
        assert_eq!(decode_checked::<Tolerant>(raw), None);
    }
    let mut short = serde_json::from_slice::<Value>(short).unwrap();
    assert!(Tolerant::SCHEMA.is_valid(&short));
    Tolerant::SCHEMA.normalize(&mut short);
    assert_eq!(
        short.to_string(),
        r#"{"sortKeys":[{"fieldName":"a"},{"fieldName":"b"}],"userId":"u-1","pageSize":3}"#
    );
    // The rendered schema is the camelCase one.
    assert_eq!(
        Tolerant::SCHEMA.to_json()["properties"].as_object().unwrap().keys().collect::<Vec<_>>(),
        ["userId", "pageSize", "sortKeys"]
    );
    // Constraints hold under an alias, and the error points at it.
    let errors = Tolerant::SCHEMA
        .validate(
            &serde_json::json!({"uid": "u", "page_size": 99, "sortKeys": [{"field_name": 1}]}),
        )
        .unwrap_err();
    let pointers: Vec<&str> = errors.iter().map(|error| error.pointer()).collect();
    assert_eq!(pointers, ["/page_size", "/sortKeys/0/field_name"]);
    // Two aliases of one property are a duplicate too; the later alias carries the error.
    let errors = Tolerant::SCHEMA
        .validate(&serde_json::json!({"uid": "u", "user_id": "u", "sortKeys": []}))
        .unwrap_err();
    let messages: Vec<String> = errors.iter().map(ToString::to_string).collect();
    assert_eq!(messages, ["/uid: property `userId` given twice, as `user_id` and `uid`"]);
}

#[test]
fn an_integral_float_under_an_alias_is_normalised() {
    // `3.0` is for the ordinary path, which normalises it where it was sent.
    let raw = br#"{"uid": "u", "page_size": 3.0, "sort_keys": []}"#;
    assert_eq!(decode_checked::<Tolerant>(raw), None);
    let parsed = parse_arguments::<Tolerant>(raw).unwrap();
    assert_eq!(parsed.page_size, Some(3));
}

/// A tool's arguments take aliases too, and what the runner's binding makes of them names the
/// property by its name, from text (the one-pass path) and from a parsed value alike.
#[tool(name = "test__aliased", effect = read_only, redact = ["resultCount"])]
#[derive(Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
struct AliasedTool {
    #[serde(alias = "search_text")]
    search_text: String,
}

impl Tool for AliasedTool {
    type Output = NamesOutput;
    async fn run(
        self,
        _: &ToolInvocationContext,
        _: &ToolCapabilities,
    ) -> Result<NamesOutput, ToolError> {
        Ok(NamesOutput { result_count: u32::try_from(self.search_text.len()).unwrap_or(0) })
    }
}

#[test]
fn tool_arguments_take_aliases_and_are_validated_under_the_name() {
    let expected = AliasedTool { search_text: "rust".to_owned() };
    assert_eq!(parse_arguments::<AliasedTool>(br#"{"search_text": "rust"}"#).unwrap(), expected);
    assert_eq!(parse_arguments::<AliasedTool>(br#"{"searchText": "rust"}"#).unwrap(), expected);
    let tool = StaticTool::<AliasedTool>::new();
    let aliased = serde_json::json!({"search_text": "rust"});
    let named = serde_json::json!({"searchText": "rust"});
    for args in [Arguments::from(r#"{"search_text": "rust"}"#), Arguments::from(&aliased)] {
        assert_eq!(tool.arguments(args).unwrap().value(), &named);
    }
    assert_eq!(
        tool.arguments(Arguments::from(r#"{"searchText": "rust"}"#)).unwrap().value(),
        &named
    );
    let spec = AliasedTool::spec();
    assert_eq!(
        spec.input_schema().to_json()["properties"].as_object().unwrap().keys().collect::<Vec<_>>(),
        ["searchText"]
    );
}
