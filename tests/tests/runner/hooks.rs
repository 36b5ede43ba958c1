//! Hooks inside the runner (on `exec`, in the agent loop, on the MCP server), tools that call
//! tools through `ToolCalls`, and what a call reports about itself (duration, the step where it
//! stopped, per-run stats).

use std::sync::atomic::{AtomicI64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, UNIX_EPOCH};

use async_trait::async_trait;
use serde_json::{Value, json};
use tool_runtime::adapters::ToolOutcome;
use tool_runtime::agent::{Agent, AgentConfig, AgentEvent, Message, ScriptedModel, ScriptedTurn};
use tool_runtime::catalog::ToolCatalog;
use tool_runtime::content::ToolOutput;
use tool_runtime::mcp::McpServer;
use tool_runtime::mcp::rmcp::ServiceExt;
use tool_runtime::mcp::rmcp::model::CallToolRequestParams;
use tool_runtime::policy::ToolPolicy;
use tool_runtime::prelude::*;
use tool_runtime::runner::{
    AfterCallDecision, AfterCallFn, BeforeCallDecision, BeforeCallFn, HookError, ToolCalls,
    ToolRunner, ToolRunnerBuilder,
};
use tool_runtime::runner::{ApprovalDecision, ApprovalRequest, Approver};
use tool_runtime::runtime::{
    CallStep, Capability, Clock, CollectingSink, EventOutcome, ExecError, ToolCallCounts,
    ToolCallStats, ToolErrorCode as Code, ToolEvent, ToolInvocationRecord,
};
use tool_tests::fixtures::context;

/// How many times `test__note` ran: one count per catalog, so a test reads only its own calls.
#[derive(Default)]
struct NoteRuns(AtomicUsize);

impl Capability for NoteRuns {
    const NAME: &'static str = "note_runs";
}

/// Store a note.
#[tool(name = "test__note", effect = read_only, redact = ["text"], capabilities = [NoteRuns])]
struct Note {
    #[schema(length(max = 20))]
    text: String,
}

#[derive(Serialize, ToolSchema)]
struct Noted {
    text: String,
    internal: String,
}

impl Tool for Note {
    type Output = Noted;
    async fn run(
        self,
        _: &ToolInvocationContext,
        caps: &ToolCapabilities,
    ) -> Result<Noted, ToolError> {
        caps.get::<NoteRuns>()?.0.fetch_add(1, Ordering::SeqCst);
        Ok(Noted { text: self.text, internal: "never outside".into() })
    }
}

/// Change something.
#[tool(name = "test__change", effect = state_change, redact = ["text"])]
struct Change {
    text: String,
}

impl Tool for Change {
    type Output = Noted;
    async fn run(
        self,
        _: &ToolInvocationContext,
        _: &ToolCapabilities,
    ) -> Result<Noted, ToolError> {
        Ok(Noted { text: self.text, internal: String::new() })
    }
}

fn catalog() -> ToolCatalog {
    counting_catalog(&Arc::default())
}

/// The catalog, counting the runs of `test__note` in `runs`.
fn counting_catalog(runs: &Arc<NoteRuns>) -> ToolCatalog {
    ToolCatalog::builder()
        .register::<Note>()
        .register::<Change>()
        .shared_capability(Arc::clone(runs))
        .build()
        .unwrap()
}

fn builder() -> ToolRunnerBuilder {
    builder_over(catalog())
}

