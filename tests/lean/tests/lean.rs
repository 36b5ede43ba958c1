//! A crate of tool definitions with `default-features = false` has all a tool definition
//! needs, and it behaves as with the default features.

use std::time::{Duration, UNIX_EPOCH};

use serde_json::json;
use tool_lean_tests::{FindOrders, Status};
use tool_runtime::prelude::*;
use tool_runtime::runtime::Clock;
use tool_runtime::schema::{ArgumentsError, decode_checked, parse_arguments};

/// Runs a tool's future to its end (a crate of tool definitions brings no runner).
fn block_on<F: Future>(future: F) -> F::Output {
    let runtime = tokio::runtime::Builder::new_current_thread().build().expect("a runtime");
    runtime.block_on(future)
}

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
fn a_tool_runs_with_what_it_declared_and_its_output_keeps_to_its_schema() {
    let at = UNIX_EPOCH + Duration::from_millis(1_700_000_000_000);
    let caps = ToolCapabilities::new().with(Clock::fixed(at));
    let ctx = ToolInvocationContext::new(ContextIds {
        run_id: "run-1",
        actor_id: "user-1",
        tenant_id: "tenant-1",
    });
    let args = parse_arguments::<FindOrders>(br#"{"customer_id": "cus_ab12cd", "limit": 5}"#)
        .expect("valid");
    let output = block_on(args.run(&ctx, &caps)).expect("the tool succeeds");
    let value = serde_json::to_value(&output).expect("serialisable");
    assert_eq!(value["looked_up_ms"], 1_700_000_000_000_i64);
    assert_eq!(value["orders"][1], json!({"id": "ord_2", "total_cents": 2000, "status": "open"}));
    let output_schema = <FindOrders as Tool>::Output::SCHEMA;
    assert!(output_schema.validate(&value).is_ok());
    let spec = FindOrders::spec();
    let declared = spec.output_schema().and_then(|schema| schema.as_static());
    assert_eq!(declared.map(|declared| declared.to_json()), Some(output_schema.to_json()));
    let redacted = spec.redaction().apply(&value);
    assert_eq!(
        redacted,
        json!({"orders": [
            {"id": "ord_1", "total_cents": 1000},
            {"id": "ord_2", "total_cents": 2000},
        ]})
    );
}

#[test]
fn a_tool_without_its_capability_fails_cleanly() {
    let ctx = ToolInvocationContext::new(ContextIds {
        run_id: "run-1",
        actor_id: "user-1",
        tenant_id: "tenant-1",
    });
    let args = parse_arguments::<FindOrders>(br#"{"customer_id": "cus_ab12cd", "limit": 1}"#)
        .expect("valid");
    let error = block_on(args.run(&ctx, &ToolCapabilities::new())).expect_err("no clock");
    assert!(error.message().contains("clock"), "{}", error.message());
}
