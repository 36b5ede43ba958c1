//! The compile-time schema tree.
//!
//! Every type that may appear in a tool's input or output implements [`ToolSchema`], whose
//! associated constant [`ToolSchema::SCHEMA`] is a `&'static` [`Schema`] built at compile time
//! from the schemas of its fields. Rendering it to JSON is deterministic (fixed key order), so the
//! schema a model sees is frozen by construction.
//!
//! The tree can only express the subset of JSON Schema that every provider accepts and that a
//! model can reliably fill in: `type` (with `null` for optional values), `description`, numeric
//! bounds, string lengths, `pattern`, `format`, string `enum`s, arrays with item counts and
//! `uniqueItems`, and closed objects (`additionalProperties: false`). There is no variant for
//! `oneOf`, `anyOf`, `allOf`, `not`, `if`/`then`/`else`, `patternProperties` or `$ref`: those
//! constructs are unrepresentable, not filtered out later.
//!
//! ```
//! use tool_runtime::prelude::*;
//! use tool_runtime::schema::SchemaKind;
//!
//! let schema = <Option<u8> as ToolSchema>::SCHEMA;
//! assert!(schema.nullable);
//! assert!(matches!(schema.kind, SchemaKind::Integer(_)));
//! assert_eq!(
//!     schema.to_json(),
//!     serde_json::json!({"type": ["integer", "null"], "minimum": 0, "maximum": 255}),
//! );
//! ```

mod arguments;
pub(crate) mod consts;
mod error;
pub(crate) mod example;
mod fast;
mod pattern;
mod render;
mod rules;
#[cfg(feature = "schemars")]
mod schemars_interop;
mod std_impls;
mod strict;
mod subset;
pub(crate) mod validate;

#[cfg(any(feature = "runner", feature = "adapters"))]
pub(crate) use strict::Shown;
#[cfg(feature = "runner")]
pub(crate) use strict::Untrusted;

pub use arguments::{ArgumentsError, SchemaMismatchError, parse_arguments};
pub use consts::RangeBound;
pub use error::{Constraint, ValidationError, ValidationErrors};
pub use fast::decode_checked;
#[cfg(feature = "schemars")]
pub use schemars_interop::{schemars_schema, to_schemars};
pub use strict::{JsonError, parse_json};
pub use subset::{SubsetError, check_subset};
#[cfg(feature = "dynamic")]
pub(crate) use subset::{check_object_root, is_open};
pub(crate) use validate::validate_and_normalize_as;
pub use validate::validate_as;

/// A type's generated validator as a function: [`validate_as`] of that type. Not part of the
/// API.
#[doc(hidden)]
pub type OutputCheck = fn(&serde_json::Value) -> Result<(), ValidationErrors>;

/// A tool's own validation of its arguments: the port a tool written by hand
/// ([`BoundToolRuntime`](crate::runtime::BoundToolRuntime)) plugs its validator into (a schema
/// library, a rule set of its own) to hand the runner
/// [`ValidatedArgs::checked`](crate::runtime::ValidatedArgs::checked) arguments.
pub trait ArgumentsValidator: Send + Sync + std::fmt::Debug {
    /// Checks `args`, a JSON object; every problem it finds, each with the JSON pointer of
    /// what is wrong and a message that does not repeat the value
    /// ([`ValidationErrors::push`]).
    ///
    /// # Errors
    ///
    /// The problems, when there are any.
    fn validate(&self, args: &serde_json::Value) -> Result<(), ValidationErrors>;
}

/// A type that has a schema in the allowed subset and may therefore appear in a tool's input or
/// output.
///
/// Implement it with `#[derive(ToolSchema)]` (structs with named fields, newtype structs and
/// enums whose variants carry no data); `#[tool]` implements it for the tool struct itself. The
/// standard library's scalars, `String`, `char`, `Vec`, arrays, `Box`, `Option`, `BTreeSet` and
/// `HashSet` implement it already.
///
/// A hand-written implementation must describe exactly what the type's `Deserialize` accepts and
/// its `Serialize` produces.
///
/// ```
/// use tool_runtime::prelude::*;
///
/// /// How results are ordered.
/// #[derive(Serialize, Deserialize, ToolSchema)]
/// #[serde(rename_all = "snake_case")]
/// enum Order { Newest, MostRelevant }
///
/// let json = Order::SCHEMA.to_json();
/// assert_eq!(json["enum"], serde_json::json!(["newest", "most_relevant"]));
/// ```
#[diagnostic::on_unimplemented(
    message = "`{Self}` has no tool schema",
    label = "this type cannot appear in a tool's input or output",
    note = "derive it with `#[derive(ToolSchema)]` on a struct with named fields, a newtype struct or an enum whose variants carry no data",
    note = "maps, `serde_json::Value`, tuples and data-carrying enums have no schema in the allowed subset (no `additionalProperties` maps, no `oneOf`/`anyOf`): use a struct with named fields or a `Vec` of key/value structs"
)]
pub trait ToolSchema {
    /// The schema of this type, built at compile time.
    const SCHEMA: &'static Schema;

