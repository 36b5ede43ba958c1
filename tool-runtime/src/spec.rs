//! The frozen description of a tool: [`ToolSpec`], [`ToolEffect`] and [`ToolDefinition`].

use std::borrow::Cow;
use std::fmt;
use std::sync::{Arc, OnceLock};

use serde::ser::{SerializeMap, SerializeSeq};
use serde::{Deserialize, Serialize, Serializer};
use serde_json::{Map, Value};

use crate::schema::example::ExampleValue;
use crate::schema::{OutputCheck, Schema, SchemaKind, ToolSchema};

/// What running a tool does to the world. Policy decides per effect (for example: every
/// `state_change` needs approval).
///
/// ```
/// use tool_runtime::prelude::*;
/// assert_eq!(serde_json::to_value(ToolEffect::ReadOnly).unwrap(), "read_only");
/// assert_eq!("state_change".parse::<ToolEffect>().unwrap(), ToolEffect::StateChange);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ToolEffect {
    /// Reads only; repeating it changes nothing.
    ReadOnly,
    /// Changes state the application owns (a database row, a file).
    StateChange,
    /// Acts outside the application (sends an email, calls a payment API).
    ExternalSideEffect,
}

impl ToolEffect {
    /// Every effect, from least to most consequential.
    pub const ALL: [Self; 3] = [Self::ReadOnly, Self::StateChange, Self::ExternalSideEffect];

    /// The name used in `#[tool(effect = ...)]`, policy files and JSON.
    #[must_use]
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::ReadOnly => "read_only",
            Self::StateChange => "state_change",
            Self::ExternalSideEffect => "external_side_effect",
        }
    }
}

impl fmt::Display for ToolEffect {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Who may call a tool: the model directly, code the model writes (Anthropic's programmatic
/// tool calling, OpenAI's `programmatic` callers), or both. Set with `#[tool(callers = ...)]`
/// or [`DynamicToolBuilder::callers`](crate::runtime::DynamicToolBuilder::callers); the default
/// is [`Callers::Direct`], which is what every provider assumes when told nothing.
///
/// The adapters send it as the tool's `allowed_callers` and add the provider's code tool
/// (Anthropic `code_execution_20260120`, OpenAI `programmatic_tool_calling`) when an offered
/// tool may be called from code. Providers without code calling refuse a tool that only code
/// may call ([`EncodeError::CodeOnly`](crate::adapters::EncodeError::CodeOnly)) and offer a
/// [`Callers::Both`] tool as a plain one. The agent refuses a call whose origin the
/// tool does not allow (`unavailable`), whatever the provider let through.
///
/// ```
/// use tool_runtime::spec::Callers;
/// assert_eq!(serde_json::to_value(Callers::Programmatic).unwrap(), "programmatic");
/// assert!(Callers::Both.allows_direct() && Callers::Both.allows_programmatic());
/// assert!(!Callers::Direct.allows_programmatic());
/// ```
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize,
)]
#[serde(rename_all = "snake_case")]
pub enum Callers {
    /// The model calls the tool itself (every provider's default).
    #[default]
    Direct,
    /// Only code the model writes calls the tool; the model never calls it directly.
    Programmatic,
    /// The model and its code both may.
    Both,
}

impl Callers {
    /// The name used in `#[tool(callers = ...)]` and JSON.
    #[must_use]
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Direct => "direct",
            Self::Programmatic => "programmatic",
            Self::Both => "both",
        }
    }

    /// Whether the model may call the tool directly.
    #[must_use]
    pub const fn allows_direct(self) -> bool {
        matches!(self, Self::Direct | Self::Both)
    }

    /// Whether code the model writes may call the tool.
    #[must_use]
    pub const fn allows_programmatic(self) -> bool {
        matches!(self, Self::Programmatic | Self::Both)
    }
}

impl fmt::Display for Callers {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A string that is not one of the [`ToolEffect`] names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnknownEffect;

impl fmt::Display for UnknownEffect {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(
            "unknown effect; expected `read_only`, `state_change` or `external_side_effect`",
        )
    }
}

impl std::error::Error for UnknownEffect {}

impl std::str::FromStr for ToolEffect {
    type Err = UnknownEffect;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Self::ALL.into_iter().find(|effect| effect.as_str() == s).ok_or(UnknownEffect)
    }
}

/// A tool's input or output schema: the compile-time tree of a `#[tool]`, or JSON Schema
/// received at run time (tools imported from elsewhere, already checked against the subset).
#[derive(Debug, Clone)]
pub enum SpecSchema {
    /// Built at compile time.
    Static(&'static Schema),
    /// Received at run time.
    Json(Arc<Map<String, Value>>),
}

impl SpecSchema {
    /// The schema as a JSON Schema object.
    #[must_use]
    pub fn to_json(&self) -> Value {
        match self {
            Self::Static(schema) => schema.to_json(),
            Self::Json(map) => Value::Object(Map::clone(map)),
        }
    }

    /// The compile-time tree, when there is one.
    #[must_use]
    pub fn as_static(&self) -> Option<&'static Schema> {
        match self {
            Self::Static(schema) => Some(schema),
            Self::Json(_) => None,
        }
    }
}

impl Serialize for SpecSchema {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            Self::Static(schema) => schema.serialize(serializer),
            Self::Json(map) => map.serialize(serializer),
        }
    }
}

/// Which parts of a value may leave the runner: the whole value, or the fields that dotted
/// paths name (`"hits.title"`). Everything else is removed before a result reaches the model,
/// the UI or telemetry.
///
/// `#[tool(redact = [...])]` makes a list of paths and `#[tool(redact = all)]` keeps the whole
/// output; `redact_details` does the same for the details of a
/// [`Content`](crate::content::Content). Paths select fields of objects at any depth and are
/// walked through arrays, a top-level array included: on a `Vec<Entry>` output, `"name"` keeps
/// the `name` of every entry. An empty list keeps nothing: an object becomes `{}`, an array
/// loses every item that is not an object, and a string, number or `bool` becomes `null`.
///
/// ```
/// use serde_json::json;
/// use tool_runtime::spec::Redaction;
///
/// let entries = json!([{"name": "a.txt", "owner": "x@example.com"}, {"name": "b.txt", "owner": "y"}]);
/// assert_eq!(Redaction::new(["name"]).apply(&entries), json!([{"name": "a.txt"}, {"name": "b.txt"}]));
/// assert_eq!(Redaction::all().apply(&json!("some text")), json!("some text"));
/// assert_eq!(Redaction::none().apply(&json!("some text")), json!(null));
/// ```
#[derive(Debug, Clone)]
pub struct Redaction(Keep);

