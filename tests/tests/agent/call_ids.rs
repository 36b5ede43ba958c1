//! Call ids are unique within an agent run, whatever the provider sends;
//! results still go back to the model under the provider's own ids.

use std::sync::{Arc, Mutex};

use tool_runtime::adapters::ToolOutcome;
use tool_runtime::agent::{Agent, Message, ScriptedModel, ScriptedTurn, StopReason};
use tool_runtime::catalog::ToolCatalog;
use tool_runtime::policy::ToolPolicy;
use tool_runtime::prelude::*;
use tool_runtime::runner::ToolRunner;
use tool_runtime::runtime::CollectingSink;
use tool_tests::events::{agent_marks, assert_paired, runner_marks};
use tool_tests::fixtures::{Echo, context};

fn ctx() -> ToolInvocationContext {
    context("run-1", "u", "t")
}

#[tokio::test]
async fn repeated_and_missing_provider_ids_get_ids_unique_within_the_run() {
    let catalog = ToolCatalog::builder().register::<Echo>().build().unwrap();
    let sink = CollectingSink::new();
    let policy = ToolPolicy::from_json(r#"{"allowed_tools": ["text__*"]}"#).unwrap();
    let runner = ToolRunner::builder(catalog).policy(policy).event_sink(sink.clone()).build();
    let echo = |word: &str| format!(r#"{{"word": "{word}"}}"#);
    let (a, b, c, d) = (echo("a"), echo("b"), echo("c"), echo("d"));
    let model = Arc::new(ScriptedModel::new([
        // No id: the decoder mints `call_1`.
        ScriptedTurn::openai_calls(&[("", "text__echo", &a)]),
        // The provider's `call_1` again, and no id again (minted `call_1` once more).
        ScriptedTurn::openai_calls(&[("call_1", "text__echo", &b)]),
        ScriptedTurn::openai_calls(&[("", "text__echo", &c), ("call_1~2", "text__echo", &d)]),
        ScriptedTurn::openai_text("done"),
    ]));
    let agent_events = Arc::new(Mutex::new(Vec::new()));
    let seen = Arc::clone(&agent_events);
    let agent = Agent::new(model.clone(), runner);
    let output = agent
        .run(vec![Message::user("go")], &ctx(), &move |event| seen.lock().unwrap().push(event))
        .await;
    assert_eq!(output.done.stop, StopReason::Answered);

    // The runner's sink: one start, then one result, per id; four ids.
    let runner_ids = assert_paired(runner_marks(&sink.events()));
    assert_eq!(runner_ids.len(), 4, "{runner_ids:?}");

    // The agent's own events: every started id is distinct and ends once.
    let events = agent_events.lock().unwrap();
    // A repeated id would be a second start.
    let started = assert_paired(agent_marks(&events));
    assert_eq!(started, runner_ids);
    let records: Vec<&str> =
        output.done.records.iter().map(|record| record.tool_call_id.as_str()).collect();
    assert_eq!(records, started);

    // The model gets its results under the ids it sent.
    let wire: Vec<Vec<String>> = output
        .messages
        .iter()
        .filter_map(|message| match message {
            Message::ToolResults(results) => {
                assert!(results.iter().all(|r| matches!(r.outcome, ToolOutcome::Done(_))));
                Some(results.iter().map(|result| result.call_id.clone()).collect())
            }
            _ => None,
        })
        .collect();
    let asked: Vec<Vec<String>> = output
        .messages
        .iter()
        .filter_map(|message| match message {
            Message::Assistant(turn) if !turn.calls.is_empty() => {
                Some(turn.calls.iter().map(|call| call.id.clone()).collect())
            }
            _ => None,
        })
        .collect();
    assert_eq!(wire, asked);
    assert_eq!(wire[1], ["call_1"], "the provider's id is kept for the wire");
}
