//! The walk: checks a [`Value`] against the schema tree and reports every violation with a
//! JSON pointer. What each constraint admits is decided in `rules`; this module finds the
//! values, keeps the path and writes the messages.
//!
//! It also holds what the validators `#[derive(ToolSchema)]` and `#[tool]` generate call
//! ([`validate_as`], [`check_struct`], [`Entries::check_property`]): the walk's own object code
//! ([`Entries`]) with each field's check known at compile time, so both report the same.

use std::fmt::{self, Write as _};

use serde_json::{Map, Number, Value};

use super::rules::{
    PatternBreak, char_count, cmp_int, enum_index, integral_float, property_index, same_str,
};
use super::strict::Shown;
use super::{
    ArraySchema, Constraint, IntegerSchema, NumberSchema, Property, Schema, SchemaKind,
    StringSchema, ToolSchema, ValidationErrors,
};

fn json_type(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(number) if number.is_f64() => "number",
        Value::Number(_) => "integer",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

fn expected_type(schema: &Schema) -> &'static str {
    match (schema.type_name(), schema.nullable) {
        ("boolean", false) => "boolean",
        ("boolean", true) => "boolean or null",
        ("integer", false) => "integer",
        ("integer", true) => "integer or null",
        ("number", false) => "number",
        ("number", true) => "number or null",
        ("string", false) => "string",
        ("string", true) => "string or null",
        ("array", false) => "array",
        ("array", true) => "array or null",
        (_, false) => "object",
        (_, true) => "object or null",
    }
}

/// Where a value sits in the document being validated: a chain of segments on the stack,
/// rendered as a JSON pointer only when an error is recorded there (most values have none).
///
/// Public for the validators `#[derive(ToolSchema)]` and `#[tool]` generate
/// ([`ToolSchema::check_at`]); not part of the API.
#[doc(hidden)]
#[derive(Debug, Clone, Copy)]
pub enum Path<'a> {
    Root,
    /// A property of the schema (its name or an alias).
    Key(&'a Path<'a>, &'a str),
    /// A key the sender chose (an unknown property): escaped and cut when rendered.
    Unknown(&'a Path<'a>, &'a str),
    Index(&'a Path<'a>, usize),
}

impl Path<'_> {
    fn render(&self, pointer: &mut String) {
        match self {
            Self::Root => {}
            Self::Key(parent, key) => {
                parent.render(pointer);
                push_pointer_segment(pointer, key);
            }
            Self::Unknown(parent, key) => {
                parent.render(pointer);
                push_unknown_segment(pointer, key);
            }
            Self::Index(parent, index) => {
                parent.render(pointer);
                pointer.push('/');
                push_decimal(pointer, *index as u64);
            }
        }
    }
}

