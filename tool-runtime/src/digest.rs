//! Digests: canonical JSON and the one hashing convention of the crate.
//!
//! Everything the crate binds by hash (a tool's [`schema_hash`](crate::spec::ToolSpec::schema_hash)
//! and [`spec_hash`](crate::spec::ToolSpec::spec_hash), the arguments of a deferred call, an
//! approval, a sealed run state, an imported MCP tool's pin) is hashed the same way:
//!
//! - a JSON value is written as its **canonical text**: compact, object keys sorted by their
//!   UTF-8 bytes, strings and numbers as `serde_json` writes them, so equal values hash equally
//!   whatever order their keys arrived in;
//! - a value is hashed as the lowercase hex SHA-256 of that text ([`json_hash`]);
//! - a tuple of several parts (an approval: run, tenant, actor, tool, spec hash, call id,
//!   arguments) is hashed as SHA-256 over each part's length (8 bytes, little-endian) followed
//!   by its bytes, so no two tuples share an encoding.
//!
//! This is a leaf: it imports no other module of the crate.
//!
//! ```
//! use serde_json::json;
//! use tool_runtime::digest::{arguments_hash, canonical_text};
//!
//! assert_eq!(canonical_text(&json!({"b": [1, {"d": 0, "c": 0}], "a": "x"})), r#"{"a":"x","b":[1,{"c":0,"d":0}]}"#);
//! assert_eq!(arguments_hash(&json!({"a": 1, "b": 2})), arguments_hash(&json!({"b": 2, "a": 1})));
//! ```

use std::fmt::Write as _;

use serde_json::Value;
use sha2::{Digest, Sha256};

/// Writes the canonical text of `value` (compact, object keys sorted) to `out`.
pub(crate) fn write_canonical(value: &Value, out: &mut String) {
    match value {
        Value::Object(map) => {
            let mut entries: Vec<_> = map.iter().collect();
            entries.sort_unstable_by(|a, b| a.0.cmp(b.0));
            out.push('{');
            for (at, (key, value)) in entries.into_iter().enumerate() {
                if at > 0 {
                    out.push(',');
                }
                write_string(key, out);
                out.push(':');
                write_canonical(value, out);
            }
            out.push('}');
        }
        Value::Array(items) => {
            out.push('[');
            for (at, item) in items.iter().enumerate() {
                if at > 0 {
                    out.push(',');
                }
                write_canonical(item, out);
            }
            out.push(']');
        }
        Value::String(text) => write_string(text, out),
        // `null`, booleans and numbers have one text each.
        other => {
            let _ = write!(out, "{other}");
        }
    }
}

/// A JSON string literal, escaped as `serde_json` escapes it.
fn write_string(text: &str, out: &mut String) {
    // Serialising a `str` to JSON cannot fail.
    if let Ok(literal) = serde_json::to_string(text) {
        out.push_str(&literal);
    }
}

/// The canonical JSON text of `value`: compact, object keys sorted.
///
/// ```
/// use serde_json::json;
/// use tool_runtime::digest::canonical_text;
///
/// assert_eq!(canonical_text(&json!({"z": null, "a": [true, 1.5, "é"]})), r#"{"a":[true,1.5,"é"],"z":null}"#);
/// ```
#[must_use]
pub fn canonical_text(value: &Value) -> String {
    let mut out = String::new();
    write_canonical(value, &mut out);
    out
}

/// Lowercase hex SHA-256 of `bytes`.
pub(crate) fn sha256_hex(bytes: &[u8]) -> String {
    hex(&Sha256::digest(bytes))
}

/// Lowercase hex of `bytes`.
pub(crate) fn hex(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len() * 2);
    for byte in bytes {
        // Writing to a String cannot fail.
        let _ = write!(out, "{byte:02x}");
    }
    out
}

/// Lowercase hex SHA-256 of the [canonical text](canonical_text) of `value`.
#[must_use]
pub fn json_hash(value: &Value) -> String {
    sha256_hex(canonical_text(value).as_bytes())
}

/// SHA-256 (lowercase hex) of the canonical JSON of a call's arguments: equal for equal
/// arguments whatever the order of their keys. A deferred call stores it beside its arguments.
///
/// ```
/// use serde_json::json;
/// use tool_runtime::digest::arguments_hash;
///
/// assert_eq!(arguments_hash(&json!({"a": 1, "b": 2})), arguments_hash(&json!({"b": 2, "a": 1})));
/// assert_ne!(arguments_hash(&json!({"a": 1})), arguments_hash(&json!({"a": 2})));
/// ```
#[must_use]
pub fn arguments_hash(arguments: &Value) -> String {
    json_hash(arguments)
}

/// The hash of a tuple of parts: SHA-256 over each part's length (8 bytes, little-endian) and
/// bytes, in order.
#[cfg(feature = "runner")]
pub(crate) fn parts_hash<'a>(parts: impl IntoIterator<Item = &'a str>) -> [u8; 32] {
    let mut hasher = Sha256::new();
    for part in parts {
        hasher.update((part.len() as u64).to_le_bytes());
        hasher.update(part.as_bytes());
    }
    hasher.finalize().into()
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn canonical_text_sorts_keys_at_every_depth_and_keeps_array_order() {
        let value = json!({"b": {"y": 1, "x": [3, 2, {"k": 1, "j": 2}]}, "a": null});
        assert_eq!(canonical_text(&value), r#"{"a":null,"b":{"x":[3,2,{"j":2,"k":1}],"y":1}}"#);
    }

    #[test]
    fn canonical_text_escapes_keys_and_strings_as_json() {
        let value = json!({"q\"uote": "line\nbreak\u{1}"});
        let text = canonical_text(&value);
        assert_eq!(text, r#"{"q\"uote":"line\nbreak\u0001"}"#);
        assert_eq!(serde_json::from_str::<Value>(&text).unwrap(), value);
    }

    #[test]
    #[cfg(feature = "runner")]
    fn tuples_with_the_same_concatenation_hash_apart() {
        assert_ne!(parts_hash(["ab", "c"]), parts_hash(["a", "bc"]));
        assert_eq!(parts_hash(["ab", "c"]), parts_hash(["ab", "c"]));
    }

    #[test]
    fn sha256_hex_is_the_known_digest() {
        assert_eq!(
            sha256_hex(b"abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
    }
}
