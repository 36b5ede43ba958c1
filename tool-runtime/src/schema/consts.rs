//! `const fn` modifiers and checks over the schema tree.
//!
//! `#[derive(ToolSchema)]` and `#[tool]` apply field constraints with the modifiers (public: a
//! hand-written `ToolSchema` impl uses them too) and turn each check into a compile-time
//! assertion placed on the user's token, so a constraint that cannot apply, a misspelt `redact`
//! path or a `connectionId` property fails the build. The checks are expansion support, reached
//! only through `crate::__private`.

use super::{IntegerSchema, NumberSchema, Schema, SchemaKind};

/// A bound written in `#[schema(range(...))]`: integer literals work for every numeric type,
/// float literals only for floating-point fields.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum RangeBound {
    /// An integer literal.
    Int(i128),
    /// A floating-point literal.
    Float(f64),
}

impl RangeBound {
    const fn as_f64(self) -> f64 {
        match self {
            #[allow(clippy::cast_precision_loss)]
            Self::Int(value) => value as f64,
            Self::Float(value) => value,
        }
    }

    const fn is_int(bound: Option<Self>) -> bool {
        !matches!(bound, Some(Self::Float(_)))
    }

    const fn int(bound: Option<Self>) -> Option<i128> {
        match bound {
            Some(Self::Int(value)) => Some(value),
            _ => None,
        }
    }

    const fn float(bound: Option<Self>) -> Option<f64> {
        match bound {
            Some(bound) => Some(bound.as_f64()),
            None => None,
        }
    }
}

const fn tighter_min_int(a: Option<i128>, b: Option<i128>) -> Option<i128> {
    match (a, b) {
        (Some(a), Some(b)) => Some(if a > b { a } else { b }),
        (Some(x), None) | (None, Some(x)) => Some(x),
        (None, None) => None,
    }
}

const fn tighter_max_int(a: Option<i128>, b: Option<i128>) -> Option<i128> {
    match (a, b) {
        (Some(a), Some(b)) => Some(if a < b { a } else { b }),
        (Some(x), None) | (None, Some(x)) => Some(x),
        (None, None) => None,
    }
}

const fn tighter_min_u64(a: Option<u64>, b: Option<u64>) -> Option<u64> {
    match (a, b) {
        (Some(a), Some(b)) => Some(if a > b { a } else { b }),
        (Some(x), None) | (None, Some(x)) => Some(x),
        (None, None) => None,
    }
}

const fn tighter_max_u64(a: Option<u64>, b: Option<u64>) -> Option<u64> {
    match (a, b) {
        (Some(a), Some(b)) => Some(if a < b { a } else { b }),
        (Some(x), None) | (None, Some(x)) => Some(x),
        (None, None) => None,
    }
}

const fn tighter_min_f64(a: Option<f64>, b: Option<f64>) -> Option<f64> {
    match (a, b) {
        (Some(a), Some(b)) => Some(if a > b { a } else { b }),
        (Some(x), None) | (None, Some(x)) => Some(x),
        (None, None) => None,
    }
}

const fn tighter_max_f64(a: Option<f64>, b: Option<f64>) -> Option<f64> {
    match (a, b) {
        (Some(a), Some(b)) => Some(if a < b { a } else { b }),
        (Some(x), None) | (None, Some(x)) => Some(x),
        (None, None) => None,
    }
}

const fn le_opt_u64(min: Option<u64>, max: Option<u64>) -> bool {
    match (min, max) {
        (Some(min), Some(max)) => min <= max,
        _ => true,
    }
}

/// Whether `length(...)`, `pattern` and `format` apply to `schema` (strings only).
#[doc(hidden)]
#[must_use]
pub const fn accepts_string_constraints(schema: &Schema) -> bool {
    matches!(schema.kind, SchemaKind::String(_))
}

/// Whether `items(...)` applies to `schema` (arrays only).
#[doc(hidden)]
#[must_use]
pub const fn accepts_item_constraints(schema: &Schema) -> bool {
    matches!(schema.kind, SchemaKind::Array(_))
}

/// Whether `range(...)` applies to `schema` (integers and numbers).
#[doc(hidden)]
#[must_use]
pub const fn accepts_range(schema: &Schema) -> bool {
    matches!(schema.kind, SchemaKind::Integer(_) | SchemaKind::Number(_))
}