#[derive(Debug, Clone)]
enum Keep {
    /// The whole value.
    All,
    /// What these paths name.
    Static(&'static [&'static str]),
    /// What these paths, given at run time, name.
    Owned(Arc<[String]>),
}

impl Redaction {
    /// An allowlist of paths known at compile time.
    #[must_use]
    pub const fn from_static(paths: &'static [&'static str]) -> Self {
        Self(Keep::Static(paths))
    }

    /// An allowlist of paths built at run time.
    #[must_use]
    pub fn new<I: IntoIterator<Item = S>, S: Into<String>>(paths: I) -> Self {
        Self(Keep::Owned(paths.into_iter().map(Into::into).collect()))
    }

    /// Keeps the whole value (`redact = all`): for an output whose every part may leave the
    /// runner, and the only way to let a string, number, `bool` or unit enum output through.
    #[must_use]
    pub const fn all() -> Self {
        Self(Keep::All)
    }

    /// Keeps nothing (`redact = []`).
    #[must_use]
    pub const fn none() -> Self {
        Self(Keep::Static(&[]))
    }

    /// Whether the whole value is kept ([`Redaction::all`]).
    #[must_use]
    pub const fn is_all(&self) -> bool {
        matches!(self.0, Keep::All)
    }

    /// The allowed paths, in the order given; none for [`Redaction::all`].
    pub fn paths(&self) -> impl Iterator<Item = &str> + '_ {
        let (statics, owned): (&[&str], &[String]) = match &self.0 {
            Keep::All => (&[], &[]),
            Keep::Static(paths) => (paths, &[]),
            Keep::Owned(paths) => (&[], paths),
        };
        statics.iter().copied().chain(owned.iter().map(String::as_str))
    }

    /// How many paths are allowed (`0` for [`Redaction::all`], which names none).
    #[must_use]
    pub fn len(&self) -> usize {
        match &self.0 {
            Keep::All => 0,
            Keep::Static(paths) => paths.len(),
            Keep::Owned(paths) => paths.len(),
        }
    }

    /// Whether nothing passes: an empty list of paths (never [`Redaction::all`]).
    #[must_use]
    pub fn is_empty(&self) -> bool {
        !self.is_all() && self.len() == 0
    }

    /// A copy of `output` holding only what is allowed.
    ///
    /// A path keeps the whole value under it; arrays are walked through (`"hits.title"` keeps
    /// the `title` of every hit); `null` stays `null`; a string, number or `bool` that no path
    /// keeps whole becomes `null` at the top and is removed from objects and arrays below it.
    ///
    /// ```
    /// use serde_json::json;
    /// use tool_runtime::spec::Redaction;
    ///
    /// let allow = Redaction::from_static(&["hits.title", "total"]);
    /// let output = json!({"hits": [{"title": "A", "owner": "x@example.com"}], "total": 1, "cost": 3});
    /// assert_eq!(allow.apply(&output), json!({"hits": [{"title": "A"}], "total": 1}));
    /// assert_eq!(Redaction::none().apply(&output), json!({}));
    /// ```
    #[must_use]
    pub fn apply(&self, output: &Value) -> Value {
        if self.is_all() {
            return output.clone();
        }
        self.with_paths(|paths| keep_nested(output, paths)).unwrap_or(Value::Null)
    }

    /// [`Redaction::apply`] to an output nobody needs afterwards: what is not allowed is
    /// removed in place, and nothing is copied.
    #[cfg(feature = "runner")]
    pub(crate) fn apply_owned(&self, mut output: Value) -> Value {
        if self.is_all() {
            return output;
        }
        if self.with_paths(|paths| retain_nested(&mut output, paths)) {
            output
        } else {
            Value::Null
        }
    }

    /// Whether this allowlist keeps every value valid under `schema` whole: it is
    /// [`Redaction::all`], or every property the schema has, at any depth (through arrays), is
    /// allowed.
    fn keeps_whole(&self, schema: &Schema) -> bool {
        self.is_all() || self.with_paths(|paths| keeps_nested(schema, paths))
    }

    /// The part of an output `schema` that survives this redaction: what the model (an MCP
    /// client, a program calling the tool) can get. The whole schema for [`Redaction::all`];
    /// `None` when nothing below the top names a field (see `narrow`).
    #[cfg(feature = "runner")]
    pub(crate) fn narrow_schema(&self, schema: &Value) -> Option<Value> {
        if self.is_all() {
            return Some(schema.clone());
        }
        self.with_paths(|paths| narrow(schema, paths))
    }

    /// Calls `f` with the paths as a slice (a compile-time allowlist is one already); an empty
    /// slice for [`Redaction::all`], which callers check first with [`Redaction::is_all`].
    pub(crate) fn with_paths<R>(&self, f: impl FnOnce(&[&str]) -> R) -> R {
        match &self.0 {
            Keep::All => f(&[]),
            Keep::Static(paths) => f(paths),
            Keep::Owned(paths) => f(&paths.iter().map(String::as_str).collect::<Vec<_>>()),
        }
    }
}

