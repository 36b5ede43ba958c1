use std::any::Any;
use std::borrow::Cow;
use std::fmt;
use std::marker::PhantomData;
use std::sync::{Arc, OnceLock};

use async_trait::async_trait;
use serde_json::Value;

use super::{CapabilityRef, Tool, ToolCapabilities, ToolError, ToolInvocationContext};
use crate::content::{IntoToolOutput, ToolOutput};
use crate::schema::{
    ArgumentsError, ArgumentsValidator, ValidationErrors, decode_checked, parse_json,
    validate_and_normalize_as,
};
use crate::spec::{SpecSchema, ToolEffect, ToolSpec};

/// The arguments of one call, as they reach a tool: JSON text as the model sent it, or a value
/// that is already parsed (an agent loop or an MCP server holds one). Either way the tool
/// validates them the same way and reports every error.
///
/// Made with `From`: `&[u8]`, `&[u8; N]`, `&str`, `&String` and `&Vec<u8>` are JSON *text*;
/// `&Value` and `Value` are parsed (an owned value is used without a copy).
///
/// ```
/// use serde_json::json;
/// use tool_runtime::runtime::Arguments;
///
/// let raw = Arguments::from(br#"{"a": 1}"#);
/// let parsed = Arguments::from(json!({"a": 1}));
/// assert_eq!(raw.into_value().unwrap(), parsed.into_value().unwrap());
/// assert!(Arguments::from("{not json").into_value().is_err());
/// ```
#[derive(Debug, Clone)]
pub enum Arguments<'a> {
    /// JSON text (UTF-8 bytes), not yet parsed.
    Raw(&'a [u8]),
    /// A parsed JSON value, borrowed or owned.
    Parsed(Cow<'a, Value>),
}

impl Arguments<'_> {
    /// The arguments as a value: raw text parsed strictly (exactly one JSON value, no duplicate
    /// keys), a borrowed value copied, an owned one moved.
    ///
    /// # Errors
    ///
    /// [`ArgumentsError::InvalidJson`] when raw text is not exactly one JSON value.
    pub fn into_value(self) -> Result<Value, ArgumentsError> {
        match self {
            Self::Raw(raw) => parse_json(raw).map_err(ArgumentsError::InvalidJson),
            Self::Parsed(value) => Ok(value.into_owned()),
        }
    }
}

impl<'a> From<&'a [u8]> for Arguments<'a> {
    fn from(raw: &'a [u8]) -> Self {
        Self::Raw(raw)
    }
}

impl<'a, const N: usize> From<&'a [u8; N]> for Arguments<'a> {
    fn from(raw: &'a [u8; N]) -> Self {
        Self::Raw(raw)
    }
}

impl<'a> From<&'a Vec<u8>> for Arguments<'a> {
    fn from(raw: &'a Vec<u8>) -> Self {
        Self::Raw(raw)
    }
}

impl<'a> From<&'a str> for Arguments<'a> {
    fn from(text: &'a str) -> Self {
        Self::Raw(text.as_bytes())
    }
}

impl<'a> From<&'a String> for Arguments<'a> {
    fn from(text: &'a String) -> Self {
        Self::Raw(text.as_bytes())
    }
}

impl<'a> From<&'a Value> for Arguments<'a> {
    fn from(value: &'a Value) -> Self {
        Self::Parsed(Cow::Borrowed(value))
    }
}

impl From<Value> for Arguments<'_> {
    fn from(value: Value) -> Self {
        Self::Parsed(Cow::Owned(value))
    }
}

/// Arguments that passed a tool's validation: the validated JSON value (recorded, hashed for
/// approvals, readable by anything that wraps a tool) and, for compile-time tools, the typed
/// arguments decoded from that same value.
pub struct ValidatedArgs {
    json: ArgsJson,
    typed: Option<Box<dyn Any + Send + Sync>>,
}

impl ValidatedArgs {
    /// The validated arguments as JSON: always the arguments the tool runs with.
    #[must_use]
    pub fn value(&self) -> &Value {
        self.json.get()
    }

