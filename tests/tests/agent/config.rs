//! `AgentConfig` read from configuration, as a policy is: JSON and TOML read alike, every key
//! optional, durations in milliseconds, and a key it does not know refused by name.

use std::time::Duration;

use tool_runtime::adapters::{ChoiceMode, ToolChoice};
use tool_runtime::agent::{AgentConfig, SelectionSettings, ToolSearchSettings};
use tool_runtime::prelude::*;

const JSON: &str = r#"{
    "max_iterations": 8,
    "max_concurrent": 2,
    "run_alone": ["state_change", "external_side_effect"],
    "budget_ms": 90000,
    "choice": {"mode": {"allowed": {"tools": ["docs__search"], "required": true}}, "parallel": false},
    "state_ttl_ms": 3600000,
    "max_state_bytes": 1048576,
    "selection": {"top_k": 12, "always": ["core__time"]},
    "reselect": true,
    "max_offered": 40,
    "arguments_in_events": true,
    "audit": false,
    "audit_ttl_ms": 86400000,
    "aliases": {"get_weather": "weather__get_weather"},
    "tool_search": {"always": ["core__time"], "max_results": 3, "description": "Find tools."}
}"#;

const TOML: &str = r#"
max_iterations = 8
max_concurrent = 2
run_alone = ["state_change", "external_side_effect"]
budget_ms = 90000
state_ttl_ms = 3600000
max_state_bytes = 1048576
reselect = true
max_offered = 40
arguments_in_events = true
audit = false
audit_ttl_ms = 86400000

[choice]
parallel = false
mode = { allowed = { tools = ["docs__search"], required = true } }

[selection]
top_k = 12
always = ["core__time"]

[aliases]
get_weather = "weather__get_weather"

[tool_search]
always = ["core__time"]
max_results = 3
description = "Find tools."
"#;

#[test]
fn json_and_toml_read_every_setting_alike() {
    let expected = AgentConfig {
        max_iterations: 8,
        max_concurrent: 2,
        run_alone: vec![ToolEffect::StateChange, ToolEffect::ExternalSideEffect],
        budget: Some(Duration::from_secs(90)),
        choice: ToolChoice {
            mode: ChoiceMode::Allowed { tools: vec!["docs__search".into()], required: true },
            parallel: Some(false),
        },
        state_ttl: Duration::from_secs(3600),
        max_state_bytes: 1 << 20,
        selection: Some(SelectionSettings { top_k: 12, always: vec!["core__time".into()] }),
        reselect: true,
        max_offered: 40,
        arguments_in_events: true,
        audit: false,
        audit_ttl: Duration::from_secs(86_400),
        aliases: [("get_weather".to_owned(), "weather__get_weather".to_owned())].into(),
        tool_search: Some(ToolSearchSettings {
            always: vec!["core__time".into()],
            max_results: 3,
            description: "Find tools.".into(),
        }),
    };
    assert_eq!(AgentConfig::from_json(JSON).unwrap(), expected);
    assert_eq!(toml::from_str::<AgentConfig>(TOML).unwrap(), expected);
    // What is written reads back the same.
    let written = serde_json::to_string(&expected).unwrap();
    assert_eq!(AgentConfig::from_json(&written).unwrap(), expected);
}

#[test]
fn a_missing_key_keeps_its_default_and_the_choice_reads_in_each_form() {
    assert_eq!(AgentConfig::from_json("{}").unwrap(), AgentConfig::default());
    let config = AgentConfig::from_json(r#"{"selection": {}}"#).unwrap();
    assert_eq!(config.selection, Some(SelectionSettings::default()));
    assert_eq!(config.selection.unwrap().top_k, 16);
    for (json, mode) in [
        (r#""none""#, ChoiceMode::None),
        (r#""required""#, ChoiceMode::Required),
        (r#""validated""#, ChoiceMode::Validated),
        (r#"{"tool": "docs__search"}"#, ChoiceMode::Tool("docs__search".into())),
    ] {
        let config = AgentConfig::from_json(&format!(r#"{{"choice": {{"mode": {json}}}}}"#));
        assert_eq!(config.unwrap().choice.mode, mode, "{json}");
    }
}

#[test]
fn an_unknown_or_malformed_key_is_refused_by_name() {
    for (json, says) in [
        (r#"{"max_iteration": 8}"#, "unknown field `max_iteration`"),
        (r#"{"budget": 90}"#, "unknown field `budget`"),
        (r#"{"selection": {"topk": 3}}"#, "unknown field `topk`"),
        (r#"{"choice": {"mode": "sometimes"}}"#, "unknown variant `sometimes`"),
        (r#"{"run_alone": ["dangerous"]}"#, "unknown variant `dangerous`"),
        (r#"{"budget_ms": -1}"#, "invalid value"),
    ] {
        let error = AgentConfig::from_json(json).unwrap_err().to_string();
        assert!(error.contains(says), "{json}: {error}");
    }
    let error = toml::from_str::<AgentConfig>("max_iterations = 8\nretries = 2\n").unwrap_err();
    assert!(error.to_string().contains("unknown field `retries`"), "{error}");
}