/// The part of an output schema that survives redaction with `paths`, mirroring
/// [`Redaction::apply`]: properties not allowlisted are removed
/// (and dropped from `required`), arrays are walked through, an allowlisted property keeps its
/// whole schema. `None` when nothing below the top names a field (a scalar, an object without
/// `properties`): redaction lets no such value through as it is, so no schema describes it.
#[cfg(feature = "runner")]
fn narrow(schema: &Value, paths: &[&str]) -> Option<Value> {
    let Value::Object(node) = schema else { return None };
    let mut out = node.clone();
    if let Some(items) = node.get("items") {
        out.insert("items".to_owned(), narrow(items, paths)?);
        return Some(Value::Object(out));
    }
    let properties = node.get("properties").and_then(Value::as_object)?;
    let mut kept = Map::new();
    for (key, child) in properties {
        let child = match allowed_below(paths, key) {
            Allowed::Nothing => None,
            Allowed::All => Some(child.clone()),
            Allowed::Below(below) => narrow(child, &below),
        };
        if let Some(child) = child {
            kept.insert(key.clone(), child);
        }
    }
    if let Some(Value::Array(required)) = node.get("required") {
        let required: Vec<Value> = required
            .iter()
            .filter(|name| name.as_str().is_some_and(|name| kept.contains_key(name)))
            .cloned()
            .collect();
        out.insert("required".to_owned(), Value::Array(required));
    }
    out.insert("properties".to_owned(), Value::Object(kept));
    Some(Value::Object(out))
}

/// Whether [`retain_nested`] with `paths` removes nothing from a value valid under `schema`:
/// objects need every property allowed, arrays items that are kept whole; any other value
/// below a path would be removed (`null` is always kept).
fn keeps_nested(schema: &Schema, paths: &[&str]) -> bool {
    match schema.kind {
        SchemaKind::Object(object) => {
            object.properties.iter().all(|property| match allowed_below(paths, property.name) {
                Allowed::All => true,
                Allowed::Nothing => false,
                Allowed::Below(below) => keeps_nested(property.schema, &below),
            })
        }
        SchemaKind::Array(array) => keeps_nested(array.items, paths),
        _ => false,
    }
}

/// What dotted `paths` (relative to an object) allow under one of its keys.
pub(crate) enum Allowed<'p> {
    /// No path starts with the key.
    Nothing,
    /// A path is the key itself: all of its value.
    All,
    /// Only these paths, relative to the key's value.
    Below(Vec<&'p str>),
}

/// What `paths` allow under `key`: a path's first segment (up to its first dot) must equal
/// `key`, so a key that holds a dot is never allowed.
pub(crate) fn allowed_below<'p>(paths: &[&'p str], key: &str) -> Allowed<'p> {
    if key.contains('.') {
        return Allowed::Nothing;
    }
    // The rest of `path` below `key`: `Some(None)` when the path is `key` itself.
    let below = |path: &'p str| -> Option<Option<&'p str>> {
        let rest = path.strip_prefix(key)?;
        if rest.is_empty() { Some(None) } else { rest.strip_prefix('.').map(Some) }
    };
    let mut deeper = false;
    for path in paths {
        match below(path) {
            Some(None) => return Allowed::All,
            Some(Some(_)) => deeper = true,
            None => {}
        }
    }
    if deeper {
        Allowed::Below(paths.iter().filter_map(|path| below(path).flatten()).collect())
    } else {
        Allowed::Nothing
    }
}

/// Keeps the keys of `map` that `paths` (relative to `map`) allow.
fn keep_object(map: &Map<String, Value>, paths: &[&str]) -> Map<String, Value> {
    let mut out = Map::new();
    for (key, value) in map {
        let kept = match allowed_below(paths, key) {
            Allowed::Nothing => None,
            Allowed::All => Some(value.clone()),
            Allowed::Below(below) => keep_nested(value, &below),
        };
        if let Some(kept) = kept {
            out.insert(key.clone(), kept);
        }
    }
    out
}

/// Applies `paths` below a value: objects are filtered, arrays walked through, `null` kept;
/// `None` for any other value, which no path can select part of.
fn keep_nested(value: &Value, paths: &[&str]) -> Option<Value> {
    match value {
        Value::Object(map) => Some(Value::Object(keep_object(map, paths))),
        Value::Array(items) => {
            Some(Value::Array(items.iter().filter_map(|item| keep_nested(item, paths)).collect()))
        }
        Value::Null => Some(Value::Null),
        _ => None,
    }
}

/// [`keep_object`] in place, for a map nobody needs afterwards.
#[cfg(feature = "runner")]
fn retain_object(map: &mut Map<String, Value>, paths: &[&str]) {
    map.retain(|key, value| match allowed_below(paths, key) {
        Allowed::Nothing => false,
        Allowed::All => true,
        Allowed::Below(below) => retain_nested(value, &below),
    });
}

/// [`keep_nested`] in place; `false` when the value goes.
#[cfg(feature = "runner")]
fn retain_nested(value: &mut Value, paths: &[&str]) -> bool {
    match value {
        Value::Object(map) => {
            retain_object(map, paths);
            true
        }
        Value::Array(items) => {
            items.retain_mut(|item| retain_nested(item, paths));
            true
        }
        Value::Null => true,
        _ => false,
    }
}

/// Serialised as the list of paths, or as the string `"all"` for [`Redaction::all`].
impl Serialize for Redaction {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        if self.is_all() {
            return serializer.serialize_str("all");
        }
        let mut seq = serializer.serialize_seq(Some(self.len()))?;
        for path in self.paths() {
            seq.serialize_element(path)?;
        }
        seq.end()
    }
}

