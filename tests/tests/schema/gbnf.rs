//! GBNF grammars for calls to tools: the grammar of the example tools and of
//! a tool using every kind of schema node is pinned by snapshots, and a property test checks
//! that every call whose arguments satisfy the schema, written as `serde_json` writes it
//! (compact or pretty), matches the grammar, while calls with an unknown or missing argument,
//! another tool's name or trailing text do not. The matcher is the recogniser in
//! `gbnf_support`; `gbnf_oracle` checks the same grammars with implementations written
//! elsewhere.

use crate::gbnf_support::{Gbnf, PlanDelivery, call, specs, writings, wrong_calls};
use crate::schema_values::{Integers, valid};
use examples::tickets::{CloseTicket, CreateTicket};
use examples::time::GetCurrentTime;
use proptest::test_runner::{Config, TestRunner};
use tool_runtime::gbnf::{Grammar, GrammarError, Unchecked};
use tool_runtime::prelude::*;
use tool_runtime::schema::Schema;
use tool_runtime::spec::ToolSpec;

#[test]
fn the_grammar_of_each_tool_is_pinned() {
    for spec in specs() {
        let grammar = Grammar::for_tool(spec).unwrap();
        Gbnf::parse(grammar.as_str()).unwrap_or_else(|error| panic!("{}: {error}", spec.name()));
        insta::assert_snapshot!(spec.name().to_owned(), grammar.as_str());
    }
}

#[test]
fn a_set_of_tools_is_one_alternation() {
    let grammar = Grammar::for_tools(&specs()).unwrap();
    insta::assert_snapshot!("all_tools", grammar.as_str());
    let first = grammar.as_str().lines().next().unwrap();
    assert_eq!(
        first,
        r#"root ::= "{" ws "\"name\"" ws ":" ws ( core-get-current-time-call | docs-search-call | tickets-create-ticket-call | tickets-close-ticket-call | demo-plan-delivery-call ) ws "}""#
    );
    let parsed = Gbnf::parse(grammar.as_str()).unwrap();
    for spec in specs() {
        let schema = spec.input_schema().as_static().unwrap();
        let mut runner =
            TestRunner::new(Config { cases: 8, failure_persistence: None, ..Config::default() });
        let arguments = proptest::strategy::ValueTree::current(
            &proptest::strategy::Strategy::new_tree(&valid(schema, Integers::Digits), &mut runner)
                .unwrap(),
        );
        assert!(parsed.accepts(&call(spec.name(), &arguments).to_string()), "{}", spec.name());
    }
}

#[test]
fn what_the_grammar_leaves_to_the_validator_is_listed() {
    let unchecked = |spec: &ToolSpec| Grammar::for_tool(spec).unwrap().unchecked().to_vec();
    assert_eq!(
        unchecked(GetCurrentTime::spec()),
        [Unchecked::Pattern { path: "core__get_current_time/timezone".into() }]
    );
    assert_eq!(
        unchecked(CreateTicket::spec()),
        [
            Unchecked::Length { path: "tickets__create_ticket/body".into() },
            Unchecked::Pattern { path: "tickets__create_ticket/labels[]".into() },
        ]
    );
    assert_eq!(
        unchecked(CloseTicket::spec()),
        [Unchecked::IntegerRange { path: "tickets__close_ticket/number".into() }]
    );
    assert_eq!(
        unchecked(PlanDelivery::spec()),
        [
            Unchecked::IntegerRange { path: "demo__plan_delivery/shift".into() },
            Unchecked::NumberRange { path: "demo__plan_delivery/price".into() },
            Unchecked::IntegerRange { path: "demo__plan_delivery/stops[]/floor".into() },
            Unchecked::IntegerRange { path: "demo__plan_delivery/window/from".into() },
            Unchecked::IntegerRange { path: "demo__plan_delivery/window/to".into() },
            Unchecked::UniqueItems { path: "demo__plan_delivery/tags".into() },
            Unchecked::IntegerRange { path: "demo__plan_delivery/parcels".into() },
            Unchecked::IntegerRange { path: "demo__plan_delivery/slots[]".into() },
        ]
    );
}

