//! What validation reports: every error at once, each at the right JSON pointer with the broken
//! constraint, in messages that never repeat the value; and what the strict parse refuses before
//! validation starts (duplicate keys, deep nesting, invalid UTF-8, non-finite numbers, trailing
//! input).

// The types exist for their schemas; not every field is read back.
#![allow(dead_code)]

use std::collections::BTreeSet;

use serde_json::{Value, json};
use tool_runtime::prelude::*;
use tool_runtime::schema::{
    ArgumentsError, Constraint, ValidationErrors, parse_arguments, parse_json,
};

#[derive(Debug, Deserialize, ToolSchema)]
struct Address {
    #[schema(length(min = 1, max = 10))]
    city: String,
    zip: Option<u32>,
}

#[derive(Debug, PartialEq, Deserialize, ToolSchema)]
#[serde(rename_all = "snake_case")]
enum Color {
    Red,
    DarkBlue,
}

#[derive(Debug, Deserialize, ToolSchema)]
struct Profile {
    #[schema(length(min = 2, max = 8), pattern = "^[a-z]+$")]
    name: String,
    #[schema(range(min = 18, max = 130))]
    age: u8,
    #[schema(range(exclusive_min = 0.0, max = 5.0))]
    rating: f64,
    color: Color,
    #[schema(items(min = 1, max = 2))]
    addresses: Vec<Address>,
    tags: BTreeSet<String>,
    #[serde(rename = "a/b")]
    slash: Option<bool>,
    #[serde(rename = "m~n")]
    tilde: Option<bool>,
    nick: Option<String>,
}

fn valid_profile() -> Value {
    json!({
        "name": "ada",
        "age": 36,
        "rating": 4.5,
        "color": "dark_blue",
        "addresses": [{"city": "London"}],
        "tags": ["math"],
    })
}

fn errors_of<T: ToolSchema>(value: &Value) -> ValidationErrors {
    T::SCHEMA.validate(value).expect_err("the value breaks the schema")
}

fn summary(errors: &ValidationErrors) -> Vec<(String, Constraint)> {
    errors.iter().map(|error| (error.pointer().to_owned(), error.constraint())).collect()
}

fn at(pointer: &str, constraint: Constraint) -> (String, Constraint) {
    (pointer.to_owned(), constraint)
}

#[test]
fn a_valid_value_passes_and_deserialises() {
    let value = valid_profile();
    assert!(Profile::SCHEMA.validate(&value).is_ok());
    let profile: Profile = parse_arguments(value.to_string().as_bytes()).unwrap();
    assert_eq!(profile.color, Color::DarkBlue);
    assert_eq!((profile.slash, profile.tilde, profile.nick), (None, None, None));
}

#[test]
fn every_error_is_collected_in_document_order() {
    let value = json!({
        "name": "A",
        "age": 12,
        "rating": 0,
        "color": "blue",
        "addresses": [{"city": "", "zip": -1, "street": "x"}, {"zip": 1.5}, 7],
        "tags": ["x", "y", "x"],
        "a/b": "yes",
        "m~n": null,
        "nick": 5,
        "x/y~z": true,
    });
    let errors = errors_of::<Profile>(&value);
    assert_eq!(
        summary(&errors),
        [
            at("/name", Constraint::MinLength(2)),
            at("/name", Constraint::Pattern("^[a-z]+$")),
            at("/age", Constraint::Minimum(18.0)),
            at("/rating", Constraint::ExclusiveMinimum(0.0)),
            at("/color", Constraint::Enum(&["red", "dark_blue"])),
            at("/addresses", Constraint::MaxItems(2)),
            at("/addresses/0/city", Constraint::MinLength(1)),
            at("/addresses/0/zip", Constraint::Minimum(0.0)),
            at("/addresses/0/street", Constraint::AdditionalProperty),
            at("/addresses/1/city", Constraint::Required),
            at("/addresses/1/zip", Constraint::Type { expected: "integer or null" }),
            at("/addresses/2", Constraint::Type { expected: "object" }),
            at("/tags", Constraint::UniqueItems),
            at("/a~1b", Constraint::Type { expected: "boolean or null" }),
            at("/nick", Constraint::Type { expected: "string or null" }),
            at("/x~1y~0z", Constraint::AdditionalProperty),
        ]
    );
    assert_eq!(errors.len(), 16);

    // parse_arguments reports the very same list.
    let Err(ArgumentsError::Validation(parsed)) =
        parse_arguments::<Profile>(value.to_string().as_bytes())
    else {
        panic!("expected validation errors");
    };
    assert_eq!(parsed, errors);
}

