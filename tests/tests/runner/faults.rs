//! Faults in the runner: exactly one result whatever panics (hooks, event
//! sinks) or whoever stops waiting; the time budget covers the hooks and the broker; a call's
//! credential never leaves in its error, progress or log text.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_trait::async_trait;
use tool_runtime::catalog::ToolCatalog;
use tool_runtime::content::ToolOutput;
use tool_runtime::policy::ToolPolicy;
use tool_runtime::prelude::*;
use tool_runtime::runner::{AfterCall, AfterCallDecision, AfterCallHook, HookError, ToolRunner};
use tool_runtime::runner::{ApprovalDecision, ApprovalRequest, Approver, Authorizer, AuthzDenied};
use tool_runtime::runner::{BeforeCall, BeforeCallDecision, BeforeCallHook};
use tool_runtime::runtime::ExecError;
use tool_runtime::runtime::{
    Arguments, Auth, BoundToolRuntime, BrokerError, CallStep, CollectingSink, ConnectionBroker,
    Credential, DynamicTool, EventOutcome, EventSink, LogLevel, LogMessage, LogReporter, Progress,
    ProgressReporter, ToolErrorCode as Code, ToolEvent, ValidatedArgs,
};
use tool_runtime::schema::{ArgumentsError, ValidationErrors};
use tool_runtime::spec::ToolSpec;
use tool_tests::events::{assert_paired, assert_refused_before_start, runner_marks};
use tool_tests::fixtures::context;

const SECRET: &str = "sk-live-HARDEN-91c2";

/// Echo a word.
#[tool(name = "test__echo", effect = read_only, redact = ["word"])]
struct Echo {
    word: String,
}

#[derive(Serialize, ToolSchema)]
struct Word {
    word: String,
}

impl Tool for Echo {
    type Output = Word;
    async fn run(self, _: &ToolInvocationContext, _: &ToolCapabilities) -> Result<Word, ToolError> {
        Ok(Word { word: self.word })
    }
}

/// Never finishes.
#[tool(name = "test__hang", effect = read_only, redact = ["word"])]
struct Hang {}

impl Tool for Hang {
    type Output = Word;
    async fn run(self, _: &ToolInvocationContext, _: &ToolCapabilities) -> Result<Word, ToolError> {
        std::future::pending().await
    }
}

/// Leaks its credential into its progress and its error.
#[tool(name = "test__leak", effect = read_only, redact = ["word"], requires_connection, capabilities = [Auth])]
struct Leak {}

impl Tool for Leak {
    type Output = Word;
    async fn run(
        self,
        ctx: &ToolInvocationContext,
        caps: &ToolCapabilities,
    ) -> Result<Word, ToolError> {
        let header = caps.get::<Auth>()?.authorization_header();
        ctx.report_progress(1.0, None, format!("calling with {header}"));
        ctx.log(LogLevel::Warning, format!("retrying with {header}"));
        Err(ToolError::new(format!("the server refused {header}")))
    }
}

#[derive(Debug)]
struct Vault {
    delay: Duration,
    panics: bool,
}

#[async_trait]
impl ConnectionBroker for Vault {
    async fn credential(
        &self,
        _: &ToolInvocationContext,
        _: &str,
    ) -> Result<Credential, BrokerError> {
        tokio::time::sleep(self.delay).await;
        assert!(!self.panics, "broker bug");
        Ok(Credential::new(SECRET))
    }
}

#[derive(Debug)]
struct Hooks {
    delay: Duration,
    panics: bool,
}

#[async_trait]
impl Authorizer for Hooks {
    async fn authorize(&self, _: &ToolInvocationContext, _: &ToolSpec) -> Result<(), AuthzDenied> {
        tokio::time::sleep(self.delay).await;
        assert!(!self.panics, "authorizer bug");
        Ok(())
    }
}

#[async_trait]
impl Approver for Hooks {
    async fn review(&self, _: &ApprovalRequest<'_>) -> ApprovalDecision {
        tokio::time::sleep(self.delay).await;
        assert!(!self.panics, "approver bug");
        ApprovalDecision::Denied { message: "no".into() }
    }
}

/// Records every event and panics on the kinds it is told to (after recording them).
#[derive(Debug, Default)]
struct Grumpy {
    events: Mutex<Vec<ToolEvent>>,
    on_start: bool,
    on_result: bool,
    on_progress: bool,
    on_enabled: bool,
}