/// Everything known about a tool before it runs: what the model is shown (name, description,
/// input schema) and what the runtime enforces (output schema, effect, redaction, connection
/// and capability needs). For a `#[tool]` it is a `static` built at compile time.
///
/// Serialised, its keys are `name`, `description`, `effect`, `input_schema`, `output_schema`,
/// `redaction`, `requires_connection`, `capabilities` and `schema_hash`.
///
/// ```
/// use tool_runtime::prelude::*;
///
/// /// Echo the text back.
/// #[tool(name = "demo__echo", effect = read_only, redact = ["text"])]
/// struct Echo { text: String }
///
/// #[derive(Serialize, ToolSchema)]
/// struct Echoed { text: String }
///
/// impl Tool for Echo {
///     type Output = Echoed;
///     async fn run(self, _: &ToolInvocationContext, _: &ToolCapabilities) -> Result<Echoed, ToolError> {
///         Ok(Echoed { text: self.text })
///     }
/// }
///
/// let spec = Echo::spec();
/// assert_eq!(spec.name(), "demo__echo");
/// assert_eq!(spec.description(), "Echo the text back.");
/// assert_eq!(spec.effect(), ToolEffect::ReadOnly);
/// assert_eq!(spec.schema_hash().len(), 64);
/// let json = serde_json::to_value(spec).unwrap();
/// assert_eq!(json["input_schema"]["required"], serde_json::json!(["text"]));
/// ```
#[derive(Debug)]
pub struct ToolSpec {
    name: Cow<'static, str>,
    description: Cow<'static, str>,
    effect: ToolEffect,
    input_schema: SpecSchema,
    output_schema: Option<SpecSchema>,
    /// The generated validator of a `#[tool]`'s output type, matching its static output schema.
    #[cfg(feature = "runner")]
    output_check: Option<OutputCheck>,
    redaction: Redaction,
    details_schema: Option<SpecSchema>,
    details_redaction: Redaction,
    requires_connection: bool,
    capabilities: Cow<'static, [CapabilityRef]>,
    /// `#[tool(examples = [...])]`, as written; turned into JSON when first asked.
    static_examples: &'static [ExampleValue],
    examples: OnceLock<Vec<Value>>,
    schema_hash: OnceLock<String>,
    spec_hash: OnceLock<String>,
    /// Whether redaction leaves every valid output whole (worked out when first asked).
    keeps_valid_output: OnceLock<bool>,
    /// The output schema cut down to what redaction keeps (worked out when first asked).
    #[cfg(feature = "runner")]
    kept_output_schema: OnceLock<Option<Value>>,
    /// Whether the input schema may leave the subset providers accept, so that the tool is
    /// served to MCP clients and never offered to a model.
    mcp_only: bool,
    /// Whether the application's client runs the tool, not the runner.
    client: bool,
    /// Whether a top-level property is also taken in its other spelling (camelCase for
    /// snake_case and back).
    tolerate_case: bool,
    /// Who may call the tool.
    callers: Callers,
    /// Whether the model goes on working while a call of the tool runs.
    asynchronous: bool,
}

/// The parts of a `#[tool]`'s spec, all known at compile time.
#[doc(hidden)]
#[derive(Debug)]
pub struct StaticSpecParts {
    pub name: &'static str,
    pub description: &'static str,
    pub effect: ToolEffect,
    pub input_schema: &'static Schema,
    pub output_schema: Option<&'static Schema>,
    /// The generated validator of the type `output_schema` is the schema of.
    pub output_check: Option<OutputCheck>,
    pub redaction: StaticRedaction,
    pub details_schema: Option<&'static Schema>,
    pub details_redaction: StaticRedaction,
    pub requires_connection: bool,
    pub client: bool,
    pub tolerate_case: bool,
    pub callers: Callers,
    pub asynchronous: bool,
    pub capabilities: &'static [CapabilityRef],
    pub examples: &'static [ExampleValue],
}

/// A `#[tool]`'s allowlist as [`StaticSpecParts`] hold it (`Copy`, so a `const fn` can take it
/// apart).
#[doc(hidden)]
#[derive(Debug, Clone, Copy)]
pub enum StaticRedaction {
    /// `redact = all`.
    All,
    /// `redact = [...]`.
    Paths(&'static [&'static str]),
}

impl StaticRedaction {
    const fn into_redaction(self) -> Redaction {
        match self {
            Self::All => Redaction::all(),
            Self::Paths(paths) => Redaction::from_static(paths),
        }
    }
}

impl ToolSpec {
    #[doc(hidden)]
    #[must_use]
    pub const fn __from_static(parts: StaticSpecParts) -> Self {
        Self {
            name: Cow::Borrowed(parts.name),
            description: Cow::Borrowed(parts.description),
            effect: parts.effect,
            input_schema: SpecSchema::Static(parts.input_schema),
            output_schema: match parts.output_schema {
                Some(schema) => Some(SpecSchema::Static(schema)),
                None => None,
            },
            #[cfg(feature = "runner")]
            output_check: match parts.output_schema {
                Some(_) => parts.output_check,
                None => None,
            },
            redaction: parts.redaction.into_redaction(),
            details_schema: match parts.details_schema {
                Some(schema) => Some(SpecSchema::Static(schema)),
                None => None,
            },
            details_redaction: parts.details_redaction.into_redaction(),
            requires_connection: parts.requires_connection,
            capabilities: Cow::Borrowed(parts.capabilities),
            static_examples: parts.examples,
            examples: OnceLock::new(),
            schema_hash: OnceLock::new(),
            spec_hash: OnceLock::new(),
            keeps_valid_output: OnceLock::new(),
            #[cfg(feature = "runner")]
            kept_output_schema: OnceLock::new(),
            mcp_only: false,
            client: parts.client,
            tolerate_case: parts.tolerate_case,
            callers: parts.callers,
            asynchronous: parts.asynchronous,
        }
    }

    /// This spec, for a tool its application's client runs (see [`ToolSpec::runs_on_client`]).
    #[cfg(feature = "dynamic")]
    pub(crate) fn for_client(mut self) -> Self {
        self.client = true;
        self
    }

    /// This spec, taking each top-level property in its other spelling too (see
    /// [`ToolSpec::tolerates_case`]).
    #[cfg(feature = "dynamic")]
    pub(crate) fn tolerating_case(mut self) -> Self {
        self.tolerate_case = true;
        self
    }

    /// This spec, callable by `callers` (see [`ToolSpec::callers`]).
    #[cfg(feature = "dynamic")]
    pub(crate) fn with_callers(mut self, callers: Callers) -> Self {
        self.callers = callers;
        self
    }