#[test]
fn pointers_resolve_to_the_offending_value() {
    let value = json!({
        "name": "TOO-LONG-NAME",
        "age": 200,
        "rating": 5.5,
        "color": 1,
        "addresses": [{"city": "Paris"}, {"city": "an overly long city"}],
        "tags": [],
        "a/b": 1,
        "m~n": "no",
        "~/": 0,
    });
    let errors = errors_of::<Profile>(&value);
    for error in &errors {
        let target = value.pointer(error.pointer());
        assert!(target.is_some(), "{} does not resolve", error.pointer());
    }
    let pointers: Vec<&str> = errors.iter().map(|error| error.pointer()).collect();
    assert_eq!(
        pointers,
        [
            "/name",
            "/name",
            "/age",
            "/rating",
            "/color",
            "/addresses/1/city",
            "/a~1b",
            "/m~0n",
            "/~0~1"
        ]
    );
}

#[test]
fn a_missing_property_points_where_it_belongs() {
    let mut value = valid_profile();
    value["addresses"][0].as_object_mut().unwrap().remove("city");
    value.as_object_mut().unwrap().remove("age");
    let errors = errors_of::<Profile>(&value);
    assert_eq!(
        summary(&errors),
        [at("/age", Constraint::Required), at("/addresses/0/city", Constraint::Required)]
    );
    assert_eq!(errors.iter().next().unwrap().message(), "missing required property");
}

#[test]
fn an_unknown_key_reaches_the_pointer_escaped_and_cut() {
    let mut value = valid_profile();
    let long = format!("\u{1b}[31m{}", "k".repeat(500));
    value.as_object_mut().unwrap().insert(long, json!(1));
    let errors = errors_of::<Profile>(&value);
    let pointer = errors.iter().next().unwrap().pointer().to_owned();
    assert_eq!(pointer, format!("/\\u{{1b}}[31m{}...", "k".repeat(59)));
    assert!(!errors.to_string().contains('\u{1b}'), "{errors}");
}

#[test]
fn the_whole_document_is_the_empty_pointer() {
    let errors = errors_of::<Profile>(&json!([1, 2]));
    assert_eq!(summary(&errors), [at("", Constraint::Type { expected: "object" })]);
    assert_eq!(errors.to_string(), "/: expected object, got array");
}

#[test]
fn constraints_carry_the_bounds_the_schema_states() {
    #[derive(Deserialize, ToolSchema)]
    struct Bounds {
        #[schema(range(max = 5.0, exclusive_max = 4.5))]
        score: f64,
        #[schema(range(min = -1.5))]
        low: f64,
        #[schema(length(max = 3))]
        code: String,
        #[schema(items(min = 2))]
        pair: Vec<bool>,
        small: i8,
    }
    let value = json!({"score": 4.5, "low": -2, "code": "abcd", "pair": [true], "small": -129});
    assert_eq!(
        summary(&errors_of::<Bounds>(&value)),
        [
            at("/score", Constraint::ExclusiveMaximum(4.5)),
            at("/low", Constraint::Minimum(-1.5)),
            at("/code", Constraint::MaxLength(3)),
            at("/pair", Constraint::MinItems(2)),
            at("/small", Constraint::Minimum(-128.0)),
        ]
    );
    let value = json!({"score": 6, "low": 0, "code": "", "pair": [true, false], "small": 128});
    assert_eq!(
        summary(&errors_of::<Bounds>(&value)),
        [
            at("/score", Constraint::Maximum(5.0)),
            at("/score", Constraint::ExclusiveMaximum(4.5)),
            at("/small", Constraint::Maximum(127.0)),
        ]
    );
}

