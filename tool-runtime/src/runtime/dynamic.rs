//! Tools whose schemas arrive at run time (feature `dynamic`): validated with the `jsonschema`
//! crate.

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use async_trait::async_trait;
use serde_json::{Map, Value};

use super::{
    Arguments, BoundToolRuntime, ToolCapabilities, ToolError, ToolInvocationContext, ValidatedArgs,
};
use crate::content::ToolOutput;
use crate::schema::{
    ArgumentsError, SubsetError, ValidationErrors, check_object_root, check_subset, is_open,
};
use crate::spec::{Callers, NameError, Redaction, ToolEffect, ToolSpec, check_tool_name};

/// Builds a [`DynamicTool`]: a tool whose schemas arrive at run time.
///
/// ```
/// use serde_json::json;
/// use tool_runtime::prelude::*;
/// use tool_runtime::runtime::DynamicTool;
///
/// let tool = DynamicTool::builder(
///     "weather__forecast",
///     "Forecast for a city.",
///     json!({
///         "type": "object",
///         "properties": {"city": {"type": "string"}},
///         "required": ["city"],
///         "additionalProperties": false
///     }),
/// )
/// .effect(ToolEffect::ReadOnly)
/// .redact(["summary"])
/// .build(|args, _ctx, _caps| async move {
///     Ok(json!({"summary": format!("sunny in {}", args["city"].as_str().unwrap_or("?"))}))
/// })
/// .unwrap();
/// # let _ = tool;
///
/// let refused = DynamicTool::builder("weather__any", "", json!({"type": "object", "properties": {"x": {"oneOf": []}}}))
///     .build(|_, _, _| async { Ok(json!({})) })
///     .unwrap_err();
/// assert_eq!(refused.to_string(), "input schema: /properties/x/oneOf: `oneOf`: unions and negations are outside the subset providers accept");
///
/// // `mcp__<server>__<tool>` names belong to tools imported over MCP.
/// let squatter = DynamicTool::builder("mcp__github__create_issue", "", json!({"type": "object"}))
///     .build(|_, _, _| async { Ok(json!({})) })
///     .unwrap_err();
/// assert!(matches!(squatter, tool_runtime::runtime::DynamicToolError::ReservedNamespace(_)));
/// ```
#[derive(Debug)]
#[must_use]
pub struct DynamicToolBuilder {
    name: String,
    description: String,
    input_schema: Value,
    output_schema: Option<Value>,
    effect: ToolEffect,
    redaction: Redaction,
    /// The details schema and its allowlist.
    details: Option<(Value, Redaction)>,
    requires_connection: bool,
    /// Made by the MCP import, the only source allowed the reserved `mcp` namespace.
    imported: bool,
    /// Served to MCP clients only: the input schema may leave the subset.
    mcp_only: bool,
    /// Takes arguments its input schema does not describe.
    open: bool,
    /// Takes each top-level property in its other spelling too.
    tolerate_case: bool,
    /// Who may call the tool.
    callers: Callers,
    /// The model goes on working while a call runs.
    asynchronous: bool,
}

/// Why a [`DynamicTool`] was refused.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum DynamicToolError {
    /// The name breaks the naming rule.
    Name(NameError),
    /// The name is in the namespace reserved for tools imported over MCP
    /// (`mcp__<server>__<tool>`), which only [`McpToolSource`](crate::mcp::McpToolSource) gives.
    ReservedNamespace(String),
    /// The input schema leaves the allowed subset.
    InputSchema(SubsetError),
    /// The output schema leaves the allowed subset.
    OutputSchema(SubsetError),
    /// A schema is in the subset but not valid JSON Schema.
    InvalidSchema(String),
    /// The input schema lets arguments it does not describe through (an object without
    /// `properties`, or without `"additionalProperties": false`, at any depth), and the
    /// application did not [allow that](DynamicToolBuilder::allow_open_schema).
    OpenSchema(String),
    /// A redaction path names nothing in the output schema.
    RedactPath(String),
    /// The details schema leaves the allowed subset.
    DetailsSchema(SubsetError),
    /// A `redact_details` path names nothing in the details schema.
    RedactDetailsPath(String),
}

