#![doc = include_str!("../docs/crate.md")]
#![cfg_attr(docsrs, feature(doc_cfg))]

#[cfg(feature = "adapters")]
pub mod adapters;
#[cfg(feature = "agent")]
pub mod agent;
#[cfg(feature = "runner")]
pub mod catalog;
pub mod content;
#[cfg(feature = "adapters")]
pub mod conversation;
pub mod digest;
pub mod gbnf;
#[cfg(any(feature = "mcp-server", feature = "mcp-client"))]
pub mod mcp;
#[cfg(feature = "runner")]
pub mod policy;
#[cfg(feature = "runner")]
pub mod runner;
pub mod runtime;
pub mod schema;
pub mod spec;
#[cfg(feature = "runner")]
pub mod store;
#[cfg(feature = "runner")]
pub mod testing;

#[doc = include_str!("../docs/tool.md")]
pub use tool_macros::tool;

#[doc = include_str!("../docs/derive.md")]
pub use tool_macros::ToolSchema;

/// Everything a tool author needs, and everything running tools needs, in one import.
///
/// Defining a tool: [`tool`], [`ToolSchema`], [`Tool`](crate::runtime::Tool) and what a running
/// tool sees. Running tools (feature `runner`): [`ToolCatalog`](crate::catalog::ToolCatalog),
/// [`ToolPolicy`](crate::policy::ToolPolicy), [`ToolRunner`](crate::runner::ToolRunner), the
/// context's [`ContextIds`](crate::runtime::ContextIds), the
/// [`ToolErrorCode`](crate::runtime::ToolErrorCode) a refused call carries and a
/// [`CollectingSink`](crate::runtime::CollectingSink) for its events. Every name starts with
/// `Tool` or is specific enough not to clash with an application's own `Error` or `Message`.
///
/// ```
/// # #[cfg(feature = "runner")] {
/// use tool_runtime::prelude::*;
///
/// /// Look up an order.
/// #[tool(name = "shop__get_order", effect = read_only, redact = ["status"])]
/// struct GetOrder { number: u32 }
/// #[derive(Serialize, ToolSchema)]
/// struct Order { status: String }
/// impl Tool for GetOrder {
///     type Output = Order;
///     async fn run(self, _: &ToolInvocationContext, _: &ToolCapabilities) -> Result<Order, ToolError> {
///         Ok(Order { status: "shipped".into() })
///     }
/// }
///
/// let catalog = || ToolCatalog::builder().register::<GetOrder>().build().unwrap();
/// let ctx = ToolInvocationContext::new(ContextIds { run_id: "run-1", actor_id: "user-1", tenant_id: "acme" });
/// let shop = ToolRunner::builder(catalog()).policy(ToolPolicy::allowing(["shop__*"])).build();
/// assert_eq!(shop.visible_tools(&ctx).len(), 1);
/// let other = ToolRunner::builder(catalog()).policy(ToolPolicy::allowing(["crm__*"])).build();
/// assert_eq!(other.visible_tools(&ctx).len(), 0);
/// # }
/// ```
pub mod prelude {
    #[cfg(feature = "runner")]
    pub use crate::catalog::ToolCatalog;
    #[cfg(feature = "runner")]
    pub use crate::policy::ToolPolicy;
    #[cfg(feature = "runner")]
    pub use crate::runner::ToolRunner;
    pub use crate::runtime::{
        CollectingSink, ContextIds, Tool, ToolCapabilities, ToolError, ToolErrorCode,
        ToolInvocationContext,
    };
    pub use crate::schema::ToolSchema;
    pub use crate::spec::{ToolDefinition, ToolEffect, ToolSpec};
    pub use crate::{ToolSchema, tool};
    pub use serde::{Deserialize, Serialize};
}

/// Guides: how to run tools, serve and import them over MCP, drive them from a model, offer
/// hundreds of them, and what a schema that arrives at run time may hold.
///
/// Each is a page of its own; every example in them compiles as a doc test, and every one that
/// needs no model endpoint runs.
pub mod guide {
    #[cfg(feature = "runner")]
    pub mod running_tools {
        #![doc = include_str!("../docs/running-tools.md")]
    }

    #[cfg(feature = "runner")]
    pub mod telemetry {
        #![doc = include_str!("../docs/telemetry.md")]
    }

    #[cfg(feature = "mcp")]
    pub mod mcp {
        #![doc = include_str!("../docs/mcp.md")]
    }

    #[cfg(feature = "agent")]
    pub mod agent_loop {
        #![doc = include_str!("../docs/agent-loop.md")]
    }

    #[cfg(feature = "agent")]
    pub mod large_catalogs {
        #![doc = include_str!("../docs/large-catalogs.md")]
    }

    #[cfg(feature = "agent")]
    pub mod deploying {
        #![doc = include_str!("../docs/deploying.md")]
    }

    #[cfg(all(feature = "dynamic", feature = "adapters"))]
    pub mod runtime_schemas {
        #![doc = include_str!("../docs/runtime-schemas.md")]
    }
}

/// What the macros' expansions use. Not public API: no stability promise.
#[doc(hidden)]
pub mod __private {
    pub use serde;

    pub use crate::content::IntoToolOutput;
    pub use crate::runtime::{
        Capability, CapabilityRef, Tool, ToolCapabilities, ToolError, ToolInvocationContext,
    };
    pub use crate::schema::consts::{
        MAX_STRICT_DEPTH, accepts_item_constraints, accepts_range, accepts_range_bounds,
        accepts_string_constraints, contains_connection_id, has_fields, has_output_path, has_path,
        is_satisfiable, object_depth,
    };
    pub use crate::schema::example::{
        ExampleProblem, ExampleValue, example_problem, is_required, property_schema,
    };
    pub use crate::schema::validate::{
        Check, Entries, Findings, Path, check_struct, properties_of,
    };
    pub use crate::schema::{
        ObjectSchema, OutputCheck, Property, RangeBound, Schema, SchemaKind, ToolSchema,
    };
    pub use crate::spec::{
        Callers, StaticRedaction, StaticSpecParts, ToolDefinition, ToolEffect, ToolSpec,
    };
    pub use serde_json::Value as JsonValue;

    /// Stands in for a schema the macro could not build, so one mistake does not cascade.
    pub const STUB_SCHEMA: &Schema = &Schema::object(&[]);

    /// Stands in for a spec the macro could not build.
    pub static STUB_SPEC: ToolSpec = ToolSpec::__from_static(StaticSpecParts {
        name: "",
        description: "",
        effect: ToolEffect::ExternalSideEffect,
        input_schema: STUB_SCHEMA,
        output_schema: None,
        output_check: None,
        redaction: StaticRedaction::Paths(&[]),
        details_schema: None,
        details_redaction: StaticRedaction::Paths(&[]),
        requires_connection: false,
        client: false,
        tolerate_case: false,
        callers: Callers::Direct,
        asynchronous: false,
        capabilities: &[],
        examples: &[],
    });

    /// What a client tool's `run` answers, should anything call it: the runner never does.
    pub fn client_tool_run<T>() -> ::core::future::Ready<Result<T, ToolError>> {
        ::core::future::ready(Err(ToolError::new(
            "this tool runs on the application's client, not in the runner",
        )))
    }
}