/// Appends `n` in decimal, without the formatting machinery.
fn push_decimal(out: &mut String, mut n: u64) {
    let mut digits = [0_u8; 20];
    let mut start = digits.len();
    loop {
        start -= 1;
        // `n % 10` is below 10.
        #[allow(clippy::cast_possible_truncation)]
        let digit = (n % 10) as u8;
        digits[start] = b'0' + digit;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    for &digit in &digits[start..] {
        out.push(char::from(digit));
    }
}

/// What one validation found: its errors, whether an integer position held an integral
/// float, and whether a property was given under an alias.
///
/// Public for the generated validators, as [`Path`] is; not part of the API.
#[doc(hidden)]
#[derive(Debug, Default)]
pub struct Findings {
    errors: ValidationErrors,
    integral_floats: bool,
    aliases: bool,
}

impl Findings {
    /// `Ok` when nothing was found wrong, else the errors.
    fn into_result(self) -> Result<(), ValidationErrors> {
        if self.errors.is_empty() { Ok(()) } else { Err(self.errors) }
    }

    /// Records an error at `path`: the pointer and the message are written into one string
    /// with room for both, so an error costs one allocation.
    #[cold]
    #[inline(never)]
    fn push(&mut self, path: &Path<'_>, constraint: Constraint, message: fmt::Arguments<'_>) {
        self.push_with(path, constraint, |text| {
            let _ = text.write_fmt(message);
        });
    }

    #[cold]
    #[inline(never)]
    fn push_with(
        &mut self,
        path: &Path<'_>,
        constraint: Constraint,
        message: impl FnOnce(&mut String),
    ) {
        self.errors.push_capped(constraint, 96, |text| {
            path.render(text);
            let split = text.len();
            message(text);
            split
        });
    }
}

/// Appends `/segment`, escaped as RFC 6901 says (`~0`, `~1`).
#[inline]
fn push_pointer_segment(pointer: &mut String, segment: &str) {
    pointer.push('/');
    if !segment.bytes().any(|byte| matches!(byte, b'~' | b'/')) {
        pointer.push_str(segment);
        return;
    }
    for c in segment.chars() {
        match c {
            '~' => pointer.push_str("~0"),
            '/' => pointer.push_str("~1"),
            c => pointer.push(c),
        }
    }
}

/// Unknown keys longer than this many characters are cut.
const MAX_SEGMENT_CHARS: usize = 64;

/// [`push_pointer_segment`] for a key the sender chose: pointers reach logs and the model, so
/// control characters are written as `\u{..}` escapes and the key is cut after 64
/// characters, marked `...`.
#[inline(never)]
fn push_unknown_segment(pointer: &mut String, segment: &str) {
    let plain = segment.len() <= MAX_SEGMENT_CHARS
        && !segment.bytes().any(|byte| matches!(byte, 0..=0x1f | 0x7f));
    if plain {
        push_pointer_segment(pointer, segment);
        return;
    }
    pointer.push('/');
    for (count, c) in segment.chars().enumerate() {
        if count == MAX_SEGMENT_CHARS {
            pointer.push_str("...");
            break;
        }
        match c {
            '~' => pointer.push_str("~0"),
            '/' => pointer.push_str("~1"),
            c if c.is_control() => pointer.extend(c.escape_unicode()),
            c => pointer.push(c),
        }
    }
}

/// Checks an integer's bounds; `false` when the number is not an integer (`3.5`). An integer
/// within bounds, the common case, is decided inline.
#[inline(always)]
fn check_integer(
    int: &IntegerSchema,
    number: &Number,
    path: &Path<'_>,
    out: &mut Findings,
) -> bool {
    if let Some(value) = number.as_i64()
        && int.admits(i128::from(value))
    {
        return true;
    }
    check_integer_bounds(int, number, path, out)
}

/// [`check_integer`] for the rest: out-of-range values, integers beyond `i64`, floats.
#[inline(never)]
fn check_integer_bounds(
    int: &IntegerSchema,
    number: &Number,
    path: &Path<'_>,
    out: &mut Findings,
) -> bool {
    let exact = number.as_u64().map(i128::from).or_else(|| number.as_i64().map(i128::from));
    if exact.is_none() {
        if !integral_float(number) {
            return false;
        }
        out.integral_floats = true;
    }
    let cmp = |bound: i128| match exact {
        Some(value) => value.cmp(&bound),
        None => cmp_int(number, bound),
    };
    if let Some(min) = int.broken_minimum(cmp) {
        #[allow(clippy::cast_precision_loss)]
        let bound = min as f64;
        out.push(
            path,
            Constraint::Minimum(bound),
            format_args!("expected an integer of at least {min}"),
        );
    }
    if let Some(max) = int.broken_maximum(cmp) {
        #[allow(clippy::cast_precision_loss)]
        let bound = max as f64;
        out.push(
            path,
            Constraint::Maximum(bound),
            format_args!("expected an integer of at most {max}"),
        );
    }
    true
}

#[inline]
fn check_number(num: &NumberSchema, number: &Number, path: &Path<'_>, out: &mut Findings) {
    let value = number.as_f64().unwrap_or(0.0);
    if let Some(min) = num.broken_minimum(value) {
        out.push(
            path,
            Constraint::Minimum(min),
            format_args!("expected a number of at least {min}"),
        );
    }
    if let Some(max) = num.broken_maximum(value) {
        out.push(
            path,
            Constraint::Maximum(max),
            format_args!("expected a number of at most {max}"),
        );
    }
    if let Some(min) = num.broken_exclusive_minimum(value) {
        out.push(
            path,
            Constraint::ExclusiveMinimum(min),
            format_args!("expected a number greater than {min}"),
        );
    }
    if let Some(max) = num.broken_exclusive_maximum(value) {
        out.push(
            path,
            Constraint::ExclusiveMaximum(max),
            format_args!("expected a number less than {max}"),
        );
    }
}

#[inline(never)]
fn check_string(string: &StringSchema, text: &str, path: &Path<'_>, out: &mut Findings) {
    if !string.length_certain(text.len()) {
        let length = char_count(text);
        if let Some(min) = string.broken_min_length(length) {
            out.push(
                path,
                Constraint::MinLength(min),
                format_args!("expected at least {min} characters, got {length}"),
            );
        }
        if let Some(max) = string.broken_max_length(length) {
            out.push(
                path,
                Constraint::MaxLength(max),
                format_args!("expected at most {max} characters, got {length}"),
            );
        }
    }
    match string.broken_pattern(text) {
        None => {}
        Some((pattern, PatternBreak::NoMatch)) => {
            out.push_with(path, Constraint::Pattern(pattern), |message| {
                message.push_str("expected a string matching the pattern `");
                message.push_str(pattern);
                message.push('`');
            });
        }
        Some((pattern, PatternBreak::Invalid)) => out.push(
            path,
            Constraint::Pattern(pattern),
            format_args!("the pattern `{pattern}` cannot be compiled, so no string matches it"),
        ),
    }
}

#[cold]
#[inline(never)]
fn enum_error(values: &'static [&'static str], path: &Path<'_>, out: &mut Findings) {
    out.push_with(path, Constraint::Enum(values), |message| {
        message.push_str("expected one of ");
        for (i, value) in values.iter().enumerate() {
            if i > 0 {
                message.push_str(", ");
            }
            message.push('`');
            message.push_str(value);
            message.push('`');
        }
    });
}

