//! Examples of a `#[tool]`'s arguments, written in its attribute and checked against its
//! schema while the crate compiles.
//!
//! The macro turns each example into a constant [`ExampleValue`] tree and asks
//! [`example_problem`] about every argument it gives; a mismatch stops the build on that
//! argument's tokens. Patterns (`pattern = "..."`) are regular expressions, which `const`
//! evaluation cannot run: a catalog checks them when it is built
//! (`CatalogProblem::InvalidExample`).

use serde_json::{Map, Number, Value};

use super::{Property, Schema, SchemaKind};

/// A JSON value known at compile time: one example of a tool's arguments, or a part of one.
#[doc(hidden)]
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum ExampleValue {
    /// `null`.
    Null,
    /// `true` or `false`.
    Bool(bool),
    /// A number written without a fraction or exponent.
    Int(i128),
    /// Any other number.
    Float(f64),
    /// A string.
    Str(&'static str),
    /// An array.
    Array(&'static [ExampleValue]),
    /// An object, its keys in the order written.
    Object(&'static [(&'static str, ExampleValue)]),
}

impl ExampleValue {
    /// The JSON value. A number `serde_json` cannot hold (an integer beyond `i64`/`u64`, a
    /// float that is not finite) becomes `null`; the compile-time check has refused those
    /// wherever a schema bounds them.
    #[must_use]
    pub fn to_json(&self) -> Value {
        match *self {
            Self::Null => Value::Null,
            Self::Bool(value) => Value::Bool(value),
            Self::Int(value) => i64::try_from(value)
                .map(Number::from)
                .or_else(|_| u64::try_from(value).map(Number::from))
                .map_or(Value::Null, Value::Number),
            Self::Float(value) => Number::from_f64(value).map_or(Value::Null, Value::Number),
            Self::Str(value) => Value::String(value.to_owned()),
            Self::Array(items) => Value::Array(items.iter().map(Self::to_json).collect()),
            Self::Object(entries) => Value::Object(
                entries
                    .iter()
                    .map(|(key, value)| ((*key).to_owned(), value.to_json()))
                    .collect::<Map<_, _>>(),
            ),
        }
    }
}

/// Why an example does not fit its schema: the macro words each one for the argument at fault.
#[doc(hidden)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExampleProblem {
    /// `null` where the schema does not allow it.
    Null,
    /// A value of another JSON type.
    Type,
    /// A number below `minimum` (or at an exclusive one).
    BelowMinimum,
    /// A number above `maximum` (or at an exclusive one).
    AboveMaximum,
    /// A string shorter than `minLength`.
    TooShort,
    /// A string longer than `maxLength`.
    TooLong,
    /// A string that is not one of the enum's values.
    NotInEnum,
    /// An array with fewer items than `minItems`.
    TooFewItems,
    /// An array with more items than `maxItems`.
    TooManyItems,
    /// Two equal items under `uniqueItems`.
    DuplicateItems,
    /// A key the object schema does not have.
    UnknownProperty,
    /// A required property left out.
    MissingProperty,
    /// A property given twice (two keys, or a name and an alias).
    GivenTwice,
}

/// The property of an object schema named `name` (not an alias), if there is one.
#[doc(hidden)]
#[must_use]
pub const fn property_schema(schema: &Schema, name: &str) -> Option<&'static Schema> {
    match property(schema, name) {
        Some(property) => Some(property.schema),
        None => None,
    }
}

/// Whether `schema` is an object whose property `name` is required.
#[doc(hidden)]
#[must_use]
pub const fn is_required(schema: &Schema, name: &str) -> bool {
    match property(schema, name) {
        Some(property) => property.required,
        None => false,
    }
}

const fn property(schema: &Schema, name: &str) -> Option<&'static Property> {
    let SchemaKind::Object(object) = schema.kind else { return None };
    let mut i = 0;
    while i < object.properties.len() {
        if str_eq(object.properties[i].name, name) {
            return Some(&object.properties[i]);
        }
        i += 1;
    }
    None
}