#[test]
fn lengths_count_characters_not_bytes() {
    #[derive(Deserialize, ToolSchema)]
    struct Short {
        #[schema(length(min = 2, max = 3))]
        text: String,
    }
    assert!(Short::SCHEMA.validate(&json!({"text": "日本語"})).is_ok());
    assert!(Short::SCHEMA.validate(&json!({"text": "🦀🦀"})).is_ok());
    let errors = errors_of::<Short>(&json!({"text": "🦀🦀🦀🦀"}));
    assert_eq!(errors.iter().next().unwrap().message(), "expected at most 3 characters, got 4");
    assert_eq!(
        summary(&errors_of::<Short>(&json!({"text": "é"}))),
        [at("/text", Constraint::MinLength(2))]
    );
}

#[test]
fn patterns_have_their_json_schema_meaning() {
    // `pattern` is ECMA-262: `\d` is [0-9], `\w` is [A-Za-z0-9_], `\s` and `\b` are ECMA's.
    #[derive(Deserialize, ToolSchema)]
    struct Patterns {
        #[schema(pattern = "^\\d{3}$")]
        digits: Option<String>,
        #[schema(pattern = "^\\w+$")]
        word: Option<String>,
        #[schema(pattern = "^a\\sb$")]
        spaced: Option<String>,
        #[schema(pattern = "\\bcat\\b")]
        cat: Option<String>,
        #[schema(pattern = "^[^\\d\\s]+$")]
        no_digits: Option<String>,
        #[schema(pattern = "b")]
        unanchored: Option<String>,
    }
    let accepted = [
        json!({"digits": "123"}),
        json!({"word": "snake_case_42"}),
        json!({"spaced": "a\u{a0}b"}),
        json!({"spaced": "a\u{feff}b"}),
        json!({"cat": "a cat!"}),
        json!({"cat": "écat"}),
        json!({"no_digits": "é٣"}),
        json!({"unanchored": "abc"}),
    ];
    for value in accepted {
        assert!(Patterns::SCHEMA.validate(&value).is_ok(), "{value} should pass");
    }
    let rejected = [
        json!({"digits": "١٢٣"}),
        json!({"digits": "12"}),
        json!({"digits": "123\n"}),
        json!({"word": "héllo"}),
        json!({"spaced": "a\u{85}b"}),
        json!({"cat": "cats"}),
        json!({"no_digits": "a1"}),
        json!({"no_digits": "a b"}),
        json!({"unanchored": "ac"}),
    ];
    for value in rejected {
        let errors = errors_of::<Patterns>(&value);
        assert!(
            matches!(errors.iter().next().unwrap().constraint(), Constraint::Pattern(_)),
            "{value}"
        );
    }
}

const CANARY: &str = "sk-live-CANARY";

fn assert_no_canary(errors: &ValidationErrors) {
    for error in errors {
        assert!(!error.message().contains(CANARY), "message echoes the value: {}", error.message());
    }
    assert!(!errors.to_string().contains(CANARY));
    assert!(!format!("{errors:?}").contains(CANARY));
}

