//! What a served call answers: the `outputSchema` a tool is served with, and the result of a
//! call that ended as MCP content blocks and `structuredContent`.

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as BASE64;
use rmcp::model::{CallToolResponse, CallToolResult, ContentBlock, JsonObject, ResourceContents};
use serde_json::{Value, json};

use crate::content::{Part, ResourceBody, ToolOutput};
use crate::runtime::CallOutcome;
use crate::spec::ToolSpec;

/// How `structuredContent` relates to the structured value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Shape {
    /// The value is an object: sent as it is.
    Object,
    /// The value is anything else: sent as `{"result": value}`.
    Wrapped,
}

/// How `structuredContent` is shaped for `spec`, or `None` when no output schema is served
/// (see [`served_output`]). Read off the spec's kept schema, rendered once per tool: a call
/// renders nothing.
fn served_shape(spec: &ToolSpec) -> Option<Shape> {
    spec.kept_output_schema().map(shape_of)
}

/// `Object` for a schema of an object, `Wrapped` for any other.
fn shape_of(kept: &Value) -> Shape {
    if kept.get("type").and_then(Value::as_str) == Some("object") {
        Shape::Object
    } else {
        Shape::Wrapped
    }
}

/// The `outputSchema` served for `spec` and how `structuredContent` is shaped, or `None` when
/// no schema is served: the tool has none, or redaction keeps no field a schema could name.
pub(super) fn served_output(spec: &ToolSpec) -> Option<(JsonObject, Shape)> {
    let served = spec.kept_output_schema()?.clone();
    if shape_of(&served) == Shape::Object {
        return Some((object(served), Shape::Object));
    }
    let wrapped = json!({
        "type": "object",
        "properties": {"result": served},
        "required": ["result"],
        "additionalProperties": false
    });
    Some((object(wrapped), Shape::Wrapped))
}

pub(super) fn object(value: Value) -> JsonObject {
    match value {
        Value::Object(map) => map,
        _ => JsonObject::new(),
    }
}

/// The complete result of a call that ended: done or failed.
pub(super) fn complete(outcome: CallOutcome, spec: &ToolSpec) -> CallToolResponse {
    result_of(outcome, spec).into()
}

/// The result `tools/call` answers for a call that ended with `outcome`.
pub(super) fn result_of(outcome: CallOutcome, spec: &ToolSpec) -> CallToolResult {
    match outcome {
        CallOutcome::Done(output) => served_result(output, served_shape(spec)),
        CallOutcome::Failed(error) => {
            CallToolResult::error(vec![ContentBlock::text(error.message)])
        }
        CallOutcome::Waiting(waiting) => {
            CallToolResult::error(vec![ContentBlock::text(waiting.message)])
        }
    }
}

/// A successful call's result: its parts as content blocks, in order, and `structuredContent`
/// shaped as the served output schema says (`None`: no schema served, none sent).
fn served_result(output: ToolOutput, shape: Option<Shape>) -> CallToolResult {
    let blocks = output.parts().iter().map(content_block).collect();
    let mut result = CallToolResult::success(blocks);
    // Moved out of the output, not copied: the blocks above are made already.
    let (structured, _) = output.into_structured_and_details();
    result.structured_content = match (shape, structured) {
        (Some(Shape::Object), Some(value)) => Some(value),
        (Some(Shape::Wrapped), Some(value)) => Some(json!({"result": value})),
        _ => None,
    };
    result
}

/// One part as an MCP content block; bytes are base64, as MCP carries them.
fn content_block(part: &Part) -> ContentBlock {
    match part {
        Part::Text(text) => ContentBlock::text(text.clone()),
        Part::Image(media) => ContentBlock::image(BASE64.encode(&media.data), &media.mime_type),
        Part::Audio(media) => ContentBlock::audio(BASE64.encode(&media.data), &media.mime_type),
        Part::Resource(resource) => {
            let (uri, mime_type) = (resource.uri.clone(), resource.mime_type.clone());
            ContentBlock::resource(match &resource.body {
                ResourceBody::Text(text) => ResourceContents::TextResourceContents {
                    uri,
                    mime_type,
                    text: text.clone(),
                    meta: None,
                },
                ResourceBody::Bytes(bytes) => ResourceContents::BlobResourceContents {
                    uri,
                    mime_type,
                    blob: BASE64.encode(bytes),
                    meta: None,
                },
            })
        }
        Part::ResourceLink(link) => {
            let mut resource = rmcp::model::Resource::new(&link.uri, &link.name);
            resource.mime_type.clone_from(&link.mime_type);
            resource.description.clone_from(&link.description);
            ContentBlock::resource_link(resource)
        }
        Part::Json(Value::String(text)) => ContentBlock::text(text.clone()),
        Part::Json(value) => ContentBlock::text(value.to_string()),
    }
}