    /// This spec, for a tool the model does not wait for (see [`ToolSpec::is_asynchronous`]).
    #[cfg(feature = "dynamic")]
    pub(crate) fn asynchronous(mut self) -> Self {
        self.asynchronous = true;
        self
    }

    /// This spec declaring `capabilities` (an imported tool's, which may ask its user).
    #[cfg(feature = "dynamic")]
    pub(crate) fn with_capabilities(mut self, capabilities: &'static [CapabilityRef]) -> Self {
        self.capabilities = Cow::Borrowed(capabilities);
        self
    }

    /// This spec, for MCP clients only (see [`ToolSpec::is_mcp_only`]).
    #[cfg(feature = "dynamic")]
    pub(crate) fn for_mcp_only(mut self) -> Self {
        self.mcp_only = true;
        self
    }

    /// A spec of JSON schemas with nothing but a name, a description, an effect and an input
    /// schema: what the run-time constructors below start from.
    #[cfg(any(feature = "dynamic", feature = "adapters"))]
    fn of_json(
        name: Cow<'static, str>,
        description: String,
        effect: ToolEffect,
        input_schema: Map<String, Value>,
    ) -> Self {
        Self {
            name,
            description: Cow::Owned(description),
            effect,
            input_schema: SpecSchema::Json(Arc::new(input_schema)),
            output_schema: None,
            #[cfg(feature = "runner")]
            output_check: None,
            redaction: Redaction::none(),
            details_schema: None,
            details_redaction: Redaction::none(),
            requires_connection: false,
            capabilities: Cow::Borrowed(&[]),
            static_examples: &[],
            examples: OnceLock::new(),
            schema_hash: OnceLock::new(),
            spec_hash: OnceLock::new(),
            keeps_valid_output: OnceLock::new(),
            #[cfg(feature = "runner")]
            kept_output_schema: OnceLock::new(),
            mcp_only: false,
            client: false,
            tolerate_case: false,
            callers: Callers::Direct,
            asynchronous: false,
        }
    }

    /// A tool the crate itself answers (the search tool of a
    /// [`ClientSearch`](crate::adapters::ClientSearch)), named `name` (outside the tool names'
    /// rule on purpose, so no tool of a catalog can stand for it), read-only, with this input
    /// schema and no output schema.
    #[cfg(feature = "adapters")]
    pub(crate) fn answered_by_crate(
        name: &'static str,
        description: &str,
        input_schema: Map<String, Value>,
    ) -> Self {
        let description = description.to_owned();
        Self::of_json(Cow::Borrowed(name), description, ToolEffect::ReadOnly, input_schema)
    }

    /// A spec known only at run time (see [`DynamicTool`](crate::runtime::DynamicTool)); the
    /// caller has checked the name and schemas.
    #[cfg(feature = "dynamic")]
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn dynamic(
        name: String,
        description: String,
        effect: ToolEffect,
        input_schema: Map<String, Value>,
        output_schema: Option<Map<String, Value>>,
        redaction: Redaction,
        details: Option<(Map<String, Value>, Redaction)>,
        requires_connection: bool,
    ) -> Self {
        let (details_schema, details_redaction) = match details {
            Some((schema, redaction)) => (Some(SpecSchema::Json(Arc::new(schema))), redaction),
            None => (None, Redaction::none()),
        };
        Self {
            output_schema: output_schema.map(|schema| SpecSchema::Json(Arc::new(schema))),
            #[cfg(feature = "runner")]
            output_check: None,
            redaction,
            details_schema,
            details_redaction,
            requires_connection,
            ..Self::of_json(Cow::Owned(name), description, effect, input_schema)
        }
    }

    /// The tool's name, unique in a catalog (`<namespace>__<tool>`).
    #[must_use]
    pub fn name(&self) -> &str {
        &self.name
    }

    /// What the model reads to decide whether and how to call the tool.
    #[must_use]
    pub fn description(&self) -> &str {
        &self.description
    }

    /// What running the tool does to the world.
    #[must_use]
    pub fn effect(&self) -> ToolEffect {
        self.effect
    }

    /// The schema the arguments must satisfy.
    #[must_use]
    pub fn input_schema(&self) -> &SpecSchema {
        &self.input_schema
    }

    /// The schema the output must satisfy, when known.
    #[must_use]
    pub fn output_schema(&self) -> Option<&SpecSchema> {
        self.output_schema.as_ref()
    }

    /// The generated validator of a `#[tool]`'s output type, which gives the verdict of its
    /// static output schema.
    #[cfg(feature = "runner")]
    pub(crate) fn output_check(&self) -> Option<OutputCheck> {
        self.output_check
    }

    /// Which output fields may leave the runner.
    #[must_use]
    pub fn redaction(&self) -> &Redaction {
        &self.redaction
    }

    /// The schema of the details a tool returns for the application (never for the model);
    /// `None` when it returns none.
    #[must_use]
    pub fn details_schema(&self) -> Option<&SpecSchema> {
        self.details_schema.as_ref()
    }

    /// Which fields of the details may leave the runner (details of a tool without this
    /// allowlist are dropped).
    #[must_use]
    pub fn details_redaction(&self) -> &Redaction {
        &self.details_redaction
    }

    /// Whether redaction leaves every output that is valid under the compile-time output
    /// schema exactly as it is: the allowlist takes in every property the schema has, at every
    /// depth. (Output objects are closed, so a valid output holds nothing else.) `false` for
    /// run-time schemas.
    #[must_use]
    pub fn redaction_keeps_valid_output(&self) -> bool {
        *self.keeps_valid_output.get_or_init(|| {
            self.output_schema
                .as_ref()
                .and_then(SpecSchema::as_static)
                .is_some_and(|schema| self.redaction.keeps_whole(schema))
        })
    }

    /// The output schema as far as redaction lets output through, rendered once and kept:
    /// what an MCP client is promised (`outputSchema`) and what a caller's code is typed with.
    /// The whole schema when redaction keeps every valid output; `None` when the tool has no
    /// output schema or redaction keeps no field a schema could name.
    #[cfg(feature = "runner")]
    pub(crate) fn kept_output_schema(&self) -> Option<&Value> {
        self.kept_output_schema
            .get_or_init(|| {
                let schema = self.output_schema.as_ref()?.to_json();
                if self.redaction_keeps_valid_output() {
                    return Some(schema);
                }
                self.redaction.narrow_schema(&schema)
            })
            .as_ref()
    }

