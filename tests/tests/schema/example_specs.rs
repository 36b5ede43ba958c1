//! The frozen spec of every example tool, pinned by a snapshot and backed by behaviour: sample
//! arguments validate and deserialise, the tool runs, its output satisfies the output schema,
//! and redaction keeps exactly the allowlisted fields.

use std::sync::Arc;
use std::time::{Duration, UNIX_EPOCH};

use examples::search::{DocumentIndex, SearchDocs};
use examples::tickets::{CloseTicket, CreateTicket, TicketStore};
use examples::time::GetCurrentTime;
use serde_json::{Value, json};
use tool_runtime::prelude::*;
use tool_runtime::runtime::{Clock, ToolExecResult};
use tool_runtime::schema::{ArgumentsError, parse_arguments};
use tool_runtime::testing::Harness;
use tool_tests::fixtures::{StaticBroker, context};

/// A runner for the example tools: a fixed clock, the sample documents, `store` and a broker
/// that hands out `token`, in a context with the `acme-tracker` connection.
fn harness(store: &TicketStore, token: &'static str) -> Harness {
    Harness::new()
        .capability(Clock::fixed(UNIX_EPOCH + Duration::from_millis(1_795_000_000_000)))
        .capability(DocumentIndex::sample())
        .capability(store.clone())
        .connection_broker(Arc::new(StaticBroker(token)))
        .context(context("run-1", "user-42", "acme").with_connection_id("acme-tracker"))
}

fn store() -> TicketStore {
    TicketStore::new().with_project("acme-tracker", "token-1")
}

/// Runs `args` through a runner (which checks the output against the output schema) and
/// returns the redacted output: what leaves the runner is all a test sees, as any caller.
async fn run<T: Tool + Sync>(args: Value) -> Value {
    let result = harness(&store(), "token-1").exec::<T>(args).await;
    result.value().cloned().unwrap_or_else(|| panic!("the tool succeeds: {result:?}"))
}

fn message(result: &ToolExecResult) -> &str {
    &result.error().expect("the call failed").message
}

/// Whether a dotted redaction path names a property of a rendered schema, through arrays.
fn json_has_path(schema: &Value, path: &str) -> bool {
    path.split('.')
        .try_fold(schema, |mut node, segment| {
            while node.get("items").is_some() {
                node = &node["items"];
            }
            node.get("properties")?.get(segment)
        })
        .is_some()
}

fn assert_spec_invariants(spec: &ToolSpec) {
    let input = spec.input_schema().as_static().unwrap();
    let output = spec.output_schema().and_then(|schema| schema.as_static()).unwrap();
    let rendered = serde_json::to_value(output).unwrap();
    for path in spec.redaction().paths() {
        assert!(json_has_path(&rendered, path), "{path} is a path of the output");
    }
    let json = serde_json::to_value(spec).unwrap();
    let keys: Vec<&str> = json.as_object().unwrap().keys().map(String::as_str).collect();
    assert_eq!(
        keys,
        [
            "name",
            "description",
            "effect",
            "input_schema",
            "output_schema",
            "redaction",
            "requires_connection",
            "capabilities",
            "schema_hash"
        ]
    );
    assert_eq!(json["input_schema"], input.to_json());
    assert_eq!(json["input_schema"]["additionalProperties"], json!(false));
    assert_eq!(spec.schema_hash().len(), 64);
}

#[tokio::test]
async fn get_current_time() {
    let spec = GetCurrentTime::spec();
    insta::assert_json_snapshot!("get_current_time", spec);
    assert_spec_invariants(spec);
    assert_eq!(spec.capabilities().iter().map(|c| c.name()).collect::<Vec<_>>(), ["clock"]);

    let output = run::<GetCurrentTime>(json!({"timezone": "Asia/Tokyo"})).await;
    assert_eq!(output["iso8601"], "2026-11-18T20:06:40+09:00");
    assert_eq!(output["timezone"], "Asia/Tokyo", "every field is allowlisted");
    let output = run::<GetCurrentTime>(json!({})).await;
    assert_eq!(output["timezone"], "UTC");

    let unknown = harness(&store(), "token-1")
        .exec::<GetCurrentTime>(json!({"timezone": "Mars/Olympus"}))
        .await;
    assert!(message(&unknown).contains("unknown timezone"), "{unknown:?}");
    let too_long = json!({"timezone": "x".repeat(65)}).to_string();
    assert!(matches!(
        parse_arguments::<GetCurrentTime>(too_long.as_bytes()),
        Err(ArgumentsError::Validation(_))
    ));
}

