//! Validation of raw JSON against the schema tree, and the one parse that validation and
//! deserialisation share.

use std::borrow::Cow;
use std::collections::HashMap;
use std::fmt::{self, Write as _};
use std::hash::{BuildHasherDefault, Hash as _, Hasher};
use std::sync::{OnceLock, RwLock};

use serde::de::{self, DeserializeOwned, DeserializeSeed, MapAccess, SeqAccess, Visitor};
use serde_json::map::Entry;
use serde_json::{Map, Number, Value};

use super::pattern::Pattern;
use super::{
    ArraySchema, IntegerSchema, NumberSchema, Property, Schema, SchemaKind, StringSchema,
    ToolSchema,
};

/// At most this many errors are kept; the rest are counted.
const MAX_ERRORS: usize = 64;

/// Parses raw JSON strictly: a key repeated within one object is an error (so a second value
/// cannot hide behind the one that was validated), nesting 128 or more arrays and objects
/// deep is an error (never a stack overflow), and invalid UTF-8 is an error. The returned value
/// is what both validation and deserialisation read.
///
/// ```
/// use tool_runtime::schema::parse_json;
///
/// assert!(parse_json(br#"{"a": 1}"#).is_ok());
/// let error = parse_json(br#"{"a": 1, "a": 2}"#).unwrap_err();
/// assert_eq!(error.to_string(), "duplicate key `a` at line 1 column 12");
/// ```
///
/// # Errors
///
/// [`JsonError`] when the input is not exactly one JSON value.
pub fn parse_json(raw: &[u8]) -> Result<Value, JsonError> {
    let mut deserializer = serde_json::Deserializer::from_slice(raw);
    let value = StrictValue.deserialize(&mut deserializer).map_err(JsonError)?;
    deserializer.end().map_err(JsonError)?;
    Ok(value)
}

/// Raw arguments that are not a single JSON value (syntax, duplicate key, nesting, UTF-8).
///
/// Its message names the position and the kind of problem, never the raw input.
#[derive(Debug)]
pub struct JsonError(serde_json::Error);

impl fmt::Display for JsonError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&self.0, f)
    }
}

impl std::error::Error for JsonError {}

struct StrictValue;

impl<'de> DeserializeSeed<'de> for StrictValue {
    type Value = Value;

    fn deserialize<D: de::Deserializer<'de>>(self, deserializer: D) -> Result<Value, D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for StrictValue {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_bool<E>(self, value: bool) -> Result<Value, E> {
        Ok(Value::Bool(value))
    }

    fn visit_i64<E>(self, value: i64) -> Result<Value, E> {
        Ok(Value::Number(value.into()))
    }

    fn visit_u64<E>(self, value: u64) -> Result<Value, E> {
        Ok(Value::Number(value.into()))
    }

    fn visit_f64<E: de::Error>(self, value: f64) -> Result<Value, E> {
        Number::from_f64(value).map(Value::Number).ok_or_else(|| E::custom("number out of range"))
    }

    fn visit_str<E>(self, value: &str) -> Result<Value, E> {
        Ok(Value::String(value.to_owned()))
    }

    fn visit_string<E>(self, value: String) -> Result<Value, E> {
        Ok(Value::String(value))
    }

    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut items = Vec::with_capacity(seq.size_hint().unwrap_or(0).min(1024));
        while let Some(item) = seq.next_element_seed(StrictValue)? {
            items.push(item);
        }
        Ok(Value::Array(items))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut out = Map::new();
        while let Some(key) = map.next_key::<String>()? {
            // One hash per key: the entry both detects a repeat and takes the value.
            match out.entry(key) {
                Entry::Occupied(entry) => {
                    return Err(de::Error::custom(format_args!(
                        "duplicate key `{}`",
                        Shown(entry.key())
                    )));
                }
                Entry::Vacant(entry) => {
                    entry.insert(map.next_value_seed(StrictValue)?);
                }
            }
        }
        Ok(Value::Object(out))
    }
}