#[inline(never)]
fn check_array(array: &ArraySchema, items: &[Value], path: &Path<'_>, out: &mut Findings) {
    check_item_count(array, items, path, out);
    for (index, item) in items.iter().enumerate() {
        array.items.check(item, &Path::Index(path, index), out);
    }
}

/// An array's own constraints (`minItems`, `maxItems`, `uniqueItems`), not its items'.
#[inline]
fn check_item_count(array: &ArraySchema, items: &[Value], path: &Path<'_>, out: &mut Findings) {
    let count = items.len() as u64;
    if let Some(min) = array.broken_min_items(count) {
        out.push(
            path,
            Constraint::MinItems(min),
            format_args!("expected at least {min} items, got {count}"),
        );
    }
    if let Some(max) = array.broken_max_items(count) {
        out.push(
            path,
            Constraint::MaxItems(max),
            format_args!("expected at most {max} items, got {count}"),
        );
    }
    if let Some((i, j)) = array.broken_unique_items(items) {
        out.push(
            path,
            Constraint::UniqueItems,
            format_args!("expected unique items, but items {i} and {j} are equal"),
        );
    }
}

/// Up to this many entries, an object's entries are scanned for a property sent out of order or
/// absent rather than hashed: comparing lengths first, the scan costs less than hashing the name.
const SCAN_LIMIT: usize = 16;

/// Checks the properties of a closed object, then reports the keys it does not list and the
/// properties given under two of their names (a name and an alias).
#[inline(never)]
fn check_object(
    properties: &'static [Property],
    map: &Map<String, Value>,
    path: &Path<'_>,
    out: &mut Findings,
) {
    let mut entries = Entries::new(map);
    for property in properties {
        entries.check_property(property, path, out, walk);
    }
    entries.finish(properties, path, out);
}

/// A check of one value against a schema: the walk ([`walk`]) or a type's generated
/// validator ([`ToolSchema::check_at`]).
#[doc(hidden)]
pub type Check = fn(&'static Schema, &Value, &Path<'_>, &mut Findings);

/// [`Check`] by walking the schema tree: what [`ToolSchema::check_at`] does unless a type's
/// own validator was generated.
#[inline(always)]
pub(super) fn walk(schema: &'static Schema, value: &Value, path: &Path<'_>, out: &mut Findings) {
    schema.check(value, path, out);
}

