//! Streams from the real world, one test per quirk: what the decoders must assemble, report
//! and refuse.

use crate::support::{adapter, decode_fixture, fixture, stream_in_pieces};
use serde_json::{Value, json};
use tool_runtime::adapters::{
    Adapter, ArgumentsProblem, CallArguments, DecodeError, DecodeOptions, Decoded, FinishReason,
    IdOrigin, OpenAiChat, Problem, Provider, StreamEvent, ToolCall, Usage,
};

/// Every event of a fixture fed in pieces of `size` bytes, the close included.
fn events(provider: &str, name: &str, size: usize) -> (Vec<StreamEvent>, Decoded) {
    let bytes = fixture(provider, name);
    let mut session = adapter(provider).stream();
    let mut events = Vec::new();
    for piece in bytes.chunks(size) {
        events.extend(session.feed(piece));
    }
    events.extend(session.close());
    (events, session.finish())
}

fn args(call: &ToolCall) -> &Value {
    call.arguments.value().unwrap_or_else(|| panic!("{} has unusable arguments", call.id))
}

fn summary(decoded: &Decoded) -> Vec<(String, String, Value)> {
    decoded
        .calls
        .iter()
        .map(|call| (call.id.clone(), call.name.clone(), args(call).clone()))
        .collect()
}

fn chat(name: &str) -> Decoded {
    decode_fixture("openai-chat", name)
}

#[test]
fn empty_arguments_mean_an_empty_object_decided_at_finalisation() {
    let bytes = fixture("openai-chat", "stream_empty_arguments.sse");
    let text = String::from_utf8(bytes).unwrap();
    let (before_finish, rest) =
        text.split_at(text.find("\"finish_reason\":\"tool_calls\"").unwrap());
    let mut session = adapter("openai-chat").stream();
    let early = session.feed(before_finish.as_bytes());
    assert!(!early.iter().any(|event| matches!(event, StreamEvent::CallReady { .. })));
    let late = session.feed(rest.as_bytes());
    let ready: Vec<&ToolCall> = late
        .iter()
        .filter_map(|event| match event {
            StreamEvent::CallReady { call, .. } => Some(call),
            _ => None,
        })
        .collect();
    assert_eq!(ready.len(), 1);
    assert_eq!(args(ready[0]), &json!({}));
    assert!(session.finish().calls[0].is_executable());
}

#[test]
fn id_type_and_name_only_on_the_first_fragment() {
    let decoded = chat("stream_parallel.sse");
    assert_eq!(
        summary(&decoded),
        vec![
            (
                "call_Ab12".into(),
                "core__get_current_time".into(),
                json!({"timezone": "Europe/Berlin"})
            ),
            ("call_Cd34".into(), "docs__search".into(), json!({"query": "streaming", "limit": 3})),
        ]
    );
    assert!(decoded.problems.is_empty());
}

#[test]
fn ids_and_names_repeated_on_every_chunk_are_not_concatenated() {
    let decoded = chat("stream_repeated_ids.sse");
    assert_eq!(
        summary(&decoded),
        vec![("call_R1".into(), "docs__search".into(), json!({"query": "ids"}))]
    );
}

#[test]
fn a_name_split_across_fragments_is_joined() {
    let decoded = chat("stream_split_name.sse");
    assert_eq!(decoded.calls[0].name, "docs__search");
    assert_eq!(args(&decoded.calls[0]), &json!({"query": "split"}));
}

