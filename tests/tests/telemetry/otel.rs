//! The `execute_tool` span, exported through `tracing-opentelemetry` into the OpenTelemetry
//! SDK's in-memory exporter: the GenAI semantic conventions' name and attributes, and the
//! arguments and result only when the runner opts in (and then redacted).

use std::collections::BTreeMap;

use opentelemetry::trace::TracerProvider as _;
use opentelemetry_sdk::trace::{InMemorySpanExporter, SdkTracerProvider, SpanData};
use tool_runtime::catalog::ToolCatalog;
use tool_runtime::policy::ToolPolicy;
use tool_runtime::prelude::*;
use tool_runtime::runner::ToolRunner;
use tool_tests::fixtures::context;
use tracing_subscriber::layer::SubscriberExt;

/// Look up a user's plan.
#[tool(name = "crm__get_plan", effect = read_only, redact = ["plan"])]
struct GetPlan {
    user: String,
}

#[derive(Serialize, ToolSchema)]
struct Plan {
    plan: String,
    api_key: String,
}

impl Tool for GetPlan {
    type Output = Plan;
    async fn run(self, _: &ToolInvocationContext, _: &ToolCapabilities) -> Result<Plan, ToolError> {
        if self.user == "nobody" {
            return Err(ToolError::new("no such user"));
        }
        Ok(Plan { plan: "pro".into(), api_key: "sk-live-123".into() })
    }
}

