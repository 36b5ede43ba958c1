//! Where tools are registered, and the only way to get the list a model sees.
//!
//! A [`ToolCatalog`] is built once, in the composition root: it holds every tool (compile-time
//! tools and dynamic ones, plus [`ToolSource`]s whose tools may change at run time), the
//! capabilities the application binds, and the connection broker. Building it fails on a name
//! registered twice or a capability some tool declares but nobody bound.
//!
//! [`visible_tools`] then filters a source through policy for one caller: the [`VisibleTools`] it
//! returns are what the model may be shown, in a deterministic order.
//! ([`ToolRunner::visible_tools`](crate::runner::ToolRunner::visible_tools) does the same with
//! the runner's catalog and policy.)
//!
//! ```
//! use examples_for_docs::*;
//! use tool_runtime::catalog::visible_tools;
//! use tool_runtime::prelude::*;
//!
//! let catalog = ToolCatalog::builder().register::<Echo>().register::<Shout>().build().unwrap();
//! let policy = ToolPolicy::allowing(["demo__echo"]);
//! let ctx = ToolInvocationContext::new(ContextIds { run_id: "run-1", actor_id: "user-1", tenant_id: "tenant-1" });
//! let visible = visible_tools(&catalog, &policy, &ctx);
//! assert_eq!(visible.names().collect::<Vec<_>>(), ["demo__echo"]);
//!
//! let twice = ToolCatalog::builder().register::<Echo>().register::<Echo>().build().unwrap_err();
//! assert!(twice.to_string().contains("`demo__echo` is registered twice"));
//! # mod examples_for_docs {
//! #     use tool_runtime::prelude::*;
//! #     /// Echo.
//! #     #[tool(name = "demo__echo", effect = read_only, redact = ["text"])]
//! #     pub struct Echo { text: String }
//! #     /// Shout.
//! #     #[tool(name = "demo__shout", effect = read_only, redact = ["text"])]
//! #     pub struct Shout { text: String }
//! #     #[derive(Serialize, ToolSchema)]
//! #     pub struct Text { text: String }
//! #     impl Tool for Echo {
//! #         type Output = Text;
//! #         async fn run(self, _: &ToolInvocationContext, _: &ToolCapabilities) -> Result<Text, ToolError> { Ok(Text { text: self.text }) }
//! #     }
//! #     impl Tool for Shout {
//! #         type Output = Text;
//! #         async fn run(self, _: &ToolInvocationContext, _: &ToolCapabilities) -> Result<Text, ToolError> { Ok(Text { text: self.text.to_uppercase() }) }
//! #     }
//! # }
//! ```

use std::any::TypeId;
use std::collections::BTreeMap;
use std::fmt;
use std::sync::Arc;

use serde::{Serialize, Serializer};

use crate::policy::{Decision, ToolPolicy};
#[cfg(feature = "dynamic")]
use crate::runtime::DynamicTool;
use crate::runtime::{
    Auth, BoundToolRuntime, Capability, ConnectionBroker, Partial, StaticTool, Tool,
    ToolCapabilities, ToolInvocationContext,
};
use crate::spec::ToolSpec;

pub mod embed;
pub mod select;
pub mod stubs;

/// A set of tools that may change while the program runs (an MCP server's tools).
pub trait ToolSource: Send + Sync + fmt::Debug {
    /// Every tool, in any order.
    fn tools(&self) -> Vec<Arc<dyn BoundToolRuntime>>;

    /// The tool with this name.
    fn get(&self, name: &str) -> Option<Arc<dyn BoundToolRuntime>> {
        self.tools().into_iter().find(|tool| tool.name() == name)
    }
}

/// Every tool of an application, with the capabilities and broker they run with.
#[derive(Debug)]
pub struct ToolCatalog {
    tools: BTreeMap<String, Arc<dyn BoundToolRuntime>>,
    sources: Vec<Arc<dyn ToolSource>>,
    capabilities: ToolCapabilities,
    broker: Option<Arc<dyn ConnectionBroker>>,
    /// Every tool takes its top-level properties in their other spelling too.
    tolerate_case: bool,
}