/// The entries of an object being checked, property by property, in the schema's order.
///
/// Models mostly send properties in schema order: each property is first looked for at the
/// next entry of the map, without hashing. The entries taken that way are a prefix of the map.
/// Public for the generated validators; not part of the API.
#[doc(hidden)]
#[derive(Debug)]
pub struct Entries<'v> {
    map: &'v Map<String, Value>,
    rest: serde_json::map::Iter<'v>,
    next: Option<(&'v String, &'v Value)>,
}

impl<'v> Entries<'v> {
    #[inline(always)]
    fn new(map: &'v Map<String, Value>) -> Self {
        let mut rest = map.iter();
        let next = rest.next();
        Self { map, rest, next }
    }

    /// The value of property `name`: the next entry when it has that key, else looked up.
    #[inline(always)]
    fn take(&mut self, name: &str) -> Option<&'v Value> {
        match self.next {
            Some((key, child)) if same_str(key, name) => {
                self.next = self.rest.next();
                Some(child)
            }
            _ => lookup(self.map, name),
        }
    }

    /// Checks `property` (with `check` for its value): present, given under an alias, or
    /// absent. A generated struct validator calls it once per field, with the field's
    /// `Property` (a constant of the struct's schema) and its type's validator.
    #[doc(hidden)]
    #[inline(always)]
    pub fn check_property(
        &mut self,
        property: &'static Property,
        path: &Path<'_>,
        out: &mut Findings,
        check: Check,
    ) {
        match self.take(property.name) {
            Some(child) => check(property.schema, child, &Path::Key(path, property.name), out),
            None if !property.aliases.is_empty() => {
                check_by_alias(property, self.map, path, out, check);
            }
            None if property.required => missing(property, path, out),
            None => {}
        }
    }

    /// After every property: the keys the object does not list, and the properties given
    /// under two of their names.
    ///
    /// When the in-order walk took every entry, every key is a property's name, each a
    /// different property's. Otherwise the keys it took are, and each of the others is
    /// unknown, an alias, or a name taken out of order.
    #[inline(always)]
    fn finish(self, properties: &[Property], path: &Path<'_>, out: &mut Findings) {
        if self.next.is_some() {
            check_rest(properties, self.map, self.map.len() - self.rest.len() - 1, path, out);
        }
    }
}

/// [`Entries::finish`] for an object whose entries were not all taken in order: the entries
/// from `in_order` on.
#[inline(never)]
fn check_rest(
    properties: &[Property],
    map: &Map<String, Value>,
    in_order: usize,
    path: &Path<'_>,
    out: &mut Findings,
) {
    for key in map.keys().skip(in_order) {
        match property_index(properties, key) {
            None => {
                out.push_with(
                    &Path::Unknown(path, key),
                    Constraint::AdditionalProperty,
                    |message| {
                        message.push_str("unknown property `");
                        push_shown(message, key);
                        message.push('`');
                    },
                );
            }
            Some(index) if !properties[index].aliases.is_empty() => {
                check_given_once(&properties[index], key, map, path, out);
            }
            Some(_) => {}
        }
    }
}

/// The value of `name` in `map`: up to [`SCAN_LIMIT`] entries, by comparing keys (lengths
/// first), beyond that by hashing.
#[inline(always)]
fn lookup<'v>(map: &'v Map<String, Value>, name: &str) -> Option<&'v Value> {
    if map.len() <= SCAN_LIMIT {
        map.iter().find_map(|(key, child)| same_str(key, name).then_some(child))
    } else {
        map.get(name)
    }
}

/// Checks a property that `map` does not hold under its name: under its first alias that it
/// holds (errors point at the alias, the key as sent), or reports it missing.
#[inline(never)]
fn check_by_alias(
    property: &'static Property,
    map: &Map<String, Value>,
    path: &Path<'_>,
    out: &mut Findings,
    check: Check,
) {
    let found =
        property.aliases.iter().find_map(|&alias| lookup(map, alias).map(|child| (alias, child)));
    match found {
        Some((alias, child)) => {
            out.aliases = true;
            check(property.schema, child, &Path::Key(path, alias), out);
        }
        None if property.required => missing(property, path, out),
        None => {}
    }
}

/// Reports a required property absent under every name.
#[cold]
#[inline(never)]
fn missing(property: &Property, path: &Path<'_>, out: &mut Findings) {
    out.push(
        &Path::Key(path, property.name),
        Constraint::Required,
        format_args!("missing required property"),
    );
}

