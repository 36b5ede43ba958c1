//! The provider's own payload for a call, kept for audit and never shown.

use std::fmt;
use std::sync::Arc;

/// The most bytes of a provider's payload a record keeps: 16 KiB; longer payloads are cut on
/// a character boundary ([`RawCall::was_cut`]).
pub const MAX_RAW_CALL_BYTES: usize = 16 * 1024;

/// A call as the model sent it, in its provider's JSON (`{"id", "name", "arguments"}` with the
/// arguments' text exactly as it arrived), kept in the call's
/// [record](super::ToolInvocationRecord::raw) for audit: for a refused call too (arguments that
/// are not JSON, a tool that does not exist, a call policy denied), so an audit sees what the
/// model sent.
///
/// It is never shown: it has no `Serialize` (records serialise without it, so it reaches no
/// event, UI, log or telemetry path), and its `Debug` prints its size only. Read it on purpose
/// with [`text`](Self::text).
///
/// ```
/// use tool_runtime::runtime::RawCall;
///
/// let raw = RawCall::new(r#"{"id": "call_1", "name": "shop__refund", "arguments": "{\"order\": 7}"}"#);
/// assert!(raw.text().contains("shop__refund"));
/// assert_eq!(format!("{raw:?}"), format!("RawCall({} bytes)", raw.len()));
/// assert!(!raw.was_cut());
/// ```
#[derive(Clone, PartialEq, Eq)]
pub struct RawCall {
    text: Arc<str>,
    cut: bool,
}

impl RawCall {
    /// The payload `text`, cut to [`MAX_RAW_CALL_BYTES`] on a character boundary.
    #[must_use]
    pub fn new(text: &str) -> Self {
        if text.len() <= MAX_RAW_CALL_BYTES {
            return Self { text: text.into(), cut: false };
        }
        let end = text.floor_char_boundary(MAX_RAW_CALL_BYTES);
        Self { text: text[..end].into(), cut: true }
    }

    /// A payload read back from where it was kept (a store's audit trail), with whether it
    /// was cut when first kept; cut again should it be longer than [`MAX_RAW_CALL_BYTES`].
    ///
    /// ```
    /// use tool_runtime::runtime::RawCall;
    ///
    /// let raw = RawCall::restored("{\"id\": \"call_1\"", true);
    /// assert!(raw.was_cut());
    /// ```
    #[must_use]
    pub fn restored(text: &str, was_cut: bool) -> Self {
        let mut raw = Self::new(text);
        raw.cut |= was_cut;
        raw
    }

    /// The payload, as kept.
    #[must_use]
    pub fn text(&self) -> &str {
        &self.text
    }

    /// Its length in bytes, as kept.
    #[must_use]
    pub fn len(&self) -> usize {
        self.text.len()
    }

    /// Whether it is empty.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.text.is_empty()
    }

    /// Whether the payload was longer than [`MAX_RAW_CALL_BYTES`] and was cut.
    #[must_use]
    pub fn was_cut(&self) -> bool {
        self.cut
    }
}

impl fmt::Debug for RawCall {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "RawCall({} bytes{})", self.text.len(), if self.cut { ", cut" } else { "" })
    }
}
