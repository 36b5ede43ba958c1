//! Policy entries that would allow nothing, or not the tools they seem to name, are refused
//! where the policy is read, with the entry and the problem named.

use std::panic::catch_unwind;

use tool_runtime::prelude::*;

/// Patterns that would allow no tool at all, or not the ones they name.
const REFUSED: &[&str] = &[
    "*",
    "**",
    "core*",
    "core_*",
    "*__get_time",
    "core__get_*",
    "core__*__x",
    "__*",
    "mcp__*",
    "MCP__*",
    "mcp__github__*",
    "",
    "core",
    "core__",
    "core__get time",
    "core__ümlaut",
];

#[test]
fn a_pattern_that_would_allow_nothing_is_refused_by_from_json() {
    for pattern in REFUSED {
        let json = serde_json::json!({"allowed_tools": [pattern]}).to_string();
        let error = ToolPolicy::from_json(&json).expect_err(pattern);
        assert!(error.to_string().contains("allowed_tools"), "{pattern}: {error}");
    }
}

#[test]
fn a_pattern_that_would_allow_nothing_is_refused_by_allowing() {
    for pattern in REFUSED {
        let built = catch_unwind(|| ToolPolicy::allowing([*pattern]));
        assert!(built.is_err(), "{pattern} was accepted");
    }
}

#[test]
fn a_tool_exception_under_a_pattern_is_refused() {
    // `tools` is keyed by exact names: a pattern there would deny or budget nothing.
    for key in ["core__*", "*", "core"] {
        let json =
            serde_json::json!({"allowed_tools": ["core__*"], "tools": {key: {"deny": true}}});
        let error = ToolPolicy::from_json(&json.to_string()).expect_err(key);
        assert!(error.to_string().contains("tools"), "{key}: {error}");
    }
}

#[test]
fn try_allowing_and_check_name_the_entry_and_the_problem() {
    use tool_runtime::policy::PatternProblem;
    let error = ToolPolicy::try_allowing(["core__*", "*"]).unwrap_err();
    assert_eq!((error.field(), error.entry()), ("allowed_tools", "*"));
    assert_eq!(error.problem(), &PatternProblem::Everything);
    let error = ToolPolicy::try_allowing(["mcp__github__*"]).unwrap_err();
    assert_eq!(error.problem(), &PatternProblem::ImportedWildcard);
    let by_hand = ToolPolicy { allowed_tools: vec!["core__get_*".into()], ..ToolPolicy::default() };
    assert_eq!(by_hand.check().unwrap_err().problem(), &PatternProblem::MisplacedWildcard);
}

#[test]
fn the_accepted_forms_still_mean_what_they_say() {
    let policy = ToolPolicy::from_json(
        r#"{"allowed_tools": ["core__*", "a-b__c__*", "shop__get_order", "mcp__github__create_issue"]}"#,
    )
    .unwrap();
    assert!(policy.lists("core__get_time"));
    assert!(policy.lists("a-b__c__d"));
    assert!(!policy.lists("a-b__x"));
    assert!(policy.lists("shop__get_order"));
    assert!(!policy.lists("shop__delete_order"));
    assert!(policy.lists("mcp__github__create_issue"));
    assert!(!policy.lists("mcp__github__delete_repo"));
    assert_eq!(
        policy,
        ToolPolicy::allowing([
            "core__*",
            "a-b__c__*",
            "shop__get_order",
            "mcp__github__create_issue"
        ])
    );
}
