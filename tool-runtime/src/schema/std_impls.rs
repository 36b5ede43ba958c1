//! `ToolSchema` for the standard library types that have a schema in the allowed subset.

use std::collections::{BTreeSet, HashSet};

use serde_json::Value;

use super::validate::{Findings, Path, check_items};
use super::{ArraySchema, RangeBound, Schema, SchemaKind, ToolSchema};

/// A `check_at` that checks an array's items with the item type's validator.
macro_rules! check_items {
    ($item:ty) => {
        #[inline]
        fn check_at(schema: &'static Schema, value: &Value, path: &Path<'_>, out: &mut Findings) {
            check_items::<$item>(schema, value, path, out);
        }
    };
}

/// A `check_at` that hands the value to the wrapped type's validator.
macro_rules! check_as {
    ($inner:ty) => {
        #[inline(always)]
        fn check_at(schema: &'static Schema, value: &Value, path: &Path<'_>, out: &mut Findings) {
            <$inner>::check_at(schema, value, path, out);
        }
    };
}

impl ToolSchema for bool {
    const SCHEMA: &'static Schema = &Schema::boolean();
}

// Integers carry their real bounds, so the schema rejects exactly what deserialisation rejects.
// 128-bit integers are bounded by what a JSON number parses to (`i64::MIN..=u64::MAX`).
macro_rules! integer {
    ($($ty:ty => $min:expr, $max:expr;)*) => {$(
        impl ToolSchema for $ty {
            const SCHEMA: &'static Schema = &Schema::integer(Some($min as i128), Some($max as i128));
        }
    )*};
}

integer! {
    i8 => i8::MIN, i8::MAX;
    i16 => i16::MIN, i16::MAX;
    i32 => i32::MIN, i32::MAX;
    i64 => i64::MIN, i64::MAX;
    i128 => i64::MIN, u64::MAX;
    isize => isize::MIN, isize::MAX;
    u8 => 0, u8::MAX;
    u16 => 0, u16::MAX;
    u32 => 0, u32::MAX;
    u64 => 0, u64::MAX;
    u128 => 0, u64::MAX;
    usize => 0, usize::MAX;
}

// Deserialising an `f32` casts the parsed `f64`, so anything beyond these bounds would become
// infinity. `3.4028235e38` is `f32::MAX` as it is written, and rounds to it.
const F32_BOUND: f64 = 3.402_823_5e38;

impl ToolSchema for f32 {
    const SCHEMA: &'static Schema = &Schema::number().with_range(
        Some(RangeBound::Float(-F32_BOUND)),
        Some(RangeBound::Float(F32_BOUND)),
        None,
        None,
    );
}

impl ToolSchema for f64 {
    const SCHEMA: &'static Schema = &Schema::number();
}

impl ToolSchema for String {
    const SCHEMA: &'static Schema = &Schema::string();
}

impl ToolSchema for char {
    const SCHEMA: &'static Schema = &Schema::string().with_length(Some(1), Some(1));
}

impl<T: ToolSchema> ToolSchema for Vec<T> {
    const SCHEMA: &'static Schema = &Schema::array(T::SCHEMA);
    check_items!(T);
}

impl<T: ToolSchema, const N: usize> ToolSchema for [T; N] {
    const SCHEMA: &'static Schema =
        &Schema::array(T::SCHEMA).with_items(Some(N as u64), Some(N as u64));
    check_items!(T);
}

impl<T: ToolSchema> ToolSchema for Box<T> {
    const SCHEMA: &'static Schema = T::SCHEMA;
    const OPTIONAL: bool = T::OPTIONAL;
    check_as!(T);
}

impl<T: ToolSchema> ToolSchema for Option<T> {
    const SCHEMA: &'static Schema = &T::SCHEMA.nullable();
    const OPTIONAL: bool = true;
    check_as!(T);
}

const fn unique_array(items: &'static Schema) -> Schema {
    Schema::new(SchemaKind::Array(ArraySchema {
        items,
        min_items: None,
        max_items: None,
        unique_items: true,
    }))
}

impl<T: ToolSchema> ToolSchema for BTreeSet<T> {
    const SCHEMA: &'static Schema = &unique_array(T::SCHEMA);
    check_items!(T);
}

impl<T: ToolSchema, S> ToolSchema for HashSet<T, S> {
    const SCHEMA: &'static Schema = &unique_array(T::SCHEMA);
    check_items!(T);
}