    /// The value, shared with the call's record (no copy).
    #[cfg(feature = "runner")]
    pub(crate) fn json(&self) -> &ArgsJson {
        &self.json
    }

    /// Arguments validated as a value, with no typed form (run-time tools).
    pub(crate) fn untyped(value: Value) -> Self {
        Self { json: ArgsJson::from_value(value), typed: None }
    }

    /// `args` as validated arguments once `validator` passed them: how a tool written by hand
    /// ([`BoundToolRuntime::arguments`]) brings its own validation and still hands the runner
    /// arguments it can trust as it trusts a `#[tool]`'s. Raw text is parsed strictly first
    /// (one JSON value, no duplicate keys); the arguments must be a JSON object; the validator
    /// sees the parsed value and reports every problem it finds.
    ///
    /// ```
    /// use serde_json::{Value, json};
    /// use tool_runtime::runtime::{Arguments, ValidatedArgs};
    /// use tool_runtime::schema::{ArgumentsError, ArgumentsValidator, ValidationErrors};
    ///
    /// /// Even counts only.
    /// #[derive(Debug)]
    /// struct Even;
    ///
    /// impl ArgumentsValidator for Even {
    ///     fn validate(&self, args: &Value) -> Result<(), ValidationErrors> {
    ///         let mut errors = ValidationErrors::default();
    ///         if !args["count"].as_u64().is_some_and(|count| count % 2 == 0) {
    ///             errors.push("/count", "must be an even number");
    ///         }
    ///         if errors.is_empty() { Ok(()) } else { Err(errors) }
    ///     }
    /// }
    ///
    /// let args = ValidatedArgs::checked(Arguments::from(r#"{"count": 4}"#), &Even).unwrap();
    /// assert_eq!(args.value(), &json!({"count": 4}));
    /// let odd = ValidatedArgs::checked(Arguments::from(json!({"count": 3})), &Even);
    /// assert!(matches!(odd, Err(ArgumentsError::Validation(_))));
    /// let list = ValidatedArgs::checked(Arguments::from(r#"[4]"#), &Even);
    /// assert!(matches!(list, Err(ArgumentsError::Validation(_))));
    /// ```
    ///
    /// # Errors
    ///
    /// [`ArgumentsError::InvalidJson`] for raw text that is not one JSON value,
    /// [`ArgumentsError::Validation`] for arguments that are not an object or that the
    /// validator refused.
    pub fn checked(
        args: Arguments<'_>,
        validator: &dyn ArgumentsValidator,
    ) -> Result<Self, ArgumentsError> {
        let value = args.into_value()?;
        if !value.is_object() {
            let mut errors = ValidationErrors::default();
            errors.push("", "a tool's arguments must be a JSON object");
            return Err(ArgumentsError::Validation(errors));
        }
        validator.validate(&value).map_err(ArgumentsError::Validation)?;
        Ok(Self::untyped(value))
    }

    /// The arguments as a value, parsed now if they were kept as raw bytes.
    #[cfg(any(feature = "dynamic", feature = "runner"))]
    pub(crate) fn into_value(self) -> Value {
        self.json.into_value()
    }
}

/// Validated arguments as JSON, shared by reference count between the arguments a tool runs
/// with and the call's record: the validated value, or the raw bytes that were validated while
/// they were decoded (parsed the first time the value is read). Raw bytes are only kept when
/// they parse to exactly the validated value (no duplicate keys, nothing to normalise). The
/// parse is boxed: it is rare, and a `Value` inline would make every call's state larger.
pub(crate) enum ArgsJson {
    Raw { bytes: Arc<[u8]>, parsed: OnceLock<Box<Value>> },
    Value(Arc<Value>),
}

impl ArgsJson {
    pub(crate) fn from_value(value: Value) -> Self {
        Self::Value(Arc::new(value))
    }

    fn from_raw(raw: &[u8]) -> Self {
        Self::Raw { bytes: raw.into(), parsed: OnceLock::new() }
    }

    fn parse(raw: &[u8]) -> Value {
        // The bytes were validated, so they parse; `Null` only guards against the impossible.
        parse_json(raw).unwrap_or(Value::Null)
    }