/// Whether these `range(...)` bounds fit `schema`: integers take integer bounds only.
#[doc(hidden)]
#[must_use]
pub const fn accepts_range_bounds(
    schema: &Schema,
    minimum: Option<RangeBound>,
    maximum: Option<RangeBound>,
    exclusive_minimum: Option<RangeBound>,
    exclusive_maximum: Option<RangeBound>,
) -> bool {
    match schema.kind {
        SchemaKind::Integer(_) => {
            RangeBound::is_int(minimum)
                && RangeBound::is_int(maximum)
                && RangeBound::is_int(exclusive_minimum)
                && RangeBound::is_int(exclusive_maximum)
        }
        SchemaKind::Number(_) => true,
        _ => false,
    }
}

/// Whether some value satisfies `schema`'s own bounds (`minimum <= maximum`, lengths and item
/// counts likewise). Children are not inspected.
#[doc(hidden)]
#[must_use]
pub const fn is_satisfiable(schema: &Schema) -> bool {
    match schema.kind {
        SchemaKind::Integer(IntegerSchema { minimum: Some(min), maximum: Some(max) }) => min <= max,
        SchemaKind::Number(number) => {
            let low = match (number.minimum, number.exclusive_minimum) {
                (Some(a), Some(b)) => Some((if a > b { a } else { b }, a <= b)),
                (Some(a), None) => Some((a, false)),
                (None, Some(b)) => Some((b, true)),
                (None, None) => None,
            };
            let high = match (number.maximum, number.exclusive_maximum) {
                (Some(a), Some(b)) => Some((if a < b { a } else { b }, a >= b)),
                (Some(a), None) => Some((a, false)),
                (None, Some(b)) => Some((b, true)),
                (None, None) => None,
            };
            match (low, high) {
                (Some((low, low_open)), Some((high, high_open))) => {
                    if low_open || high_open {
                        low < high
                    } else {
                        low <= high
                    }
                }
                _ => true,
            }
        }
        SchemaKind::String(string) => le_opt_u64(string.min_length, string.max_length),
        SchemaKind::Array(array) => le_opt_u64(array.min_items, array.max_items),
        SchemaKind::Enum(values) => !values.is_empty(),
        _ => true,
    }
}

impl Schema {
    /// Applies `length(min, max)` to a string schema, keeping the tighter of old and new bounds.
    /// Other kinds are returned unchanged.
    #[must_use]
    pub const fn with_length(self, min: Option<u64>, max: Option<u64>) -> Self {
        match self.kind {
            SchemaKind::String(mut string) => {
                string.min_length = tighter_min_u64(string.min_length, min);
                string.max_length = tighter_max_u64(string.max_length, max);
                Self { kind: SchemaKind::String(string), ..self }
            }
            _ => self,
        }
    }

    /// Applies `pattern` to a string schema; other kinds are returned unchanged.
    #[must_use]
    pub const fn with_pattern(self, pattern: &'static str) -> Self {
        match self.kind {
            SchemaKind::String(mut string) => {
                string.pattern = Some(pattern);
                Self { kind: SchemaKind::String(string), ..self }
            }
            _ => self,
        }
    }

    /// Applies `format` to a string schema; other kinds are returned unchanged.
    #[must_use]
    pub const fn with_format(self, format: &'static str) -> Self {
        match self.kind {
            SchemaKind::String(mut string) => {
                string.format = Some(format);
                Self { kind: SchemaKind::String(string), ..self }
            }
            _ => self,
        }
    }

    /// Applies `items(min, max)` to an array schema, keeping the tighter bounds; other kinds are
    /// returned unchanged.
    #[must_use]
    pub const fn with_items(self, min: Option<u64>, max: Option<u64>) -> Self {
        match self.kind {
            SchemaKind::Array(mut array) => {
                array.min_items = tighter_min_u64(array.min_items, min);
                array.max_items = tighter_max_u64(array.max_items, max);
                Self { kind: SchemaKind::Array(array), ..self }
            }
            _ => self,
        }
    }

