//! A tool written by hand (`BoundToolRuntime`) that brings its own validator: its arguments
//! reach the runner as `ValidatedArgs::checked` made them, so what the validator refuses never
//! runs and comes back as any refused call does (code, pointers, messages), and what it passes
//! runs with exactly the value it checked.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use async_trait::async_trait;
use serde_json::{Map, Value, json};
use tool_runtime::content::ToolOutput;
use tool_runtime::prelude::*;
use tool_runtime::runtime::{
    Arguments, BoundToolRuntime, DynamicTool, ToolErrorCode as Code, ValidatedArgs,
};
use tool_runtime::schema::{ArgumentsError, ArgumentsValidator, ValidationErrors};
use tool_runtime::spec::ToolSpec;
use tool_tests::fixtures::context;

/// Rows to fetch: a table name of letters and a page size that is a power of two (what a
/// schema cannot say about the page size).
#[derive(Debug)]
struct Rows;

impl ArgumentsValidator for Rows {
    fn validate(&self, args: &Value) -> Result<(), ValidationErrors> {
        let mut errors = ValidationErrors::default();
        let table = args.get("table").and_then(Value::as_str);
        if !table.is_some_and(|table| {
            !table.is_empty() && table.bytes().all(|b| b.is_ascii_alphabetic())
        }) {
            errors.push("/table", "must be a table name of letters");
        }
        if !args.get("page").and_then(Value::as_u64).is_some_and(u64::is_power_of_two) {
            errors.push("/page", "must be a power of two");
        }
        if errors.is_empty() { Ok(()) } else { Err(errors) }
    }
}

/// A tool whose spec comes from a dynamic definition and whose validation is its own.
#[derive(Debug)]
struct Fetch {
    spec: DynamicTool,
    runs: Arc<AtomicUsize>,
}

#[async_trait]
impl BoundToolRuntime for Fetch {
    fn spec(&self) -> &ToolSpec {
        self.spec.spec()
    }

    fn arguments(&self, args: Arguments<'_>) -> Result<ValidatedArgs, ArgumentsError> {
        ValidatedArgs::checked(args, &Rows)
    }

    async fn exec(
        &self,
        args: ValidatedArgs,
        _: &ToolInvocationContext,
        _: &ToolCapabilities,
    ) -> Result<ToolOutput, ToolError> {
        self.runs.fetch_add(1, Ordering::SeqCst);
        Ok(ToolOutput::from(json!({"fetched": args.value()["page"]})))
    }

    fn validate_output(&self, _: &Value) -> Result<(), ValidationErrors> {
        Ok(())
    }
}

#[tokio::test]
async fn a_hand_written_validator_decides_what_runs_and_its_refusals_read_as_any() {
    let schema = json!({
        "type": "object",
        "properties": {"table": {"type": "string"}, "page": {"type": "integer"}},
        "required": ["table", "page"],
        "additionalProperties": false
    });
    let spec = DynamicTool::builder("db__fetch", "Fetch rows.", schema)
        .effect(ToolEffect::ReadOnly)
        .redact_all()
        .build(|_, _, _| async { Ok(Value::Object(Map::new())) })
        .unwrap();
    let runs = Arc::new(AtomicUsize::new(0));
    let tool = Arc::new(Fetch { spec, runs: runs.clone() });
    let catalog = ToolCatalog::builder().register_bound(tool, "a hand-written tool".into()).build();
    let runner =
        ToolRunner::builder(catalog.unwrap()).policy(ToolPolicy::allowing(["db__*"])).build();
    let ctx = context("run-1", "user-1", "tenant-1");

    let fetched = runner.exec("db__fetch", br#"{"table": "orders", "page": 64}"#, &ctx).await;
    assert_eq!(fetched.value(), Some(&json!({"fetched": 64})), "{fetched:?}");

    let refused = runner.exec("db__fetch", br#"{"table": "orders; drop", "page": 48}"#, &ctx).await;
    assert_eq!(refused.error_code(), Some(Code::Validation));
    let message = &refused.error().unwrap().message;
    assert!(message.contains("/table") && message.contains("/page"), "{message}");
    assert!(!message.contains("drop"), "the refusal repeats no value: {message}");
    for bad in [&b"{not json"[..], b"[1, 2]"] {
        let refused = runner.exec("db__fetch", bad, &ctx).await;
        assert!(matches!(refused.error_code(), Some(Code::InvalidJson | Code::Validation)));
    }
    assert_eq!(runs.load(Ordering::SeqCst), 1, "only the checked call ran");
}
