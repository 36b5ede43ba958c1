//! Validation while decoding: raw arguments are deserialised straight into the tool's type
//! while every value the parser reads is checked against the schema tree, with no
//! intermediate [`Value`](serde_json::Value).
//!
//! This is only a fast path. It stops at the first thing it cannot vouch for (a violation,
//! an integral float in an integer position, `uniqueItems`, a repeated or unknown key, a
//! type the schema does not describe) and reports nothing: the caller then takes the ordinary
//! path ([`parse_json`](super::parse_json), [`Schema::validate`], deserialise), which reports
//! every error. So it may refuse more than the ordinary path, never accept more: every value
//! of the input passes through [`Checked`] (serde's ignored values included), and a value is
//! let through only after the same checks [`Schema::validate`] makes: both decide with the rule
//! functions of `rules`, one per constraint.
//!
//! Keys are property names only: a `#[serde(alias)]` key is left to the ordinary path too,
//! which renames it to the property's name, so that raw arguments this pass vouches for (and
//! the runner keeps as they were sent) always name every property by its name.

use std::fmt;

use serde::de::value::BorrowedStrDeserializer;
use serde::de::{
    self, DeserializeOwned, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor,
};
use serde_json::Number;

use super::rules::{enum_index, same_str};
use super::{Property, Schema, SchemaKind, ToolSchema};

/// Decodes raw arguments into `T` in one pass, checking every value against `T`'s schema as it
/// is read, with no intermediate JSON value. `None` when the ordinary path must decide: for
/// every input [`parse_arguments`](super::parse_arguments) refuses, and for inputs it may
/// accept but this pass does not vouch for (a repeated key, a `#[serde(alias)]` key, `3.0`
/// where an integer goes, an array with `uniqueItems`). `Some` only for arguments `parse_arguments` accepts, decoded the
/// same. The runner tries it first for `#[tool]` types.
///
/// ```
/// use tool_runtime::prelude::*;
/// use tool_runtime::schema::decode_checked;
///
/// #[derive(Debug, PartialEq, Deserialize, ToolSchema)]
/// struct Page {
///     #[schema(range(min = 1, max = 50))]
///     size: u8,
/// }
///
/// assert_eq!(decode_checked::<Page>(br#"{"size": 20}"#), Some(Page { size: 20 }));
/// assert_eq!(decode_checked::<Page>(br#"{"size": 99}"#), None); // out of range
/// assert_eq!(decode_checked::<Page>(br#"{"size": 20.0}"#), None); // the ordinary path decides
/// ```
#[must_use]
pub fn decode_checked<T: ToolSchema + DeserializeOwned>(raw: &[u8]) -> Option<T> {
    // One UTF-8 check of the whole input, rather than one per string as `from_slice` makes
    // (invalid UTF-8 is the ordinary path's to report).
    let text = std::str::from_utf8(raw).ok()?;
    let mut deserializer = serde_json::Deserializer::from_str(text);
    let value = T::deserialize(Checked { de: &mut deserializer, schema: T::SCHEMA }).ok()?;
    deserializer.end().ok()?;
    Some(value)
}

/// Why the fast path gave up; never shown (the ordinary path reports).
fn give_up<E: de::Error>() -> E {
    E::custom("left to the ordinary validation path")
}

/// A deserializer whose every value is checked against `schema` before the visitor sees it.
struct Checked<D> {
    de: D,
    schema: &'static Schema,
}

/// A visitor that checks what it is shown against `schema`, then hands it on.
struct CheckedVisitor<V> {
    inner: V,
    schema: &'static Schema,
}

/// A seed whose value is checked against `schema`.
struct CheckedSeed<S> {
    seed: S,
    schema: &'static Schema,
}

impl<'de, S: DeserializeSeed<'de>> DeserializeSeed<'de> for CheckedSeed<S> {
    type Value = S::Value;

    fn deserialize<D: Deserializer<'de>>(self, de: D) -> Result<S::Value, D::Error> {
        self.seed.deserialize(Checked { de, schema: self.schema })
    }
}

macro_rules! checked_forward {
    ($($method:ident($($arg:ident: $ty:ty),*);)*) => {$(
        fn $method<V: Visitor<'de>>(self, $($arg: $ty,)* visitor: V) -> Result<V::Value, D::Error> {
            self.de.$method($($arg,)* CheckedVisitor { inner: visitor, schema: self.schema })
        }
    )*};
}

