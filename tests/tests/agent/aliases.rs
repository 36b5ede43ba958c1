//! Names from the outside: an explicit alias map on the agent for a tool a model calls without
//! its namespace. Never guessed; refused when ambiguous; run and recorded under the real name,
//! answered under the name the model used.

use std::sync::Arc;

use serde_json::json;
use tool_runtime::adapters::ToolOutcome;
use tool_runtime::agent::{Agent, AgentConfig, Message, ScriptedModel, ScriptedTurn};
use tool_runtime::policy::ToolPolicy;
use tool_runtime::prelude::*;
use tool_runtime::runtime::ToolErrorCode as Code;
use tool_tests::fixtures::ctx;

/// Get the weather.
#[tool(name = "weather__get_weather", effect = read_only, redact = all)]
struct GetWeather {
    city: String,
}

impl Tool for GetWeather {
    type Output = String;
    async fn run(
        self,
        _: &ToolInvocationContext,
        _: &ToolCapabilities,
    ) -> Result<String, ToolError> {
        Ok(format!("sunny in {}", self.city))
    }
}

/// Say hello.
#[tool(name = "greet__hello", effect = read_only, redact = all)]
struct Hello {}

impl Tool for Hello {
    type Output = String;
    async fn run(
        self,
        _: &ToolInvocationContext,
        _: &ToolCapabilities,
    ) -> Result<String, ToolError> {
        Ok("hello".into())
    }
}

fn agent(model: Arc<ScriptedModel>, aliases: &[(&str, &str)]) -> Agent {
    let catalog =
        ToolCatalog::builder().register::<GetWeather>().register::<Hello>().build().unwrap();
    let runner = ToolRunner::builder(catalog)
        .policy(ToolPolicy::allowing(["weather__*", "greet__*"]))
        .build();
    let aliases =
        aliases.iter().map(|(alias, real)| ((*alias).to_owned(), (*real).to_owned())).collect();
    Agent::new(model, runner).with_config(AgentConfig { aliases, ..AgentConfig::default() })
}

#[tokio::test]
async fn an_alias_runs_the_real_tool_and_only_listed_names_are_taken() {
    let model = Arc::new(ScriptedModel::new([
        ScriptedTurn::openai_calls(&[
            ("a", "get_weather", r#"{"city": "Oslo"}"#),
            ("b", "weather", r#"{"city": "Oslo"}"#),
        ]),
        ScriptedTurn::openai_text("done"),
    ]));
    let agent = agent(Arc::clone(&model), &[("get_weather", "weather__get_weather")]);
    let output = agent.run(vec![Message::user("weather?")], &ctx(), &|_| {}).await;
    let records = &output.done.records;
    // Recorded and counted under the real name.
    assert_eq!(records[0].tool_name, "weather__get_weather");
    assert_eq!(records[0].result, Some(json!("sunny in Oslo")));
    assert_eq!(output.done.tool_stats.by_tool["weather__get_weather"].calls, 1);
    // Never guessed: `weather` is no alias, so no tool.
    assert_eq!(records[1].error.as_ref().map(|error| error.code), Some(Code::Unavailable));
    // The model is answered under the name it used.
    let requests = model.requests();
    let Some(Message::ToolResults(results)) = requests[1].messages.last() else { panic!() };
    assert_eq!(results[0].name, "get_weather");
    assert!(matches!(&results[0].outcome, ToolOutcome::Done(_)));
}

#[tokio::test]
async fn an_alias_that_is_also_a_tool_is_refused_as_ambiguous() {
    let model = Arc::new(ScriptedModel::new([
        ScriptedTurn::openai_calls(&[("a", "greet__hello", "{}")]),
        ScriptedTurn::openai_text("done"),
    ]));
    let agent = agent(model, &[("greet__hello", "weather__get_weather")]);
    let output = agent.run(vec![Message::user("hi")], &ctx(), &|_| {}).await;
    let error = output.done.records[0].error.as_ref().expect("refused");
    assert_eq!(error.code, Code::Unavailable);
    assert!(
        error.message.contains("ambiguous") && error.message.contains("weather__get_weather"),
        "{error}"
    );
}

#[test]
fn aliases_read_from_configuration() {
    let config =
        AgentConfig::from_json(r#"{"aliases": {"get_weather": "weather__get_weather"}}"#).unwrap();
    assert_eq!(config.aliases["get_weather"], "weather__get_weather");
    assert!(serde_json::to_value(AgentConfig::default()).unwrap().get("aliases").is_none());
}