    /// Whether the tool runs only with a granted connection in its invocation context.
    #[must_use]
    pub fn requires_connection(&self) -> bool {
        self.requires_connection
    }

    /// Whether the tool is for MCP clients only: a run-time tool whose input schema may use all
    /// of JSON Schema 2020-12 ([`DynamicToolBuilder::mcp_only`](crate::runtime::DynamicToolBuilder::mcp_only)).
    /// No model is offered it: adapters refuse it, and the agent leaves it out.
    #[must_use]
    pub fn is_mcp_only(&self) -> bool {
        self.mcp_only
    }

    /// Whether the application's client runs the tool, not the runner: a `#[tool(client =
    /// Output)]` or a [`ClientTool`](crate::runtime::ClientTool). Its calls are checked like any
    /// other and then wait for the result the client supplies.
    #[must_use]
    pub fn runs_on_client(&self) -> bool {
        self.client
    }

    /// Whether the runner also takes each top-level property of the arguments in its other
    /// spelling: `userId` for `user_id`, `user_id` for `userId` (`#[tool(tolerate_case)]`,
    /// [`DynamicToolBuilder::tolerate_case`](crate::runtime::DynamicToolBuilder::tolerate_case),
    /// or the catalog's [`tolerate_case`](crate::catalog::ToolCatalogBuilder::tolerate_case)).
    /// The key is renamed before validation, so the validated arguments and the record name
    /// the property as the schema does; one given under both spellings is refused
    /// (`validation`). The schema a model sees is unchanged: this forgives a model's slip, it
    /// does not invite it. It is the one exception to "the schema describes exactly what is
    /// accepted", and it applies at the top level only.
    #[must_use]
    pub fn tolerates_case(&self) -> bool {
        self.tolerate_case
    }

    /// Who may call the tool: the model, code the model writes, or both (see [`Callers`]).
    #[must_use]
    pub fn callers(&self) -> Callers {
        self.callers
    }

    /// Whether the model goes on working while a call of the tool runs
    /// (`#[tool(asynchronous)]`,
    /// [`DynamicToolBuilder::asynchronous`](crate::runtime::DynamicToolBuilder::asynchronous)):
    /// OpenAI Responses is told `async: true`, so its model may answer before the result is
    /// there, and the result goes back by call id in a later request. A call that ends waiting
    /// (a [client tool](Self::runs_on_client), an approval) stops the run with its state, as any
    /// waiting call does, and the run's answer is what the model said meanwhile. Other
    /// providers have no such mode: their models wait for the result as for any tool.
    #[must_use]
    pub fn is_asynchronous(&self) -> bool {
        self.asynchronous
    }

    /// The capabilities the tool declared; it is handed these and no others.
    #[must_use]
    pub fn capabilities(&self) -> &[CapabilityRef] {
        &self.capabilities
    }

    /// Examples of arguments, for the model: `#[tool(examples = [...])]`, each checked against
    /// the input schema when the crate compiled (patterns, which compile-time evaluation cannot
    /// run, are checked when the catalog is built), in canonical form (aliases renamed, integral
    /// numbers of integer properties as integers). Appended to the description
    /// ([`description_with_examples`](Self::description_with_examples)), or sent as
    /// Anthropic's `input_examples` when its adapter is asked to. Not part of
    /// [`schema_hash`](Self::schema_hash).
    ///
    /// ```
    /// use tool_runtime::prelude::*;
    ///
    /// /// Search the docs.
    /// #[tool(name = "docs__search", effect = read_only, redact = all,
    ///        examples = [{"query": "tokio select", "limit": 3}])]
    /// struct Search {
    ///     query: String,
    ///     limit: Option<u32>,
    /// }
    /// # impl Tool for Search {
    /// #     type Output = Vec<String>;
    /// #     async fn run(self, _: &ToolInvocationContext, _: &ToolCapabilities)
    /// #         -> Result<Self::Output, ToolError> { Ok(vec![]) }
    /// # }
    ///
    /// assert_eq!(Search::spec().examples(), [serde_json::json!({"query": "tokio select", "limit": 3})]);
    /// ```
    pub fn examples(&self) -> &[Value] {
        self.examples.get_or_init(|| {
            let schema = self.input_schema.as_static();
            self.static_examples
                .iter()
                .map(|example| {
                    let mut value = example.to_json();
                    // As the schema names them: an alias renamed, `3.0` for an integer as `3`.
                    if let Some(schema) = schema {
                        schema.normalize(&mut value);
                    }
                    value
                })
                .collect()
        })
    }

