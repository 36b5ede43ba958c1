//! Framing: how a streamed body is cut into event payloads before a provider protocol reads
//! them. [`SseParser`](super::sse::SseParser) and
//! [`NdjsonParser`](super::ndjson::NdjsonParser) implement [`Framing`]; this module depends on
//! neither, so the parsers and the sessions that drive them never import each other.

use crate::conversation::Problem;

/// One dispatched event (or one NDJSON line).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Frame {
    /// The `event:` field, when there was one.
    pub(crate) event: Option<String>,
    /// The joined `data:` lines.
    pub(crate) data: String,
}

/// A completed frame, or a problem, in the order the bytes held them: a session handles both
/// in that order, so where the input is cut into chunks never changes what it decodes.
pub(crate) type Framed = Result<Frame, Problem>;

/// Cuts bytes, fed in pieces split anywhere, into [`Frame`]s.
pub(crate) trait Framing: std::fmt::Debug + Send {
    /// Takes the next bytes; completed frames and problems go to `out`, in input order.
    fn feed(&mut self, bytes: &[u8], out: &mut Vec<Framed>);

    /// Caps one line (and one event's joined data) at `bytes`; going over reports
    /// [`Problem::LimitExceeded`] and drops everything after it.
    fn limit_lines(&mut self, bytes: usize);

    /// The input ended: whatever is buffered and complete enough becomes a last frame.
    fn finish(&mut self, out: &mut Vec<Framed>);
}
