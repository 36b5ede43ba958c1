//! Which macro reads an item: the parsers of `ast`, `schema_attr` and `serde_attr` word some
//! errors differently for `#[tool]` and `#[derive(ToolSchema)]`.

/// Which macro reads the item.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Mode {
    Derive,
    Tool,
}
