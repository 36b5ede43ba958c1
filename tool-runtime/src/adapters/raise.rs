//! Raising: undoing, on decoded arguments, what lowering changed about what a model may send.

use serde_json::{Map, Value};

use crate::schema::{Schema, SchemaKind};
use crate::spec::SpecSchema;

use crate::conversation::{CallArguments, Decoded, StreamEvent, ToolCall};
use crate::spec::ToolSpec;

use super::lower::is_nullable;
use super::session::StreamSession;

/// Rewrites decoded `arguments` so they validate against the tool's original `schema` again.
///
/// OpenAI strict mode makes every property required, so a property that may be absent but not
/// `null` (a `#[serde(default)]` field) is sent as `null` when the model leaves it out. Here
/// `null` for a property that is neither required nor nullable in the original schema means
/// "absent" and is removed, at every depth (nested objects, array items). Nothing else changes:
/// `null` stays where the original schema allows it, and values the schema rejects are left
/// for the validator to report. Whole numbers sent as floats (`5.0`, from providers that
/// speak protobuf `Struct`) are already accepted by validation and deserialisation.
///
/// ```
/// use serde_json::json;
/// use tool_runtime::adapters::raise_arguments;
/// use tool_runtime::prelude::*;
///
/// /// Search.
/// #[tool(name = "demo__search", effect = read_only, redact = ["hits"])]
/// struct Search {
///     query: String,
///     #[serde(default)]
///     limit: u8,
///     page: Option<u8>,
/// }
/// # #[derive(Serialize, ToolSchema)] struct Hits { hits: Vec<String> }
/// # impl Tool for Search {
/// #     type Output = Hits;
/// #     async fn run(self, _: &ToolInvocationContext, _: &ToolCapabilities) -> Result<Hits, ToolError> {
/// #         Ok(Hits { hits: vec![] })
/// #     }
/// # }
///
/// // What a model in OpenAI strict mode sends when it leaves `limit` and `page` out:
/// let mut args = json!({"query": "wire", "limit": null, "page": null});
/// raise_arguments(Search::spec().input_schema(), &mut args);
/// assert_eq!(args, json!({"query": "wire", "page": null}));
/// ```
pub fn raise_arguments(schema: &SpecSchema, arguments: &mut Value) {
    match schema {
        SpecSchema::Static(schema) => raise_static(schema, arguments),
        SpecSchema::Json(schema) => raise_json(schema, arguments),
    }
}

fn raise_static(schema: &Schema, value: &mut Value) {
    match (&schema.kind, value) {
        (SchemaKind::Object(object), Value::Object(map)) => {
            for property in object.properties {
                let absent = !property.required
                    && !property.schema.nullable
                    && map.get(property.name).is_some_and(Value::is_null);
                if absent {
                    map.shift_remove(property.name);
                } else if let Some(child) = map.get_mut(property.name) {
                    raise_static(property.schema, child);
                }
            }
        }
        (SchemaKind::Array(array), Value::Array(items)) => {
            for item in items {
                raise_static(array.items, item);
            }
        }
        _ => {}
    }
}

fn raise_json(schema: &Map<String, Value>, value: &mut Value) {
    match value {
        Value::Object(map) => {
            let Some(properties) = schema.get("properties").and_then(Value::as_object) else {
                return;
            };
            let required: Vec<&str> = schema
                .get("required")
                .and_then(Value::as_array)
                .map(|names| names.iter().filter_map(Value::as_str).collect())
                .unwrap_or_default();
            for (name, child_schema) in properties {
                let Some(child_schema) = child_schema.as_object() else {
                    continue;
                };
                let absent = !required.contains(&name.as_str())
                    && !is_nullable(child_schema)
                    && map.get(name).is_some_and(Value::is_null);
                if absent {
                    map.shift_remove(name);
                } else if let Some(child) = map.get_mut(name) {
                    raise_json(child_schema, child);
                }
            }
        }
        Value::Array(items) => {
            if let Some(item_schema) = schema.get("items").and_then(Value::as_object) {
                for item in items {
                    raise_json(item_schema, item);
                }
            }
        }
        _ => {}
    }
}

impl ToolCall {
    /// Raises the arguments when the call names one of `specs`.
    pub(crate) fn raise(&mut self, specs: &[&ToolSpec]) {
        if let Some(spec) = specs.iter().find(|spec| spec.name() == self.name)
            && let CallArguments::Parsed(value) = &mut self.arguments
        {
            raise_arguments(spec.input_schema(), value);
        }
    }
}

impl Decoded {
    /// Applies [`raise_arguments`] to every parsed call whose name is one of `specs`, so
    /// arguments lowered for a provider validate against the original schema again.
    ///
    /// [`Adapter::decode_for`](super::Adapter::decode_for) and
    /// [`Adapter::stream_for`](super::Adapter::stream_for) do this already; call it only on a
    /// response decoded without the specs.
    pub fn raise(&mut self, specs: &[&ToolSpec]) {
        for call in &mut self.calls {
            call.raise(specs);
        }
    }
}

/// A session whose calls are raised against the request's specs as they become ready and in the
/// final result (what [`Adapter::stream_for`](super::Adapter::stream_for) returns).
#[derive(Debug)]
pub(crate) struct RaisingSession<'s> {
    inner: Box<dyn StreamSession>,
    specs: &'s [&'s ToolSpec],
}

impl<'s> RaisingSession<'s> {
    pub(crate) fn new(inner: Box<dyn StreamSession>, specs: &'s [&'s ToolSpec]) -> Self {
        Self { inner, specs }
    }

    fn raised(&self, mut events: Vec<StreamEvent>) -> Vec<StreamEvent> {
        for event in &mut events {
            if let StreamEvent::CallReady { call, .. } = event {
                call.raise(self.specs);
            }
        }
        events
    }
}

impl StreamSession for RaisingSession<'_> {
    fn feed(&mut self, chunk: &[u8]) -> Vec<StreamEvent> {
        let events = self.inner.feed(chunk);
        self.raised(events)
    }

    fn close(&mut self) -> Vec<StreamEvent> {
        let events = self.inner.close();
        self.raised(events)
    }

    fn finish(&mut self) -> Decoded {
        let mut decoded = self.inner.finish();
        decoded.raise(self.specs);
        decoded
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use serde_json::json;

    use super::*;

    #[test]
    fn json_schemas_are_raised_at_every_depth() {
        let schema = json!({
            "type": "object",
            "properties": {
                "items": {"type": "array", "items": {
                    "type": "object",
                    "properties": {"a": {"type": "string"}, "b": {"type": ["string", "null"]}},
                    "required": [],
                    "additionalProperties": false
                }}
            },
            "required": [],
            "additionalProperties": false
        });
        let schema = SpecSchema::Json(Arc::new(schema.as_object().cloned().unwrap_or_default()));
        let mut args = json!({"items": [{"a": null, "b": null}], "other": null});
        raise_arguments(&schema, &mut args);
        assert_eq!(args, json!({"items": [{"b": null}], "other": null}));
    }
}
