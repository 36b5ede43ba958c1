//! Provider stream sessions and their framing (SSE, NDJSON), fed arbitrary bytes in arbitrary
//! chunks.
//!
//! Input layout: the first byte picks the limits (tight ones, which fuzzing can reach, or the
//! defaults) and whether the request declared tools; the second seeds the chunk sizes; the
//! rest is the response body.
//!
//! Every session must, on any input: not panic; decode the same whatever the chunking (the
//! bytes are also fed whole, and one at a time for short inputs); emit output bounded by its
//! input and limits (events, calls, names, argument text, problem list and messages); never
//! report a call ready or executable once a limit was exceeded. The whole-body decoder of the
//! same provider must not panic on the body either.

use tool_runtime::adapters::{
    Adapter, Anthropic, CallArguments, DecodeOptions, Decoded, Gemini, IdOrigin, Limit, Ollama,
    OpenAiChat, OpenAiResponses, Problem, Provider, StreamEvent, StreamLimits, StreamSession,
};

/// Rewrites a body into one that must decode the same, when it can.
type Transform = fn(&[u8]) -> Option<Vec<u8>>;

/// Tight limits that short fuzz inputs can reach.
fn tight() -> StreamLimits {
    StreamLimits::new()
        .line_bytes(512)
        .argument_bytes(256)
        .name_bytes(32)
        .calls(8)
        .problems(16)
        .body_bytes(4096)
}

/// The longest a problem's message may be (messages quote provider text only escaped and cut).
const MESSAGE_BYTES: usize = 2048;

fn adapter(provider: Provider, options: DecodeOptions) -> Box<dyn Adapter> {
    match provider {
        Provider::OpenAiChat => Box::new(OpenAiChat::new().decode_options(options)),
        Provider::OpenAiResponses => Box::new(OpenAiResponses::new().decode_options(options)),
        Provider::Anthropic => Box::new(Anthropic::new().decode_options(options)),
        Provider::Gemini => Box::new(Gemini::new().decode_options(options)),
        Provider::Ollama => Box::new(Ollama::new().decode_options(options)),
    }
}

/// The settings and body an input stands for.
struct Input<'a> {
    limits: StreamLimits,
    declared: bool,
    seed: u32,
    body: &'a [u8],
}

impl<'a> Input<'a> {
    fn read(data: &'a [u8]) -> Option<Self> {
        let [config, seed, body @ ..] = data else { return None };
        let limits = if config & 1 == 0 { tight() } else { StreamLimits::default() };
        Some(Self { limits, declared: config & 2 != 0, seed: u32::from(*seed) | 0x100, body })
    }

    fn options(&self) -> DecodeOptions {
        let options = DecodeOptions::new().limits(self.limits);
        if self.declared { options.declared_tools(["docs__search", "math__add"]) } else { options }
    }
}

/// Chunk sizes from 1 to 64 bytes, from a small xorshift generator.
fn chunks(body: &[u8], mut seed: u32) -> Vec<&[u8]> {
    let mut out = Vec::new();
    let mut rest = body;
    while !rest.is_empty() {
        seed ^= seed << 13;
        seed ^= seed >> 17;
        seed ^= seed << 5;
        let size = (seed % 64 + 1) as usize;
        let (head, tail) = rest.split_at(size.min(rest.len()));
        out.push(head);
        rest = tail;
    }
    out
}

/// Feeds `pieces` and returns every event and the decoded turn.
fn run(session: &mut dyn StreamSession, pieces: &[&[u8]]) -> (Vec<StreamEvent>, Decoded) {
    let mut events = Vec::new();
    for piece in pieces {
        events.extend(session.feed(piece));
    }
    events.extend(session.close());
    let decoded = session.finish();
    assert!(session.close().is_empty(), "a second close returned events");
    (events, decoded)
}

/// What must not depend on chunking, written out (problems hold errors without `PartialEq`).
fn fingerprint(events: &[StreamEvent], decoded: &Decoded) -> String {
    format!("{events:?}\n{decoded:?}")
}

