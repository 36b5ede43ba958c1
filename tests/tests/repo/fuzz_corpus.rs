//! Replays the committed fuzz corpus (`fuzz/corpus/<target>/`) through the same checks the
//! libFuzzer targets run (`fuzz-checks`), on the stable toolchain: every input a fuzzing run
//! kept, and every crash it found, stays a regression test in CI.

use std::path::Path;

#[test]
fn every_target_has_a_corpus_and_every_input_passes_its_checks() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../fuzz/corpus");
    for (target, check) in fuzz_checks::TARGETS {
        let dir = root.join(target);
        let mut files: Vec<_> = std::fs::read_dir(&dir)
            .unwrap_or_else(|error| panic!("{}: {error}", dir.display()))
            .map(|entry| entry.expect("a corpus entry").path())
            .collect();
        files.sort();
        assert!(!files.is_empty(), "no corpus for `{target}`");
        for file in files {
            let data = std::fs::read(&file).expect("a corpus file");
            let outcome = std::panic::catch_unwind(|| check(&data));
            assert!(outcome.is_ok(), "`{target}` fails on {}", file.display());
        }
    }
}

#[test]
fn every_fuzz_target_is_listed() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../fuzz/fuzz_targets");
    let mut on_disk: Vec<String> = std::fs::read_dir(&dir)
        .expect("fuzz/fuzz_targets")
        .map(|entry| {
            let path = entry.expect("an entry").path();
            path.file_stem().expect("a name").to_string_lossy().into_owned()
        })
        .collect();
    on_disk.sort();
    let mut listed: Vec<String> =
        fuzz_checks::TARGETS.iter().map(|(name, _)| (*name).to_owned()).collect();
    listed.sort();
    assert_eq!(on_disk, listed);
}

// Findings of the fuzz checks, each pinned by name as well as by its corpus file.

use tool_runtime::adapters::{
    Adapter, DecodeOptions, Limit, OpenAiChat, Problem, StreamLimits, openai_sse,
};

/// `sse_framing` / `stream_openai_responses`: frames completed before a line over the limit,
/// in the same chunk, were dropped when the whole body came at once (problems were handled
/// before the chunk's frames), but kept when it came in pieces.
#[test]
fn what_came_before_a_line_over_the_limit_is_kept_however_the_bytes_are_cut() {
    let mut body = openai_sse::text("Hello there");
    body.extend_from_slice(b"data: ");
    body.extend(std::iter::repeat_n(b'x', 300));
    body.extend_from_slice(b"\n\n");
    let adapter = OpenAiChat::new()
        .decode_options(DecodeOptions::new().limits(StreamLimits::new().line_bytes(256)));
    let mut whole = adapter.stream();
    whole.feed(&body);
    let whole = whole.finish();
    let mut pieces = adapter.stream();
    for piece in body.chunks(7) {
        pieces.feed(piece);
    }
    let pieces = pieces.finish();
    assert_eq!(whole.text, "Hello there");
    assert_eq!(pieces.text, whole.text);
    assert!(matches!(
        whole.problems.as_slice(),
        [Problem::LimitExceeded { limit: Limit::LineBytes, .. }]
    ));
}

