//! Rendering the schema tree as JSON Schema, with a fixed key order.

use serde::{Serialize, Serializer};
use serde_json::{Map, Number, Value};

use super::{Schema, SchemaKind};

fn integer(value: i128) -> Value {
    if let Ok(value) = i64::try_from(value) {
        Value::Number(value.into())
    } else if let Ok(value) = u64::try_from(value) {
        Value::Number(value.into())
    } else {
        // Outside every bound a JSON number can carry; the closest representable value keeps
        // the schema meaningful.
        Value::Number(if value < 0 { i64::MIN.into() } else { u64::MAX.into() })
    }
}

fn number(value: f64) -> Value {
    Number::from_f64(value).map_or(Value::Null, Value::Number)
}

fn count(value: u64) -> Value {
    Value::Number(value.into())
}

impl Schema {
    /// Renders this schema as a JSON Schema object.
    ///
    /// Keys come in a fixed order (`type`, `description`, the kind's constraints, then for
    /// objects `properties`, `required`, `additionalProperties`), properties in declaration
    /// order, so the output is byte-for-byte stable.
    ///
    /// ```
    /// use tool_runtime::prelude::*;
    ///
    /// #[derive(Deserialize, ToolSchema)]
    /// struct Page {
    ///     /// 1-based page number.
    ///     number: u32,
    ///     size: Option<u8>,
    /// }
    ///
    /// assert_eq!(
    ///     serde_json::to_string(&Page::SCHEMA.to_json()).unwrap(),
    ///     r#"{"type":"object","properties":{"number":{"type":"integer","description":"1-based page number.","minimum":0,"maximum":4294967295},"size":{"type":["integer","null"],"minimum":0,"maximum":255}},"required":["number"],"additionalProperties":false}"#,
    /// );
    /// ```
    #[must_use]
    pub fn to_json(&self) -> Value {
        Value::Object(self.to_json_object())
    }

    /// Renders this schema as the map of a JSON Schema object (see [`Schema::to_json`]).
    #[must_use]
    pub fn to_json_object(&self) -> Map<String, Value> {
        let mut out = Map::new();
        let type_name = Value::String(self.type_name().to_owned());
        out.insert(
            "type".to_owned(),
            if self.nullable {
                Value::Array(vec![type_name, Value::String("null".to_owned())])
            } else {
                type_name
            },
        );
        if let Some(description) = self.description {
            out.insert("description".to_owned(), Value::String(description.to_owned()));
        }
        match self.kind {
            SchemaKind::Boolean => {}
            SchemaKind::Integer(int) => {
                if let Some(min) = int.minimum {
                    out.insert("minimum".to_owned(), integer(min));
                }
                if let Some(max) = int.maximum {
                    out.insert("maximum".to_owned(), integer(max));
                }
            }
            SchemaKind::Number(num) => {
                let bounds = [
                    ("minimum", num.minimum),
                    ("maximum", num.maximum),
                    ("exclusiveMinimum", num.exclusive_minimum),
                    ("exclusiveMaximum", num.exclusive_maximum),
                ];
                for (key, bound) in bounds {
                    if let Some(bound) = bound {
                        out.insert(key.to_owned(), number(bound));
                    }
                }
            }
            SchemaKind::String(string) => {
                if let Some(min) = string.min_length {
                    out.insert("minLength".to_owned(), count(min));
                }
                if let Some(max) = string.max_length {
                    out.insert("maxLength".to_owned(), count(max));
                }
                if let Some(pattern) = string.pattern {
                    out.insert("pattern".to_owned(), Value::String(pattern.to_owned()));
                }
                if let Some(format) = string.format {
                    out.insert("format".to_owned(), Value::String(format.to_owned()));
                }
            }
            SchemaKind::Enum(values) => {
                let mut list: Vec<Value> =
                    values.iter().map(|value| Value::String((*value).to_owned())).collect();
                // `null` must be listed too, or `enum` would reject the `null` that `type` allows.
                if self.nullable {
                    list.push(Value::Null);
                }
                out.insert("enum".to_owned(), Value::Array(list));
            }
            SchemaKind::Array(array) => {
                out.insert("items".to_owned(), array.items.to_json());
                if let Some(min) = array.min_items {
                    out.insert("minItems".to_owned(), count(min));
                }
                if let Some(max) = array.max_items {
                    out.insert("maxItems".to_owned(), count(max));
                }
                if array.unique_items {
                    out.insert("uniqueItems".to_owned(), Value::Bool(true));
                }
            }
            SchemaKind::Object(object) => {
                let properties = object
                    .properties
                    .iter()
                    .map(|property| (property.name.to_owned(), property.schema.to_json()))
                    .collect();
                let required = object
                    .properties
                    .iter()
                    .filter(|property| property.required)
                    .map(|property| Value::String(property.name.to_owned()))
                    .collect();
                out.insert("properties".to_owned(), Value::Object(properties));
                out.insert("required".to_owned(), Value::Array(required));
                out.insert("additionalProperties".to_owned(), Value::Bool(false));
            }
        }
        out
    }
}

impl Serialize for Schema {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.to_json().serialize(serializer)
    }
}
