//! Typed declarations of tools for code mode: a model that writes a program calling the tools
//! (Anthropic's programmatic tool calling, OpenAI's programmatic callers, the "code mode" of
//! other frameworks) is shown what each tool takes and returns, as TypeScript declarations
//! ([`typescript`]) or Python stubs ([`python`]), generated from the frozen specs.
//!
//! Each tool becomes one asynchronous function named as the tool (a `-` in the name becomes
//! `_`), its description as the doc comment, its arguments typed by its input schema and its
//! result by what the model gets back: the output schema cut down to what the tool's redaction
//! keeps (a field redaction removes is not in the result type). Integers whose range reaches
//! past 2^53 (`u64`, `i64`) get the types `Int64` and `UInt64`, declared at the top with what
//! they mean: JavaScript's `number` rounds them past `Number.MAX_SAFE_INTEGER`.
//!
//! ```
//! use tool_runtime::catalog::stubs;
//! use tool_runtime::catalog::{ToolCatalog, visible_tools};
//! use tool_runtime::prelude::*;
//!
//! /// Show the weather forecast for a city.
//! #[tool(name = "weather__forecast", effect = read_only, redact = ["high_c"])]
//! struct Forecast {
//!     /// The city, in English.
//!     city: String,
//!     days: Option<u8>,
//! }
//! #[derive(Serialize, ToolSchema)]
//! struct Outlook { high_c: f64, station_id: String }
//! # impl Tool for Forecast { type Output = Outlook; async fn run(self, _: &ToolInvocationContext, _: &ToolCapabilities) -> Result<Outlook, ToolError> { unimplemented!() } }
//!
//! let catalog = ToolCatalog::builder().register::<Forecast>().build().unwrap();
//! let ctx = ToolInvocationContext::new(ContextIds { run_id: "r", actor_id: "a", tenant_id: "t" });
//! let visible = visible_tools(&catalog, &ToolPolicy::allowing(["weather__*"]), &ctx);
//!
//! let ts = stubs::typescript(visible.specs()).unwrap();
//! assert!(ts.contains("export declare function weather__forecast(args: WeatherForecastArgs): Promise<WeatherForecastResult>;"));
//! assert!(ts.contains("  days?: number | null;"));
//! // The station id is redacted: code never gets it.
//! assert!(!ts.contains("station_id"));
//!
//! let py = stubs::python(visible.specs()).unwrap();
//! assert!(py.contains("async def weather__forecast(*, city: str, days: int | None = ...) -> WeatherForecastResult:"));
//! ```

use std::collections::BTreeMap;
use std::fmt;

use serde_json::Value;

use crate::spec::ToolSpec;

mod python;
mod typescript;

pub use python::python;
pub use typescript::typescript;

/// The largest integer a JavaScript `number` holds exactly (`Number.MAX_SAFE_INTEGER`).
const MAX_SAFE_INTEGER: f64 = 9_007_199_254_740_991.0;

/// Why stubs could not be generated: two tools whose functions or types would have the same
/// name.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum StubError {
    /// Two tools map to one identifier (`a__b-c` and `a__b_c` both become `a__b_c`; their
    /// types both `ABC`).
    NameClash {
        /// The identifier.
        identifier: String,
        /// The first tool.
        first: String,
        /// The second.
        second: String,
    },
}

impl fmt::Display for StubError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::NameClash { identifier, first, second } => write!(
                f,
                "the tools `{first}` and `{second}` would both be declared as `{identifier}`"
            ),
        }
    }
}

impl std::error::Error for StubError {}

/// The tools to declare, in name order, each with its identifiers and types.
struct Declared<'a>(Vec<Tool<'a>>);

struct Tool<'a> {
    function: String,
    type_name: String,
    description: &'a str,
    args: Object,
    result: Ty,
}

impl<'a> Declared<'a> {
    fn of(specs: impl IntoIterator<Item = &'a ToolSpec>) -> Result<Self, StubError> {
        let mut by_name: BTreeMap<&str, &ToolSpec> = BTreeMap::new();
        for spec in specs {
            by_name.insert(spec.name(), spec);
        }
        let mut taken: BTreeMap<String, &str> = BTreeMap::new();
        let mut tools = Vec::with_capacity(by_name.len());
        for (name, spec) in by_name {
            let function = function_name(name);
            let type_name = pascal(name);
            for identifier in [&function, &type_name] {
                if let Some(first) = taken.insert(identifier.clone(), name) {
                    return Err(StubError::NameClash {
                        identifier: identifier.clone(),
                        first: first.to_owned(),
                        second: name.to_owned(),
                    });
                }
            }
            let args = match ty(&spec.input_schema().to_json()) {
                Ty::Object(object) => object,
                // A root that is not an object of properties (an open object): no fields.
                _ => Object::default(),
            };
            // The output as far as redaction lets it through (as MCP serves it): the model
            // and code get nothing else. A top-level value nothing keeps is `null`.
            let result = match (spec.output_schema(), spec.kept_output_schema()) {
                (None, _) => Ty::Unknown,
                (Some(_), Some(kept)) => ty(kept),
                (Some(_), None) => ty(&serde_json::json!({"type": "null"})),
            };
            tools.push(Tool { function, type_name, description: spec.description(), args, result });
        }
        Ok(Self(tools))
    }
}

