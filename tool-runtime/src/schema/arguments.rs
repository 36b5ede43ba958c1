//! Raw arguments to a typed value: the one entry point the runner and tests share, and why
//! it refuses.

use std::fmt;

use serde::de::DeserializeOwned;

use super::{JsonError, ToolSchema, ValidationErrors, parse_json};

/// Parses, validates and deserialises tool arguments from one parse.
///
/// This is what the runner does with a model's raw arguments: [`parse_json`], then
/// [`Schema::validate`](super::Schema::validate) against `T::SCHEMA` (every error, with JSON pointers), then
/// deserialisation of the very same value. Integral floats (`3.0`) in integer positions are
/// accepted, as the schema promises, and read as integers.
///
/// ```
/// use tool_runtime::prelude::*;
/// use tool_runtime::schema::{parse_arguments, ArgumentsError};
///
/// #[derive(Debug, Deserialize, ToolSchema)]
/// struct Args { #[schema(range(min = 1, max = 10))] count: u8, label: Option<String> }
///
/// let args: Args = parse_arguments(br#"{"count": 3.0}"#).unwrap();
/// assert_eq!(args.count, 3);
///
/// let Err(ArgumentsError::Validation(errors)) = parse_arguments::<Args>(br#"{"count": 0, "x": 1}"#) else {
///     panic!("expected validation errors");
/// };
/// let pointers: Vec<&str> = errors.iter().map(|error| error.pointer()).collect();
/// assert_eq!(pointers, ["/count", "/x"]);
/// ```
///
/// # Errors
///
/// [`ArgumentsError`]: invalid JSON, schema violations, or (for a type whose schema does not
/// match its `Deserialize`) a decoding error.
pub fn parse_arguments<T: ToolSchema + DeserializeOwned>(raw: &[u8]) -> Result<T, ArgumentsError> {
    if let Some(args) = super::decode_checked(raw) {
        return Ok(args);
    }
    let mut value = parse_json(raw).map_err(ArgumentsError::InvalidJson)?;
    super::validate_and_normalize_as::<T>(&mut value).map_err(ArgumentsError::Validation)?;
    serde_json::from_value(value).map_err(ArgumentsError::decode)
}

/// Why raw arguments were refused.
#[derive(Debug)]
#[non_exhaustive]
pub enum ArgumentsError {
    /// Not a single well-formed JSON value.
    InvalidJson(JsonError),
    /// Well-formed, but outside the schema.
    Validation(ValidationErrors),
    /// Inside the schema but refused by the type's `Deserialize`: the type's schema does not
    /// describe it faithfully (a hand-written `ToolSchema` implementation is wrong).
    Decode(SchemaMismatchError),
}

impl ArgumentsError {
    /// Wraps a deserialisation error of arguments that passed validation.
    pub(crate) fn decode(error: serde_json::Error) -> Self {
        Self::Decode(SchemaMismatchError(error))
    }
}

impl fmt::Display for ArgumentsError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::InvalidJson(error) => write!(f, "arguments are not valid JSON: {error}"),
            Self::Validation(errors) => write!(f, "arguments do not match the schema: {errors}"),
            Self::Decode(error) => fmt::Display::fmt(error, f),
        }
    }
}

impl std::error::Error for ArgumentsError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Self::InvalidJson(error) => Some(error),
            Self::Validation(errors) => Some(errors),
            Self::Decode(error) => Some(error),
        }
    }
}

/// Arguments that passed validation but not deserialisation: the type's `ToolSchema` does not
/// describe its `Deserialize` (a hand-written implementation is wrong). Its message says what
/// kind of error serde reported, not what value was sent.
///
/// Formerly `schema::DecodeError`; that name now belongs to provider responses alone
/// (`adapters::DecodeError`).
///
/// ```
/// use tool_runtime::prelude::*;
/// use tool_runtime::schema::{ArgumentsError, Schema, parse_arguments};
///
/// /// Claims to be any string, but its `Deserialize` only takes `"on"`.
/// struct OnlyOn;
///
/// impl<'de> Deserialize<'de> for OnlyOn {
///     fn deserialize<D: serde::Deserializer<'de>>(de: D) -> Result<Self, D::Error> {
///         match String::deserialize(de)?.as_str() {
///             "on" => Ok(OnlyOn),
///             _ => Err(serde::de::Error::custom("not on")),
///         }
///     }
/// }
///
/// impl ToolSchema for OnlyOn {
///     const SCHEMA: &'static Schema = &Schema::string();
/// }
///
/// let Err(ArgumentsError::Decode(error)) = parse_arguments::<OnlyOn>(br#""off""#) else {
///     panic!("the schema let it through, serde did not");
/// };
/// assert!(error.to_string().contains("does not describe its `Deserialize`"));
/// ```
#[derive(Debug)]
pub struct SchemaMismatchError(serde_json::Error);

impl fmt::Display for SchemaMismatchError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "arguments match the schema but could not be decoded ({:?} error); the type's schema does not describe its `Deserialize`",
            self.0.classify()
        )
    }
}

impl std::error::Error for SchemaMismatchError {}
