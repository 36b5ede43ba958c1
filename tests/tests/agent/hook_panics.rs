//! A panicking hook in the agent loop: a hook that panics for one call of a batch gives that
//! call a typed result; the batch's other calls run and the run goes on.

use std::sync::Arc;

use async_trait::async_trait;
use tool_runtime::adapters::ToolOutcome;
use tool_runtime::agent::{Agent, Message, ScriptedModel, ScriptedTurn, StopReason};
use tool_runtime::catalog::ToolCatalog;
use tool_runtime::policy::ToolPolicy;
use tool_runtime::prelude::*;
use tool_runtime::runner::ToolRunner;
use tool_runtime::runner::{Authorizer, AuthzDenied};
use tool_runtime::runtime::{CollectingSink, ToolEvent};
use tool_runtime::spec::ToolSpec;
use tool_tests::fixtures::{Echo, context};

/// Panics for the call `call_bad`.
#[derive(Debug)]
struct Buggy;

#[async_trait]
impl Authorizer for Buggy {
    async fn authorize(
        &self,
        ctx: &ToolInvocationContext,
        _: &ToolSpec,
    ) -> Result<(), AuthzDenied> {
        assert_ne!(ctx.tool_call_id(), Some("call_bad"), "authorizer bug");
        Ok(())
    }
}

#[tokio::test]
async fn a_panicking_hook_fails_one_call_and_not_the_batch() {
    let catalog = ToolCatalog::builder().register::<Echo>().build().unwrap();
    let sink = CollectingSink::new();
    let policy = ToolPolicy::from_json(r#"{"allowed_tools": ["text__*"]}"#).unwrap();
    let runner = ToolRunner::builder(catalog)
        .policy(policy)
        .authorizer(Arc::new(Buggy))
        .event_sink(sink.clone())
        .build();
    let model = Arc::new(ScriptedModel::new([
        ScriptedTurn::openai_calls(&[
            ("call_ok", "text__echo", r#"{"word": "a"}"#),
            ("call_bad", "text__echo", r#"{"word": "b"}"#),
            ("call_ok2", "text__echo", r#"{"word": "c"}"#),
        ]),
        ScriptedTurn::openai_text("done"),
    ]));
    let ctx = context("run-1", "u", "t");
    let output = Agent::new(model, runner).run(vec![Message::user("go")], &ctx, &|_| {}).await;
    assert_eq!(output.done.stop, StopReason::Answered);
    let Some(Message::ToolResults(results)) = output.messages.get(2) else {
        panic!("no results: {:?}", output.messages)
    };
    let outcomes: Vec<(&str, Option<&str>)> = results
        .iter()
        .map(|result| {
            let code = match &result.outcome {
                ToolOutcome::Done(_) => None,
                ToolOutcome::Failed(error) => Some(error.code.as_str()),
                _ => None,
            };
            (result.call_id.as_str(), code)
        })
        .collect();
    assert_eq!(outcomes, [("call_ok", None), ("call_bad", Some("execution")), ("call_ok2", None)]);
    let results = sink
        .events()
        .iter()
        .filter(|event| matches!(event, ToolEvent::ToolCallResult { .. }))
        .count();
    assert_eq!(results, 3);
}
