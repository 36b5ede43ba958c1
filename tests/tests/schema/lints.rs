//! `#[tool]` and `#[derive(ToolSchema)]` expand to code that passes the strictest lints a user
//! may turn on: this file denies every warning, missing docs and the usual opt-in rustc lints,
//! and clippy's `pedantic` group (`cargo clippy --all-targets` checks that part).

#![deny(
    warnings,
    missing_docs,
    missing_debug_implementations,
    unreachable_pub,
    unused_qualifications,
    unused_import_braces,
    trivial_casts,
    trivial_numeric_casts,
    rust_2018_idioms,
    clippy::all,
    clippy::pedantic
)]

use std::time::{Duration, UNIX_EPOCH};

use serde_json::json;
use tool_runtime::prelude::*;
use tool_runtime::runtime::Clock;
use tool_runtime::testing::Harness;
use tool_tests::fixtures::context;

/// How urgent a task is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToolSchema)]
#[serde(rename_all = "snake_case")]
pub enum Priority {
    /// Whenever there is time.
    Low,
    /// Before anything else.
    High,
}

/// A task's number.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToolSchema)]
#[serde(transparent)]
pub struct TaskId(#[schema(range(min = 1))] pub u64);

/// A task on the list.
#[derive(Debug, Serialize, ToolSchema)]
pub struct Task {
    /// Its number.
    pub id: TaskId,
    /// What to do.
    pub title: String,
    /// How urgent it is.
    pub priority: Priority,
}

/// One page of results: generic, so its constraints are checked per instantiation.
#[derive(Debug, Serialize, ToolSchema)]
pub struct Page<T> {
    /// The results on this page.
    #[schema(items(max = 100))]
    pub items: Vec<T>,
    /// Where the next page starts, if there is one.
    pub next: Option<String>,
}

/// Add a task to the list.
#[tool(
    name = "todo__add",
    effect = state_change,
    redact = ["items.id", "items.title", "next"],
    capabilities = [Clock],
    requires_connection,
)]
#[derive(Debug)]
pub struct AddTask {
    /// What to do.
    #[schema(length(min = 1, max = 200), pattern = "\\S")]
    pub title: String,
    /// How urgent it is; `low` when absent.
    pub priority: Option<Priority>,
    /// Due date, such as `2026-01-31`.
    #[schema(format = "date")]
    #[serde(default)]
    pub due: Option<String>,
    /// Estimated effort in hours.
    #[schema(range(exclusive_min = 0.0, max = 100.0))]
    pub hours: f32,
    /// Tags to file it under.
    #[schema(items(max = 5))]
    pub tags: Vec<String>,
}

impl Tool for AddTask {
    type Output = Page<Task>;

    async fn run(
        self,
        _: &ToolInvocationContext,
        caps: &ToolCapabilities,
    ) -> Result<Page<Task>, ToolError> {
        let clock = caps.get::<Clock>()?;
        let id = TaskId(clock.epoch_ms().unsigned_abs());
        let task = Task { id, title: self.title, priority: self.priority.unwrap_or(Priority::Low) };
        Ok(Page { items: vec![task], next: None })
    }
}

/// Check that the service answers.
#[tool(name = "todo__ping", effect = read_only, redact = [])]
#[derive(Debug)]
pub struct Ping {}

impl Tool for Ping {
    type Output = Page<String>;

    async fn run(
        self,
        _: &ToolInvocationContext,
        _: &ToolCapabilities,
    ) -> Result<Page<String>, ToolError> {
        Ok(Page { items: Vec::new(), next: None })
    }
}

#[test]
fn tools_work_under_strict_lints() {
    let spec = AddTask::spec();
    assert!(spec.requires_connection());
    assert_eq!(spec.capabilities().len(), 1);
    let input = spec.input_schema().to_json();
    assert_eq!(input["required"], json!(["title", "hours", "tags"]));
    assert_eq!(input["properties"]["hours"]["exclusiveMinimum"], 0.0);
    assert_eq!(Ping::spec().input_schema().to_json()["properties"], json!({}));

    let harness = Harness::new()
        .capability(Clock::fixed(UNIX_EPOCH + Duration::from_millis(7)))
        .context(context("run-1", "actor-1", "tenant-1").with_connection_id("todo-list"));
    let runtime = tokio::runtime::Builder::new_current_thread().build().expect("a runtime");
    let args = json!({"title": "write tests", "hours": 1.5, "tags": []});
    let page = runtime.block_on(harness.exec::<AddTask>(args));
    // What leaves the runner: the allowlisted fields (`priority` stays inside).
    assert_eq!(
        page.value(),
        Some(&json!({"items": [{"id": 7, "title": "write tests"}], "next": null}))
    );
    assert_eq!(serde_json::to_value(TaskId(7)).unwrap(), json!(7));
    assert_eq!(serde_json::to_value(Priority::Low).unwrap(), json!("low"));
}
