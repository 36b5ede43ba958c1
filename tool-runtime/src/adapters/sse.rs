//! Incremental Server-Sent Events framing, as the WHATWG spec defines it: lines end in LF, CRLF
//! or CR; `:` starts a comment; `data:` lines of one event are joined with `\n`; a blank line
//! dispatches the event. Bytes are buffered only until their line ends, so a multi-byte
//! character split across chunks is decoded whole, and every byte is looked at once.

use crate::conversation::{Limit, Problem};

use super::framing::{Frame, Framed, Framing};
use super::limits::StreamLimits;

/// The SSE state of one session.
#[derive(Debug)]
pub(crate) struct SseParser {
    line: Vec<u8>,
    after_cr: bool,
    event: Option<String>,
    data: String,
    has_data: bool,
    /// The cap of a line and of an event's data.
    limit: usize,
    /// A cap was exceeded: nothing more is read.
    over: bool,
}

impl Default for SseParser {
    fn default() -> Self {
        Self {
            line: Vec::new(),
            after_cr: false,
            event: None,
            data: String::new(),
            has_data: false,
            limit: StreamLimits::default().get(Limit::LineBytes),
            over: false,
        }
    }
}

impl Framing for SseParser {
    fn feed(&mut self, bytes: &[u8], out: &mut Vec<Framed>) {
        let mut rest = bytes;
        while !rest.is_empty() && !self.over {
            if std::mem::take(&mut self.after_cr)
                && let [b'\n', tail @ ..] = rest
            {
                rest = tail;
                continue;
            }
            // Copy up to the line's end at once rather than byte by byte.
            let end = rest.iter().position(|&byte| byte == b'\n' || byte == b'\r');
            let (line, terminator) = rest.split_at(end.unwrap_or(rest.len()));
            if self.line.len().saturating_add(line.len()) > self.limit {
                self.overflow(out);
                return;
            }
            self.line.extend_from_slice(line);
            if end.is_none() {
                return;
            }
            self.end_line(out);
            self.after_cr = terminator.first() == Some(&b'\r');
            rest = terminator.get(1..).unwrap_or_default();
        }
    }

    fn limit_lines(&mut self, bytes: usize) {
        self.limit = bytes;
    }

    /// The input ended: a last line without its terminator and an event without its blank
    /// line are still dispatched (servers and proxies cut the final blank line).
    fn finish(&mut self, out: &mut Vec<Framed>) {
        if self.over {
            return;
        }
        if !self.line.is_empty() {
            self.end_line(out);
        }
        self.dispatch(out);
    }
}

impl SseParser {
    /// Gives up on the stream: what is buffered is dropped and nothing more is read.
    fn overflow(&mut self, out: &mut Vec<Framed>) {
        self.over = true;
        self.line = Vec::new();
        self.data = String::new();
        self.has_data = false;
        out.push(Err(Problem::LimitExceeded { limit: Limit::LineBytes, value: self.limit }));
    }

    /// Handles the buffered line; its buffer is kept for the next line on every path (a blank
    /// line ends every event, so dropping it there would regrow the buffer for each event).
    fn end_line(&mut self, out: &mut Vec<Framed>) {
        let mut line = std::mem::take(&mut self.line);
        self.field(&line, out);
        line.clear();
        self.line = line;
    }

    fn field(&mut self, line: &[u8], out: &mut Vec<Framed>) {
        let Ok(text) = std::str::from_utf8(line) else {
            out.push(Err(Problem::InvalidUtf8));
            return;
        };
        if text.is_empty() {
            self.dispatch(out);
            return;
        }
        if text.starts_with(':') {
            return;
        }
        let (field, value) = match text.split_once(':') {
            Some((field, value)) => (field, value.strip_prefix(' ').unwrap_or(value)),
            None => (text, ""),
        };
        match field {
            "data" => {
                if self.data.len().saturating_add(value.len()).saturating_add(1) > self.limit {
                    self.overflow(out);
                    return;
                }
                if self.has_data {
                    self.data.push('\n');
                }
                self.data.push_str(value);
                self.has_data = true;
            }
            "event" => self.event = Some(value.to_owned()),
            _ => {}
        }
    }

    fn dispatch(&mut self, out: &mut Vec<Framed>) {
        if self.has_data {
            out.push(Ok(Frame { event: self.event.take(), data: std::mem::take(&mut self.data) }));
        }
        self.event = None;
        self.has_data = false;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frames(chunks: &[&[u8]]) -> Vec<Frame> {
        let mut parser = SseParser::default();
        let mut out = Vec::new();
        for chunk in chunks {
            parser.feed(chunk, &mut out);
        }
        parser.finish(&mut out);
        out.into_iter().map(|framed| framed.expect("no problem")).collect()
    }

    #[test]
    fn crlf_comments_multiline_and_split_crlf() {
        let got = frames(&[b": keep-alive\r\nevent: a\r\ndata: one\r", b"\ndata:two\r\n\r\n"]);
        assert_eq!(got, vec![Frame { event: Some("a".into()), data: "one\ntwo".into() }]);
    }

    #[test]
    fn lone_cr_and_missing_final_blank_line() {
        let got = frames(&[b"data: x\r\rdata: y"]);
        assert_eq!(got.len(), 2);
        assert_eq!(got[1].data, "y");
    }

    #[test]
    fn every_split_point_gives_the_same_frames() {
        let text: &[u8] = b"event: a\r\ndata: one\r\rdata: two\n\n: c\ndata: caf\xc3\xa9\r\n\r\n";
        let whole = frames(&[text]);
        assert_eq!(whole.len(), 3);
        for split in 0..=text.len() {
            let (head, tail) = text.split_at(split);
            assert_eq!(frames(&[head, tail]), whole, "split at {split}");
        }
        let bytes: Vec<&[u8]> = text.chunks(1).collect();
        assert_eq!(frames(&bytes), whole);
    }

    #[test]
    fn multibyte_split() {
        let text = "data: caf\u{e9} \u{1f600}\n\n".as_bytes();
        let chunks: Vec<&[u8]> = text.chunks(1).collect();
        assert_eq!(frames(&chunks)[0].data, "caf\u{e9} \u{1f600}");
    }
}