/// Reports `key` (one of `property`'s names) when `map` also holds a name of the property that
/// comes before it (name first, then the aliases in order): serde would refuse the object as a
/// duplicate field, and which value was meant is unknown.
#[cold]
#[inline(never)]
fn check_given_once(
    property: &Property,
    key: &str,
    map: &Map<String, Value>,
    path: &Path<'_>,
    out: &mut Findings,
) {
    let earlier = property
        .names()
        .take_while(|name| !same_str(name, key))
        .find(|name| map.contains_key(*name));
    if let Some(earlier) = earlier {
        out.push_with(
            &Path::Key(path, key),
            Constraint::GivenTwice { property: property.name },
            |message| {
                message.push_str("property `");
                message.push_str(property.name);
                message.push_str("` given twice, as `");
                message.push_str(earlier);
                message.push_str("` and `");
                push_shown(message, key);
                message.push('`');
            },
        );
    }
}

/// Writes `Shown(text)` (cut to 64 characters, escaped) without the formatting machinery when
/// there is nothing to cut or escape.
fn push_shown(out: &mut String, text: &str) {
    let plain = text.len() <= 64
        && text
            .bytes()
            .all(|byte| matches!(byte, b' '..=b'~') && !matches!(byte, b'\\' | b'\'' | b'"'));
    if plain {
        out.push_str(text);
    } else {
        let _ = write!(out, "{}", Shown(text));
    }
}

// ---------------------------------------------------------------------------------------------
// Generated validators
// ---------------------------------------------------------------------------------------------

/// Checks `value` against `T`'s schema with `T`'s own validator and collects every violation,
/// exactly as [`Schema::validate`] on `T::SCHEMA` does: the same errors, pointers and messages,
/// in the same order.
///
/// `#[derive(ToolSchema)]` and `#[tool]` generate each type's validator at compile time: one
/// check per field, with the field's constraints and key known, instead of a walk over the
/// schema tree. The runner validates the arguments of a `#[tool]` with it; the tree walk stays
/// for schemas built at run time (dynamic and imported tools) and for hand-written
/// [`ToolSchema`] implementations, whose validator is the walk.
///
/// ```
/// use tool_runtime::prelude::*;
/// use tool_runtime::schema::validate_as;
///
/// #[derive(Deserialize, ToolSchema)]
/// struct Page {
///     #[schema(range(min = 1, max = 50))]
///     size: u8,
///     cursor: Option<String>,
/// }
///
/// assert!(validate_as::<Page>(&serde_json::json!({"size": 20})).is_ok());
/// let errors = validate_as::<Page>(&serde_json::json!({"size": 99, "x": 1})).unwrap_err();
/// let pointers: Vec<&str> = errors.iter().map(|error| error.pointer()).collect();
/// assert_eq!(pointers, ["/size", "/x"]);
/// assert_eq!(Err(errors), Page::SCHEMA.validate(&serde_json::json!({"size": 99, "x": 1})));
/// ```
///
/// # Errors
///
/// [`ValidationErrors`] listing every violation found.
pub fn validate_as<T: ToolSchema>(value: &Value) -> Result<(), ValidationErrors> {
    findings_as::<T>(value).into_result()
}

/// [`validate_as`], then, when it passes, [`Schema::normalize`] if there is work for it (some
/// integer position holds an integral float, or some property was given under an alias):
/// afterwards the value deserialises as the schema promised and names every property by its
/// name.
pub(crate) fn validate_and_normalize_as<T: ToolSchema>(
    value: &mut Value,
) -> Result<(), ValidationErrors> {
    let out = findings_as::<T>(value);
    if !out.errors.is_empty() {
        return Err(out.errors);
    }
    if out.integral_floats || out.aliases {
        T::SCHEMA.normalize(value);
    }
    Ok(())
}

#[inline]
fn findings_as<T: ToolSchema>(value: &Value) -> Findings {
    let mut out = Findings::default();
    T::check_at(T::SCHEMA, value, &Path::Root, &mut out);
    out
}