    pub(crate) fn get(&self) -> &Value {
        match self {
            Self::Raw { bytes, parsed } => parsed.get_or_init(|| Box::new(Self::parse(bytes))),
            Self::Value(value) => value,
        }
    }

    pub(crate) fn into_value(self) -> Value {
        match self {
            Self::Raw { bytes, parsed } => {
                parsed.into_inner().map_or_else(|| Self::parse(&bytes), |value| *value)
            }
            Self::Value(value) => Arc::unwrap_or_clone(value),
        }
    }
}

impl Clone for ArgsJson {
    /// Shares the bytes or the value; a parse already made is not copied (the clone parses
    /// again if it is read).
    fn clone(&self) -> Self {
        match self {
            Self::Raw { bytes, .. } => {
                Self::Raw { bytes: Arc::clone(bytes), parsed: OnceLock::new() }
            }
            Self::Value(value) => Self::Value(Arc::clone(value)),
        }
    }
}

impl PartialEq for ArgsJson {
    fn eq(&self, other: &Self) -> bool {
        self.get() == other.get()
    }
}

impl fmt::Debug for ArgsJson {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self.get(), f)
    }
}

impl fmt::Debug for ValidatedArgs {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ValidatedArgs")
            .field("typed", &self.typed.is_some())
            .finish_non_exhaustive()
    }
}

/// A tool as the runner drives it, whatever its origin: object-safe, so a catalog holds
/// compile-time tools ([`StaticTool`]) and run-time ones
/// ([`DynamicTool`](crate::runtime::DynamicTool)) side by side.
///
/// A tool is what it declares ([`spec`](Self::spec)), what it accepts
/// ([`arguments`](Self::arguments)), what it does ([`exec`](Self::exec)) and what it may
/// return ([`validate_output`](Self::validate_output)); the other methods read the spec. The
/// runner calls them in that order, checks an output against a compile-time output schema
/// itself too, and applies the spec's redaction allowlist to the output itself. Nothing else
/// may run a tool, and nothing else can: `exec` takes [`ToolCapabilities`], which only the
/// runner makes (a wrapper hands on the ones it was given).
///
/// Wrapping a tool is implementing this trait by delegation; the arguments a wrapper sees are
/// the validated arguments the tool runs with:
///
/// ```
/// use std::sync::Arc;
/// use serde_json::Value;
/// use tool_runtime::prelude::*;
/// use tool_runtime::content::ToolOutput;
/// use tool_runtime::runtime::{Arguments, BoundToolRuntime, StaticTool, ValidatedArgs};
/// use tool_runtime::schema::{ArgumentsError, ValidationErrors};
///
/// /// Read a file.
/// #[tool(name = "fs__read", effect = read_only, redact = ["text"])]
/// struct Read { path: String }
/// #[derive(Serialize, ToolSchema)]
/// struct Text { text: String }
/// impl Tool for Read {
///     type Output = Text;
///     async fn run(self, _: &ToolInvocationContext, _: &ToolCapabilities) -> Result<Text, ToolError> {
///         Ok(Text { text: format!("contents of {}", self.path) })
///     }
/// }
///
/// /// Refuses paths under `/etc`, whatever the tool would do with them.
/// #[derive(Debug)]
/// struct NoEtc(StaticTool<Read>);
///
/// #[async_trait::async_trait]
/// impl BoundToolRuntime for NoEtc {
///     fn spec(&self) -> &ToolSpec {
///         self.0.spec()
///     }
///     fn arguments(&self, args: Arguments<'_>) -> Result<ValidatedArgs, ArgumentsError> {
///         self.0.arguments(args)
///     }
///     async fn exec(
///         &self,
///         args: ValidatedArgs,
///         ctx: &ToolInvocationContext,
///         caps: &ToolCapabilities,
///     ) -> Result<ToolOutput, ToolError> {
///         if args.value()["path"].as_str().is_some_and(|path| path.starts_with("/etc")) {
///             return Err(ToolError::new("paths under /etc are off limits"));
///         }
///         self.0.exec(args, ctx, caps).await
///     }
///     fn validate_output(&self, output: &Value) -> Result<(), ValidationErrors> {
///         self.0.validate_output(output)
///     }
/// }
///
/// # #[cfg(feature = "runner")]
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// let catalog = ToolCatalog::builder()
///     .register_bound(Arc::new(NoEtc(StaticTool::new())), "the guarded reader".into())
///     .build()
///     .unwrap();
/// let runner = ToolRunner::builder(catalog).policy(ToolPolicy::allowing(["fs__read"])).build();
/// let ctx = ToolInvocationContext::new(ContextIds { run_id: "run-1", actor_id: "user-1", tenant_id: "tenant-1" });
/// let refused = runner.exec("fs__read", r#"{"path": "/etc/passwd"}"#, &ctx).await;
/// assert_eq!(refused.error_code(), Some(ToolErrorCode::Execution));
/// assert!(runner.exec("fs__read", r#"{"path": "notes.txt"}"#, &ctx).await.is_ok());
/// # });
/// ```
#[async_trait]
pub trait BoundToolRuntime: Send + Sync + fmt::Debug {
    /// The tool's spec.
    fn spec(&self) -> &ToolSpec;

