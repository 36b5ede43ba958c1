//! Text from an MCP server (error messages, names, schema keys, progress messages) on its way to
//! logs, errors and the application: control characters escaped, length capped.

use std::fmt::{self, Write as _};

/// The most characters of a server's error text kept in an error.
pub(super) const ERROR_CHARS: usize = 256;

/// Writes `text` with control characters escaped (`\n`, `\u{1b}`), cut to at most `max`
/// characters of output (then ending `...`): a hostile server can neither forge log lines nor
/// flood them.
pub(super) struct Capped<'a>(pub(super) &'a str, pub(super) usize);

impl fmt::Display for Capped<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let Self(text, max) = *self;
        let mut written = 0;
        for c in text.chars() {
            let escape = c.is_control().then(|| c.escape_debug());
            let width = escape.clone().map_or(1, Iterator::count);
            if written + width > max {
                return f.write_str("...");
            }
            written += width;
            match escape {
                Some(escape) => write!(f, "{escape}")?,
                None => f.write_char(c)?,
            }
        }
        Ok(())
    }
}

/// [`Capped`] as an owned string.
pub(super) fn capped(text: &str, max: usize) -> String {
    Capped(text, max).to_string()
}

#[cfg(test)]
mod tests {
    use super::capped;

    #[test]
    fn control_characters_are_escaped_and_length_capped() {
        assert_eq!(capped("a\nb\u{1b}[31m", 64), "a\\nb\\u{1b}[31m");
        assert_eq!(capped("ünïcödé \"quoted\"", 64), "ünïcödé \"quoted\"");
        assert_eq!(capped(&"x".repeat(1000), 10), format!("{}...", "x".repeat(10)));
        assert_eq!(capped("exactly", 7), "exactly");
        assert_eq!(capped("\u{1b}\u{1b}", 8), "\\u{1b}...", "escapes count as what they become");
    }
}
