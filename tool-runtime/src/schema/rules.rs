//! Every constraint of the schema subset, written once. The validator's walk
//! ([`Schema::validate`](super::Schema::validate)) and the one-pass decoder
//! ([`decode_checked`](super::decode_checked)) both decide with these functions; they differ
//! only in what they do with a violation (the walk reports it with a pointer and a message,
//! the decoder hands the input to the walk).

use std::cmp::Ordering;
use std::collections::HashMap;
use std::hash::{BuildHasher, Hash, Hasher, RandomState};

use serde_json::{Number, Value};

use super::pattern::pattern_regex;
use super::{ArraySchema, IntegerSchema, NumberSchema, Property, StringSchema};

/// Whether a number that is neither a `u64` nor an `i64` is integral all the same (`3.0`,
/// `1e300`; not `3.5`).
pub(super) fn integral_float(number: &Number) -> bool {
    number.as_f64().is_some_and(|value| value.fract() == 0.0)
}

/// Compares a JSON number with an `i128` bound exactly, as JSON Schema compares numbers.
pub(super) fn cmp_int(number: &Number, bound: i128) -> Ordering {
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
fn cmp_f64_int(value: f64, bound: i128) -> Ordering {
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

/// Arrays up to this long are checked for `uniqueItems` pair by pair (no allocation).
const PAIRWISE_UNIQUE_ITEMS: usize = 16;

/// A hash that [`json_eq`] items share: numbers hash by value (`1` and `1.0` alike) and
/// objects whatever the order of their keys.
fn json_hash(keys: &RandomState, value: &Value) -> u64 {
    let mut hasher = keys.build_hasher();
    match value {
        Value::Null => 0u8.hash(&mut hasher),
        Value::Bool(flag) => (1u8, flag).hash(&mut hasher),
        Value::Number(number) => {
            2u8.hash(&mut hasher);
            let exact = number.as_i64().map(i128::from).or(number.as_u64().map(i128::from));
            match (exact, number.as_f64()) {
                (Some(int), _) => (0u8, int).hash(&mut hasher),
                // An integral float in range equals exactly one integer (`-0.0` is `0`).
                (None, Some(float)) if float.fract() == 0.0 && float.abs() < I128_BOUND => {
                    #[allow(clippy::cast_possible_truncation)]
                    (0u8, float as i128).hash(&mut hasher);
                }
                (None, float) => (1u8, float.map(f64::to_bits)).hash(&mut hasher),
            }
        }
        Value::String(text) => (3u8, text).hash(&mut hasher),
        Value::Array(items) => {
            (4u8, items.len()).hash(&mut hasher);
            for item in items {
                json_hash(keys, item).hash(&mut hasher);
            }
        }
        Value::Object(map) => {
            (5u8, map.len()).hash(&mut hasher);
            // Added up, so the order of the keys does not count.
            let entries = map.iter().fold(0u64, |sum, (key, value)| {
                sum.wrapping_add(keys.hash_one((key, json_hash(keys, value))))
            });
            entries.hash(&mut hasher);
        }
    }
    hasher.finish()
}

/// 2^127: every integral `f64` below it in magnitude is an `i128`.
const I128_BOUND: f64 = 170_141_183_460_469_231_731_687_303_715_884_105_728.0;

impl IntegerSchema {
    /// `minimum`: the bound, when the value that `cmp` compares with a bound is below it.
    #[inline(always)]
    pub(super) fn broken_minimum(&self, cmp: impl Fn(i128) -> Ordering) -> Option<i128> {
        self.minimum.filter(|&min| cmp(min).is_lt())
    }

    /// `maximum`: the bound, when the value that `cmp` compares with a bound is above it.
    #[inline(always)]
    pub(super) fn broken_maximum(&self, cmp: impl Fn(i128) -> Ordering) -> Option<i128> {
        self.maximum.filter(|&max| cmp(max).is_gt())
    }

    /// Whether the exact integer `value` lies within the bounds.
    #[inline]
    pub(super) fn admits(&self, value: i128) -> bool {
        let cmp = |bound: i128| value.cmp(&bound);
        self.broken_minimum(cmp).is_none() && self.broken_maximum(cmp).is_none()
    }

    /// Whether the integer `number` (one the parser read as an integer, not a float) lies
    /// within the bounds, compared exactly.
    #[inline]
    pub(super) fn admits_number(&self, number: &Number) -> bool {
        match number.as_i64() {
            Some(value) => self.admits(i128::from(value)),
            None => {
                let cmp = |bound: i128| cmp_int(number, bound);
                self.broken_minimum(cmp).is_none() && self.broken_maximum(cmp).is_none()
            }
        }
    }
}

impl NumberSchema {
    /// `minimum`: the bound, when `value` is below it.
    #[inline(always)]
    pub(super) fn broken_minimum(&self, value: f64) -> Option<f64> {
        self.minimum.filter(|&min| value < min)
    }

    /// `maximum`: the bound, when `value` is above it.
    #[inline(always)]
    pub(super) fn broken_maximum(&self, value: f64) -> Option<f64> {
        self.maximum.filter(|&max| value > max)
    }

    /// `exclusiveMinimum`: the bound, when `value` is at or below it.
    #[inline(always)]
    pub(super) fn broken_exclusive_minimum(&self, value: f64) -> Option<f64> {
        self.exclusive_minimum.filter(|&min| value <= min)
    }

    /// `exclusiveMaximum`: the bound, when `value` is at or above it.
    #[inline(always)]
    pub(super) fn broken_exclusive_maximum(&self, value: f64) -> Option<f64> {
        self.exclusive_maximum.filter(|&max| value >= max)
    }

    /// Whether `value` lies within the bounds.
    #[inline]
    pub(super) fn admits(&self, value: f64) -> bool {
        self.broken_minimum(value).is_none()
            && self.broken_maximum(value).is_none()
            && self.broken_exclusive_minimum(value).is_none()
            && self.broken_exclusive_maximum(value).is_none()
    }
}

/// Why a string breaks its `pattern`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum PatternBreak {
    /// The pattern compiles, and the string holds no match of it.
    NoMatch,
    /// The pattern does not compile, so no string matches it.
    Invalid,
}

impl StringSchema {
    /// Whether a string of `bytes` bytes is within the length bounds whatever it holds: n bytes
    /// are between ceil(n / 4) and n characters, so most lengths are decided without counting.
    #[inline]
    pub(super) fn length_certain(&self, bytes: usize) -> bool {
        let bytes = bytes as u64;
        self.min_length.is_none_or(|min| bytes.div_ceil(4) >= min)
            && self.max_length.is_none_or(|max| bytes <= max)
    }

    /// `minLength`: the bound, when a string of `length` characters is shorter.
    #[inline(always)]
    pub(super) fn broken_min_length(&self, length: u64) -> Option<u64> {
        self.min_length.filter(|&min| length < min)
    }

    /// `maxLength`: the bound, when a string of `length` characters is longer.
    #[inline(always)]
    pub(super) fn broken_max_length(&self, length: u64) -> Option<u64> {
        self.max_length.filter(|&max| length > max)
    }

    /// Whether `text`'s length in characters is within the bounds (counted only when its
    /// byte length does not decide).
    #[inline]
    pub(super) fn length_admits(&self, text: &str) -> bool {
        self.length_certain(text.len()) || {
            let length = char_count(text);
            self.broken_min_length(length).is_none() && self.broken_max_length(length).is_none()
        }
    }

    /// `pattern`: why `text` breaks it, if it does (never without a pattern).
    #[inline]
    pub(super) fn broken_pattern(&self, text: &str) -> Option<(&'static str, PatternBreak)> {
        let pattern = self.pattern?;
        match pattern_regex(pattern) {
            Some(regex) if regex.is_match(text) => None,
            Some(_) => Some((pattern, PatternBreak::NoMatch)),
            None => Some((pattern, PatternBreak::Invalid)),
        }
    }

    /// Whether `text` meets every constraint of this string schema.
    #[inline]
    pub(super) fn admits(&self, text: &str) -> bool {
        self.length_admits(text) && self.broken_pattern(text).is_none()
    }
}

/// `enum`: where `text` is among `values`, if it is.
#[inline]
pub(super) fn enum_index(values: &[&str], text: &str) -> Option<usize> {
    values.iter().position(|value| same_str(value, text))
}

impl ArraySchema {
    /// `minItems`: the bound, when `count` items are fewer.
    #[inline(always)]
    pub(super) fn broken_min_items(&self, count: u64) -> Option<u64> {
        self.min_items.filter(|&min| count < min)
    }

    /// `maxItems`: the bound, when `count` items are more.
    #[inline(always)]
    pub(super) fn broken_max_items(&self, count: u64) -> Option<u64> {
        self.max_items.filter(|&max| count > max)
    }

    /// Whether `count` items meet `minItems` and `maxItems`.
    #[inline]
    pub(super) fn count_admits(&self, count: u64) -> bool {
        self.broken_min_items(count).is_none() && self.broken_max_items(count).is_none()
    }

    /// `uniqueItems`: the first two equal items (JSON Schema equality, `1 == 1.0`), when the
    /// schema asks for unique items.
    ///
    /// Short arrays are compared pair by pair; longer ones through a hash of each item that
    /// equal items share (keyed per process, so a sender cannot choose colliding items), in
    /// expected linear time: an array of 100 000 items costs 100 000 hashes, not 5 000 000 000
    /// comparisons.
    #[inline]
    pub(super) fn broken_unique_items(&self, items: &[Value]) -> Option<(usize, usize)> {
        if !self.unique_items {
            return None;
        }
        first_equal_pair(items)
    }
}

/// The first two equal items (smallest second index, then smallest first).
#[inline(never)]
fn first_equal_pair(items: &[Value]) -> Option<(usize, usize)> {
    if items.len() <= PAIRWISE_UNIQUE_ITEMS {
        return (1..items.len())
            .find_map(|j| (0..j).find(|&i| json_eq(&items[i], &items[j])).map(|i| (i, j)));
    }
    let keys = RandomState::new();
    let mut seen: HashMap<u64, Vec<usize>> = HashMap::with_capacity(items.len());
    for (j, item) in items.iter().enumerate() {
        let earlier = seen.entry(json_hash(&keys, item)).or_default();
        if let Some(&i) = earlier.iter().find(|&&i| json_eq(&items[i], item)) {
            return Some((i, j));
        }
        earlier.push(j);
    }
    None
}

impl Property {
    /// The property's name, then its aliases: every key it is accepted under, in order.
    pub(super) fn names(&self) -> impl Iterator<Item = &'static str> {
        std::iter::once(self.name).chain(self.aliases.iter().copied())
    }
}

