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
