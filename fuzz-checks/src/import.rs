//! MCP tool-schema import: the subset check and validator construction on arbitrary JSON.
//!
//! An imported tool's schemas come from an untrusted server. The input is JSON text; when it
//! parses, it is offered as an input schema and as an output schema to
//! [`DynamicTool::builder`], which is what the MCP import does with a server's `tools/list`.

use serde_json::Value;
use tool_runtime::runtime::{DynamicTool, DynamicToolError};
use tool_runtime::schema::{check_subset, parse_json};

/// Keywords outside the subset: a schema that [`check_subset`] accepts holds none of them.
const FORBIDDEN: &[&str] = &[
    "$ref",
    "$defs",
    "definitions",
    "oneOf",
    "anyOf",
    "allOf",
    "not",
    "if",
    "then",
    "else",
    "patternProperties",
];

/// The subset check and tool construction agree and never panic.
///
/// When [`check_subset`] accepts the value, no schema node in it uses a forbidden keyword, and
/// building a tool with it fails, if at all, only because the `jsonschema` crate finds it
/// invalid; when the check refuses it, the build refuses it for the same reason.
///
/// # Panics
///
/// When that does not hold, or when the runtime panics.
pub fn check(data: &[u8]) {
    let Ok(schema) = parse_json(data) else { return };
    let subset = check_subset(&schema);
    if subset.is_ok() {
        assert_no_forbidden(&schema, "");
    } else if let Err(error) = &subset {
        assert!(error.reason().len() <= 4096 && error.pointer().len() <= 4096, "{error}");
    }
    let built = DynamicTool::builder("fuzz__imported", "", schema.clone()).build(noop);
    match (&subset, built) {
        (Ok(()), Ok(_) | Err(DynamicToolError::InvalidSchema(_))) => {}
        (Err(expected), Err(DynamicToolError::InputSchema(error))) => {
            assert_eq!(expected, &error, "the build refused for another reason");
        }
        (subset, built) => panic!("subset check {subset:?} but the build gave {:?}", built.err()),
    }
    let output = DynamicTool::builder("fuzz__imported", "", serde_json::json!({"type": "object"}))
        .output_schema(schema)
        .build(noop);
    match (&subset, output) {
        (Ok(()), Ok(_) | Err(DynamicToolError::InvalidSchema(_)))
        | (Err(_), Err(DynamicToolError::OutputSchema(_))) => {}
        (subset, built) => {
            panic!("subset check {subset:?} but the output build gave {:?}", built.err())
        }
    }
}

async fn noop(
    _: Value,
    _: tool_runtime::runtime::ToolInvocationContext,
    _: tool_runtime::runtime::ToolCapabilities,
) -> Result<Value, tool_runtime::runtime::ToolError> {
    Ok(Value::Null)
}

/// Walks schema positions (not property names) and refuses forbidden keywords.
fn assert_no_forbidden(schema: &Value, at: &str) {
    let Value::Object(node) = schema else { return };
    for keyword in FORBIDDEN {
        assert!(!node.contains_key(*keyword), "the subset check let `{keyword}` through at `{at}`");
    }
    if let Some(Value::Object(properties)) = node.get("properties") {
        for (name, child) in properties {
            assert_no_forbidden(child, &format!("{at}/properties/{name}"));
        }
    }
    for key in ["items", "additionalProperties", "contains"] {
        if let Some(child) = node.get(key) {
            assert_no_forbidden(child, &format!("{at}/{key}"));
        }
    }
    if let Some(Value::Array(items)) = node.get("prefixItems") {
        for (index, child) in items.iter().enumerate() {
            assert_no_forbidden(child, &format!("{at}/prefixItems/{index}"));
        }
    }
}
