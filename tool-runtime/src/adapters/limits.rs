//! Caps on what one model response may make a decoder or an HTTP client hold
//! ([`StreamLimits`]), so a hostile or broken peer costs bounded memory.

use crate::conversation::{Limit, MAX_CALL_ID_LEN};

/// Caps on what one model response may make a decoder (and an HTTP client) hold. A peer that
/// goes over one gets [`Problem::LimitExceeded`](super::Problem::LimitExceeded): decoding stops there, the turn ends as an
/// error and none of its calls is ready to run. The defaults are far above what any real
/// provider sends.
///
/// ```
/// use tool_runtime::adapters::{DecodeOptions, StreamLimits};
///
/// let limits = StreamLimits::new().line_bytes(64 * 1024).calls(16);
/// assert_eq!(limits.get_calls(), 16);
/// assert_eq!(StreamLimits::default().get_body_bytes(), 16 * 1024 * 1024);
/// let options = DecodeOptions::new().limits(limits);
/// # let _ = options;
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StreamLimits {
    body_bytes: usize,
    line_bytes: usize,
    argument_bytes: usize,
    name_bytes: usize,
    call_id_bytes: usize,
    text_bytes: usize,
    calls: usize,
    problems: usize,
}

impl Default for StreamLimits {
    /// 16 MiB body, 1 MiB line, 4 MiB arguments per call, 1 KiB name, 128-byte call id, 16 MiB
    /// of text, 512 calls, 1 024 problems.
    fn default() -> Self {
        Self {
            body_bytes: 16 << 20,
            line_bytes: 1 << 20,
            argument_bytes: 4 << 20,
            name_bytes: 1 << 10,
            call_id_bytes: MAX_CALL_ID_LEN,
            text_bytes: 16 << 20,
            calls: 512,
            problems: 1024,
        }
    }
}

impl StreamLimits {
    /// The defaults (see [`StreamLimits::default`]).
    #[must_use]
    pub fn new() -> Self {
        Self::default()
    }

    /// Bytes of one response body, streamed or whole (HTTP clients).
    #[must_use]
    pub const fn body_bytes(self, bytes: usize) -> Self {
        Self { body_bytes: bytes, ..self }
    }

    /// Bytes of one SSE or NDJSON line, and of one SSE event's joined `data` lines.
    #[must_use]
    pub const fn line_bytes(self, bytes: usize) -> Self {
        Self { line_bytes: bytes, ..self }
    }

    /// Bytes of one call's argument text.
    #[must_use]
    pub const fn argument_bytes(self, bytes: usize) -> Self {
        Self { argument_bytes: bytes, ..self }
    }

    /// Bytes of one call's name.
    #[must_use]
    pub const fn name_bytes(self, bytes: usize) -> Self {
        Self { name_bytes: bytes, ..self }
    }

    /// Bytes of one call's id as the provider sent it. The id reaches events, records and
    /// telemetry; a longer one ends the turn and none of its calls runs. 128 by default, the
    /// cap a conversation handed in has on its ids.
    ///
    /// ```
    /// use tool_runtime::adapters::{Limit, StreamLimits};
    ///
    /// assert_eq!(StreamLimits::default().get(Limit::CallIdBytes), 128);
    /// assert_eq!(StreamLimits::new().call_id_bytes(64).get(Limit::CallIdBytes), 64);
    /// ```
    #[must_use]
    pub const fn call_id_bytes(self, bytes: usize) -> Self {
        Self { call_id_bytes: bytes, ..self }
    }

    /// Bytes of the model's text in one response. An HTTP client's body cap bounds it too;
    /// this cap holds for a session fed by other means (a transport of your own).
    ///
    /// ```
    /// use tool_runtime::adapters::{Limit, StreamLimits};
    ///
    /// assert_eq!(StreamLimits::new().text_bytes(1024).get(Limit::TextBytes), 1024);
    /// ```
    #[must_use]
    pub const fn text_bytes(self, bytes: usize) -> Self {
        Self { text_bytes: bytes, ..self }
    }

    /// Calls in one response.
    #[must_use]
    pub const fn calls(self, calls: usize) -> Self {
        Self { calls, ..self }
    }

    /// Problems recorded for one response.
    #[must_use]
    pub const fn problems(self, problems: usize) -> Self {
        Self { problems, ..self }
    }

    /// The cap of `limit`.
    #[must_use]
    pub const fn get(&self, limit: Limit) -> usize {
        match limit {
            Limit::BodyBytes => self.body_bytes,
            Limit::LineBytes => self.line_bytes,
            Limit::ArgumentBytes => self.argument_bytes,
            Limit::NameBytes => self.name_bytes,
            Limit::CallIdBytes => self.call_id_bytes,
            Limit::TextBytes => self.text_bytes,
            Limit::Calls => self.calls,
            Limit::Problems => self.problems,
        }
    }

    /// [`StreamLimits::body_bytes`].
    #[must_use]
    pub const fn get_body_bytes(&self) -> usize {
        self.body_bytes
    }

    /// [`StreamLimits::calls`].
    #[must_use]
    pub const fn get_calls(&self) -> usize {
        self.calls
    }
}
