//! Arguments mirrored into HTTP headers (MCP 2026-07-28, SEP-2243): a served tool's property
//! annotated `x-mcp-header` in its listed input schema, so that a load balancer or gateway can
//! route on the argument without reading the body. The client sends the value again as
//! `Mcp-Param-<Name>`; rmcp's HTTP service refuses a call whose header is missing, malformed or
//! differs from the body (`400`, `-32020`). On the import side the annotation is transport
//! detail: it is taken out of the schema the model sees, and rmcp's client sends the headers.

#[cfg(feature = "mcp-server")]
use std::collections::BTreeMap;
#[cfg(feature = "mcp-server")]
use std::fmt;

use serde_json::{Map, Value};

#[cfg(feature = "mcp-server")]
use crate::schema::Shown;

/// The schema keyword that names the header of a property.
const KEYWORD: &str = "x-mcp-header";

/// The annotations of each served tool, by tool id: (property, header name) in the order given.
#[cfg(feature = "mcp-server")]
pub(super) type ParamHeaders = BTreeMap<String, Vec<(String, String)>>;

/// Why an argument cannot be [mirrored into a header](super::McpServerBuilder::param_header).
#[cfg(feature = "mcp-server")]
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ParamHeaderError {
    /// The runner's catalog has no tool of this id.
    UnknownTool(String),
    /// The tool's input schema has no top-level property of this name.
    UnknownProperty {
        /// The tool's id.
        tool: String,
        /// The property.
        property: String,
    },
    /// The property is not a plain string, integer or boolean (an optional field, a number, an
    /// object or a list cannot be mirrored).
    NotPrimitive {
        /// The tool's id.
        tool: String,
        /// The property.
        property: String,
    },
    /// The header name is empty or not an HTTP token (RFC 9110: letters, digits and
    /// ``!#$%&'*+-.^_`|~``).
    InvalidHeader(String),
    /// The tool mirrors another property into the same header (names compare without case), or
    /// this property already has a header.
    Duplicate {
        /// The tool's id.
        tool: String,
        /// The header name or the property already given.
        what: String,
    },
}

#[cfg(feature = "mcp-server")]
impl fmt::Display for ParamHeaderError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::UnknownTool(tool) => write!(f, "no tool `{}` in the catalog", Shown(tool)),
            Self::UnknownProperty { tool, property } => write!(
                f,
                "the input schema of `{}` has no top-level property `{}`",
                Shown(tool),
                Shown(property)
            ),
            Self::NotPrimitive { tool, property } => write!(
                f,
                "the property `{}` of `{}` is not a required-type string, integer or boolean \
                 (`\"type\"` is one of them and nothing else); only those ride in a header",
                Shown(property),
                Shown(tool)
            ),
            Self::InvalidHeader(header) => write!(
                f,
                "`{}` is not an HTTP header name: use letters, digits and !#$%&'*+-.^_`|~",
                Shown(header)
            ),
            Self::Duplicate { tool, what } => {
                write!(f, "`{}` is mirrored twice for `{}`", Shown(what), Shown(tool))
            }
        }
    }
}

#[cfg(feature = "mcp-server")]
impl std::error::Error for ParamHeaderError {}

/// Whether `byte` may appear in an HTTP token (RFC 9110 §5.6.2).
#[cfg(feature = "mcp-server")]
fn is_tchar(byte: u8) -> bool {
    byte.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&byte)
}

/// Checks that the property `property` of the tool `tool` (input schema `schema`) can be
/// mirrored into `Mcp-Param-<header>`, next to the annotations the tool has already.
#[cfg(feature = "mcp-server")]
pub(super) fn check(
    tool: &str,
    schema: &Value,
    property: &str,
    header: &str,
    existing: &[(String, String)],
) -> Result<(), ParamHeaderError> {
    if header.is_empty() || !header.bytes().all(is_tchar) {
        return Err(ParamHeaderError::InvalidHeader(header.to_owned()));
    }
    let Some(node) = schema.get("properties").and_then(|properties| properties.get(property))
    else {
        return Err(ParamHeaderError::UnknownProperty {
            tool: tool.to_owned(),
            property: property.to_owned(),
        });
    };
    if !matches!(node.get("type").and_then(Value::as_str), Some("string" | "integer" | "boolean")) {
        return Err(ParamHeaderError::NotPrimitive {
            tool: tool.to_owned(),
            property: property.to_owned(),
        });
    }
    for (other, other_header) in existing {
        if other == property {
            return Err(ParamHeaderError::Duplicate {
                tool: tool.to_owned(),
                what: property.to_owned(),
            });
        }
        if other_header.eq_ignore_ascii_case(header) {
            return Err(ParamHeaderError::Duplicate {
                tool: tool.to_owned(),
                what: header.to_owned(),
            });
        }
    }
    Ok(())
}

