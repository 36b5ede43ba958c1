//! The allowed subset, checked on JSON Schema that arrives at run time (tools imported from
//! elsewhere). Compile-time schemas are in the subset by construction.

use std::fmt;

use serde_json::{Map, Value};

/// Keywords a schema node may use. Everything else is refused, so a construct providers reject
/// (`oneOf`, `anyOf`, `allOf`, `not`, `if`/`then`/`else`, `patternProperties`, `$ref`, ...)
/// never reaches a model.
const ALLOWED: &[&str] = &[
    "type",
    "description",
    "title",
    "enum",
    "default",
    "examples",
    "format",
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "minLength",
    "maxLength",
    "pattern",
    "items",
    "minItems",
    "maxItems",
    "uniqueItems",
    "properties",
    "required",
    "additionalProperties",
    "$schema",
    "$id",
    "$comment",
];

const TYPES: &[&str] = &["boolean", "integer", "number", "string", "array", "object", "null"];

/// A run-time schema that leaves the allowed subset: where, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SubsetError {
    pointer: String,
    reason: String,
}

impl SubsetError {
    /// JSON pointer to the offending keyword or node within the schema.
    #[must_use]
    pub fn pointer(&self) -> &str {
        &self.pointer
    }

    /// Why it is outside the subset.
    #[must_use]
    pub fn reason(&self) -> &str {
        &self.reason
    }
}

impl fmt::Display for SubsetError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let pointer = if self.pointer.is_empty() { "/" } else { &self.pointer };
        write!(f, "{pointer}: {}", self.reason)
    }
}

impl std::error::Error for SubsetError {}

/// Checks that a JSON Schema stays inside the subset `#[tool]` schemas use, that its root is an
/// object schema (a tool's arguments are an object), and that no property at any depth is a
/// connection id (`connectionId`, `connection_id`, ...: the rule `#[tool]` applies at compile
/// time). Reports the first offending place.
///
/// ```
/// use serde_json::json;
/// use tool_runtime::schema::check_subset;
///
/// assert!(check_subset(&json!({"type": "object", "properties": {"q": {"type": "string"}}})).is_ok());
/// let error = check_subset(&json!({
///     "type": "object",
///     "properties": {"id": {"anyOf": [{"type": "string"}, {"type": "integer"}]}}
/// }))
/// .unwrap_err();
/// assert_eq!(error.pointer(), "/properties/id/anyOf");
///
/// // Whatever its source, no schema may carry a connection id, however it is spelt.
/// let error = check_subset(&json!({
///     "type": "object",
///     "properties": {"target": {"type": "object", "properties": {"connection_id": {"type": "string"}}}}
/// }))
/// .unwrap_err();
/// assert_eq!(error.pointer(), "/properties/target/properties/connection_id");
/// ```
///
/// # Errors
///
/// [`SubsetError`] naming the first construct outside the subset.
pub fn check_subset(schema: &Value) -> Result<(), SubsetError> {
    let map = object_root(schema)?;
    let mut pointer = String::new();
    check_node(map, &mut pointer, 0)
}

/// The root of a tool's schema, which must be an object schema (a tool's arguments are an
/// object).
fn object_root(schema: &Value) -> Result<&Map<String, Value>, SubsetError> {
    let Value::Object(map) = schema else {
        return Err(error(String::new(), "a tool's schema must be a JSON object"));
    };
    if !matches!(map.get("type"), Some(Value::String(kind)) if kind == "object") {
        return Err(error(
            "/type".to_owned(),
            "a tool's arguments must be an object: `\"type\": \"object\"`",
        ));
    }
    Ok(map)
}

/// Checks a schema that may use all of JSON Schema 2020-12 (a tool served to MCP clients
/// only): its root is an object schema, no property anywhere in it (its `$defs`, its branches)
/// is a connection id, and it nests at most 32 levels deep. Reports the first offending place.
#[cfg(feature = "dynamic")]
pub(crate) fn check_object_root(schema: &Value) -> Result<(), SubsetError> {
    object_root(schema)?;
    no_connection_ids(schema, &mut String::new(), 0)
}