impl fmt::Display for DynamicToolError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Name(error) => write!(f, "tool name: {error}"),
            Self::ReservedNamespace(name) => write!(
                f,
                "tool name `{name}` is in the `{}` namespace, which is reserved for tools imported over MCP; choose another namespace",
                tool_rules::RESERVED_NAMESPACE
            ),
            Self::InputSchema(error) => write!(f, "input schema: {error}"),
            Self::OutputSchema(error) => write!(f, "output schema: {error}"),
            Self::InvalidSchema(message) => write!(f, "invalid schema: {message}"),
            Self::OpenSchema(name) => write!(
                f,
                "the input schema of `{name}` is open: an object without `properties` or without `\"additionalProperties\": false` lets arguments it does not describe through; close it, or allow it with `allow_open_schema`"
            ),
            Self::RedactPath(path) => {
                write!(f, "`redact` entry `{path}` names no field of the output schema")
            }
            Self::DetailsSchema(error) => write!(f, "details schema: {error}"),
            Self::RedactDetailsPath(path) => {
                write!(f, "`redact_details` entry `{path}` names no field of the details schema")
            }
        }
    }
}

impl std::error::Error for DynamicToolError {}

/// Whether a dotted path names a property of a JSON Schema (arrays walked through).
fn json_has_path(schema: &Value, path: &str) -> bool {
    let mut node = schema;
    for segment in path.split('.') {
        while let Some(items) = node.get("items") {
            node = items;
        }
        match node.get("properties").and_then(|properties| properties.get(segment)) {
            Some(child) => node = child,
            None => return false,
        }
    }
    !path.is_empty()
}

fn compile(schema: &Value) -> Result<jsonschema::Validator, DynamicToolError> {
    jsonschema::draft202012::new(schema)
        .map_err(|error| DynamicToolError::InvalidSchema(error.masked().to_string()))
}

fn object(schema: Value) -> Map<String, Value> {
    match schema {
        Value::Object(map) => map,
        _ => Map::new(),
    }
}

impl DynamicTool {
    /// Starts a dynamic tool with its name, description and input schema. Unless told otherwise
    /// it is an `external_side_effect` (the most cautious reading), needs no connection, has no
    /// output schema, lets no output field through redaction and drops any details.
    pub fn builder(
        name: impl Into<String>,
        description: impl Into<String>,
        input_schema: Value,
    ) -> DynamicToolBuilder {
        DynamicToolBuilder {
            name: name.into(),
            description: description.into(),
            input_schema,
            output_schema: None,
            effect: ToolEffect::ExternalSideEffect,
            redaction: Redaction::none(),
            details: None,
            requires_connection: false,
            imported: false,
            mcp_only: false,
            open: false,
            tolerate_case: false,
            callers: Callers::Direct,
            asynchronous: false,
        }
    }
}

impl DynamicToolBuilder {
    /// What running the tool does to the world.
    pub fn effect(mut self, effect: ToolEffect) -> Self {
        self.effect = effect;
        self
    }

    /// The schema outputs must satisfy.
    pub fn output_schema(mut self, schema: Value) -> Self {
        self.output_schema = Some(schema);
        self
    }

    /// The output fields that may leave the runner (`#[tool(redact = [...])]`): dotted paths
    /// into the output schema, walked through arrays.
    pub fn redact<I: IntoIterator<Item = S>, S: Into<String>>(mut self, paths: I) -> Self {
        self.redaction = Redaction::new(paths);
        self
    }

    /// Lets the whole output leave the runner (`#[tool(redact = all)]`), whatever its shape:
    /// the only way the text a tool without an output schema returns reaches the model.
    ///
    /// ```
    /// use serde_json::json;
    /// use tool_runtime::prelude::*;
    /// use tool_runtime::runtime::{BoundToolRuntime, DynamicTool};
    ///
    /// let no_arguments = json!({"type": "object", "properties": {}, "additionalProperties": false});
    /// let tool = DynamicTool::builder("text__shout", "Shout.", no_arguments)
    ///     .effect(ToolEffect::ReadOnly)
    ///     .redact_all()
    ///     .build(|_, _, _| async { Ok(json!("HEY")) })
    ///     .unwrap();
    /// assert!(tool.spec().redaction().is_all());
    ///
    /// # tokio::runtime::Runtime::new().unwrap().block_on(async {
    /// let runner = ToolRunner::builder(ToolCatalog::builder().register_dynamic(tool).build().unwrap())
    ///     .policy(ToolPolicy::allowing(["text__*"]))
    ///     .build();
    /// let ctx = ToolInvocationContext::new(ContextIds { run_id: "r", actor_id: "a", tenant_id: "t" });
    /// let result = runner.exec("text__shout", b"{}", &ctx).await;
    /// assert_eq!(result.value(), Some(&json!("HEY")));
    /// # });
    /// ```
    pub fn redact_all(mut self) -> Self {
        self.redaction = Redaction::all();
        self
    }