/// Shows a string from the caller (a key, a tool id), cut to 64 characters and escaped.
pub(crate) struct Shown<'a>(pub(crate) &'a str);

impl fmt::Display for Shown<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        const MAX: usize = 64;
        match self.0.char_indices().nth(MAX) {
            Some((end, _)) => write!(f, "{}...", self.0[..end].escape_debug()),
            None => write!(f, "{}", self.0.escape_debug()),
        }
    }
}

/// Parses, validates and deserialises tool arguments from one parse.
///
/// This is what the runner does with a model's raw arguments: [`parse_json`], then
/// [`Schema::validate`] against `T::SCHEMA` (every error, with JSON pointers), then
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
    T::SCHEMA.validate_and_normalize(&mut value).map_err(ArgumentsError::Validation)?;
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
    Decode(DecodeError),
}

impl ArgumentsError {
    /// Wraps a deserialisation error of arguments that passed validation.
    pub(crate) fn decode(error: serde_json::Error) -> Self {
        Self::Decode(DecodeError(error))
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

/// Arguments that passed validation but not deserialisation. Its message says where, not what
/// value was sent.
#[derive(Debug)]
pub struct DecodeError(serde_json::Error);

impl fmt::Display for DecodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "arguments match the schema but could not be decoded ({:?} error); the type's schema does not describe its `Deserialize`",
            self.0.classify()
        )
    }
}

impl std::error::Error for DecodeError {}

/// The constraint a value broke, with the value the schema expects.
#[derive(Debug, Clone, Copy, PartialEq)]
#[non_exhaustive]
pub enum Constraint {
    /// Wrong JSON type; `expected` is the schema's type (`"integer"`, `"string or null"`...).
    Type {
        /// The schema's type.
        expected: &'static str,
    },
    /// A required property is missing.
    Required,
    /// A property the schema does not list (objects are closed).
    AdditionalProperty,
    /// Below `minimum`.
    Minimum(f64),
    /// Above `maximum`.
    Maximum(f64),
    /// At or below `exclusiveMinimum`.
    ExclusiveMinimum(f64),
    /// At or above `exclusiveMaximum`.
    ExclusiveMaximum(f64),
    /// Fewer characters than `minLength`.
    MinLength(u64),
    /// More characters than `maxLength`.
    MaxLength(u64),
    /// No match of `pattern`.
    Pattern(&'static str),
    /// Not one of `enum`.
    Enum(&'static [&'static str]),
    /// Fewer items than `minItems`.
    MinItems(u64),
    /// More items than `maxItems`.
    MaxItems(u64),
    /// Two equal items where `uniqueItems` is set.
    UniqueItems,
    /// A constraint of a schema received at run time (checked by the `jsonschema` crate); the
    /// message says which.
    External,
}

/// One schema violation.
#[derive(Clone, PartialEq)]
pub struct ValidationError {
    /// The pointer followed by the message: one allocation per error, not two.
    text: String,
    /// Where the pointer ends and the message starts in `text`.
    split: usize,
    constraint: Constraint,
}

impl ValidationError {
    /// JSON pointer (RFC 6901) to the offending value; `""` is the whole document.
    #[must_use]
    pub fn pointer(&self) -> &str {
        self.text.get(..self.split).unwrap_or_default()
    }

    /// The constraint that was broken.
    #[must_use]
    pub fn constraint(&self) -> Constraint {
        self.constraint
    }

    /// What is wrong, safe to show to a model or log: it states the expectation and at most the
    /// received JSON type or size, never the received value.
    #[must_use]
    pub fn message(&self) -> &str {
        self.text.get(self.split..).unwrap_or_default()
    }
}

impl fmt::Debug for ValidationError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ValidationError")
            .field("pointer", &self.pointer())
            .field("constraint", &self.constraint)
            .field("message", &self.message())
            .finish()
    }
}

impl fmt::Display for ValidationError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let pointer = self.pointer();
        let pointer = if pointer.is_empty() { "/" } else { pointer };
        write!(f, "{pointer}: {}", self.message())
    }
}

impl std::error::Error for ValidationError {}