#[tokio::test]
async fn search_docs() {
    let spec = SearchDocs::spec();
    insta::assert_json_snapshot!("search_docs", spec);
    assert_spec_invariants(spec);
    let input = serde_json::to_value(spec).unwrap()["input_schema"].clone();
    assert_eq!(input["required"], json!(["query"]), "defaults and options are not required");
    assert_eq!(
        input["properties"]["filters"]["properties"]["kinds"]["items"]["enum"],
        json!(["tutorial", "how_to", "reference", "explanation"])
    );

    let seen = run::<SearchDocs>(json!({
        "query": "schema",
        "filters": {"tags": ["schemas"], "updated_since_year": 2025},
        "order": "newest"
    }))
    .await;
    assert_eq!(seen["total"], 1);
    assert_eq!(seen["hits"][0]["title"], "Validate tool arguments");
    assert!(seen["hits"][0]["url"].is_string());
    // The output schema has the owner's address; redaction keeps it in the runner.
    assert!(serde_json::to_string(spec.output_schema().unwrap()).unwrap().contains("owner_email"));
    assert_eq!(seen["hits"][0].get("owner_email"), None, "not allowlisted, so stripped");

    let output = run::<SearchDocs>(json!({"query": "tool", "limit": 1})).await;
    assert_eq!(output["hits"].as_array().unwrap().len(), 1);
    assert_eq!(output["total"], 5, "every sample document mentions tools");
}

#[tokio::test]
async fn create_ticket() {
    let spec = CreateTicket::spec();
    insta::assert_json_snapshot!("create_ticket", spec);
    assert_spec_invariants(spec);
    assert!(spec.requires_connection());
    assert_eq!(spec.effect(), ToolEffect::StateChange);

    let store = store();
    let ticket = harness(&store, "token-1")
        .exec::<CreateTicket>(json!({"title": "Broken link", "body": "", "priority": "low", "labels": ["docs", "good-first-issue"]}))
        .await;
    let seen = ticket.value().expect("created");
    assert_eq!(seen["number"], 1);
    let stored = store.tickets("acme-tracker");
    assert_eq!(stored.len(), 1);
    assert_eq!(stored[0].labels, ["docs", "good-first-issue"]);
    assert_eq!(seen.get("created_by"), None);

    let Err(ArgumentsError::Validation(errors)) = parse_arguments::<CreateTicket>(
        br#"{"title": "ok title", "body": "", "priority": "asap", "labels": ["Bad Label"]}"#,
    ) else {
        panic!("expected validation errors")
    };
    let pointers: Vec<&str> = errors.iter().map(|error| error.pointer()).collect();
    assert_eq!(pointers, ["/priority", "/labels/0"]);

    let refused = harness(&store, "stolen")
        .exec::<CreateTicket>(json!({"title": "abc", "body": "", "priority": "low"}))
        .await;
    assert_eq!(message(&refused), "the tracker refused the connection's credential");
}

#[tokio::test]
async fn close_ticket() {
    let spec = CloseTicket::spec();
    insta::assert_json_snapshot!("close_ticket", spec);
    assert_spec_invariants(spec);
    let store = store();
    let harness = harness(&store, "token-1");
    let created =
        harness.exec::<CreateTicket>(json!({"title": "Dup", "body": "", "priority": "low"})).await;
    assert!(created.is_ok(), "{created:?}");
    let closed = harness.exec::<CloseTicket>(json!({"number": 1, "reason": "duplicate"})).await;
    assert_eq!(closed.value(), Some(&json!({"number": 1, "status": "closed"})), "all allowlisted");
    assert!(store.tickets("acme-tracker")[0].closed);
    let missing = harness.exec::<CloseTicket>(json!({"number": 9, "reason": "done"})).await;
    assert_eq!(message(&missing), "there is no ticket 9");
    assert!(parse_arguments::<CloseTicket>(br#"{"number": 0, "reason": "done"}"#).is_err());
}

#[test]
fn specs_are_static_and_distinct() {
    let [a, b, c, d] = examples::specs();
    assert!(std::ptr::eq(a, GetCurrentTime::spec()));
    assert!(std::ptr::eq(b, SearchDocs::spec()));
    assert!(std::ptr::eq(c, CreateTicket::spec()));
    assert!(std::ptr::eq(d, CloseTicket::spec()));
    let mut hashes = vec![a.schema_hash(), b.schema_hash(), c.schema_hash(), d.schema_hash()];
    hashes.sort_unstable();
    hashes.dedup();
    assert_eq!(hashes.len(), 4, "every schema hash differs");
}
