//! Properties of the runner that must hold for every input: redaction is never bypassed, a
//! secret handed to the broker never leaves the tool, telemetry carries the GenAI attributes,
//! and under load every call id has exactly one start and one result.

use std::collections::HashMap;
use std::fmt::Write as _;
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use proptest::prelude::*;
use serde_json::{Map, Value, json};
use tool_runtime::catalog::ToolCatalog;
use tool_runtime::policy::ToolPolicy;
use tool_runtime::prelude::*;
use tool_runtime::runner::ToolRunner;
use tool_runtime::runtime::{
    Auth, BrokerError, ChannelSink, CollectingSink, ConnectionBroker, Credential, DynamicTool,
    ToolEvent,
};
use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id, Record};
use tracing::{Event, Subscriber};
use tracing_subscriber::layer::{Context, Layer};
use tracing_subscriber::prelude::*;

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
        let tool = DynamicTool::builder("prop__any", "Returns anything.", json!({"type": "object"}))
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
        let result = rt.block_on(runner.exec("prop__any", b"{}", &ToolInvocationContext::new("r", "a", "t")));
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
        let expected = tool_runtime::spec::Redaction::new(allow.iter().copied()).apply(&output).unwrap();
        let handed = output.clone();
        let tool = DynamicTool::builder("prop__any", "Returns anything.", json!({"type": "object"}))
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
        let result = rt.block_on(runner.exec("prop__any", b"{}", &ToolInvocationContext::new("r", "a", "t")));
        prop_assert_eq!(result.value(), Some(&expected), "{} with {:?}", output, allow);
    }
}

const CANARY: &str = "sk-live-CANARY-91c2";

#[derive(Debug)]
struct Vault;

#[async_trait]
impl ConnectionBroker for Vault {
    async fn credential(
        &self,
        _: &ToolInvocationContext,
        _: &str,
    ) -> Result<Credential, BrokerError> {
        Ok(Credential::new(CANARY))
    }
}

/// Uses its credential, and tries every way to leak it.
#[tool(name = "leak__try", effect = external_side_effect, redact = ["status"], requires_connection, capabilities = [Auth])]
struct TryToLeak {
    mode: u8,
}

#[derive(Serialize, ToolSchema)]
struct Leaked {
    status: String,
    header: String,
}

impl Tool for TryToLeak {
    type Output = Leaked;
    async fn run(
        self,
        ctx: &ToolInvocationContext,
        caps: &ToolCapabilities,
    ) -> Result<Leaked, ToolError> {
        let auth = caps.get::<Auth>()?;
        tracing::info!(auth = ?auth, caps = ?caps, ctx = ?ctx, "inside the tool");
        ctx.report_progress(0.5, None, format!("using {auth:?}"));
        if self.mode == 1 {
            panic!("{auth:?}");
        }
        Ok(Leaked { status: "ok".into(), header: auth.authorization_header() })
    }
}

/// A span's or event's name and its fields as text.
type Line = (String, HashMap<String, String>);

/// Records every span's and event's fields as text.
#[derive(Clone, Default)]
struct Capture(Arc<Mutex<Vec<Line>>>);

struct Fields<'a>(&'a mut HashMap<String, String>);

impl Visit for Fields<'_> {
    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        let mut text = String::new();
        let _ = write!(text, "{value:?}");
        self.0.insert(field.name().to_owned(), text);
    }

    fn record_str(&mut self, field: &Field, value: &str) {
        self.0.insert(field.name().to_owned(), value.to_owned());
    }
}

impl<S: Subscriber> Layer<S> for Capture {
    fn on_new_span(&self, attrs: &Attributes<'_>, _: &Id, _: Context<'_, S>) {
        let mut fields = HashMap::new();
        attrs.record(&mut Fields(&mut fields));
        self.0.lock().unwrap().push((attrs.metadata().name().to_owned(), fields));
    }

    fn on_record(&self, _: &Id, values: &Record<'_>, _: Context<'_, S>) {
        let mut fields = HashMap::new();
        values.record(&mut Fields(&mut fields));
        self.0.lock().unwrap().push(("record".to_owned(), fields));
    }

    fn on_event(&self, event: &Event<'_>, _: Context<'_, S>) {
        let mut fields = HashMap::new();
        event.record(&mut Fields(&mut fields));
        self.0.lock().unwrap().push(("event".to_owned(), fields));
    }
}

