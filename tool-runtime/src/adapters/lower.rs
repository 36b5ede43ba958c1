//! Lowering: rewriting an input schema into the dialect a provider accepts. Total, because the
//! schema subset has no unions or references. A constraint a dialect cannot carry is moved into
//! the description (`"at most 200 characters"`), where the model still reads it; the runner's
//! validator keeps enforcing the original schema.
//!
//! - OpenAI strict: every property required, the optional ones made nullable;
//!   `minLength`/`maxLength`/`uniqueItems` and formats outside OpenAI's list become hints.
//! - Anthropic strict: optional properties stay out of `required`; numeric bounds, string
//!   lengths, `maxItems`, `minItems` above 1, `uniqueItems` and unknown formats become hints.
//! - Gemini `parameters` (OpenAPI subset): one upper-case `type` plus `nullable`, string enums
//!   with `format: "enum"`, 64-bit counts as strings; no `additionalProperties`, `$schema` or
//!   `const`; exclusive bounds, `uniqueItems`, formats other than `date-time` and enums of
//!   integers, numbers or booleans (`"one of: 2, 4"`) become hints.

use std::fmt::Write as _;

use serde_json::{Map, Value};

/// String formats OpenAI strict mode accepts.
const OPENAI_FORMATS: &[&str] =
    &["date-time", "time", "date", "duration", "email", "hostname", "ipv4", "ipv6", "uuid"];

/// String formats Anthropic strict mode accepts.
const ANTHROPIC_FORMATS: &[&str] =
    &["date-time", "time", "date", "duration", "email", "hostname", "uri", "ipv4", "ipv6", "uuid"];

/// The hint that stands in for a dropped keyword.
fn hint(key: &str, value: &Value) -> Option<String> {
    let plural = if value.as_u64() == Some(1) { "" } else { "s" };
    let text = match key {
        "minLength" => format!("at least {value} character{plural}"),
        "maxLength" => format!("at most {value} character{plural}"),
        "minimum" => format!("at least {value}"),
        "maximum" => format!("at most {value}"),
        "exclusiveMinimum" => format!("greater than {value}"),
        "exclusiveMaximum" => format!("less than {value}"),
        "minItems" => format!("at least {value} item{plural}"),
        "maxItems" => format!("at most {value} item{plural}"),
        "uniqueItems" if value.as_bool() == Some(true) => "items must be unique".to_owned(),
        "format" => format!("format: {}", value.as_str().unwrap_or_default()),
        "enum" => {
            let values: Vec<String> =
                value.as_array().into_iter().flatten().map(Value::to_string).collect();
            format!("one of: {}", values.join(", "))
        }
        _ => return None,
    };
    Some(text)
}

/// Puts `hints` into the node's description, placed right after `type` when the node had none.
fn add_hints(node: Map<String, Value>, hints: &[String]) -> Map<String, Value> {
    if hints.is_empty() {
        return node;
    }
    let joined = hints.join(", ");
    let description = match node.get("description").and_then(Value::as_str) {
        Some(description) => {
            let mut text = description.trim_end().to_owned();
            let _ = write!(text, " ({joined})");
            text
        }
        None => joined,
    };
    let had_description = node.contains_key("description");
    let mut out = Map::new();
    for (key, value) in node {
        if key == "description" {
            out.insert(key, Value::String(description.clone()));
            continue;
        }
        let is_type = key == "type";
        out.insert(key, value);
        if is_type && !had_description {
            out.insert("description".to_owned(), Value::String(description.clone()));
        }
    }
    if !out.contains_key("description") {
        out.insert("description".to_owned(), Value::String(description));
    }
    out
}