/// A `multi_tool_use.parallel` call standing for more calls than a response may hold, or for
/// a call with a name over `name_bytes`, goes over the limit as the calls would one by one:
/// the turn fails and none runs.
#[test]
fn a_parallel_wrappers_calls_count_against_the_calls_and_name_limits() {
    let uses: Vec<String> = (0..3)
        .map(|n| {
            format!(
                r#"{{"recipient_name": "functions.text__echo", "parameters": {{"word": "{n}"}}}}"#
            )
        })
        .collect();
    let arguments = format!(r#"{{"tool_uses": [{}]}}"#, uses.join(", "));
    let body = openai_sse::calls(&[("call_P1", "multi_tool_use.parallel", &arguments)]);
    let decode = |calls| {
        let limits = StreamLimits::new().calls(calls);
        let mut session =
            OpenAiChat::new().decode_options(DecodeOptions::new().limits(limits)).stream();
        session.feed(&body);
        session.finish()
    };
    assert_eq!(decode(3).executable().count(), 3);
    // `stream_openai_chat`: the names of a wrapper's calls are held to `name_bytes` too.
    let long = format!(
        r#"{{"tool_uses": [{{"recipient_name": "functions.{}", "parameters": {{}}}}]}}"#,
        "n".repeat(40)
    );
    let body = openai_sse::calls(&[("call_P1", "multi_tool_use.parallel", &long)]);
    let limits = StreamLimits::new().name_bytes(32);
    let mut session =
        OpenAiChat::new().decode_options(DecodeOptions::new().limits(limits)).stream();
    session.feed(&body);
    let decoded = session.finish();
    assert_eq!(decoded.executable().count(), 0);
    assert!(decoded.calls.iter().all(|call| call.name.len() <= 32));
    assert!(
        decoded
            .problems
            .iter()
            .any(|p| matches!(p, Problem::LimitExceeded { limit: Limit::NameBytes, .. })),
        "{:?}",
        decoded.problems
    );
    let over = decode(2);
    assert_eq!(over.executable().count(), 0);
    assert!(
        over.problems
            .iter()
            .any(|p| matches!(p, Problem::LimitExceeded { limit: Limit::Calls, .. })),
        "{:?}",
        over.problems
    );
}

/// `stream_openai_chat`: a line over the limit after the turn's `finish_reason` (in the usage
/// chunk) made the response an error, yet `Decoded::executable` still listed its calls.
#[test]
fn a_limit_exceeded_after_the_finish_leaves_no_call_executable() {
    let mut body = openai_sse::calls(&[("call_1", "docs__search", r#"{"query": "x"}"#)]);
    let done = body.len() - b"data: [DONE]\n\n".len();
    body.truncate(done);
    body.extend_from_slice(b"data: {\"choices\": [], \"usage\": {\"prompt_tokens\": ");
    body.extend(std::iter::repeat_n(b'1', 600));
    body.extend_from_slice(b"}}\n\ndata: [DONE]\n\n");
    let limits = StreamLimits::new().line_bytes(512);
    let mut session =
        OpenAiChat::new().decode_options(DecodeOptions::new().limits(limits)).stream();
    session.feed(&body);
    let decoded = session.finish();
    assert_eq!(decoded.calls.len(), 1);
    assert!(!decoded.finish.allows_execution());
    assert_eq!(decoded.executable().count(), 0);
}

/// `stream_openai_responses`: a problem too many while a turn's calls were finalised halted
/// the decoding, and the halt finalised the same calls again: duplicate calls under fresh
/// ids, over the calls limit, and two finish events.
#[test]
fn a_problem_too_many_while_finalising_finalises_each_call_once() {
    let mut body = Vec::new();
    for index in 0..5 {
        let delta = format!(
            r#"{{"choices":[{{"index":0,"delta":{{"tool_calls":[{{"index":{index},"function":{{"arguments":"{{}}"}}}}]}},"finish_reason":null}}]}}"#
        );
        body.extend_from_slice(format!("data: {delta}\n\n").as_bytes());
    }
    let limits = StreamLimits::new().problems(3).calls(8);
    let mut session =
        OpenAiChat::new().decode_options(DecodeOptions::new().limits(limits)).stream();
    let mut events = session.feed(&body);
    events.extend(session.close());
    let decoded = session.finish();
    assert_eq!(decoded.calls.len(), 5, "{:?}", decoded.calls);
    let finishes =
        events.iter().filter(|e| matches!(e, tool_runtime::adapters::StreamEvent::Finish(_)));
    assert_eq!(finishes.count(), 1);
    assert!(!decoded.finish.allows_execution());
    assert!(
        decoded
            .problems
            .iter()
            .any(|p| matches!(p, Problem::LimitExceeded { limit: Limit::Problems, .. })),
        "{:?}",
        decoded.problems
    );
}
