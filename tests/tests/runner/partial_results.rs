//! Partial results on abort: a tool cut off (`timeout`, `cancelled`) after it kept some of its
//! result in its `Partial` is answered with that, marked partial in the result, its JSON and
//! the record; a tool that kept nothing, or that finished, is answered as before.

use std::time::Duration;

use serde_json::json;
use tokio_util::sync::CancellationToken;
use tool_runtime::content::Part;
use tool_runtime::policy::ToolPolicy;
use tool_runtime::prelude::*;
use tool_runtime::runtime::{
    CollectingSink, EventOutcome, Partial, ToolErrorCode as Code, ToolEvent, ToolExecResult,
};
use tool_tests::fixtures::context;

/// Write a report, a section at a time.
#[tool(name = "docs__report", effect = read_only, redact = all, capabilities = [Partial])]
struct Report {
    /// Sections to keep before working on (and waiting on) the rest.
    kept: u8,
    /// Whether it finishes after keeping them.
    finishes: bool,
}

impl Tool for Report {
    type Output = String;
    async fn run(
        self,
        _: &ToolInvocationContext,
        caps: &ToolCapabilities,
    ) -> Result<String, ToolError> {
        let partial = caps.get::<Partial>()?;
        for section in 1..=self.kept {
            partial.keep(Part::Text(format!("section {section}")));
        }
        if !self.finishes {
            tokio::time::sleep(Duration::from_secs(3600)).await;
        }
        Ok("the whole report".into())
    }
}

/// Write a report, keeping nothing aside.
#[tool(name = "docs__plain", effect = read_only, redact = all)]
struct Plain {}

impl Tool for Plain {
    type Output = String;
    async fn run(
        self,
        _: &ToolInvocationContext,
        _: &ToolCapabilities,
    ) -> Result<String, ToolError> {
        tokio::time::sleep(Duration::from_secs(3600)).await;
        Ok(String::new())
    }
}

fn runner(policy: &str, sink: &CollectingSink) -> ToolRunner {
    let catalog = ToolCatalog::builder().register::<Report>().register::<Plain>().build().unwrap();
    ToolRunner::builder(catalog)
        .policy(ToolPolicy::from_json(policy).unwrap())
        .event_sink(sink.clone())
        .build()
}

const FAST: &str = r#"{"allowed_tools": ["docs__*"], "budgets": {"max_runtime_ms": 50}}"#;

fn texts(result: &ToolExecResult) -> Vec<String> {
    result
        .output()
        .map(|output| {
            output
                .parts()
                .iter()
                .filter_map(|part| match part {
                    Part::Text(text) => Some(text.clone()),
                    _ => None,
                })
                .collect()
        })
        .unwrap_or_default()
}

#[tokio::test]
async fn a_tool_that_times_out_after_keeping_parts_is_answered_with_them_marked_partial() {
    let sink = CollectingSink::new();
    let runner = runner(FAST, &sink);
    let result = runner
        .exec("docs__report", r#"{"kept": 2, "finishes": false}"#, &context("r", "a", "t"))
        .await;
    assert!(result.is_ok(), "{result:?}");
    let cut = result.partial().expect("marked partial");
    assert_eq!(cut.code, Code::Timeout);
    let texts = texts(&result);
    assert_eq!(texts[..2], ["section 1", "section 2"]);
    assert!(
        texts[2].contains("partial") && texts[2].contains("did not finish within 50 ms"),
        "{}",
        texts[2]
    );
    assert_eq!(serde_json::to_value(&result).unwrap()["partial"]["code"], json!("timeout"));
    let record = result.into_record();
    assert_eq!(record.partial.as_ref().map(|cut| cut.code), Some(Code::Timeout));
    assert_eq!(record.parts.len(), 3);
    assert!(record.error.is_none());
    assert_eq!(serde_json::to_value(&record).unwrap()["partial"]["code"], json!("timeout"));
    // The result event carries the parts, as for any output.
    let events = sink.take();
    assert!(
        matches!(events.last(), Some(ToolEvent::ToolCallResult { outcome: EventOutcome::Ok { parts, .. }, .. }) if parts.len() == 3)
    );
}

#[tokio::test]
async fn a_cancelled_call_is_answered_with_what_its_tool_kept() {
    let sink = CollectingSink::new();
    let runner = runner(r#"{"allowed_tools": ["docs__*"]}"#, &sink);
    let token = CancellationToken::new();
    let ctx = context("r", "a", "t").with_cancellation(token.clone());
    let cancel = tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(50)).await;
        token.cancel();
    });
    let result = runner.exec("docs__report", r#"{"kept": 1, "finishes": false}"#, &ctx).await;
    cancel.await.unwrap();
    assert_eq!(result.partial().map(|cut| cut.code), Some(Code::Cancelled));
    assert_eq!(texts(&result)[0], "section 1");
}

#[tokio::test]
async fn without_kept_parts_or_a_cut_the_call_ends_as_it_always_did() {
    let sink = CollectingSink::new();
    let runner = runner(FAST, &sink);
    let ctx = context("r", "a", "t");
    // Kept nothing: the timeout, as before.
    let nothing = runner.exec("docs__report", r#"{"kept": 0, "finishes": false}"#, &ctx).await;
    assert_eq!(nothing.error_code(), Some(Code::Timeout));
    assert!(nothing.partial().is_none() && nothing.into_record().partial.is_none());
    // Finished: its own output, not the kept parts.
    let finished = runner.exec("docs__report", r#"{"kept": 3, "finishes": true}"#, &ctx).await;
    assert_eq!(finished.value(), Some(&json!("the whole report")));
    assert!(finished.partial().is_none());
    // A tool that does not declare `Partial` has nothing to keep.
    let plain = runner.exec("docs__plain", "{}", &ctx).await;
    assert_eq!(plain.error_code(), Some(Code::Timeout));
}

#[tokio::test]
async fn kept_parts_over_the_result_budget_leave_the_call_its_error() {
    let sink = CollectingSink::new();
    let policy =
        r#"{"allowed_tools": ["docs__*"], "budgets": {"max_runtime_ms": 50, "max_parts": 2}}"#;
    let runner = runner(policy, &sink);
    let result = runner
        .exec("docs__report", r#"{"kept": 5, "finishes": false}"#, &context("r", "a", "t"))
        .await;
    assert_eq!(result.error_code(), Some(Code::Timeout));
    assert!(result.partial().is_none());
    // Nothing kept is left over for a later call of the runner either.
    let again = runner
        .exec("docs__report", r#"{"kept": 0, "finishes": false}"#, &context("r", "a", "t"))
        .await;
    assert_eq!(again.error_code(), Some(Code::Timeout));
}