/// The first way `value` breaks `schema`, or `None` when it fits (patterns aside).
#[doc(hidden)]
#[must_use]
pub const fn example_problem(schema: &Schema, value: &ExampleValue) -> Option<ExampleProblem> {
    if let ExampleValue::Null = value {
        return if schema.nullable { None } else { Some(ExampleProblem::Null) };
    }
    match (schema.kind, *value) {
        (SchemaKind::Boolean, ExampleValue::Bool(_)) => None,
        (SchemaKind::Integer(bounds), ExampleValue::Int(n)) => {
            integer_problem(n, bounds.minimum, bounds.maximum)
        }
        (SchemaKind::Integer(bounds), ExampleValue::Float(x)) => {
            // `1.0` is an integer in JSON Schema.
            if x.is_finite() && x == (x as i128) as f64 {
                integer_problem(x as i128, bounds.minimum, bounds.maximum)
            } else {
                Some(ExampleProblem::Type)
            }
        }
        (SchemaKind::Number(bounds), ExampleValue::Int(n)) => number_problem(n as f64, bounds),
        (SchemaKind::Number(bounds), ExampleValue::Float(x)) => number_problem(x, bounds),
        (SchemaKind::String(string), ExampleValue::Str(text)) => {
            let length = char_count(text);
            if let Some(min) = string.min_length
                && length < min
            {
                Some(ExampleProblem::TooShort)
            } else if let Some(max) = string.max_length
                && length > max
            {
                Some(ExampleProblem::TooLong)
            } else {
                None
            }
        }
        (SchemaKind::Enum(values), ExampleValue::Str(text)) => {
            let mut i = 0;
            while i < values.len() {
                if str_eq(values[i], text) {
                    return None;
                }
                i += 1;
            }
            Some(ExampleProblem::NotInEnum)
        }
        (SchemaKind::Array(array), ExampleValue::Array(items)) => {
            let count = items.len() as u64;
            if let Some(min) = array.min_items
                && count < min
            {
                return Some(ExampleProblem::TooFewItems);
            }
            if let Some(max) = array.max_items
                && count > max
            {
                return Some(ExampleProblem::TooManyItems);
            }
            let mut i = 0;
            while i < items.len() {
                if let Some(problem) = example_problem(array.items, &items[i]) {
                    return Some(problem);
                }
                if array.unique_items {
                    let mut j = 0;
                    while j < i {
                        if value_eq(&items[i], &items[j]) {
                            return Some(ExampleProblem::DuplicateItems);
                        }
                        j += 1;
                    }
                }
                i += 1;
            }
            None
        }
        (SchemaKind::Object(object), ExampleValue::Object(entries)) => {
            let mut i = 0;
            while i < entries.len() {
                let Some(at) = property_index(object.properties, entries[i].0) else {
                    return Some(ExampleProblem::UnknownProperty);
                };
                let mut j = 0;
                while j < i {
                    if let Some(other) = property_index(object.properties, entries[j].0)
                        && other == at
                    {
                        return Some(ExampleProblem::GivenTwice);
                    }
                    j += 1;
                }
                if let Some(problem) = example_problem(object.properties[at].schema, &entries[i].1)
                {
                    return Some(problem);
                }
                i += 1;
            }
            let mut p = 0;
            while p < object.properties.len() {
                if object.properties[p].required && !gives(object.properties, p, entries) {
                    return Some(ExampleProblem::MissingProperty);
                }
                p += 1;
            }
            None
        }
        _ => Some(ExampleProblem::Type),
    }
}

/// The index of the property `key` names, by name or alias.
const fn property_index(properties: &[Property], key: &str) -> Option<usize> {
    let mut i = 0;
    while i < properties.len() {
        if str_eq(properties[i].name, key) {
            return Some(i);
        }
        let mut a = 0;
        while a < properties[i].aliases.len() {
            if str_eq(properties[i].aliases[a], key) {
                return Some(i);
            }
            a += 1;
        }
        i += 1;
    }
    None
}

/// Whether one of `entries` gives property `index` (by name or alias).
const fn gives(properties: &[Property], index: usize, entries: &[(&str, ExampleValue)]) -> bool {
    let mut i = 0;
    while i < entries.len() {
        if let Some(at) = property_index(properties, entries[i].0)
            && at == index
        {
            return true;
        }
        i += 1;
    }
    false
}

const fn integer_problem(n: i128, min: Option<i128>, max: Option<i128>) -> Option<ExampleProblem> {
    if let Some(min) = min
        && n < min
    {
        return Some(ExampleProblem::BelowMinimum);
    }
    if let Some(max) = max
        && n > max
    {
        return Some(ExampleProblem::AboveMaximum);
    }
    None
}

const fn number_problem(x: f64, bounds: super::NumberSchema) -> Option<ExampleProblem> {
    if !x.is_finite() {
        return Some(ExampleProblem::Type);
    }
    let below = match (bounds.minimum, bounds.exclusive_minimum) {
        (Some(min), _) if x < min => true,
        (_, Some(min)) if x <= min => true,
        _ => false,
    };
    if below {
        return Some(ExampleProblem::BelowMinimum);
    }
    let above = match (bounds.maximum, bounds.exclusive_maximum) {
        (Some(max), _) if x > max => true,
        (_, Some(max)) if x >= max => true,
        _ => false,
    };
    if above { Some(ExampleProblem::AboveMaximum) } else { None }
}