/// Walks every value of a 2020-12 schema for `properties` that name a connection id.
#[cfg(feature = "dynamic")]
fn no_connection_ids(value: &Value, pointer: &mut String, depth: usize) -> Result<(), SubsetError> {
    if depth > MAX_DEPTH {
        return Err(error(pointer.clone(), format!("nested deeper than {MAX_DEPTH} levels")));
    }
    let base = pointer.len();
    match value {
        Value::Object(map) => {
            if let Some(Value::Object(properties)) = map.get("properties")
                && let Some(name) =
                    properties.keys().find(|name| tool_rules::is_connection_id(name))
            {
                return Err(error(
                    format!("{pointer}/properties/{}", escape(name)),
                    "a connection id property: connections travel in the invocation context, never in a tool's arguments or results",
                ));
            }
            for (key, child) in map {
                pointer.push('/');
                pointer.push_str(&escape(key));
                no_connection_ids(child, pointer, depth + 1)?;
                pointer.truncate(base);
            }
        }
        Value::Array(items) => {
            for (index, child) in items.iter().enumerate() {
                pointer.push('/');
                pointer.push_str(&index.to_string());
                no_connection_ids(child, pointer, depth + 1)?;
                pointer.truncate(base);
            }
        }
        _ => {}
    }
    Ok(())
}

/// Whether an input schema lets arguments it does not describe through, at any depth: an
/// object (the arguments themselves, or any object inside them) without `properties`, or not
/// `"additionalProperties": false`.
#[cfg(feature = "dynamic")]
pub(crate) fn is_open(schema: &Map<String, Value>) -> bool {
    open_object(schema) || open_inside(schema, 0)
}

#[cfg(feature = "dynamic")]
fn open_object(node: &Map<String, Value>) -> bool {
    !node.contains_key("properties")
        || node.get("additionalProperties") != Some(&Value::Bool(false))
}

/// Whether a schema below `node` is an open object. Deeper than the subset check lets a
/// schema go counts as open.
#[cfg(feature = "dynamic")]
fn open_inside(node: &Map<String, Value>, depth: usize) -> bool {
    const DEEPEST: usize = 64;
    let properties =
        node.get("properties").and_then(Value::as_object).into_iter().flat_map(|p| p.values());
    let branches = ["anyOf", "oneOf", "allOf"]
        .into_iter()
        .filter_map(|key| node.get(key).and_then(Value::as_array))
        .flatten();
    let mut children =
        properties.chain(node.get("items")).chain(branches).filter_map(Value::as_object);
    children.any(|child| {
        if depth >= DEEPEST {
            return true;
        }
        let object = child.contains_key("properties")
            || match child.get("type") {
                Some(Value::String(kind)) => kind == "object",
                Some(Value::Array(kinds)) => kinds.iter().any(|kind| kind == "object"),
                _ => false,
            };
        (object && open_object(child)) || open_inside(child, depth + 1)
    })
}

fn error(pointer: String, reason: impl Into<String>) -> SubsetError {
    SubsetError { pointer, reason: reason.into() }
}

fn escape(segment: &str) -> String {
    segment.replace('~', "~0").replace('/', "~1")
}

const MAX_DEPTH: usize = 32;