    /// Applies `range(...)` to a numeric schema, keeping the tighter of the type's bounds and
    /// the new ones. Exclusive integer bounds become inclusive ones. Other kinds, and float
    /// bounds on integers, are returned unchanged.
    #[must_use]
    pub const fn with_range(
        self,
        minimum: Option<RangeBound>,
        maximum: Option<RangeBound>,
        exclusive_minimum: Option<RangeBound>,
        exclusive_maximum: Option<RangeBound>,
    ) -> Self {
        if !accepts_range_bounds(&self, minimum, maximum, exclusive_minimum, exclusive_maximum) {
            return self;
        }
        match self.kind {
            SchemaKind::Integer(int) => {
                let mut min = tighter_min_int(int.minimum, RangeBound::int(minimum));
                if let Some(exclusive) = RangeBound::int(exclusive_minimum) {
                    min = tighter_min_int(min, Some(exclusive.saturating_add(1)));
                }
                let mut max = tighter_max_int(int.maximum, RangeBound::int(maximum));
                if let Some(exclusive) = RangeBound::int(exclusive_maximum) {
                    max = tighter_max_int(max, Some(exclusive.saturating_sub(1)));
                }
                Self {
                    kind: SchemaKind::Integer(IntegerSchema { minimum: min, maximum: max }),
                    ..self
                }
            }
            SchemaKind::Number(number) => Self {
                kind: SchemaKind::Number(NumberSchema {
                    minimum: tighter_min_f64(number.minimum, RangeBound::float(minimum)),
                    maximum: tighter_max_f64(number.maximum, RangeBound::float(maximum)),
                    exclusive_minimum: tighter_min_f64(
                        number.exclusive_minimum,
                        RangeBound::float(exclusive_minimum),
                    ),
                    exclusive_maximum: tighter_max_f64(
                        number.exclusive_maximum,
                        RangeBound::float(exclusive_maximum),
                    ),
                }),
                ..self
            },
            _ => self,
        }
    }
}

/// Whether any property at any depth of `schema` is a connection id
/// ([`tool_rules::is_connection_id`]), by its name or by one of its aliases (an alias is
/// accepted on input just as the name is).
#[doc(hidden)]
#[must_use]
pub const fn contains_connection_id(schema: &Schema) -> bool {
    match schema.kind {
        SchemaKind::Array(array) => contains_connection_id(array.items),
        SchemaKind::Object(object) => {
            let mut i = 0;
            while i < object.properties.len() {
                let property = &object.properties[i];
                if tool_rules::is_connection_id(property.name)
                    || contains_connection_id(property.schema)
                {
                    return true;
                }
                let mut j = 0;
                while j < property.aliases.len() {
                    if tool_rules::is_connection_id(property.aliases[j]) {
                        return true;
                    }
                    j += 1;
                }
                i += 1;
            }
            false
        }
        _ => false,
    }
}

/// Whether a dotted path (`"hits.title"`) names a property of `schema`. Arrays are walked
/// through: a segment after an array names a property of its items.
#[doc(hidden)]
#[must_use]
pub const fn has_path(schema: &Schema, path: &str) -> bool {
    let bytes = path.as_bytes();
    let mut node = schema;
    let mut start = 0;
    loop {
        let mut end = start;
        while end < bytes.len() && bytes[end] != b'.' {
            end += 1;
        }
        if end == start {
            return false;
        }
        let (_, rest) = bytes.split_at(start);
        let (segment, _) = rest.split_at(end - start);
        while let SchemaKind::Array(array) = node.kind {
            node = array.items;
        }
        let SchemaKind::Object(object) = node.kind else {
            return false;
        };
        let mut found = None;
        let mut i = 0;
        while i < object.properties.len() {
            if str_eq_bytes(object.properties[i].name.as_bytes(), segment) {
                found = Some(object.properties[i].schema);
                break;
            }
            i += 1;
        }
        match found {
            Some(child) => node = child,
            None => return false,
        }
        if end == bytes.len() {
            return true;
        }
        start = end + 1;
    }
}

/// [`has_path`] in an output schema; an output without a structured part has no paths.
#[doc(hidden)]
#[must_use]
pub const fn has_output_path(schema: Option<&Schema>, path: &str) -> bool {
    match schema {
        Some(schema) => has_path(schema, path),
        None => false,
    }
}