/// Builds a [`ToolCatalog`]; see the [module docs](self).
#[derive(Debug, Clone)]
#[must_use]
pub struct ToolCatalogBuilder {
    entries: Vec<(Arc<dyn BoundToolRuntime>, String)>,
    sources: Vec<Arc<dyn ToolSource>>,
    capabilities: ToolCapabilities,
    broker: Option<Arc<dyn ConnectionBroker>>,
    tolerate_case: bool,
}

/// One reason a catalog could not be built.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum CatalogProblem {
    /// Two registrations share a name.
    DuplicateName {
        /// The name.
        name: String,
        /// What registered it first.
        first: String,
        /// What registered it again.
        second: String,
    },
    /// A tool declares a capability that was not bound.
    UnboundCapability {
        /// The tool.
        tool: String,
        /// The capability's name.
        capability: &'static str,
    },
    /// An example of a tool's arguments (`#[tool(examples = [...])]`) its schema refuses. The
    /// compiler checks everything of an example but patterns, which are checked here.
    InvalidExample {
        /// The tool.
        tool: String,
        /// Which example, 1-based as in the attribute.
        example: usize,
        /// What the schema refuses.
        problem: String,
    },
}

impl fmt::Display for CatalogProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::DuplicateName { name, first, second } => {
                write!(f, "tool name `{name}` is registered twice: by {first} and by {second}")
            }
            Self::UnboundCapability { tool, capability } if *capability == Auth::NAME => write!(
                f,
                "tool `{tool}` declares capability `auth`, but no connection broker was bound (`.connection_broker(...)`)"
            ),
            Self::UnboundCapability { tool, capability } => write!(
                f,
                "tool `{tool}` declares capability `{capability}`, but none was bound (`.capability(...)`)"
            ),
            Self::InvalidExample { tool, example, problem } => {
                write!(f, "example {example} of tool `{tool}` does not fit its schema: {problem}")
            }
        }
    }
}

/// Every problem that kept a catalog from being built.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CatalogError(Vec<CatalogProblem>);

impl CatalogError {
    /// The problems, in registration order.
    #[must_use]
    pub fn problems(&self) -> &[CatalogProblem] {
        &self.0
    }
}

impl fmt::Display for CatalogError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, problem) in self.0.iter().enumerate() {
            if i > 0 {
                f.write_str("; ")?;
            }
            write!(f, "{problem}")?;
        }
        Ok(())
    }
}

impl std::error::Error for CatalogError {}

impl ToolCatalog {
    /// Starts an empty catalog.
    pub fn builder() -> ToolCatalogBuilder {
        ToolCatalogBuilder {
            entries: Vec::new(),
            sources: Vec::new(),
            capabilities: ToolCapabilities::new(),
            broker: None,
            tolerate_case: false,
        }
    }

    /// The capabilities bound for the tools. Not public: a tool's capabilities are handed to it
    /// by the runner, and only there (a `ToolCapabilities` outside would let code call a tool
    /// past the runner).
    pub(crate) fn capabilities(&self) -> &ToolCapabilities {
        &self.capabilities
    }

    /// The names of the capabilities bound for the tools, sorted.
    #[must_use]
    pub fn capability_names(&self) -> Vec<&'static str> {
        self.capabilities.names()
    }

    /// The connection broker, if one was bound.
    #[must_use]
    pub fn broker(&self) -> Option<&Arc<dyn ConnectionBroker>> {
        self.broker.as_ref()
    }

    /// Whether every tool of the catalog takes its top-level properties in their other
    /// spelling too ([`ToolCatalogBuilder::tolerate_case`]).
    #[must_use]
    pub fn tolerates_case(&self) -> bool {
        self.tolerate_case
    }
}

/// The examples of `spec` its input schema refuses (only patterns can get this far: the
/// compiler checked the rest).
fn invalid_examples(spec: &ToolSpec) -> impl Iterator<Item = CatalogProblem> + '_ {
    let schema = spec.input_schema().as_static();
    spec.examples().iter().enumerate().filter_map(move |(index, example)| {
        let errors = schema?.validate(example).err()?;
        Some(CatalogProblem::InvalidExample {
            tool: spec.name().to_owned(),
            example: index + 1,
            problem: errors.to_string(),
        })
    })
}