fn check_node(
    node: &Map<String, Value>,
    pointer: &mut String,
    depth: usize,
) -> Result<(), SubsetError> {
    if depth > MAX_DEPTH {
        return Err(error(pointer.clone(), format!("nested deeper than {MAX_DEPTH} levels")));
    }
    for key in node.keys() {
        if !ALLOWED.contains(&key.as_str()) {
            let why = match key.as_str() {
                "oneOf" | "anyOf" | "allOf" | "not" => {
                    "unions and negations are outside the subset providers accept"
                }
                "if" | "then" | "else" => "conditional schemas are outside the subset",
                "patternProperties" => "open maps are outside the subset",
                "$ref" | "$defs" | "definitions" | "$dynamicRef" => {
                    "references are outside the subset; inline the schema"
                }
                "const" => "`const` is outside the subset; use a one-value `enum`",
                _ => "this keyword is outside the subset",
            };
            return Err(error(format!("{pointer}/{}", escape(key)), format!("`{key}`: {why}")));
        }
    }
    let kinds = types(node, pointer)?;
    let base = pointer.len();
    if let Some(Value::Array(values)) = node.get("enum") {
        let kind = kinds.iter().find(|kind| *kind != "null").map(String::as_str);
        for (at, value) in values.iter().enumerate() {
            if let Some(why) = enum_value_problem(value, kind) {
                return Err(error(format!("{pointer}/enum/{at}"), why));
            }
        }
    } else if node.contains_key("enum") {
        return Err(error(format!("{pointer}/enum"), "`enum` must be an array"));
    }
    match node.get("items") {
        None => {}
        Some(Value::Object(items)) => {
            pointer.push_str("/items");
            check_node(items, pointer, depth + 1)?;
            pointer.truncate(base);
        }
        Some(_) => {
            return Err(error(
                format!("{pointer}/items"),
                "`items` must be one schema object (tuples are outside the subset)",
            ));
        }
    }
    match node.get("properties") {
        None => {}
        Some(Value::Object(properties)) => {
            for (name, property) in properties {
                pointer.push_str("/properties/");
                pointer.push_str(&escape(name));
                if tool_rules::is_connection_id(name) {
                    return Err(error(
                        pointer.clone(),
                        "a connection id property: connections travel in the invocation context, never in a tool's arguments or results",
                    ));
                }
                match property {
                    Value::Object(property) => check_node(property, pointer, depth + 1)?,
                    _ => {
                        return Err(error(
                            pointer.clone(),
                            "a property's schema must be an object",
                        ));
                    }
                }
                pointer.truncate(base);
            }
        }
        Some(_) => {
            return Err(error(format!("{pointer}/properties"), "`properties` must be an object"));
        }
    }
    match node.get("additionalProperties") {
        None | Some(Value::Bool(_)) => {}
        Some(_) => {
            return Err(error(
                format!("{pointer}/additionalProperties"),
                "a schema for additional properties is an open map, outside the subset; only `false` or `true` is accepted",
            ));
        }
    }
    if let Some(required) = node.get("required") {
        let names = required.as_array().filter(|names| names.iter().all(Value::is_string));
        if names.is_none() {
            return Err(error(
                format!("{pointer}/required"),
                "`required` must be an array of property names",
            ));
        }
    }
    if kinds.is_empty() && (node.contains_key("properties") || node.contains_key("items")) {
        return Err(error(
            format!("{pointer}/type"),
            "a schema with `properties` or `items` must say its `type`",
        ));
    }
    Ok(())
}

/// Why `value` cannot be a value of an `enum` on a node of type `kind` (`None` for a node
/// without a type): enum values are scalars (strings, integers, numbers, booleans, or null,
/// which any enum may list) of the node's type, so every provider can carry them and a value
/// the model picks from the list can pass validation.
fn enum_value_problem(value: &Value, kind: Option<&str>) -> Option<String> {
    let fits = match value {
        Value::Null => return None,
        Value::Array(_) | Value::Object(_) => {
            return Some(
                "enum values must be strings, numbers, booleans or null; objects and arrays are outside the subset"
                    .to_owned(),
            );
        }
        Value::String(_) => kind.is_none_or(|kind| kind == "string"),
        Value::Bool(_) => kind.is_none_or(|kind| kind == "boolean"),
        Value::Number(number) => match kind {
            None | Some("number") => true,
            Some("integer") => {
                number.is_i64()
                    || number.is_u64()
                    || number.as_f64().is_some_and(|value| value.fract() == 0.0)
            }
            Some(_) => false,
        },
    };
    (!fits).then(|| {
        let kind = kind.unwrap_or_default();
        format!("the enum value {value} is not of the node's type `{kind}`, so no value could both be picked from the list and pass validation")
    })
}

/// The node's types: one name, or one name and `"null"`.
fn types(node: &Map<String, Value>, pointer: &str) -> Result<Vec<String>, SubsetError> {
    let names: Vec<&str> = match node.get("type") {
        None => return Ok(Vec::new()),
        Some(Value::String(name)) => vec![name.as_str()],
        Some(Value::Array(names)) => names.iter().filter_map(Value::as_str).collect(),
        Some(_) => {
            return Err(error(
                format!("{pointer}/type"),
                "`type` must be a string or an array of strings",
            ));
        }
    };
    if let Some(bad) = names.iter().find(|name| !TYPES.contains(name)) {
        return Err(error(format!("{pointer}/type"), format!("unknown type `{bad}`")));
    }
    let non_null = names.iter().filter(|name| **name != "null").count();
    if non_null > 1 {
        return Err(error(
            format!("{pointer}/type"),
            "a union of several types is outside the subset; only one type, optionally with `null`, is accepted",
        ));
    }
    Ok(names.into_iter().map(str::to_owned).collect())
}
