//! `GrammarChat` (llama.cpp's `llama-server` with a GBNF grammar): the request body pinned
//! byte for byte, the grammar sent exactly when a call is required, a call written as text
//! decoded as a call, and a conversation with calls and results sent back as text.

use serde_json::{Value, json};
use tool_runtime::adapters::{
    Adapter, Decoded, EncodeError, FinishReason, GrammarChat, Message, ModelRequest,
    RequestOptions, ToolCall, ToolChoice, ToolResult,
};
use tool_runtime::gbnf::Grammar;
use tool_runtime::prelude::*;

use crate::requests::Add;

fn body(messages: &[Message], choice: &ToolChoice) -> Result<Value, EncodeError> {
    let specs = [Add::spec()];
    let request = ModelRequest { messages, tools: &specs, choice, search: None };
    let options = RequestOptions::new("default").extra("seed", json!(42));
    GrammarChat::new().encode_request(&request, &options).map(Value::Object)
}

fn conversation() -> Vec<Message> {
    let call = ToolCall::new("call_1", "math__add", json!({"a": 2, "b": 40}));
    vec![
        Message::system("Be exact."),
        Message::user("What is 2 + 40?"),
        Message::Assistant(Decoded::new("", vec![call.clone()])),
        Message::ToolResults(vec![ToolResult::ok(&call, json!({"sum": 42}))]),
        Message::user("And now?"),
    ]
}

#[test]
fn a_required_call_sends_the_grammar_of_the_offered_tools_and_the_conversation_as_text() {
    let body = body(&conversation(), &ToolChoice::required()).unwrap();
    insta::assert_json_snapshot!("grammar_chat_required", body);
    assert_eq!(body["grammar"], json!(Grammar::for_tools(&[Add::spec()]).unwrap().as_str()));
    assert_eq!(body["stream"], json!(false));
    assert!(body.get("tools").is_none(), "the model has no native tool calling");
    let messages = body["messages"].as_array().unwrap();
    let system = messages[0]["content"].as_str().unwrap();
    assert!(
        system.starts_with("Be exact.") && system.contains("Tool `math__add`: Add two numbers.")
    );
    assert_eq!(messages[2]["content"], json!(r#"{"name":"math__add","arguments":{"a":2,"b":40}}"#));
    assert_eq!(messages[3]["role"], "user");
    assert!(messages[3]["content"].as_str().unwrap().contains("`math__add` returned"));
}

#[test]
fn auto_describes_the_tools_without_a_grammar_and_none_does_neither() {
    let auto = body(&conversation(), &ToolChoice::auto()).unwrap();
    assert!(auto.get("grammar").is_none());
    assert!(auto["messages"][0]["content"].as_str().unwrap().contains("math__add"));
    let none = body(&conversation(), &ToolChoice::none()).unwrap();
    assert!(none.get("grammar").is_none());
    assert_eq!(none["messages"][0]["content"], "Be exact.");
}

#[test]
fn text_that_is_a_call_is_decoded_as_one_and_other_text_is_the_answer() {
    let completion = |content: &str| {
        json!({"choices": [{"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}]})
            .to_string()
    };
    let adapter = GrammarChat::new();
    let call = adapter
        .decode(completion(r#"{"name": "math__add", "arguments": {"a": 1, "b": 2}}"#).as_bytes())
        .unwrap();
    assert_eq!(call.calls.len(), 1);
    assert_eq!(call.calls[0].arguments.value(), Some(&json!({"a": 1, "b": 2})));
    assert_eq!(call.finish.reason, FinishReason::ToolCalls);
    for text in [
        "The sum is 3.",
        r#"{"name": "math__add"}"#,
        r#"{"name": 1, "arguments": {}}"#,
        "{not json",
    ] {
        let answer = adapter.decode(completion(text).as_bytes()).unwrap();
        assert!(answer.calls.is_empty(), "{text}");
        assert_eq!(answer.text, text);
        assert_eq!(answer.finish.reason, FinishReason::Stop);
    }
}
