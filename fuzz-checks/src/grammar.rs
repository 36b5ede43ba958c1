//! [`GrammarChat`]'s decoder: a completion whose text may be a call written under a grammar.

use serde_json::json;
use tool_runtime::adapters::{Adapter, GrammarChat};

/// Takes `data` both as a whole response body and as the text of a completion. Promises: no
/// panic on any body; the text becomes exactly one call (id `call_1`, an object of arguments,
/// no text left) or stays text, unchanged; and a call written back as the model's turn
/// ([`Adapter::assistant_message`]) decodes to the same call.
///
/// # Panics
///
/// When a promise is broken.
pub fn check(data: &[u8]) {
    let adapter = GrammarChat::new();
    let _ = adapter.decode(data);
    let text = String::from_utf8_lossy(data);
    let Ok(decoded) = adapter.decode(&completion(&text)) else {
        panic!("a completion holding any text decodes");
    };
    match decoded.calls.as_slice() {
        [] => assert_eq!(decoded.text, text, "text that is no call stays as it came"),
        [call] => {
            assert!(decoded.text.is_empty(), "a call leaves no text");
            assert_eq!(call.id, "call_1");
            assert!(call.arguments.value().is_some_and(serde_json::Value::is_object));
            let written = adapter.assistant_message(&decoded);
            let again = written["content"].as_str().expect("the turn's text");
            let Ok(round) = adapter.decode(&completion(again)) else {
                panic!("a call written back decodes");
            };
            assert_eq!(round.calls.len(), 1, "{again}");
            assert_eq!(round.calls[0].name, call.name);
            assert_eq!(round.calls[0].arguments.value(), call.arguments.value());
        }
        calls => panic!("one text made {} calls", calls.len()),
    }
}

/// A chat completion whose message's content is `text`.
fn completion(text: &str) -> Vec<u8> {
    let body = json!({"choices": [{"index": 0, "message": {"role": "assistant", "content": text},
        "finish_reason": "stop"}]});
    body.to_string().into_bytes()
}
