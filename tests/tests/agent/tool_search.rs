//! The model finds its tools by searching (`AgentConfig::tool_search`): the agent answers each
//! search with its selector, offers what was found from the next request on (after the tools
//! always offered, so every provider's tools array only grows at its end), records what each
//! search found, and refuses a call of a tool no search found.

use std::sync::{Arc, Mutex};

use serde_json::{Value, json};
use tool_runtime::adapters::{
    ClientSearch, Message, ModelRequest, Provider, RequestOptions, SEARCH_TOOL, ToolChoice,
};
use tool_runtime::agent::{
    Agent, AgentConfig, AgentEvent, FoundTools, ScriptedModel, ScriptedTurn, ToolSearchSettings,
};
use tool_runtime::policy::ToolPolicy;
use tool_runtime::prelude::*;
use tool_runtime::runtime::ToolErrorCode as Code;
use tool_tests::fixtures::{Forecast, Now, SendMail, ctx};

/// An Anthropic turn that makes these `tool_use` calls: `(id, name, input)`.
fn calls(calls: &[(&str, &str, Value)]) -> ScriptedTurn {
    let content: Vec<Value> = calls
        .iter()
        .map(
            |(id, name, input)| json!({"type": "tool_use", "id": id, "name": name, "input": input}),
        )
        .collect();
    let body = json!({"type": "message", "role": "assistant", "stop_reason": "tool_use", "content": content});
    ScriptedTurn::body(Provider::Anthropic, body.to_string())
}

/// An Anthropic turn that answers `text`.
fn answer(text: &str) -> ScriptedTurn {
    let body = json!({"type": "message", "role": "assistant", "stop_reason": "end_turn",
        "content": [{"type": "text", "text": text}]});
    ScriptedTurn::body(Provider::Anthropic, body.to_string())
}

fn agent(model: Arc<ScriptedModel>) -> Agent {
    let catalog = ToolCatalog::builder()
        .register::<Now>()
        .register::<Forecast>()
        .register::<SendMail>()
        .build()
        .unwrap();
    let policy = ToolPolicy::allowing(["core__*", "weather__*", "mail__*"]);
    let runner = ToolRunner::builder(catalog).policy(policy).build();
    let search = ToolSearchSettings {
        always: vec!["core__now".to_owned()],
        max_results: 1,
        ..ToolSearchSettings::default()
    };
    let config = AgentConfig { tool_search: Some(search), ..AgentConfig::default() };
    Agent::new(model as _, runner).with_config(config)
}

