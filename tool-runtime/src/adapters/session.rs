//! Streaming sessions: framing (SSE or NDJSON) in front of a provider protocol in front of the
//! shared assembly.

use std::fmt;
use std::sync::Arc;

use serde_json::Value;

use crate::conversation::{Decoded, Limit, Problem, StreamEvent};
use crate::schema::parse_json;

use super::assemble::Core;
use super::error::DecodeError;
use super::framing::{Frame, Framed, Framing};

/// One streamed response being decoded: feed it bytes as they arrive, read events, and take
/// the assembled result at the end.
///
/// A session holds the state of exactly one response. Work is linear in the bytes fed: each
/// byte is framed once, argument text is appended and parsed once per call when its turn
/// finishes. No input makes it panic; what is wrong is reported as
/// [`StreamEvent::Problem`] and kept in [`Decoded::problems`].
///
/// ```
/// use tool_runtime::adapters::{Adapter, Anthropic, StreamEvent};
///
/// let mut session = Anthropic::new().stream();
/// let events = session.feed(b"event: ping\ndata: {\"type\": \"ping\"}\n\n");
/// assert!(events.is_empty());
/// let decoded = session.finish();
/// assert!(decoded.calls.is_empty());
/// assert_eq!(decoded.finish, session.finish().finish); // idempotent
/// ```
pub trait StreamSession: fmt::Debug + Send {
    /// Takes the next bytes, split anywhere (inside a line, a UTF-8 character, a JSON escape),
    /// and returns what they completed.
    fn feed(&mut self, chunk: &[u8]) -> Vec<StreamEvent>;

    /// The input ended: flushes what is buffered, finalises open calls (cut off when the
    /// provider never said the turn was over) and returns the last events. Calling it again
    /// returns nothing.
    fn close(&mut self) -> Vec<StreamEvent>;

    /// Closes the session if needed and returns the assembled response. Idempotent: every call
    /// returns the same result.
    fn finish(&mut self) -> Decoded;
}

/// What a provider does with one frame.
pub(crate) trait Protocol: fmt::Debug + Send {
    fn on_frame(&mut self, core: &mut Core, frame: Frame, out: &mut Vec<StreamEvent>);
}

/// A session of protocol `P` over framing `F`.
#[derive(Debug)]
pub(crate) struct Session<F, P> {
    framing: F,
    core: Core,
    protocol: P,
    done: Option<Decoded>,
    framed: Vec<Framed>,
}

impl<F: Framing, P: Protocol> Session<F, P> {
    pub(crate) fn new(mut framing: F, core: Core, protocol: P) -> Self {
        framing.limit_lines(core.limits().get(Limit::LineBytes));
        Self { framing, core, protocol, done: None, framed: Vec::new() }
    }

    fn drain(&mut self, out: &mut Vec<StreamEvent>) {
        // Most reads complete nothing; an empty `drain(..)` is not free when reads are tiny.
        if !self.framed.is_empty() {
            for framed in self.framed.drain(..) {
                if self.core.halted() {
                    break;
                }
                match framed {
                    Ok(frame) => self.protocol.on_frame(&mut self.core, frame, out),
                    Err(problem) => self.core.problem(problem, out),
                }
            }
            self.core.take_deferred(out);
        }
    }
}

impl<F: Framing, P: Protocol> StreamSession for Session<F, P> {
    fn feed(&mut self, chunk: &[u8]) -> Vec<StreamEvent> {
        let mut out = Vec::new();
        if self.done.is_some() {
            if !chunk.is_empty() {
                out.push(StreamEvent::Problem(Problem::AfterFinish));
            }
            return out;
        }
        if self.core.halted() {
            return out;
        }
        self.framing.feed(chunk, &mut self.framed);
        self.drain(&mut out);
        out
    }

    fn close(&mut self) -> Vec<StreamEvent> {
        let mut out = Vec::new();
        if self.done.is_none() {
            if !self.core.halted() {
                self.framing.finish(&mut self.framed);
            }
            self.drain(&mut out);
            self.done = Some(self.core.end(&mut out));
        }
        out
    }

    fn finish(&mut self) -> Decoded {
        self.close();
        self.done.clone().unwrap_or_else(|| self.core.end(&mut Vec::new()))
    }
}

/// Parses one event payload strictly; a payload that is not JSON is reported and skipped.
pub(crate) fn payload(core: &mut Core, data: &str, out: &mut Vec<StreamEvent>) -> Option<Value> {
    match parse_json(data.as_bytes()) {
        Ok(value) => Some(value),
        Err(error) => {
            core.problem(Problem::InvalidPayload(Arc::new(error)), out);
            None
        }
    }
}

/// Parses a whole response body strictly.
pub(crate) fn body(bytes: &[u8]) -> Result<Value, DecodeError> {
    parse_json(bytes).map_err(|error| DecodeError::Json(Arc::new(error)))
}

/// The string at `key`, if it is one.
pub(crate) fn str_at<'a>(value: &'a Value, key: &str) -> Option<&'a str> {
    value.get(key).and_then(Value::as_str)
}

/// The count at `key`, if it is a whole number.
pub(crate) fn count_at(value: &Value, key: &str) -> Option<u64> {
    value.get(key).and_then(Value::as_u64)
}

/// Reads `value.usage` when it is an object (vLLM sends `"usage": null` on every chunk; that
/// is no report), with its input and output counts under `input` and `output`. Whether there
/// was a report.
pub(crate) fn usage_object(
    core: &mut Core,
    value: &Value,
    [input, output]: [&str; 2],
    out: &mut Vec<StreamEvent>,
) -> bool {
    let Some(usage) = value.get("usage").filter(|usage| usage.is_object()) else { return false };
    core.usage(count_at(usage, input), count_at(usage, output), out);
    true
}