    /// The tool's name, unique in a catalog (the spec's).
    fn name(&self) -> &str {
        self.spec().name()
    }

    /// What running the tool does to the world.
    fn effect(&self) -> ToolEffect {
        self.spec().effect()
    }

    /// Whether the tool needs a granted connection.
    fn requires_connection(&self) -> bool {
        self.spec().requires_connection()
    }

    /// The capabilities the tool declared.
    fn capabilities(&self) -> &[CapabilityRef] {
        self.spec().capabilities()
    }

    /// Whether the application's client runs the tool rather than the runner (a
    /// [`ClientTool`](crate::runtime::ClientTool), a `#[tool(client = ...)]`): its calls are
    /// checked as any other and then end waiting for the client, and their results are supplied
    /// on resume. By default what the spec says ([`ToolSpec::runs_on_client`]).
    fn runs_on_client(&self) -> bool {
        self.spec().runs_on_client()
    }

    /// Validates a call's arguments against the input schema, raw text or parsed, and
    /// prepares them for [`exec`](Self::exec). Refused arguments come back with every error
    /// (JSON pointers included). How the tool gets there is its own affair: a [`StaticTool`]
    /// validates raw text while decoding it, in one pass, and goes the ordinary way (parse,
    /// validate, decode) only for what that pass cannot vouch for.
    ///
    /// # Errors
    ///
    /// [`ArgumentsError::InvalidJson`] for raw text that is not one JSON value,
    /// [`ArgumentsError::Validation`] (or `Decode`) when the arguments are refused.
    fn arguments(&self, args: Arguments<'_>) -> Result<ValidatedArgs, ArgumentsError>;

    /// Runs the tool once and returns its output, unredacted: its parts (the structured value
    /// is the [`Part::Json`](crate::content::Part::Json) one) and details.
    ///
    /// # Errors
    ///
    /// The tool's own [`ToolError`].
    async fn exec(
        &self,
        args: ValidatedArgs,
        ctx: &ToolInvocationContext,
        caps: &ToolCapabilities,
    ) -> Result<ToolOutput, ToolError>;

    /// Checks an output's structured value against the output schema. A wrapper delegates it like the rest: a
    /// tool whose output schema arrived at run time ([`DynamicTool`](crate::runtime::DynamicTool),
    /// an imported MCP tool) is checked only here. (The runner checks every output against a
    /// compile-time output schema itself as well, so that no wrapper can let a `#[tool]`'s
    /// output escape its declared schema.)
    ///
    /// # Errors
    ///
    /// [`ValidationErrors`] listing every violation.
    fn validate_output(&self, output: &Value) -> Result<(), ValidationErrors>;
}

/// A `#[tool]` type, bound for the runner. Register it with
/// [`ToolCatalogBuilder::register`](crate::catalog::ToolCatalogBuilder::register).
///
/// ```
/// use tool_runtime::prelude::*;
/// use tool_runtime::runtime::{Arguments, BoundToolRuntime, StaticTool};
///
/// /// Add two numbers.
/// #[tool(name = "math__add", effect = read_only, redact = ["sum"])]
/// struct Add { a: i32, b: i32 }
/// #[derive(Serialize, ToolSchema)]
/// struct Sum { sum: i64 }
/// impl Tool for Add {
///     type Output = Sum;
///     async fn run(self, _: &ToolInvocationContext, _: &ToolCapabilities) -> Result<Sum, ToolError> {
///         Ok(Sum { sum: i64::from(self.a) + i64::from(self.b) })
///     }
/// }
///
/// let add = StaticTool::<Add>::new();
/// assert_eq!(add.name(), "math__add");
/// let args = add.arguments(Arguments::from(br#"{"a": 2, "b": 3}"#)).unwrap();
/// assert_eq!(args.value(), &serde_json::json!({"a": 2, "b": 3}));
/// assert!(add.arguments(Arguments::from(br#"{"a": "two"}"#)).is_err());
/// ```
pub struct StaticTool<T>(PhantomData<fn() -> T>);

impl<T> StaticTool<T> {
    /// The binding for `T`.
    #[must_use]
    pub fn new() -> Self {
        Self(PhantomData)
    }
}

impl<T> Default for StaticTool<T> {
    fn default() -> Self {
        Self::new()
    }
}

impl<T: Tool> fmt::Debug for StaticTool<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("StaticTool").field(&T::spec().name()).finish()
    }
}

