//! The agent loop's rules, each with the scripted model.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_trait::async_trait;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;
use tool_runtime::adapters::{ChoiceMode, ToolOutcome};
use tool_runtime::agent::{
    Agent, AgentConfig, AgentEvent, ChatModel, Message, ModelError, ModelErrorKind, ModelRequest,
    ModelTurn, ScriptedModel, ScriptedTurn, StopReason, Usage,
};
use tool_runtime::catalog::ToolCatalog;
use tool_runtime::policy::ToolPolicy;
use tool_runtime::prelude::*;
use tool_runtime::runner::ToolRunner;
use tool_runtime::runner::{ApprovalDecision, ApprovalRequest, Approver};
use tool_runtime::runtime::{Capability, EventOutcome, ToolErrorCode};
use tool_tests::fixtures::context;

/// Counts calls running at the same time.
#[derive(Debug, Default)]
struct Gauge {
    running: AtomicUsize,
    peak: AtomicUsize,
    order: Mutex<Vec<String>>,
}

impl Capability for Gauge {
    const NAME: &'static str = "gauge";
}

impl Gauge {
    async fn work(&self, label: String, millis: u64) {
        let now = self.running.fetch_add(1, Ordering::SeqCst) + 1;
        self.peak.fetch_max(now, Ordering::SeqCst);
        tokio::time::sleep(Duration::from_millis(millis)).await;
        self.running.fetch_sub(1, Ordering::SeqCst);
        self.order.lock().unwrap().push(label);
    }
}

/// Waits, then echoes its label.
#[tool(name = "test__wait", effect = read_only, redact = ["label"], capabilities = [Gauge])]
struct Wait {
    label: String,
    millis: u64,
}

#[derive(Serialize, ToolSchema)]
struct Label {
    label: String,
}

impl Tool for Wait {
    type Output = Label;
    async fn run(
        self,
        _: &ToolInvocationContext,
        caps: &ToolCapabilities,
    ) -> Result<Label, ToolError> {
        caps.get::<Gauge>()?.work(self.label.clone(), self.millis).await;
        Ok(Label { label: self.label })
    }
}

/// Writes something, alone.
#[tool(name = "test__write", effect = state_change, redact = ["label"], capabilities = [Gauge])]
struct Write {
    label: String,
}

impl Tool for Write {
    type Output = Label;
    async fn run(
        self,
        _: &ToolInvocationContext,
        caps: &ToolCapabilities,
    ) -> Result<Label, ToolError> {
        caps.get::<Gauge>()?.work(self.label.clone(), 10).await;
        Ok(Label { label: self.label })
    }
}

/// Denied by every policy below.
#[tool(name = "admin__wipe", effect = external_side_effect, redact = [])]
struct Wipe {}

#[derive(Serialize, ToolSchema)]
struct Nothing {}

impl Tool for Wipe {
    type Output = Nothing;
    async fn run(
        self,
        _: &ToolInvocationContext,
        _: &ToolCapabilities,
    ) -> Result<Nothing, ToolError> {
        panic!("policy must never let this run")
    }
}

fn runner(gauge: &Arc<Gauge>, policy: &str, approver: Option<Arc<dyn Approver>>) -> ToolRunner {
    let catalog = ToolCatalog::builder()
        .register::<Wait>()
        .register::<Write>()
        .register::<Wipe>()
        .shared_capability(Arc::clone(gauge))
        .build()
        .unwrap();
    let builder = ToolRunner::builder(catalog).policy(ToolPolicy::from_json(policy).unwrap());
    match approver {
        Some(approver) => builder.approver(approver),
        None => builder,
    }
    .build()
}

// Side effects run without approval here unless a test asks for one.
const ALLOW: &str = r#"{"allowed_tools": ["test__*"], "require_approval": []}"#;

fn ctx() -> ToolInvocationContext {
    context("run-1", "user-1", "tenant-1")
}

fn results(message: &Message) -> Vec<(String, Result<Value, String>)> {
    let Message::ToolResults(results) = message else {
        panic!("expected tool results, got {message:?}")
    };
    results
        .iter()
        .map(|result| {
            let outcome = match &result.outcome {
                ToolOutcome::Done(output) => Ok(output.structured().cloned().unwrap_or_default()),
                ToolOutcome::Failed(error) => Err(error.code.to_string()),
                _ => Err(String::new()),
            };
            (result.call_id.clone(), outcome)
        })
        .collect()
}

