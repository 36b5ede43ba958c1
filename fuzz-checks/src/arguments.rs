//! Strict argument parsing and validation, with the `jsonschema` crate as the oracle, and the
//! one-pass decoder, which must agree with the ordinary path.
//!
//! The first input byte picks one of a fixed set of representative argument types (built with
//! the `ToolSchema` derive, as tool authors write them); the rest is the raw argument text.

use std::collections::BTreeSet;
use std::sync::OnceLock;

use serde::Serialize;
use serde::de::DeserializeOwned;
use tool_runtime::prelude::*;
use tool_runtime::schema::{ArgumentsError, decode_checked, parse_arguments, parse_json};

/// How results are ordered.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize, ToolSchema)]
#[serde(rename_all = "snake_case")]
pub enum Order {
    /// Newest first.
    Newest,
    /// Best match first.
    MostRelevant,
}

/// A tag with a bounded, patterned name and an optional weight in `[0, 1]`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToolSchema)]
pub struct Tag {
    /// Lowercase words and dashes.
    #[schema(length(min = 1, max = 8), pattern = "^[a-z0-9-]+$")]
    pub name: String,
    /// How much the tag counts.
    #[schema(range(min = 0.0, max = 1.0))]
    pub weight: Option<f64>,
}

/// A search request: strings with lengths and patterns, nested structs, options, bounded
/// vectors, a set (`uniqueItems`), enums, defaults and aliases.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToolSchema)]
#[serde(rename_all = "camelCase")]
pub struct Search {
    /// Words to look for.
    #[serde(alias = "q")]
    #[schema(length(min = 1, max = 40))]
    pub query_text: String,
    /// Results per page.
    #[schema(range(min = 1, max = 50))]
    pub page_size: Option<u8>,
    /// How results are ordered.
    pub order: Option<Order>,
    /// At most four tags.
    #[schema(items(max = 4))]
    #[serde(default)]
    pub tags: Vec<Tag>,
    /// Distinct ids.
    #[serde(default)]
    pub ids: BTreeSet<u16>,
    /// Drafts too.
    #[serde(default)]
    pub include_drafts: bool,
}

/// Integers at their widths' bounds, exclusive ranges and floats.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToolSchema)]
pub struct Numbers {
    /// 8 bits, signed.
    pub tiny: i8,
    /// 64 bits, unsigned.
    pub ubig: u64,
    /// 64 bits, signed, optional.
    pub big: Option<i64>,
    /// `(0, 100]`.
    #[schema(range(exclusive_min = 0, max = 100))]
    pub percent: u32,
    /// `[-273.15, 1e6)`.
    #[schema(range(min = -273.15, exclusive_max = 1e6))]
    pub temperature: f64,
}

/// Shapes: chars, fixed arrays, nested vectors and options.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToolSchema)]
pub struct Shapes {
    /// One character.
    pub initial: char,
    /// A fixed 3x2 grid.
    pub grid: [[u8; 2]; 3],
    /// One to three rows of optional flags.
    #[schema(items(min = 1, max = 3))]
    pub nested: Vec<Vec<Option<bool>>>,
    /// Present, null, or absent.
    pub maybe: Option<Option<u32>>,
    /// Distinct levels.
    pub levels: BTreeSet<Order>,
}

/// The argument types the checks cycle through, in input-byte order.
const TYPES: u8 = 4;

/// Strict parsing plus validation against the oracle. The first byte picks the type.
///
/// Where both decide they agree: text that is not strict JSON is refused as
/// [`ArgumentsError::InvalidJson`]; for JSON values, our validator and the `jsonschema` crate
/// (fed the rendered schema) take the same accept/reject decision, and `parse_arguments`
/// accepts exactly the values both accept.
///
/// # Panics
///
/// When that does not hold, or when the runtime panics.
pub fn check(data: &[u8]) {
    let Some((&pick, raw)) = data.split_first() else { return };
    match pick % TYPES {
        0 => check_type::<Search>(raw, &[("q", "queryText")]),
        1 => check_type::<Numbers>(raw, &[]),
        2 => check_type::<Shapes>(raw, &[]),
        _ => check_type::<Tag>(raw, &[]),
    }
}