fn check_bounds(input: &Input<'_>, events: &[StreamEvent], decoded: &Decoded) {
    let limits = input.limits;
    // A frame needs a few bytes, and one frame yields a bounded number of events; a call
    // unwrapped from `multi_tool_use.parallel` adds at most one ready event per call.
    let bound = 4 * input.body.len() + 4 * limits.get(Limit::Calls) + 16;
    assert!(events.len() <= bound, "{} events from {} bytes", events.len(), input.body.len());
    assert!(
        decoded.calls.len() <= limits.get(Limit::Calls) + 1,
        "{} calls over a limit of {}",
        decoded.calls.len(),
        limits.get(Limit::Calls)
    );
    assert!(
        decoded.problems.len() <= limits.get(Limit::Problems) + 1,
        "{} problems over a limit of {}",
        decoded.problems.len(),
        limits.get(Limit::Problems)
    );
    assert!(decoded.text.len() <= input.body.len(), "more text than input");
    for call in &decoded.calls {
        assert!(call.name.len() <= limits.get(Limit::NameBytes), "name over its limit");
        if let CallArguments::Invalid { raw, .. } = &call.arguments {
            assert!(raw.len() <= limits.get(Limit::ArgumentBytes), "argument text over its limit");
        }
        assert!(!call.id.is_empty(), "a call without an id");
        let sent = match &call.id_origin {
            IdOrigin::Provider => Some(call.id.as_str()),
            IdOrigin::Reminted(sent) => Some(sent.as_str()),
            IdOrigin::Minted => None,
        };
        assert!(
            sent.is_none_or(|id| id.len() <= limits.get(Limit::CallIdBytes)),
            "call id over its limit"
        );
    }
    let mut ids: Vec<&str> = decoded.calls.iter().map(|call| call.id.as_str()).collect();
    ids.sort_unstable();
    let before = ids.len();
    ids.dedup();
    assert_eq!(before, ids.len(), "two calls of one response share an id");
    for problem in &decoded.problems {
        let message = problem.to_string();
        assert!(!message.is_empty() && message.len() <= MESSAGE_BYTES, "message: {message:?}");
    }
    let exceeded = decoded.problems.iter().any(|p| matches!(p, Problem::LimitExceeded { .. }));
    if exceeded {
        assert_eq!(decoded.executable().count(), 0, "a call is executable after a limit");
        assert!(!decoded.finish.allows_execution(), "a turn over a limit allows execution");
    }
}

fn check_session(provider: Provider, data: &[u8], transform: Option<Transform>) {
    let Some(input) = Input::read(data) else { return };
    let adapter = adapter(provider, input.options());
    let (events, decoded) = run(adapter.stream().as_mut(), &chunks(input.body, input.seed));
    check_bounds(&input, &events, &decoded);
    let expected = fingerprint(&events, &decoded);
    let (whole_events, whole) = run(adapter.stream().as_mut(), &[input.body]);
    assert_eq!(expected, fingerprint(&whole_events, &whole), "chunking changed the result");
    if input.body.len() <= 256 {
        let bytes: Vec<&[u8]> = input.body.chunks(1).collect();
        let (byte_events, by_byte) = run(adapter.stream().as_mut(), &bytes);
        assert_eq!(expected, fingerprint(&byte_events, &by_byte), "byte-wise feeding differs");
    }
    if let Some(other) = transform.and_then(|transform| transform(input.body)) {
        let (other_events, transformed) =
            run(adapter.stream().as_mut(), &chunks(&other, input.seed));
        assert_eq!(
            expected,
            fingerprint(&other_events, &transformed),
            "framing-equivalent input differs"
        );
    }
    // The whole-body decoder of the provider takes the same bytes (as a JSON document).
    if let Ok(decoded) = adapter.decode(input.body) {
        assert!(decoded.calls.len() <= input.limits.get(Limit::Calls) + 1);
    }
}

/// OpenAI Chat Completions stream (SSE).
pub fn check_openai_chat(data: &[u8]) {
    check_session(Provider::OpenAiChat, data, None);
}

/// OpenAI Responses stream (SSE with `event:` names).
pub fn check_openai_responses(data: &[u8]) {
    check_session(Provider::OpenAiResponses, data, None);
}

/// Anthropic Messages stream (SSE with `event:` names).
pub fn check_anthropic(data: &[u8]) {
    check_session(Provider::Anthropic, data, None);
}

/// Gemini `streamGenerateContent?alt=sse` stream.
pub fn check_gemini(data: &[u8]) {
    check_session(Provider::Gemini, data, None);
}

/// Ollama's NDJSON chat stream.
pub fn check_ollama(data: &[u8]) {
    check_session(Provider::Ollama, data, None);
}

/// Any provider's session, by name: what the fuzz targets for one provider run.
///
/// # Panics
///
/// When a session breaks one of the promises in the module docs.
pub fn check(provider: Provider, data: &[u8]) {
    check_session(provider, data, None);
}

/// SSE framing (through the Anthropic and OpenAI Chat sessions): on top of the session checks,
/// line ends are interchangeable: an input holding no CR decodes the same with every LF
/// written as CRLF, or as a lone CR.
pub fn check_sse(data: &[u8]) {
    let config = data.first().copied().unwrap_or_default();
    let provider = if config & 4 != 0 { Provider::Anthropic } else { Provider::OpenAiChat };
    if config & 8 != 0 {
        check_session(
            provider,
            data,
            Some(|body| (!body.contains(&b'\r')).then(|| replace_lf(body, b"\r"))),
        );
    } else {
        check_session(
            provider,
            data,
            Some(|body| (!body.contains(&b'\r')).then(|| replace_lf(body, b"\r\n"))),
        );
    }
}

/// NDJSON framing (through the Ollama session): on top of the session checks, blank lines are
/// nothing: the input with every LF doubled decodes the same.
pub fn check_ndjson(data: &[u8]) {
    check_session(Provider::Ollama, data, Some(|body| Some(replace_lf(body, b"\n\n"))));
}

fn replace_lf(body: &[u8], with: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(body.len() * 2);
    for &byte in body {
        if byte == b'\n' {
            out.extend_from_slice(with);
        } else {
            out.push(byte);
        }
    }
    out
}