/// A value that is not what `schema` describes at all: fine when it is `null` and the schema
/// accepts it, else a type error.
#[inline(always)]
fn other_type(schema: &Schema, value: &Value, path: &Path<'_>, out: &mut Findings) {
    if !(schema.nullable && value.is_null()) {
        schema.type_error(value, path, out);
    }
}

/// The generated validator of a struct with named fields: `fields` checks each property (with
/// [`Entries::check_property`]), in the schema's order; then the keys no property takes are
/// reported.
#[doc(hidden)]
#[inline(always)]
pub fn check_struct(
    schema: &'static Schema,
    properties: &'static [Property],
    value: &Value,
    path: &Path<'_>,
    out: &mut Findings,
    fields: impl FnOnce(&mut Entries<'_>, &Path<'_>, &mut Findings),
) {
    match value {
        Value::Object(map) => {
            let mut entries = Entries::new(map);
            fields(&mut entries, path, out);
            entries.finish(properties, path, out);
        }
        _ => other_type(schema, value, path, out),
    }
}

/// The validator of an array whose items are `T`s (`Vec`, arrays, sets): its own constraints
/// from `schema`, then each item with `T`'s validator.
#[inline(always)]
pub(super) fn check_items<T: ToolSchema>(
    schema: &'static Schema,
    value: &Value,
    path: &Path<'_>,
    out: &mut Findings,
) {
    match (value, &schema.kind) {
        (Value::Array(items), SchemaKind::Array(array)) => {
            check_item_count(array, items, path, out);
            for (index, item) in items.iter().enumerate() {
                T::check_at(array.items, item, &Path::Index(path, index), out);
            }
        }
        _ => other_type(schema, value, path, out),
    }
}