fn runner(content: bool) -> ToolRunner {
    let catalog = ToolCatalog::builder().register::<GetPlan>().build().unwrap();
    ToolRunner::builder(catalog)
        .policy(ToolPolicy::from_json(r#"{"allowed_tools": ["crm__*"]}"#).unwrap())
        .record_content_in_spans(content)
        .build()
}

fn ctx() -> ToolInvocationContext {
    context("run-1", "user-1", "t-1").with_tool_call_id("call_7")
}

/// Runs one call with an OpenTelemetry pipeline installed and returns the exported spans.
async fn exported(runner: &ToolRunner, args: &str) -> Vec<SpanData> {
    exported_call(runner, "crm__get_plan", args).await
}

/// [`exported`] for a call of the tool `name`.
async fn exported_call(runner: &ToolRunner, name: &str, args: &str) -> Vec<SpanData> {
    let exporter = InMemorySpanExporter::default();
    let provider = SdkTracerProvider::builder().with_simple_exporter(exporter.clone()).build();
    let subscriber = tracing_subscriber::registry()
        .with(tracing_opentelemetry::layer().with_tracer(provider.tracer("tool-tests")));
    {
        let _installed = tracing::subscriber::set_default(subscriber);
        runner.exec(name, args, &ctx()).await;
    }
    provider.force_flush().unwrap();
    exporter.get_finished_spans().unwrap()
}

fn attributes(span: &SpanData) -> BTreeMap<String, String> {
    span.attributes.iter().map(|kv| (kv.key.to_string(), kv.value.to_string())).collect()
}

#[tokio::test]
async fn the_span_follows_the_genai_conventions_without_content_by_default() {
    let spans = exported(&runner(false), r#"{"user": "ann"}"#).await;
    assert_eq!(spans.len(), 1, "{spans:?}");
    let span = &spans[0];
    assert_eq!(span.name, "execute_tool crm__get_plan");
    let attributes = attributes(span);
    assert_eq!(attributes["gen_ai.operation.name"], "execute_tool");
    assert_eq!(attributes["gen_ai.tool.name"], "crm__get_plan");
    assert_eq!(attributes["gen_ai.tool.call.id"], "call_7");
    assert_eq!(attributes["gen_ai.tool.type"], "function");
    assert_eq!(attributes["gen_ai.tool.description"], "Look up a user's plan.");
    assert!(!attributes.contains_key("error.type"), "{attributes:?}");
    assert!(!attributes.contains_key("gen_ai.tool.call.arguments"), "{attributes:?}");
    assert!(!attributes.contains_key("gen_ai.tool.call.result"), "{attributes:?}");
}

#[tokio::test]
async fn a_failed_call_carries_its_error_type() {
    let spans = exported(&runner(false), r#"{"user": "nobody"}"#).await;
    assert_eq!(attributes(&spans[0])["error.type"], "execution");
    assert_eq!(spans[0].status, opentelemetry::trace::Status::error(""));
    let spans = exported(&runner(false), r#"{"user": 7}"#).await;
    assert_eq!(attributes(&spans[0])["error.type"], "validation");
}

#[tokio::test]
async fn opted_in_the_span_carries_the_validated_arguments_and_the_redacted_result() {
    let spans = exported(&runner(true), r#"{ "user" : "ann" }"#).await;
    let attributes = attributes(&spans[0]);
    assert_eq!(attributes["gen_ai.tool.call.arguments"], r#"{"user":"ann"}"#);
    assert_eq!(attributes["gen_ai.tool.call.result"], r#"{"plan":"pro"}"#);
    assert!(!attributes.values().any(|value| value.contains("sk-live")), "{attributes:?}");
}

#[tokio::test]
async fn a_call_that_waits_for_approval_is_no_error() {
    let catalog = ToolCatalog::builder().register::<GetPlan>().build().unwrap();
    let policy = ToolPolicy {
        require_approval: vec![ToolEffect::ReadOnly],
        ..ToolPolicy::allowing(["crm__*"])
    };
    let runner = ToolRunner::builder(catalog)
        .policy(policy)
        .approver(std::sync::Arc::new(tool_runtime::runner::DeferAll))
        .build();
    let spans = exported(&runner, r#"{"user": "ann"}"#).await;
    assert_eq!(spans.len(), 1, "{spans:?}");
    assert_eq!(spans[0].status, opentelemetry::trace::Status::Unset);
    let attributes = attributes(&spans[0]);
    assert!(!attributes.contains_key("error.type"), "{attributes:?}");
    assert_eq!(attributes["tool_runtime.waits_for"], "approval");
    // The same runner's failures still say so: the check above can fail.
    let spans = exported(&runner, r#"{"user": 7}"#).await;
    assert_eq!(spans[0].status, opentelemetry::trace::Status::error(""));
}

/// A tool as a hostile MCP server would describe it: a megabyte of description with terminal
/// escapes and line breaks, and a result of the same kind.
fn hostile_runner(limit: Option<usize>) -> ToolRunner {
    use serde_json::json;
    use tool_runtime::runtime::DynamicTool;
    let description = format!("Innocent.\n\u{1b}[2J\u{202e}{}", "x".repeat(1 << 20));
    let tool = DynamicTool::builder(
        "evil__echo",
        description,
        json!({"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"], "additionalProperties": false}),
    )
    .effect(ToolEffect::ReadOnly)
    .redact_all()
    .build(|args, _, _| async move { Ok(json!(format!("{}\u{7}{}", args["text"], "y".repeat(4096)))) })
    .unwrap();
    let catalog = ToolCatalog::builder().register_dynamic(tool).build().unwrap();
    let builder = ToolRunner::builder(catalog)
        .policy(ToolPolicy::from_json(r#"{"allowed_tools": ["evil__echo"]}"#).unwrap())
        .record_content_in_spans(true);
    match limit {
        Some(bytes) => builder.span_text_limit(bytes),
        None => builder,
    }
    .build()
}

#[tokio::test]
async fn peer_supplied_text_reaches_the_span_cut_and_with_control_characters_escaped() {
    let spans = exported_call(&hostile_runner(None), "evil__echo", r#"{"text": "hi"}"#).await;
    let recorded = attributes(&spans[0]);
    for key in ["gen_ai.tool.description", "gen_ai.tool.call.result"] {
        let value = &recorded[key];
        // 1 KiB of the text, then the marker that says how long it was.
        assert!(value.len() <= 1024 + 32, "{key}: {} bytes", value.len());
        assert!(value.contains("bytes)"), "{key}: {value}");
        assert!(!value.chars().any(|c| c.is_control() || c == '\u{202e}'), "{key}: {value:?}");
    }
    let description = &recorded["gen_ai.tool.description"];
    assert!(description.starts_with(r"Innocent.\n\u{1b}[2J\u{202e}xxx"), "{description}");
    assert!(description.ends_with(&format!("... ({} bytes)", 17 + (1 << 20))), "{description}");
    // What fits is recorded whole.
    assert_eq!(recorded["gen_ai.tool.call.arguments"], r#"{"text":"hi"}"#);

    // The limit is the runner's to set.
    let spans = exported_call(&hostile_runner(Some(16)), "evil__echo", r#"{"text": "hi"}"#).await;
    let cut = attributes(&spans[0]);
    let description = &cut["gen_ai.tool.description"];
    assert!(description.starts_with(r"Innocent.\n"), "{description}");
    assert!(description.len() <= 16 + 32, "{description}");
}