/// The names in a node's `required`.
fn required_names(node: &Map<String, Value>) -> Vec<&str> {
    node.get("required")
        .and_then(Value::as_array)
        .map(|names| names.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default()
}

/// Whether a node's `type` admits `null`.
pub(crate) fn is_nullable(node: &Map<String, Value>) -> bool {
    match node.get("type") {
        Some(Value::Array(types)) => types.iter().any(|t| t == "null"),
        Some(Value::String(t)) => t == "null",
        _ => false,
    }
}

/// Makes a node accept `null` too: `"type": [T, "null"]`, and `null` listed in its `enum`.
fn make_nullable(node: &mut Map<String, Value>) {
    if is_nullable(node) {
        return;
    }
    if let Some(kind) = node.get_mut("type") {
        let single = std::mem::take(kind);
        *kind = Value::Array(vec![single, Value::String("null".to_owned())]);
    }
    if let Some(Value::Array(values)) = node.get_mut("enum")
        && !values.contains(&Value::Null)
    {
        values.push(Value::Null);
    }
}

fn as_map(value: &Value) -> Map<String, Value> {
    value.as_object().cloned().unwrap_or_default()
}

/// OpenAI strict mode.
pub(crate) fn openai_strict(schema: &Map<String, Value>) -> Map<String, Value> {
    openai_node(schema, false)
}

fn openai_node(node: &Map<String, Value>, optional: bool) -> Map<String, Value> {
    let mut hints = Vec::new();
    let mut out = Map::new();
    for (key, value) in node {
        match key.as_str() {
            "minLength" | "maxLength" | "uniqueItems" => hints.extend(hint(key, value)),
            "format" if !value.as_str().is_some_and(|f| OPENAI_FORMATS.contains(&f)) => {
                hints.extend(hint(key, value));
            }
            "properties" => {
                let required = required_names(node);
                let properties = value.as_object().map(|properties| {
                    properties
                        .iter()
                        .map(|(name, child)| {
                            let optional = !required.contains(&name.as_str());
                            (name.clone(), Value::Object(openai_node(&as_map(child), optional)))
                        })
                        .collect()
                });
                out.insert(key.clone(), Value::Object(properties.unwrap_or_default()));
            }
            "required" => {
                let all = node
                    .get("properties")
                    .and_then(Value::as_object)
                    .map(|properties| properties.keys().cloned().map(Value::String).collect())
                    .unwrap_or_default();
                out.insert(key.clone(), Value::Array(all));
            }
            "items" => {
                out.insert(key.clone(), Value::Object(openai_node(&as_map(value), false)));
            }
            _ => {
                out.insert(key.clone(), value.clone());
            }
        }
    }
    if optional {
        make_nullable(&mut out);
    }
    add_hints(out, &hints)
}

/// Anthropic strict mode.
pub(crate) fn anthropic_strict(schema: &Map<String, Value>) -> Map<String, Value> {
    let mut hints = Vec::new();
    let mut out = Map::new();
    for (key, value) in schema {
        match key.as_str() {
            "minimum" | "maximum" | "exclusiveMinimum" | "exclusiveMaximum" | "minLength"
            | "maxLength" | "maxItems" | "uniqueItems" => hints.extend(hint(key, value)),
            "minItems" if value.as_u64().is_some_and(|min| min > 1) => {
                hints.extend(hint(key, value));
            }
            "format" if !value.as_str().is_some_and(|f| ANTHROPIC_FORMATS.contains(&f)) => {
                hints.extend(hint(key, value));
            }
            "properties" => {
                let properties = value.as_object().map(|properties| {
                    properties
                        .iter()
                        .map(|(name, child)| {
                            (name.clone(), Value::Object(anthropic_strict(&as_map(child))))
                        })
                        .collect()
                });
                out.insert(key.clone(), Value::Object(properties.unwrap_or_default()));
            }
            "items" => {
                out.insert(key.clone(), Value::Object(anthropic_strict(&as_map(value))));
            }
            _ => {
                out.insert(key.clone(), value.clone());
            }
        }
    }
    add_hints(out, &hints)
}

/// The order Gemini schema keys are written in.
const GEMINI_ORDER: &[&str] = &[
    "type",
    "format",
    "description",
    "nullable",
    "enum",
    "minimum",
    "maximum",
    "minLength",
    "maxLength",
    "pattern",
    "items",
    "minItems",
    "maxItems",
    "properties",
    "required",
];

/// Gemini's OpenAPI subset (`parameters`).
pub(crate) fn gemini_openapi(schema: &Map<String, Value>) -> Map<String, Value> {
    let mut hints = Vec::new();
    let mut keys = Map::new();
    let mut nullable = false;
    for (key, value) in schema {
        match key.as_str() {
            "type" => {
                let types: Vec<&str> = match value {
                    Value::Array(types) => types.iter().filter_map(Value::as_str).collect(),
                    Value::String(kind) => vec![kind.as_str()],
                    _ => Vec::new(),
                };
                nullable |= types.contains(&"null");
                if let Some(kind) = types.iter().find(|kind| **kind != "null") {
                    keys.insert(key.clone(), Value::String(kind.to_ascii_uppercase()));
                }
            }
            "enum" => {
                let values = value.as_array().map(Vec::as_slice).unwrap_or_default();
                nullable |= values.contains(&Value::Null);
                let listed: Vec<Value> =
                    values.iter().filter(|value| !value.is_null()).cloned().collect();
                if listed.iter().all(Value::is_string) {
                    keys.insert(key.clone(), Value::Array(listed));
                    keys.insert("format".to_owned(), Value::String("enum".to_owned()));
                } else {
                    // Gemini's `enum` takes strings only: the model reads the values instead.
                    hints.extend(hint(key, &Value::Array(listed)));
                }
            }
            "format" if value == "date-time" => {
                keys.insert(key.clone(), value.clone());
            }
            "format" | "exclusiveMinimum" | "exclusiveMaximum" | "uniqueItems" => {
                hints.extend(hint(key, value));
            }
            "minLength" | "maxLength" | "minItems" | "maxItems" => {
                let count = value.as_u64().map_or_else(|| value.to_string(), |n| n.to_string());
                keys.insert(key.clone(), Value::String(count));
            }
            "description" | "minimum" | "maximum" | "pattern" => {
                keys.insert(key.clone(), value.clone());
            }
            "items" => {
                keys.insert(key.clone(), Value::Object(gemini_openapi(&as_map(value))));
            }
            "properties" => {
                let properties = value.as_object().map(|properties| {
                    properties
                        .iter()
                        .map(|(name, child)| {
                            (name.clone(), Value::Object(gemini_openapi(&as_map(child))))
                        })
                        .collect()
                });
                keys.insert(key.clone(), Value::Object(properties.unwrap_or_default()));
            }
            "required" if value.as_array().is_some_and(|names| !names.is_empty()) => {
                keys.insert(key.clone(), value.clone());
            }
            _ => {}
        }
    }
    if nullable {
        keys.insert("nullable".to_owned(), Value::Bool(true));
    }
    let mut out = Map::new();
    for key in GEMINI_ORDER {
        if let Some(value) = keys.remove(*key) {
            out.insert((*key).to_owned(), value);
        }
    }
    add_hints(out, &hints)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn map(value: Value) -> Map<String, Value> {
        value.as_object().cloned().unwrap_or_default()
    }

    #[test]
    fn openai_strict_requires_everything_and_nulls_the_optional() {
        let schema = map(json!({
            "type": "object",
            "properties": {
                "a": {"type": "string", "maxLength": 3},
                "b": {"type": "string", "enum": ["x", "y"]},
                "c": {"type": ["integer", "null"]}
            },
            "required": ["a"],
            "additionalProperties": false
        }));
        assert_eq!(
            Value::Object(openai_strict(&schema)),
            json!({
                "type": "object",
                "properties": {
                    "a": {"type": "string", "description": "at most 3 characters"},
                    "b": {"type": ["string", "null"], "enum": ["x", "y", null]},
                    "c": {"type": ["integer", "null"]}
                },
                "required": ["a", "b", "c"],
                "additionalProperties": false
            })
        );
    }

    #[test]
    fn gemini_uses_one_type_and_nullable() {
        let schema = map(json!({
            "type": ["string", "null"],
            "description": "Kind.",
            "enum": ["a", "b", null]
        }));
        assert_eq!(
            Value::Object(gemini_openapi(&schema)),
            json!({"type": "STRING", "format": "enum", "description": "Kind.", "nullable": true, "enum": ["a", "b"]})
        );
    }

    #[test]
    fn gemini_lowers_an_enum_of_other_scalars_into_the_description() {
        let schema = map(json!({"type": ["integer", "null"], "enum": [2, 4, null]}));
        assert_eq!(
            Value::Object(gemini_openapi(&schema)),
            json!({"type": "INTEGER", "description": "one of: 2, 4", "nullable": true})
        );
    }
}
