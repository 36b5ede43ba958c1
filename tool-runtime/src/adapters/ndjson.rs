//! Incremental newline-delimited JSON framing (Ollama's streams): one frame per non-blank
//! line, bytes buffered only until their line ends.

use crate::conversation::{Limit, Problem};

use super::framing::{Frame, Framed, Framing};
use super::limits::StreamLimits;

/// Newline-delimited JSON framing: one frame per non-blank line.
#[derive(Debug)]
pub(crate) struct NdjsonParser {
    line: Vec<u8>,
    /// The cap of one line.
    limit: usize,
    /// A line went over the cap: nothing more is read.
    over: bool,
}

impl Default for NdjsonParser {
    fn default() -> Self {
        Self { line: Vec::new(), limit: StreamLimits::default().get(Limit::LineBytes), over: false }
    }
}

impl Framing for NdjsonParser {
    fn feed(&mut self, bytes: &[u8], out: &mut Vec<Framed>) {
        for &byte in bytes {
            if self.over {
                return;
            }
            if byte == b'\n' {
                self.end_line(out);
            } else if self.line.len() >= self.limit {
                self.over = true;
                self.line = Vec::new();
                out.push(Err(Problem::LimitExceeded {
                    limit: Limit::LineBytes,
                    value: self.limit,
                }));
            } else {
                self.line.push(byte);
            }
        }
    }

    fn limit_lines(&mut self, bytes: usize) {
        self.limit = bytes;
    }

    /// The input ended: a last line without its newline is still a frame.
    fn finish(&mut self, out: &mut Vec<Framed>) {
        if !self.over {
            self.end_line(out);
        }
    }
}

impl NdjsonParser {
    fn end_line(&mut self, out: &mut Vec<Framed>) {
        let line = std::mem::take(&mut self.line);
        match std::str::from_utf8(&line) {
            Ok(text) if text.trim().is_empty() => {}
            Ok(text) => out.push(Ok(Frame { event: None, data: text.to_owned() })),
            Err(_) => out.push(Err(Problem::InvalidUtf8)),
        }
        self.line = line;
        self.line.clear();
    }
}
