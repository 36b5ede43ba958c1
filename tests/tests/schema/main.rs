//! The schema layer: what `#[tool]` and `#[derive(ToolSchema)]` produce and what validation does
//! with it. The JSON Schema a model sees (`render`), the errors validation reports
//! (`validation`), our validator against an independent JSON Schema implementation
//! (`differential`), serde's names in the schema (`serde_names`), the example tools' frozen specs
//! (`example_specs`), `#[tool(examples)]` on the wire (`tool_examples`), GBNF grammars checked by
//! our recogniser (`gbnf`) and by implementations written elsewhere (`gbnf_oracle`), and the
//! macros' expansions under shadowed names (`hygiene`) and under the strictest lints (`lints`).
//!
//! One test binary, a module per behaviour; `schema_values` and `gbnf_support` are their shared
//! value generators and GBNF recogniser.

mod differential;
mod example_specs;
mod gbnf;
mod gbnf_oracle;
mod gbnf_support;
mod hygiene;
// Public: its items are checked with `unreachable_pub` and `missing_docs` denied, as a user's
// public tool types would be.
pub mod lints;
mod render;
mod schema_values;
mod serde_names;
mod tool_examples;
mod validation;