/// How errors name the source at `index` of a builder.
fn source_origin(index: usize) -> String {
    format!("source #{} (`.source(...)` call {} of the builder)", index + 1, index + 1)
}

impl ToolCatalog {
    /// Names offered more than once right now, with what offers them (registered tools first,
    /// then sources in the order they were added); the first of each list is the one that
    /// runs. Empty for a catalog whose sources kept their tools since it was built: check it
    /// after a source's tools change (an MCP server's `list_changed`).
    ///
    /// ```
    /// use tool_runtime::catalog::ToolCatalog;
    ///
    /// let catalog = ToolCatalog::builder().build().unwrap();
    /// assert!(catalog.collisions().is_empty());
    /// ```
    #[must_use]
    pub fn collisions(&self) -> Vec<(String, Vec<String>)> {
        let mut offered: BTreeMap<String, Vec<String>> = self
            .tools
            .keys()
            .map(|name| (name.clone(), vec!["a registered tool".to_owned()]))
            .collect();
        for (index, source) in self.sources.iter().enumerate() {
            for tool in source.tools() {
                offered.entry(tool.name().to_owned()).or_default().push(source_origin(index));
            }
        }
        offered.into_iter().filter(|(_, origins)| origins.len() > 1).collect()
    }
}

impl ToolSource for ToolCatalog {
    /// Registered tools first (by name), then each source's tools whose names are not taken.
    fn tools(&self) -> Vec<Arc<dyn BoundToolRuntime>> {
        let mut all = self.tools.clone();
        for source in &self.sources {
            for tool in source.tools() {
                all.entry(tool.name().to_owned()).or_insert(tool);
            }
        }
        all.into_values().collect()
    }

    fn get(&self, name: &str) -> Option<Arc<dyn BoundToolRuntime>> {
        self.tools
            .get(name)
            .cloned()
            .or_else(|| self.sources.iter().find_map(|source| source.get(name)))
    }
}

impl ToolCatalogBuilder {
    /// Registers a `#[tool]` type.
    pub fn register<T: Tool + Sync>(self) -> Self {
        self.register_bound(
            Arc::new(StaticTool::<T>::new()),
            format!("`{}`", std::any::type_name::<T>()),
        )
    }

    /// Registers a tool whose schema is known at run time.
    #[cfg(feature = "dynamic")]
    pub fn register_dynamic(self, tool: DynamicTool) -> Self {
        let origin = format!("a dynamic tool (`{}`)", tool.name());
        self.register_bound(Arc::new(tool), origin)
    }

    /// Registers any bound tool; `origin` names it in errors.
    pub fn register_bound(mut self, tool: Arc<dyn BoundToolRuntime>, origin: String) -> Self {
        self.entries.push((tool, origin));
        self
    }

    /// Adds a source whose tools may change at run time. A name it offers when the catalog is
    /// built that is registered already, or offered by an earlier source, is a
    /// [`CatalogProblem::DuplicateName`] naming both. A name that collides later (the source's
    /// tools changed) resolves to the registered tool, then to the earliest source; see
    /// [`ToolCatalog::collisions`].
    pub fn source(mut self, source: Arc<dyn ToolSource>) -> Self {
        self.sources.push(source);
        self
    }

    /// Binds a capability for the tools that declare it.
    pub fn capability<C: Capability>(mut self, capability: C) -> Self {
        self.capabilities = self.capabilities.with(capability);
        self
    }

    /// Binds a shared capability.
    pub fn shared_capability<C: Capability>(mut self, capability: Arc<C>) -> Self {
        self.capabilities = self.capabilities.with_shared(capability);
        self
    }

    /// Binds the broker that gives tools declaring [`Auth`] their credentials.
    pub fn connection_broker(mut self, broker: Arc<dyn ConnectionBroker>) -> Self {
        self.broker = Some(broker);
        self
    }