impl EventSink for Grumpy {
    fn emit(&self, event: ToolEvent) {
        let panics = match &event {
            ToolEvent::ToolCallStart { .. } => self.on_start,
            ToolEvent::ToolCallResult { .. } => self.on_result,
            _ => self.on_progress,
        };
        self.events.lock().unwrap_or_else(std::sync::PoisonError::into_inner).push(event);
        assert!(!panics, "sink bug");
    }

    fn enabled(&self) -> bool {
        assert!(!self.on_enabled, "sink bug");
        true
    }
}

fn catalog(vault: Vault) -> ToolCatalog {
    ToolCatalog::builder()
        .register::<Echo>()
        .register::<Hang>()
        .register::<Leak>()
        .connection_broker(Arc::new(vault))
        .build()
        .unwrap()
}

fn policy(extra: &str) -> ToolPolicy {
    ToolPolicy::from_json(&format!(
        r#"{{"allowed_tools": ["test__*"], "budgets": {{"max_runtime_ms": 100}},
            "connections": {{"allowed_connection_ids": ["conn-a"]}} {extra}}}"#
    ))
    .unwrap()
}

fn ctx() -> ToolInvocationContext {
    context("run-1", "u", "t")
        .with_tool_call_id("call_1")
        .with_connection_id("conn-a")
        .with_requested_connections(["conn-a"])
}

fn quick() -> Vault {
    Vault { delay: Duration::ZERO, panics: false }
}