impl<'de, D: Deserializer<'de>> Deserializer<'de> for Checked<D> {
    type Error = D::Error;

    checked_forward! {
        deserialize_any();
        deserialize_bool();
        deserialize_i8();
        deserialize_i16();
        deserialize_i32();
        deserialize_i64();
        deserialize_i128();
        deserialize_u8();
        deserialize_u16();
        deserialize_u32();
        deserialize_u64();
        deserialize_u128();
        deserialize_f64();
        deserialize_char();
        deserialize_str();
        deserialize_string();
        deserialize_bytes();
        deserialize_byte_buf();
        deserialize_option();
        deserialize_unit();
        deserialize_unit_struct(name: &'static str);
        deserialize_newtype_struct(name: &'static str);
        deserialize_seq();
        deserialize_tuple(len: usize);
        deserialize_tuple_struct(name: &'static str, len: usize);
        deserialize_map();
        deserialize_struct(name: &'static str, fields: &'static [&'static str]);
        deserialize_identifier();
    }

    /// Read as the `f64` it is written as (which the ordinary path checks), not rounded to an
    /// `f32` first: `3.4028235000000003e38` is above an `f32`'s bound even though it rounds
    /// to `f32::MAX`. `f32`'s `Deserialize` takes an `f64` and casts it.
    fn deserialize_f32<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, D::Error> {
        self.de.deserialize_f64(CheckedVisitor { inner: visitor, schema: self.schema })
    }

    /// A value nobody reads is still read, so that it is checked.
    fn deserialize_ignored_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, D::Error> {
        self.de.deserialize_any(CheckedVisitor { inner: visitor, schema: self.schema })
    }

    /// The subset's enums are strings: the string is checked against the schema's values and
    /// handed on as a unit variant.
    fn deserialize_enum<V: Visitor<'de>>(
        self,
        _name: &'static str,
        _variants: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, D::Error> {
        let SchemaKind::Enum(values) = self.schema.kind else {
            return Err(give_up());
        };
        let index = self.de.deserialize_str(EnumIndex(values))?;
        visitor.visit_enum(BorrowedStrDeserializer::new(values[index]))
    }

    fn is_human_readable(&self) -> bool {
        self.de.is_human_readable()
    }
}

/// Finds a string among an enum's values.
struct EnumIndex(&'static [&'static str]);

impl Visitor<'_> for EnumIndex {
    type Value = usize;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("one of the enum's values")
    }

    fn visit_str<E: de::Error>(self, text: &str) -> Result<usize, E> {
        enum_index(self.0, text).ok_or_else(give_up)
    }
}

/// The checks of an integer in an integer or number position.
fn integer_ok(schema: &Schema, number: &Number) -> bool {
    match schema.kind {
        SchemaKind::Integer(int) => int.admits_number(number),
        SchemaKind::Number(_) => number_ok(schema, number.as_f64().unwrap_or(0.0)),
        _ => false,
    }
}

/// The checks of a number in a number position.
fn number_ok(schema: &Schema, value: f64) -> bool {
    matches!(schema.kind, SchemaKind::Number(num) if num.admits(value))
}

/// The checks of a string in a string or enum position.
fn string_ok(schema: &Schema, text: &str) -> bool {
    match schema.kind {
        SchemaKind::String(string) => string.admits(text),
        SchemaKind::Enum(values) => enum_index(values, text).is_some(),
        _ => false,
    }
}

impl<'de, V: Visitor<'de>> Visitor<'de> for CheckedVisitor<V> {
    type Value = V::Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.inner.expecting(f)
    }

    fn visit_bool<E: de::Error>(self, value: bool) -> Result<V::Value, E> {
        match self.schema.kind {
            SchemaKind::Boolean => self.inner.visit_bool(value),
            _ => Err(give_up()),
        }
    }

    fn visit_i64<E: de::Error>(self, value: i64) -> Result<V::Value, E> {
        if integer_ok(self.schema, &Number::from(value)) {
            self.inner.visit_i64(value)
        } else {
            Err(give_up())
        }
    }

    fn visit_u64<E: de::Error>(self, value: u64) -> Result<V::Value, E> {
        if integer_ok(self.schema, &Number::from(value)) {
            self.inner.visit_u64(value)
        } else {
            Err(give_up())
        }
    }

    fn visit_i128<E: de::Error>(self, value: i128) -> Result<V::Value, E> {
        // Beyond 64 bits the ordinary path sees a rounded float: it decides.
        let number = match (i64::try_from(value), u64::try_from(value)) {
            (Ok(small), _) => Number::from(small),
            (_, Ok(large)) => Number::from(large),
            _ => return Err(give_up()),
        };
        if integer_ok(self.schema, &number) { self.inner.visit_i128(value) } else { Err(give_up()) }
    }

    fn visit_u128<E: de::Error>(self, value: u128) -> Result<V::Value, E> {
        match u64::try_from(value) {
            Ok(small) if integer_ok(self.schema, &Number::from(small)) => {
                self.inner.visit_u128(value)
            }
            _ => Err(give_up()),
        }
    }

    /// Floats only in number positions: an integral float in an integer position is for the
    /// ordinary path to normalise.
    fn visit_f64<E: de::Error>(self, value: f64) -> Result<V::Value, E> {
        if number_ok(self.schema, value) { self.inner.visit_f64(value) } else { Err(give_up()) }
    }

    fn visit_str<E: de::Error>(self, text: &str) -> Result<V::Value, E> {
        if string_ok(self.schema, text) { self.inner.visit_str(text) } else { Err(give_up()) }
    }

    fn visit_borrowed_str<E: de::Error>(self, text: &'de str) -> Result<V::Value, E> {
        if string_ok(self.schema, text) {
            self.inner.visit_borrowed_str(text)
        } else {
            Err(give_up())
        }
    }

    fn visit_string<E: de::Error>(self, text: String) -> Result<V::Value, E> {
        if string_ok(self.schema, &text) { self.inner.visit_string(text) } else { Err(give_up()) }
    }

    fn visit_unit<E: de::Error>(self) -> Result<V::Value, E> {
        if self.schema.nullable { self.inner.visit_unit() } else { Err(give_up()) }
    }

    fn visit_none<E: de::Error>(self) -> Result<V::Value, E> {
        if self.schema.nullable { self.inner.visit_none() } else { Err(give_up()) }
    }

    fn visit_some<D: Deserializer<'de>>(self, de: D) -> Result<V::Value, D::Error> {
        self.inner.visit_some(Checked { de, schema: self.schema })
    }

    fn visit_newtype_struct<D: Deserializer<'de>>(self, de: D) -> Result<V::Value, D::Error> {
        self.inner.visit_newtype_struct(Checked { de, schema: self.schema })
    }

    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<V::Value, A::Error> {
        let SchemaKind::Array(array) = self.schema.kind else {
            return Err(give_up());
        };
        if array.unique_items {
            return Err(give_up());
        }
        let mut items = CheckedSeq { seq, items: array.items, count: 0 };
        let value = self.inner.visit_seq(&mut items)?;
        let count = items.count;
        if array.count_admits(count) { Ok(value) } else { Err(give_up()) }
    }

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<V::Value, A::Error> {
        let SchemaKind::Object(object) = self.schema.kind else {
            return Err(give_up());
        };
        // A property's bit is set when its key is read; the subset's objects are small, and
        // larger ones are left to the ordinary path.
        if object.properties.len() > 64 {
            return Err(give_up());
        }
        let mut entries =
            CheckedMap { map, properties: object.properties, seen: 0, current: None, next: 0 };
        let value = self.inner.visit_map(&mut entries)?;
        let missing = object
            .properties
            .iter()
            .enumerate()
            .any(|(index, property)| property.required && entries.seen & (1 << index) == 0);
        if missing { Err(give_up()) } else { Ok(value) }
    }
}

