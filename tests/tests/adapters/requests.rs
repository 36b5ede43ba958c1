//! Whole request bodies, as each adapter encodes them: the conversation, the options and the
//! tool fields, and nothing a model client has to add.

use serde_json::{Value, json};
use tool_runtime::adapters::{
    Adapter, Anthropic, Decoded, EncodeError, Gemini, Message, ModelRequest, Ollama, OpenAiChat,
    OpenAiResponses, RequestOptions, ToolCall, ToolChoice, ToolResult,
};
use tool_runtime::prelude::*;

// Also the tool of `grammar_chat`'s requests. (The doc comment is the pinned description.)
/// Add two numbers.
#[tool(name = "math__add", effect = read_only, redact = ["sum"])]
pub(crate) struct Add {
    pub(crate) a: i64,
    pub(crate) b: i64,
}

#[derive(Serialize, ToolSchema)]
pub(crate) struct Sum {
    sum: i64,
}

impl Tool for Add {
    type Output = Sum;
    async fn run(self, _: &ToolInvocationContext, _: &ToolCapabilities) -> Result<Sum, ToolError> {
        Ok(Sum { sum: self.a + self.b })
    }
}

/// A conversation with every kind of message: system, user, a turn with a call, its result,
/// and a user message after it.
fn conversation(adapter: &dyn Adapter) -> Vec<Message> {
    let call = ToolCall::new("call_1", "math__add", json!({"a": 2, "b": 40}));
    let mut turn: Decoded = adapter
        .decode(match adapter.provider() {
            tool_runtime::adapters::Provider::OpenAiChat => {
                br#"{"choices": [{"index": 0, "message": {"content": null}, "finish_reason": "tool_calls"}]}"#
                    as &[u8]
            }
            tool_runtime::adapters::Provider::OpenAiResponses => {
                br#"{"output": [], "status": "completed"}"#
            }
            tool_runtime::adapters::Provider::Anthropic => {
                br#"{"content": [], "stop_reason": "tool_use"}"#
            }
            tool_runtime::adapters::Provider::Gemini => {
                br#"{"candidates": [{"content": {"role": "model", "parts": []}, "finishReason": "STOP"}]}"#
            }
            tool_runtime::adapters::Provider::Ollama => {
                br#"{"message": {"role": "assistant", "content": ""}, "done": true, "done_reason": "stop"}"#
            }
        })
        .unwrap();
    turn.calls.push(call.clone());
    vec![
        Message::system("Be exact."),
        Message::user("What is 2 + 40?"),
        Message::Assistant(turn),
        Message::ToolResults(vec![ToolResult::ok(&call, json!({"sum": 42}))]),
        Message::user("And now?"),
    ]
}

/// The body's bytes, as sent.
fn encode_text(adapter: &dyn Adapter, options: &RequestOptions) -> String {
    let messages = conversation(adapter);
    let specs = [Add::spec()];
    let request = ModelRequest {
        messages: &messages,
        tools: &specs,
        choice: &ToolChoice::auto(),
        search: None,
    };
    String::from_utf8(adapter.encode_body(&request, options).unwrap()).unwrap()
}

fn encode(adapter: &dyn Adapter, options: &RequestOptions) -> Value {
    serde_json::from_str(&encode_text(adapter, options)).unwrap()
}

/// The bodies byte for byte: for OpenAI Chat and Anthropic with the options their HTTP clients
/// (`OpenAiCompatible`, `AnthropicMessages`) send by default (their default model, streamed,
/// usage asked for, no output budget of the client's own), for the others with default options.
#[test]
fn bodies_byte_for_byte() {
    insta::assert_snapshot!(
        "openai_chat_body",
        encode_text(&OpenAiChat::new(), &RequestOptions::new("gpt-4o-mini"))
    );
    insta::assert_snapshot!(
        "anthropic_body",
        encode_text(&Anthropic::new(), &RequestOptions::new("claude-sonnet-4-5"))
    );
    insta::assert_snapshot!(
        "openai_responses_body",
        encode_text(&OpenAiResponses::new(), &RequestOptions::new("gpt-5-mini"))
    );
    insta::assert_snapshot!(
        "gemini_body",
        encode_text(&Gemini::new(), &RequestOptions::new("gemini-2.5-flash"))
    );
    insta::assert_snapshot!(
        "ollama_body",
        encode_text(&Ollama::new(), &RequestOptions::new("qwen3:8b"))
    );
}