/// Every violation found in one value (the first 64, with a count of the rest).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ValidationErrors {
    errors: Vec<ValidationError>,
    omitted: usize,
}

impl ValidationErrors {
    /// The recorded errors, in document order.
    pub fn iter(&self) -> std::slice::Iter<'_, ValidationError> {
        self.errors.iter()
    }

    /// How many errors were found, including those not recorded.
    #[must_use]
    pub fn len(&self) -> usize {
        self.errors.len() + self.omitted
    }

    /// Whether no error was found.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Records an error found by another validator (`jsonschema`, for run-time schemas).
    /// Its message is cut to 200 characters: it may quote the (masked) input's property names.
    #[cfg(feature = "dynamic")]
    pub(crate) fn push_external(&mut self, pointer: &str, mut message: String) {
        const MAX: usize = 200;
        if let Some((end, _)) = message.char_indices().nth(MAX) {
            message.truncate(end);
            message.push_str("...");
        }
        self.push_capped(Constraint::External, pointer.len() + message.len(), |text| {
            text.push_str(pointer);
            let split = text.len();
            text.push_str(&message);
            split
        });
    }

    /// Records one error, unless [`MAX_ERRORS`] are recorded already (then it is only
    /// counted). `write` fills the error's text (pointer, then message) and returns where the
    /// message starts.
    fn push_capped(
        &mut self,
        constraint: Constraint,
        capacity: usize,
        write: impl FnOnce(&mut String) -> usize,
    ) {
        if self.errors.len() < MAX_ERRORS {
            let mut text = String::with_capacity(capacity);
            let split = write(&mut text);
            self.errors.push(ValidationError { text, split, constraint });
        } else {
            self.omitted += 1;
        }
    }
}

impl<'a> IntoIterator for &'a ValidationErrors {
    type Item = &'a ValidationError;
    type IntoIter = std::slice::Iter<'a, ValidationError>;

    fn into_iter(self) -> Self::IntoIter {
        self.errors.iter()
    }
}

impl fmt::Display for ValidationErrors {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, error) in self.errors.iter().enumerate() {
            if i > 0 {
                f.write_str("; ")?;
            }
            write!(f, "{error}")?;
        }
        if self.omitted > 0 {
            write!(f, "; and {} more", self.omitted)?;
        }
        Ok(())
    }
}

impl std::error::Error for ValidationErrors {}

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

/// Whether a number that is neither a `u64` nor an `i64` is integral all the same (`3.0`,
/// `1e300`; not `3.5`).
fn integral_float(number: &Number) -> bool {
    number.as_f64().is_some_and(|value| value.fract() == 0.0)
}

/// Compares a JSON number with an `i128` bound exactly, as JSON Schema compares numbers.
pub(super) fn cmp_int(number: &Number, bound: i128) -> std::cmp::Ordering {
    if let Some(value) = number.as_i64() {
        return i128::from(value).cmp(&bound);
    }
    if let Some(value) = number.as_u64() {
        return i128::from(value).cmp(&bound);
    }
    cmp_f64_int(number.as_f64().unwrap_or(0.0), bound)
}

/// Compares a float with an integer exactly. Converting the bound to `f64` instead would round
/// `u64::MAX` up to 2^64 and accept `18446744073709551616.0` as a `u64`.
fn cmp_f64_int(value: f64, bound: i128) -> std::cmp::Ordering {
    use std::cmp::Ordering;
    // 2^127: `i128::MAX as f64` rounds up to it, and `-2^127` is `i128::MIN` exactly.
    #[allow(clippy::cast_precision_loss)]
    const LIMIT: f64 = i128::MAX as f64;
    if value >= LIMIT {
        return Ordering::Greater;
    }
    if value < -LIMIT {
        return Ordering::Less;
    }
    let whole = value.trunc();
    // Exact: `whole` is an integer within `i128`'s range.
    #[allow(clippy::cast_possible_truncation)]
    let ordering = (whole as i128).cmp(&bound);
    match ordering {
        Ordering::Equal => value.partial_cmp(&whole).unwrap_or(Ordering::Equal),
        other => other,
    }
}