#[test]
fn arguments_before_the_name_are_kept_and_announced_after_it() {
    let (events, decoded) = events("openai-chat", "stream_arguments_before_name.sse", 64);
    assert_eq!(
        summary(&decoded),
        vec![("call_B1".into(), "docs__search".into(), json!({"query": "late name"}))]
    );
    let started = events.iter().position(|event| matches!(event, StreamEvent::CallStarted { .. }));
    let first_delta =
        events.iter().position(|event| matches!(event, StreamEvent::ArgumentsDelta { .. }));
    assert!(started < first_delta, "the call is announced before its arguments");
    let streamed: String = events
        .iter()
        .filter_map(|event| match event {
            StreamEvent::ArgumentsDelta { delta, .. } => Some(delta.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(streamed, r#"{"query": "late name"}"#);
}

#[test]
fn fragments_without_an_index_follow_their_id() {
    let decoded = chat("stream_missing_index.sse");
    assert_eq!(
        summary(&decoded),
        vec![
            ("call_M1".into(), "core__get_current_time".into(), json!({"timezone": "UTC"})),
            ("call_M2".into(), "docs__search".into(), json!({"query": "no index"})),
        ]
    );
}

#[test]
fn an_index_reused_with_another_id_is_a_new_call() {
    let decoded = chat("stream_index_reuse.sse");
    let ids: Vec<&str> = decoded.calls.iter().map(|call| call.id.as_str()).collect();
    assert_eq!(ids, ["call_U1", "call_U2"]);
    assert_eq!(args(&decoded.calls[1]), &json!({"query": "reuse"}));
}

#[test]
fn a_duplicated_index_inside_one_chunk_continues_the_call() {
    let decoded = chat("stream_duplicate_index_in_chunk.sse");
    assert_eq!(
        summary(&decoded),
        vec![("call_D1".into(), "docs__search".into(), json!({"query": "twice"}))]
    );
}

#[test]
fn index_gaps_keep_model_order() {
    let decoded = chat("stream_index_gaps.sse");
    let ids: Vec<&str> = decoded.calls.iter().map(|call| call.id.as_str()).collect();
    assert_eq!(ids, ["call_G0", "call_G3"]);
}

#[test]
fn several_whole_calls_in_one_chunk_with_the_finish() {
    let (events, decoded) = events("openai-chat", "stream_whole_calls_one_chunk.sse", usize::MAX);
    assert_eq!(decoded.calls.len(), 2);
    assert_eq!(decoded.finish.reason, FinishReason::ToolCalls);
    let ready =
        events.iter().filter(|event| matches!(event, StreamEvent::CallReady { .. })).count();
    assert_eq!(ready, 2);
}

#[test]
fn full_arguments_resent_at_the_end_are_reported_not_guessed() {
    let decoded = chat("stream_resent_arguments.sse");
    let call = &decoded.calls[0];
    let CallArguments::Invalid { raw, problem } = &call.arguments else {
        panic!("doubled arguments were accepted: {:?}", call.arguments);
    };
    assert_eq!(raw, r#"{"query": "again"}{"query": "again"}"#);
    assert!(matches!(problem, ArgumentsProblem::Repeated { copies: 2 }));
    assert!(!call.is_executable());
}

#[test]
fn duplicate_ids_across_parallel_calls_are_reminted() {
    for (provider, name, original) in [
        ("openai-chat", "stream_duplicate_ids.sse", "call_1"),
        ("anthropic", "stream_duplicate_ids.sse", "toolu_01Same"),
        ("gemini", "stream_with_ids.sse", "fc-7f2a"),
    ] {
        let decoded = decode_fixture(provider, name);
        assert_eq!(decoded.calls[0].id, original, "{provider}");
        assert_eq!(decoded.calls[0].id_origin, IdOrigin::Provider, "{provider}");
        assert_eq!(decoded.calls[1].id, format!("{original}_2"), "{provider}");
        assert_eq!(
            decoded.calls[1].id_origin,
            IdOrigin::Reminted(original.to_owned()),
            "{provider}"
        );
        assert!(decoded.calls.iter().all(ToolCall::is_executable), "{provider}");
    }
}

#[test]
fn stop_with_tool_calls_in_the_chunk_of_the_last_fragment() {
    let decoded = chat("stream_stop_with_tools.sse");
    assert_eq!(decoded.finish.reason, FinishReason::ToolCalls);
    assert_eq!(decoded.finish.provider_reason.as_deref(), Some("stop"));
    assert_eq!(args(&decoded.calls[0]), &json!({"query": "stop"}));
    assert!(decoded.calls[0].is_executable());
}

#[test]
fn truncated_turns_are_incomplete_and_never_ready() {
    for (provider, name) in [
        ("openai-chat", "stream_length.sse"),
        ("openai-responses", "stream_incomplete.sse"),
        ("anthropic", "stream_max_tokens.sse"),
        ("gemini", "stream_max_tokens.sse"),
        ("ollama", "stream_length.ndjson"),
    ] {
        let (events, decoded) = events(provider, name, 5);
        assert_eq!(decoded.finish.reason, FinishReason::Length, "{provider}");
        assert_eq!(decoded.calls.len(), 1, "{provider}");
        assert!(!decoded.calls[0].complete, "{provider}");
        assert_eq!(decoded.executable().count(), 0, "{provider}");
        assert!(
            !events.iter().any(|event| matches!(event, StreamEvent::CallReady { .. })),
            "{provider}"
        );
    }
}

#[test]
fn invalid_json_is_kept_raw_and_reported() {
    for (provider, raw) in
        [("openai-chat", r#"{"query": tools}"#), ("anthropic", r#"{"query": 'single quotes'}"#)]
    {
        let decoded = decode_fixture(provider, "stream_invalid_json.sse");
        let call = &decoded.calls[0];
        let CallArguments::Invalid { raw: kept, problem } = &call.arguments else {
            panic!("{provider}: invalid JSON was accepted");
        };
        assert_eq!(kept, raw, "{provider}");
        assert!(matches!(problem, ArgumentsProblem::Json(_)), "{provider}");
        assert!(call.complete && !call.is_executable(), "{provider}");
        let printed = serde_json::to_value(call).unwrap();
        assert_eq!(printed["arguments"], Value::Null);
        assert!(printed["error"].as_str().unwrap().starts_with("the arguments are not valid JSON"));
    }
}

#[test]
fn multibyte_utf8_and_escapes_split_across_chunks() {
    for size in [1, 2, 3, 7] {
        let decoded = stream_in_pieces(
            adapter("openai-chat").as_ref(),
            &fixture("openai-chat", "stream_utf8_escapes.sse"),
            size,
        );
        assert_eq!(decoded.text, "Caf\u{e9} \u{2615} ");
        let args = args(&decoded.calls[0]);
        assert_eq!(args["title"], json!("na\u{ef}ve caf\u{e9} \u{1f600} \u{1f600}"));
        assert_eq!(args["body"], json!("\"quoted\" \\ back\nslash"));
        assert!(decoded.problems.is_empty());
    }
}

#[test]
fn sse_with_crlf_multiline_data_comments_and_empty_choices() {
    let decoded = chat("stream_crlf_keepalive.sse");
    assert_eq!(
        summary(&decoded),
        vec![("call_K1".into(), "docs__search".into(), json!({"query": "crlf"}))]
    );
    assert!(decoded.problems.is_empty(), "{:?}", decoded.problems);
    assert_eq!(decoded.finish.reason, FinishReason::ToolCalls);
}

#[test]
fn pings_and_thinking_blocks_are_not_calls() {
    let decoded = decode_fixture("anthropic", "stream_parallel.sse");
    assert_eq!(decoded.calls.len(), 2);
    assert_eq!(decoded.text, "Let me check both.");
    assert!(decoded.problems.is_empty());
    let thinking = decode_fixture("anthropic", "stream_thinking.sse");
    assert_eq!(thinking.calls.len(), 1);
    let blocks = thinking.extras.get("thinking_blocks").unwrap();
    assert_eq!(blocks[0]["thinking"], json!("The user wants the time in Tokyo."));
    assert_eq!(blocks[0]["signature"], json!("EqQBCgIYAhIM1gbcDa9GJwZA2b3h"));
}

#[test]
fn error_events_are_reported_and_stop_execution() {
    for (provider, name) in [
        ("openai-chat", "stream_error.sse"),
        ("openai-responses", "stream_error.sse"),
        ("openai-responses", "stream_failed.sse"),
        ("anthropic", "stream_error.sse"),
        ("gemini", "stream_error.sse"),
        ("ollama", "stream_error.ndjson"),
    ] {
        let decoded = decode_fixture(provider, name);
        assert_eq!(decoded.finish.reason, FinishReason::Error, "{provider}/{name}");
        assert!(
            decoded.problems.iter().any(|problem| matches!(problem, Problem::Provider(_))),
            "{provider}/{name}: {:?}",
            decoded.problems
        );
        assert_eq!(decoded.executable().count(), 0, "{provider}/{name}");
    }
}

#[test]
fn a_second_anthropic_message_start_keeps_both_messages_apart() {
    let decoded = decode_fixture("anthropic", "stream_two_messages.sse");
    assert_eq!(
        summary(&decoded),
        vec![
            ("toolu_01FirstMessage000000".into(), "core__get_current_time".into(), json!({})),
            (
                "toolu_01SecondMessage00000".into(),
                "docs__search".into(),
                json!({"query": "second"})
            ),
        ]
    );
    assert!(decoded.problems.is_empty());
}

#[test]
fn multi_tool_use_parallel_is_unwrapped() {
    let decoded = chat("stream_multi_tool_use.sse");
    assert_eq!(
        summary(&decoded),
        vec![
            (
                "call_P1_1".into(),
                "core__get_current_time".into(),
                json!({"timezone": "Europe/Paris"})
            ),
            ("call_P1_2".into(), "docs__search".into(), json!({"query": "parallel"})),
        ]
    );
    assert!(decoded.calls.iter().all(|call| call.id_origin == IdOrigin::Minted));
}

#[test]
fn a_bare_parallel_call_is_unwrapped_only_when_parallel_is_not_declared() {
    let body = br#"{"choices": [{"index": 0, "message": {"role": "assistant", "tool_calls": [
        {"id": "call_9", "type": "function", "function": {"name": "parallel",
         "arguments": "{\"tool_uses\": [{\"recipient_name\": \"functions.docs__search\", \"parameters\": {\"query\": \"x\"}}]}"}}]},
        "finish_reason": "tool_calls"}]}"#;
    let unknown = OpenAiChat::new().decode(body).unwrap();
    assert_eq!(unknown.calls[0].name, "parallel", "without the declared tools nothing is guessed");
    let declared = OpenAiChat::new()
        .decode_options(DecodeOptions::new().declared_tools(["docs__search"]))
        .decode(body)
        .unwrap();
    assert_eq!(declared.calls[0].name, "docs__search");
    assert_eq!(declared.calls[0].id, "call_9_1");
    let own = OpenAiChat::new()
        .decode_options(DecodeOptions::new().declared_tools(["parallel"]))
        .decode(body)
        .unwrap();
    assert_eq!(own.calls[0].name, "parallel", "a declared `parallel` tool is called as it is");
}

#[test]
fn a_stream_cut_before_its_finish_is_unfinished() {
    let bytes = fixture("anthropic", "stream_parallel.sse");
    let text = String::from_utf8(bytes).unwrap();
    let cut = &text[..text.find("event: message_delta").unwrap()];
    let decoded = stream_in_pieces(adapter("anthropic").as_ref(), cut.as_bytes(), 11);
    assert_eq!(decoded.finish.reason, FinishReason::Unfinished);
    assert!(decoded.problems.iter().any(|problem| matches!(problem, Problem::Unfinished)));
    assert_eq!(decoded.calls.len(), 2);
    assert_eq!(decoded.executable().count(), 0);
}

#[test]
fn finishing_is_idempotent_and_late_bytes_are_reported() {
    let mut session = adapter("openai-chat").stream();
    session.feed(&fixture("openai-chat", "stream_parallel.sse"));
    let first = session.finish();
    let second = session.finish();
    assert_eq!(serde_json::to_value(&first).unwrap(), serde_json::to_value(&second).unwrap());
    assert!(session.close().is_empty());
    let late = session.feed(b"data: {}\n\n");
    assert!(matches!(late.as_slice(), [StreamEvent::Problem(Problem::AfterFinish)]));
    assert_eq!(
        serde_json::to_value(session.finish()).unwrap(),
        serde_json::to_value(&first).unwrap()
    );
}

#[test]
fn events_come_in_order_and_deltas_add_up_to_the_arguments() {
    for (provider, name) in [
        ("openai-chat", "stream_parallel.sse"),
        ("openai-responses", "stream_parallel.sse"),
        ("anthropic", "stream_parallel.sse"),
        ("gemini", "stream_parallel.sse"),
        ("ollama", "stream_parallel.ndjson"),
    ] {
        let (mut events, decoded) = events(provider, name, 3);
        // OpenAI Chat's usage chunk follows its finish by protocol; usage is accounting, not
        // part of the turn's order.
        events.retain(|event| !matches!(event, StreamEvent::Usage(_)));
        let mut streamed = vec![String::new(); decoded.calls.len()];
        let (mut started, mut ready, mut finish) = (Vec::new(), Vec::new(), None);
        for (position, event) in events.iter().enumerate() {
            match event {
                StreamEvent::CallStarted { index, id, .. } => {
                    assert_eq!(id, &decoded.calls[*index].id, "{provider}");
                    started.push(*index);
                }
                StreamEvent::ArgumentsDelta { index, delta } => {
                    assert!(started.contains(index), "{provider}: a delta before its start");
                    streamed[*index].push_str(delta);
                }
                StreamEvent::CallReady { index, call } => {
                    assert_eq!(call.id, decoded.calls[*index].id, "{provider}");
                    ready.push(*index);
                }
                StreamEvent::Finish(_) => finish = Some(position),
                StreamEvent::Problem(problem) => panic!("{provider}: {problem}"),
                _ => {}
            }
        }
        assert_eq!(started, [0, 1], "{provider}");
        assert_eq!(ready, [0, 1], "{provider}");
        assert_eq!(finish, Some(events.len() - 1), "{provider}: the finish comes last");
        for (text, call) in streamed.iter().zip(&decoded.calls) {
            let parsed: Value = serde_json::from_str(text).unwrap();
            assert_eq!(&parsed, args(call), "{provider}");
        }
    }
}

#[test]
fn fragments_after_the_finish_are_reported_not_merged() {
    let stream = concat!(
        "data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":\"call_1\",",
        "\"function\":{\"name\":\"docs__search\",\"arguments\":\"{}\"}}]},\"finish_reason\":\"tool_calls\"}]}\n\n",
        "data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,",
        "\"function\":{\"arguments\":\"{}\"}}]}}]}\n\n",
    );
    let decoded = stream_in_pieces(&OpenAiChat::new(), stream.as_bytes(), 100);
    assert!(decoded.calls[0].is_executable());
    assert!(
        decoded
            .problems
            .iter()
            .any(|problem| matches!(problem, Problem::LateFragment { index: 0 }))
    );
}

#[test]
fn whole_bodies_that_are_errors_or_not_responses_are_refused() {
    let cases: [(&str, &[u8]); 5] = [
        ("openai-chat", br#"{"error": {"message": "Rate limit reached", "type": "requests", "code": "rate_limit_exceeded"}}"#),
        ("openai-responses", br#"{"error": {"code": "server_error", "message": "boom"}}"#),
        ("anthropic", br#"{"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}"#),
        ("gemini", br#"{"error": {"code": 429, "message": "Resource exhausted", "status": "RESOURCE_EXHAUSTED"}}"#),
        ("ollama", br#"{"error": "model \"qwen9\" not found, try pulling it first"}"#),
    ];
    for (provider, body) in cases {
        assert!(
            matches!(adapter(provider).decode(body), Err(DecodeError::Provider(_))),
            "{provider}"
        );
        assert!(
            matches!(adapter(provider).decode(b"[1, 2]"), Err(DecodeError::Shape { .. })),
            "{provider}"
        );
        assert!(
            matches!(adapter(provider).decode(b"data: x"), Err(DecodeError::Json(_))),
            "{provider}"
        );
    }
}

#[test]
fn a_responses_stream_with_only_its_final_event_still_yields_the_calls() {
    let stream = concat!(
        "event: response.completed\n",
        "data: {\"type\":\"response.completed\",\"sequence_number\":0,\"response\":{\"status\":\"completed\",",
        "\"output\":[{\"id\":\"fc_1\",\"type\":\"function_call\",\"status\":\"completed\",",
        "\"arguments\":\"{\\\"query\\\":\\\"x\\\"}\",\"call_id\":\"call_1\",\"name\":\"docs__search\"}]}}\n\n",
    );
    let decoded = stream_in_pieces(adapter("openai-responses").as_ref(), stream.as_bytes(), 9);
    assert_eq!(
        summary(&decoded),
        vec![("call_1".into(), "docs__search".into(), json!({"query": "x"}))]
    );
    assert!(decoded.calls[0].is_executable());
}

#[test]
fn usage_is_decoded_for_every_provider() {
    let usage = |input_tokens, output_tokens| Some(Usage { input_tokens, output_tokens });
    for (provider, name, expected) in [
        ("openai-chat", "stream_parallel.sse", usage(210, 41)),
        ("openai-responses", "stream_parallel.sse", usage(120, 60)),
        ("anthropic", "stream_parallel.sse", usage(472, 89)),
        ("gemini", "stream_parallel.sse", usage(120, 30)),
        ("ollama", "stream_parallel.ndjson", usage(26, 282)),
    ] {
        let (events, decoded) = events(provider, name, 5);
        assert_eq!(decoded.usage, expected, "{provider}");
        let last_report = events.iter().rev().find_map(|event| match event {
            StreamEvent::Usage(usage) => Some(*usage),
            _ => None,
        });
        assert_eq!(last_report, expected, "{provider}: the last report is the total");
    }
    let whole = adapter("openai-chat").decode(&fixture("openai-chat", "nonstream_parallel.json"));
    assert_eq!(whole.unwrap().usage, usage(210, 41));
    // vLLM's `"usage": null` on ordinary chunks is no report.
    let mut session = adapter("openai-chat").stream();
    let events = session.feed(
        b"data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"hi\"},\"finish_reason\":\"stop\"}],\"usage\":null}\n\n",
    );
    assert!(!events.iter().any(|event| matches!(event, StreamEvent::Usage(_))));
    assert_eq!(session.finish().usage, None);
}

#[test]
fn token_counts_near_the_limit_saturate_instead_of_panicking() {
    let max = u64::MAX;
    let anthropic = format!(
        r#"{{"content": [], "stop_reason": "end_turn", "usage": {{"input_tokens": {max},
            "cache_creation_input_tokens": {max}, "cache_read_input_tokens": 1, "output_tokens": 2}}}}"#
    );
    let decoded = adapter("anthropic").decode(anthropic.as_bytes()).unwrap();
    assert_eq!(decoded.usage, Some(Usage { input_tokens: max, output_tokens: 2 }));

    let gemini = format!(
        r#"{{"candidates": [{{"content": {{"role": "model", "parts": [{{"text": "hi"}}]}},
            "finishReason": "STOP"}}], "usageMetadata": {{"promptTokenCount": 3,
            "candidatesTokenCount": {max}, "thoughtsTokenCount": {max}}}}}"#
    );
    let decoded = adapter("gemini").decode(gemini.as_bytes()).unwrap();
    assert_eq!(decoded.usage, Some(Usage { input_tokens: 3, output_tokens: max }));

    // The same in a stream: the counts arrive in events, not in a whole body.
    let stream = format!(
        "event: message_start\ndata: {{\"type\":\"message_start\",\"message\":{{\"usage\":\
         {{\"input_tokens\":{max},\"cache_read_input_tokens\":{max}}}}}}}\n\n"
    );
    let mut session = adapter("anthropic").stream();
    session.feed(stream.as_bytes());
    assert_eq!(session.finish().usage, Some(Usage { input_tokens: max, output_tokens: 0 }));
}

