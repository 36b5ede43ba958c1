//! Hostile or cut streams. Every buffer a peer can grow has a cap that
//! ends the turn with a typed problem, and a call whose arguments were not seen complete never
//! becomes ready to run.

use tool_runtime::adapters::{
    Adapter, Anthropic, ArgumentsProblem, CallArguments, DecodeOptions, Decoded, FinishReason,
    Limit, Ollama, OpenAiChat, Problem, StreamEvent, StreamLimits,
};

fn feed(session: &mut dyn tool_runtime::adapters::StreamSession, chunks: &[&[u8]]) -> Decoded {
    for chunk in chunks {
        session.feed(chunk);
    }
    session.finish()
}

fn chat(limits: StreamLimits) -> OpenAiChat {
    OpenAiChat::new().decode_options(DecodeOptions::new().limits(limits))
}

fn chat_chunk(tool_calls: &str) -> String {
    format!(
        "data: {{\"choices\":[{{\"index\":0,\"delta\":{{\"tool_calls\":[{tool_calls}]}},\"finish_reason\":null}}]}}\n\n"
    )
}

fn over(decoded: &Decoded, limit: Limit, value: usize) {
    assert!(
        decoded.problems.iter().any(|problem| matches!(
            problem,
            Problem::LimitExceeded { limit: l, value: v } if *l == limit && *v == value
        )),
        "{:?}",
        decoded.problems
    );
    assert_eq!(decoded.finish.reason, FinishReason::Error);
    assert_eq!(decoded.executable().count(), 0);
    assert!(decoded.calls.iter().all(|call| !call.complete));
}

