#![doc = include_str!("../docs/crate.md")]
#![cfg_attr(docsrs, feature(doc_cfg))]

#[cfg(feature = "adapters")]
pub mod adapters;
#[cfg(feature = "agent")]
pub mod agent;
#[cfg(feature = "runner")]
pub mod catalog;
#[cfg(feature = "mcp")]
pub mod mcp;
#[cfg(feature = "runner")]
pub mod policy;
#[cfg(feature = "runner")]
pub mod runner;
pub mod runtime;
pub mod schema;
pub mod spec;

#[doc = include_str!("../docs/tool.md")]
pub use tool_macros::tool;

#[doc = include_str!("../docs/derive.md")]
pub use tool_macros::ToolSchema;

/// Everything a tool author needs, in one import.
///
/// ```
/// use tool_runtime::prelude::*;
/// ```
pub mod prelude {
    pub use crate::runtime::{Tool, ToolCapabilities, ToolError, ToolInvocationContext};
    pub use crate::schema::ToolSchema;
    pub use crate::spec::{ToolDefinition, ToolEffect, ToolSpec};
    pub use crate::{ToolSchema, tool};
    pub use serde::{Deserialize, Serialize};
}

/// What the macros' expansions use. Not public API: no stability promise.
#[doc(hidden)]
pub mod __private {
    pub use serde;

    pub use crate::runtime::{Capability, CapabilityRef, Tool};
    pub use crate::schema::consts::{
        accepts_item_constraints, accepts_range, accepts_range_bounds, accepts_string_constraints,
        contains_connection_id, has_path, is_satisfiable,
    };
    pub use crate::schema::{ObjectSchema, Property, RangeBound, Schema, SchemaKind, ToolSchema};
    pub use crate::spec::{StaticSpecParts, ToolDefinition, ToolEffect, ToolSpec};

    /// Stands in for a schema the macro could not build, so one mistake does not cascade.
    pub const STUB_SCHEMA: &Schema = &Schema::object(&[]);

    /// Stands in for a spec the macro could not build.
    pub static STUB_SPEC: ToolSpec = ToolSpec::__from_static(StaticSpecParts {
        name: "",
        description: "",
        effect: ToolEffect::ExternalSideEffect,
        input_schema: STUB_SCHEMA,
        output_schema: STUB_SCHEMA,
        redaction: &[],
        requires_connection: false,
        capabilities: &[],
    });
}