#[test]
fn an_openai_chat_usage_chunk_without_choices_is_read() {
    let stream = concat!(
        "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"hi\"},\"finish_reason\":\"stop\"}]}\n\n",
        "data: {\"id\":\"c1\",\"usage\":{\"prompt_tokens\":12,\"completion_tokens\":3}}\n\n",
        "data: [DONE]\n\n",
    );
    let mut session = adapter("openai-chat").stream();
    let mut events = session.feed(stream.as_bytes());
    events.extend(session.close());
    let expected = Usage { input_tokens: 12, output_tokens: 3 };
    assert!(
        events.iter().any(|event| matches!(event, StreamEvent::Usage(usage) if *usage == expected))
    );
    let decoded = session.finish();
    assert_eq!(decoded.usage, Some(expected));
    assert!(
        decoded.problems.is_empty(),
        "a usage-only chunk is no unexpected payload: {:?}",
        decoded.problems
    );
    // A chunk with neither is still reported.
    let mut session = adapter("openai-chat").stream();
    session.feed(b"data: {\"id\":\"c1\"}\n\n");
    assert!(
        session
            .finish()
            .problems
            .iter()
            .any(|problem| matches!(problem, Problem::UnexpectedPayload { .. }))
    );
}

/// A stream line that is not UTF-8, between good events: reported as `Problem::InvalidUtf8`
/// (once, as an event and in the decoded turn), skipped, and the events after it still decode.
#[test]
fn a_line_that_is_not_utf8_is_reported_and_the_next_event_still_decodes() {
    let chunk = |content: &str| {
        format!(
            "data: {{\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"choices\":[{{\"index\":0,\"delta\":{{\"content\":\"{content}\"}},\"finish_reason\":null}}]}}\n\n"
        )
        .into_bytes()
    };
    let mut body = chunk("Hello");
    body.extend_from_slice(b"data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"\xff\xfe caf\xe9\"},\"finish_reason\":null}]}\n\n");
    body.extend(chunk(" world"));
    body.extend_from_slice(b"data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n");
    for size in [1, 5, body.len()] {
        let mut session = Provider::OpenAiChat.adapter(false).stream();
        let mut events = Vec::new();
        for piece in body.chunks(size) {
            events.extend(session.feed(piece));
        }
        events.extend(session.close());
        let decoded = session.finish();
        let problems: Vec<&Problem> = events
            .iter()
            .filter_map(|event| match event {
                StreamEvent::Problem(problem) => Some(problem),
                _ => None,
            })
            .collect();
        assert!(matches!(problems[..], [Problem::InvalidUtf8]), "pieces of {size}: {problems:?}");
        let kept = &decoded.problems;
        assert!(matches!(kept[..], [Problem::InvalidUtf8]), "pieces of {size}: {kept:?}");
        let text: Vec<&str> = events
            .iter()
            .filter_map(|event| match event {
                StreamEvent::TextDelta(text) => Some(text.as_str()),
                _ => None,
            })
            .collect();
        assert_eq!(text, ["Hello", " world"], "pieces of {size}");
        assert_eq!(decoded.text, "Hello world");
        assert_eq!(decoded.finish.reason, FinishReason::Stop);
    }
}
