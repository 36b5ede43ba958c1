//! Property names and enum values in the schema are exactly the names serde writes and reads,
//! for every `rename_all` rule, with `rename` overriding it, on fields and on variants.

use serde::de::DeserializeOwned;
use serde_json::Value;
use tool_runtime::prelude::*;
use tool_runtime::schema::{SchemaKind, parse_arguments};

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