/// The properties of an object schema, for generated validators (`const` blocks); empty for
/// any other schema.
#[doc(hidden)]
#[must_use]
pub const fn properties_of(schema: &'static Schema) -> &'static [Property] {
    match schema.properties() {
        Some(properties) => properties,
        None => &[],
    }
}

impl Schema {
    /// Checks `value` against this schema and collects every violation, each with a JSON
    /// pointer, the broken [`Constraint`] and a message that never repeats the value.
    ///
    /// `format` is an annotation and is not checked, as in JSON Schema 2020-12. Numbers compare
    /// exactly (`1.8446744073709552e19` is above `u64::MAX`), and `pattern` has its ECMA-262
    /// meaning where Rust's `regex` differs: `\d`, `\w`, `\s` and `\b` are ASCII digits, ASCII
    /// word characters, ECMA white space and ASCII word boundaries.
    ///
    /// ```
    /// use tool_runtime::prelude::*;
    /// use tool_runtime::schema::Constraint;
    ///
    /// let errors = <Vec<u8> as ToolSchema>::SCHEMA
    ///     .validate(&serde_json::json!([1, 300, "x"]))
    ///     .unwrap_err();
    /// assert_eq!(errors.len(), 2);
    /// let first = errors.iter().next().unwrap();
    /// assert_eq!(first.pointer(), "/1");
    /// assert_eq!(first.constraint(), Constraint::Maximum(255.0));
    /// ```
    ///
    /// # Errors
    ///
    /// [`ValidationErrors`] listing every violation found.
    pub fn validate(&self, value: &Value) -> Result<(), ValidationErrors> {
        let mut out = Findings::default();
        self.check(value, &Path::Root, &mut out);
        out.into_result()
    }

    /// Whether `value` satisfies this schema (no error details are built).
    #[must_use]
    pub fn is_valid(&self, value: &Value) -> bool {
        self.validate(value).is_ok()
    }

    /// Dispatches on the value's type first: scalars are checked inline, in the loop over an
    /// object's properties or an array's items, and containers out of line. (Left to itself,
    /// the compiler keeps this a call per value, which costs more than most checks.)
    #[inline(always)]
    fn check(&self, value: &Value, path: &Path<'_>, out: &mut Findings) {
        match (value, &self.kind) {
            (Value::Null, _) if self.nullable => {}
            (Value::Bool(_), SchemaKind::Boolean) => {}
            (Value::Number(number), SchemaKind::Integer(int)) => {
                if !check_integer(int, number, path, out) {
                    self.type_error(value, path, out);
                }
            }
            (Value::Number(number), SchemaKind::Number(num)) => {
                check_number(num, number, path, out)
            }
            (Value::String(text), SchemaKind::String(string)) => {
                if string.pattern.is_some() || !string.length_certain(text.len()) {
                    check_string(string, text, path, out);
                }
            }
            (Value::String(text), SchemaKind::Enum(values)) => {
                if enum_index(values, text).is_none() {
                    enum_error(values, path, out);
                }
            }
            (Value::Array(items), SchemaKind::Array(array)) => check_array(array, items, path, out),
            (Value::Object(map), SchemaKind::Object(object)) => {
                check_object(object.properties, map, path, out);
            }
            _ => self.type_error(value, path, out),
        }
    }

    #[cold]
    #[inline(never)]
    fn type_error(&self, value: &Value, path: &Path<'_>, out: &mut Findings) {
        let expected = expected_type(self);
        out.push_with(path, Constraint::Type { expected }, |message| {
            message.push_str("expected ");
            message.push_str(expected);
            message.push_str(", got ");
            message.push_str(json_type(value));
        });
    }

    /// Rewrites a value that passed [`Schema::validate`] in its canonical form: integral floats
    /// (`3.0`) in integer positions become integers, so that it deserialises as the schema
    /// promised, and a property given under one of its `#[serde(alias)]` keys is renamed to
    /// the property's name, in the place the alias held. What reads the value afterwards (a
    /// guard, a record, an approval hash) sees one spelling of every argument.
    ///
    /// ```
    /// use tool_runtime::prelude::*;
    ///
    /// #[derive(Deserialize, ToolSchema)]
    /// struct Read {
    ///     #[serde(alias = "file")]
    ///     path: String,
    ///     lines: Option<u32>,
    /// }
    ///
    /// let mut value = serde_json::json!({"file": "/tmp/a", "lines": 3.0});
    /// assert!(Read::SCHEMA.is_valid(&value));
    /// Read::SCHEMA.normalize(&mut value);
    /// assert_eq!(value.to_string(), r#"{"path":"/tmp/a","lines":3}"#);
    /// ```
    pub fn normalize(&self, value: &mut Value) {
        match (&self.kind, value) {
            (SchemaKind::Integer(_), Value::Number(number)) if number.is_f64() => {
                // Exact casts only: `i64::MIN as f64` is -2^63 exactly, `u64::MAX as f64` is
                // 2^64, one past the range.
                if let Some(float) = number.as_f64().filter(|float| float.fract() == 0.0) {
                    #[allow(
                        clippy::cast_possible_truncation,
                        clippy::cast_precision_loss,
                        clippy::cast_sign_loss
                    )]
                    let replacement = if float < 0.0 && float >= i64::MIN as f64 {
                        Some(Number::from(float as i64))
                    } else if float >= 0.0 && float < u64::MAX as f64 {
                        Some(Number::from(float as u64))
                    } else {
                        None
                    };
                    if let Some(replacement) = replacement {
                        *number = replacement;
                    }
                }
            }
            (SchemaKind::Array(array), Value::Array(items)) => {
                for item in items {
                    array.items.normalize(item);
                }
            }
            (SchemaKind::Object(object), Value::Object(map)) => {
                rename_aliases(object.properties, map);
                for property in object.properties {
                    if let Some(child) = map.get_mut(property.name) {
                        property.schema.normalize(child);
                    }
                }
            }
            _ => {}
        }
    }
}

/// Renames the key of each property that `map` holds under an alias and not under its name
/// (the first alias present, the one validation read) to the property's name, keeping the
/// order of the entries.
fn rename_aliases(properties: &[Property], map: &mut Map<String, Value>) {
    let renames: Vec<(&str, &'static str)> = properties
        .iter()
        .filter(|property| !property.aliases.is_empty() && !map.contains_key(property.name))
        .filter_map(|property| {
            let alias = property.aliases.iter().find(|alias| map.contains_key(**alias))?;
            Some((*alias, property.name))
        })
        .collect();
    if renames.is_empty() {
        return;
    }
    *map = std::mem::take(map)
        .into_iter()
        .map(|(key, child)| match renames.iter().find(|(alias, _)| same_str(alias, &key)) {
            Some((_, name)) => ((*name).to_owned(), child),
            None => (key, child),
        })
        .collect();
}