/// `schema` (a listed input schema) with each of `headers` written on its property.
#[cfg(feature = "mcp-server")]
pub(super) fn annotate(schema: &mut Map<String, Value>, headers: &[(String, String)]) {
    let Some(Value::Object(properties)) = schema.get_mut("properties") else { return };
    for (property, header) in headers {
        if let Some(Value::Object(node)) = properties.get_mut(property) {
            node.insert(KEYWORD.to_owned(), Value::String(header.clone()));
        }
    }
}

/// `schema` (an imported tool's input schema) without its `x-mcp-header` annotations, which
/// are for the transport (rmcp's client sends the headers from the listing it keeps), not for
/// the model, and outside the schema subset. Only annotations where the keyword may stand (on
/// a property reached through `properties` alone) are taken out: anywhere else the keyword
/// stays, and the subset check refuses the tool.
#[cfg(feature = "mcp-client")]
pub(super) fn strip(schema: &mut Map<String, Value>) {
    let Some(Value::Object(properties)) = schema.get_mut("properties") else { return };
    for node in properties.values_mut() {
        if let Value::Object(node) = node {
            if matches!(node.get(KEYWORD), Some(Value::String(_))) {
                node.remove(KEYWORD);
            }
            strip(node);
        }
    }
}

#[cfg(all(test, feature = "mcp-server", feature = "mcp-client"))]
mod tests {
    use serde_json::json;

    use super::*;

    fn schema() -> Value {
        json!({
            "type": "object",
            "properties": {
                "region": {"type": "string"},
                "count": {"type": "integer"},
                "note": {"type": ["string", "null"]},
                "tags": {"type": "array", "items": {"type": "string"}}
            },
            "required": ["region", "count", "tags"],
            "additionalProperties": false
        })
    }

    #[test]
    fn only_plain_primitive_properties_under_token_names_are_mirrored() {
        let schema = schema();
        assert_eq!(check("t", &schema, "region", "Region", &[]), Ok(()));
        assert_eq!(check("t", &schema, "count", "Count", &[]), Ok(()));
        let not_primitive = |property: &str| ParamHeaderError::NotPrimitive {
            tool: "t".into(),
            property: property.into(),
        };
        assert_eq!(check("t", &schema, "note", "Note", &[]), Err(not_primitive("note")));
        assert_eq!(check("t", &schema, "tags", "Tags", &[]), Err(not_primitive("tags")));
        assert_eq!(
            check("t", &schema, "zone", "Zone", &[]),
            Err(ParamHeaderError::UnknownProperty { tool: "t".into(), property: "zone".into() })
        );
        for bad in ["", "Two Words", "Région", "a:b"] {
            assert_eq!(
                check("t", &schema, "region", bad, &[]),
                Err(ParamHeaderError::InvalidHeader(bad.into()))
            );
        }
        let existing = [("region".to_owned(), "Region".to_owned())];
        assert_eq!(
            check("t", &schema, "count", "REGION", &existing),
            Err(ParamHeaderError::Duplicate { tool: "t".into(), what: "REGION".into() })
        );
        assert_eq!(
            check("t", &schema, "region", "Other", &existing),
            Err(ParamHeaderError::Duplicate { tool: "t".into(), what: "region".into() })
        );
    }

    #[test]
    fn the_listing_carries_the_annotation_and_the_import_takes_it_out() {
        let Value::Object(mut listed) = schema() else { unreachable!() };
        annotate(&mut listed, &[("region".into(), "Region".into())]);
        assert_eq!(
            listed["properties"]["region"],
            json!({"type": "string", "x-mcp-header": "Region"})
        );
        strip(&mut listed);
        assert_eq!(Value::Object(listed), schema());
    }

    #[test]
    fn an_annotation_off_the_properties_path_stays_for_the_subset_check_to_refuse() {
        let Value::Object(mut odd) = json!({
            "type": "object",
            "x-mcp-header": "Root",
            "properties": {"list": {"type": "array", "items": {"type": "string", "x-mcp-header": "Item"}}}
        }) else {
            unreachable!()
        };
        let before = odd.clone();
        strip(&mut odd);
        assert_eq!(odd, before);
    }
}