fn builder_over(catalog: ToolCatalog) -> ToolRunnerBuilder {
    ToolRunner::builder(catalog)
        .policy(ToolPolicy::from_json(r#"{"allowed_tools": ["test__*"]}"#).unwrap())
}

/// Allows every test tool; state changes need approval (and no approver is set).
fn approving() -> ToolRunnerBuilder {
    ToolRunner::builder(catalog()).policy(
        ToolPolicy::from_json(
            r#"{"allowed_tools": ["test__*"], "require_approval": ["state_change"]}"#,
        )
        .unwrap(),
    )
}

fn ctx() -> ToolInvocationContext {
    context("run-1", "user-1", "t-1").with_tool_call_id("call_1")
}

/// A clock that moves 5 ms every time it is read.
fn ticking() -> Clock {
    let now = Arc::new(AtomicI64::new(1_700_000_000_000));
    Clock::from_fn(move || {
        let ms = now.fetch_add(5, Ordering::SeqCst);
        UNIX_EPOCH + Duration::from_millis(u64::try_from(ms).unwrap())
    })
}

/// Blocks notes that say "forbidden".
fn guard() -> BeforeCallFn {
    BeforeCallFn::new("forbidden_guard", |call| {
        Ok(if call.arguments()["text"] == "forbidden" {
            BeforeCallDecision::block("that note is not allowed")
        } else {
            BeforeCallDecision::Allow
        })
    })
}

/// Appends `suffix` to the note's text.
fn appender(name: &str, suffix: &'static str) -> BeforeCallFn {
    BeforeCallFn::new(name, move |call| {
        let mut arguments = call.arguments().clone();
        let text = arguments["text"].as_str().unwrap_or_default().to_owned();
        arguments["text"] = json!(format!("{text}{suffix}"));
        Ok(BeforeCallDecision::Rewrite { arguments })
    })
}

fn result_events(events: &[ToolEvent]) -> Vec<(EventOutcome, u64)> {
    events
        .iter()
        .filter_map(|event| match event {
            ToolEvent::ToolCallResult { outcome, duration_ms, .. } => {
                Some((outcome.clone(), *duration_ms))
            }
            _ => None,
        })
        .collect()
}

#[tokio::test]
async fn a_blocking_hook_ends_the_call_with_its_reason_before_the_tool_runs() {
    let events = CollectingSink::new();
    let runs = Arc::new(NoteRuns::default());
    let runner = builder_over(counting_catalog(&runs))
        .before_call(guard())
        .event_sink(events.clone())
        .clock(ticking())
        .build();
    let blocked = runner.exec("test__note", r#"{"text": "forbidden"}"#, &ctx()).await;
    assert_eq!(blocked.error_code(), Some(Code::HookBlocked));
    let error = blocked.error().unwrap();
    assert_eq!(error.message, "that note is not allowed");
    assert_eq!(error.step, Some(CallStep::Hook));
    assert_eq!(runs.0.load(Ordering::SeqCst), 0, "the tool never ran");
    let events = events.take();
    assert_eq!(events.len(), 1, "no start, one result: {events:?}");
    let (outcome, duration) = &result_events(&events)[0];
    assert!(matches!(outcome, EventOutcome::Err { error } if error.code == Code::HookBlocked));
    assert!(*duration > 0, "the ticking clock moved while the call was refused");

    let allowed = runner.exec("test__note", r#"{"text": "fine"}"#, &ctx()).await;
    assert_eq!(allowed.value(), Some(&json!({"text": "fine"})));
    assert_eq!(allowed.args_received(), None, "nothing was rewritten");
    assert_eq!(runs.0.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn rewrites_chain_in_order_and_the_record_keeps_what_arrived_and_what_ran() {
    let runner =
        builder().before_call(appender("a", "-a")).before_call(appender("b", "-b")).build();
    let result = runner.exec("test__note", r#"{"text": "x"}"#, &ctx()).await;
    assert_eq!(result.value(), Some(&json!({"text": "x-a-b"})));
    let record = result.into_record();
    assert_eq!(record.args, Some(json!({"text": "x-a-b"})));
    assert_eq!(record.args_received, Some(json!({"text": "x"})));
    let stored = serde_json::to_value(&record).unwrap();
    assert_eq!(stored["args_received"], json!({"text": "x"}));
}

/// The `arguments` of the start events in `events`.
fn start_arguments(events: &[ToolEvent]) -> Vec<Option<Value>> {
    events
        .iter()
        .filter_map(|event| match event {
            ToolEvent::ToolCallStart { arguments, .. } => Some(arguments.clone()),
            _ => None,
        })
        .collect()
}

#[tokio::test]
async fn start_events_carry_the_arguments_that_run_only_for_a_sink_that_asks() {
    // Raw text with spacing and a key order of its own: the event carries what validated and
    // the hooks left, never the model's text.
    let raw = r#"{ "text" :"x" }"#;
    let asking = CollectingSink::with_arguments();
    let runner = builder().before_call(appender("a", "-a")).event_sink(asking.clone()).build();
    assert!(runner.exec("test__note", raw, &ctx()).await.is_ok());
    let events = asking.take();
    assert_eq!(start_arguments(&events), [Some(json!({"text": "x-a"}))]);
    let start = serde_json::to_value(&events[0]).unwrap();
    assert_eq!(start["arguments"], json!({"text": "x-a"}));

    // A call refused before it starts has no start event, so its arguments go nowhere.
    let refused = runner.exec("test__note", r#"{"text": 7}"#, &ctx()).await;
    assert_eq!(refused.error_code(), Some(Code::Validation));
    assert!(start_arguments(&asking.take()).is_empty());

    // A sink that does not ask gets starts without them, and its JSON has no such key.
    let plain = CollectingSink::new();
    let runner = builder().before_call(appender("a", "-a")).event_sink(plain.clone()).build();
    assert!(runner.exec("test__note", raw, &ctx()).await.is_ok());
    let events = plain.take();
    assert_eq!(start_arguments(&events), [None]);
    let start = serde_json::to_value(&events[0]).unwrap();
    assert!(start.get("arguments").is_none(), "{start}");
}

#[tokio::test]
async fn edited_arguments_are_the_ones_the_start_event_carries() {
    #[derive(Debug)]
    struct Editing;
    #[async_trait]
    impl Approver for Editing {
        async fn review(&self, _: &ApprovalRequest<'_>) -> ApprovalDecision {
            ApprovalDecision::Edited { arguments: json!({"text": "edited"}) }
        }
    }
    let asking = CollectingSink::with_arguments();
    let runner = approving().approver(Arc::new(Editing)).event_sink(asking.clone()).build();
    let result = runner.exec("test__change", r#"{"text": "asked"}"#, &ctx()).await;
    assert_eq!(result.value(), Some(&json!({"text": "edited"})));
    assert_eq!(start_arguments(&asking.take()), [Some(json!({"text": "edited"}))]);
}

#[tokio::test]
async fn a_rewrite_the_schema_refuses_is_a_typed_error_naming_the_hook() {
    let long = appender("stretcher", "-this-is-far-too-long-for-the-limit");
    let runs = Arc::new(NoteRuns::default());
    let runner = builder_over(counting_catalog(&runs)).before_call(long).build();
    let result = runner.exec("test__note", r#"{"text": "x"}"#, &ctx()).await;
    let error = result.error().unwrap();
    assert_eq!(error.code, Code::HookFailed);
    assert!(error.message.contains("`stretcher`") && error.message.contains("/text"), "{error}");
    // It stopped at the hook: the tool never ran.
    assert_eq!(error.step, Some(CallStep::Hook));
    assert_eq!(result.record().result, None);
    assert_eq!(runs.0.load(Ordering::SeqCst), 0);
}

#[tokio::test]
async fn a_hook_that_fails_or_panics_gives_hook_failed_and_exactly_one_result() {
    let failing = BeforeCallFn::new("flaky", |_| Err(HookError::new("the rules store is down")));
    let result =
        builder().before_call(failing).build().exec("test__note", r#"{"text": "x"}"#, &ctx()).await;
    let error = result.error().unwrap();
    assert_eq!(error.code, Code::HookFailed);
    assert_eq!(error.message, "the before-call hook `flaky` failed: the rules store is down");

    let panicking = BeforeCallFn::new("boom", |_| panic!("hook bug"));
    let result = builder()
        .before_call(panicking)
        .build()
        .exec("test__note", r#"{"text": "x"}"#, &ctx())
        .await;
    assert_eq!(result.error().unwrap().message, "the before-call hook `boom` failed: it panicked");

    // After the tool ran: its start event still gets its one result.
    let events = CollectingSink::new();
    let after = AfterCallFn::new("late_boom", |_| panic!("after-hook bug"));
    let runner = builder().after_call(after).event_sink(events.clone()).build();
    let result = runner.exec("test__note", r#"{"text": "x"}"#, &ctx()).await;
    let error = result.error().unwrap();
    assert_eq!((error.code, error.step), (Code::HookFailed, Some(CallStep::Hook)));
    assert!(error.message.contains("`late_boom`"), "{error}");
    let events = events.take();
    assert_eq!(events.len(), 2, "{events:?}");
    assert!(matches!(&events[0], ToolEvent::ToolCallStart { .. }));
    assert!(matches!(
        &events[1],
        ToolEvent::ToolCallResult { outcome: EventOutcome::Err { error }, .. } if error.code == Code::HookFailed
    ));
}

#[tokio::test]
async fn after_hooks_see_only_redacted_output_and_may_replace_what_is_returned_and_sent() {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let log = Arc::clone(&seen);
    let observer = AfterCallFn::new("observer", move |call| {
        log.lock().unwrap().push((
            call.outcome.as_ref().ok().and_then(ToolOutput::structured).cloned(),
            call.arguments().cloned(),
            call.duration_ms,
        ));
        Ok(AfterCallDecision::Keep)
    });
    let replacer = AfterCallFn::new("replacer", |call| {
        let text =
            call.outcome.as_ref().ok().and_then(ToolOutput::structured).unwrap()["text"].clone();
        let text = format!("{}, checked", text.as_str().unwrap());
        Ok(AfterCallDecision::Replace(ToolOutput::from(
            json!({"text": text, "internal": "the hook's"}),
        )))
    });
    let events = CollectingSink::new();
    let runner = builder()
        .after_call(observer)
        .after_call(replacer)
        .event_sink(events.clone())
        .clock(ticking())
        .build();
    let result = runner.exec("test__note", r#"{"text": "hi"}"#, &ctx()).await;
    // Redacted like the tool's own output: `internal` is not on the allowlist.
    let replaced = json!({"text": "hi, checked"});
    assert_eq!(result.value(), Some(&replaced));
    assert_eq!(result.record().result, Some(replaced.clone()));
    let results = result_events(&events.take());
    assert!(matches!(&results[0].0, EventOutcome::Ok { value, .. } if *value == replaced));
    let (value, arguments, duration) = seen.lock().unwrap()[0].clone();
    assert_eq!(value.as_ref(), Some(&json!({"text": "hi"})), "the redacted output: no `internal`");
    assert_eq!(arguments.as_ref(), Some(&json!({"text": "hi"})));
    assert!(duration > 0);

    // A replacement that breaks the tool's output schema is refused, naming the hook: what
    // the runner returns (and the MCP server advertises as `outputSchema`) always holds.
    for (name, broken) in [
        ("extra_field", json!({"text": "hi", "internal": "", "checked": true})),
        ("missing_field", json!({"text": "hi"})),
        ("wrong_type", json!({"text": 7, "internal": ""})),
    ] {
        let runner = builder()
            .after_call(AfterCallFn::new(name, move |_| {
                Ok(AfterCallDecision::Replace(ToolOutput::from(broken.clone())))
            }))
            .build();
        let result = runner.exec("test__note", r#"{"text": "hi"}"#, &ctx()).await;
        let error = result.error().unwrap_or_else(|| panic!("{name}: {:?}", result.value()));
        assert_eq!(error.code, Code::HookFailed, "{name}");
        assert!(
            error.message.contains(&format!("`{name}`")) && error.message.contains("output schema"),
            "{name}: {error}"
        );
    }

    // A replacement over the result budget is refused.
    let huge = AfterCallFn::new("huge", |_| {
        Ok(AfterCallDecision::Replace(ToolOutput::from(
            json!({"text": "x".repeat(100), "internal": ""}),
        )))
    });
    let runner = ToolRunner::builder(catalog())
        .policy(
            ToolPolicy::from_json(
                r#"{"allowed_tools": ["test__*"], "budgets": {"max_result_bytes": 64}}"#,
            )
            .unwrap(),
        )
        .after_call(huge)
        .build();
    let result = runner.exec("test__note", r#"{"text": "hi"}"#, &ctx()).await;
    let error = result.error().unwrap();
    assert_eq!(error.code, Code::HookFailed);
    assert!(
        error.message.contains("`huge`") && error.message.contains("max_result_bytes"),
        "{error}"
    );
}

#[tokio::test]
async fn after_hooks_see_errors_and_may_stand_in_for_them() {
    let fallback = AfterCallFn::new("fallback", |call| {
        Ok(match call.outcome {
            Err(error) if error.code == Code::ApprovalDenied => AfterCallDecision::Replace(
                ToolOutput::from(json!({"text": "queued", "internal": ""})),
            ),
            _ => AfterCallDecision::Keep,
        })
    });
    let result = approving()
        .after_call(fallback)
        .build()
        .exec("test__change", r#"{"text": "x"}"#, &ctx())
        .await;
    assert_eq!(result.value(), Some(&json!({"text": "queued"})));
}

/// Records the arguments it was asked to approve, and approves.
#[derive(Debug, Default)]
struct Recorder(Mutex<Vec<Value>>);

#[async_trait]
impl Approver for Recorder {
    async fn review(&self, request: &ApprovalRequest<'_>) -> ApprovalDecision {
        self.0.lock().unwrap().push(request.arguments.clone());
        request.approve()
    }
}

#[tokio::test]
async fn the_approver_sees_the_arguments_the_hooks_left() {
    let approver = Arc::new(Recorder::default());
    let runner = ToolRunner::builder(catalog())
        .policy(
            ToolPolicy::from_json(
                r#"{"allowed_tools": ["test__*"], "require_approval": ["state_change"]}"#,
            )
            .unwrap(),
        )
        .approver(approver.clone())
        .before_call(appender("tag", "!"))
        .build();
    let result = runner.exec("test__change", r#"{"text": "x"}"#, &ctx()).await;
    assert_eq!(result.value(), Some(&json!({"text": "x!"})));
    assert_eq!(*approver.0.lock().unwrap(), [json!({"text": "x!"})]);
}

#[tokio::test]
async fn a_refused_call_says_at_which_step_it_stopped() {
    let runner = approving().build();
    let steps = [
        ("nobody__home", r#"{}"#, CallStep::Lookup),
        ("test__note", r#"{"text": 1}"#, CallStep::Validation),
        ("test__change", r#"{"text": "x"}"#, CallStep::Approval),
    ];
    for (name, args, step) in steps {
        let result = runner.exec(name, args, &ctx()).await;
        assert_eq!(result.error().unwrap().step, Some(step), "{name} {args}");
    }
    let denied =
        ToolRunner::builder(catalog()).build().exec("test__note", r#"{"text": "x"}"#, &ctx()).await;
    assert_eq!(denied.error().unwrap().step, Some(CallStep::Policy));
    let stored = serde_json::to_value(denied.record()).unwrap();
    assert_eq!(stored["error"]["step"], "policy");
}

/// The time by the clock of `stats_add_up_the_durations_the_runners_clock_measured`, which
/// only [`Work`] moves.
static WORK_CLOCK_MS: AtomicI64 = AtomicI64::new(1_700_000_000_000);

/// Take `ms` milliseconds by `WORK_CLOCK_MS`, then fail if told to.
#[tool(name = "test__work", effect = read_only, redact = all)]
struct Work {
    ms: u32,
    #[serde(default)]
    fail: bool,
}

#[derive(Serialize, ToolSchema)]
struct Worked {
    ms: u32,
}

impl Tool for Work {
    type Output = Worked;
    async fn run(
        self,
        _: &ToolInvocationContext,
        _: &ToolCapabilities,
    ) -> Result<Worked, ToolError> {
        WORK_CLOCK_MS.fetch_add(i64::from(self.ms), Ordering::SeqCst);
        if self.fail {
            return Err(ToolError::new("worked, then failed"));
        }
        Ok(Worked { ms: self.ms })
    }
}

#[tokio::test]
async fn stats_add_up_the_durations_the_runners_clock_measured() {
    let catalog = ToolCatalog::builder().register::<Work>().register::<Change>().build().unwrap();
    let clock = Clock::from_fn(|| {
        let ms = WORK_CLOCK_MS.load(Ordering::SeqCst);
        UNIX_EPOCH + Duration::from_millis(u64::try_from(ms).unwrap())
    });
    let runner = ToolRunner::builder(catalog)
        .policy(ToolPolicy::from_json(r#"{"allowed_tools": ["test__*"]}"#).unwrap())
        .approver(Arc::new(Recorder::default()))
        .clock(clock)
        .build();
    let calls = [
        ("test__work", r#"{"ms": 30}"#),
        ("test__change", r#"{"text": "takes no time"}"#),
        ("test__work", r#"{"ms": 70, "fail": true}"#),
        ("test__work", r#"{"ms": "refused before it runs"}"#),
        ("test__work", r#"{"ms": 5}"#),
    ];
    let mut records = Vec::new();
    for (name, args) in calls {
        records.push(runner.exec(name, args, &ctx()).await.into_record());
    }
    let codes: Vec<_> = records.iter().map(|r| r.error.as_ref().map(|e| e.code)).collect();
    assert_eq!(codes, [None, None, Some(Code::Execution), Some(Code::Validation), None]);
    let durations: Vec<u64> = records.iter().map(ToolInvocationRecord::duration_ms).collect();
    assert_eq!(durations, [30, 0, 70, 0, 5]);
    let stats = ToolCallStats::from_records(&records);
    assert_eq!((stats.calls, stats.ok, stats.failed), (5, 3, 2));
    assert_eq!((stats.total_ms, stats.max_ms), (105, 70));
    let work = ToolCallCounts { calls: 4, ok: 2, failed: 2, waiting: 0, total_ms: 105, max_ms: 70 };
    let change = ToolCallCounts { calls: 1, ok: 1, failed: 0, waiting: 0, total_ms: 0, max_ms: 0 };
    assert_eq!(stats.by_tool["test__work"], work);
    assert_eq!(stats.by_tool["test__change"], change);
}

#[tokio::test]
async fn stats_total_and_max_durations_over_the_run_and_per_tool() {
    // A record of a call that never reached a tool, its tool, times and outcome to be set.
    let template = builder().build().exec("nobody__home", "{}", &ctx()).await.into_record();
    let record = |tool: &str, started_ms: i64, ended_ms: i64, ok: bool| ToolInvocationRecord {
        tool_name: tool.to_owned(),
        started_ms,
        ended_ms,
        error: (!ok).then(|| ExecError::new(Code::Execution, "failed")),
        ..template.clone()
    };
    let records = [
        record("test__a", 1_000, 1_040, true),
        record("test__b", 1_010, 1_100, false),
        record("test__a", 2_000, 2_025, false),
        record("test__b", 3_000, 3_010, true),
        record("test__a", 4_000, 4_000, true),
        // A clock that stepped back: no time, never negative time.
        record("test__c", 5_000, 4_990, true),
    ];
    let stats = ToolCallStats::from_records(&records);
    assert_eq!((stats.calls, stats.ok, stats.failed), (6, 4, 2));
    assert_eq!((stats.total_ms, stats.max_ms), (165, 90));
    let counts = |calls, ok, total_ms, max_ms| ToolCallCounts {
        calls,
        ok,
        failed: calls - ok,
        waiting: 0,
        total_ms,
        max_ms,
    };
    let by_tool: Vec<(&str, ToolCallCounts)> =
        stats.by_tool.iter().map(|(name, counts)| (name.as_str(), *counts)).collect();
    assert_eq!(
        by_tool,
        [
            ("test__a", counts(3, 2, 65, 40)),
            ("test__b", counts(2, 1, 100, 90)),
            ("test__c", counts(1, 1, 0, 0)),
        ]
    );
    assert_eq!(ToolCallStats::from_records(&[]), ToolCallStats::default());
}

/// Counts the calls the after-hook saw, and blocks "forbidden" notes.
/// The guard (blocks "forbidden"), a hook that rewrites "draft" into "final", one that counts
/// the calls past the before-call hooks, and one that replaces the result of "secret" notes.
fn hooked(seen: &Arc<AtomicUsize>) -> ToolRunner {
    let seen = Arc::clone(seen);
    builder()
        .before_call(guard())
        .before_call(BeforeCallFn::new("finalise", |call| {
            Ok(if call.arguments()["text"] == "draft" {
                BeforeCallDecision::Rewrite { arguments: json!({"text": "final"}) }
            } else {
                BeforeCallDecision::Allow
            })
        }))
        .after_call(AfterCallFn::new("count", move |_| {
            seen.fetch_add(1, Ordering::SeqCst);
            Ok(AfterCallDecision::Keep)
        }))
        .after_call(AfterCallFn::new("hide_secrets", |call| {
            Ok(match call.outcome {
                Ok(output) if output.structured() == Some(&json!({"text": "secret"})) => {
                    AfterCallDecision::Replace(ToolOutput::from(
                        json!({"text": "[hidden]", "internal": "kept back"}),
                    ))
                }
                _ => AfterCallDecision::Keep,
            })
        }))
        .build()
}

#[tokio::test]
async fn hooks_apply_on_direct_exec() {
    let seen = Arc::new(AtomicUsize::new(0));
    let runner = hooked(&seen);
    let blocked = runner.exec("test__note", r#"{"text": "forbidden"}"#, &ctx()).await;
    assert_eq!(blocked.error_code(), Some(Code::HookBlocked));
    let ok = runner.exec("test__note", r#"{"text": "fine"}"#, &ctx()).await;
    assert!(ok.is_ok());
    assert_eq!(seen.load(Ordering::SeqCst), 1, "only the call past the before-hooks");
    let rewritten = runner.exec("test__note", r#"{"text": "draft"}"#, &ctx()).await;
    assert_eq!(rewritten.value(), Some(&json!({"text": "final"})));
    let replaced = runner.exec("test__note", r#"{"text": "secret"}"#, &ctx()).await;
    assert_eq!(replaced.value(), Some(&json!({"text": "[hidden]"})));
}

#[tokio::test]
async fn hooks_apply_in_the_agent_loop() {
    let seen = Arc::new(AtomicUsize::new(0));
    let model = ScriptedModel::new([
        ScriptedTurn::openai_calls(&[
            ("a", "test__note", r#"{"text": "forbidden"}"#),
            ("b", "test__note", r#"{"text": "fine"}"#),
            ("c", "test__note", r#"{"text": "draft"}"#),
            ("d", "test__note", r#"{"text": "secret"}"#),
        ]),
        ScriptedTurn::openai_text("done"),
    ]);
    let model = Arc::new(model);
    let agent = Agent::new(model.clone(), hooked(&seen));
    let output = agent.run(vec![Message::user("go")], &ctx(), &|_| {}).await;
    let codes: Vec<_> =
        output.done.records.iter().map(|r| r.error.as_ref().map(|e| e.code)).collect();
    assert_eq!(codes, [Some(Code::HookBlocked), None, None, None]);
    assert_eq!(seen.load(Ordering::SeqCst), 3);
    let stats = &output.done.tool_stats;
    assert_eq!((stats.calls, stats.ok, stats.failed), (4, 3, 1));
    assert_eq!(stats.by_tool["test__note"].calls, 4);
    // What the model was sent: what the hooks made of the calls.
    let requests = model.requests();
    let Some(Message::ToolResults(results)) = requests[1].messages.last() else {
        panic!("the model got no results")
    };
    let sent: Vec<Option<&Value>> = results
        .iter()
        .map(|result| match &result.outcome {
            ToolOutcome::Done(output) => output.structured(),
            _ => None,
        })
        .collect();
    let expected = [json!({"text": "fine"}), json!({"text": "final"}), json!({"text": "[hidden]"})];
    assert_eq!(sent, [None, Some(&expected[0]), Some(&expected[1]), Some(&expected[2])]);
}

#[tokio::test]
async fn the_agent_reports_each_call_it_runs_with_the_arguments_that_run_when_asked() {
    let script = || {
        ScriptedModel::new([
            ScriptedTurn::openai_calls(&[
                ("a", "test__note", r#"{"text": "forbidden"}"#),
                ("b", "test__note", r#"{ "text":"draft" }"#),
            ]),
            ScriptedTurn::openai_text("done"),
        ])
    };
    for asked in [false, true] {
        let seen = Arc::new(AtomicUsize::new(0));
        let config = AgentConfig { arguments_in_events: asked, ..AgentConfig::default() };
        let agent = Agent::new(Arc::new(script()), hooked(&seen)).with_config(config);
        let events = Mutex::new(Vec::new());
        agent
            .run(vec![Message::user("go")], &ctx(), &|event| events.lock().unwrap().push(event))
            .await;
        let events = events.into_inner().unwrap();
        let running: Vec<(&str, Option<&Value>)> = events
            .iter()
            .filter_map(|event| match event {
                AgentEvent::ToolCallRunning { id, arguments, .. } => {
                    Some((id.as_str(), arguments.as_ref()))
                }
                _ => None,
            })
            .collect();
        // The blocked call never runs; the other runs with what the hook made of it.
        let ran = json!({"text": "final"});
        assert_eq!(running, [("b", asked.then_some(&ran))]);
        // Announced by the stream, then run, then answered.
        let marks: Vec<&str> = events
            .iter()
            .filter_map(|event| match event {
                AgentEvent::ToolCallStarted { id, .. } if id == "b" => Some("started"),
                AgentEvent::ToolCallRunning { .. } => Some("running"),
                AgentEvent::ToolCallResult { id, .. } if id == "b" => Some("result"),
                _ => None,
            })
            .collect();
        assert_eq!(marks, ["started", "running", "result"]);
        let json = serde_json::to_value(
            events
                .iter()
                .find(|event| matches!(event, AgentEvent::ToolCallRunning { .. }))
                .unwrap(),
        )
        .unwrap();
        assert_eq!(json.get("arguments").is_some(), asked, "{json}");
    }
}

#[tokio::test]
async fn hooks_apply_on_the_mcp_server() {
    let seen = Arc::new(AtomicUsize::new(0));
    let server = McpServer::builder(hooked(&seen)).build();
    let (client_io, server_io) = tokio::io::duplex(64 * 1024);
    tokio::spawn(async move {
        if let Ok(running) = server.serve(server_io).await {
            let _ = running.waiting().await;
        }
    });
    let client = ().serve(client_io).await.unwrap();
    let call = |text: &str| {
        let Value::Object(arguments) = json!({"text": text}) else { unreachable!() };
        CallToolRequestParams::new("test__note".to_owned()).with_arguments(arguments)
    };
    let blocked = client.call_tool(call("forbidden")).await.unwrap();
    assert_eq!(blocked.is_error, Some(true));
    assert_eq!(blocked.content[0].as_text().unwrap().text, "that note is not allowed");
    let ok = client.call_tool(call("fine")).await.unwrap();
    assert_eq!(ok.structured_content, Some(json!({"text": "fine"})));
    assert_eq!(seen.load(Ordering::SeqCst), 1);
    let rewritten = client.call_tool(call("draft")).await.unwrap();
    assert_eq!(rewritten.structured_content, Some(json!({"text": "final"})));
    let replaced = client.call_tool(call("secret")).await.unwrap();
    assert_eq!(replaced.structured_content, Some(json!({"text": "[hidden]"})));
    client.cancel().await.unwrap();
}

// Tools that call tools.

#[derive(Serialize, Deserialize, ToolSchema)]
struct Hop {
    depth: u64,
    parent: Option<String>,
    error: Option<String>,
    leaked: bool,
    secret: Option<String>,
}

/// Follows `path`: calls its first tool with the rest, or answers when it is empty.
async fn relay(
    path: Vec<String>,
    ctx: &ToolInvocationContext,
    caps: &ToolCapabilities,
) -> Result<Hop, ToolError> {
    let Some((next, rest)) = path.split_first() else {
        return Ok(Hop {
            depth: ctx.call_depth() as u64,
            parent: ctx.parent_call_id().map(str::to_owned),
            error: None,
            leaked: false,
            secret: Some("s3cret".into()),
        });
    };
    let child = caps.get::<ToolCalls>()?.call(next, json!({"path": rest})).await;
    Ok(match child.value() {
        Some(value) => Hop {
            leaked: value.get("secret").is_some() || value["leaked"] == true,
            ..serde_json::from_value(value.clone()).map_err(|e| ToolError::new(e.to_string()))?
        },
        None => Hop {
            depth: 0,
            parent: None,
            error: child.error().map(|e| format!("{}: {}", e.code, e.message)),
            leaked: false,
            secret: None,
        },
    })
}

macro_rules! relay_tool {
    ($ty:ident, $name:literal) => {
        /// Relay along a path of tools.
        #[tool(name = $name, effect = read_only, redact = ["depth", "parent", "error", "leaked"], capabilities = [ToolCalls])]
        struct $ty {
            path: Vec<String>,
        }

        impl Tool for $ty {
            type Output = Hop;
            async fn run(self, ctx: &ToolInvocationContext, caps: &ToolCapabilities) -> Result<Hop, ToolError> {
                relay(self.path, ctx, caps).await
            }
        }
    };
}

relay_tool!(RelayA, "relay__a");
relay_tool!(RelayB, "relay__b");
relay_tool!(RelayC, "relay__c");
relay_tool!(RelayD, "relay__d");
relay_tool!(RelayE, "relay__e");

fn relays(policy: &str, events: &CollectingSink) -> ToolRunner {
    let catalog = ToolCatalog::builder()
        .register::<RelayA>()
        .register::<RelayB>()
        .register::<RelayC>()
        .register::<RelayD>()
        .register::<RelayE>()
        .capability(ToolCalls::granted())
        .build()
        .unwrap();
    ToolRunner::builder(catalog)
        .policy(ToolPolicy::from_json(policy).unwrap())
        .event_sink(events.clone())
        .build()
}

const RELAYS: &str = r#"{"allowed_tools": ["relay__*"]}"#;

#[tokio::test]
async fn a_tool_calls_a_tool_through_the_runner_and_gets_the_redacted_result() {
    let events = CollectingSink::new();
    let runner = relays(RELAYS, &events);
    let result = runner.exec("relay__a", json!({"path": ["relay__b"]}), &ctx()).await;
    let hop: Hop = serde_json::from_value(result.value().unwrap().clone()).unwrap();
    assert_eq!((hop.depth, hop.parent.as_deref(), hop.error), (1, Some("call_1"), None));
    assert!(!hop.leaked, "the calling tool got the child's redacted result");
    let events = events.take();
    let names: Vec<(&str, &str)> = events
        .iter()
        .map(|event| match event {
            ToolEvent::ToolCallStart { tool_name, .. } => ("start", tool_name.as_str()),
            ToolEvent::ToolCallResult { tool_name, .. } => ("result", tool_name.as_str()),
            _ => ("other", ""),
        })
        .collect();
    assert_eq!(
        names,
        [
            ("start", "relay__a"),
            ("start", "relay__b"),
            ("result", "relay__b"),
            ("result", "relay__a")
        ]
    );
    assert_ne!(events[1].tool_call_id(), "call_1", "the child has a call id of its own");
}

#[tokio::test]
async fn nesting_is_allowed_to_the_depth_limit_and_refused_past_it() {
    let runner = relays(RELAYS, &CollectingSink::new());
    let at_limit = runner
        .exec("relay__a", json!({"path": ["relay__b", "relay__c", "relay__d"]}), &ctx())
        .await;
    assert_eq!(at_limit.value().unwrap()["depth"], 3);
    assert_eq!(at_limit.value().unwrap()["error"], Value::Null);

    let past = runner
        .exec("relay__a", json!({"path": ["relay__b", "relay__c", "relay__d", "relay__e"]}), &ctx())
        .await;
    let error = past.value().unwrap()["error"].as_str().unwrap().to_owned();
    assert!(error.starts_with("call_depth_exceeded"), "{error}");
    assert!(
        error.contains("`relay__a` -> `relay__b` -> `relay__c` -> `relay__d` -> `relay__e`"),
        "{error}"
    );

    let shallow = relays(
        r#"{"allowed_tools": ["relay__*"], "tools": {"relay__c": {"max_call_depth": 1}}}"#,
        &CollectingSink::new(),
    );
    let refused = shallow.exec("relay__a", json!({"path": ["relay__b", "relay__c"]}), &ctx()).await;
    assert!(refused.value().unwrap()["error"].as_str().unwrap().starts_with("call_depth_exceeded"));
}

#[tokio::test]
async fn a_cycle_of_tool_calls_is_refused_naming_the_chain() {
    let runner = relays(RELAYS, &CollectingSink::new());
    let result = runner.exec("relay__a", json!({"path": ["relay__b", "relay__a"]}), &ctx()).await;
    let error = result.value().unwrap()["error"].as_str().unwrap().to_owned();
    assert!(error.starts_with("call_cycle"), "{error}");
    assert!(error.contains("`relay__a` -> `relay__b` -> `relay__a`"), "{error}");
}

#[tokio::test]
async fn policy_applies_to_the_called_tool() {
    let runner = relays(r#"{"allowed_tools": ["relay__a", "relay__b"]}"#, &CollectingSink::new());
    let result = runner.exec("relay__a", json!({"path": ["relay__c"]}), &ctx()).await;
    let error = result.value().unwrap()["error"].as_str().unwrap().to_owned();
    assert!(error.starts_with("policy_denied"), "{error}");
}

#[tokio::test]
async fn hooks_apply_to_the_called_tool() {
    let catalog = ToolCatalog::builder()
        .register::<RelayA>()
        .register::<RelayB>()
        .capability(ToolCalls::granted())
        .build()
        .unwrap();
    let no_b = BeforeCallFn::new("no_b", |call| {
        Ok(if call.tool.name() == "relay__b" {
            assert_eq!(call.ctx.call_depth(), 1);
            BeforeCallDecision::block("b is closed")
        } else {
            BeforeCallDecision::Allow
        })
    });
    let runner = ToolRunner::builder(catalog)
        .policy(ToolPolicy::from_json(RELAYS).unwrap())
        .before_call(no_b)
        .build();
    let result = runner.exec("relay__a", json!({"path": ["relay__b"]}), &ctx()).await;
    assert_eq!(result.value().unwrap()["error"], "hook_blocked: b is closed");
}
