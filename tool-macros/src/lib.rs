//! Procedural macros behind [`tool-runtime`](https://docs.rs/tool-runtime): `#[tool(...)]` and
//! `#[derive(ToolSchema)]`.
//!
//! Depend on `tool-runtime`, not on this crate: it re-exports both macros, documents them, and
//! pins this crate's exact version. Expansions reach the runtime only through
//! `tool_runtime::__private`.
//!
//! The crate is organised as parse -> check -> expand: `ast` reads an item into a model
//! (applying serde's renames), `check` enforces the rules that span fields, `tool_attr` reads
//! and checks the `#[tool(...)]` arguments, and `expand` generates code from a valid model.
//! The naming rules (tool names, `connectionId`) come from `tool-rules`, which the runtime
//! applies too, so both sides read one definition.
//! Every error of an item is collected in one `ctxt::Ctxt` and reported together, and the
//! user's item is always emitted again so one mistake does not cascade.

mod args;
mod ast;
mod case;
mod check;
mod ctxt;
mod derive;
mod docs;
mod example;
mod expand;
mod mode;
mod schema_attr;
mod serde_attr;
mod tool;
mod tool_attr;

use proc_macro::TokenStream;

/// Makes a struct an LLM tool. See `tool_runtime::tool` for the documentation.
#[proc_macro_attribute]
pub fn tool(args: TokenStream, input: TokenStream) -> TokenStream {
    tool::expand(args.into(), input.into()).into()
}

/// Gives a type a schema so it can appear in a tool's input or output. See
/// `tool_runtime::ToolSchema` for the documentation.
#[proc_macro_derive(ToolSchema, attributes(schema))]
pub fn derive_tool_schema(input: TokenStream) -> TokenStream {
    derive::expand(input.into()).into()
}