    /// Every tool of the catalog, whatever its source (a `#[tool]`, a run-time tool, an
    /// imported MCP tool), takes each top-level property of its arguments in its other spelling
    /// too: `userId` for `user_id` and back. What one tool opts into with
    /// `#[tool(tolerate_case)]`, for all: see [`ToolSpec::tolerates_case`](crate::spec::ToolSpec::tolerates_case).
    ///
    /// ```
    /// # tokio::runtime::Runtime::new().unwrap().block_on(async {
    /// use tool_runtime::prelude::*;
    ///
    /// /// Find a user.
    /// #[tool(name = "crm__find_user", effect = read_only, redact = all)]
    /// struct FindUser { user_id: String }
    ///
    /// impl Tool for FindUser {
    ///     type Output = String;
    ///     async fn run(self, _: &ToolInvocationContext, _: &ToolCapabilities) -> Result<String, ToolError> {
    ///         Ok(self.user_id)
    ///     }
    /// }
    ///
    /// let catalog = ToolCatalog::builder().register::<FindUser>().tolerate_case().build().unwrap();
    /// let runner = ToolRunner::builder(catalog).policy(ToolPolicy::allowing(["crm__*"])).build();
    /// let ctx = ToolInvocationContext::new(ContextIds { run_id: "run-1", actor_id: "user-1", tenant_id: "acme" });
    /// let found = runner.exec("crm__find_user", r#"{"userId": "u-7"}"#, &ctx).await;
    /// assert_eq!(found.value(), Some(&serde_json::json!("u-7")));
    /// assert_eq!(found.args(), Some(&serde_json::json!({"user_id": "u-7"})));
    /// # });
    /// ```
    pub fn tolerate_case(mut self) -> Self {
        self.tolerate_case = true;
        self
    }

    /// Checks the registrations and builds the catalog.
    ///
    /// # Errors
    ///
    /// [`CatalogError`] listing every name registered twice and every capability declared but
    /// not bound.
    pub fn build(self) -> Result<ToolCatalog, CatalogError> {
        let mut problems = Vec::new();
        let mut tools: BTreeMap<String, (Arc<dyn BoundToolRuntime>, String)> = BTreeMap::new();
        for (tool, origin) in self.entries {
            for capability in tool.capabilities() {
                let bound = if capability.type_id() == TypeId::of::<Auth>() {
                    self.broker.is_some()
                } else if capability.type_id() == TypeId::of::<Partial>() {
                    // The runner hands each call its own.
                    true
                } else {
                    self.capabilities.contains_id(capability.type_id())
                };
                if !bound {
                    problems.push(CatalogProblem::UnboundCapability {
                        tool: tool.name().to_owned(),
                        capability: capability.name(),
                    });
                }
            }
            problems.extend(invalid_examples(tool.spec()));
            match tools.get(tool.name()) {
                Some((_, first)) => problems.push(CatalogProblem::DuplicateName {
                    name: tool.name().to_owned(),
                    first: first.clone(),
                    second: origin,
                }),
                None => {
                    tools.insert(tool.name().to_owned(), (tool, origin));
                }
            }
        }
        let mut offered: BTreeMap<String, String> =
            tools.iter().map(|(name, (_, origin))| (name.clone(), origin.clone())).collect();
        for (index, source) in self.sources.iter().enumerate() {
            let origin = source_origin(index);
            for tool in source.tools() {
                match offered.get(tool.name()) {
                    Some(first) => problems.push(CatalogProblem::DuplicateName {
                        name: tool.name().to_owned(),
                        first: first.clone(),
                        second: origin.clone(),
                    }),
                    None => {
                        offered.insert(tool.name().to_owned(), origin.clone());
                    }
                }
            }
        }
        if !problems.is_empty() {
            return Err(CatalogError(problems));
        }
        Ok(ToolCatalog {
            tools: tools.into_iter().map(|(name, (tool, _))| (name, tool)).collect(),
            sources: self.sources,
            capabilities: self.capabilities,
            broker: self.broker,
            tolerate_case: self.tolerate_case,
        })
    }
}