/// Whether an output (or details) schema has fields a `redact` path can name: an object, or an
/// array (of arrays) of objects. A string, number, `bool`, unit enum, an array of those, or no
/// structured part at all has none: it is kept whole or not at all.
#[doc(hidden)]
#[must_use]
pub const fn has_fields(schema: Option<&Schema>) -> bool {
    let Some(mut node) = schema else {
        return false;
    };
    while let SchemaKind::Array(array) = node.kind {
        node = array.items;
    }
    matches!(node.kind, SchemaKind::Object(_))
}

/// Levels of object nesting in `schema` as OpenAI's strict mode counts them: the arguments
/// object is level 1, an object in one of its properties level 2; arrays add no level.
#[doc(hidden)]
#[must_use]
pub const fn object_depth(schema: &Schema) -> usize {
    match schema.kind {
        SchemaKind::Array(array) => object_depth(array.items),
        SchemaKind::Object(object) => {
            let mut deepest = 0;
            let mut i = 0;
            while i < object.properties.len() {
                let depth = object_depth(object.properties[i].schema);
                if depth > deepest {
                    deepest = depth;
                }
                i += 1;
            }
            deepest + 1
        }
        _ => 0,
    }
}

/// The deepest object nesting OpenAI's strict mode accepts in one tool's parameters.
#[doc(hidden)]
pub const MAX_STRICT_DEPTH: usize = 10;

pub(super) const fn str_eq_bytes(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    let mut i = 0;
    while i < a.len() {
        if a[i] != b[i] {
            return false;
        }
        i += 1;
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schema::Property;

    const HIT: Schema = Schema::object(&[
        Property { name: "title", schema: &Schema::string(), required: true, aliases: &[] },
        Property { name: "connection-id", schema: &Schema::string(), required: true, aliases: &[] },
    ]);
    const HITS: Schema = Schema::object(&[
        Property { name: "hits", schema: &Schema::array(&HIT), required: true, aliases: &[] },
        Property {
            name: "total",
            schema: &Schema::integer(None, None),
            required: true,
            aliases: &[],
        },
    ]);

    #[test]
    fn paths_walk_objects_and_array_items() {
        assert!(has_path(&HITS, "hits.title"));
        assert!(has_path(&HITS, "total"));
        assert!(has_path(&HITS, "hits"));
        for missing in ["hits.url", "total.x", "", ".", "hits.", ".hits", "hits..title"] {
            assert!(!has_path(&HITS, missing), "{missing:?}");
        }
    }

    #[test]
    fn fields_are_objects_reached_through_arrays() {
        const STRINGS: Schema = Schema::array(&Schema::string());
        const NESTED: Schema = Schema::array(&Schema::array(&HIT));
        assert!(has_fields(Some(&HITS)) && has_fields(Some(&NESTED)));
        assert!(!has_fields(Some(&STRINGS)) && !has_fields(Some(&Schema::string())));
        assert!(!has_fields(None));
        assert!(has_path(&NESTED, "title"));
    }

    #[test]
    fn connection_ids_are_found_at_any_depth() {
        assert!(contains_connection_id(&HIT));
        assert!(contains_connection_id(&HITS));
        const STRINGS: Schema = Schema::array(&Schema::string());
        assert!(!contains_connection_id(&STRINGS));
    }

    #[test]
    fn a_connection_id_alias_is_found_too() {
        const ALIASED: Schema = Schema::object(&[Property {
            name: "account",
            schema: &Schema::string(),
            required: true,
            aliases: &["connection_id"],
        }]);
        assert!(contains_connection_id(&ALIASED));
    }

    #[test]
    fn constraint_kinds_and_satisfiability() {
        let string = Schema::string();
        assert!(accepts_string_constraints(&string) && !accepts_range(&string));
        assert!(accepts_item_constraints(&Schema::array(&HIT)));
        let int = Schema::integer(None, None);
        assert!(!accepts_range_bounds(&int, Some(RangeBound::Float(0.5)), None, None, None));
        assert!(is_satisfiable(&string.with_length(Some(1), Some(1))));
        assert!(!is_satisfiable(&string.with_length(Some(2), Some(1))));
        assert!(!is_satisfiable(&int.with_range(
            None,
            None,
            Some(RangeBound::Int(3)),
            Some(RangeBound::Int(4))
        )));
    }
}