/// Unicode scalar values in `text`, as JSON Schema counts lengths.
const fn char_count(text: &str) -> u64 {
    let bytes = text.as_bytes();
    let mut count = 0;
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] & 0xC0 != 0x80 {
            count += 1;
        }
        i += 1;
    }
    count
}

const fn str_eq(a: &str, b: &str) -> bool {
    super::consts::str_eq_bytes(a.as_bytes(), b.as_bytes())
}

/// JSON equality: numbers by value (`1` equals `1.0`), objects whatever their key order.
const fn value_eq(a: &ExampleValue, b: &ExampleValue) -> bool {
    match (*a, *b) {
        (ExampleValue::Null, ExampleValue::Null) => true,
        (ExampleValue::Bool(x), ExampleValue::Bool(y)) => x == y,
        (ExampleValue::Int(x), ExampleValue::Int(y)) => x == y,
        (ExampleValue::Int(x), ExampleValue::Float(y))
        | (ExampleValue::Float(y), ExampleValue::Int(x)) => x as f64 == y,
        (ExampleValue::Float(x), ExampleValue::Float(y)) => x == y,
        (ExampleValue::Str(x), ExampleValue::Str(y)) => str_eq(x, y),
        (ExampleValue::Array(x), ExampleValue::Array(y)) => {
            if x.len() != y.len() {
                return false;
            }
            let mut i = 0;
            while i < x.len() {
                if !value_eq(&x[i], &y[i]) {
                    return false;
                }
                i += 1;
            }
            true
        }
        (ExampleValue::Object(x), ExampleValue::Object(y)) => {
            if x.len() != y.len() {
                return false;
            }
            let mut i = 0;
            while i < x.len() {
                let mut found = false;
                let mut j = 0;
                while j < y.len() {
                    if str_eq(x[i].0, y[j].0) {
                        found = value_eq(&x[i].1, &y[j].1);
                        break;
                    }
                    j += 1;
                }
                if !found {
                    return false;
                }
                i += 1;
            }
            true
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::schema::{ArraySchema, Property, Schema};

    const TAGS: Schema = Schema::new(SchemaKind::Array(ArraySchema {
        items: &Schema::string(),
        min_items: Some(1),
        max_items: Some(3),
        unique_items: true,
    }));
    const SEARCH: Schema = Schema::object(&[
        Property {
            name: "query",
            aliases: &["q"],
            schema: &Schema::string().with_length(Some(1), Some(5)),
            required: true,
        },
        Property {
            name: "limit",
            aliases: &[],
            schema: &Schema::integer(Some(1), Some(10)),
            required: false,
        },
        Property { name: "tags", aliases: &[], schema: &TAGS, required: false },
    ]);

    fn problem(value: ExampleValue) -> Option<ExampleProblem> {
        example_problem(&SEARCH, &value)
    }

    #[test]
    fn a_fitting_example_passes_and_becomes_json() {
        const OK: ExampleValue = ExampleValue::Object(&[
            ("q", ExampleValue::Str("rüst")),
            ("limit", ExampleValue::Float(3.0)),
            ("tags", ExampleValue::Array(&[ExampleValue::Str("a"), ExampleValue::Str("b")])),
        ]);
        assert_eq!(problem(OK), None);
        assert_eq!(OK.to_json(), json!({"q": "rüst", "limit": 3.0, "tags": ["a", "b"]}));
    }

    #[test]
    fn each_mismatch_is_named() {
        use ExampleProblem as P;
        use ExampleValue as V;
        let cases: [(V, P); 8] = [
            (V::Object(&[]), P::MissingProperty),
            (V::Object(&[("query", V::Str("abcdef"))]), P::TooLong),
            (V::Object(&[("query", V::Str(""))]), P::TooShort),
            (V::Object(&[("query", V::Str("a")), ("limit", V::Int(11))]), P::AboveMaximum),
            (V::Object(&[("query", V::Str("a")), ("limit", V::Float(1.5))]), P::Type),
            (V::Object(&[("query", V::Str("a")), ("q", V::Str("b"))]), P::GivenTwice),
            (V::Object(&[("query", V::Str("a")), ("page", V::Int(1))]), P::UnknownProperty),
            (
                V::Object(&[
                    ("query", V::Str("a")),
                    ("tags", V::Array(&[V::Str("x"), V::Str("x")])),
                ]),
                P::DuplicateItems,
            ),
        ];
        for (value, expected) in cases {
            assert_eq!(problem(value), Some(expected), "{}", value.to_json());
        }
        assert_eq!(problem(V::Null), Some(P::Null));
        assert_eq!(problem(V::Str("x")), Some(P::Type));
    }
}
