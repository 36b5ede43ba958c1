//! The quickstart session: the scripted turns of a model that calls two tools in parallel, has
//! one call denied by policy, corrects an invalid call, gets a state change approved, and
//! answers. Used by the `quickstart` program and its test.

use tool_runtime::agent::{Message, ScriptedModel, ScriptedTurn};

/// What the user asks.
pub const QUESTION: &str = "What time is it in Tokyo, and do the docs explain redaction? Also file a ticket saying that search ignores tags, and close ticket 7 as a duplicate.";

/// Instructions for the model.
pub const SYSTEM: &str =
    "You are the support assistant of the Example docs site. Use the tools; never invent results.";

/// The conversation the session starts from.
#[must_use]
pub fn conversation() -> Vec<Message> {
    vec![Message::system(SYSTEM), Message::user(QUESTION)]
}

/// The model's answer once every tool result is in.
pub const ANSWER: &str = "It is 20:06 in Tokyo (Wednesday 18 November 2026). Yes: the how-to \"Redact tool output\" (https://docs.example.com/redaction) explains redaction. I filed ticket #1, \"Search ignores tags\"; it is open. I could not close ticket 7: closing tickets is not allowed for me, so please close it yourself.";

/// The scripted model of the session, as OpenAI Chat Completions streams.
#[must_use]
pub fn model() -> ScriptedModel {
    ScriptedModel::new([
        // Two independent reads, in parallel.
        ScriptedTurn::openai_calls(&[
            ("call_time", "core__get_current_time", r#"{"timezone": "Asia/Tokyo"}"#),
            ("call_docs", "docs__search", r#"{"query": "redact", "limit": 3}"#),
        ]),
        // An invalid priority, and a tool the policy does not allow.
        ScriptedTurn::openai_calls(&[
            (
                "call_ticket",
                "tickets__create_ticket",
                r#"{"title": "Search ignores tags", "body": "Filtering by tag returns every document.", "priority": "asap", "labels": ["bug", "search"]}"#,
            ),
            ("call_close", "tickets__close_ticket", r#"{"number": 7, "reason": "duplicate"}"#),
        ]),
        // The corrected call; policy sends it for approval.
        ScriptedTurn::openai_calls(&[(
            "call_ticket_2",
            "tickets__create_ticket",
            r#"{"title": "Search ignores tags", "body": "Filtering by tag returns every document.", "priority": "high", "labels": ["bug", "search"]}"#,
        )]),
        ScriptedTurn::openai_text(ANSWER),
    ])
}