/// The compiled [`Pattern`] of a schema's `pattern`, compiled once per process and kept for its
/// lifetime: patterns are `'static`, so there are finitely many, and a `&'static Pattern` costs
/// no reference count per search. (Cloning a `Regex` would give the clone an empty search
/// cache, which costs more to build on its first search than the search does.)
///
/// Patterns are found by their address and length rather than their text (hashing the text with
/// SipHash cost as much as the search), in a fixed table whose slots are filled once and never
/// change, so a lookup takes no lock. A pattern whose text sits at two addresses is compiled
/// twice, which is harmless; patterns beyond the table's size go to a locked map.
pub(super) fn pattern_regex(pattern: &'static str) -> Option<&'static Pattern> {
    /// A pattern's address and length, and its matcher (`None` if it does not compile).
    type Compiled = ((usize, usize), Option<Pattern>);
    const SLOTS: usize = 256;
    const _: () = assert!(SLOTS.is_power_of_two());
    static TABLE: [OnceLock<Compiled>; SLOTS] = [const { OnceLock::new() }; SLOTS];
    /// Each further pattern's regex, leaked like the table's.
    type Overflow = RwLock<
        HashMap<(usize, usize), Option<&'static Pattern>, BuildHasherDefault<AddressHasher>>,
    >;
    static OVERFLOW: OnceLock<Overflow> = OnceLock::new();

    let key = (pattern.as_ptr().addr(), pattern.len());
    let compile = || Pattern::new(&ecma_pattern(pattern));
    let mut hasher = AddressHasher::default();
    key.hash(&mut hasher);
    // The top bits of the product are the well-mixed ones.
    #[allow(clippy::cast_possible_truncation)]
    let start = (hasher.finish() >> (u64::BITS - SLOTS.ilog2())) as usize;
    for probe in 0..SLOTS {
        // Racing threads agree: one fills an empty slot, the others read what it put there.
        let (slot_key, regex) = TABLE[(start + probe) % SLOTS].get_or_init(|| (key, compile()));
        if *slot_key == key {
            return regex.as_ref();
        }
    }
    let overflow = OVERFLOW.get_or_init(RwLock::default);
    if let Ok(read) = overflow.read()
        && let Some(found) = read.get(&key)
    {
        return *found;
    }
    // Compiled under the write lock, so that racing threads do not each leak a copy.
    let mut write = overflow.write().unwrap_or_else(std::sync::PoisonError::into_inner);
    *write.entry(key).or_insert_with(|| compile().map(|regex| &*Box::leak(Box::new(regex))))
}

/// Hashes the address and length of a `'static` pattern (FxHash's multiply-rotate): keys are
/// few and not chosen by a caller, so no defence against collisions is needed.
#[derive(Default)]
struct AddressHasher(u64);

impl Hasher for AddressHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for &byte in bytes {
            self.write_u64(u64::from(byte));
        }
    }

    fn write_u64(&mut self, n: u64) {
        self.0 = (self.0.rotate_left(5) ^ n).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }

    fn write_usize(&mut self, n: usize) {
        self.write_u64(n as u64);
    }
}

/// ECMA-262 `\s`: white space and line terminators.
const ECMA_SPACE: &str =
    r"\t-\r \x{a0}\x{1680}\x{2000}-\x{200a}\x{2028}\x{2029}\x{202f}\x{205f}\x{3000}\x{feff}";