    /// The description followed by the [examples](Self::examples), one compact JSON object per
    /// line: what providers without a field for examples (and MCP clients) read. The
    /// description alone for a tool without examples.
    ///
    /// ```
    /// use tool_runtime::prelude::*;
    ///
    /// /// Search the docs.
    /// #[tool(name = "docs__search", effect = read_only, redact = all, examples = [{"query": "spawn"}])]
    /// struct Search {
    ///     query: String,
    /// }
    /// # impl Tool for Search {
    /// #     type Output = Vec<String>;
    /// #     async fn run(self, _: &ToolInvocationContext, _: &ToolCapabilities)
    /// #         -> Result<Self::Output, ToolError> { Ok(vec![]) }
    /// # }
    ///
    /// assert_eq!(
    ///     Search::spec().description_with_examples(),
    ///     "Search the docs.\n\nExamples of arguments:\n{\"query\":\"spawn\"}"
    /// );
    /// ```
    #[must_use]
    pub fn description_with_examples(&self) -> Cow<'_, str> {
        let examples = self.examples();
        if examples.is_empty() {
            return Cow::Borrowed(self.description());
        }
        let mut text = self.description().to_owned();
        if !text.is_empty() {
            text.push_str("\n\n");
        }
        text.push_str("Examples of arguments:");
        for example in examples {
            text.push('\n');
            text.push_str(&example.to_string());
        }
        Cow::Owned(text)
    }

    /// SHA-256 (lowercase hex) of the [canonical JSON](crate::digest)
    /// `{"input_schema": ..., "output_schema": ...}` (with `"details_schema"` added for a tool
    /// that returns details): equal across builds and machines for equal schemas, whatever the
    /// order of their keys, and different when either schema changes.
    pub fn schema_hash(&self) -> &str {
        self.schema_hash.get_or_init(|| {
            let mut both = Map::new();
            both.insert("input_schema".to_owned(), self.input_schema.to_json());
            both.insert(
                "output_schema".to_owned(),
                self.output_schema.as_ref().map_or(Value::Null, SpecSchema::to_json),
            );
            if let Some(details) = &self.details_schema {
                both.insert("details_schema".to_owned(), details.to_json());
            }
            crate::digest::json_hash(&Value::Object(both))
        })
    }

    /// SHA-256 (lowercase hex) of the [canonical JSON](crate::digest) of everything the tool
    /// declares: this spec as JSON (name, description, effect, input and output schemas,
    /// redaction, connection and capability needs, examples and the
    /// [`schema_hash`](Self::schema_hash)). Approvals and deferred calls are bound to it, so a
    /// tool that changed in any of these since a call was approved does not run on that
    /// approval.
    ///
    /// ```
    /// use tool_runtime::prelude::*;
    ///
    /// /// Close a ticket.
    /// #[tool(name = "tickets__close", effect = state_change, redact = ["closed"])]
    /// struct Close { number: u32 }
    /// #[derive(Serialize, ToolSchema)]
    /// struct Closed { closed: bool }
    /// impl Tool for Close {
    ///     type Output = Closed;
    ///     async fn run(self, _: &ToolInvocationContext, _: &ToolCapabilities) -> Result<Closed, ToolError> {
    ///         Ok(Closed { closed: true })
    ///     }
    /// }
    ///
    /// let spec = Close::spec();
    /// assert_eq!(spec.spec_hash().len(), 64);
    /// assert_ne!(spec.spec_hash(), spec.schema_hash());
    /// ```
    pub fn spec_hash(&self) -> &str {
        self.spec_hash.get_or_init(|| {
            crate::digest::json_hash(&serde_json::to_value(self).unwrap_or(Value::Null))
        })
    }
}

impl Serialize for ToolSpec {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(None)?;
        map.serialize_entry("name", self.name())?;
        map.serialize_entry("description", self.description())?;
        map.serialize_entry("effect", &self.effect)?;
        map.serialize_entry("input_schema", &self.input_schema)?;
        map.serialize_entry("output_schema", &self.output_schema)?;
        map.serialize_entry("redaction", &self.redaction)?;
        if let Some(details) = &self.details_schema {
            map.serialize_entry("details_schema", details)?;
            map.serialize_entry("details_redaction", &self.details_redaction)?;
        }
        if !self.static_examples.is_empty() {
            map.serialize_entry("examples", self.examples())?;
        }
        map.serialize_entry("requires_connection", &self.requires_connection)?;
        if self.mcp_only {
            map.serialize_entry("mcp_only", &true)?;
        }
        if self.client {
            map.serialize_entry("client", &true)?;
        }
        if self.tolerate_case {
            map.serialize_entry("tolerates_case", &true)?;
        }
        if self.callers != Callers::Direct {
            map.serialize_entry("callers", &self.callers)?;
        }
        if self.asynchronous {
            map.serialize_entry("asynchronous", &true)?;
        }
        let capabilities: Vec<&str> = self.capabilities.iter().map(|c| c.name()).collect();
        map.serialize_entry("capabilities", &capabilities)?;
        map.serialize_entry("schema_hash", self.schema_hash())?;
        map.end()
    }
}

/// A tool name that breaks the naming rule.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NameError(tool_rules::ToolNameError);

impl fmt::Display for NameError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

impl std::error::Error for NameError {}

/// Checks a tool name: 1 to 64 characters of `a-z`, `A-Z`, `0-9`, `_` and `-` (what every
/// provider accepts), namespaced as `<namespace>__<tool>`. `#[tool]` applies the same rule at
/// compile time (and also reserves the `mcp` namespace for imported tools).
///
/// ```
/// use tool_runtime::spec::check_tool_name;
/// assert!(check_tool_name("core__get_current_time").is_ok());
/// assert!(check_tool_name("mcp__github__create_issue").is_ok());
/// assert!(check_tool_name("get_time").is_err());
/// assert!(check_tool_name("core__bad.name").is_err());
/// ```
///
/// # Errors
///
/// [`NameError`] saying which part of the rule is broken.
pub fn check_tool_name(name: &str) -> Result<(), NameError> {
    tool_rules::parse_tool_name(name).map(|_| ()).map_err(NameError)
}

/// A type made into a tool by `#[tool(...)]`: it has a frozen [`ToolSpec`].
///
/// Never implemented by hand: `#[tool]` writes it, after checking the name, effect, redaction
/// allowlist and schemas.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a tool",
    label = "`{Self}` has no `#[tool(...)]` attribute",
    note = "add `#[tool(name = \"namespace__name\", effect = read_only, redact = [...])]` to the struct"
)]
pub trait ToolDefinition: ToolSchema {
    /// The tool's frozen spec, a `static` built at compile time: calling this allocates
    /// nothing.
    fn spec() -> &'static ToolSpec;
}