    /// Whether a field of this type may be absent from an object (`serde` reads a missing
    /// `Option` field as `None`). Such fields are left out of `required`.
    const OPTIONAL: bool = false;

    /// This type's validator: checks `value` against `schema` (this type's [`Self::SCHEMA`],
    /// or the schema of a field of this type, which adds constraints and a description to it)
    /// and records what is wrong in `out`, at `path`. [`validate_as`] calls it.
    ///
    /// `#[derive(ToolSchema)]` and `#[tool]` generate it; the default walks `schema`. Not part
    /// of the API: a hand-written implementation keeps the default.
    #[doc(hidden)]
    #[inline(always)]
    fn check_at(
        schema: &'static Schema,
        value: &serde_json::Value,
        path: &validate::Path<'_>,
        out: &mut validate::Findings,
    ) {
        validate::walk(schema, value, path, out);
    }
}

/// One node of the schema tree.
///
/// Built by `#[derive(ToolSchema)]` and `#[tool]`; hand-written implementations can use the
/// `const` constructors ([`Schema::string`], [`Schema::object`], ...) and modifiers.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Schema {
    /// What kind of JSON value this is and its constraints.
    pub kind: SchemaKind,
    /// Shown to the model as `description`.
    pub description: Option<&'static str>,
    /// Whether `null` is accepted too (rendered as `"type": [..., "null"]`, never `anyOf`).
    pub nullable: bool,
}

/// The JSON type of a [`Schema`] node and the constraints that belong to it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum SchemaKind {
    /// `true` or `false`.
    Boolean,
    /// A whole number; `1.0` counts as one, as in JSON Schema.
    Integer(IntegerSchema),
    /// Any finite number.
    Number(NumberSchema),
    /// A string.
    String(StringSchema),
    /// One of a fixed set of strings.
    Enum(&'static [&'static str]),
    /// An array whose items all share one schema.
    Array(ArraySchema),
    /// A closed object: only the listed properties are accepted.
    Object(ObjectSchema),
}

/// Bounds of an integer, inclusive. Exclusive bounds are normalised to inclusive ones.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct IntegerSchema {
    /// `minimum`.
    pub minimum: Option<i128>,
    /// `maximum`.
    pub maximum: Option<i128>,
}

/// Bounds of a number.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct NumberSchema {
    /// `minimum`.
    pub minimum: Option<f64>,
    /// `maximum`.
    pub maximum: Option<f64>,
    /// `exclusiveMinimum`.
    pub exclusive_minimum: Option<f64>,
    /// `exclusiveMaximum`.
    pub exclusive_maximum: Option<f64>,
}

/// Constraints of a string. Lengths count Unicode scalar values, as JSON Schema does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct StringSchema {
    /// `minLength`.
    pub min_length: Option<u64>,
    /// `maxLength`.
    pub max_length: Option<u64>,
    /// `pattern`: a regular expression the string must contain a match of.
    pub pattern: Option<&'static str>,
    /// `format`: an annotation for the model (`date-time`, `email`, ...); not validated.
    pub format: Option<&'static str>,
}

/// An array and its item schema.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ArraySchema {
    /// The schema every item follows.
    pub items: &'static Schema,
    /// `minItems`.
    pub min_items: Option<u64>,
    /// `maxItems`.
    pub max_items: Option<u64>,
    /// `uniqueItems`.
    pub unique_items: bool,
}

/// A closed object (`additionalProperties: false`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ObjectSchema {
    /// The properties, in declaration order.
    pub properties: &'static [Property],
}