    /// The schema of the details the handler returns (see
    /// [`ToolOutput::with_details`]) and the detail fields that may leave the runner
    /// (`#[tool(redact_details = [...])]`, or [`Redaction::all`]). Without it, details are
    /// dropped.
    ///
    /// ```
    /// use serde_json::json;
    /// use tool_runtime::content::{Part, ToolOutput};
    /// use tool_runtime::runtime::{BoundToolRuntime, DynamicTool};
    /// use tool_runtime::spec::Redaction;
    ///
    /// let details = json!({"type": "object", "properties": {"path": {"type": "string"}, "owner": {"type": "string"}}});
    /// let no_arguments = json!({"type": "object", "properties": {}, "additionalProperties": false});
    /// let tool = DynamicTool::builder("files__touch", "Touch a file.", no_arguments)
    ///     .details(details, Redaction::new(["path"]))
    ///     .build(|_, _, _| async {
    ///         Ok(ToolOutput::from(Part::Text("done".into()))
    ///             .with_details(json!({"path": "/tmp/a", "owner": "x"})))
    ///     })
    ///     .unwrap();
    /// assert_eq!(tool.spec().details_redaction().paths().collect::<Vec<_>>(), ["path"]);
    /// ```
    pub fn details(mut self, schema: Value, redaction: Redaction) -> Self {
        self.details = Some((schema, redaction));
        self
    }

    /// Whether the tool needs a granted connection.
    pub fn requires_connection(mut self, requires: bool) -> Self {
        self.requires_connection = requires;
        self
    }

    /// Lets the input schema be open: an object without `properties` (a tool of free-form
    /// arguments) or without `"additionalProperties": false`, at any depth. By default such a
    /// schema is refused ([`DynamicToolError::OpenSchema`]): arguments the schema does not
    /// describe would reach the tool unchecked, so a run-time tool fails closed, as an imported
    /// one does ([`McpImportOptions::allow_open_schema`](crate::mcp::McpImportOptions::allow_open_schema)).
    ///
    /// ```
    /// use serde_json::json;
    /// use tool_runtime::runtime::{DynamicTool, DynamicToolError};
    ///
    /// let open = json!({"type": "object", "properties": {"q": {"type": "string"}}});
    /// let refused = DynamicTool::builder("docs__search", "Search.", open.clone())
    ///     .build(|_, _, _| async { Ok(json!({})) })
    ///     .unwrap_err();
    /// assert!(matches!(refused, DynamicToolError::OpenSchema(_)));
    /// let allowed = DynamicTool::builder("docs__search", "Search.", open)
    ///     .allow_open_schema()
    ///     .build(|_, _, _| async { Ok(json!({})) });
    /// assert!(allowed.is_ok());
    /// ```
    pub fn allow_open_schema(mut self) -> Self {
        self.open = true;
        self
    }

    /// Lets the input schema use all of JSON Schema 2020-12 (`$defs` and `$ref`, `allOf`,
    /// `anyOf`, `oneOf`, `if`/`then`/`else`, `const`, `$anchor`, ...) instead of the subset
    /// providers accept, for a tool served to MCP clients, which take any 2020-12 schema: the
    /// server lists it exactly as given, and arguments are validated against all of it. No
    /// model is offered such a tool ([`ToolSpec::is_mcp_only`]): every adapter refuses it
    /// ([`EncodeError::McpOnly`](crate::adapters::EncodeError::McpOnly)) and the agent leaves it
    /// out of what it offers (policy still decides who may call it). The schema must still be
    /// an object schema (`"type": "object"`, as MCP asks) and valid 2020-12; references stay
    /// within the document (nothing is fetched). The output schema keeps to the subset:
    /// redaction is checked against it.
    ///
    /// ```
    /// use serde_json::json;
    /// use tool_runtime::runtime::{BoundToolRuntime, DynamicTool};
    ///
    /// let schema = json!({
    ///     "$schema": "https://json-schema.org/draft/2020-12/schema",
    ///     "type": "object",
    ///     "properties": {"phone": {"type": "string"}, "email": {"type": "string"}},
    ///     "anyOf": [{"required": ["phone"]}, {"required": ["email"]}],
    ///     "additionalProperties": false
    /// });
    /// let refused = DynamicTool::builder("crm__contact", "Add a contact.", schema.clone())
    ///     .build(|_, _, _| async { Ok(json!({})) });
    /// assert!(refused.is_err(), "`anyOf` is outside the subset providers accept");
    ///
    /// let tool = DynamicTool::builder("crm__contact", "Add a contact.", schema)
    ///     .mcp_only()
    ///     .build(|_, _, _| async { Ok(json!({})) })
    ///     .unwrap();
    /// assert!(tool.spec().is_mcp_only());
    /// ```
    pub fn mcp_only(mut self) -> Self {
        self.mcp_only = true;
        self
    }

