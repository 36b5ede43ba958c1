//! Turning a call's accumulated argument text into [`CallArguments`], once, when the call is
//! finalised.

use std::sync::Arc;

use serde_json::{Map, Value};

use crate::schema::parse_json;

use super::turn::{ArgumentsProblem, CallArguments};

/// Parses argument text strictly. Empty (or blank) text means `{}`: providers send
/// `arguments: ""` for tools without parameters. Several JSON values back to back are reported
/// as such, never reduced to one.
pub(crate) fn from_text(raw: String) -> CallArguments {
    if raw.trim().is_empty() {
        return CallArguments::Parsed(Value::Object(Map::new()));
    }
    match parse_json(raw.as_bytes()) {
        Ok(value @ Value::Object(_)) => CallArguments::Parsed(value),
        Ok(_) => CallArguments::Invalid { raw, problem: ArgumentsProblem::NotAnObject },
        Err(error) => {
            let problem = several_values(&raw).unwrap_or(ArgumentsProblem::Json(Arc::new(error)));
            CallArguments::Invalid { raw, problem }
        }
    }
}

/// Arguments that arrived as a JSON value rather than text (Anthropic, Gemini, Ollama).
pub(crate) fn from_value(value: Value) -> CallArguments {
    match value {
        Value::Object(_) => CallArguments::Parsed(value),
        other => CallArguments::Invalid {
            raw: other.to_string(),
            problem: ArgumentsProblem::NotAnObject,
        },
    }
}

/// `Some` when `raw` is two or more complete JSON values back to back.
fn several_values(raw: &str) -> Option<ArgumentsProblem> {
    let values = serde_json::Deserializer::from_str(raw)
        .into_iter::<Value>()
        .collect::<Result<Vec<Value>, _>>()
        .ok()?;
    let first = values.first()?;
    if values.len() < 2 {
        None
    } else if values.iter().all(|value| value == first) {
        Some(ArgumentsProblem::Repeated { copies: values.len() })
    } else {
        Some(ArgumentsProblem::Concatenated { values: values.len() })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn empty_means_no_arguments() {
        assert_eq!(from_text(String::new()).value(), Some(&serde_json::json!({})));
        assert_eq!(from_text(" \n".into()).value(), Some(&serde_json::json!({})));
    }

    #[test]
    fn repeated_and_concatenated_are_reported() {
        let repeated = from_text(r#"{"a":1}{"a":1}"#.into());
        assert!(matches!(
            repeated,
            CallArguments::Invalid { problem: ArgumentsProblem::Repeated { copies: 2 }, .. }
        ));
        let concatenated = from_text(r#"{"a":1} {"a":2}"#.into());
        assert!(matches!(
            concatenated,
            CallArguments::Invalid { problem: ArgumentsProblem::Concatenated { values: 2 }, .. }
        ));
    }

    #[test]
    fn invalid_and_non_objects_keep_the_raw_text() {
        let CallArguments::Invalid { raw, problem } = from_text(r#"{"a":"#.into()) else {
            panic!("accepted a cut-off object");
        };
        assert_eq!(raw, r#"{"a":"#);
        assert!(matches!(problem, ArgumentsProblem::Json(_)));
        assert!(matches!(
            from_text("[1]".into()),
            CallArguments::Invalid { problem: ArgumentsProblem::NotAnObject, .. }
        ));
        assert!(matches!(
            from_text(r#"{"a":1,"a":2}"#.into()),
            CallArguments::Invalid { problem: ArgumentsProblem::Json(_), .. }
        ));
    }
}
