use std::any::Any;
use std::fmt;
use std::marker::PhantomData;
use std::sync::OnceLock;

use async_trait::async_trait;
use serde_json::Value;

use super::{CapabilityRef, Tool, ToolCapabilities, ToolError, ToolInvocationContext};
use crate::schema::{ArgumentsError, ToolSchema, ValidationErrors, decode_checked, parse_json};
use crate::spec::{RedactionError, ToolEffect, ToolSpec};

/// Arguments that passed a tool's validation: the canonical JSON value (recorded, hashed for
/// approvals) and, for compile-time tools, the typed arguments decoded from that same value.
pub struct ValidatedArgs {
    value: ArgsJson,
    typed: Option<Box<dyn Any + Send + Sync>>,
}

impl ValidatedArgs {
    /// The validated arguments as JSON.
    #[must_use]
    pub fn value(&self) -> &Value {
        self.value.get()
    }

    /// The value, for the call's record. A compile-time tool runs from its typed arguments and
    /// never reads the value again, so it is moved out rather than copied.
    #[cfg(feature = "runner")]
    pub(crate) fn value_for_record(&mut self) -> ArgsJson {
        if self.typed.is_some() {
            std::mem::replace(&mut self.value, ArgsJson::null())
        } else {
            self.value.clone()
        }
    }

    /// Arguments validated as a value, with no typed form (run-time tools).
    #[cfg(feature = "dynamic")]
    pub(crate) fn untyped(value: Value) -> Self {
        Self { value: ArgsJson::from_value(value), typed: None }
    }

    /// The arguments as a value, parsed now if they were kept as raw bytes.
    #[cfg(feature = "dynamic")]
    pub(crate) fn into_value(self) -> Value {
        self.value.into_value()
    }
}

/// Validated arguments as JSON: a value, or the raw bytes that were validated while they were
/// decoded ([`BoundToolRuntime::validate_raw`]), parsed the first time the value is read.
/// Raw bytes are only kept when they parse to exactly the validated value (no duplicate keys,
/// nothing to normalise).
#[derive(Clone)]
pub(crate) struct ArgsJson {
    raw: Option<Box<[u8]>>,
    value: OnceLock<Value>,
}

impl ArgsJson {
    pub(crate) fn from_value(value: Value) -> Self {
        Self { raw: None, value: OnceLock::from(value) }
    }

    /// Reads as `null`; sets nothing up (a value built with `from_value` costs a `OnceLock`
    /// initialisation).
    #[cfg(feature = "runner")]
    fn null() -> Self {
        Self { raw: None, value: OnceLock::new() }
    }

    fn from_raw(raw: &[u8]) -> Self {
        Self { raw: Some(raw.into()), value: OnceLock::new() }
    }

    fn parse(raw: Option<&[u8]>) -> Value {
        // No bytes: `ArgsJson::null`. Bytes were validated, so they parse; `Null` only guards
        // against the impossible.
        raw.and_then(|raw| parse_json(raw).ok()).unwrap_or(Value::Null)
    }

    pub(crate) fn get(&self) -> &Value {
        self.value.get_or_init(|| Self::parse(self.raw.as_deref()))
    }