/// Gives the escapes whose meaning differs between Rust's `regex` and ECMA-262 (the dialect of
/// JSON Schema's `pattern`, and of every validator a model's output meets) their ECMA meaning:
/// `\d` is `[0-9]` and `\w` is `[A-Za-z0-9_]` (Rust's are Unicode-aware), `\s` is ECMA's
/// white space, and `\b`/`\B` are ASCII word boundaries. Rust classes nest, so the replacements
/// are valid inside `[...]` too.
fn ecma_pattern(pattern: &str) -> Cow<'_, str> {
    if !pattern.contains('\\') {
        return Cow::Borrowed(pattern);
    }
    let mut out = String::with_capacity(pattern.len() + 16);
    let mut chars = pattern.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('d') => out.push_str("[0-9]"),
            Some('D') => out.push_str("[^0-9]"),
            Some('w') => out.push_str("[A-Za-z0-9_]"),
            Some('W') => out.push_str("[^A-Za-z0-9_]"),
            Some('s') => {
                let _ = write!(out, "[{ECMA_SPACE}]");
            }
            Some('S') => {
                let _ = write!(out, "[^{ECMA_SPACE}]");
            }
            Some('b') => out.push_str(r"(?-u:\b)"),
            Some('B') => out.push_str(r"(?-u:\B)"),
            Some(other) => {
                out.push('\\');
                out.push(other);
            }
            None => out.push('\\'),
        }
    }
    Cow::Owned(out)
}

/// Numeric equality without rounding: `12360201289734365` and `1.2360201289734364e16` differ.
fn number_eq(a: &Number, b: &Number) -> bool {
    let exact =
        |number: &Number| number.as_i64().map(i128::from).or(number.as_u64().map(i128::from));
    match (exact(a), exact(b), a.as_f64(), b.as_f64()) {
        (Some(a), Some(b), _, _) => a == b,
        (Some(int), None, _, Some(float)) | (None, Some(int), Some(float), _) => {
            cmp_f64_int(float, int).is_eq()
        }
        (_, _, a, b) => a == b,
    }
}

/// JSON equality as JSON Schema defines it: numbers compare by value (`1 == 1.0`).
fn json_eq(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(a), Value::Number(b)) => number_eq(a, b),
        (Value::Array(a), Value::Array(b)) => {
            a.len() == b.len() && a.iter().zip(b).all(|(a, b)| json_eq(a, b))
        }
        (Value::Object(a), Value::Object(b)) => {
            a.len() == b.len() && a.iter().all(|(key, a)| b.get(key).is_some_and(|b| json_eq(a, b)))
        }
        _ => a == b,
    }
}