/// One property of an [`ObjectSchema`].
///
/// `#[derive(ToolSchema)]` and `#[tool]` fill in `aliases` from `#[serde(alias = "...")]`.
/// Validation accepts an alias as a synonym of the name (an error points at the key as sent)
/// and refuses a property given under two of its names; [`Schema::normalize`] then renames the
/// alias to the name, so validated arguments (what a wrapper reads, what a record keeps) name
/// each property one way. [`decode_checked`] leaves aliases to that path. Aliases are not
/// rendered: the schema a model sees, and [`ToolSpec::schema_hash`](crate::spec::ToolSpec::schema_hash), name each
/// property once, by `name`.
///
/// ```
/// use tool_runtime::prelude::*;
/// use tool_runtime::schema::Constraint;
///
/// #[derive(Deserialize, ToolSchema)]
/// struct Search {
///     #[serde(alias = "query")]
///     q: String,
/// }
///
/// assert_eq!(Search::SCHEMA.properties().unwrap()[0].aliases, ["query"]);
/// assert_eq!(Search::SCHEMA.to_json()["properties"], serde_json::json!({"q": {"type": "string"}}));
/// assert!(Search::SCHEMA.is_valid(&serde_json::json!({"query": "rust"})));
///
/// let errors = Search::SCHEMA.validate(&serde_json::json!({"q": "a", "query": "b"})).unwrap_err();
/// let error = errors.iter().next().unwrap();
/// assert_eq!(error.constraint(), Constraint::GivenTwice { property: "q" });
/// assert_eq!(error.to_string(), "/query: property `q` given twice, as `q` and `query`");
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Property {
    /// The name as serialised (after `rename`/`rename_all`).
    pub name: &'static str,
    /// Other keys accepted for the property on input (`#[serde(alias = "...")]`), in the
    /// order written. Never rendered into the JSON schema.
    pub aliases: &'static [&'static str],
    /// The property's schema; its description is the field's.
    pub schema: &'static Schema,
    /// Whether the property must be present.
    pub required: bool,
}

impl Schema {
    /// A schema of the given kind, without description, not nullable.
    #[must_use]
    pub const fn new(kind: SchemaKind) -> Self {
        Self { kind, description: None, nullable: false }
    }

    /// `{"type": "boolean"}`.
    #[must_use]
    pub const fn boolean() -> Self {
        Self::new(SchemaKind::Boolean)
    }

    /// `{"type": "integer"}` with inclusive bounds.
    #[must_use]
    pub const fn integer(minimum: Option<i128>, maximum: Option<i128>) -> Self {
        Self::new(SchemaKind::Integer(IntegerSchema { minimum, maximum }))
    }

    /// `{"type": "number"}` without bounds.
    #[must_use]
    pub const fn number() -> Self {
        Self::new(SchemaKind::Number(NumberSchema {
            minimum: None,
            maximum: None,
            exclusive_minimum: None,
            exclusive_maximum: None,
        }))
    }

    /// `{"type": "string"}` without constraints.
    #[must_use]
    pub const fn string() -> Self {
        Self::new(SchemaKind::String(StringSchema {
            min_length: None,
            max_length: None,
            pattern: None,
            format: None,
        }))
    }

    /// `{"type": "string", "enum": [...]}`.
    #[must_use]
    pub const fn string_enum(values: &'static [&'static str]) -> Self {
        Self::new(SchemaKind::Enum(values))
    }

    /// `{"type": "array", "items": ...}`.
    #[must_use]
    pub const fn array(items: &'static Schema) -> Self {
        Self::new(SchemaKind::Array(ArraySchema {
            items,
            min_items: None,
            max_items: None,
            unique_items: false,
        }))
    }

    /// A closed object with these properties.
    #[must_use]
    pub const fn object(properties: &'static [Property]) -> Self {
        Self::new(SchemaKind::Object(ObjectSchema { properties }))
    }

    /// This schema with a description (replacing any it had).
    #[must_use]
    pub const fn describe(self, description: &'static str) -> Self {
        Self { description: Some(description), ..self }
    }

    /// This schema, accepting `null` too.
    #[must_use]
    pub const fn nullable(self) -> Self {
        Self { nullable: true, ..self }
    }

    /// The JSON type name of this node (`"string"` for enums), ignoring `null`.
    #[must_use]
    pub const fn type_name(&self) -> &'static str {
        match self.kind {
            SchemaKind::Boolean => "boolean",
            SchemaKind::Integer(_) => "integer",
            SchemaKind::Number(_) => "number",
            SchemaKind::String(_) | SchemaKind::Enum(_) => "string",
            SchemaKind::Array(_) => "array",
            SchemaKind::Object(_) => "object",
        }
    }

    /// The properties if this is an object schema.
    #[must_use]
    pub const fn properties(&self) -> Option<&'static [Property]> {
        match self.kind {
            SchemaKind::Object(object) => Some(object.properties),
            _ => None,
        }
    }
}