/// Something a tool uses to reach the world (a clock, an HTTP client, a database pool).
///
/// Also at `tool_runtime::runtime::Capability`. A tool declares the capabilities it uses in `#[tool(capabilities = [...])]` and is handed
/// those and no others.
///
/// ```
/// use tool_runtime::prelude::*;
/// use tool_runtime::runtime::Capability;
///
/// struct Weather { base_url: String }
/// impl Capability for Weather {
///     const NAME: &'static str = "weather";
/// }
///
/// // Bound once on the catalog; the runner hands it to the tools that declare it.
/// let catalog = ToolCatalog::builder().capability(Weather { base_url: "http://localhost".into() }).build().unwrap();
/// assert_eq!(catalog.capability_names(), ["weather"]);
/// ```
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a capability",
    label = "listed in `capabilities = [...]`",
    note = "implement it: `impl Capability for {Self} {{ const NAME: &'static str = \"...\"; }}`"
)]
pub trait Capability: Send + Sync + 'static {
    /// A short name, shown in specs and errors.
    const NAME: &'static str;
}

/// A capability named in a spec: its name and its type. Made with
/// [`CapabilityRef::of`]; also at `tool_runtime::runtime::CapabilityRef`.
///
/// ```
/// use tool_runtime::runtime::{Capability, CapabilityRef};
///
/// struct Calendar;
/// impl Capability for Calendar {
///     const NAME: &'static str = "calendar";
/// }
///
/// assert_eq!(CapabilityRef::of::<Calendar>().name(), "calendar");
/// assert_eq!(CapabilityRef::of::<Calendar>(), CapabilityRef::of::<Calendar>());
/// ```
#[derive(Clone, Copy)]
pub struct CapabilityRef {
    name: &'static str,
    type_id: fn() -> std::any::TypeId,
}

impl CapabilityRef {
    /// The reference to capability `C`.
    #[must_use]
    pub const fn of<C: Capability>() -> Self {
        Self { name: C::NAME, type_id: std::any::TypeId::of::<C> }
    }

    /// The capability's name.
    #[must_use]
    pub fn name(&self) -> &'static str {
        self.name
    }

    /// The capability's type.
    #[must_use]
    pub fn type_id(&self) -> std::any::TypeId {
        (self.type_id)()
    }
}

impl fmt::Debug for CapabilityRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("CapabilityRef").field(&self.name).finish()
    }
}

impl PartialEq for CapabilityRef {
    fn eq(&self, other: &Self) -> bool {
        self.type_id() == other.type_id()
    }
}

impl Eq for CapabilityRef {}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    #[cfg(feature = "runner")]
    fn redacted_schema_keeps_what_redaction_keeps() {
        let schema = json!({
            "type": "object",
            "properties": {
                "hits": {"type": "array", "items": {"type": "object", "properties": {
                    "title": {"type": "string"}, "owner": {"type": "string"}
                }, "required": ["title", "owner"]}},
                "total": {"type": "integer"},
                "cost": {"type": "integer"}
            },
            "required": ["hits", "total", "cost"],
            "additionalProperties": false
        });
        let narrowed = narrow(&schema, &["hits.title", "total"]).unwrap();
        assert_eq!(
            narrowed,
            json!({
                "type": "object",
                "properties": {
                    "hits": {"type": "array", "items": {"type": "object", "properties": {
                        "title": {"type": "string"}
                    }, "required": ["title"]}},
                    "total": {"type": "integer"}
                },
                "required": ["hits", "total"],
                "additionalProperties": false
            })
        );
        let nothing = narrow(&schema, &[]).unwrap();
        assert_eq!(nothing["properties"], json!({}));
        assert_eq!(nothing["required"], json!([]));
    }

    #[test]
    #[cfg(feature = "runner")]
    fn a_schema_without_fields_is_never_served_whole_by_narrowing() {
        // Issue 16 item 12: these used to fall back to the whole schema.
        assert_eq!(narrow(&json!({"type": "string"}), &["text"]), None);
        assert_eq!(narrow(&json!({"type": "object"}), &["secret"]), None);
        assert_eq!(narrow(&json!({"type": "array", "items": {"type": "integer"}}), &["n"]), None);
    }

    #[test]
    fn paths_reach_through_arrays_at_any_depth_and_scalars_keep_nothing() {
        let keep_name = Redaction::new(["name", "tags.label"]);
        let cases = [
            (json!([{"name": "a", "x": 1}]), json!([{"name": "a"}])),
            (json!([[{"name": "a", "x": 1}], []]), json!([[{"name": "a"}], []])),
            (
                json!({"name": "a", "tags": [{"label": "l", "id": 7}], "x": 1}),
                json!({"name": "a", "tags": [{"label": "l"}]}),
            ),
            (json!(null), json!(null)),
            (json!("text"), json!(null)),
            (json!(["a", "b"]), json!([])),
        ];
        for (output, kept) in cases {
            assert_eq!(keep_name.apply(&output), kept, "{output}");
            #[cfg(feature = "runner")]
            assert_eq!(keep_name.apply_owned(output.clone()), kept, "owned: {output}");
        }
    }

    #[test]
    fn all_keeps_everything_and_none_nothing() {
        for output in [json!("text"), json!(3), json!([1, 2]), json!({"a": {"b": 1}})] {
            assert_eq!(Redaction::all().apply(&output), output);
            #[cfg(feature = "runner")]
            assert_eq!(Redaction::all().apply_owned(output.clone()), output);
        }
        assert_eq!(Redaction::none().apply(&json!(true)), json!(null));
        assert_eq!(Redaction::none().apply(&json!({"a": 1})), json!({}));
        assert!(Redaction::none().is_empty() && !Redaction::all().is_empty());
        assert_eq!(serde_json::to_value(Redaction::all()).unwrap(), json!("all"));
    }

    #[test]
    fn keeps_whole_sees_through_arrays_and_knows_scalars_change() {
        const ENTRY: Schema = Schema::object(&[crate::schema::Property {
            name: "name",
            schema: &Schema::string(),
            required: true,
            aliases: &[],
        }]);
        const ENTRIES: Schema = Schema::array(&ENTRY);
        assert!(Redaction::new(["name"]).keeps_whole(&ENTRIES));
        assert!(!Redaction::none().keeps_whole(&ENTRIES));
        assert!(!Redaction::none().keeps_whole(&Schema::string()));
        assert!(Redaction::all().keeps_whole(&Schema::string()));
    }
}
