//! A crate of tool definitions with `default-features = false` has all a tool definition
//! needs, and it behaves as with the default features.

use serde_json::json;
use tool_lean_tests::{FindOrders, Status};
use tool_runtime::prelude::*;
use tool_runtime::schema::{ArgumentsError, decode_checked, parse_arguments};

#[test]
fn the_spec_is_frozen_at_compile_time() {
    let spec = FindOrders::spec();
    assert_eq!(spec.name(), "shop__find_orders");
    assert_eq!(spec.effect(), ToolEffect::ReadOnly);
    assert!(std::ptr::eq(spec, FindOrders::spec()), "one static spec");
    let rendered = serde_json::to_value(spec).expect("a spec serialises");
    assert_eq!(rendered["name"], "shop__find_orders");
    let input = &rendered["input_schema"];
    assert_eq!(input["additionalProperties"], false);
    assert_eq!(input["properties"]["customer_id"]["pattern"], "^cus_[a-z0-9]{6,12}$");
    assert_eq!(input["properties"]["limit"]["maximum"], 50);
    assert_eq!(input["properties"]["status"]["enum"], json!(["open", "shipped", null]));
    assert_eq!(spec.schema_hash().len(), 64, "a SHA-256 in hex");
}

#[test]
fn valid_arguments_decode_in_one_pass_and_the_ordinary_way_alike() {
    let raw = br#"{"customer_id": "cus_ab12cd", "status": "shipped", "limit": 3}"#;
    let expected =
        FindOrders { customer_id: "cus_ab12cd".into(), status: Some(Status::Shipped), limit: 3 };
    assert_eq!(parse_arguments::<FindOrders>(raw).expect("valid"), expected);
    assert_eq!(decode_checked::<FindOrders>(raw), Some(expected));
}

#[test]
fn invalid_arguments_get_every_error_with_its_pointer() {
    let raw = br#"{"customer_id": "bob", "status": "lost", "limit": 0, "admin": true}"#;
    assert_eq!(decode_checked::<FindOrders>(raw), None);
    let Err(ArgumentsError::Validation(errors)) = parse_arguments::<FindOrders>(raw) else {
        panic!("expected validation errors");
    };
    let mut pointers: Vec<&str> = errors.iter().map(|error| error.pointer()).collect();
    pointers.sort_unstable();
    assert_eq!(pointers, ["/admin", "/customer_id", "/limit", "/status"]);
}

#[test]
fn the_output_schema_and_the_redaction_are_the_ones_declared() {
    // The tool runs only through a runner (none here: `runner::testing_harness` in the
    // workspace's tests runs it); what a definition fixes is checked here.
    let spec = FindOrders::spec();
    let output_schema = <FindOrders as Tool>::Output::SCHEMA;
    let declared = spec.output_schema().and_then(|schema| schema.as_static());
    assert_eq!(declared.map(|declared| declared.to_json()), Some(output_schema.to_json()));
    let output = json!({"orders": [{"id": "ord_1", "total_cents": 1000, "status": "open"}], "looked_up_ms": 7});
    assert!(output_schema.validate(&output).is_ok());
    assert_eq!(
        spec.redaction().apply(&output),
        json!({"orders": [{"id": "ord_1", "total_cents": 1000}]})
    );
    assert_eq!(
        spec.capabilities().iter().map(|capability| capability.name()).collect::<Vec<_>>(),
        ["clock"]
    );
}