#[test]
fn every_valid_call_matches_and_wrong_ones_do_not() {
    let mut runner =
        TestRunner::new(Config { cases: 64, failure_persistence: None, ..Config::default() });
    for spec in specs() {
        let schema = spec.input_schema().as_static().unwrap();
        let grammar = Grammar::for_tool(spec).unwrap();
        let parsed = Gbnf::parse(grammar.as_str()).unwrap();
        runner
            .run(&valid(schema, Integers::Digits), |arguments| {
                for text in writings(&call(spec.name(), &arguments)) {
                    proptest::prop_assert!(parsed.accepts(&text), "{} refuses {text}", spec.name());
                }
                for text in wrong_calls(spec.name(), &arguments, schema) {
                    proptest::prop_assert!(
                        !parsed.accepts(&text),
                        "{} accepts {text}",
                        spec.name()
                    );
                }
                Ok(())
            })
            .unwrap();
    }
}

#[test]
fn what_the_grammar_refuses_is_what_the_schema_refuses() {
    let grammar = Gbnf::parse(Grammar::for_tool(PlanDelivery::spec()).unwrap().as_str()).unwrap();
    let base = serde_json::json!({
        "city": "Oslo", "express": false, "shift": 0, "price": 1.5, "mode": "van",
        "stops": [{"street": "Main", "floor": null}], "tags": [], "slots": [1, 2]
    });
    let with = |key: &str, value: serde_json::Value| {
        let mut arguments = base.clone();
        arguments[key] = value;
        call("demo__plan_delivery", &arguments).to_string()
    };
    assert!(grammar.accepts(&call("demo__plan_delivery", &base).to_string()));
    for (key, value) in [
        ("city", serde_json::json!("O")),              // minLength 2
        ("city", serde_json::json!("Oslo-Oslo-Oslo")), // maxLength 12
        ("city", serde_json::json!(null)),             // not nullable
        ("express", serde_json::json!("yes")),         // a boolean
        ("shift", serde_json::json!(100)),             // two digits, where the bounds have one
        ("shift", serde_json::json!(1.5)),             // an integer
        ("price", serde_json::json!(-1)),              // minimum 0: no sign
        ("mode", serde_json::json!("bike")),           // not in the enum
        ("stops", serde_json::json!([])),              // minItems 1
        ("slots", serde_json::json!([1, 2, 3])),       // exactly two
        ("window", serde_json::json!({"from": 1})),    // `to` is required
    ] {
        assert!(!grammar.accepts(&with(key, value.clone())), "{key} = {value}");
    }
    // Whitespace is bounded: one space, or a newline and up to 20 spaces or tabs.
    let spaced =
        |ws: &str| format!("{{{ws}\"name\":\"demo__plan_delivery\",\"arguments\":{}}}", base);
    assert!(grammar.accepts(&spaced(" ")));
    assert!(grammar.accepts(&spaced(&format!("\n{}", " ".repeat(20)))));
    assert!(!grammar.accepts(&spaced("  ")));
    assert!(!grammar.accepts(&spaced(&format!("\n{}", " ".repeat(21)))));
}

#[test]
fn escapes_count_as_one_character_and_lone_surrogates_never_match() {
    static CHAR: &Schema = &Schema::string().with_length(Some(1), Some(1));
    let grammar = Gbnf::parse(Grammar::for_schema(CHAR).unwrap().as_str()).unwrap();
    for text in [r#""a""#, r#""\n""#, r#""\u00e9""#, r#""\ud83e\udd80""#, r#""🦀""#, r#""\"""#] {
        assert!(grammar.accepts(text), "{text}");
    }
    for text in [r#""""#, r#""ab""#, r#""\ud83e""#, r#""\udd80""#, "\"\n\"", r#""\x""#] {
        assert!(!grammar.accepts(text), "{text}");
    }
}

#[test]
fn what_no_grammar_can_say_is_an_error() {
    static EMPTY: &Schema = &Schema::string_enum(&[]);
    static SHORT: &Schema = &Schema::string().with_length(Some(3), Some(2));
    assert_eq!(
        Grammar::for_schema(EMPTY).unwrap_err(),
        GrammarError::Unsatisfiable { path: String::new(), reason: "its bounds leave no value" }
    );
    assert!(matches!(Grammar::for_schema(SHORT), Err(GrammarError::Unsatisfiable { .. })));
    assert_eq!(Grammar::for_tools(&[]).unwrap_err(), GrammarError::NoTools);
    assert_eq!(
        Grammar::for_tools(&[CloseTicket::spec(), CloseTicket::spec()]).unwrap_err(),
        GrammarError::DuplicateTool { tool: "tickets__close_ticket".into() }
    );
}
