//! The stored form of a conversation (`Message` as JSON) is stable: pinned by a snapshot, read
//! back to the same conversation, and strict about what it refuses.

use serde_json::{Value, json};
use tool_runtime::adapters::{
    Adapter, CallArguments, Decoded, Message, OpenAiChat, ToolCall, ToolOutcome, ToolResult,
};
use tool_runtime::content::{Part, Resource, ResourceBody, ResourceLink, ToolOutput};
use tool_runtime::runtime::ToolErrorCode;

/// A conversation with every kind of message, call and part.
fn conversation() -> Vec<Message> {
    // A call whose arguments did not parse, as a decoder hands it over.
    let cut = concat!(
        "data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":\"call_2\",",
        "\"function\":{\"name\":\"fs__write\",\"arguments\":\"{\\\"path\\\": \"}}]},\"finish_reason\":\"tool_calls\"}]}\n\n",
        "data: [DONE]\n\n",
    );
    let mut session = OpenAiChat::new().stream();
    session.feed(cut.as_bytes());
    let bad = session.finish().calls[0].clone();
    let good = ToolCall::new("call_1", "chart__draw", json!({"series": [1, 2, 3]}));
    let output = ToolOutput::new()
        .with(Part::Text("Here is the chart.".into()))
        .with(Part::image("image/png", vec![0x89, b'P', b'N', b'G', 0, 255]))
        .with(Part::Json(json!({"points": 3})))
        .with(Part::audio("audio/wav", b"RIFF".to_vec()))
        .with(Part::from(Resource {
            uri: "file:///notes.md".into(),
            mime_type: Some("text/markdown".into()),
            body: ResourceBody::Text("# Notes".into()),
        }))
        .with(Part::from(Resource {
            uri: "file:///a.pdf".into(),
            mime_type: None,
            body: ResourceBody::Bytes(vec![1, 2, 3].into()),
        }))
        .with(Part::from(ResourceLink {
            uri: "https://example.com/report".into(),
            name: "report".into(),
            mime_type: None,
            description: Some("The full report".into()),
        }))
        .with_details(json!({"path": "/tmp/chart.png"}));
    vec![
        Message::system("Be brief."),
        Message::user("Draw the chart."),
        Message::Assistant(Decoded::new("Drawing.", vec![good.clone(), bad.clone()])),
        Message::ToolResults(vec![
            ToolResult::ok(&good, output),
            ToolResult::error(&bad, ToolErrorCode::InvalidJson, "the arguments are not valid JSON"),
        ]),
        Message::notice("No more tools can be called."),
        Message::Assistant(Decoded::new("Done.", Vec::new())),
    ]
}

#[test]
fn the_stored_form_is_pinned() {
    let json = serde_json::to_value(conversation()).unwrap();
    insta::assert_json_snapshot!("stored_conversation", json);
}

#[test]
fn a_stored_conversation_reads_back_to_the_same_conversation() {
    let text = serde_json::to_string(&conversation()).unwrap();
    let read: Vec<Message> = serde_json::from_str(&text).unwrap();
    assert_eq!(serde_json::to_string(&read).unwrap(), text);
    let Message::Assistant(turn) = &read[2] else { panic!("{:?}", read[2]) };
    assert_eq!(turn.calls[0].arguments.value(), Some(&json!({"series": [1, 2, 3]})));
    assert!(
        matches!(turn.calls[1].arguments, CallArguments::Invalid { .. }),
        "re-parsed as invalid"
    );
    assert!(!turn.calls[1].is_executable());
    let Message::ToolResults(results) = &read[3] else { panic!("{:?}", read[3]) };
    let ToolOutcome::Done(output) = &results[0].outcome else { panic!("{:?}", results[0]) };
    assert_eq!(output.structured(), Some(&json!({"points": 3})));
    assert!(
        matches!(&output.parts()[1], Part::Image(image) if image.data[..] == [0x89, b'P', b'N', b'G', 0, 255])
    );
    assert_eq!(output.details(), Some(&json!({"path": "/tmp/chart.png"})));
    assert!(results[1].is_error());
    // Read from a `Value` too (nothing borrowed).
    let value: Value = serde_json::from_str(&text).unwrap();
    let again: Vec<Message> = serde_json::from_value(value).unwrap();
    assert_eq!(serde_json::to_string(&again).unwrap(), text);
}

#[test]
fn bad_stored_messages_are_refused_with_a_reason() {
    let cases = [
        (json!({"role": "robot", "text": "hi"}), "unknown variant `robot`"),
        (json!({"role": "user"}), "missing field `text`"),
        (json!({"role": "assistant", "finish": "stop", "mood": "happy"}), "unknown field `mood`"),
        (json!({"role": "assistant", "finish": "sleepy"}), "unknown finish reason `sleepy`"),
        (
            json!({"role": "assistant", "finish": "tool_calls", "calls": [{"id": "c", "name": "t__x"}]}),
            "either `arguments` or `arguments_text`",
        ),
        (
            json!({"role": "tool_results", "results": [{"call_id": "c", "name": "t__x", "ok": true,
                "parts": [{"type": "image", "mime_type": "image/png", "data": "not base64!"}]}]}),
            "`data` is not base64",
        ),
        (
            json!({"role": "tool_results", "results": [{"call_id": "c", "name": "t__x", "ok": true,
                "parts": [{"type": "json", "value": 1}, {"type": "json", "value": 2}]}]}),
            "at most one `json` part",
        ),
        (
            json!({"role": "tool_results", "results": [{"call_id": "c", "name": "t__x", "ok": false}]}),
            "a failed result has a `message`",
        ),
    ];
    for (stored, reason) in cases {
        let error = serde_json::from_value::<Message>(stored.clone()).unwrap_err().to_string();
        assert!(error.contains(reason), "{stored}: {error}");
    }
}
