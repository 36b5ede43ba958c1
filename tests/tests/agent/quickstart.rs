//! The quickstart session does what the README says it does.

use std::sync::Arc;
use std::time::{Duration, UNIX_EPOCH};

use examples::quickstart;
use examples::tickets::TicketStore;
use tool_runtime::adapters::ToolOutcome;
use tool_runtime::agent::{Agent, Message, StopReason};
use tool_runtime::runtime::{Clock, CollectingSink, ToolEvent};
use tool_tests::fixtures::context;

fn codes(message: &Message) -> Vec<String> {
    let Message::ToolResults(results) = message else {
        panic!("expected results, got {message:?}")
    };
    results
        .iter()
        .map(|result| match &result.outcome {
            ToolOutcome::Done(_) => "ok".to_owned(),
            ToolOutcome::Failed(error) => error.code.to_string(),
            _ => String::new(),
        })
        .collect()
}

#[tokio::test]
async fn parallel_calls_a_denial_a_correction_an_approval_and_an_answer() {
    let clock = Clock::fixed(UNIX_EPOCH + Duration::from_millis(1_795_000_000_000));
    let tickets = TicketStore::new();
    let events = CollectingSink::new();
    let runner = examples::app::runner(clock, tickets.clone(), Arc::new(events.clone())).unwrap();
    let model = Arc::new(quickstart::model());
    let agent = Agent::new(model.clone(), runner);
    let ctx = context("quickstart-run", "user-42", "acme")
        .with_connection_id("acme-tracker")
        .with_requested_connections(["acme-tracker"]);
    let output = agent.run(quickstart::conversation(), &ctx, &|_| {}).await;

    assert_eq!(output.done.stop, StopReason::Answered);
    assert_eq!(output.done.answer, quickstart::ANSWER);
    assert_eq!(output.done.iterations, 4);
    let turns: Vec<Vec<String>> = output
        .messages
        .iter()
        .filter(|message| matches!(message, Message::ToolResults(_)))
        .map(codes)
        .collect();
    assert_eq!(turns, [vec!["ok", "ok"], vec!["validation", "policy_denied"], vec!["ok"]]);

    // The scripted answer matches what the tools returned.
    let records = &output.done.records;
    assert_eq!(records.len(), 5);
    assert_eq!(records[0].result.as_ref().unwrap()["iso8601"], "2026-11-18T20:06:40+09:00");
    assert_eq!(records[1].result.as_ref().unwrap()["hits"][0]["title"], "Redact tool output");
    assert_eq!(records[4].result.as_ref().unwrap()["number"], 1);
    assert_eq!(tickets.tickets("acme-tracker").len(), 1);
    assert!(tickets.tickets("acme-tracker")[0].title.contains("tags"));

    // The denied tool was never offered to the model, and never started.
    assert!(
        model
            .requests()
            .iter()
            .all(|request| !request.tools.iter().any(|t| t == "tickets__close_ticket"))
    );
    let started: Vec<String> = events
        .events()
        .iter()
        .filter_map(|event| match event {
            ToolEvent::ToolCallStart { tool_call_id, .. } => Some(tool_call_id.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(started, ["call_time", "call_docs", "call_ticket_2"]);
}