/// The one-pass decoder agrees with the ordinary path. The first byte picks the type.
///
/// `decode_checked` may refuse more than the ordinary path, never accept more: whenever it
/// decodes a value, parsing, validating and deserialising the same text gives that value.
///
/// # Panics
///
/// When that does not hold, or when the runtime panics.
pub fn check_one_pass(data: &[u8]) {
    let Some((&pick, raw)) = data.split_first() else { return };
    match pick % TYPES {
        0 => one_pass::<Search>(raw),
        1 => one_pass::<Numbers>(raw),
        2 => one_pass::<Shapes>(raw),
        _ => one_pass::<Tag>(raw),
    }
}

fn oracle<T: ToolSchema>() -> &'static jsonschema::Validator {
    // One validator per type, compiled once per process.
    static VALIDATORS: OnceLock<[jsonschema::Validator; TYPES as usize]> = OnceLock::new();
    let validators = VALIDATORS.get_or_init(|| {
        [Search::SCHEMA, Numbers::SCHEMA, Shapes::SCHEMA, Tag::SCHEMA].map(|schema| {
            jsonschema::draft202012::new(&schema.to_json())
                .unwrap_or_else(|error| panic!("a rendered schema does not compile: {error}"))
        })
    });
    let index = [Search::SCHEMA, Numbers::SCHEMA, Shapes::SCHEMA, Tag::SCHEMA]
        .iter()
        .position(|schema| std::ptr::eq(*schema, T::SCHEMA))
        .unwrap_or_else(|| panic!("no oracle for this type"));
    &validators[index]
}

/// `aliases` are the top-level `#[serde(alias)]` keys and their properties: the schema names
/// only the property, so the oracle sees an alias key renamed (when the property is absent).
fn check_type<T: ToolSchema + DeserializeOwned + std::fmt::Debug>(
    raw: &[u8],
    aliases: &[(&str, &str)],
) {
    let parsed = parse_arguments::<T>(raw);
    let value = match parse_json(raw) {
        Ok(value) => value,
        Err(_) => {
            assert!(
                matches!(parsed, Err(ArgumentsError::InvalidJson(_))),
                "text that is not strict JSON was not refused as invalid JSON: {parsed:?}"
            );
            return;
        }
    };
    let ours = T::SCHEMA.validate(&value);
    let mut renamed = value.clone();
    if let serde_json::Value::Object(map) = &mut renamed {
        for (alias, name) in aliases {
            if !map.contains_key(*name)
                && let Some(given) = map.shift_remove(*alias)
            {
                map.insert((*name).to_owned(), given);
            }
        }
    }
    let theirs = oracle::<T>().is_valid(&renamed);
    assert_eq!(
        ours.is_ok(),
        theirs,
        "our validator ({ours:?}) and jsonschema ({theirs}) disagree on {value}"
    );
    match (&parsed, theirs) {
        (Ok(_), true) | (Err(ArgumentsError::Validation(_)), false) => {}
        _ => panic!(
            "parse_arguments gave {parsed:?} for {value}, which the oracle finds valid: {theirs}"
        ),
    }
    if let Err(ArgumentsError::Validation(errors)) = &parsed {
        assert!(!errors.is_empty(), "a refusal without errors");
        for error in errors.iter() {
            assert!(error.pointer().len() <= 4096, "unbounded pointer {:?}", error.pointer());
        }
    }
}

fn one_pass<T: ToolSchema + DeserializeOwned + Serialize + PartialEq + std::fmt::Debug>(
    raw: &[u8],
) {
    let Some(fast) = decode_checked::<T>(raw) else { return };
    let value = parse_json(raw)
        .unwrap_or_else(|error| panic!("one pass decoded text the strict parser refuses: {error}"));
    if let Err(errors) = T::SCHEMA.validate(&value) {
        panic!("one pass decoded {value}, which fails validation: {errors}");
    }
    let ordinary: T = serde_json::from_value(value.clone()).unwrap_or_else(|error| {
        panic!("one pass decoded {value}, which does not deserialise: {error}")
    });
    assert_eq!(fast, ordinary, "one pass and the ordinary path decode {value} differently");
    let through_runner = parse_arguments::<T>(raw)
        .unwrap_or_else(|error| panic!("parse_arguments refuses what one pass decoded: {error}"));
    assert_eq!(fast, through_runner);
    let back = serde_json::to_value(&fast).unwrap_or_else(|error| panic!("{error}"));
    assert!(
        oracle::<T>().is_valid(&back),
        "the decoded value serialises outside its schema: {back}"
    );
}