#[test]
fn an_anthropic_tool_block_cut_by_a_second_message_start_never_runs() {
    let stream = concat!(
        "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{}}\n\n",
        "event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,",
        "\"content_block\":{\"type\":\"tool_use\",\"id\":\"toolu_cut\",\"name\":\"fs__delete\",\"input\":{}}}\n\n",
        "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{}}\n\n",
        "event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,",
        "\"content_block\":{\"type\":\"tool_use\",\"id\":\"toolu_ok\",\"name\":\"docs__search\",\"input\":{}}}\n\n",
        "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,",
        "\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"{\\\"query\\\": \\\"x\\\"}\"}}\n\n",
        "event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0}\n\n",
        "event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"tool_use\"}}\n\n",
    );
    let decoded = feed(&mut *Anthropic::new().stream(), &[stream.as_bytes()]);
    assert_eq!(decoded.calls.len(), 2);
    let cut = &decoded.calls[0];
    assert_eq!(cut.id, "toolu_cut");
    assert!(!cut.complete);
    assert!(matches!(cut.arguments, CallArguments::Invalid { problem: ArgumentsProblem::Cut, .. }));
    assert!(decoded.problems.iter().any(|p| matches!(p, Problem::CutCall { index: 0 })));
    let ready: Vec<&str> = decoded.executable().map(|call| call.id.as_str()).collect();
    assert_eq!(ready, ["toolu_ok"]);
}

#[test]
fn an_openai_done_right_after_a_calls_name_is_a_cut_call() {
    let mut session = OpenAiChat::new().stream();
    let mut events = session.feed(
        chat_chunk(r#"{"index":0,"id":"call_a","type":"function","function":{"name":"fs__delete","arguments":""}}"#)
            .as_bytes(),
    );
    events.extend(session.feed(b"data: [DONE]\n\n"));
    let decoded = session.finish();
    assert_eq!(decoded.calls.len(), 1);
    assert!(!decoded.calls[0].complete);
    assert_eq!(decoded.executable().count(), 0);
    assert!(!events.iter().any(|event| matches!(event, StreamEvent::CallReady { .. })));
    assert!(decoded.problems.iter().any(|p| matches!(p, Problem::CutCall { index: 0 })));

    // With its finish reason, a call without parameters and empty arguments still runs.
    let mut session = OpenAiChat::new().stream();
    session.feed(
        chat_chunk(r#"{"index":0,"id":"call_a","type":"function","function":{"name":"core__now","arguments":""}}"#)
            .as_bytes(),
    );
    session.feed(b"data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"tool_calls\"}]}\n\ndata: [DONE]\n\n");
    assert_eq!(session.finish().executable().count(), 1);
}

#[test]
fn an_endless_sse_line_stops_at_the_line_limit() {
    let mut session = chat(StreamLimits::new().line_bytes(1024)).stream();
    let mut events = Vec::new();
    events.extend(session.feed(b"data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\""));
    for _ in 0..100 {
        events.extend(session.feed(&[b'a'; 100]));
    }
    let decoded = session.finish();
    over(&decoded, Limit::LineBytes, 1024);
    let limit_events = events
        .iter()
        .filter(|event| matches!(event, StreamEvent::Problem(Problem::LimitExceeded { .. })))
        .count();
    assert_eq!(limit_events, 1, "reported once");
}

#[test]
fn many_short_data_lines_of_one_event_stop_at_the_line_limit() {
    let mut session = chat(StreamLimits::new().line_bytes(1024)).stream();
    for _ in 0..200 {
        session.feed(b"data: 0123456789\n");
    }
    over(&session.finish(), Limit::LineBytes, 1024);
}

#[test]
fn an_endless_ndjson_line_stops_at_the_line_limit() {
    let ollama = Ollama::new()
        .decode_options(DecodeOptions::new().limits(StreamLimits::new().line_bytes(512)));
    let mut session = ollama.stream();
    for _ in 0..100 {
        session.feed(&[b' '; 64]);
    }
    over(&session.finish(), Limit::LineBytes, 512);
}

#[test]
fn argument_text_over_its_limit_ends_the_turn_and_no_call_runs() {
    let mut session = chat(StreamLimits::new().argument_bytes(64)).stream();
    session.feed(
        chat_chunk(r#"{"index":0,"id":"call_a","type":"function","function":{"name":"docs__search","arguments":"{\"query\": \""}}"#)
            .as_bytes(),
    );
    for _ in 0..10 {
        session.feed(chat_chunk(r#"{"index":0,"function":{"arguments":"aaaaaaaaaa"}}"#).as_bytes());
    }
    session.feed(
        b"data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"tool_calls\"}]}\n\n",
    );
    over(&session.finish(), Limit::ArgumentBytes, 64);
}

#[test]
fn too_many_calls_end_the_turn_and_none_runs() {
    let mut session = chat(StreamLimits::new().calls(3)).stream();
    let mut events = Vec::new();
    for index in 0..5 {
        let call = format!(
            r#"{{"index":{index},"id":"call_{index}","type":"function","function":{{"name":"docs__search","arguments":"{{}}"}}}}"#
        );
        events.extend(session.feed(chat_chunk(&call).as_bytes()));
    }
    // Streamed consumers see the limit and the turn's end as they happen.
    assert!(events.iter().any(|event| matches!(
        event,
        StreamEvent::Problem(Problem::LimitExceeded { limit: Limit::Calls, .. })
    )));
    assert!(events.iter().any(|event| matches!(event, StreamEvent::Finish(_))));
    session.feed(
        b"data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"tool_calls\"}]}\n\n",
    );
    over(&session.finish(), Limit::Calls, 3);
}

#[test]
fn a_call_name_over_its_limit_ends_the_turn() {
    let mut session = chat(StreamLimits::new().name_bytes(16)).stream();
    session.feed(
        chat_chunk(r#"{"index":0,"id":"call_a","type":"function","function":{"name":"docs__","arguments":""}}"#)
            .as_bytes(),
    );
    for _ in 0..4 {
        session.feed(chat_chunk(r#"{"index":0,"function":{"name":"xxxxxx"}}"#).as_bytes());
    }
    session.feed(
        b"data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"tool_calls\"}]}\n\n",
    );
    over(&session.finish(), Limit::NameBytes, 16);
}

#[test]
fn endless_problems_stop_at_the_problem_limit() {
    let mut session = chat(StreamLimits::new().problems(8)).stream();
    for _ in 0..100 {
        session.feed(b"data: not json\n\n");
    }
    let decoded = session.finish();
    over(&decoded, Limit::Problems, 8);
    assert!(decoded.problems.len() <= 9);
}

#[test]
fn the_default_limits_are_generous() {
    let limits = StreamLimits::default();
    assert_eq!(limits.get(Limit::BodyBytes), 16 << 20);
    assert_eq!(limits.get(Limit::LineBytes), 1 << 20);
    assert_eq!(limits.get(Limit::ArgumentBytes), 4 << 20);
    assert_eq!(limits.get(Limit::Calls), 512);
    assert_eq!(limits.get(Limit::NameBytes), 1024);
    assert_eq!(limits.get(Limit::CallIdBytes), 128);
    // A 512 KiB argument string in one line is fine by default.
    let mut session = OpenAiChat::new().stream();
    let big = "a".repeat(512 * 1024);
    let call = format!(
        r#"{{"index":0,"id":"call_a","type":"function","function":{{"name":"docs__search","arguments":"{{\"query\": \"{big}\"}}"}}}}"#
    );
    session.feed(chat_chunk(&call).as_bytes());
    session.feed(b"data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"tool_calls\"}]}\n\ndata: [DONE]\n\n");
    let decoded = session.finish();
    assert!(decoded.problems.is_empty(), "{:?}", decoded.problems);
    assert_eq!(decoded.executable().count(), 1);
}

#[test]
fn a_call_id_over_its_limit_ends_the_turn_and_never_reaches_an_event() {
    let long = "x".repeat(129);
    let finish =
        "data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"tool_calls\"}]}\n\n";
    let call = |index: usize, id: &str| {
        chat_chunk(&format!(
            r#"{{"index":{index},"id":"{id}","type":"function","function":{{"name":"docs__search","arguments":"{{}}"}}}}"#
        ))
    };
    // 128 bytes is within the default.
    let mut session = OpenAiChat::new().stream();
    session.feed(call(0, &long[..128]).as_bytes());
    session.feed(finish.as_bytes());
    assert_eq!(session.finish().executable().count(), 1);

    let mut session = OpenAiChat::new().stream();
    let mut events = session.feed(call(0, "call_ok").as_bytes());
    events.extend(session.feed(call(1, &long).as_bytes()));
    events.extend(session.feed(finish.as_bytes()));
    let decoded = session.finish();
    over(&decoded, Limit::CallIdBytes, 128);
    let shown = format!("{events:?} {decoded:?}");
    assert!(!shown.contains(&long), "{shown}");

    // Anthropic, with a lower cap.
    let stream = format!(
        "{}{}{}",
        "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{}}\n\n",
        "event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,",
        "\"content_block\":{\"type\":\"tool_use\",\"id\":\"toolu_0123456789abcdef\",\"name\":\"docs__search\",\"input\":{}}}\n\n",
    );
    let anthropic = Anthropic::new()
        .decode_options(DecodeOptions::new().limits(StreamLimits::new().call_id_bytes(16)));
    over(&feed(&mut *anthropic.stream(), &[stream.as_bytes()]), Limit::CallIdBytes, 16);
}

#[test]
fn model_text_over_its_limit_ends_the_turn_and_no_call_runs() {
    let text = |delta: &str| {
        format!(
            "data: {{\"choices\":[{{\"index\":0,\"delta\":{{\"content\":\"{delta}\"}},\"finish_reason\":null}}]}}\n\n"
        )
    };
    let call = chat_chunk(
        r#"{"index":0,"id":"call_1","type":"function","function":{"name":"docs__search","arguments":"{}"}}"#,
    );
    let finish =
        "data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"tool_calls\"}]}\n\n";
    // Ten bytes of text fit a cap of ten.
    let at = [text("12345"), text("67890"), call.clone(), finish.to_owned()];
    let chunks: Vec<&[u8]> = at.iter().map(|chunk| chunk.as_bytes()).collect();
    let decoded = feed(&mut *chat(StreamLimits::new().text_bytes(10)).stream(), &chunks);
    assert_eq!((decoded.text.as_str(), decoded.executable().count()), ("1234567890", 1));
    // One more byte, however it is split, ends the turn: the text stops growing and the call
    // that follows never runs.
    let past = [text("12345"), text("678901"), text("more"), call, finish.to_owned()];
    let chunks: Vec<&[u8]> = past.iter().map(|chunk| chunk.as_bytes()).collect();
    let decoded = feed(&mut *chat(StreamLimits::new().text_bytes(10)).stream(), &chunks);
    over(&decoded, Limit::TextBytes, 10);
    assert_eq!(decoded.text, "12345");
}