#[test]
fn a_canary_secret_never_leaves_the_tool_and_spans_carry_genai_attributes() {
    let capture = Capture::default();
    let subscriber = tracing_subscriber::registry().with(capture.clone());
    let sink = CollectingSink::new();
    let catalog = ToolCatalog::builder()
        .register::<TryToLeak>()
        .connection_broker(Arc::new(Vault))
        .build()
        .unwrap();
    let runner = ToolRunner::builder(catalog)
        .policy(ToolPolicy::from_json(r#"{"allowed_tools": ["leak__try"], "connections": {"allowed_connection_ids": ["c1"]}}"#).unwrap())
        .event_sink(Arc::new(sink.clone()))
        .build();
    let ctx = ToolInvocationContext::new("run-9", "user", "tenant")
        .with_tool_call_id("call_leak")
        .with_connection_id("c1")
        .with_requested_connections(["c1"]);
    let rt = tokio::runtime::Builder::new_current_thread().enable_time().build().unwrap();
    let results = tracing::subscriber::with_default(subscriber, || {
        rt.block_on(async {
            vec![
                runner.exec("leak__try", br#"{"mode": 0}"#, &ctx).await,
                runner.exec("leak__try", br#"{"mode": 1}"#, &ctx).await,
            ]
        })
    });
    assert!(results[0].is_ok());
    assert_eq!(results[0].value(), Some(&json!({"status": "ok"})));
    assert_eq!(results[1].error().map(|e| e.code.as_str()), Some("execution"));

    let mut everything = String::new();
    for result in &results {
        everything.push_str(&serde_json::to_string(result).unwrap());
        everything.push_str(&serde_json::to_string(&result.record()).unwrap());
        everything.push_str(&format!("{result:?}"));
    }
    for event in sink.events() {
        everything.push_str(&serde_json::to_string(&event).unwrap());
    }
    let lines = capture.0.lock().unwrap().clone();
    for (_, fields) in &lines {
        for value in fields.values() {
            everything.push_str(value);
        }
    }
    assert!(everything.contains("inside the tool"), "the tool's own log line was captured");
    assert!(!everything.contains(CANARY), "the canary leaked");

    let span =
        lines.iter().find(|(name, _)| name == "execute_tool").expect("one span per invocation");
    assert_eq!(span.1["gen_ai.operation.name"], "execute_tool");
    assert_eq!(span.1["gen_ai.tool.name"], "leak__try");
    assert_eq!(span.1["gen_ai.tool.call.id"], "call_leak");
    assert_eq!(lines.iter().filter(|(name, _)| name == "execute_tool").count(), 2);
    assert!(lines.iter().any(|(name, fields)| name == "record"
        && fields.get("error.type").map(String::as_str) == Some("execution")));
}

/// Doubles a number.
#[tool(name = "load__double", effect = read_only, redact = ["value"])]
struct Double {
    value: u32,
}

#[derive(Serialize, ToolSchema)]
struct Doubled {
    value: u64,
}

impl Tool for Double {
    type Output = Doubled;
    async fn run(
        self,
        _: &ToolInvocationContext,
        _: &ToolCapabilities,
    ) -> Result<Doubled, ToolError> {
        tokio::task::yield_now().await;
        Ok(Doubled { value: u64::from(self.value) * 2 })
    }
}

#[test]
fn under_load_every_call_has_exactly_one_start_and_one_result() {
    const CALLS: usize = 100_000;
    const CALLERS: usize = 64;
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_time()
        .build()
        .unwrap();
    let (sink, mut events) = ChannelSink::new();
    let runner = ToolRunner::builder(ToolCatalog::builder().register::<Double>().build().unwrap())
        .policy(ToolPolicy::from_json(r#"{"allowed_tools": ["load__double"]}"#).unwrap())
        .event_sink(Arc::new(sink))
        .build();
    let ok = rt.block_on(async {
        let mut callers = Vec::new();
        for caller in 0..CALLERS {
            let runner = runner.clone();
            callers.push(tokio::spawn(async move {
                let mut ok = 0;
                for i in (caller..CALLS).step_by(CALLERS) {
                    let ctx = ToolInvocationContext::new("load", "a", "t")
                        .with_tool_call_id(format!("c{i}"));
                    let raw = format!(r#"{{"value": {i}}}"#);
                    let result = runner.exec("load__double", raw.as_bytes(), &ctx).await;
                    if result.value() == Some(&json!({"value": i * 2})) {
                        ok += 1;
                    }
                }
                ok
            }));
        }
        let mut ok = 0;
        for caller in callers {
            ok += caller.await.unwrap();
        }
        ok
    });
    drop(runner);
    assert_eq!(ok, CALLS);
    let mut starts = vec![0_u8; CALLS];
    let mut results = vec![0_u8; CALLS];
    while let Ok(event) = events.try_recv() {
        let index: usize = event.tool_call_id()[1..].parse().unwrap();
        match event {
            ToolEvent::ToolCallStart { .. } => starts[index] += 1,
            ToolEvent::ToolCallResult { .. } => results[index] += 1,
            _ => {}
        }
    }
    assert!(starts.iter().all(|count| *count == 1), "every call started exactly once");
    assert!(results.iter().all(|count| *count == 1), "every call ended exactly once");
}