/// The items of an array, each checked against `items`, counted.
struct CheckedSeq<A> {
    seq: A,
    items: &'static Schema,
    count: u64,
}

impl<'de, A: SeqAccess<'de>> SeqAccess<'de> for &mut CheckedSeq<A> {
    type Error = A::Error;

    fn next_element_seed<S: DeserializeSeed<'de>>(
        &mut self,
        seed: S,
    ) -> Result<Option<S::Value>, A::Error> {
        let item = self.seq.next_element_seed(CheckedSeed { seed, schema: self.items })?;
        self.count += u64::from(item.is_some());
        Ok(item)
    }

    fn size_hint(&self) -> Option<usize> {
        self.seq.size_hint()
    }
}

/// The entries of an object: each key must be a property not seen before; each value is
/// checked against its property's schema.
struct CheckedMap<A> {
    map: A,
    properties: &'static [Property],
    seen: u64,
    current: Option<&'static Schema>,
    /// The property after the last one read: models mostly send properties in schema order,
    /// so it is compared first.
    next: usize,
}

/// Reads a key and finds the property it names, comparing it with `next`'s name first. An
/// alias is not looked for: it gives up like an unknown key.
struct PropertyIndex {
    properties: &'static [Property],
    next: usize,
}

impl<'de> DeserializeSeed<'de> for PropertyIndex {
    type Value = usize;

    fn deserialize<D: Deserializer<'de>>(self, de: D) -> Result<usize, D::Error> {
        de.deserialize_str(self)
    }
}

impl Visitor<'_> for PropertyIndex {
    type Value = usize;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a property name")
    }

    fn visit_str<E: de::Error>(self, key: &str) -> Result<usize, E> {
        if self.properties.get(self.next).is_some_and(|property| same_str(property.name, key)) {
            return Ok(self.next);
        }
        self.properties.iter().position(|property| same_str(property.name, key)).ok_or_else(give_up)
    }
}

impl<'de, A: MapAccess<'de>> MapAccess<'de> for &mut CheckedMap<A> {
    type Error = A::Error;

    fn next_key_seed<K: DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, A::Error> {
        let seed_index = PropertyIndex { properties: self.properties, next: self.next };
        let Some(index) = self.map.next_key_seed(seed_index)? else {
            return Ok(None);
        };
        let bit = 1u64 << index;
        if self.seen & bit != 0 {
            return Err(give_up());
        }
        self.seen |= bit;
        self.next = index + 1;
        let property = &self.properties[index];
        self.current = Some(property.schema);
        // The key read is the property's name: hand it on borrowed for good.
        seed.deserialize(BorrowedStrDeserializer::new(property.name)).map(Some)
    }

    fn next_value_seed<S: DeserializeSeed<'de>>(&mut self, seed: S) -> Result<S::Value, A::Error> {
        let schema = self.current.take().ok_or_else(give_up)?;
        self.map.next_value_seed(CheckedSeed { seed, schema })
    }

    fn size_hint(&self) -> Option<usize> {
        self.map.size_hint()
    }
}