#[tokio::test]
async fn the_model_finds_its_tools_and_calls_only_those_it_found() {
    let model = Arc::new(ScriptedModel::new([
        // A search, and a call of a tool it has not found yet.
        calls(&[
            ("toolu_1", SEARCH_TOOL, json!({"query": "weather forecast for a city"})),
            ("toolu_2", "weather__forecast", json!({"city": "Lisbon"})),
        ]),
        // The tool found, and one never found.
        calls(&[
            ("toolu_3", "weather__forecast", json!({"city": "Lisbon"})),
            ("toolu_4", "mail__send", json!({"to": "a@b.c", "body": "Rain."})),
            ("toolu_5", SEARCH_TOOL, json!({"term": "mail"})),
        ]),
        answer("Rain in Lisbon."),
    ]));
    let events = Mutex::new(Vec::new());
    let on_event = |event: AgentEvent| events.lock().unwrap().push(event);
    let agent = agent(Arc::clone(&model));
    let output = agent.run(vec![Message::user("Will it rain in Lisbon?")], &ctx(), &on_event).await;

    assert_eq!(output.done.answer, "Rain in Lisbon.");
    let outcome: Vec<(&str, Option<Code>)> = (output.done.records.iter())
        .map(|record| (record.tool_call_id.as_str(), record.error.as_ref().map(|error| error.code)))
        .collect();
    assert_eq!(
        outcome,
        [
            ("toolu_2", Some(Code::Unavailable)),
            ("toolu_3", None),
            ("toolu_4", Some(Code::Unavailable)),
        ]
    );
    let refused = &output.done.records[0].error.as_ref().unwrap().message;
    assert!(refused.contains("no search found it yet"), "{refused}");
    assert_eq!(output.done.records[1].result, Some(json!("rain in Lisbon")));

    // What each search found and what each turn offered are recorded.
    assert_eq!(
        output.done.found,
        [FoundTools {
            iteration: 1,
            query: "weather forecast for a city".to_owned(),
            tools: vec!["weather__forecast".to_owned()],
        }]
    );
    let grown = vec!["core__now", "weather__forecast"];
    assert_eq!(output.done.offered, [vec!["core__now"], grown.clone(), grown]);
    let found_events: Vec<Vec<String>> = (events.lock().unwrap().iter())
        .filter_map(|event| match event {
            AgentEvent::ToolsFound { names, .. } => Some(names.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(found_events, [vec!["weather__forecast".to_owned()]]);

    // A search without a query is answered with what it takes, and finds nothing.
    let Some(Message::ToolResults(results)) = output.messages.get(4) else { panic!() };
    let text = results[2].content_text();
    assert!(results[2].is_error() && text.contains("the search was not run"), "{text}");

    // Every request offered the search, and the tools array of each request, on every
    // provider, begins with the one of the request before it.
    let requests = model.requests();
    assert_eq!(requests[0].tools, ["core__now"]);
    assert_eq!(requests[1].tools, ["core__now", "weather__forecast"]);
    assert_eq!(requests[0].deferred, ["mail__send", "weather__forecast"]);
    let catalog = [Now::spec(), Forecast::spec(), SendMail::spec()];
    let spec = |name: &String| *catalog.iter().find(|spec| spec.name() == name).unwrap();
    for provider in Provider::ALL {
        let adapter = provider.adapter(false);
        let mut previous: Vec<Value> = Vec::new();
        for seen in &requests {
            let tools: Vec<&ToolSpec> = seen.tools.iter().map(spec).collect();
            let deferred: Vec<&ToolSpec> = seen.deferred.iter().map(spec).collect();
            let description = ToolSearchSettings::default().description;
            let search = ClientSearch { description: &description, deferred: &deferred };
            let request = ModelRequest {
                messages: &seen.messages,
                tools: &tools,
                choice: &seen.choice,
                search: Some(search),
            };
            let body = adapter.encode_request(&request, &RequestOptions::new("m")).unwrap();
            let array = match provider {
                Provider::Gemini => body["tools"][0]["functionDeclarations"].clone(),
                _ => body["tools"].clone(),
            };
            let array = array.as_array().cloned().unwrap_or_default();
            assert!(array.starts_with(&previous), "{provider:?}: {previous:?} then {array:?}");
            previous = array;
        }
    }
    assert_eq!(ToolChoice::auto(), requests[0].choice);
}

#[tokio::test]
async fn what_was_found_lives_in_the_conversation() {
    let model = Arc::new(ScriptedModel::new([
        calls(&[("toolu_1", SEARCH_TOOL, json!({"query": "weather forecast"}))]),
        answer("Found it."),
        // The next run: the tool found in the last one is offered from its first request.
        calls(&[("toolu_2", "weather__forecast", json!({"city": "Porto"}))]),
        answer("Rain in Porto."),
    ]));
    let agent = agent(Arc::clone(&model));
    let first = agent.run(vec![Message::user("Can you check the weather?")], &ctx(), &|_| {}).await;
    let mut messages = first.messages;
    // Stored and read back, as a second process would.
    let stored = serde_json::to_string(&messages).unwrap();
    messages = serde_json::from_str(&stored).unwrap();
    messages.push(Message::user("And in Porto?"));
    let second = agent.run(messages, &ctx(), &|_| {}).await;
    assert_eq!(second.done.answer, "Rain in Porto.");
    assert_eq!(second.done.offered[0], ["core__now", "weather__forecast"]);
    assert!(second.done.records[0].error.is_none());
    assert!(second.done.found.is_empty(), "the second run searched nothing");
}
