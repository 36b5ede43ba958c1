//! Incremental newline-delimited JSON framing (Ollama's streams): one frame per non-blank
//! line, bytes buffered only until their line ends.

use super::framing::{Frame, Framing};
use super::problem::Problem;

/// Newline-delimited JSON framing: one frame per non-blank line.
#[derive(Debug, Default)]
pub(crate) struct NdjsonParser {
    line: Vec<u8>,
}

impl Framing for NdjsonParser {
    fn feed(&mut self, bytes: &[u8], frames: &mut Vec<Frame>, problems: &mut Vec<Problem>) {
        for &byte in bytes {
            if byte == b'\n' {
                self.end_line(frames, problems);
            } else {
                self.line.push(byte);
            }
        }
    }

    /// The input ended: a last line without its newline is still a frame.
    fn finish(&mut self, frames: &mut Vec<Frame>, problems: &mut Vec<Problem>) {
        self.end_line(frames, problems);
    }
}

impl NdjsonParser {
    fn end_line(&mut self, frames: &mut Vec<Frame>, problems: &mut Vec<Problem>) {
        let line = std::mem::take(&mut self.line);
        match std::str::from_utf8(&line) {
            Ok(text) if text.trim().is_empty() => {}
            Ok(text) => frames.push(Frame { event: None, data: text.to_owned() }),
            Err(_) => problems.push(Problem::InvalidUtf8),
        }
        self.line = line;
        self.line.clear();
    }
}
