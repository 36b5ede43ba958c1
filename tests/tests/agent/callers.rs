//! Who may call a tool, held by the agent whatever the provider let through: a call from code
//! the model wrote runs only a tool that allows code (`callers = programmatic` or `both`), a
//! direct call only a tool the model may call itself; the others are refused as `unavailable`
//! and never run.

use std::sync::Arc;

use serde_json::json;
use tool_runtime::adapters::Provider;
use tool_runtime::agent::{Agent, Message, ScriptedModel, ScriptedTurn};
use tool_runtime::policy::ToolPolicy;
use tool_runtime::prelude::*;
use tool_runtime::runtime::ToolErrorCode as Code;
use tool_tests::fixtures::{Now, SalesQuery, SalesRevenue, ctx};

/// A `tool_use` block: from the code execution `srvtoolu_1` when `from_code`.
fn tool_use(id: &str, name: &str, input: serde_json::Value, from_code: bool) -> serde_json::Value {
    let caller = if from_code {
        json!({"type": "code_execution_20260120", "tool_id": "srvtoolu_1"})
    } else {
        json!({"type": "direct"})
    };
    json!({"type": "tool_use", "id": id, "name": name, "input": input, "caller": caller})
}

#[tokio::test]
async fn calls_run_only_from_where_their_tool_allows() {
    let calls = json!({
        "type": "message", "role": "assistant", "stop_reason": "tool_use",
        "container": {"id": "container_1", "expires_at": "2026-11-28T01:00:00Z"},
        "content": [
            {"type": "server_tool_use", "id": "srvtoolu_1", "name": "code_execution", "input": {"code": "..."}},
            tool_use("toolu_1", "sales__query", json!({"sql": "West"}), true),
            tool_use("toolu_2", "sales__query", json!({"sql": "East"}), false),
            tool_use("toolu_3", "core__now", json!({}), true),
            tool_use("toolu_4", "sales__revenue", json!({"region": "West"}), true),
            tool_use("toolu_5", "sales__revenue", json!({"region": "East"}), false),
            tool_use("toolu_6", "core__now", json!({}), false),
        ],
    });
    let answer = json!({"type": "message", "role": "assistant", "stop_reason": "end_turn",
        "content": [{"type": "text", "text": "West sold most."}]});
    let model = Arc::new(ScriptedModel::new([
        ScriptedTurn::body(Provider::Anthropic, calls.to_string()),
        ScriptedTurn::body(Provider::Anthropic, answer.to_string()),
    ]));
    let catalog = ToolCatalog::builder()
        .register::<SalesQuery>()
        .register::<SalesRevenue>()
        .register::<Now>()
        .build()
        .unwrap();
    let runner =
        ToolRunner::builder(catalog).policy(ToolPolicy::allowing(["sales__*", "core__*"])).build();
    let agent = Agent::new(Arc::clone(&model) as _, runner);
    let output = agent.run(vec![Message::user("Which region sold most?")], &ctx(), &|_| {}).await;
    assert_eq!(output.done.answer, "West sold most.");
    let outcome: Vec<(&str, Option<Code>)> = output
        .done
        .records
        .iter()
        .map(|record| (record.tool_call_id.as_str(), record.error.as_ref().map(|error| error.code)))
        .collect();
    assert_eq!(
        outcome,
        [
            ("toolu_1", None),
            ("toolu_2", Some(Code::Unavailable)),
            ("toolu_3", Some(Code::Unavailable)),
            ("toolu_4", None),
            ("toolu_5", None),
            ("toolu_6", None),
        ]
    );
    let refused = output.done.records[1].error.as_ref().unwrap().message.clone();
    assert!(refused.contains("takes no calls from the model directly"), "{refused}");
    let refused = output.done.records[2].error.as_ref().unwrap().message.clone();
    assert!(refused.contains("takes no calls from code the model wrote"), "{refused}");
    assert_eq!(output.done.records[0].result, Some(json!("rows for West")));
    // The model hears of each refusal, and its calls go back with their callers.
    let requests = model.requests();
    let Some(Message::Assistant(turn)) = requests[1].messages.get(1) else { panic!() };
    assert!(turn.calls[0].from_code() && !turn.calls[1].from_code());
}