#[test]
fn messages_never_repeat_the_value() {
    let secret = format!("{CANARY}-0123456789abcdef");
    let value = json!({
        "name": secret,
        "age": secret,
        "rating": secret,
        "color": secret,
        "addresses": [{"city": secret, "zip": secret}, secret],
        "tags": [secret, secret],
        "a/b": secret,
        "nick": [secret],
        "note": secret,
    });
    let errors = errors_of::<Profile>(&value);
    assert_eq!(errors.len(), 12);
    assert_no_canary(&errors);

    let Err(error) = parse_arguments::<Profile>(value.to_string().as_bytes()) else {
        panic!("expected an error");
    };
    assert!(!error.to_string().contains(CANARY));

    // Nor do parse errors repeat the input around the fault.
    let raw = [
        format!(r#"{{"name": {CANARY}}}"#),
        format!(r#"{{"name": "{CANARY}" "#),
        format!(r#"{{"name": "{CANARY}"}} {CANARY}"#),
        format!(r#"{{"name": "{CANARY}\q"}}"#),
        format!(r#"{{"age": 1{CANARY}}}"#),
    ];
    for raw in raw {
        let error = parse_arguments::<Profile>(raw.as_bytes()).unwrap_err();
        assert!(matches!(error, ArgumentsError::InvalidJson(_)), "{raw}");
        assert!(!error.to_string().contains(CANARY), "{error}");
    }
}

#[test]
fn a_duplicate_key_cannot_smuggle_a_value() {
    let error = parse_json(br#"{"a": 1, "a": 2}"#).unwrap_err();
    assert!(error.to_string().starts_with("duplicate key `a`"), "{error}");

    // The validated first `age` must not hide an invalid second one, nor the reverse, at any
    // depth, nor behind a JSON escape that spells the same key.
    let smuggled: [&[u8]; 5] = [
        br#"{"name": "ada", "age": 36, "age": 7, "rating": 1, "color": "red", "addresses": [{"city": "a"}], "tags": []}"#,
        br#"{"name": "ada", "age": 7, "age": 36, "rating": 1, "color": "red", "addresses": [{"city": "a"}], "tags": []}"#,
        br#"{"name": "ada", "age": 36, "rating": 1, "color": "red", "addresses": [{"city": "a", "city": ""}], "tags": []}"#,
        br#"{"name": "ada", "age": 36, "\u0061ge": 36, "rating": 1, "color": "red", "addresses": [{"city": "a"}], "tags": []}"#,
        br#"{"name": "ada", "age": 36, "rating": 1, "color": "red", "addresses": [{"city": "a"}], "tags": [], "nick": "x", "nick": "x"}"#,
    ];
    for raw in smuggled {
        let error = parse_arguments::<Profile>(raw).unwrap_err();
        assert!(
            matches!(&error, ArgumentsError::InvalidJson(json) if json.to_string().contains("duplicate key")),
            "{error}"
        );
    }
}

#[test]
fn deep_nesting_is_an_error_not_a_stack_overflow() {
    const DEPTH: usize = 100_000;
    let arrays = format!("{}{}", "[".repeat(DEPTH), "]".repeat(DEPTH));
    let objects = format!("{}1{}", r#"{"a":"#.repeat(DEPTH), "}".repeat(DEPTH));
    let inside = format!(r#"{{"name": {}}}"#, arrays);
    for raw in [&arrays, &objects, &inside] {
        assert!(parse_json(raw.as_bytes()).is_err());
        let error = parse_arguments::<Profile>(raw.as_bytes()).unwrap_err();
        assert!(matches!(error, ArgumentsError::InvalidJson(_)));
        assert!(error.to_string().contains("recursion limit"), "{error}");
    }
    // The limit is serde_json's: 127 levels are fine, 128 are not.
    let nested = |depth: usize| format!("{}{}", "[".repeat(depth), "]".repeat(depth));
    assert!(parse_json(nested(127).as_bytes()).is_ok());
    assert!(parse_json(nested(128).as_bytes()).is_err());
}

#[test]
fn invalid_utf8_is_refused() {
    let raw: [&[u8]; 3] = [b"{\"name\": \"\xff\"}", b"{\"\xc3\x28\": 1}", b"\"\xed\xa0\x80\""];
    for raw in raw {
        assert!(parse_json(raw).is_err());
        assert!(matches!(parse_arguments::<Profile>(raw), Err(ArgumentsError::InvalidJson(_))));
    }
    // A lone surrogate escape is not a Unicode scalar value either.
    assert!(parse_json(br#""\ud800""#).is_err());
    assert!(parse_json(r#""\u00e9 é""#.as_bytes()).is_ok());
}

#[test]
fn non_finite_numbers_are_refused() {
    for literal in ["NaN", "Infinity", "-Infinity", "nan", "inf", "1e400", "-1e400"] {
        let raw = format!(r#"{{"rating": {literal}}}"#);
        assert!(parse_json(raw.as_bytes()).is_err(), "{literal}");
        assert!(matches!(
            parse_arguments::<Profile>(raw.as_bytes()),
            Err(ArgumentsError::InvalidJson(_))
        ));
    }
}

#[test]
fn trailing_input_is_refused() {
    for raw in [r#"{"a": 1} x"#, "{}{}", "{} ,", "[1] 2", "1 2", "{}\0"] {
        assert!(parse_json(raw.as_bytes()).is_err(), "{raw:?}");
    }
    assert!(parse_json(b"  {}  \n\t").is_ok());
    assert!(parse_json(b"").is_err());
}

#[derive(Debug, Deserialize, ToolSchema)]
struct Counts {
    count: u8,
    offset: i64,
    total: u64,
    delta: Option<i32>,
}

#[test]
fn integral_floats_are_integers() {
    let counts: Counts =
        parse_arguments(br#"{"count": 3.0, "offset": -2e0, "total": 1e3, "delta": -0.0}"#).unwrap();
    assert_eq!((counts.count, counts.offset, counts.total, counts.delta), (3, -2, 1000, Some(0)));

    let errors =
        errors_of::<Counts>(&json!({"count": 3.5, "offset": 1e-1, "total": 2, "delta": 0.5}));
    assert_eq!(
        summary(&errors),
        [
            at("/count", Constraint::Type { expected: "integer" }),
            at("/offset", Constraint::Type { expected: "integer" }),
            at("/delta", Constraint::Type { expected: "integer or null" }),
        ]
    );
    assert_eq!(errors.iter().next().unwrap().message(), "expected integer, got number");
}

#[derive(Debug, Deserialize, ToolSchema)]
struct Wide {
    u: u64,
    i: i64,
    uu: u128,
    ii: i128,
}

fn wide(u: &str, i: &str, uu: &str, ii: &str) -> Result<Wide, ArgumentsError> {
    parse_arguments(format!(r#"{{"u": {u}, "i": {i}, "uu": {uu}, "ii": {ii}}}"#).as_bytes())
}

#[test]
fn sixty_four_bit_boundaries_are_exact() {
    let max = wide(
        "18446744073709551615",
        "-9223372036854775808",
        "18446744073709551615",
        "-9223372036854775808",
    )
    .unwrap();
    assert_eq!(
        (max.u, max.i, max.uu, max.ii),
        (u64::MAX, i64::MIN, u128::from(u64::MAX), i128::from(i64::MIN))
    );
    let other = wide("0", "9223372036854775807", "0", "18446744073709551615").unwrap();
    assert_eq!((other.i, other.ii), (i64::MAX, i128::from(u64::MAX)));
    // -2^63 written as a float is still exactly i64::MIN.
    assert_eq!(wide("0", "-9223372036854775808.0", "0", "0").unwrap().i, i64::MIN);

    let refused = |u: &str, i: &str, uu: &str, ii: &str| {
        let Err(ArgumentsError::Validation(errors)) = wide(u, i, uu, ii) else {
            panic!("expected validation errors for {u} {i} {uu} {ii}");
        };
        summary(&errors)
    };
    #[allow(clippy::cast_precision_loss)]
    let (u64_max, i64_min, i64_max) = (u64::MAX as f64, i64::MIN as f64, i64::MAX as f64);
    // One past each bound, written as integers and as the floats they round to (2^64, 2^63).
    assert_eq!(
        refused("18446744073709551616", "9223372036854775808", "18446744073709551616", "-1e19"),
        [
            at("/u", Constraint::Maximum(u64_max)),
            at("/i", Constraint::Maximum(i64_max)),
            at("/uu", Constraint::Maximum(u64_max)),
            at("/ii", Constraint::Minimum(i64_min)),
        ]
    );
    assert_eq!(
        refused("1.8446744073709552e19", "9.223372036854775807e18", "-1", "1.8446744073709552e19"),
        [
            at("/u", Constraint::Maximum(u64_max)),
            at("/i", Constraint::Maximum(i64_max)),
            at("/uu", Constraint::Minimum(0.0)),
            at("/ii", Constraint::Maximum(u64_max)),
        ]
    );
    assert_eq!(
        refused("-1", "-9.3e18", "0", "0"),
        [at("/u", Constraint::Minimum(0.0)), at("/i", Constraint::Minimum(i64_min))]
    );
}

#[test]
fn past_64_errors_the_rest_are_counted() {
    let value = Value::Array(vec![json!("x"); 100]);
    let errors = errors_of::<Vec<u8>>(&value);
    assert_eq!(errors.len(), 100);
    assert!(!errors.is_empty());
    assert_eq!(errors.iter().count(), 64);
    assert_eq!(errors.iter().last().unwrap().pointer(), "/63");
    assert!(errors.to_string().ends_with("/63: expected integer, got string; and 36 more"));

    // Exactly 64: nothing omitted.
    let errors = errors_of::<Vec<u8>>(&Value::Array(vec![json!(-1); 64]));
    assert_eq!((errors.len(), errors.iter().count()), (64, 64));
    assert!(!errors.to_string().contains("more"));
}

/// A type whose schema is written by hand: its validator is the walk over that schema.
#[derive(Debug, Deserialize)]
struct Percent(u8);

impl ToolSchema for Percent {
    const SCHEMA: &'static tool_runtime::schema::Schema =
        &tool_runtime::schema::Schema::integer(Some(0), Some(100));
}

/// A generic struct, a boxed field, a fixed-size array, a hand-written field type and an
/// optional nested struct: each field takes its own generated (or default) validator.
#[derive(Debug, Deserialize, ToolSchema)]
struct Page<T> {
    #[schema(items(max = 2))]
    entries: Vec<T>,
    #[serde(alias = "next")]
    cursor: Option<Box<u32>>,
    corner: [u8; 2],
    done: Percent,
    home: Option<Address>,
}

/// The validator `#[derive(ToolSchema)]` generates (`validate_as`, what the runner calls)
/// reports exactly what the walk over the schema tree reports: the same errors, pointers and
/// messages, in the same order, for valid and invalid values alike.
#[test]
fn generated_validators_report_what_the_walk_reports() {
    use tool_runtime::schema::validate_as;

    let cases = [
        json!({"entries": [{"city": "Oslo"}], "corner": [1, 2], "done": 50}),
        json!({"entries": [], "next": 2, "corner": [1, 2], "done": 100, "home": null}),
        json!({"entries": [{"city": ""}, {"zip": -1}, {"city": "x"}], "corner": [1], "done": 101}),
        json!({"entries": "no", "cursor": "3", "corner": [1, 300], "done": 2.0, "home": {"city": 7}}),
        json!({"cursor": 1, "next": 2, "corner": [0, 0], "done": 0, "extra": true}),
        json!({"home": {"city": "Rome", "zip": 1.5, "x": 1}, "corner": null}),
        json!([]),
        json!(null),
    ];
    for value in &cases {
        let walked = <Page<Address> as ToolSchema>::SCHEMA.validate(value);
        assert_eq!(validate_as::<Page<Address>>(value), walked, "on {value}");
    }
    let errors = validate_as::<Page<Address>>(&cases[2]).unwrap_err();
    let pointers: Vec<&str> = errors.iter().map(|error| error.pointer()).collect();
    assert_eq!(
        pointers,
        ["/entries", "/entries/0/city", "/entries/1/city", "/entries/1/zip", "/corner", "/done"]
    );
    let errors = validate_as::<Page<Address>>(&cases[4]).unwrap_err();
    let constraints: Vec<Constraint> = errors.iter().map(|error| error.constraint()).collect();
    assert_eq!(
        constraints,
        [
            Constraint::Required,
            Constraint::GivenTwice { property: "cursor" },
            Constraint::AdditionalProperty,
        ]
    );
}
