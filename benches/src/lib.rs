//! Fixtures shared by the benchmarks under `benches/` and their tests: the tools the runner
//! benchmarks call, provider streams with large arguments, dynamic tools by the thousand, and
//! the conversation of the run-state benchmarks.
//!
//! The benchmarks themselves, their method and their results are described in `BENCHMARKS.md`
//! at the repository root.

pub mod catalogs;
pub mod peers;
pub mod results;
pub mod streams;
pub mod tools;

use std::sync::Arc;

use serde_json::{Value, json};
use tool_runtime::catalog::ToolCatalog;
use tool_runtime::policy::ToolPolicy;
use tool_runtime::prelude::*;
use tool_runtime::runner::ToolRunner;
use tool_runtime::runtime::{BoundToolRuntime, DynamicTool};

/// A runner over [`tools::Small`] and [`tools::Medium`] whose policy allows both, with the
/// default (null) event sink.
///
/// # Panics
///
/// Never: the catalog has no duplicate ids and no capabilities.
#[must_use]
pub fn bench_runner() -> ToolRunner {
    runner_builder().build()
}

/// [`bench_runner`] with a sink that takes every event and drops it, so the events are built
/// (ids copied, the redacted result cloned) as for a real sink.
#[must_use]
pub fn bench_runner_with_events() -> ToolRunner {
    runner_builder().event_sink(Arc::new(DroppingSink)).build()
}

/// [`bench_runner`] with one before-call hook that allows every call and one after-call hook
/// that keeps every result: what hooks cost when they decide nothing.
#[must_use]
pub fn bench_runner_with_hooks() -> ToolRunner {
    use tool_runtime::runner::{AfterCallDecision, AfterCallFn, BeforeCallDecision, BeforeCallFn};
    runner_builder()
        .before_call(BeforeCallFn::new("allow", |_| Ok(BeforeCallDecision::Allow)))
        .after_call(AfterCallFn::new("keep", |_| Ok(AfterCallDecision::Keep)))
        .build()
}

fn runner_builder() -> tool_runtime::runner::ToolRunnerBuilder {
    let catalog = ToolCatalog::builder()
        .register::<tools::Small>()
        .register::<tools::Medium>()
        .build()
        .expect("two distinct tools");
    let policy = ToolPolicy { allowed_tools: vec!["bench__*".to_owned()], ..ToolPolicy::default() };
    ToolRunner::builder(catalog).policy(policy)
}

/// Takes every event (unlike [`NullSink`](tool_runtime::runtime::NullSink), it says it is
/// enabled) and drops it.
#[derive(Debug, Clone, Copy)]
pub struct DroppingSink;

impl tool_runtime::runtime::EventSink for DroppingSink {
    fn emit(&self, event: tool_runtime::runtime::ToolEvent) {
        std::hint::black_box(event);
    }
}

/// The id of the `i`th dynamic tool: ten namespaces, `ns0__tool_00000` to `ns9__tool_...`.
#[must_use]
pub fn dynamic_name(i: usize) -> String {
    format!("ns{}__tool_{i:05}", i % 10)
}

/// The input schema of every dynamic tool made by [`dynamic_tools`].
#[must_use]
pub fn dynamic_schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "query": {"type": "string", "maxLength": 200},
            "limit": {"type": ["integer", "null"], "minimum": 1, "maximum": 100}
        },
        "required": ["query"],
        "additionalProperties": false
    })
}

/// `count` dynamic tools named by [`dynamic_name`] with `schema` as input schema, each
/// answering its arguments, ready to register.
///
/// # Panics
///
/// When `schema` is outside the allowed subset.
#[must_use]
pub fn dynamic_tools(count: usize, schema: &Value) -> Vec<Arc<dyn BoundToolRuntime>> {
    (0..count)
        .map(|i| {
            let tool = DynamicTool::builder(dynamic_name(i), "A dynamic tool.", schema.clone())
                .allow_open_schema()
                .effect(ToolEffect::ReadOnly)
                .build(|args, _, _| async move { Ok(args) })
                .expect("a valid dynamic tool");
            Arc::new(tool) as Arc<dyn BoundToolRuntime>
        })
        .collect()
}

/// A policy that allows the tools of five of the ten namespaces of [`dynamic_name`].
#[must_use]
pub fn half_policy() -> ToolPolicy {
    ToolPolicy {
        allowed_tools: (0..5).map(|n| format!("ns{n}__*")).collect(),
        ..ToolPolicy::default()
    }
}

/// 49 stored messages of ordinary text (user and assistant in turn): the conversation of the
/// run-state and run-store benchmarks, before the turn whose call waits.
///
/// # Panics
///
/// Never: each message is in the stored form.
#[must_use]
pub fn conversation() -> Vec<tool_runtime::agent::Message> {
    (0..49)
        .map(|n| {
            let text = format!("message {n}: {}", "some ordinary conversation text ".repeat(4));
            let stored = if n % 2 == 0 {
                json!({"role": "user", "text": text})
            } else {
                json!({"role": "assistant", "text": text, "finish": "stop"})
            };
            serde_json::from_value(stored).expect("a stored message")
        })
        .collect()
}

/// A runner whose `tickets__close` (a state change) waits for a person's approval (policy
/// requires it, [`DeferAll`](tool_runtime::runner::DeferAll) defers it) and whose
/// `tickets__list` (read-only) runs at once: the runner of the run-state, run-store and MCP
/// round benchmarks.
///
/// # Panics
///
/// Never: the tool and the catalog are valid.
#[must_use]
pub fn approval_runner() -> ToolRunner {
    let close = DynamicTool::builder(
        "tickets__close",
        "Close a ticket.",
        json!({"type": "object", "properties": {"number": {"type": "integer"}}, "required": ["number"], "additionalProperties": false}),
    )
    .effect(ToolEffect::StateChange)
    .redact_all()
    .build(|_, _, _| async { Ok(json!("closed")) })
    .expect("a valid tool");
    let policy = ToolPolicy {
        require_approval: vec![ToolEffect::StateChange],
        ..ToolPolicy::allowing(["tickets__*"])
    };
    let list = DynamicTool::builder(
        "tickets__list",
        "List the open tickets.",
        json!({"type": "object", "properties": {}, "additionalProperties": false}),
    )
    .redact_all()
    .build(|_, _, _| async { Ok(json!("none open")) })
    .expect("a valid tool");
    let catalog = ToolCatalog::builder()
        .register_dynamic(close)
        .register_dynamic(list)
        .build()
        .expect("a catalog");
    ToolRunner::builder(catalog)
        .policy(policy)
        .approver(Arc::new(tool_runtime::runner::DeferAll))
        .build()
}