    pub(crate) fn into_value(self) -> Value {
        match self.value.into_inner() {
            Some(value) => value,
            None => Self::parse(self.raw.as_deref()),
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
/// The runner calls, in order: [`validate_input`](Self::validate_input),
/// [`exec`](Self::exec), [`validate_output`](Self::validate_output),
/// [`redact`](Self::redact). Nothing else may run a tool.
#[async_trait]
pub trait BoundToolRuntime: Send + Sync + fmt::Debug {
    /// The tool's spec.
    fn spec(&self) -> &ToolSpec;

    /// The tool's id.
    fn id(&self) -> &str {
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

    /// Validates parsed arguments against the input schema (every error collected) and
    /// prepares them for [`exec`](Self::exec).
    ///
    /// # Errors
    ///
    /// [`ArgumentsError::Validation`] (or `Decode`) when the arguments are refused.
    fn validate_input(&self, args: Value) -> Result<ValidatedArgs, ArgumentsError>;

    /// A fast path for the runner: validates raw arguments while decoding them, in one pass
    /// and without building a JSON value. `None` means "take the ordinary path" (parse, then
    /// [`validate_input`](Self::validate_input)); it must be returned for every input that path
    /// would refuse, and may be returned for any other. The default always returns `None`.
    /// [`StaticTool`] implements it for `#[tool]` types.
    fn validate_raw(&self, raw: &[u8]) -> Option<ValidatedArgs> {
        let _ = raw;
        None
    }

    /// Runs the tool once and returns its output as JSON.
    ///
    /// # Errors
    ///
    /// The tool's own [`ToolError`].
    async fn exec(
        &self,
        args: ValidatedArgs,
        ctx: &ToolInvocationContext,
        caps: &ToolCapabilities,
    ) -> Result<Value, ToolError>;

    /// Checks an output against the output schema (when the tool has one).
    ///
    /// # Errors
    ///
    /// [`ValidationErrors`] listing every violation.
    fn validate_output(&self, output: &Value) -> Result<(), ValidationErrors>;

    /// Keeps only the allowlisted output fields.
    ///
    /// # Errors
    ///
    /// [`RedactionError`] when the output is not an object.
    fn redact(&self, output: &Value) -> Result<Value, RedactionError> {
        self.spec().redaction().apply(output)
    }

    /// [`redact`](Self::redact) for an output nobody needs afterwards (the runner's), so that
    /// kept values can be moved rather than copied. Must give what `redact` gives; the default
    /// calls it.
    ///
    /// # Errors
    ///
    /// [`RedactionError`] when the output is not an object.
    fn redact_owned(&self, output: Value) -> Result<Value, RedactionError> {
        self.redact(&output)
    }

    /// Whether an output that passed [`validate_output`](Self::validate_output) always comes
    /// through redaction unchanged, so that the runner may skip it. `true` only when
    /// `validate_output` checks the output against the spec's compile-time output schema and
    /// [`ToolSpec::redaction_keeps_valid_output`] holds; the default, `false`, is always safe.
    fn redaction_keeps_valid_output(&self) -> bool {
        false
    }
}

/// A `#[tool]` type, bound for the runner. Register it with
/// [`ToolCatalogBuilder::register`](crate::catalog::ToolCatalogBuilder::register).
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

    fn validate_input(&self, mut args: Value) -> Result<ValidatedArgs, ArgumentsError> {
        <T as ToolSchema>::SCHEMA
            .validate_and_normalize(&mut args)
            .map_err(ArgumentsError::Validation)?;
        let typed = T::deserialize(&args).map_err(ArgumentsError::decode)?;
        Ok(ValidatedArgs { value: ArgsJson::from_value(args), typed: Some(Box::new(typed)) })
    }

    fn validate_raw(&self, raw: &[u8]) -> Option<ValidatedArgs> {
        let typed: T = decode_checked(raw)?;
        Some(ValidatedArgs { value: ArgsJson::from_raw(raw), typed: Some(Box::new(typed)) })
    }

    async fn exec(
        &self,
        args: ValidatedArgs,
        ctx: &ToolInvocationContext,
        caps: &ToolCapabilities,
    ) -> Result<Value, ToolError> {
        let typed = match args.typed.and_then(|typed| typed.downcast::<T>().ok()) {
            Some(typed) => *typed,
            None => T::deserialize(args.value.get()).map_err(|error| {
                ToolError::new(format!(
                    "arguments could not be decoded ({:?} error)",
                    error.classify()
                ))
            })?,
        };
        let output = typed.run(ctx, caps).await?;
        serde_json::to_value(&output).map_err(|error| serialise_error(&error))
    }

    fn validate_output(&self, output: &Value) -> Result<(), ValidationErrors> {
        <T::Output as ToolSchema>::SCHEMA.validate(output)
    }

    fn redact_owned(&self, output: Value) -> Result<Value, RedactionError> {
        self.spec().redaction().apply_owned(output)
    }

    fn redaction_keeps_valid_output(&self) -> bool {
        T::spec().redaction_keeps_valid_output()
    }
}