    /// Takes each top-level property of the arguments in its other spelling too (`userId` for
    /// `user_id` and back), as `#[tool(tolerate_case)]` does: see
    /// [`ToolSpec::tolerates_case`].
    ///
    /// ```
    /// use serde_json::json;
    /// use tool_runtime::runtime::{BoundToolRuntime, DynamicTool};
    ///
    /// let tool = DynamicTool::builder(
    ///     "crm__find_user",
    ///     "Find a user by id.",
    ///     json!({"type": "object", "properties": {"user_id": {"type": "string"}}, "required": ["user_id"], "additionalProperties": false}),
    /// )
    /// .tolerate_case()
    /// .redact_all()
    /// .build(|args, _, _| async move { Ok(args["user_id"].clone()) })
    /// .unwrap();
    /// assert!(tool.spec().tolerates_case());
    /// ```
    pub fn tolerate_case(mut self) -> Self {
        self.tolerate_case = true;
        self
    }

    /// Who may call the tool: the model (the default), code the model writes, or both, as
    /// `#[tool(callers = ...)]` says: see [`Callers`].
    ///
    /// ```
    /// use serde_json::json;
    /// use tool_runtime::runtime::{BoundToolRuntime, DynamicTool};
    /// use tool_runtime::spec::Callers;
    ///
    /// let tool = DynamicTool::builder(
    ///     "sales__query",
    ///     "Run a read-only SQL query over the sales tables.",
    ///     json!({"type": "object", "properties": {"sql": {"type": "string"}}, "required": ["sql"], "additionalProperties": false}),
    /// )
    /// .callers(Callers::Programmatic)
    /// .redact_all()
    /// .build(|_, _, _| async move { Ok(json!([])) })
    /// .unwrap();
    /// assert_eq!(tool.spec().callers(), Callers::Programmatic);
    /// ```
    pub fn callers(mut self, callers: Callers) -> Self {
        self.callers = callers;
        self
    }

    /// The model goes on working while a call of the tool runs, as `#[tool(asynchronous)]`
    /// says: see [`ToolSpec::is_asynchronous`].
    ///
    /// ```
    /// use serde_json::json;
    /// use tool_runtime::runtime::{BoundToolRuntime, DynamicTool};
    ///
    /// let tool = DynamicTool::builder(
    ///     "reports__build",
    ///     "Build the monthly sales report (takes minutes).",
    ///     json!({"type": "object", "properties": {"month": {"type": "string"}}, "required": ["month"], "additionalProperties": false}),
    /// )
    /// .asynchronous()
    /// .redact_all()
    /// .build(|args, _, _| async move { Ok(json!({"report": args["month"]})) })
    /// .unwrap();
    /// assert!(tool.spec().is_asynchronous());
    /// ```
    pub fn asynchronous(mut self) -> Self {
        self.asynchronous = true;
        self
    }

    /// Marks a tool imported over MCP, which may use the reserved `mcp` namespace.
    #[cfg(feature = "mcp-client")]
    pub(crate) fn imported(mut self) -> Self {
        self.imported = true;
        self
    }