/// Where a value sits in the document being validated: a chain of segments on the stack,
/// rendered as a JSON pointer only when an error is recorded there (most values have none).
#[derive(Debug, Clone, Copy)]
enum Path<'a> {
    Root,
    Key(&'a Path<'a>, &'a str),
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

/// What one validation found: its errors, and whether an integer position held an integral
/// float.
#[derive(Debug, Default)]
struct Findings {
    errors: ValidationErrors,
    integral_floats: bool,
}

impl Findings {
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

impl IntegerSchema {
    /// Whether the exact integer `value` lies within the bounds.
    #[inline]
    pub(super) fn admits(&self, value: i128) -> bool {
        self.minimum.is_none_or(|min| value >= min) && self.maximum.is_none_or(|max| value <= max)
    }
}

impl NumberSchema {
    /// Whether `value` lies within the bounds.
    #[inline]
    pub(super) fn admits(&self, value: f64) -> bool {
        self.minimum.is_none_or(|min| value >= min)
            && self.maximum.is_none_or(|max| value <= max)
            && self.exclusive_minimum.is_none_or(|min| value > min)
            && self.exclusive_maximum.is_none_or(|max| value < max)
    }
}

impl StringSchema {
    /// Whether a string of `bytes` bytes is within the length bounds whatever it holds: n bytes
    /// are between ceil(n / 4) and n characters, so most lengths are decided without counting.
    #[inline]
    fn length_certain(&self, bytes: usize) -> bool {
        let bytes = bytes as u64;
        self.min_length.is_none_or(|min| bytes.div_ceil(4) >= min)
            && self.max_length.is_none_or(|max| bytes <= max)
    }

    /// Whether `text`'s length in characters is within the bounds (counted only when its
    /// byte length does not decide).
    #[inline]
    pub(super) fn length_admits(&self, text: &str) -> bool {
        self.length_certain(text.len()) || {
            let length = char_count(text);
            self.min_length.is_none_or(|min| length >= min)
                && self.max_length.is_none_or(|max| length <= max)
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
    if let Some(min) = int.minimum
        && cmp(min).is_lt()
    {
        #[allow(clippy::cast_precision_loss)]
        let bound = min as f64;
        out.push(
            path,
            Constraint::Minimum(bound),
            format_args!("expected an integer of at least {min}"),
        );
    }
    if let Some(max) = int.maximum
        && cmp(max).is_gt()
    {
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
    if let Some(min) = num.minimum.filter(|min| value < *min) {
        out.push(
            path,
            Constraint::Minimum(min),
            format_args!("expected a number of at least {min}"),
        );
    }
    if let Some(max) = num.maximum.filter(|max| value > *max) {
        out.push(
            path,
            Constraint::Maximum(max),
            format_args!("expected a number of at most {max}"),
        );
    }
    if let Some(min) = num.exclusive_minimum.filter(|min| value <= *min) {
        out.push(
            path,
            Constraint::ExclusiveMinimum(min),
            format_args!("expected a number greater than {min}"),
        );
    }
    if let Some(max) = num.exclusive_maximum.filter(|max| value >= *max) {
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
        if let Some(min) = string.min_length.filter(|min| length < *min) {
            out.push(
                path,
                Constraint::MinLength(min),
                format_args!("expected at least {min} characters, got {length}"),
            );
        }
        if let Some(max) = string.max_length.filter(|max| length > *max) {
            out.push(
                path,
                Constraint::MaxLength(max),
                format_args!("expected at most {max} characters, got {length}"),
            );
        }
    }
    if let Some(pattern) = string.pattern {
        match pattern_regex(pattern) {
            Some(regex) if regex.is_match(text) => {}
            Some(_) => out.push_with(path, Constraint::Pattern(pattern), |message| {
                message.push_str("expected a string matching the pattern `");
                message.push_str(pattern);
                message.push('`');
            }),
            None => out.push(
                path,
                Constraint::Pattern(pattern),
                format_args!("the pattern `{pattern}` cannot be compiled, so no string matches it"),
            ),
        }
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
    let count = items.len() as u64;
    if let Some(min) = array.min_items.filter(|min| count < *min) {
        out.push(
            path,
            Constraint::MinItems(min),
            format_args!("expected at least {min} items, got {count}"),
        );
    }
    if let Some(max) = array.max_items.filter(|max| count > *max) {
        out.push(
            path,
            Constraint::MaxItems(max),
            format_args!("expected at most {max} items, got {count}"),
        );
    }
    if array.unique_items {
        let duplicate = (1..items.len())
            .find_map(|j| (0..j).find(|&i| json_eq(&items[i], &items[j])).map(|i| (i, j)));
        if let Some((i, j)) = duplicate {
            out.push(
                path,
                Constraint::UniqueItems,
                format_args!("expected unique items, but items {i} and {j} are equal"),
            );
        }
    }
    for (index, item) in items.iter().enumerate() {
        array.items.check(item, &Path::Index(path, index), out);
    }
}

/// `a == b` without a call to `memcmp` for strings of up to 16 bytes (property names, enum
/// values), which are compared in at most two overlapping words.
#[inline]
pub(super) fn same_str(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    if a.len() != b.len() {
        return false;
    }
    if let (Some(a_head), Some(b_head), Some(a_tail), Some(b_tail)) =
        (a.first_chunk::<8>(), b.first_chunk::<8>(), a.last_chunk::<8>(), b.last_chunk::<8>())
        && a.len() <= 16
    {
        return a_head == b_head && a_tail == b_tail;
    }
    if let (Some(a_head), Some(b_head), Some(a_tail), Some(b_tail)) =
        (a.first_chunk::<4>(), b.first_chunk::<4>(), a.last_chunk::<4>(), b.last_chunk::<4>())
        && a.len() < 8
    {
        return a_head == b_head && a_tail == b_tail;
    }
    a == b
}

/// Up to this many entries, an object's entries are scanned for a property sent out of order or
/// absent rather than hashed: comparing lengths first, the scan costs less than hashing the name.
const SCAN_LIMIT: usize = 16;

/// Checks the properties of a closed object, then reports the keys it does not list.
#[inline(never)]
fn check_object(
    properties: &[Property],
    map: &Map<String, Value>,
    path: &Path<'_>,
    out: &mut Findings,
) {
    // Models mostly send properties in schema order: each property is first looked for at the
    // next entry of the map, without hashing. The entries taken that way are a prefix of the map.
    let mut entries = map.iter();
    let mut next = entries.next();
    for property in properties {
        let child = match next {
            Some((key, child)) if same_str(key, property.name) => {
                next = entries.next();
                Some(child)
            }
            _ if map.len() <= SCAN_LIMIT => {
                map.iter().find_map(|(key, child)| same_str(key, property.name).then_some(child))
            }
            _ => map.get(property.name),
        };
        match child {
            Some(child) => property.schema.check(child, &Path::Key(path, property.name), out),
            None if property.required => out.push(
                &Path::Key(path, property.name),
                Constraint::Required,
                format_args!("missing required property"),
            ),
            None => {}
        }
    }
    // When the in-order walk took every entry, every key is a property. Otherwise the keys it
    // took are, and of the others, those that no property names are unknown.
    if next.is_some() {
        let in_order = map.len() - entries.len() - 1;
        for key in map.keys().skip(in_order) {
            if !properties.iter().any(|property| same_str(property.name, key)) {
                out.push_with(&Path::Key(path, key), Constraint::AdditionalProperty, |message| {
                    message.push_str("unknown property `");
                    push_shown(message, key);
                    message.push('`');
                });
            }
        }
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

/// The number of Unicode scalar values in `text`: the bytes that do not continue a character.
fn char_count(text: &str) -> u64 {
    text.bytes().filter(|byte| (byte & 0xC0) != 0x80).count() as u64
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
        self.validate_for_decode(value).map(|_| ())
    }

    /// [`Schema::validate`], also telling whether some integer position holds an integral
    /// float (`3.0`), so that [`Schema::normalize`] has work to do.
    #[inline]
    fn validate_for_decode(&self, value: &Value) -> Result<bool, ValidationErrors> {
        let mut out = Findings::default();
        self.check(value, &Path::Root, &mut out);
        if out.errors.is_empty() { Ok(out.integral_floats) } else { Err(out.errors) }
    }

    /// Validates `value` and, if it passes, rewrites its integral floats in integer positions
    /// as integers: afterwards it deserialises as the schema promised.
    pub(crate) fn validate_and_normalize(&self, value: &mut Value) -> Result<(), ValidationErrors> {
        if self.validate_for_decode(value)? {
            self.normalize(value);
        }
        Ok(())
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
                if !values.iter().any(|value| same_str(value, text)) {
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

    /// Rewrites integral floats (`3.0`) in integer positions as integers, so that a value that
    /// passed [`Schema::validate`] deserialises as the schema promised.
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

#[cfg(test)]
mod tests {
    use super::pattern_regex;

    #[test]
    fn patterns_beyond_the_table_are_compiled_once_and_kept() {
        // More distinct patterns than the table has slots (other tests' patterns share it).
        let patterns: Vec<&'static str> =
            (0..300).map(|n| &*Box::leak(format!("^p{n}$").into_boxed_str())).collect();
        let invalid: &'static str = Box::leak(String::from("(p").into_boxed_str());
        for _ in 0..2 {
            let compiled: Vec<_> = patterns.iter().map(|pattern| pattern_regex(pattern)).collect();
            for (n, regex) in compiled.iter().enumerate() {
                let regex = regex.expect("compiles");
                assert!(regex.is_match(&format!("p{n}")), "{n}");
                assert!(!regex.is_match(&format!("p{n}0")), "{n}");
                assert!(std::ptr::eq(regex, pattern_regex(patterns[n]).unwrap()), "kept: {n}");
            }
            assert!(pattern_regex(invalid).is_none());
        }
    }
}