#[tokio::test]
async fn a_sink_that_panics_on_start_still_gives_one_result() {
    let sink = Arc::new(Grumpy { on_start: true, ..Grumpy::default() });
    let runner =
        ToolRunner::builder(catalog(quick())).policy(policy("")).event_sink(sink.clone()).build();
    let result = runner.exec("test__echo", r#"{"word": "hi"}"#, &ctx()).await;
    assert_eq!(result.error_code(), Some(Code::Execution));
    assert_eq!(assert_paired(runner_marks(&sink.events.lock().unwrap())), ["call_1"]);
}

#[tokio::test]
async fn a_sink_that_panics_on_the_result_or_progress_leaves_the_result_to_the_caller() {
    let sink = Arc::new(Grumpy { on_result: true, on_progress: true, ..Grumpy::default() });
    let runner =
        ToolRunner::builder(catalog(quick())).policy(policy("")).event_sink(sink.clone()).build();
    let result = runner.exec("test__echo", r#"{"word": "hi"}"#, &ctx()).await;
    assert_eq!(result.value(), Some(&serde_json::json!({"word": "hi"})));
    assert_eq!(assert_paired(runner_marks(&sink.events.lock().unwrap())), ["call_1"]);
    // A progress report that makes the sink panic does not fail the tool.
    let leak = runner.exec("test__leak", "{}", &ctx()).await;
    assert_eq!(leak.error_code(), Some(Code::Execution));
    assert!(leak.error().unwrap().message.starts_with("the server refused"));
}

/// A sink whose `enabled` panics is taken as disabled: the call runs and its caller gets the
/// result, and the sink is sent no event (no start, no result).
#[tokio::test]
async fn a_sink_whose_enabled_panics_gets_no_events_and_the_call_still_runs() {
    let sink = Arc::new(Grumpy { on_enabled: true, ..Grumpy::default() });
    let runner =
        ToolRunner::builder(catalog(quick())).policy(policy("")).event_sink(sink.clone()).build();
    let result = runner.exec("test__echo", r#"{"word": "hi"}"#, &ctx()).await;
    assert_eq!(result.value(), Some(&serde_json::json!({"word": "hi"})));
    let events = sink.events.lock().unwrap();
    assert!(events.is_empty(), "{events:?}");
}

#[tokio::test]
async fn panicking_hooks_and_brokers_give_a_typed_result() {
    let hooks = || Arc::new(Hooks { delay: Duration::ZERO, panics: true });
    let sink = CollectingSink::new();
    let authorized = ToolRunner::builder(catalog(quick()))
        .policy(policy(""))
        .authorizer(hooks())
        .event_sink(sink.clone())
        .build();
    let result = authorized.exec("test__echo", r#"{"word": "hi"}"#, &ctx()).await;
    assert_eq!(result.error_code(), Some(Code::Execution));
    // Refused before its start: one result, no start.
    assert_eq!(assert_refused_before_start(runner_marks(&sink.take())), ["call_1"]);

    let approved = ToolRunner::builder(catalog(quick()))
        .policy(policy(r#", "require_approval": ["read_only"]"#))
        .approver(hooks())
        .event_sink(sink.clone())
        .build();
    let result = approved.exec("test__echo", r#"{"word": "hi"}"#, &ctx()).await;
    assert_eq!(result.error_code(), Some(Code::Execution));
    assert_eq!(assert_refused_before_start(runner_marks(&sink.take())), ["call_1"]);

    let brokered = ToolRunner::builder(catalog(Vault { delay: Duration::ZERO, panics: true }))
        .policy(policy(""))
        .event_sink(sink.clone())
        .build();
    let result = brokered.exec("test__leak", "{}", &ctx()).await;
    assert_eq!(result.error_code(), Some(Code::Execution));
    assert_eq!(assert_refused_before_start(runner_marks(&sink.take())), ["call_1"]);
}

#[tokio::test(start_paused = true)]
async fn a_caller_that_stops_waiting_still_leaves_a_cancelled_result() {
    let sink = CollectingSink::new();
    let runner =
        ToolRunner::builder(catalog(quick())).policy(policy("")).event_sink(sink.clone()).build();
    let ctx = ctx();
    let call = runner.exec("test__hang", "{}", &ctx);
    // The caller gives up before the call's own budget would end it.
    assert!(tokio::time::timeout(Duration::from_millis(10), call).await.is_err());
    let events = sink.events();
    assert_eq!(assert_paired(runner_marks(&events)), ["call_1"]);
    let Some(ToolEvent::ToolCallResult {
        tool_call_id, outcome: EventOutcome::Err { error }, ..
    }) = events.last()
    else {
        panic!("no result event: {events:?}")
    };
    assert_eq!(tool_call_id, "call_1");
    assert_eq!(error.code, Code::Cancelled);

    // A call dropped before its start owes nothing.
    let sink = CollectingSink::new();
    let runner =
        ToolRunner::builder(catalog(Vault { delay: Duration::from_secs(5), panics: false }))
            .policy(policy(r#", "tools": {"test__leak": {"max_runtime_ms": 60000}}"#))
            .event_sink(sink.clone())
            .build();
    let call = runner.exec("test__leak", "{}", &ctx);
    assert!(tokio::time::timeout(Duration::from_millis(10), call).await.is_err());
    assert!(sink.events().is_empty());
}

#[tokio::test(start_paused = true)]
async fn the_time_budget_covers_the_authorizer_the_approver_and_the_broker() {
    let slow = || Arc::new(Hooks { delay: Duration::from_secs(3600), panics: false });
    let sink = CollectingSink::new();
    let timed_out_before_start = |sink: &CollectingSink| {
        let events = sink.take();
        assert_eq!(assert_refused_before_start(runner_marks(&events)), ["call_1"]);
        assert!(
            matches!(events.last(), Some(ToolEvent::ToolCallResult { outcome: EventOutcome::Err { error }, .. }) if error.code == Code::Timeout),
            "{events:?}"
        );
    };
    let authorized = ToolRunner::builder(catalog(quick()))
        .policy(policy(""))
        .authorizer(slow())
        .event_sink(sink.clone())
        .build();
    let result = authorized.exec("test__echo", r#"{"word": "hi"}"#, &ctx()).await;
    assert_eq!(result.error_code(), Some(Code::Timeout));
    assert!(result.error().unwrap().message.contains("the authorizer"));
    timed_out_before_start(&sink);

    let approved = ToolRunner::builder(catalog(quick()))
        .policy(policy(r#", "require_approval": ["read_only"]"#))
        .approver(slow())
        .event_sink(sink.clone())
        .build();
    let result = approved.exec("test__echo", r#"{"word": "hi"}"#, &ctx()).await;
    assert_eq!(result.error_code(), Some(Code::Timeout));
    assert!(result.error().unwrap().message.contains("the approver"));
    timed_out_before_start(&sink);

    let brokered =
        ToolRunner::builder(catalog(Vault { delay: Duration::from_secs(3600), panics: false }))
            .policy(policy(""))
            .event_sink(sink.clone())
            .build();
    let result = brokered.exec("test__leak", "{}", &ctx()).await;
    assert_eq!(result.error_code(), Some(Code::Timeout));
    assert!(result.error().unwrap().message.contains("the credential broker"));
    timed_out_before_start(&sink);
}

/// A before-call hook that takes its duration to allow every call.
#[derive(Debug)]
struct SlowBefore(Duration);

#[async_trait]
impl BeforeCallHook for SlowBefore {
    fn name(&self) -> &str {
        "slow_before"
    }

    async fn before_call(&self, _: &BeforeCall<'_>) -> Result<BeforeCallDecision, HookError> {
        tokio::time::sleep(self.0).await;
        Ok(BeforeCallDecision::Allow)
    }
}

/// One deadline covers every wait of a call: steps that each take 60 ms, within the 100 ms
/// budget one by one, time the call out together at 100 ms. A budget per step would let each
/// of them finish.
#[tokio::test(start_paused = true)]
async fn steps_each_within_the_budget_time_out_together_on_one_deadline() {
    let step = Duration::from_millis(60);
    let catalog = || {
        let nap = DynamicTool::builder(
            "test__nap",
            "Nap 60 ms.",
            serde_json::json!({"type": "object", "properties": {}, "additionalProperties": false}),
        )
        .effect(ToolEffect::ReadOnly)
        .redact_all()
        .build(move |_, _, _| async move {
            tokio::time::sleep(step).await;
            Ok(serde_json::json!("rested"))
        })
        .unwrap();
        ToolCatalog::builder().register_dynamic(nap).build().unwrap()
    };

    // The authorizer, then a before-call hook: the hook runs out of the budget the authorizer
    // spent, before the call starts.
    let sink = CollectingSink::new();
    let runner = ToolRunner::builder(catalog())
        .policy(policy(""))
        .authorizer(Arc::new(Hooks { delay: step, panics: false }))
        .before_call(SlowBefore(step))
        .event_sink(sink.clone())
        .build();
    let (error, events) = times_out_at_100_ms(&runner, &sink, CallStep::Hook).await;
    assert!(error.message.contains("the before-call hooks"), "{error}");
    assert_eq!(assert_refused_before_start(runner_marks(&events)), ["call_1"]);

    // A before-call hook, then the tool: the tool runs out of what the hook left.
    let runner = ToolRunner::builder(catalog())
        .policy(policy(""))
        .before_call(SlowBefore(step))
        .event_sink(sink.clone())
        .build();
    let (_, events) = times_out_at_100_ms(&runner, &sink, CallStep::Run).await;
    assert_eq!(assert_paired(runner_marks(&events)), ["call_1"]);

    // Each step alone fits: the same hook and tool under a budget of 200 ms finish.
    let roomy = ToolRunner::builder(catalog())
        .policy(policy(r#", "tools": {"test__nap": {"max_runtime_ms": 200}}"#))
        .authorizer(Arc::new(Hooks { delay: step, panics: false }))
        .before_call(SlowBefore(step))
        .build();
    let result = roomy.exec("test__nap", "{}", &ctx()).await;
    assert_eq!(result.value(), Some(&serde_json::json!("rested")));
}

/// Runs `test__nap` on `runner` (budget 100 ms, steps of 60 ms) and checks it timed out at
/// `step` when the one deadline ran out (at 100 ms, before a second 60 ms step could end), its
/// last event a timeout; gives the error and the events.
async fn times_out_at_100_ms(
    runner: &ToolRunner,
    sink: &CollectingSink,
    step: CallStep,
) -> (ExecError, Vec<ToolEvent>) {
    let started = tokio::time::Instant::now();
    let result = runner.exec("test__nap", "{}", &ctx()).await;
    let error = result.error().unwrap().clone();
    assert_eq!((error.code, error.step), (Code::Timeout, Some(step)), "{error}");
    let ended = started.elapsed();
    assert!(
        ended >= Duration::from_millis(100) && ended < Duration::from_millis(120),
        "ended at {ended:?}"
    );
    let events = sink.take();
    assert!(
        matches!(events.last(), Some(ToolEvent::ToolCallResult { outcome: EventOutcome::Err { error }, .. }) if error.code == Code::Timeout),
        "{events:?}"
    );
    (error, events)
}

/// An after-call hook that takes an hour.
#[derive(Debug)]
struct SlowAfter;

#[async_trait]
impl AfterCallHook for SlowAfter {
    fn name(&self) -> &str {
        "slow_after"
    }

    async fn after_call(&self, _: &AfterCall<'_>) -> Result<AfterCallDecision, HookError> {
        tokio::time::sleep(Duration::from_secs(3600)).await;
        Ok(AfterCallDecision::Keep)
    }
}

#[tokio::test(start_paused = true)]
async fn the_time_budget_covers_the_after_call_hooks() {
    let sink = CollectingSink::new();
    let runner = ToolRunner::builder(catalog(quick()))
        .policy(policy(""))
        .after_call(SlowAfter)
        .event_sink(sink.clone())
        .build();
    let started = tokio::time::Instant::now();
    let result = runner.exec("test__echo", r#"{"word": "hi"}"#, &ctx()).await;
    let error = result.error().unwrap();
    assert_eq!((error.code, error.step), (Code::Timeout, Some(CallStep::Hook)));
    assert!(error.message.contains("the after-call hooks"), "{error}");
    // Within the call's budget (100 ms), not the hook's hour.
    assert!(started.elapsed() <= Duration::from_millis(100), "{:?}", started.elapsed());
    assert_eq!(assert_paired(runner_marks(&sink.events())), ["call_1"]);
}

#[tokio::test]
async fn a_calls_credential_is_scrubbed_from_its_error_and_progress() {
    let sink = CollectingSink::new();
    let runner =
        ToolRunner::builder(catalog(quick())).policy(policy("")).event_sink(sink.clone()).build();
    let forwarded = Arc::new(Mutex::new(Vec::new()));
    let seen = Arc::clone(&forwarded);
    let ctx = ctx().with_progress(ProgressReporter::new(move |progress: Progress| {
        seen.lock().unwrap().push(progress.message.unwrap_or_default());
    }));
    let result = runner.exec("test__leak", "{}", &ctx).await;
    let message = &result.error().unwrap().message;
    assert_eq!(message, "the server refused Bearer [redacted]");
    let shown = format!("{:?} {:?}", sink.events(), forwarded.lock().unwrap());
    assert!(!shown.contains(SECRET), "{shown}");
    assert!(shown.contains("calling with Bearer [redacted]"), "{shown}");

    // Without a sink, the progress the caller receives is scrubbed too.
    let quiet = ToolRunner::builder(catalog(quick())).policy(policy("")).build();
    forwarded.lock().unwrap().clear();
    let result = quiet.exec("test__leak", "{}", &ctx).await;
    assert!(!result.error().unwrap().message.contains(SECRET));
    assert_eq!(*forwarded.lock().unwrap(), ["calling with Bearer [redacted]"]);
}

#[tokio::test]
async fn a_calls_credential_is_scrubbed_from_its_log_messages() {
    let logged = Arc::new(Mutex::new(Vec::new()));
    let seen = Arc::clone(&logged);
    let ctx = ctx().with_logger(LogReporter::new(move |m: LogMessage| {
        seen.lock().unwrap().push(m.message);
    }));
    let with_events = ToolRunner::builder(catalog(quick()))
        .policy(policy(""))
        .event_sink(CollectingSink::new())
        .build();
    let quiet = ToolRunner::builder(catalog(quick())).policy(policy("")).build();
    for runner in [with_events, quiet] {
        logged.lock().unwrap().clear();
        let result = runner.exec("test__leak", "{}", &ctx).await;
        assert_eq!(result.error_code(), Some(Code::Execution));
        assert_eq!(*logged.lock().unwrap(), ["retrying with Bearer [redacted]"]);
    }
}

/// A tool whose output check panics (as a validator of an untrusted schema might).
#[derive(Debug)]
struct PanickingCheck(DynamicTool);

#[async_trait]
impl BoundToolRuntime for PanickingCheck {
    fn spec(&self) -> &ToolSpec {
        self.0.spec()
    }

    fn arguments(&self, args: Arguments<'_>) -> Result<ValidatedArgs, ArgumentsError> {
        self.0.arguments(args)
    }

    async fn exec(
        &self,
        args: ValidatedArgs,
        ctx: &ToolInvocationContext,
        caps: &ToolCapabilities,
    ) -> Result<ToolOutput, ToolError> {
        self.0.exec(args, ctx, caps).await
    }

    fn validate_output(&self, _: &serde_json::Value) -> Result<(), ValidationErrors> {
        panic!("output validator bug")
    }
}

#[tokio::test]
async fn an_output_check_that_panics_after_the_start_still_gives_one_result() {
    let schema = serde_json::json!({"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"], "additionalProperties": false});
    let tool = DynamicTool::builder("test__count", "Count.", schema.clone())
        .allow_open_schema()
        .effect(ToolEffect::ReadOnly)
        .output_schema(schema)
        .redact(["n"])
        .build(|args, _, _| async move { Ok(args) })
        .unwrap();
    let catalog = ToolCatalog::builder()
        .register_bound(Arc::new(PanickingCheck(tool)), "a panicking output check".into())
        .build()
        .unwrap();
    let sink = CollectingSink::new();
    let runner = ToolRunner::builder(catalog).policy(policy("")).event_sink(sink.clone()).build();
    let result = runner.exec("test__count", r#"{"n": 1}"#, &ctx()).await;
    assert_eq!(result.error_code(), Some(Code::Execution));
    let events = sink.events();
    assert_eq!(assert_paired(runner_marks(&events)), ["call_1"], "{events:?}");
    assert!(matches!(events.last(), Some(ToolEvent::ToolCallResult { .. })), "{events:?}");
}