/// The messages of a request whose conversation ends in the agent loop's notice after tool
/// results (the form a run takes when its tool-calling turns are used up): the body's
/// conversation key only, so each snapshot shows where the notice goes.
fn notice_conversation(adapter: &dyn Adapter, options: &RequestOptions) -> Value {
    let mut messages = conversation(adapter);
    messages.pop();
    messages.push(Message::notice("No more tools can be called. Answer now."));
    let specs = [Add::spec()];
    let request = ModelRequest {
        messages: &messages,
        tools: &specs,
        choice: &ToolChoice::none(),
        search: None,
    };
    let body: Value =
        serde_json::from_slice(&adapter.encode_body(&request, options).unwrap()).unwrap();
    let key =
        ["messages", "input", "contents"].into_iter().find(|key| body.get(key).is_some()).unwrap();
    body[key].clone()
}

/// A notice is never sent as something the user said: a system message where it stands (Chat,
/// Ollama), a developer message where it stands (Responses), a text block of the results' turn
/// (Anthropic, Gemini), and never mixed into the instructions.
#[test]
fn a_notice_goes_where_each_provider_takes_one() {
    let options = RequestOptions::new("m");
    let chat = notice_conversation(&OpenAiChat::new(), &options);
    insta::assert_json_snapshot!("notice_openai_chat", chat);
    assert_eq!(chat.as_array().unwrap().last().unwrap()["role"], "system");
    let ollama = notice_conversation(&Ollama::new(), &options);
    insta::assert_json_snapshot!("notice_ollama", ollama);
    assert_eq!(ollama.as_array().unwrap().last().unwrap()["role"], "system");
    let responses = notice_conversation(&OpenAiResponses::new(), &options);
    insta::assert_json_snapshot!("notice_openai_responses", responses);
    assert_eq!(responses.as_array().unwrap().last().unwrap()["role"], "developer");
    let anthropic = notice_conversation(&Anthropic::new(), &options);
    insta::assert_json_snapshot!("notice_anthropic", anthropic);
    let last = anthropic.as_array().unwrap().last().unwrap();
    assert_eq!(last["content"][0]["type"], "tool_result");
    assert_eq!(last["content"][1]["type"], "text");
    let gemini = notice_conversation(&Gemini::new(), &options);
    insta::assert_json_snapshot!("notice_gemini", gemini);
    let last = gemini.as_array().unwrap().last().unwrap();
    assert!(last["parts"][0].get("functionResponse").is_some(), "{last}");
    assert!(last["parts"][1].get("text").is_some(), "{last}");
    // The instructions stay as they were: the notice is not joined into them.
    for adapter in [&Anthropic::new() as &dyn Adapter, &OpenAiResponses::new(), &Gemini::new()] {
        let mut messages = conversation(adapter);
        messages.push(Message::notice("No more tools."));
        let specs = [Add::spec()];
        let request = ModelRequest {
            messages: &messages,
            tools: &specs,
            choice: &ToolChoice::none(),
            search: None,
        };
        let body = String::from_utf8(adapter.encode_body(&request, &options).unwrap()).unwrap();
        assert_eq!(body.matches("No more tools.").count(), 1, "{body}");
    }
}

fn keys(value: &Value) -> Vec<&str> {
    value.as_object().unwrap().keys().map(String::as_str).collect()
}