/// The property that `key` names, if any: a closed object refuses other keys. Names are
/// looked at before aliases (most objects have none, and most keys are names).
#[inline]
pub(super) fn property_index(properties: &[Property], key: &str) -> Option<usize> {
    properties.iter().position(|property| same_str(property.name, key)).or_else(|| {
        properties
            .iter()
            .position(|property| property.aliases.iter().any(|alias| same_str(alias, key)))
    })
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

/// The number of Unicode scalar values in `text`: the bytes that do not continue a character.
pub(super) fn char_count(text: &str) -> u64 {
    text.bytes().filter(|byte| (byte & 0xC0) != 0x80).count() as u64
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::schema::Schema;

    fn unique() -> ArraySchema {
        const STRING: Schema = Schema::string();
        ArraySchema { items: &STRING, min_items: None, max_items: None, unique_items: true }
    }

    /// The first pair (smallest `j`, then smallest `i`), found pair by pair.
    fn pairwise(items: &[Value]) -> Option<(usize, usize)> {
        (1..items.len())
            .find_map(|j| (0..j).find(|&i| json_eq(&items[i], &items[j])).map(|i| (i, j)))
    }

    #[test]
    fn long_arrays_find_the_same_first_pair_as_pairwise() {
        let pool = [
            json!(1),
            json!(1.0),
            json!(-0.0),
            json!(0),
            json!(2.5),
            json!(u64::MAX),
            json!(1e300),
            json!("a"),
            json!({"a": 1, "b": [1, 2]}),
            json!({"b": [1.0, 2], "a": 1.0}),
            json!([1, {"x": null}]),
            json!(null),
            json!(true),
        ];
        // Every window of the pool, repeated with an offset, past the pairwise threshold.
        for start in 0..pool.len() {
            let mut items: Vec<Value> = (0..40).map(|i| json!(format!("filler {i}"))).collect();
            items.extend(pool[start..].iter().cloned());
            items.extend(pool[..start].iter().cloned());
            assert_eq!(unique().broken_unique_items(&items), pairwise(&items), "start {start}");
        }
    }

    #[test]
    fn equal_numbers_and_reordered_objects_are_duplicates() {
        let mut items: Vec<Value> = (0..30).map(|i| json!(i)).collect();
        items.push(json!(7.0));
        assert_eq!(unique().broken_unique_items(&items), Some((7, 30)));
        let mut items: Vec<Value> = (0..30).map(|i| json!({"n": i})).collect();
        items.push(json!({"n": 3, "m": 1}));
        items.push(json!({"m": 1, "n": 3.0}));
        assert_eq!(unique().broken_unique_items(&items), Some((30, 31)));
    }

    #[test]
    fn a_hundred_thousand_distinct_items_are_checked_without_comparing_every_pair() {
        // Pair by pair this is five billion comparisons: the test would not finish.
        let items: Vec<Value> = (0..100_000).map(|i| json!(format!("item {i}"))).collect();
        assert_eq!(unique().broken_unique_items(&items), None);
    }
}
