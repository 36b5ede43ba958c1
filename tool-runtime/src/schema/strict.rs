//! The strict parse that validation and deserialisation share: one JSON value, no repeated
//! key, bounded nesting.

use std::fmt;

use serde::de::{self, DeserializeSeed, MapAccess, SeqAccess, Visitor};
use serde_json::map::Entry;
use serde_json::{Map, Number, Value};

/// Parses raw JSON strictly: a key repeated within one object is an error (so a second value
/// cannot hide behind the one that was validated), nesting 128 or more arrays and objects
/// deep is an error (never a stack overflow), and invalid UTF-8 is an error. The returned value
/// is what both validation and deserialisation read.
///
/// ```
/// use tool_runtime::schema::parse_json;
///
/// assert!(parse_json(br#"{"a": 1}"#).is_ok());
/// let error = parse_json(br#"{"a": 1, "a": 2}"#).unwrap_err();
/// assert_eq!(error.to_string(), "duplicate key `a` at line 1 column 12");
/// ```
///
/// # Errors
///
/// [`JsonError`] when the input is not exactly one JSON value.
pub fn parse_json(raw: &[u8]) -> Result<Value, JsonError> {
    let mut deserializer = serde_json::Deserializer::from_slice(raw);
    let value = StrictValue.deserialize(&mut deserializer).map_err(JsonError)?;
    deserializer.end().map_err(JsonError)?;
    Ok(value)
}

/// Raw arguments that are not a single JSON value (syntax, duplicate key, nesting, UTF-8).
///
/// Its message names the position and the kind of problem, never the raw input.
#[derive(Debug)]
pub struct JsonError(serde_json::Error);

impl fmt::Display for JsonError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&self.0, f)
    }
}

impl std::error::Error for JsonError {}

struct StrictValue;

impl<'de> DeserializeSeed<'de> for StrictValue {
    type Value = Value;

    fn deserialize<D: de::Deserializer<'de>>(self, deserializer: D) -> Result<Value, D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for StrictValue {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_bool<E>(self, value: bool) -> Result<Value, E> {
        Ok(Value::Bool(value))
    }

    fn visit_i64<E>(self, value: i64) -> Result<Value, E> {
        Ok(Value::Number(value.into()))
    }

    fn visit_u64<E>(self, value: u64) -> Result<Value, E> {
        Ok(Value::Number(value.into()))
    }

    fn visit_f64<E: de::Error>(self, value: f64) -> Result<Value, E> {
        Number::from_f64(value).map(Value::Number).ok_or_else(|| E::custom("number out of range"))
    }

    fn visit_str<E>(self, value: &str) -> Result<Value, E> {
        Ok(Value::String(value.to_owned()))
    }

    fn visit_string<E>(self, value: String) -> Result<Value, E> {
        Ok(Value::String(value))
    }

    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut items = Vec::with_capacity(seq.size_hint().unwrap_or(0).min(1024));
        while let Some(item) = seq.next_element_seed(StrictValue)? {
            items.push(item);
        }
        Ok(Value::Array(items))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut out = Map::new();
        while let Some(key) = map.next_key::<String>()? {
            // One hash per key: the entry both detects a repeat and takes the value.
            match out.entry(key) {
                Entry::Occupied(entry) => {
                    return Err(de::Error::custom(format_args!(
                        "duplicate key `{}`",
                        Shown(entry.key())
                    )));
                }
                Entry::Vacant(entry) => {
                    entry.insert(map.next_value_seed(StrictValue)?);
                }
            }
        }
        Ok(Value::Object(out))
    }
}

/// Shows a string from the caller (a key, a tool name), cut to 64 characters and escaped.
pub(crate) struct Shown<'a>(pub(crate) &'a str);

impl fmt::Display for Shown<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        const MAX: usize = 64;
        match self.0.char_indices().nth(MAX) {
            Some((end, _)) => write!(f, "{}...", self.0[..end].escape_debug()),
            None => write!(f, "{}", self.0.escape_debug()),
        }
    }
}

/// Text a peer chose (a tool's description, arguments, a result, a server's message) as it goes
/// into a span, an event or a log line: control characters and the Unicode controls that
/// reorder text (bidi overrides and isolates) escaped (`\n`, `\u{1b}`), and cut on a
/// character boundary once `max` bytes are written, with a marker that gives the text's length
/// (`... (1048593 bytes)`).
#[cfg(feature = "runner")]
pub(crate) struct Untrusted<'a> {
    pub(crate) text: &'a str,
    pub(crate) max: usize,
}

#[cfg(feature = "runner")]
impl fmt::Display for Untrusted<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        use fmt::Write as _;
        let mut written = 0;
        for c in self.text.chars() {
            let hidden =
                c.is_control() || matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}');
            let len = if hidden { c.escape_default().len() } else { c.len_utf8() };
            if written + len > self.max {
                return write!(f, "... ({} bytes)", self.text.len());
            }
            if hidden {
                write!(f, "{}", c.escape_default())?;
            } else {
                f.write_char(c)?;
            }
            written += len;
        }
        Ok(())
    }
}

#[cfg(all(test, feature = "runner"))]
mod tests {
    use super::Untrusted;

    fn shown(text: &str, max: usize) -> String {
        Untrusted { text, max }.to_string()
    }

    #[test]
    fn untrusted_text_is_escaped_and_cut_on_a_character_boundary() {
        assert_eq!(shown("plain text", 64), "plain text");
        assert_eq!(shown("a\nb\u{1b}[31m\u{202e}c", 64), r"a\nb\u{1b}[31m\u{202e}c");
        // `é` is two bytes: the cut never splits it, and the marker gives the whole length.
        assert_eq!(shown("ééé", 5), "éé... (6 bytes)");
        assert_eq!(shown("ééé", 6), "ééé");
        // An escape counts as the bytes it is written with.
        assert_eq!(shown("ab\n", 3), "ab... (3 bytes)");
        assert_eq!(shown("", 0), "");
    }
}