/// Why a tool's output could not be serialised.
fn serialise_error(error: &serde_json::Error) -> ToolError {
    ToolError::new(format!(
        "the tool's output could not be serialised ({:?} error)",
        error.classify()
    ))
}

#[async_trait]
impl<T: Tool + Sync> BoundToolRuntime for StaticTool<T> {
    fn spec(&self) -> &ToolSpec {
        T::spec()
    }

    fn runs_on_client(&self) -> bool {
        T::spec().runs_on_client()
    }

    fn arguments(&self, args: Arguments<'_>) -> Result<ValidatedArgs, ArgumentsError> {
        let mut value = match args {
            Arguments::Raw(raw) => {
                // One pass: validated while decoded, no intermediate value. Whatever it cannot
                // vouch for (every invalid input among it) takes the ordinary path, which
                // reports every error.
                if let Some(typed) = decode_checked::<T>(raw) {
                    let typed: Box<dyn Any + Send + Sync> = Box::new(typed);
                    return Ok(ValidatedArgs { json: ArgsJson::from_raw(raw), typed: Some(typed) });
                }
                parse_json(raw).map_err(ArgumentsError::InvalidJson)?
            }
            Arguments::Parsed(value) => value.into_owned(),
        };
        validate_and_normalize_as::<T>(&mut value).map_err(ArgumentsError::Validation)?;
        let typed = T::deserialize(&value).map_err(ArgumentsError::decode)?;
        Ok(ValidatedArgs { json: ArgsJson::from_value(value), typed: Some(Box::new(typed)) })
    }

    async fn exec(
        &self,
        args: ValidatedArgs,
        ctx: &ToolInvocationContext,
        caps: &ToolCapabilities,
    ) -> Result<ToolOutput, ToolError> {
        let typed = match args.typed.and_then(|typed| typed.downcast::<T>().ok()) {
            Some(typed) => *typed,
            None => T::deserialize(args.json.get()).map_err(|error| {
                ToolError::new(format!(
                    "arguments could not be decoded ({:?} error)",
                    error.classify()
                ))
            })?,
        };
        let output = typed.run(ctx, caps).await?;
        output.into_output().map_err(|error| serialise_error(&error))
    }

    fn validate_output(&self, output: &Value) -> Result<(), ValidationErrors> {
        match self.spec().output_schema() {
            Some(SpecSchema::Static(schema)) => schema.validate(output),
            _ => Ok(()),
        }
    }
}
