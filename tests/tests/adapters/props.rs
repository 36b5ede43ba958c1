//! Properties of every decoder: a stream assembles to the same result however the network
//! splits it (1 byte upward), a cut stream never yields a call the whole stream would not, and
//! no input (random bytes, stream-like noise, truncated bodies) makes a decoder panic.

use crate::support::{PROVIDERS, adapter, fixtures, is_stream, json, stream_in_pieces};
use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};
use serde_json::Value;
use tool_runtime::adapters::{Adapter, DecodeOptions, Decoded, OpenAiChat, StreamLimits};

/// Every streamed fixture as (provider, file name, bytes).
fn streams() -> Vec<(&'static str, String, Vec<u8>)> {
    PROVIDERS
        .iter()
        .flat_map(|provider| {
            fixtures(provider)
                .into_iter()
                .filter(|(name, _)| is_stream(name))
                .map(|(name, bytes)| (*provider, name, bytes))
        })
        .collect()
}

/// Feeds `bytes` cut at the given chunk sizes (cycled), then finishes.
fn feed_sizes(adapter: &dyn Adapter, bytes: &[u8], sizes: &[usize]) -> Decoded {
    let mut session = adapter.stream();
    let (mut at, mut turn) = (0, 0);
    while at < bytes.len() {
        let size = sizes.get(turn % sizes.len().max(1)).copied().unwrap_or(1).max(1);
        let end = (at + size).min(bytes.len());
        session.feed(&bytes[at..end]);
        at = end;
        turn += 1;
    }
    session.finish()
}

fn config(cases: u32) -> Config {
    Config { cases, failure_persistence: None, ..Config::default() }
}

#[test]
fn every_fixture_reassembles_identically_at_random_boundaries() {
    let streams = streams();
    let expected: Vec<Value> = streams
        .iter()
        .map(|(provider, _, bytes)| {
            json(&stream_in_pieces(adapter(provider).as_ref(), bytes, bytes.len()))
        })
        .collect();
    let mut runner = TestRunner::new(config(96));
    runner
        .run(&prop::collection::vec(1usize..48, 1..24), |sizes| {
            for ((provider, name, bytes), expected) in streams.iter().zip(&expected) {
                let got = json(&feed_sizes(adapter(provider).as_ref(), bytes, &sizes));
                prop_assert_eq!(&got, expected, "{}/{} cut at {:?}", provider, name, sizes);
            }
            Ok(())
        })
        .unwrap();
}

#[test]
fn every_fixture_reassembles_identically_byte_by_byte_and_at_every_split() {
    for (provider, name, bytes) in streams() {
        let adapter = adapter(provider);
        let whole = json(&stream_in_pieces(adapter.as_ref(), &bytes, bytes.len()));
        assert_eq!(
            json(&stream_in_pieces(adapter.as_ref(), &bytes, 1)),
            whole,
            "{provider}/{name}"
        );
        let step = (bytes.len() / 150).max(1);
        for split in (0..=bytes.len()).step_by(step) {
            let mut session = adapter.stream();
            session.feed(&bytes[..split]);
            session.feed(&bytes[split..]);
            assert_eq!(json(&session.finish()), whole, "{provider}/{name} split at {split}");
        }
    }
}

/// The executable calls as (id, name, arguments).
fn executable(decoded: &Decoded) -> Vec<(String, String, Value)> {
    decoded
        .executable()
        .map(|call| {
            (
                call.id.clone(),
                call.name.clone(),
                call.arguments.value().cloned().unwrap_or_default(),
            )
        })
        .collect()
}

#[test]
fn a_cut_stream_never_yields_a_call_the_whole_stream_would_not() {
    for (provider, name, bytes) in streams() {
        let adapter = adapter(provider);
        let whole = executable(&stream_in_pieces(adapter.as_ref(), &bytes, bytes.len()));
        let step = (bytes.len() / 200).max(1);
        for cut in (0..bytes.len()).step_by(step) {
            let partial = executable(&stream_in_pieces(adapter.as_ref(), &bytes[..cut], 13));
            for call in &partial {
                assert!(whole.contains(call), "{provider}/{name} cut at {cut} yields {call:?}");
            }
        }
    }
}

#[test]
fn truncated_whole_bodies_are_errors() {
    for provider in PROVIDERS {
        let adapter = adapter(provider);
        for (name, bytes) in fixtures(provider).into_iter().filter(|(name, _)| !is_stream(name)) {
            assert!(adapter.decode(&bytes).is_ok(), "{provider}/{name}");
            let end = bytes.iter().rposition(|byte| *byte == b'}' || *byte == b']').unwrap_or(0);
            for cut in 0..end {
                assert!(adapter.decode(&bytes[..cut]).is_err(), "{provider}/{name} cut at {cut}");
            }
        }
    }
}