fn collect() -> (Arc<Mutex<Vec<AgentEvent>>>, impl Fn(AgentEvent) + Send + Sync) {
    let events = Arc::new(Mutex::new(Vec::new()));
    let sink = Arc::clone(&events);
    (events, move |event| sink.lock().unwrap().push(event))
}

#[tokio::test(start_paused = true)]
async fn calls_of_a_turn_run_in_parallel_and_results_keep_the_model_order() {
    let gauge = Arc::new(Gauge::default());
    let model = Arc::new(ScriptedModel::new([
        ScriptedTurn::openai_calls(&[
            ("call_slow", "test__wait", r#"{"label": "slow", "millis": 300}"#),
            ("call_fast", "test__wait", r#"{"label": "fast", "millis": 10}"#),
            ("call_mid", "test__wait", r#"{"label": "mid", "millis": 100}"#),
        ]),
        ScriptedTurn::openai_text("done"),
    ]));
    let agent = Agent::new(model.clone(), runner(&gauge, ALLOW, None));
    let output = agent.run(vec![Message::user("go")], &ctx(), &|_| {}).await;
    assert_eq!(output.done.stop, StopReason::Answered);
    assert_eq!(gauge.peak.load(Ordering::SeqCst), 3, "all three ran at once");
    assert_eq!(
        *gauge.order.lock().unwrap(),
        ["fast", "mid", "slow"],
        "they finished in time order"
    );
    let ids: Vec<String> = results(&output.messages[2]).into_iter().map(|(id, _)| id).collect();
    assert_eq!(ids, ["call_slow", "call_fast", "call_mid"], "results go back in the model's order");
    let records: Vec<&str> = output.done.records.iter().map(|r| r.tool_call_id.as_str()).collect();
    assert_eq!(records, ["call_slow", "call_fast", "call_mid"]);
    let second = &model.requests()[1];
    assert!(matches!(second.messages.last(), Some(Message::ToolResults(r)) if r.len() == 3));
}

#[tokio::test(start_paused = true)]
async fn concurrency_is_capped_and_marked_tools_run_alone() {
    let gauge = Arc::new(Gauge::default());
    let calls: Vec<(String, String)> = (0..6)
        .map(|i| (format!("c{i}"), format!(r#"{{"label": "w{i}", "millis": 50}}"#)))
        .collect();
    let script: Vec<(&str, &str, &str)> =
        calls.iter().map(|(id, args)| (id.as_str(), "test__wait", args.as_str())).collect();
    let model =
        ScriptedModel::new([ScriptedTurn::openai_calls(&script), ScriptedTurn::openai_text("ok")]);
    let config = AgentConfig { max_concurrent: 2, ..AgentConfig::default() };
    let agent = Agent::new(Arc::new(model), runner(&gauge, ALLOW, None)).with_config(config);
    agent.run(vec![Message::user("go")], &ctx(), &|_| {}).await;
    assert_eq!(gauge.peak.load(Ordering::SeqCst), 2);

    let gauge = Arc::new(Gauge::default());
    let model = ScriptedModel::new([
        ScriptedTurn::openai_calls(&[
            ("a", "test__wait", r#"{"label": "read1", "millis": 50}"#),
            ("b", "test__write", r#"{"label": "write"}"#),
            ("c", "test__wait", r#"{"label": "read2", "millis": 1}"#),
        ]),
        ScriptedTurn::openai_text("ok"),
    ]);
    let config = AgentConfig { run_alone: vec![ToolEffect::StateChange], ..AgentConfig::default() };
    let agent = Agent::new(Arc::new(model), runner(&gauge, ALLOW, None)).with_config(config);
    agent.run(vec![Message::user("go")], &ctx(), &|_| {}).await;
    assert_eq!(gauge.peak.load(Ordering::SeqCst), 1, "the write ran alone, between the reads");
    assert_eq!(*gauge.order.lock().unwrap(), ["read1", "write", "read2"]);
}

#[tokio::test]
async fn bad_calls_get_error_results_and_the_model_corrects_itself() {
    let gauge = Arc::new(Gauge::default());
    let model = Arc::new(ScriptedModel::new([
        ScriptedTurn::openai_calls(&[
            ("bad_json", "test__wait", r#"{"label": "x", "millis": "#),
            ("unknown", "test__nope", "{}"),
            ("invalid", "test__wait", r#"{"label": 5, "millis": 1}"#),
            ("denied", "admin__wipe", "{}"),
        ]),
        ScriptedTurn::openai_calls(&[("fixed", "test__wait", r#"{"label": "x", "millis": 1}"#)]),
        ScriptedTurn::openai_text("fixed it"),
    ]));
    let agent = Agent::new(model.clone(), runner(&gauge, ALLOW, None));
    let output = agent.run(vec![Message::user("go")], &ctx(), &|_| {}).await;
    assert_eq!(output.done.stop, StopReason::Answered);
    assert_eq!(output.done.answer, "fixed it");
    let first = results(&output.messages[2]);
    let codes: Vec<_> = first.iter().map(|(_, outcome)| outcome.clone().unwrap_err()).collect();
    assert_eq!(codes, ["invalid_json", "unavailable", "validation", "policy_denied"]);
    assert_eq!(results(&output.messages[4]), [("fixed".to_owned(), Ok(json!({"label": "x"})))]);
    assert_eq!(output.done.records.len(), 5, "every call went through the runner");
    assert_eq!(
        model.requests()[0].tools,
        ["test__wait", "test__write"],
        "the denied tool is hidden"
    );
}

#[tokio::test]
async fn a_history_that_breaks_the_chat_contract_runs_nothing() {
    use tool_runtime::adapters::{ConversationProblem, Decoded, ToolCall, ToolResult};
    let gauge = Arc::new(Gauge::default());
    let model = Arc::new(ScriptedModel::new([ScriptedTurn::openai_text("never asked")]));
    let agent = Agent::new(model.clone(), runner(&gauge, ALLOW, None));
    let call = ToolCall::new("call_1", "test__write", json!({"label": "x"}));
    let history = vec![
        Message::user("go"),
        Message::Assistant(Decoded::new("", vec![call.clone()])),
        Message::ToolResults(vec![
            ToolResult::ok(&call, json!({})),
            ToolResult::ok(&call, json!({})),
        ]),
        Message::user("again"),
    ];
    let output = agent.run(history, &ctx(), &|_| {}).await;
    let StopReason::InvalidConversation { problem } = &output.done.stop else {
        panic!("expected an invalid conversation, got {:?}", output.done.stop)
    };
    assert_eq!(problem.index, 2);
    assert_eq!(problem.problem, ConversationProblem::DuplicateResult { call_id: "call_1".into() });
    assert!(model.requests().is_empty(), "the model was not asked");
    assert!(gauge.order.lock().unwrap().is_empty(), "nothing ran");
    assert_eq!(
        serde_json::to_value(&output.done.stop).unwrap(),
        json!({"kind": "invalid_conversation", "problem": {"index": 2, "kind": "duplicate_result", "call_id": "call_1"}})
    );
}

/// A conversation whose last turn's calls have no results, or no message at all: every
/// provider refuses such a request, so the run refuses it first (a turn that waits is resumed).
#[tokio::test]
async fn a_history_ending_in_unanswered_calls_or_empty_runs_nothing() {
    use tool_runtime::adapters::{ConversationProblem, Decoded, ToolCall};
    let gauge = Arc::new(Gauge::default());
    let model = Arc::new(ScriptedModel::new([ScriptedTurn::openai_text("never asked")]));
    let agent = Agent::new(model.clone(), runner(&gauge, ALLOW, None));
    let call = ToolCall::new("call_1", "test__write", json!({"label": "x"}));
    let history = vec![Message::user("go"), Message::Assistant(Decoded::new("", vec![call]))];
    for (history, index, expected) in [
        (history, 2, ConversationProblem::UnansweredCall { call_id: "call_1".into() }),
        (Vec::new(), 0, ConversationProblem::Empty),
    ] {
        let output = agent.run(history, &ctx(), &|_| {}).await;
        let StopReason::InvalidConversation { problem } = &output.done.stop else {
            panic!("expected an invalid conversation, got {:?}", output.done.stop)
        };
        assert_eq!((problem.index, &problem.problem), (index, &expected));
    }
    assert!(model.requests().is_empty(), "the model was not asked");
    assert!(gauge.order.lock().unwrap().is_empty(), "nothing ran");
}

#[tokio::test]
async fn a_truncated_call_is_never_run() {
    let gauge = Arc::new(Gauge::default());
    let cut = concat!(
        "data: {\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"tool_calls\":[{\"index\":0,\"id\":\"call_cut\",\"type\":\"function\",\"function\":{\"name\":\"test__write\",\"arguments\":\"{\\\"label\\\": \\\"x\\\"}\"}}]},\"finish_reason\":null}]}\n\n",
        "data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"length\"}]}\n\n",
        "data: [DONE]\n\n",
    );
    let model = ScriptedModel::new([
        ScriptedTurn::stream(tool_runtime::adapters::Provider::OpenAiChat, cut),
        ScriptedTurn::openai_text("sorry"),
    ]);
    let agent = Agent::new(Arc::new(model), runner(&gauge, ALLOW, None));
    let output = agent.run(vec![Message::user("go")], &ctx(), &|_| {}).await;
    assert_eq!(
        results(&output.messages[2]),
        [("call_cut".to_owned(), Err("truncated".to_owned()))]
    );
    assert!(gauge.order.lock().unwrap().is_empty(), "nothing ran");
    assert!(output.done.records.is_empty());
}

#[tokio::test]
async fn the_iteration_limit_forces_a_last_answer_without_tools() {
    let gauge = Arc::new(Gauge::default());
    let call =
        ScriptedTurn::openai_calls(&[("c", "test__wait", r#"{"label": "again", "millis": 1}"#)]);
    let mut turns = vec![call.clone(); 3];
    turns.push(ScriptedTurn::openai_text("stopping here"));
    let model = Arc::new(ScriptedModel::new(turns));
    let config = AgentConfig { max_iterations: 3, ..AgentConfig::default() };
    let agent = Agent::new(model.clone(), runner(&gauge, ALLOW, None)).with_config(config);
    let output = agent.run(vec![Message::user("loop forever")], &ctx(), &|_| {}).await;
    assert_eq!(output.done.stop, StopReason::IterationLimit);
    assert_eq!(output.done.answer, "stopping here");
    assert_eq!(output.done.iterations, 4);
    let requests = model.requests();
    assert_eq!(requests.len(), 4);
    assert!(requests[..3].iter().all(|r| r.choice.mode == ChoiceMode::Auto));
    assert_eq!(requests[3].choice.mode, ChoiceMode::None);
    assert!(
        matches!(requests[3].messages.last(), Some(Message::Notice(text)) if text.contains("every tool-calling turn"))
    );

    // A model that calls tools anyway in its last turn gets results, but nothing runs.
    let model = Arc::new(ScriptedModel::new(vec![call; 2]));
    let config = AgentConfig { max_iterations: 1, ..AgentConfig::default() };
    let agent = Agent::new(model, runner(&gauge, ALLOW, None)).with_config(config);
    let before = gauge.order.lock().unwrap().len();
    let output = agent.run(vec![Message::user("go")], &ctx(), &|_| {}).await;
    assert_eq!(output.done.stop, StopReason::IterationLimit);
    assert_eq!(gauge.order.lock().unwrap().len(), before + 1, "only the first turn's call ran");
    assert_eq!(results(output.messages.last().unwrap())[0].1, Err("not_run".to_owned()));
}

#[tokio::test(start_paused = true)]
async fn the_budget_stops_the_run_and_started_calls_still_get_results() {
    let gauge = Arc::new(Gauge::default());
    let model = ScriptedModel::new([
        ScriptedTurn::openai_calls(&[
            ("quick", "test__wait", r#"{"label": "quick", "millis": 10}"#),
            ("long", "test__wait", r#"{"label": "long", "millis": 60000}"#),
        ]),
        ScriptedTurn::openai_text("never asked"),
    ]);
    let config = AgentConfig { budget: Some(Duration::from_secs(1)), ..AgentConfig::default() };
    let agent = Agent::new(Arc::new(model), runner(&gauge, ALLOW, None)).with_config(config);
    let (events, sink) = collect();
    let output = agent.run(vec![Message::user("go")], &ctx(), &sink).await;
    assert_eq!(output.done.stop, StopReason::Budget);
    assert_eq!(
        results(&output.messages[2]),
        [
            ("quick".to_owned(), Ok(json!({"label": "quick"}))),
            ("long".to_owned(), Err("cancelled".to_owned()))
        ]
    );
    let events = events.lock().unwrap();
    assert!(matches!(events.last(), Some(AgentEvent::Done(_))));
    assert_eq!(events.iter().filter(|e| matches!(e, AgentEvent::Done(_))).count(), 1);
    assert_eq!(events.iter().filter(|e| matches!(e, AgentEvent::ToolCallResult { .. })).count(), 2);
}

#[tokio::test]
async fn a_budget_beyond_the_clock_is_no_deadline() {
    // `Instant::now() + Duration::MAX` overflows; such a budget can never run out.
    let gauge = Arc::new(Gauge::default());
    let model = ScriptedModel::new([
        ScriptedTurn::openai_calls(&[(
            "quick",
            "test__wait",
            r#"{"label": "quick", "millis": 1}"#,
        )]),
        ScriptedTurn::openai_text("done"),
    ]);
    let config = AgentConfig { budget: Some(Duration::MAX), ..AgentConfig::default() };
    let agent = Agent::new(Arc::new(model), runner(&gauge, ALLOW, None)).with_config(config);
    let output = agent.run(vec![Message::user("go")], &ctx(), &|_| {}).await;
    assert_eq!(output.done.stop, StopReason::Answered);
    assert_eq!(output.done.answer, "done");
}

#[tokio::test]
async fn cancellation_stops_the_run() {
    let gauge = Arc::new(Gauge::default());
    let model = ScriptedModel::new([
        ScriptedTurn::openai_calls(&[(
            "long",
            "test__wait",
            r#"{"label": "long", "millis": 60000}"#,
        )]),
        ScriptedTurn::openai_text("never asked"),
    ]);
    let agent = Agent::new(Arc::new(model), runner(&gauge, ALLOW, None));
    let token = CancellationToken::new();
    let ctx = ctx().with_cancellation(token.clone());
    let cancel = token.clone();
    let output = agent
        .run(vec![Message::user("go")], &ctx, &move |event| {
            if matches!(event, AgentEvent::IterationFinished { .. }) {
                cancel.cancel();
            }
        })
        .await;
    assert_eq!(output.done.stop, StopReason::Cancelled);
    assert_eq!(results(&output.messages[2]), [("long".to_owned(), Err("cancelled".to_owned()))]);
}

#[derive(Debug)]
struct Desk;

#[async_trait]
impl Approver for Desk {
    async fn review(&self, request: &ApprovalRequest<'_>) -> ApprovalDecision {
        match request.arguments["label"].as_str() {
            Some("fine") => request.approve(),
            Some("typo") => request.edit(json!({"label": "fixed"})),
            _ => request.deny("not today"),
        }
    }
}

#[tokio::test]
async fn approval_approves_denies_with_a_message_or_edits() {
    let gauge = Arc::new(Gauge::default());
    let model = ScriptedModel::new([
        ScriptedTurn::openai_calls(&[
            ("a", "test__write", r#"{"label": "fine"}"#),
            ("b", "test__write", r#"{"label": "typo"}"#),
            ("c", "test__write", r#"{"label": "risky"}"#),
        ]),
        ScriptedTurn::openai_text("ok"),
    ]);
    let policy = r#"{"allowed_tools": ["test__*"], "require_approval": ["state_change"]}"#;
    let agent = Agent::new(Arc::new(model), runner(&gauge, policy, Some(Arc::new(Desk))));
    let output = agent.run(vec![Message::user("go")], &ctx(), &|_| {}).await;
    let got = results(&output.messages[2]);
    assert_eq!(got[0].1, Ok(json!({"label": "fine"})));
    assert_eq!(got[1].1, Ok(json!({"label": "fixed"})));
    assert_eq!(got[2].1, Err("approval_denied".to_owned()));
    let Message::ToolResults(raw) = &output.messages[2] else { unreachable!() };
    assert!(matches!(&raw[2].outcome, ToolOutcome::Failed(error) if error.message == "not today"));
}

#[tokio::test]
async fn events_stream_text_calls_iterations_and_one_done() {
    let gauge = Arc::new(Gauge::default());
    let model = ScriptedModel::new([
        ScriptedTurn::openai_calls(&[("c1", "test__wait", r#"{"label": "hi", "millis": 1}"#)]),
        ScriptedTurn::openai_text("All done now."),
    ]);
    let agent = Agent::new(Arc::new(model), runner(&gauge, ALLOW, None));
    let (events, sink) = collect();
    agent.run(vec![Message::user("go")], &ctx(), &sink).await;
    let events = events.lock().unwrap();
    let kinds: Vec<&str> = events
        .iter()
        .map(|event| match event {
            AgentEvent::IterationStarted { .. } => "iteration",
            AgentEvent::ModelRequested { .. } => "request",
            AgentEvent::ToolCallStarted { .. } => "call",
            AgentEvent::ToolCallArgumentsDelta { .. } => "args",
            AgentEvent::ToolCallRunning { .. } => "running",
            AgentEvent::ToolCallResult { .. } => "result",
            AgentEvent::IterationFinished { .. } => "finished",
            AgentEvent::TextDelta { .. } => "text",
            AgentEvent::Done(_) => "done",
            _ => "other",
        })
        .collect();
    let mut compact = kinds.clone();
    compact.dedup();
    assert_eq!(
        compact,
        [
            "iteration",
            "request",
            "call",
            "args",
            "finished",
            "running",
            "result",
            "iteration",
            "request",
            "text",
            "finished",
            "done"
        ]
    );
    let text: String = events
        .iter()
        .filter_map(
            |e| if let AgentEvent::TextDelta { text } = e { Some(text.as_str()) } else { None },
        )
        .collect();
    assert_eq!(text, "All done now.");
    let AgentEvent::Done(done) = events.last().unwrap() else { unreachable!() };
    assert_eq!(done.answer, "All done now.");
    assert_eq!(done.records.len(), 1);
    serde_json::to_value(done).unwrap();
}

#[derive(Debug)]
struct Broken;

#[async_trait]
impl ChatModel for Broken {
    async fn respond(
        &self,
        _: ModelRequest<'_>,
        _: &(dyn Fn(tool_runtime::adapters::StreamEvent) + Send + Sync),
    ) -> Result<ModelTurn, ModelError> {
        Err(ModelError::new(ModelErrorKind::Status(503), "overloaded"))
    }
}

#[tokio::test]
async fn a_model_failure_ends_the_run_with_one_done() {
    let agent = Agent::new(Arc::new(Broken), runner(&Arc::new(Gauge::default()), ALLOW, None));
    let (events, sink) = collect();
    let output = agent.run(vec![Message::user("go")], &ctx(), &sink).await;
    assert_eq!(
        output.done.stop,
        StopReason::ModelFailed {
            kind: ModelErrorKind::Status(503),
            message: "the model provider answered 503: overloaded".into()
        }
    );
    assert_eq!(
        serde_json::to_value(&output.done.stop).unwrap(),
        json!({"kind": "model_failed", "error": {"status": 503}, "message": "the model provider answered 503: overloaded"})
    );
    assert_eq!(
        events.lock().unwrap().iter().filter(|e| matches!(e, AgentEvent::Done(_))).count(),
        1
    );
    let exhausted = Agent::new(
        Arc::new(ScriptedModel::new([])),
        runner(&Arc::new(Gauge::default()), ALLOW, None),
    );
    let output = exhausted.run(vec![Message::user("go")], &ctx(), &|_| {}).await;
    assert!(matches!(
        output.done.stop,
        StopReason::ModelFailed { kind: ModelErrorKind::ScriptExhausted, .. }
    ));
    assert_eq!(
        serde_json::to_value(&output.done.stop).unwrap()["error"],
        json!("script_exhausted")
    );
}

#[tokio::test]
async fn a_response_broken_off_by_the_provider_is_no_answer() {
    let broken = "data: {\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"Partial ans\"},\"finish_reason\":null}]}\n\n";
    let model = ScriptedModel::new([ScriptedTurn::stream(
        tool_runtime::adapters::Provider::OpenAiChat,
        broken,
    )]);
    let agent = Agent::new(Arc::new(model), runner(&Arc::new(Gauge::default()), ALLOW, None));
    let output = agent.run(vec![Message::user("go")], &ctx(), &|_| {}).await;
    assert!(
        matches!(&output.done.stop, StopReason::ModelFailed { kind: ModelErrorKind::Transport, message } if message.contains("unfinished")),
        "{:?}",
        output.done.stop
    );
    assert_eq!(output.done.answer, "");
}

fn started_and_finished(events: &[AgentEvent]) -> (Vec<String>, Vec<String>) {
    let started = events
        .iter()
        .filter_map(|e| {
            if let AgentEvent::ToolCallStarted { id, .. } = e { Some(id.clone()) } else { None }
        })
        .collect();
    let finished = events
        .iter()
        .filter_map(|e| {
            if let AgentEvent::ToolCallResult { id, .. } = e { Some(id.clone()) } else { None }
        })
        .collect();
    (started, finished)
}

#[tokio::test]
async fn every_announced_call_gets_one_result_event_in_model_order() {
    // Calls made in the last, tool-free turn: refused, and reported.
    let gauge = Arc::new(Gauge::default());
    let call = ScriptedTurn::openai_calls(&[("c", "test__wait", r#"{"label": "x", "millis": 1}"#)]);
    let model = ScriptedModel::new([
        call.clone(),
        ScriptedTurn::openai_calls(&[("late", "test__wait", "{}")]),
    ]);
    let config = AgentConfig { max_iterations: 1, ..AgentConfig::default() };
    let agent = Agent::new(Arc::new(model), runner(&gauge, ALLOW, None)).with_config(config);
    let (events, sink) = collect();
    agent.run(vec![Message::user("go")], &ctx(), &sink).await;
    let (started, finished) = started_and_finished(&events.lock().unwrap());
    assert_eq!(started, ["c", "late"]);
    assert_eq!(finished, ["c", "late"]);

    // A call the runner refuses before a slow call ahead of it has finished: events keep the
    // model's order anyway.
    let stream = concat!(
        "data: {\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"tool_calls\":[",
        "{\"index\":0,\"id\":\"a\",\"type\":\"function\",\"function\":{\"name\":\"test__wait\",\"arguments\":\"{\\\"label\\\": \\\"a\\\", \\\"millis\\\": 20}\"}},",
        "{\"index\":1,\"id\":\"b\",\"type\":\"function\",\"function\":{\"arguments\":\"{}\"}}",
        "]},\"finish_reason\":null}]}\n\n",
        "data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"tool_calls\"}]}\n\n",
        "data: [DONE]\n\n",
    );
    let model = ScriptedModel::new([
        ScriptedTurn::stream(tool_runtime::adapters::Provider::OpenAiChat, stream),
        ScriptedTurn::openai_text("ok"),
    ]);
    let agent = Agent::new(Arc::new(model), runner(&gauge, ALLOW, None));
    let (events, sink) = collect();
    agent.run(vec![Message::user("go")], &ctx(), &sink).await;
    let events = events.lock().unwrap();
    let (_, finished) = started_and_finished(&events);
    assert_eq!(finished, ["a", "b"]);
    let refused = events.iter().any(|e| {
        matches!(e, AgentEvent::ToolCallResult { id, outcome: EventOutcome::Err { error }, .. } if id == "b" && error.code == ToolErrorCode::Truncated)
    });
    assert!(refused, "the nameless call is refused without running: {events:?}");
}

/// Announces a call, then never finishes its turn.
#[derive(Debug)]
struct Stalls;

#[async_trait]
impl ChatModel for Stalls {
    async fn respond(
        &self,
        _: ModelRequest<'_>,
        on_event: &(dyn Fn(tool_runtime::adapters::StreamEvent) + Send + Sync),
    ) -> Result<ModelTurn, ModelError> {
        on_event(tool_runtime::adapters::StreamEvent::CallStarted {
            index: 0,
            id: "pending".into(),
            name: "test__wait".into(),
        });
        std::future::pending().await
    }
}

#[tokio::test]
async fn a_call_announced_in_a_dropped_turn_gets_a_not_run_result_event() {
    let agent = Agent::new(Arc::new(Stalls), runner(&Arc::new(Gauge::default()), ALLOW, None));
    let token = CancellationToken::new();
    let cancel = token.clone();
    let (events, sink) = collect();
    let output = agent
        .run(vec![Message::user("go")], &ctx().with_cancellation(token), &move |event| {
            if matches!(event, AgentEvent::ToolCallStarted { .. }) {
                cancel.cancel();
            }
            sink(event);
        })
        .await;
    assert_eq!(output.done.stop, StopReason::Cancelled);
    let events = events.lock().unwrap();
    let (started, finished) = started_and_finished(&events);
    assert_eq!((started, finished), (vec!["pending".to_owned()], vec!["pending".to_owned()]));
    assert!(events.iter().any(|e| matches!(e, AgentEvent::ToolCallResult { outcome: EventOutcome::Err { error }, .. } if error.code == ToolErrorCode::NotRun)));
}

/// Answers with whole Anthropic bodies it decodes itself, building the turn by hand.
#[derive(Debug)]
struct HandBuilt {
    bodies: Mutex<Vec<String>>,
}

#[async_trait]
impl ChatModel for HandBuilt {
    async fn respond(
        &self,
        _: ModelRequest<'_>,
        _: &(dyn Fn(tool_runtime::adapters::StreamEvent) + Send + Sync),
    ) -> Result<ModelTurn, ModelError> {
        use tool_runtime::adapters::{Adapter, Anthropic};
        let body = self.bodies.lock().unwrap().remove(0);
        let decoded = Anthropic::new()
            .decode(body.as_bytes())
            .map_err(|error| ModelError::new(ModelErrorKind::Decode, error.to_string()))?;
        Ok(ModelTurn { decoded })
    }
}

#[tokio::test]
async fn usage_is_read_from_the_decoded_turn_and_its_sum_saturates() {
    let max = u64::MAX;
    let bodies = vec![
        format!(
            r#"{{"content": [{{"type": "tool_use", "id": "toolu_1", "name": "test__wait",
                "input": {{"label": "a", "millis": 0}}}}], "stop_reason": "tool_use",
                "usage": {{"input_tokens": {max}, "output_tokens": 1}}}}"#
        ),
        r#"{"content": [{"type": "text", "text": "Done."}], "stop_reason": "end_turn",
            "usage": {"input_tokens": 5, "output_tokens": 2}}"#
            .to_owned(),
    ];
    let model = HandBuilt { bodies: Mutex::new(bodies) };
    let agent = Agent::new(Arc::new(model), runner(&Arc::new(Gauge::default()), ALLOW, None));
    let (events, sink) = collect();
    let output = agent.run(vec![Message::user("go")], &ctx(), &sink).await;
    assert_eq!(output.done.stop, StopReason::Answered);
    assert_eq!(output.done.usage, Usage { input_tokens: max, output_tokens: 3 });
    let reported = events
        .lock()
        .unwrap()
        .iter()
        .filter(|event| matches!(event, AgentEvent::Usage { .. }))
        .count();
    assert_eq!(reported, 2);
}

/// The prompt hashes of a run's model requests, in order.
async fn prompt_hashes(runner: ToolRunner, messages: Vec<Message>) -> Vec<(String, usize)> {
    let model = ScriptedModel::new([
        ScriptedTurn::openai_calls(&[("c1", "test__wait", r#"{"label": "a", "millis": 1}"#)]),
        ScriptedTurn::openai_text("done"),
    ]);
    let (events, sink) = collect();
    Agent::new(Arc::new(model), runner).run(messages, &ctx(), &sink).await;
    let events = events.lock().unwrap();
    events
        .iter()
        .filter_map(|event| match event {
            AgentEvent::ModelRequested { prompt_hash, tools, .. } => {
                Some((prompt_hash.clone(), *tools))
            }
            _ => None,
        })
        .collect()
}

#[tokio::test(start_paused = true)]
async fn each_model_request_reports_a_hash_of_its_instructions_and_tools() {
    let gauge = Arc::new(Gauge::default());
    let conversation = |system: &str| vec![Message::system(system), Message::user("go")];
    let base = prompt_hashes(runner(&gauge, ALLOW, None), conversation("Be brief.")).await;
    assert_eq!(base.len(), 2);
    assert_eq!(base[0], base[1], "same instructions and tools, turn after turn");
    assert_eq!(base[0].0.len(), 64);
    let visible = runner(&gauge, ALLOW, None).visible_tools(&ctx()).len();
    assert_eq!(base[0].1, visible);
    let again = prompt_hashes(runner(&gauge, ALLOW, None), conversation("Be brief.")).await;
    assert_eq!(again, base, "the same request hashes the same in another run");

    // Other instructions, or other tools offered: another hash.
    let instructions =
        prompt_hashes(runner(&gauge, ALLOW, None), conversation("Be thorough.")).await;
    assert_ne!(instructions[0].0, base[0].0);
    let fewer = r#"{"allowed_tools": ["test__wait"], "require_approval": []}"#;
    let tools = prompt_hashes(runner(&gauge, fewer, None), conversation("Be brief.")).await;
    assert_eq!(tools[0].1, 1);
    assert_ne!(tools[0].0, base[0].0);
}