/// A schema as the stubs type it.
#[derive(Debug, Clone, PartialEq)]
enum Ty {
    String,
    Number,
    /// An integer; `Some` when its range reaches past 2^53 (`true`: it never goes below 0).
    Integer(Option<bool>),
    Boolean,
    Null,
    Unknown,
    Literals(Vec<Value>),
    Array(Box<Ty>),
    Map(Box<Ty>),
    Object(Object),
    Union(Vec<Ty>),
}

#[derive(Debug, Clone, PartialEq, Default)]
struct Object {
    description: Option<String>,
    fields: Vec<Field>,
}

#[derive(Debug, Clone, PartialEq)]
struct Field {
    name: String,
    ty: Ty,
    required: bool,
    description: Option<String>,
}

/// The type of `schema` (anything outside the subset, such as an MCP-only tool's `$ref`, is
/// `Unknown`).
fn ty(schema: &Value) -> Ty {
    if let Some(values) = schema.get("enum").and_then(Value::as_array) {
        return Ty::Literals(values.clone());
    }
    let types: Vec<&str> = match schema.get("type") {
        Some(Value::String(one)) => vec![one.as_str()],
        Some(Value::Array(many)) => many.iter().filter_map(Value::as_str).collect(),
        _ => return Ty::Unknown,
    };
    let mut union: Vec<Ty> = types.into_iter().map(|name| one_type(name, schema)).collect();
    if union.len() == 1 { union.remove(0) } else { Ty::Union(union) }
}

/// Whether `ty` admits no value: an empty `enum` or `type` list.
fn is_never(ty: &Ty) -> bool {
    matches!(ty, Ty::Literals(values) if values.is_empty())
        || matches!(ty, Ty::Union(types) if types.is_empty())
}

fn one_type(name: &str, schema: &Value) -> Ty {
    match name {
        "string" => Ty::String,
        "number" => Ty::Number,
        "integer" => Ty::Integer(wide(schema)),
        "boolean" => Ty::Boolean,
        "null" => Ty::Null,
        "array" => Ty::Array(Box::new(schema.get("items").map_or(Ty::Unknown, ty))),
        "object" => object(schema),
        _ => Ty::Unknown,
    }
}

fn object(schema: &Value) -> Ty {
    let extra = schema.get("additionalProperties");
    let Some(properties) = schema.get("properties").and_then(Value::as_object) else {
        return match extra {
            Some(Value::Bool(false)) => Ty::Object(Object::default()),
            Some(extra @ Value::Object(_)) => Ty::Map(Box::new(ty(extra))),
            _ => Ty::Map(Box::new(Ty::Unknown)),
        };
    };
    let required: Vec<&str> = (schema.get("required").and_then(Value::as_array))
        .map(|names| names.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let fields = properties
        .iter()
        .map(|(name, property)| Field {
            name: name.clone(),
            ty: ty(property),
            required: required.contains(&name.as_str()),
            description: description(property),
        })
        .collect();
    Ty::Object(Object { description: description(schema), fields })
}

fn description(schema: &Value) -> Option<String> {
    schema.get("description").and_then(Value::as_str).map(str::to_owned)
}

/// For an integer whose range reaches past 2^53: whether it never goes below 0.
fn wide(schema: &Value) -> Option<bool> {
    let bound = |key: &str| schema.get(key).and_then(Value::as_f64);
    let (minimum, maximum) = (bound("minimum")?, bound("maximum")?);
    (maximum > MAX_SAFE_INTEGER || minimum < -MAX_SAFE_INTEGER).then_some(minimum >= 0.0)
}

/// A tool's function name: its name, `-` as `_` (a tool name is letters, digits, `_` and
/// `-`), and `_` before a leading digit.
fn function_name(tool: &str) -> String {
    let name = tool.replace('-', "_");
    if name.starts_with(|c: char| c.is_ascii_digit()) { format!("_{name}") } else { name }
}

/// `weather__get_forecast` as `WeatherGetForecast`: the words between anything but ASCII
/// letters and digits, each capitalised (an identifier in both languages: a leading digit gets
/// `T`).
fn pascal(name: &str) -> String {
    let mut out = String::new();
    for word in name.split(|c: char| !c.is_ascii_alphanumeric()).filter(|word| !word.is_empty()) {
        let mut chars = word.chars();
        if let Some(first) = chars.next() {
            out.extend(first.to_uppercase());
            out.push_str(chars.as_str());
        }
    }
    if out.is_empty() || out.starts_with(|c: char| c.is_ascii_digit()) {
        out.insert(0, 'T');
    }
    out
}

/// `parts` as a union, each once, in order.
fn join(parts: impl Iterator<Item = String>) -> String {
    let mut seen: Vec<String> = Vec::new();
    for part in parts {
        if !seen.contains(&part) {
            seen.push(part);
        }
    }
    seen.join(" | ")
}

/// `text` trimmed, with every line ending a `\n`: a lone `\r` ends a line in both languages
/// (and would end a Python comment in the middle).
/// Control characters other than tabs and line ends are dropped: Python refuses source with a
/// NUL, and none of them is worth showing.
fn normalized(text: &str) -> String {
    let text = text.trim().replace("\r\n", "\n").replace('\r', "\n");
    text.chars().filter(|c| !c.is_control() || matches!(c, '\n' | '\t')).collect()
}
