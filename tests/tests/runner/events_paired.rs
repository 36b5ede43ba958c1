//! Events in order, paired. Every id that starts gets exactly one result,
//! every result had a start (in the agent's events and the runner's), and nothing of a call
//! is emitted after its result.

use std::sync::{Arc, Mutex};

use tool_runtime::adapters::{Adapter, OpenAiChat, Provider, StreamEvent};
use tool_runtime::agent::{Agent, Message, ScriptedModel, ScriptedTurn, StopReason};
use tool_runtime::catalog::ToolCatalog;
use tool_runtime::policy::ToolPolicy;
use tool_runtime::prelude::*;
use tool_runtime::runner::ToolRunner;
use tool_runtime::runtime::{
    CollectingSink, LogLevel, LogMessage, LogReporter, Progress, ProgressReporter, ToolEvent,
};
use tool_tests::events::{Mark, agent_marks, assert_paired, runner_marks};
use tool_tests::fixtures::{Echo, Word, context};

const WRAPPED: &str = r#"{"tool_uses": [
    {"recipient_name": "functions.text__echo", "parameters": {"word": "a"}},
    {"recipient_name": "functions.text__echo", "parameters": {"word": "b"}}
]}"#;

fn runner(sink: &CollectingSink) -> ToolRunner {
    let catalog = ToolCatalog::builder().register::<Echo>().build().unwrap();
    let policy = ToolPolicy::from_json(r#"{"allowed_tools": ["text__*"]}"#).unwrap();
    ToolRunner::builder(catalog).policy(policy).event_sink(sink.clone()).build()
}

fn ctx() -> ToolInvocationContext {
    context("run-1", "u", "t")
}

#[test]
fn a_split_wrapper_starts_each_inner_call_under_the_id_its_result_carries() {
    let body = tool_runtime::adapters::openai_sse::calls(&[(
        "call_P1",
        "multi_tool_use.parallel",
        WRAPPED,
    )]);
    let mut session = OpenAiChat::new().stream();
    let mut started = Vec::new();
    let mut events = session.feed(&body);
    events.extend(session.close());
    for event in events {
        if let StreamEvent::CallStarted { id, name, .. } = event {
            started.push((id, name));
        }
    }
    let decoded = session.finish();
    let calls: Vec<(String, String)> =
        decoded.calls.iter().map(|call| (call.id.clone(), call.name.clone())).collect();
    assert_eq!(calls.len(), 2);
    assert_eq!(started, calls, "the wrapper's own id must not start");
}

#[tokio::test]
async fn a_split_wrapper_pairs_starts_and_results_in_agent_and_runner_events() {
    let sink = CollectingSink::new();
    let model = Arc::new(ScriptedModel::new([
        ScriptedTurn::openai_calls(&[("call_P1", "multi_tool_use.parallel", WRAPPED)]),
        ScriptedTurn::openai_text("done"),
    ]));
    let seen = Mutex::new(Vec::new());
    let output = Agent::new(model, runner(&sink))
        .run(vec![Message::user("go")], &ctx(), &|event| seen.lock().unwrap().push(event))
        .await;
    assert_eq!(output.done.stop, StopReason::Answered);
    let agent = assert_paired(agent_marks(&seen.lock().unwrap()));
    assert_eq!(agent.len(), 2, "{agent:?}");
    assert!(!agent.iter().any(|id| id == "call_P1"), "{agent:?}");
    let runner = assert_paired(runner_marks(&sink.events()));
    assert_eq!(runner, agent);
}

#[tokio::test]
async fn calls_of_a_model_that_does_not_stream_start_before_their_results() {
    let sink = CollectingSink::new();
    let body = serde_json::json!({
        "choices": [{"index": 0, "finish_reason": "tool_calls", "message": {
            "role": "assistant", "content": null,
            "tool_calls": [
                {"id": "c1", "type": "function", "function": {"name": "text__echo", "arguments": "{\"word\": \"a\"}"}},
                {"id": "c2", "type": "function", "function": {"name": "multi_tool_use.parallel", "arguments": WRAPPED}}
            ]}}]
    });
    let model = Arc::new(ScriptedModel::new([
        ScriptedTurn::body(Provider::OpenAiChat, body.to_string()),
        ScriptedTurn::openai_text("done"),
    ]));
    let seen = Mutex::new(Vec::new());
    let output = Agent::new(model, runner(&sink))
        .run(vec![Message::user("go")], &ctx(), &|event| seen.lock().unwrap().push(event))
        .await;
    assert_eq!(output.done.stop, StopReason::Answered);
    let agent = assert_paired(agent_marks(&seen.lock().unwrap()));
    assert_eq!(agent.len(), 3, "{agent:?}");
}

/// Keeps a clone of its context, to report with after its call ended.
#[tool(name = "text__keeper", effect = read_only, redact = ["word"])]
struct Keeper {
    word: String,
}

static KEPT: Mutex<Vec<ToolInvocationContext>> = Mutex::new(Vec::new());

impl Tool for Keeper {
    type Output = Word;
    async fn run(
        self,
        ctx: &ToolInvocationContext,
        _: &ToolCapabilities,
    ) -> Result<Word, ToolError> {
        ctx.report_progress(1.0, Some(2.0), "during");
        ctx.log(LogLevel::Info, "during");
        KEPT.lock().unwrap().push(ctx.clone());
        Ok(Word { word: self.word })
    }
}

fn keeper_runner(sink: Option<&CollectingSink>) -> ToolRunner {
    let catalog = ToolCatalog::builder().register::<Keeper>().build().unwrap();
    let policy = ToolPolicy::from_json(r#"{"allowed_tools": ["text__*"]}"#).unwrap();
    let builder = ToolRunner::builder(catalog).policy(policy);
    match sink {
        Some(sink) => builder.event_sink(sink.clone()).build(),
        None => builder.build(),
    }
}

/// The caller's reporter and logger, and what reached them.
fn listening_ctx(id: &str) -> (ToolInvocationContext, Arc<Mutex<Vec<String>>>) {
    let heard = Arc::new(Mutex::new(Vec::new()));
    let (progress, log) = (Arc::clone(&heard), Arc::clone(&heard));
    let ctx = ctx()
        .with_tool_call_id(id)
        .with_progress(ProgressReporter::new(move |p: Progress| {
            progress.lock().unwrap().push(format!("progress {}", p.message.unwrap_or_default()));
        }))
        .with_logger(LogReporter::new(move |m: LogMessage| {
            log.lock().unwrap().push(format!("log {}", m.message));
        }));
    (ctx, heard)
}

fn take_kept(id: &str) -> ToolInvocationContext {
    let mut kept = KEPT.lock().unwrap();
    let at = kept.iter().position(|ctx| ctx.tool_call_id() == Some(id)).expect("the tool ran");
    kept.remove(at)
}

#[tokio::test]
async fn a_kept_context_reports_nothing_after_the_calls_result_event() {
    let sink = CollectingSink::new();
    let (ctx, heard) = listening_ctx("call_kept_events");
    let result = keeper_runner(Some(&sink)).exec("text__keeper", r#"{"word": "w"}"#, &ctx).await;
    assert!(result.is_ok());
    let kept = take_kept("call_kept_events");
    kept.report_progress(2.0, Some(2.0), "after");
    kept.log(LogLevel::Info, "after");
    let events = sink.events();
    assert!(matches!(events.last(), Some(ToolEvent::ToolCallResult { .. })), "{events:?}");
    let progress = events.iter().filter(|e| matches!(e, ToolEvent::ToolCallProgress { .. }));
    assert_eq!(progress.count(), 1, "{events:?}");
    assert_eq!(assert_paired(runner_marks(&events)), ["call_kept_events"]);
    assert_eq!(*heard.lock().unwrap(), ["progress during", "log during"]);
}

#[tokio::test]
async fn without_events_the_callers_reporter_hears_nothing_after_the_call() {
    let (ctx, heard) = listening_ctx("call_kept_quiet");
    let result = keeper_runner(None).exec("text__keeper", r#"{"word": "w"}"#, &ctx).await;
    assert!(result.is_ok());
    let kept = take_kept("call_kept_quiet");
    kept.report_progress(2.0, Some(2.0), "after");
    kept.log(LogLevel::Info, "after");
    assert_eq!(*heard.lock().unwrap(), ["progress during", "log during"]);
    // The caller's own context still reports: only the call's was disarmed.
    ctx.report_progress(3.0, None, "caller");
    assert_eq!(heard.lock().unwrap().last().map(String::as_str), Some("progress caller"));
}

#[tokio::test]
async fn a_kept_context_logs_nothing_after_the_call_when_the_caller_only_listens_to_logs() {
    // As the MCP server does when the client sent no progress token: a logger, no reporter.
    for sink in [None, Some(CollectingSink::new())] {
        let heard = Arc::new(Mutex::new(Vec::new()));
        let log = Arc::clone(&heard);
        let id = format!("call_kept_log_only_{}", sink.is_some());
        let ctx = ctx().with_tool_call_id(id.as_str()).with_logger(LogReporter::new(
            move |m: LogMessage| log.lock().unwrap().push(m.message),
        ));
        let runner = keeper_runner(sink.as_ref());
        let result = runner.exec("text__keeper", r#"{"word": "w"}"#, &ctx).await;
        assert!(result.is_ok());
        take_kept(&id).log(LogLevel::Info, "after");
        assert_eq!(*heard.lock().unwrap(), ["during"], "events: {}", sink.is_some());
        // The caller's own context still logs: only the call's logger was disarmed.
        ctx.log(LogLevel::Info, "caller");
        assert_eq!(heard.lock().unwrap().last().map(String::as_str), Some("caller"));
    }
}

/// The shared check refuses each way a call's events can go wrong.
#[test]
fn the_pairing_check_refuses_a_result_before_its_start_a_second_of_either_or_a_missing_one() {
    let marks = |list: &[(&str, Mark)]| -> Vec<(String, Mark)> {
        list.iter().map(|(id, mark)| ((*id).to_owned(), *mark)).collect()
    };
    let good = marks(&[
        ("a", Mark::Start),
        ("b", Mark::Start),
        ("a", Mark::During),
        ("b", Mark::Result),
        ("a", Mark::Result),
    ]);
    assert_eq!(assert_paired(good), ["a", "b"]);
    let bad = [
        marks(&[("a", Mark::Result), ("a", Mark::Start)]),
        marks(&[("a", Mark::Start), ("a", Mark::Start), ("a", Mark::Result)]),
        marks(&[("a", Mark::Start), ("a", Mark::Result), ("a", Mark::Result)]),
        marks(&[("a", Mark::Start), ("a", Mark::Result), ("a", Mark::During)]),
        marks(&[("a", Mark::Start), ("b", Mark::Start), ("a", Mark::Result)]),
        marks(&[("a", Mark::Start), ("b", Mark::Result)]),
    ];
    let hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(|_| {}));
    let refused: Vec<bool> = bad
        .into_iter()
        .map(|marks| std::panic::catch_unwind(|| assert_paired(marks)).is_err())
        .collect();
    std::panic::set_hook(hook);
    assert_eq!(refused, [true; 6]);
}
