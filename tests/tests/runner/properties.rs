//! Properties of the runner that must hold for every input: redaction is never bypassed. (The
//! canary and telemetry test is in the `telemetry` binary's `spans`; load, with every call id
//! paired, in the `load` binary.)

use std::sync::Arc;

use proptest::prelude::*;
use serde_json::{Map, Value, json};
use tool_runtime::catalog::ToolCatalog;
use tool_runtime::policy::ToolPolicy;
use tool_runtime::prelude::*;
use tool_runtime::runner::ToolRunner;
use tool_runtime::runtime::{CollectingSink, DynamicTool};
use tool_tests::fixtures::context;

/// Every dotted path in `value` (arrays walked through), to compare against the allowlist.
fn paths(value: &Value, prefix: &str, out: &mut Vec<String>) {
    match value {
        Value::Object(map) => {
            for (key, child) in map {
                let path = if prefix.is_empty() { key.clone() } else { format!("{prefix}.{key}") };
                out.push(path.clone());
                paths(child, &path, out);
            }
        }
        Value::Array(items) => items.iter().for_each(|item| paths(item, prefix, out)),
        _ => {}
    }
}

/// Whether `path` is allowed by `allow`: equal to an entry, below one, or above one (an object
/// on the way to an allowed field).
fn allowed(path: &str, allow: &[&str]) -> bool {
    allow.iter().any(|entry| {
        path == *entry
            || path.starts_with(&format!("{entry}."))
            || entry.starts_with(&format!("{path}."))
    })
}

fn arb_json() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i32>().prop_map(|n| json!(n)),
        "[a-z]{0,6}".prop_map(Value::String),
    ];
    leaf.prop_recursive(4, 40, 5, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            prop::collection::btree_map(
                prop::sample::select(vec!["a", "b", "c", "d", "secret"]),
                inner,
                0..5
            )
            .prop_map(|map| Value::Object(
                map.into_iter().map(|(k, v)| (k.to_owned(), v)).collect()
            )),
        ]
    })
}

fn arb_output() -> impl Strategy<Value = Map<String, Value>> {
    prop::collection::btree_map(
        prop::sample::select(vec!["a", "b", "c", "secret", "token"]),
        arb_json(),
        0..6,
    )
    .prop_map(|map| map.into_iter().map(|(k, v)| (k.to_owned(), v)).collect())
}

const ALLOW: &[&str] = &["a", "b.c", "c.a.b"];

proptest! {
    #![proptest_config(ProptestConfig { cases: 200, ..ProptestConfig::default() })]

    #[test]
    fn no_field_outside_the_allowlist_reaches_a_result_event_or_record(output in arb_output()) {
        let returned = Value::Object(output);
        let handed = returned.clone();
        let tool = DynamicTool::builder("prop__any", "Returns anything.", json!({"type": "object"})).allow_open_schema()
            .effect(ToolEffect::ReadOnly)
            .redact(ALLOW.iter().copied())
            .build(move |_, _, _| {
                let value = handed.clone();
                async move { Ok(value) }
            })
            .unwrap();
        let sink = CollectingSink::new();
        let runner = ToolRunner::builder(ToolCatalog::builder().register_dynamic(tool).build().unwrap())
            .policy(ToolPolicy::from_json(r#"{"allowed_tools": ["prop__any"]}"#).unwrap())
            .event_sink(Arc::new(sink.clone()))
            .build();
        let rt = tokio::runtime::Builder::new_current_thread().enable_time().build().unwrap();
        let result = rt.block_on(runner.exec("prop__any", b"{}", &context("r", "a", "t")));
        let mut seen = Vec::new();
        if let Some(value) = result.value() {
            paths(value, "", &mut seen);
        }
        if let Some(value) = &result.record().result {
            paths(value, "", &mut seen);
        }
        for event in sink.events() {
            paths(&serde_json::to_value(&event).unwrap()["value"], "", &mut seen);
        }
        for path in &seen {
            prop_assert!(allowed(path, ALLOW), "{path} leaked from {returned}");
        }
        // Everything allowed that was there is still there.
        if let Some(a) = returned.get("a") {
            prop_assert_eq!(result.value().and_then(|v| v.get("a")), Some(a));
        }
    }
}

fn arb_awkward_output() -> impl Strategy<Value = Value> {
    let key = prop::sample::select(vec!["a", "b", "a.b", "", "ab"]);
    let leaf = prop_oneof![Just(Value::Null), any::<bool>().prop_map(Value::Bool)];
    let value = leaf.prop_recursive(3, 24, 4, move |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..3).prop_map(Value::Array),
            prop::collection::btree_map(key.clone(), inner, 0..4).prop_map(|map| {
                Value::Object(map.into_iter().map(|(k, v)| (k.to_owned(), v)).collect())
            }),
        ]
    });
    prop::collection::btree_map(prop::sample::select(vec!["a", "b", "a.b", ""]), value, 0..4)
        .prop_map(|map| Value::Object(map.into_iter().map(|(k, v)| (k.to_owned(), v)).collect()))
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]

    /// The runner redacts in place (it owns the output); that must keep exactly what
    /// `Redaction::apply` keeps, for any paths, dotted keys and empty segments included.
    #[test]
    fn the_runner_redacts_exactly_as_redaction_apply(
        output in arb_awkward_output(),
        allow in prop::collection::vec(
            prop::sample::select(vec!["a", "b", "a.b", "a..b", "a.", "", ".a", "b.a.b", "ab"]),
            0..4,
        ),
    ) {
        let expected = tool_runtime::spec::Redaction::new(allow.iter().copied()).apply(&output);
        let handed = output.clone();
        let tool = DynamicTool::builder("prop__any", "Returns anything.", json!({"type": "object"})).allow_open_schema()
            .effect(ToolEffect::ReadOnly)
            .redact(allow.iter().copied())
            .build(move |_, _, _| {
                let value = handed.clone();
                async move { Ok(value) }
            })
            .unwrap();
        let runner = ToolRunner::builder(ToolCatalog::builder().register_dynamic(tool).build().unwrap())
            .policy(ToolPolicy::from_json(r#"{"allowed_tools": ["prop__any"]}"#).unwrap())
            .build();
        let rt = tokio::runtime::Builder::new_current_thread().enable_time().build().unwrap();
        let result = rt.block_on(runner.exec("prop__any", b"{}", &context("r", "a", "t")));
        prop_assert_eq!(result.value(), Some(&expected), "{} with {:?}", output, allow);
    }
}