/// Pieces of every provider's wire syntax, so random input reaches deep into the decoders.
const TOKENS: &[&str] = &[
    "data: ",
    "event: ",
    ": ping",
    "\n",
    "\r\n",
    "\n\n",
    "{",
    "}",
    "[",
    "]",
    ",",
    ":",
    "\"",
    "\\",
    "\\u00",
    "\\ud83d",
    "null",
    "0",
    "-1",
    "1e999",
    "\"index\":",
    "\"id\":\"c\"",
    "\"id\":\"d\"",
    "\"type\":",
    "\"function\":{",
    "\"name\":\"n\"",
    "\"arguments\":\"",
    "\"arguments\":{}",
    "\"choices\":[{",
    "\"delta\":{",
    "\"tool_calls\":[{",
    "\"finish_reason\":\"tool_calls\"",
    "\"finish_reason\":\"length\"",
    "[DONE]",
    "\"message_start\"",
    "\"content_block_start\"",
    "\"content_block_delta\"",
    "\"message_delta\"",
    "\"content_block\":{",
    "\"tool_use\"",
    "\"input_json_delta\"",
    "\"partial_json\":\"",
    "\"stop_reason\":\"tool_use\"",
    "\"response.output_item.added\"",
    "\"response.function_call_arguments.delta\"",
    "\"item\":{",
    "\"function_call\"",
    "\"call_id\":\"c\"",
    "\"output_index\":",
    "\"item_id\":\"i\"",
    "\"response.completed\"",
    "\"response\":{\"status\":\"completed\"}",
    "\"candidates\":[{",
    "\"content\":{\"parts\":[{",
    "\"functionCall\":{",
    "\"args\":",
    "\"finishReason\":\"STOP\"",
    "\"message\":{",
    "\"done\":true",
    "\"done_reason\":\"stop\"",
    "\"multi_tool_use.parallel\"",
    "\"tool_uses\":[{",
    "\"recipient_name\":\"functions.x\"",
    "\"parameters\":",
    "\"error\":{",
    "\u{e9}",
    "\u{1f600}",
];

fn noise() -> impl Strategy<Value = Vec<u8>> {
    let token = prop::sample::select(TOKENS).prop_map(|token| token.as_bytes().to_vec());
    let junk = prop::collection::vec(any::<u8>(), 0..4);
    prop::collection::vec(prop_oneof![6 => token, 1 => junk], 0..120)
        .prop_map(|pieces| pieces.concat())
}

/// Decodes `bytes` every way there is; the point is that none of it panics.
fn hammer(bytes: &[u8], sizes: &[usize]) {
    for provider in PROVIDERS {
        let adapter = adapter(provider);
        let _ = adapter.decode(bytes);
        let decoded = feed_sizes(adapter.as_ref(), bytes, sizes);
        for call in &decoded.calls {
            if call.is_executable() {
                assert!(call.arguments.value().is_some_and(Value::is_object));
            }
        }
        let _ = serde_json::to_string(&decoded).unwrap();
        let _ = adapter.assistant_message(&decoded);
    }
}

#[test]
fn random_bytes_do_not_panic_in_256_samples() {
    let mut runner = TestRunner::new(config(256));
    runner
        .run(
            &(prop::collection::vec(any::<u8>(), 0..2048), prop::collection::vec(1usize..64, 1..8)),
            |(bytes, sizes)| {
                hammer(&bytes, &sizes);
                Ok(())
            },
        )
        .unwrap();
}

#[test]
fn stream_like_noise_does_not_panic_in_512_samples() {
    let mut runner = TestRunner::new(config(512));
    runner
        .run(&(noise(), prop::collection::vec(1usize..32, 1..8)), |(bytes, sizes)| {
            hammer(&bytes, &sizes);
            let mut framed = b"data: ".to_vec();
            framed.extend_from_slice(&bytes);
            framed.extend_from_slice(b"\n\n");
            hammer(&framed, &sizes);
            Ok(())
        })
        .unwrap();
}

#[test]
fn mutated_fixtures_do_not_panic_in_128_samples() {
    let streams = streams();
    let mut runner = TestRunner::new(config(128));
    let strategy = (
        0..streams.len(),
        prop::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..6),
    );
    runner
        .run(&strategy, |(which, edits)| {
            let (_, _, bytes) = &streams[which];
            let mut bytes = bytes.clone();
            for (index, byte) in edits {
                let at = index.index(bytes.len());
                bytes[at] = byte;
            }
            hammer(&bytes, &[17]);
            Ok(())
        })
        .unwrap();
}

/// A chunk of an OpenAI Chat Completions stream carrying one tool-call fragment.
fn chat_fragment(fragment: &Value) -> String {
    let chunk = serde_json::json!({"choices": [{"index": 0, "delta": {"tool_calls": [fragment]}}]});
    format!("data: {chunk}\n\n")
}

#[test]
fn large_streams_assemble_whole() {
    // 100 000 argument deltas for one call, then 5 000 calls that share one id and carry no
    // index: appending and id lookups stay cheap, so this finishes in a blink.
    let mut stream = chat_fragment(&serde_json::json!({
        "index": 0, "id": "call_big", "function": {"name": "docs__search", "arguments": "{\"query\": \""}
    }));
    for _ in 0..100_000 {
        stream.push_str(&chat_fragment(
            &serde_json::json!({"index": 0, "function": {"arguments": "a"}}),
        ));
    }
    stream.push_str(&chat_fragment(
        &serde_json::json!({"index": 0, "function": {"arguments": "\"}"}}),
    ));
    for n in 0..5_000 {
        let fragment = serde_json::json!({"index": n + 1, "id": "dup", "function": {"name": "x", "arguments": "{}"}});
        stream.push_str(&chat_fragment(&fragment));
    }
    stream.push_str("data: {\"choices\": [{\"index\": 0, \"delta\": {}, \"finish_reason\": \"tool_calls\"}]}\n\n");
    // More calls than the default cap of 512 allows: the cap is raised for this test.
    let limits = StreamLimits::new().calls(10_000);
    let chat = OpenAiChat::new().decode_options(DecodeOptions::new().limits(limits));
    let decoded = stream_in_pieces(&chat, stream.as_bytes(), 4096);
    assert_eq!(decoded.calls.len(), 5_001);
    let query = decoded.calls[0].arguments.value().unwrap()["query"].as_str().unwrap();
    assert_eq!(query.len(), 100_000);
    assert_eq!(decoded.calls[1].id, "dup");
    assert_eq!(decoded.calls[5_000].id, "dup_5000");
    assert!(decoded.problems.is_empty());
}