#[test]
fn openai_chat_body() {
    let options = RequestOptions::new("gpt-4o-mini").max_tokens(64).extra("seed", json!(7));
    let body = encode(&OpenAiChat::new(), &options);
    assert_eq!(
        keys(&body),
        [
            "seed",
            "model",
            "messages",
            "max_completion_tokens",
            "stream",
            "stream_options",
            "tools",
            "tool_choice"
        ]
    );
    let messages = body["messages"].as_array().unwrap();
    assert_eq!(messages[0], json!({"role": "system", "content": "Be exact."}));
    assert_eq!(messages[2]["tool_calls"][0]["id"], json!("call_1"));
    assert_eq!(messages[3]["role"], json!("tool"));
    assert_eq!(messages[4], json!({"role": "user", "content": "And now?"}));

    let quiet = encode(&OpenAiChat::new(), &RequestOptions::new("m").stream_usage(false));
    assert_eq!(quiet["stream"], json!(true));
    assert_eq!(quiet.get("stream_options"), None);
    let whole = encode(&OpenAiChat::new(), &RequestOptions::new("m").stream(false));
    assert_eq!(whole.get("stream"), None);
}

#[test]
fn anthropic_body() {
    let body = encode(&Anthropic::new(), &RequestOptions::new("claude-haiku-4-5"));
    assert_eq!(
        keys(&body),
        ["model", "max_tokens", "system", "messages", "stream", "tools", "tool_choice"]
    );
    assert_eq!(body["max_tokens"], json!(4096));
    let messages = body["messages"].as_array().unwrap();
    // user, assistant, user (the result and the next question merged)
    assert_eq!(messages.len(), 3);
    assert_eq!(messages[2]["content"][0]["type"], json!("tool_result"));
    assert_eq!(messages[2]["content"][1], json!({"type": "text", "text": "And now?"}));
}

#[test]
fn openai_responses_body() {
    let options = RequestOptions::new("gpt-5-mini").max_tokens(100);
    let body = encode(&OpenAiResponses::new(), &options);
    assert_eq!(
        keys(&body),
        ["model", "instructions", "input", "max_output_tokens", "stream", "tools", "tool_choice"]
    );
    assert_eq!(body["instructions"], json!("Be exact."));
    let input = body["input"].as_array().unwrap();
    assert_eq!(input[0], json!({"role": "user", "content": "What is 2 + 40?"}));
    assert_eq!(input[1]["type"], json!("function_call"));
    assert_eq!(input[2]["type"], json!("function_call_output"));
    assert_eq!(input[3], json!({"role": "user", "content": "And now?"}));
}

#[test]
fn gemini_body() {
    let options = RequestOptions::new("ignored")
        .max_tokens(256)
        .extra("generationConfig", json!({"temperature": 0.1}));
    let body = encode(&Gemini::new(), &options);
    assert_eq!(body.get("model"), None, "Gemini takes the model in the URL");
    assert_eq!(body["systemInstruction"], json!({"parts": [{"text": "Be exact."}]}));
    assert_eq!(body["generationConfig"], json!({"temperature": 0.1, "maxOutputTokens": 256}));
    let contents = body["contents"].as_array().unwrap();
    let roles: Vec<&str> =
        contents.iter().map(|content| content["role"].as_str().unwrap()).collect();
    assert_eq!(roles, ["user", "model", "user"]);
    assert!(contents[2]["parts"][0].get("functionResponse").is_some());
    assert_eq!(contents[2]["parts"][1], json!({"text": "And now?"}));
}

#[test]
fn ollama_body() {
    let body =
        encode(&Ollama::new(), &RequestOptions::new("qwen3:8b").max_tokens(32).stream(false));
    assert_eq!(body["model"], json!("qwen3:8b"));
    assert_eq!(body["stream"], json!(false), "Ollama streams unless told not to");
    assert_eq!(body["options"], json!({"num_predict": 32}));
    assert_eq!(body["messages"].as_array().unwrap().len(), 5);
}

#[test]
fn the_adapters_fields_win_over_extra_ones_and_tool_errors_stop_the_request() {
    let options = RequestOptions::new("gpt-4o-mini").extra("model", json!("other"));
    let body = encode(&OpenAiChat::new(), &options);
    assert_eq!(body["model"], json!("gpt-4o-mini"));

    let messages = [Message::user("Hi")];
    let choice = ToolChoice::tool("not__there");
    let request =
        ModelRequest { messages: &messages, tools: &[Add::spec()], choice: &choice, search: None };
    let error = Anthropic::new().encode_request(&request, &RequestOptions::new("m")).unwrap_err();
    assert!(matches!(error, EncodeError::UnknownTool(name) if name == "not__there"));
}
