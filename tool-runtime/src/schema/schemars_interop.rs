//! `schemars` interop: present any [`ToolSchema`] type's schema as a [`schemars::Schema`].

use super::ToolSchema;

/// The schema of `T` as a [`schemars::Schema`], for code that mixes this crate with `schemars`.
///
/// ```
/// use tool_runtime::prelude::*;
///
/// #[derive(Deserialize, ToolSchema)]
/// struct Query { text: String }
///
/// let schema = tool_runtime::schema::to_schemars::<Query>();
/// assert_eq!(schema.get("type"), Some(&serde_json::json!("object")));
/// ```
#[must_use]
pub fn to_schemars<T: ToolSchema + ?Sized>() -> schemars::Schema {
    schemars::Schema::from(T::SCHEMA.to_json_object())
}

/// A `schema_with` function for `schemars` derives: use a [`ToolSchema`] type inside a
/// `#[derive(schemars::JsonSchema)]` type with
/// `#[schemars(schema_with = "tool_runtime::schema::schemars_schema::<MyType>")]`.
///
/// ```
/// use tool_runtime::prelude::*;
///
/// #[derive(Serialize, Deserialize, ToolSchema)]
/// enum Mode { Fast, Careful }
///
/// #[derive(schemars::JsonSchema)]
/// struct Settings {
///     #[schemars(schema_with = "tool_runtime::schema::schemars_schema::<Mode>")]
///     mode: Mode,
/// }
///
/// let schema = schemars::schema_for!(Settings);
/// assert_eq!(schema.as_value()["properties"]["mode"]["enum"], serde_json::json!(["Fast", "Careful"]));
/// ```
#[must_use]
pub fn schemars_schema<T: ToolSchema + ?Sized>(
    _generator: &mut schemars::SchemaGenerator,
) -> schemars::Schema {
    to_schemars::<T>()
}