/// The tools a model may be shown, for one caller.
#[derive(Debug, Clone)]
pub struct VisibleTools(Vec<Arc<dyn BoundToolRuntime>>);

impl VisibleTools {
    /// The tools, ordered by name.
    pub fn iter(&self) -> impl Iterator<Item = &Arc<dyn BoundToolRuntime>> {
        self.0.iter()
    }

    /// Their specs, ordered by name.
    pub fn specs(&self) -> impl Iterator<Item = &ToolSpec> {
        self.0.iter().map(|tool| tool.spec())
    }

    /// Their names, in order.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.0.iter().map(|tool| tool.name())
    }

    /// The spec of the visible tool `name`, if it is one.
    #[cfg(feature = "agent")]
    pub(crate) fn spec(&self, name: &str) -> Option<&ToolSpec> {
        let found = self.0.binary_search_by(|tool| tool.name().cmp(name)).ok();
        found.map(|index| self.0[index].spec())
    }

    /// The visible tools whose names `keep` keeps.
    #[cfg(feature = "agent")]
    pub(crate) fn filtered(&self, keep: impl Fn(&str) -> bool) -> Self {
        Self(self.0.iter().filter(|tool| keep(tool.name())).cloned().collect())
    }

    /// How many tools are visible.
    #[must_use]
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// Whether none is.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// These tools without those served to MCP clients only ([`ToolSpec::is_mcp_only`]):
    /// what a model may be offered. The agent offers no others.
    #[must_use]
    pub fn for_models(mut self) -> Self {
        self.0.retain(|tool| !tool.spec().is_mcp_only());
        self
    }
}

impl Serialize for VisibleTools {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_seq(self.specs())
    }
}

/// The tools of `source` that `policy` lets this caller see, ordered by name: the only list to
/// offer a model. Denied tools are hidden, and so are connection-requiring tools when no
/// connection is both granted and requested.
#[must_use]
pub fn visible_tools(
    source: &dyn ToolSource,
    policy: &ToolPolicy,
    ctx: &ToolInvocationContext,
) -> VisibleTools {
    let mut tools: Vec<_> =
        source.tools().into_iter().filter(|tool| shows(policy, ctx, tool.spec())).collect();
    tools.sort_by(|a, b| a.name().cmp(b.name()));
    tools.dedup_by(|a, b| a.name() == b.name());
    VisibleTools(tools)
}

/// Whether `policy` shows the tool of `spec` to this caller: in the context's
/// [tool set](ToolInvocationContext::with_tool_set) (when it has one), not denied, for the
/// context's subject and graph ([`ToolPolicy::identity_allows`]), and if it needs a
/// connection, some connection is both granted and requested.
#[must_use]
pub fn shows(policy: &ToolPolicy, ctx: &ToolInvocationContext, spec: &ToolSpec) -> bool {
    ctx.in_tool_set(spec.name())
        && !matches!(policy.decide(spec.name(), spec.effect()), Decision::Deny { .. })
        && policy.identity_allows(spec.name(), ctx.subject_id(), ctx.graph_id()).is_ok()
        && (!spec.requires_connection()
            || ctx.requested_connection_ids().iter().any(|id| policy.grants_connection(id)))
}

/// Whether the call may use its connection: `ctx.connection_id()` is both granted by `policy`
/// and requested by the context.
pub(crate) fn connection_allowed(policy: &ToolPolicy, ctx: &ToolInvocationContext) -> bool {
    ctx.connection_id().is_some_and(|id| {
        policy.grants_connection(id) && ctx.requested_connection_ids().iter().any(|r| r == id)
    })
}

/// The old name of [`visible_tools`], which says what it returns.
#[deprecated(note = "renamed to `visible_tools`, which says what it returns")]
#[must_use]
pub fn create_tool_catalog(
    source: &dyn ToolSource,
    policy: &ToolPolicy,
    ctx: &ToolInvocationContext,
) -> VisibleTools {
    visible_tools(source, policy, ctx)
}
