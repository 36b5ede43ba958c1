//! A streamed body on its way to the adapter's session, with a side look at the usage the
//! provider reports (the adapters keep no usage, and should not: it is not a wire concern).

use serde_json::Value;

use crate::adapters::{Decoded, StreamEvent, StreamSession};
use crate::agent::Usage;

/// Where a provider puts usage, read from one event payload; `true` when it held some.
pub(super) type UsageReader = fn(&Value, &mut Usage) -> bool;

/// Feeds a streamed body to a session and reads usage from the same bytes.
///
/// Usage is read from `data:` lines only when they contain `"usage"` as a JSON key or string,
/// so ordinary chunks are parsed once (by the session), not twice. An escaped `\"usage\"`
/// inside model text never matches.
pub(super) struct BodyReader {
    session: Box<dyn StreamSession>,
    read_usage: UsageReader,
    line: Vec<u8>,
    usage: Usage,
    saw_usage: bool,
    bytes: u64,
}

impl BodyReader {
    pub(super) fn new(session: Box<dyn StreamSession>, read_usage: UsageReader) -> Self {
        Self {
            session,
            read_usage,
            line: Vec::new(),
            usage: Usage::default(),
            saw_usage: false,
            bytes: 0,
        }
    }

    /// How many body bytes arrived so far.
    pub(super) fn bytes(&self) -> u64 {
        self.bytes
    }

    /// Takes the next bytes and forwards what they complete.
    pub(super) fn feed(&mut self, chunk: &[u8], on_event: &(dyn Fn(StreamEvent) + Send + Sync)) {
        self.bytes += chunk.len() as u64;
        for piece in chunk.split_inclusive(|&byte| byte == b'\n' || byte == b'\r') {
            match piece.split_last() {
                Some((b'\n' | b'\r', line)) => {
                    self.line.extend_from_slice(line);
                    self.end_line();
                }
                _ => self.line.extend_from_slice(piece),
            }
        }
        self.session.feed(chunk).into_iter().for_each(on_event);
    }

    /// The body ended: the session's last events, its result, and the usage if any was seen.
    pub(super) fn finish(
        mut self,
        on_event: &(dyn Fn(StreamEvent) + Send + Sync),
    ) -> (Decoded, Option<Usage>) {
        self.end_line();
        self.session.close().into_iter().for_each(on_event);
        let usage = self.saw_usage.then_some(self.usage);
        (self.session.finish(), usage)
    }

    /// Reads usage from the line just ended; the line's buffer is kept for the next one.
    fn end_line(&mut self) {
        if let Some(data) = self.line.strip_prefix(b"data:")
            && mentions_usage(data)
            && let Ok(value) = serde_json::from_slice::<Value>(data)
        {
            self.saw_usage |= (self.read_usage)(&value, &mut self.usage);
        }
        self.line.clear();
    }
}

impl std::fmt::Debug for BodyReader {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BodyReader").field("bytes", &self.bytes).finish_non_exhaustive()
    }
}

/// Whether `data` has a `"usage"` that is not `null` (vLLM sends `"usage": null` on every
/// chunk; parsing those twice would be waste).
fn mentions_usage(data: &[u8]) -> bool {
    const KEY: &[u8] = b"\"usage\"";
    (0..data.len().saturating_sub(KEY.len() - 1)).filter(|&at| data[at..].starts_with(KEY)).any(
        |at| {
            let rest = data[at + KEY.len()..].trim_ascii_start();
            let value = rest.strip_prefix(b":").map_or(rest, <[u8]>::trim_ascii_start);
            !value.starts_with(b"null")
        },
    )
}

/// A token count at `pointer`, if there is one.
pub(super) fn count(value: &Value, pointer: &str) -> Option<u64> {
    value.pointer(pointer).and_then(Value::as_u64)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::adapters::{Adapter, OpenAiChat};

    fn openai_usage(value: &Value, usage: &mut Usage) -> bool {
        count(value, "/usage/prompt_tokens").map(|tokens| usage.input_tokens = tokens).is_some()
    }

    #[test]
    fn null_usage_is_skipped() {
        assert!(mentions_usage(br#"{"usage": {"prompt_tokens": 1}}"#));
        assert!(!mentions_usage(br#"{"choices": [], "usage" : null}"#));
        assert!(mentions_usage(br#"{"usage":null,"x":{"usage":{}}}"#));
        assert!(!mentions_usage(br#"{"content": "say \"usage\""}"#));
        assert!(!mentions_usage(b"\"usag"));
    }

    #[test]
    fn usage_is_read_across_chunk_boundaries_and_text_never_matches() {
        let body = concat!(
            "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"say \\\"usage\\\"\"}}]}\r\n\r\n",
            "data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\n",
            "data: {\"choices\":[],\"usage\":{\"prompt_tokens\":12}}\n\n",
            "data: {\"choices\":[],\"usage\":null}\n\n",
            "data: [DONE]",
        );
        let mut reader = BodyReader::new(OpenAiChat::new().stream(), openai_usage);
        for piece in body.as_bytes().chunks(5) {
            reader.feed(piece, &|_| {});
        }
        assert_eq!(reader.bytes(), body.len() as u64);
        let (decoded, usage) = reader.finish(&|_| {});
        assert_eq!(decoded.text, "say \"usage\"");
        assert_eq!(usage.map(|usage| usage.input_tokens), Some(12));
    }
}
