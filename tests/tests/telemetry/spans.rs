//! A secret handed to the broker never leaves the tool, and telemetry carries the GenAI
//! attributes. Captured with a thread-local `tracing` subscriber; in the `telemetry` binary,
//! because tests elsewhere running calls on other threads at the same time can race with it
//! over `tracing`'s process-wide callsite interest cache (see `main.rs`).

use std::collections::HashMap;
use std::fmt::Write as _;
use std::sync::{Arc, Mutex};

use serde_json::json;
use tool_runtime::catalog::ToolCatalog;
use tool_runtime::policy::ToolPolicy;
use tool_runtime::prelude::*;
use tool_runtime::runner::ToolRunner;
use tool_runtime::runtime::{Auth, CollectingSink};
use tool_tests::fixtures::{StaticBroker, context};
use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id, Record};
use tracing::{Event, Subscriber};
use tracing_subscriber::layer::{Context, Layer};
use tracing_subscriber::prelude::*;

const CANARY: &str = "sk-live-CANARY-91c2";

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
        .connection_broker(Arc::new(StaticBroker(CANARY)))
        .build()
        .unwrap();
    let runner = ToolRunner::builder(catalog)
        .policy(ToolPolicy::from_json(r#"{"allowed_tools": ["leak__try"], "require_approval": [], "connections": {"allowed_connection_ids": ["c1"]}}"#).unwrap())
        .event_sink(Arc::new(sink.clone()))
        .build();
    let ctx = context("run-9", "user", "tenant")
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

#[test]
fn model_supplied_ids_and_names_reach_spans_escaped_and_cut() {
    let capture = Capture::default();
    let subscriber = tracing_subscriber::registry().with(capture.clone());
    let catalog = ToolCatalog::builder().build().unwrap();
    let runner = ToolRunner::builder(catalog).build();
    let hostile_id = format!("call\n\u{1b}[2J{}", "x".repeat(300));
    let ctx = context("run", "a", "t").with_tool_call_id(hostile_id.as_str());
    let rt = tokio::runtime::Builder::new_current_thread().enable_time().build().unwrap();
    let result = tracing::subscriber::with_default(subscriber, || {
        rt.block_on(runner.exec("evil\u{7}__tool\r\n", b"{}", &ctx))
    });
    assert_eq!(result.error().map(|e| e.code.as_str()), Some("unavailable"));
    let lines = capture.0.lock().unwrap().clone();
    let span = lines.iter().find(|(name, _)| name == "execute_tool").expect("a span");
    let id = &span.1["gen_ai.tool.call.id"];
    // Cut to its first 64 characters (9 of the prefix, 55 `x`), then escaped.
    assert_eq!(*id, format!("call\\n\\u{{1b}}[2J{}...", "x".repeat(55)));
    let name = &span.1["gen_ai.tool.name"];
    assert!(!name.contains('\u{7}') && !name.contains('\r'), "{name:?}");
    assert!(!result.error().unwrap().message.contains('\u{7}'));
}

#[test]
fn the_subject_and_graph_reach_the_span_when_set_escaped() {
    let capture = Capture::default();
    let subscriber = tracing_subscriber::registry().with(capture.clone());
    let runner = ToolRunner::builder(ToolCatalog::builder().build().unwrap()).build();
    let ctx = context("run", "a", "t").with_subject_id("user:ada\u{1b}").with_graph_id("sales");
    let rt = tokio::runtime::Builder::new_current_thread().enable_time().build().unwrap();
    tracing::subscriber::with_default(subscriber, || {
        rt.block_on(runner.exec("core__missing", b"{}", &ctx));
        rt.block_on(runner.exec("core__missing", b"{}", &context("run", "a", "t")));
    });
    let lines = capture.0.lock().unwrap().clone();
    let recorded: Vec<&HashMap<String, String>> =
        lines.iter().filter(|(name, _)| name == "record").map(|(_, fields)| fields).collect();
    let subjects: Vec<&str> = recorded
        .iter()
        .filter_map(|fields| fields.get("tool_runtime.subject_id"))
        .map(String::as_str)
        .collect();
    assert_eq!(subjects, ["user:ada\\u{1b}"], "escaped, and only for the call that had one");
    let graphs: Vec<&str> = recorded
        .iter()
        .filter_map(|fields| fields.get("tool_runtime.graph_id"))
        .map(String::as_str)
        .collect();
    assert_eq!(graphs, ["sales"]);
}
