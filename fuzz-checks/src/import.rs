//! MCP tool-schema import: the subset check, validator construction and validation on
//! arbitrary JSON.
//!
//! An imported tool's schemas come from an untrusted server. The input is JSON text; when it
//! parses, it is offered as an input schema and as an output schema to
//! [`DynamicTool::builder`], which is what the MCP import does with a server's `tools/list`.
//! A tool that builds then validates values made from the schema itself (its `enum`, `const`,
//! `default` and `examples` values, its property names given a value) as arguments and as
//! output.

use serde_json::{Map, Value, json};
use tool_runtime::runtime::{Arguments, BoundToolRuntime, DynamicTool, DynamicToolError};
use tool_runtime::schema::{ArgumentsError, ValidationErrors, check_subset, parse_json};

/// A string the probe values hold: validation errors must never repeat a value (their
/// messages are masked), so this must not show in any of them, unless the schema holds it too
/// (an error may quote the schema: a `pattern`, an `enum`).
const MARKER: &str = "fuzz-value-5e1f";

/// The most probe values made from one schema (a schema may list many).
const MAX_PROBES: usize = 64;

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
    let built =
        DynamicTool::builder("fuzz__imported", "", schema.clone()).allow_open_schema().build(noop);
    let probes = probes(&schema);
    match (&subset, built) {
        (Ok(()), Ok(tool)) => check_arguments(&tool, &schema, &probes),
        (Ok(()), Err(DynamicToolError::InvalidSchema(_))) => {}
        (Err(expected), Err(DynamicToolError::InputSchema(error))) => {
            assert_eq!(expected, &error, "the build refused for another reason");
        }
        (subset, built) => panic!("subset check {subset:?} but the build gave {:?}", built.err()),
    }
    let output = DynamicTool::builder("fuzz__imported", "", json!({"type": "object"}))
        .allow_open_schema()
        .output_schema(schema.clone())
        .build(noop);
    match (&subset, output) {
        (Ok(()), Ok(tool)) => check_outputs(&tool, &schema, &probes),
        (Ok(()), Err(DynamicToolError::InvalidSchema(_)))
        | (Err(_), Err(DynamicToolError::OutputSchema(_))) => {}
        (subset, built) => {
            panic!("subset check {subset:?} but the output build gave {:?}", built.err())
        }
    }
}

/// Arguments are accepted exactly when the schema's own validator accepts them, and refusals
/// name no value.
fn check_arguments(tool: &DynamicTool, schema: &Value, probes: &[Value]) {
    agrees_with_oracle(schema, probes, "arguments", |probe| {
        match tool.arguments(Arguments::from(probe)) {
            Ok(_) => Ok(()),
            Err(ArgumentsError::Validation(errors)) => Err(errors),
            Err(error) => panic!("parsed arguments refused for another reason: {error}"),
        }
    });
}

/// The same for outputs.
fn check_outputs(tool: &DynamicTool, schema: &Value, probes: &[Value]) {
    agrees_with_oracle(schema, probes, "an output", |probe| tool.validate_output(probe));
}

/// `validate` accepts exactly the probes `jsonschema` accepts under `schema`, and its refusals
/// repeat no value.
fn agrees_with_oracle(
    schema: &Value,
    probes: &[Value],
    what: &str,
    validate: impl Fn(&Value) -> Result<(), ValidationErrors>,
) {
    // Compiled as the tool's validator was, so it compiles whenever the tool built.
    let Ok(oracle) = jsonschema::draft202012::new(schema) else { return };
    let masked = !schema.to_string().contains(MARKER);
    for probe in probes {
        match validate(probe) {
            Ok(()) => assert!(oracle.is_valid(probe), "accepted {what} the schema refuses"),
            Err(errors) => {
                assert!(!oracle.is_valid(probe), "refused {what} the schema accepts");
                assert_masked(&errors, masked);
            }
        }
    }
}

fn assert_masked(errors: &ValidationErrors, masked: bool) {
    assert!(!errors.is_empty(), "a refusal without errors");
    for error in errors.iter().filter(|_| masked) {
        assert!(!error.message().contains(MARKER), "an error repeats the value: {error}");
    }
}

/// Values to validate, made from the schema: the values it names (`enum`, `const`,
/// `default`, `examples`) at any depth, an object giving each property the marker string, and
/// some of every JSON type.
fn probes(schema: &Value) -> Vec<Value> {
    let mut probes = vec![
        Value::Null,
        json!(true),
        json!(0),
        json!(-1.5),
        json!(MARKER),
        json!([MARKER, 1]),
        json!({}),
        json!({ "k": MARKER }),
    ];
    let mut marked = Map::new();
    named_values(schema, &mut probes, &mut marked, 0);
    probes.push(Value::Object(marked));
    probes.truncate(MAX_PROBES);
    probes
}

fn named_values(
    node: &Value,
    probes: &mut Vec<Value>,
    marked: &mut Map<String, Value>,
    depth: u32,
) {
    const DEEPEST: u32 = 32;
    let Value::Object(node) = node else { return };
    if depth > DEEPEST || probes.len() >= MAX_PROBES {
        return;
    }
    for key in ["const", "default"] {
        probes.extend(node.get(key).cloned());
    }
    for key in ["enum", "examples"] {
        if let Some(Value::Array(values)) = node.get(key) {
            probes.extend(values.iter().take(MAX_PROBES).cloned());
        }
    }
    if let Some(Value::Object(properties)) = node.get("properties") {
        for (name, child) in properties {
            if depth == 0 {
                marked.insert(name.clone(), json!(MARKER));
            }
            named_values(child, probes, &mut Map::new(), depth + 1);
        }
    }
    for key in ["items", "additionalProperties", "contains"] {
        if let Some(child) = node.get(key) {
            named_values(child, probes, &mut Map::new(), depth + 1);
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
