//! A conversation that crosses providers: begun with Anthropic (`toolu_...` ids), continued
//! with Mistral through the OpenAI Chat adapter in Mistral's id form (9 letters and digits),
//! and handed back to Anthropic. The request to Mistral carries every id in its form, each
//! result under its call's id; the conversation itself keeps the ids it was given.

use serde_json::{Value, json};
use tool_runtime::adapters::{
    Adapter, Anthropic, CallIdFormat, EncodeError, Message, ModelRequest, OpenAiChat, ToolCall,
    ToolChoice, ToolResult,
};

use crate::support::decode_fixture;

/// A Mistral chat completion calling one tool, under an id of Mistral's form.
const MISTRAL_TURN: &[u8] =
    br#"{"id": "cmpl-e5cc70bb28c444948073e77776eb30ef", "object": "chat.completion",
    "model": "mistral-small-latest", "choices": [{"index": 0, "message": {"role": "assistant",
    "content": "", "tool_calls": [{"id": "D681PevKs", "type": "function",
    "function": {"name": "docs__search", "arguments": "{\"query\": \"limits\"}"}}]},
    "finish_reason": "tool_calls"}]}"#;

fn mistral() -> OpenAiChat {
    OpenAiChat::new().call_ids(CallIdFormat::Mistral)
}

/// User, Anthropic's turn with two calls, their results, Mistral's turn with one, its result.
fn crossing() -> Vec<Message> {
    let anthropic = decode_fixture("anthropic", "nonstream_parallel.json");
    let mistral_turn = mistral().decode(MISTRAL_TURN).unwrap();
    let results = |calls: &[ToolCall]| {
        Message::ToolResults(
            calls.iter().map(|call| ToolResult::ok(call, json!({"ok": true}))).collect(),
        )
    };
    vec![
        Message::user("What time is it in Berlin, and what do the docs say about streaming?"),
        Message::Assistant(anthropic.clone()),
        results(&anthropic.calls),
        Message::Assistant(mistral_turn.clone()),
        results(&mistral_turn.calls),
    ]
}

fn encoded(adapter: &dyn Adapter, messages: &[Message]) -> Result<Value, EncodeError> {
    let request = ModelRequest { messages, tools: &[], choice: &ToolChoice::auto(), search: None };
    let fields = adapter.encode_request(
        &request,
        &tool_runtime::adapters::RequestOptions::new("mistral-small-latest"),
    )?;
    Ok(Value::Object(fields))
}

fn is_mistral_id(id: &str) -> bool {
    id.len() == 9 && id.bytes().all(|byte| byte.is_ascii_alphanumeric())
}

#[test]
fn a_conversation_begun_elsewhere_goes_to_mistral_in_its_id_form() {
    let messages = crossing();
    let body = encoded(&mistral(), &messages).unwrap();
    insta::assert_json_snapshot!("mistral_crossing", body["messages"]);
    let sent = body["messages"].as_array().unwrap();
    let call_ids: Vec<&str> = sent
        .iter()
        .filter_map(|message| message.get("tool_calls"))
        .flat_map(|calls| calls.as_array().unwrap())
        .map(|call| call["id"].as_str().unwrap())
        .collect();
    let result_ids: Vec<&str> = sent
        .iter()
        .filter_map(|message| message.get("tool_call_id"))
        .map(|id| id.as_str().unwrap())
        .collect();
    assert_eq!(call_ids.len(), 3);
    assert!(call_ids.iter().all(|id| is_mistral_id(id)), "{call_ids:?}");
    assert_eq!(result_ids, call_ids, "each result under its call's id, in order");
    // Anthropic's ids are derived; Mistral's own goes as it came.
    assert_eq!(call_ids[0], CallIdFormat::Mistral.wire_id("toolu_01T1x1fJ34qAmk2tNTrN7Up6"));
    assert_eq!(call_ids[2], "D681PevKs");
    // The same conversation, sent again a turn later, starts with the same bytes.
    let mut longer = messages.clone();
    longer.push(Message::user("And in Tokyo?"));
    let again = encoded(&mistral(), &longer).unwrap();
    assert_eq!(again["messages"].as_array().unwrap()[..sent.len()], sent[..]);
}

#[test]
fn the_conversation_keeps_its_ids_and_goes_back_to_anthropic_as_it_was() {
    let messages = crossing();
    encoded(&mistral(), &messages).unwrap();
    let Message::Assistant(turn) = &messages[1] else { panic!() };
    assert_eq!(turn.calls[0].id, "toolu_01T1x1fJ34qAmk2tNTrN7Up6");
    let stored = serde_json::to_string(&messages).unwrap();
    assert!(stored.contains("toolu_01T1x1fJ34qAmk2tNTrN7Up6") && stored.contains("D681PevKs"));
    let back = encoded(&Anthropic::new(), &messages).unwrap().to_string();
    assert!(back.contains("\"tool_use_id\":\"toolu_01T1x1fJ34qAmk2tNTrN7Up6\""), "{back}");
    // Without the Mistral form, OpenAI Chat sends the ids as they are.
    let plain = encoded(&OpenAiChat::new(), &messages).unwrap();
    assert_eq!(plain["messages"][1]["tool_calls"][0]["id"], "toolu_01T1x1fJ34qAmk2tNTrN7Up6");
}

#[test]
fn two_ids_that_would_be_sent_as_one_are_refused() {
    let foreign = "toolu_01T1x1fJ34qAmk2tNTrN7Up6";
    let taken = CallIdFormat::Mistral.wire_id(foreign).into_owned();
    let first = ToolCall::new(foreign, "docs__search", json!({}));
    let second = ToolCall::new(taken.clone(), "docs__search", json!({}));
    let messages = vec![
        Message::user("go"),
        Message::Assistant(tool_runtime::adapters::Decoded::new(
            "",
            vec![first.clone(), second.clone()],
        )),
        Message::ToolResults(vec![
            ToolResult::ok(&first, json!(1)),
            ToolResult::ok(&second, json!(2)),
        ]),
    ];
    let error = encoded(&mistral(), &messages).unwrap_err();
    assert_eq!(
        error,
        EncodeError::CallIdClash { first: foreign.into(), second: taken.clone(), wire: taken }
    );
    assert!(error.to_string().contains("would both be sent as"), "{error}");
}