    /// Checks everything and binds the handler that runs the tool. The handler returns a JSON
    /// value (the structured output) or a [`ToolOutput`] of several parts.
    ///
    /// # Errors
    ///
    /// [`DynamicToolError`]: a bad name, a schema outside the subset or invalid, or a redaction
    /// path the output (or details) schema does not have.
    pub fn build<F, Fut, O>(self, handler: F) -> Result<DynamicTool, DynamicToolError>
    where
        F: Fn(Value, ToolInvocationContext, ToolCapabilities) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<O, ToolError>> + Send + 'static,
        O: Into<ToolOutput>,
    {
        check_tool_name(&self.name).map_err(DynamicToolError::Name)?;
        if !self.imported
            && tool_rules::parse_tool_name(&self.name).is_ok_and(|name| name.is_reserved())
        {
            return Err(DynamicToolError::ReservedNamespace(self.name));
        }
        if self.mcp_only {
            check_object_root(&self.input_schema).map_err(DynamicToolError::InputSchema)?;
        } else {
            check_subset(&self.input_schema).map_err(DynamicToolError::InputSchema)?;
        }
        // An imported tool's openness is the import's to allow (`McpImportOptions`).
        if !self.open
            && !self.imported
            && matches!(&self.input_schema, Value::Object(schema) if is_open(schema))
        {
            return Err(DynamicToolError::OpenSchema(self.name));
        }
        let input = compile(&self.input_schema)?;
        let output = match &self.output_schema {
            Some(schema) => {
                check_subset(schema).map_err(DynamicToolError::OutputSchema)?;
                if let Some(path) = self.redaction.paths().find(|path| !json_has_path(schema, path))
                {
                    return Err(DynamicToolError::RedactPath(path.to_owned()));
                }
                Some(compile(schema)?)
            }
            None => None,
        };
        let details = match self.details {
            Some((schema, redaction)) => {
                check_subset(&schema).map_err(DynamicToolError::DetailsSchema)?;
                compile(&schema)?;
                if let Some(path) = redaction.paths().find(|path| !json_has_path(&schema, path)) {
                    return Err(DynamicToolError::RedactDetailsPath(path.to_owned()));
                }
                Some((object(schema), redaction))
            }
            None => None,
        };
        let spec = ToolSpec::dynamic(
            self.name,
            self.description,
            self.effect,
            object(self.input_schema),
            self.output_schema.map(object),
            self.redaction,
            details,
            self.requires_connection,
        );
        // An imported tool's server may ask its user (MCP 2026-07-28 input-required rounds):
        // its questions wait as a tool's that declares `Interact` do.
        let spec = if self.imported { spec.with_capabilities(IMPORTED_CAPABILITIES) } else { spec };
        let spec = if self.mcp_only { spec.for_mcp_only() } else { spec };
        let spec = if self.tolerate_case { spec.tolerating_case() } else { spec };
        let spec = spec.with_callers(self.callers);
        let spec = if self.asynchronous { spec.asynchronous() } else { spec };
        let handler = Arc::new(move |args, ctx, caps| -> DynamicFuture {
            let run = handler(args, ctx, caps);
            Box::pin(async move { run.await.map(Into::into) })
        });
        Ok(DynamicTool { spec, input, output, handler })
    }
}

/// What an imported tool declares: it may ask its user.
const IMPORTED_CAPABILITIES: &[crate::spec::CapabilityRef] =
    &[crate::spec::CapabilityRef::of::<super::Interact>()];

/// The future a [`DynamicTool`]'s handler returns.
pub type DynamicFuture = Pin<Box<dyn Future<Output = Result<ToolOutput, ToolError>> + Send>>;

type Handler =
    Arc<dyn Fn(Value, ToolInvocationContext, ToolCapabilities) -> DynamicFuture + Send + Sync>;

/// A tool whose schema is known only at run time (imported over MCP, defined by
/// configuration). Its schemas were checked against the allowed subset when it was built; its
/// arguments and outputs are validated with the `jsonschema` crate.
///
/// Build one with [`DynamicTool::builder`].
pub struct DynamicTool {
    spec: ToolSpec,
    input: jsonschema::Validator,
    output: Option<jsonschema::Validator>,
    handler: Handler,
}

impl DynamicTool {
    /// This tool, run by its application's client ([`ClientTool`](super::ClientTool)).
    pub(crate) fn for_client(mut self) -> Self {
        self.spec = self.spec.for_client();
        self
    }
}

impl fmt::Debug for DynamicTool {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("DynamicTool").field(&self.spec.name()).finish()
    }
}

/// Every `jsonschema` error on `value`, with pointers and masked messages (never the value).
fn external_errors(
    validator: &jsonschema::Validator,
    value: &Value,
) -> Result<(), ValidationErrors> {
    let mut errors = ValidationErrors::default();
    for error in validator.iter_errors(value) {
        errors.push_external(error.instance_path().as_str(), error.masked().to_string());
    }
    if errors.is_empty() { Ok(()) } else { Err(errors) }
}

#[async_trait]
impl BoundToolRuntime for DynamicTool {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    fn arguments(&self, args: Arguments<'_>) -> Result<ValidatedArgs, ArgumentsError> {
        let args = args.into_value()?;
        external_errors(&self.input, &args).map_err(ArgumentsError::Validation)?;
        Ok(ValidatedArgs::untyped(args))
    }

    async fn exec(
        &self,
        args: ValidatedArgs,
        ctx: &ToolInvocationContext,
        caps: &ToolCapabilities,
    ) -> Result<ToolOutput, ToolError> {
        (self.handler)(args.into_value(), ctx.clone(), caps.clone()).await
    }

    fn validate_output(&self, output: &Value) -> Result<(), ValidationErrors> {
        match &self.output {
            Some(validator) => external_errors(validator, output),
            None => Ok(()),
        }
    }
}
