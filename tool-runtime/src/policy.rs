//! Policy as plain data: which tools may run, which need approval, budgets, connection grants.
//!
//! A [`ToolPolicy`] is deserialised from the application's configuration (JSON, TOML, anything
//! serde reads) and consulted twice: when the catalog the model sees is built (denied tools are
//! hidden) and again by the runner on every call (denied tools are refused anyway).
//!
//! ```
//! use tool_runtime::policy::{Decision, ToolPolicy};
//! use tool_runtime::prelude::*;
//!
//! let policy: ToolPolicy = serde_json::from_str(r#"{
//!     "allowed_tools": ["core__*", "tickets__create_ticket"],
//!     "require_approval": ["state_change", "external_side_effect"],
//!     "budgets": {"max_runtime_ms": 5000},
//!     "tools": {"core__slow_report": {"max_runtime_ms": 60000}},
//!     "connections": {"allowed_connection_ids": ["acme-tracker"]}
//! }"#).unwrap();
//!
//! let ctx = ToolInvocationContext::new(ContextIds { run_id: "run-1", actor_id: "user-42", tenant_id: "acme" });
//! assert_eq!(policy.decide(&ctx, "core__get_current_time", ToolEffect::ReadOnly), Decision::Allow);
//! assert_eq!(policy.decide(&ctx, "tickets__create_ticket", ToolEffect::StateChange), Decision::RequireApproval);
//! assert!(matches!(policy.decide(&ctx, "shell__exec", ToolEffect::ExternalSideEffect), Decision::Deny { .. }));
//! assert_eq!(policy.budgets_for("core__slow_report").max_runtime_ms, 60_000);
//! assert_eq!(policy.budgets_for("core__get_current_time").max_argument_bytes, 8 * 1024);
//! ```

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

use async_trait::async_trait;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use sha2::{Digest, Sha256};

use crate::runtime::ToolInvocationContext;
use crate::spec::{ToolEffect, ToolSpec};

mod pattern;

pub use pattern::{PatternProblem, PolicyError};

/// What may run, on which terms. Deny by default: a tool not listed in `allowed_tools` is
/// neither shown to the model nor run. Confirm side effects by default: calls of
/// `state_change` and `external_side_effect` tools need an [`Approver`]'s yes unless the policy
/// says otherwise.
///
/// The defaults, which a key left out of the configuration keeps: no tool allowed, approval
/// required for [`ToolEffect::StateChange`] and [`ToolEffect::ExternalSideEffect`], default
/// [`Budgets`], no per-tool exceptions, no connections. To let side effects run without
/// approval, say so: `"require_approval": []` for every tool, or
/// `"tools": {"<name>": {"require_approval": false}}` for one.
///
/// ```
/// use tool_runtime::prelude::*;
///
/// let policy = ToolPolicy::from_json(r#"{"allowed_tools": ["shop__*"]}"#).unwrap();
/// assert_eq!(policy.require_approval, [ToolEffect::StateChange, ToolEffect::ExternalSideEffect]);
/// let trusted = ToolPolicy::from_json(r#"{"allowed_tools": ["shop__*"], "require_approval": []}"#).unwrap();
/// assert!(trusted.require_approval.is_empty());
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ToolPolicy {
    /// Tool names that may run: exact names, or `namespace__*` for every tool of a namespace.
    /// Tools imported at run time (`mcp__...`) are allowed only by their exact name.
    ///
    /// Nothing else is a pattern, and an entry that would match no tool is refused when the
    /// policy is built ([`PolicyError`]), never kept silently: `*` alone (a policy allows only
    /// what it names; "every tool" would take in every tool imported later, from any server),
    /// a `*` anywhere else (`core*`, `core__get_*`), a wildcard over imported tools
    /// (`mcp__*`, `mcp__github__*`), and a string that is no valid tool name.
    #[serde(deserialize_with = "allowed_tools")]
    pub allowed_tools: Vec<String>,
    /// Effects whose calls need an [`Approver`]'s yes (default: `state_change` and
    /// `external_side_effect`; `[]` for none).
    pub require_approval: Vec<ToolEffect>,
    /// Limits for every call.
    pub budgets: Budgets,
    /// Per-tool exceptions, by exact tool name (a pattern here is refused: it would except
    /// no tool).
    #[serde(deserialize_with = "tool_exceptions")]
    pub tools: BTreeMap<String, ToolOverride>,
    /// The connections this application grants.
    pub connections: ConnectionGrant,
}

impl Default for ToolPolicy {
    /// Allows nothing; confirms side effects (see [`ToolPolicy`]).
    fn default() -> Self {
        Self {
            allowed_tools: Vec::new(),
            require_approval: vec![ToolEffect::StateChange, ToolEffect::ExternalSideEffect],
            budgets: Budgets::default(),
            tools: BTreeMap::new(),
            connections: ConnectionGrant::default(),
        }
    }
}

/// Limits for one call.
///
/// The result budgets apply to the redacted result, every part counted: the compact JSON of
/// the structured value, the bytes of text, of images, audio and embedded files, and the
/// strings of resource links. Text over the budget is cut or refused as
/// [`text_overflow`](Self::text_overflow) says; the structured value is never cut (over budget,
/// the call fails with `result_too_large`). An image over its own budgets is resized with the
/// cargo feature `image` and refused without it; see [`content::limits`](crate::content::limits).
///
/// ```
/// use tool_runtime::policy::{Budgets, TextOverflow};
///
/// let budgets: Budgets = serde_json::from_str(r#"{"max_image_width": 1568, "text_overflow": "error"}"#).unwrap();
/// assert_eq!((budgets.max_image_width, budgets.max_image_height), (1568, 8000));
/// assert_eq!(budgets.text_overflow, TextOverflow::Error);
/// assert_eq!(budgets.max_result_bytes, Budgets::default().max_result_bytes);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Budgets {
    /// How long the tool may run, in milliseconds (default 30 000).
    pub max_runtime_ms: u64,
    /// How large the raw arguments may be, in bytes (default 8 KiB).
    pub max_argument_bytes: usize,
    /// How large the redacted result may be, every part counted, in bytes (default 32 KiB: a
    /// tool that returns images needs a larger one, set per tool under `tools`).
    pub max_result_bytes: usize,
    /// How many parts a result may have (default 64); more is `result_too_large`.
    pub max_parts: usize,
    /// How large one image may be, in bytes (default 5 MiB, the smallest limit among the
    /// providers' APIs).
    pub max_image_bytes: usize,
    /// How wide one image may be, in pixels (default 8000, likewise).
    pub max_image_width: u32,
    /// How high one image may be, in pixels (default 8000).
    pub max_image_height: u32,
    /// What happens to text over [`max_result_bytes`](Self::max_result_bytes) (default: cut).
    pub text_overflow: TextOverflow,
    /// How deeply tools may call tools through [`ToolCalls`](crate::runner::ToolCalls)
    /// (default 3): a call nested deeper than this under the call a model or an application
    /// made is refused (`call_depth_exceeded`); 0 lets no tool call another. Checked against
    /// the called tool's budgets.
    pub max_call_depth: usize,
}

impl Default for Budgets {
    fn default() -> Self {
        Self {
            max_runtime_ms: 30_000,
            max_argument_bytes: 8 * 1024,
            max_result_bytes: 32 * 1024,
            max_parts: 64,
            max_image_bytes: 5 * 1024 * 1024,
            max_image_width: 8000,
            max_image_height: 8000,
            text_overflow: TextOverflow::Truncate,
            max_call_depth: 3,
        }
    }
}

/// What the runner does with text parts that take a result over
/// [`Budgets::max_result_bytes`]; JSON as `"truncate"` or `"error"`.
///
/// ```
/// use tool_runtime::policy::TextOverflow;
///
/// assert_eq!(serde_json::from_str::<TextOverflow>(r#""error""#).unwrap(), TextOverflow::Error);
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TextOverflow {
    /// Cut text parts, the last first, at a character boundary and append a visible marker
    /// (`[truncated: 100 of 5000 bytes shown]`); the record says what was cut.
    #[default]
    Truncate,
    /// Refuse the result (`result_too_large`).
    Error,
}

/// Exceptions for one tool; absent fields keep the policy-wide value.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ToolOverride {
    /// Refuse the tool even if `allowed_tools` matches it.
    pub deny: bool,
    /// Whether calls need approval, whatever the effect.
    pub require_approval: Option<bool>,
    /// See [`Budgets::max_runtime_ms`].
    pub max_runtime_ms: Option<u64>,
    /// See [`Budgets::max_argument_bytes`].
    pub max_argument_bytes: Option<usize>,
    /// See [`Budgets::max_result_bytes`].
    pub max_result_bytes: Option<usize>,
    /// See [`Budgets::max_parts`].
    pub max_parts: Option<usize>,
    /// See [`Budgets::max_image_bytes`].
    pub max_image_bytes: Option<usize>,
    /// See [`Budgets::max_image_width`].
    pub max_image_width: Option<u32>,
    /// See [`Budgets::max_image_height`].
    pub max_image_height: Option<u32>,
    /// See [`Budgets::text_overflow`].
    pub text_overflow: Option<TextOverflow>,
    /// See [`Budgets::max_call_depth`].
    pub max_call_depth: Option<usize>,
}

/// The connections granted. A connection-requiring tool runs only with a
/// `ctx.connection_id()` in `allowed_connection_ids ∩ ctx.requested_connection_ids()`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ConnectionGrant {
    /// Connection ids the application grants.
    pub allowed_connection_ids: BTreeSet<String>,
}

/// What policy says about one call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Decision {
    /// Run it.
    Allow,
    /// Refuse it.
    Deny {
        /// Why, safe to show.
        reason: String,
    },
    /// Run it only if an [`Approver`] says yes.
    RequireApproval,
}

impl ToolPolicy {
    /// A policy that allows exactly these tools, with every other setting at its default
    /// (approval for `state_change` and `external_side_effect` calls, default budgets, no
    /// connections): the same policy as `from_json(r#"{"allowed_tools": [...]}"#)`. Each entry
    /// is an exact tool name, or `namespace__*` for every tool of a namespace (see
    /// [`allowed_tools`](Self::allowed_tools)).
    ///
    /// ```
    /// use tool_runtime::prelude::*;
    ///
    /// let policy = ToolPolicy::allowing(["shop__*", "core__get_current_time"]);
    /// assert_eq!(policy, ToolPolicy::from_json(r#"{"allowed_tools": ["shop__*", "core__get_current_time"]}"#).unwrap());
    /// assert!(policy.lists("shop__get_order"));
    /// assert!(!policy.lists("core__delete_everything"));
    ///
    /// // Side effects need approval unless the policy says otherwise, by struct update:
    /// assert_eq!(policy.require_approval, [ToolEffect::StateChange, ToolEffect::ExternalSideEffect]);
    /// let trusted = ToolPolicy { require_approval: Vec::new(), ..ToolPolicy::allowing(["shop__*"]) };
    /// assert!(trusted.require_approval.is_empty());
    /// ```
    ///
    /// # Panics
    ///
    /// If an entry would allow no tool, or not the tools it seems to name (`*`, `core*`,
    /// `mcp__*`: see [`allowed_tools`](Self::allowed_tools)). The entries given here are
    /// usually written in the code, so a mistake is the program's, and fails on its first run
    /// rather than leave a policy that silently allows nothing; for entries that come from
    /// elsewhere, use [`try_allowing`](Self::try_allowing).
    #[must_use]
    #[track_caller]
    pub fn allowing<I, S>(patterns: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        match Self::try_allowing(patterns) {
            Ok(policy) => policy,
            Err(error) => panic!("ToolPolicy::allowing: {error}"),
        }
    }

    /// [`allowing`](Self::allowing), with an entry that would allow no tool (or not the tools
    /// it seems to name) refused.
    ///
    /// ```
    /// use tool_runtime::policy::{PatternProblem, ToolPolicy};
    ///
    /// assert!(ToolPolicy::try_allowing(["core__*", "mcp__github__create_issue"]).is_ok());
    /// let error = ToolPolicy::try_allowing(["mcp__github__*"]).unwrap_err();
    /// assert_eq!(error.problem(), &PatternProblem::ImportedWildcard);
    /// ```
    ///
    /// # Errors
    ///
    /// [`PolicyError`] for the first such entry.
    pub fn try_allowing<I, S>(patterns: I) -> Result<Self, PolicyError>
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        let policy = Self {
            allowed_tools: patterns.into_iter().map(Into::into).collect(),
            ..Self::default()
        };
        policy.check()?;
        Ok(policy)
    }

    /// Parses a policy from JSON. Every serde format refuses the same entries: an
    /// `allowed_tools` entry or `tools` key that would name no tool the way it reads (see
    /// [`allowed_tools`](Self::allowed_tools)).
    ///
    /// ```
    /// use tool_runtime::policy::ToolPolicy;
    ///
    /// let error = ToolPolicy::from_json(r#"{"allowed_tools": ["*"]}"#).unwrap_err();
    /// assert!(error.to_string().contains("`allowed_tools` entry `*`"));
    /// ```
    ///
    /// # Errors
    ///
    /// The parse error, naming the unknown or malformed key or the refused entry.
    pub fn from_json(json: &str) -> Result<Self, serde_json::Error> {
        serde_json::from_str(json)
    }

    /// Checks a policy built by hand (its fields are public): every `allowed_tools` entry and
    /// `tools` key must name tools the way it reads. [`from_json`](Self::from_json), serde and
    /// [`try_allowing`](Self::try_allowing) check this already.
    ///
    /// ```
    /// use tool_runtime::policy::ToolPolicy;
    ///
    /// let policy = ToolPolicy { allowed_tools: vec!["core*".into()], ..ToolPolicy::default() };
    /// assert!(policy.check().is_err());
    /// ```
    ///
    /// # Errors
    ///
    /// [`PolicyError`] for the first entry that would name no tool.
    pub fn check(&self) -> Result<(), PolicyError> {
        self.allowed_tools.iter().try_for_each(|entry| pattern::check_pattern(entry))?;
        self.tools.keys().try_for_each(|key| pattern::check_exact(key))
    }

    /// Whether `allowed_tools` lets `tool_name` through (overrides aside).
    #[must_use]
    pub fn lists(&self, tool_name: &str) -> bool {
        self.allowed_tools.iter().any(|entry| match entry.strip_suffix('*') {
            Some(prefix) if prefix.ends_with("__") => {
                tool_name.starts_with(prefix) && !tool_name.starts_with("mcp__")
            }
            _ => entry == tool_name,
        })
    }

    /// The decision for a call of `tool_name` with `effect`: deny unless listed and not
    /// overridden; approval when the effect (or the tool's override) asks for it.
    #[must_use]
    pub fn decide(
        &self,
        _ctx: &ToolInvocationContext,
        tool_name: &str,
        effect: ToolEffect,
    ) -> Decision {
        let exception = self.tools.get(tool_name);
        if !self.lists(tool_name) || exception.is_some_and(|exception| exception.deny) {
            return Decision::Deny { reason: "policy does not allow this tool".to_owned() };
        }
        let approval = exception
            .and_then(|exception| exception.require_approval)
            .unwrap_or_else(|| self.require_approval.contains(&effect));
        if approval { Decision::RequireApproval } else { Decision::Allow }
    }

    /// The budgets that apply to `tool_name`.
    #[must_use]
    pub fn budgets_for(&self, tool_name: &str) -> Budgets {
        let mut budgets = self.budgets;
        if let Some(exception) = self.tools.get(tool_name) {
            budgets.max_runtime_ms = exception.max_runtime_ms.unwrap_or(budgets.max_runtime_ms);
            budgets.max_argument_bytes =
                exception.max_argument_bytes.unwrap_or(budgets.max_argument_bytes);
            budgets.max_result_bytes =
                exception.max_result_bytes.unwrap_or(budgets.max_result_bytes);
            budgets.max_parts = exception.max_parts.unwrap_or(budgets.max_parts);
            budgets.max_image_bytes = exception.max_image_bytes.unwrap_or(budgets.max_image_bytes);
            budgets.max_image_width = exception.max_image_width.unwrap_or(budgets.max_image_width);
            budgets.max_image_height =
                exception.max_image_height.unwrap_or(budgets.max_image_height);
            budgets.text_overflow = exception.text_overflow.unwrap_or(budgets.text_overflow);
            budgets.max_call_depth = exception.max_call_depth.unwrap_or(budgets.max_call_depth);
        }
        budgets
    }

    /// `grant.allowed_connection_ids ∩ ctx.requested_connection_ids()`.
    #[must_use]
    pub fn effective_connections<'a>(
        &'a self,
        ctx: &'a ToolInvocationContext,
    ) -> BTreeSet<&'a str> {
        ctx.requested_connection_ids()
            .iter()
            .map(String::as_str)
            .filter(|id| self.connections.allowed_connection_ids.contains(*id))
            .collect()
    }

    /// Whether the call's `connection_id` is granted and requested.
    #[must_use]
    pub fn connection_allowed(&self, ctx: &ToolInvocationContext) -> bool {
        ctx.connection_id().is_some_and(|id| self.effective_connections(ctx).contains(id))
    }

    /// Whether a tool is shown to the model at all: in the run's
    /// [tool set](ToolInvocationContext::with_tool_set) (when it has one), not denied, and if
    /// it needs a connection, some connection is effective.
    #[must_use]
    pub fn shows(&self, ctx: &ToolInvocationContext, spec: &ToolSpec) -> bool {
        ctx.in_tool_set(spec.name())
            && !matches!(self.decide(ctx, spec.name(), spec.effect()), Decision::Deny { .. })
            && (!spec.requires_connection() || !self.effective_connections(ctx).is_empty())
    }
}

/// Reads `allowed_tools`, refusing an entry that would name no tool the way it reads.
fn allowed_tools<'de, D: serde::Deserializer<'de>>(
    deserializer: D,
) -> Result<Vec<String>, D::Error> {
    let entries = Vec::<String>::deserialize(deserializer)?;
    entries
        .iter()
        .try_for_each(|entry| pattern::check_pattern(entry))
        .map_err(serde::de::Error::custom)?;
    Ok(entries)
}

/// Reads `tools`, refusing a key that is not an exact tool name.
fn tool_exceptions<'de, D: serde::Deserializer<'de>>(
    deserializer: D,
) -> Result<BTreeMap<String, ToolOverride>, D::Error> {
    let tools = BTreeMap::<String, ToolOverride>::deserialize(deserializer)?;
    tools.keys().try_for_each(|key| pattern::check_exact(key)).map_err(serde::de::Error::custom)?;
    Ok(tools)
}

/// Writes `value` as JSON with object keys sorted, so equal values hash equally whatever
/// order their keys arrived in.
pub(crate) fn canonical_json(value: &Value, out: &mut String) {
    match value {
        Value::Object(map) => {
            let mut entries: Vec<_> = map.iter().collect();
            entries.sort_by(|a, b| a.0.cmp(b.0));
            out.push('{');
            for (i, (key, value)) in entries.into_iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                out.push_str(&Value::String(key.clone()).to_string());
                out.push(':');
                canonical_json(value, out);
            }
            out.push('}');
        }
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                canonical_json(item, out);
            }
            out.push(']');
        }
        other => out.push_str(&other.to_string()),
    }
}

/// The canonical JSON text of `value`: compact, object keys sorted.
pub(crate) fn canonical_text(value: &Value) -> String {
    let mut out = String::new();
    canonical_json(value, &mut out);
    out
}

/// SHA-256 (lowercase hex) of the canonical JSON of a call's arguments: equal for equal
/// arguments whatever the order of their keys.
///
/// ```
/// use serde_json::json;
/// use tool_runtime::policy::arguments_hash;
///
/// assert_eq!(arguments_hash(&json!({"a": 1, "b": 2})), arguments_hash(&json!({"b": 2, "a": 1})));
/// assert_ne!(arguments_hash(&json!({"a": 1})), arguments_hash(&json!({"a": 2})));
/// ```
#[must_use]
pub fn arguments_hash(arguments: &Value) -> String {
    crate::content::sha256_hex(canonical_text(arguments).as_bytes())
}

/// SHA-256 (lowercase hex) of everything a tool declares: its spec as JSON (name,
/// description, effect, input and output schemas, redaction, connection and capability
/// needs, and the [`schema_hash`](ToolSpec::schema_hash)). Approvals and deferred calls are
/// bound to it, so a tool that changed in any of these since a call was approved does not run
/// on that approval.
///
/// ```
/// use tool_runtime::policy::spec_hash;
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
/// assert_eq!(spec_hash(Close::spec()).len(), 64);
/// assert_eq!(spec_hash(Close::spec()), spec_hash(Close::spec()));
/// ```
#[must_use]
pub fn spec_hash(spec: &ToolSpec) -> String {
    let json = serde_json::to_value(spec).unwrap_or(Value::Null);
    crate::content::sha256_hex(canonical_text(&json).as_bytes())
}

/// An approval of one exact call, good for one use: the SHA-256 of the run, tenant and actor
/// it was given for, the tool's name and [`spec_hash`], the call id and the canonical
/// validated arguments. It cannot be replayed in another run, for another tenant or actor,
/// after the tool changed, for another call or for other arguments; [`PreApproved`] spends
/// each approval on the first call it approves.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Approval([u8; 32]);

impl Approval {
    /// The approval of calling the tool of `spec` as `tool_call_id` with exactly `arguments`,
    /// for the run, tenant and actor of `ctx` (for approvals given ahead of time, out of band).
    ///
    /// ```
    /// use serde_json::json;
    /// use tool_runtime::policy::Approval;
    /// use tool_runtime::prelude::*;
    ///
    /// /// Close a ticket.
    /// #[tool(name = "tickets__close", effect = state_change, redact = ["closed"])]
    /// struct Close { number: u32, reason: String }
    /// #[derive(Serialize, ToolSchema)]
    /// struct Closed { closed: bool }
    /// impl Tool for Close {
    ///     type Output = Closed;
    ///     async fn run(self, _: &ToolInvocationContext, _: &ToolCapabilities) -> Result<Closed, ToolError> {
    ///         Ok(Closed { closed: true })
    ///     }
    /// }
    ///
    /// let ctx = ToolInvocationContext::new(ContextIds { run_id: "run-1", actor_id: "user-1", tenant_id: "acme" });
    /// let other_run = ToolInvocationContext::new(ContextIds { run_id: "run-2", actor_id: "user-1", tenant_id: "acme" });
    /// let spec = Close::spec();
    /// let approved = Approval::of(&ctx, spec, "call_1", &json!({"number": 7, "reason": "fixed"}));
    /// assert_eq!(approved, Approval::of(&ctx, spec, "call_1", &json!({"reason": "fixed", "number": 7})));
    /// assert_ne!(approved, Approval::of(&ctx, spec, "call_1", &json!({"number": 8, "reason": "fixed"})));
    /// assert_ne!(approved, Approval::of(&ctx, spec, "call_2", &json!({"number": 7, "reason": "fixed"})));
    /// assert_ne!(approved, Approval::of(&other_run, spec, "call_1", &json!({"number": 7, "reason": "fixed"})));
    /// ```
    #[must_use]
    pub fn of(
        ctx: &ToolInvocationContext,
        spec: &ToolSpec,
        tool_call_id: &str,
        arguments: &Value,
    ) -> Self {
        Self::bound(ctx, spec.name(), &spec_hash(spec), tool_call_id, arguments)
    }

    /// [`of`](Self::of) with the spec hash already known.
    pub(crate) fn bound(
        ctx: &ToolInvocationContext,
        tool_name: &str,
        spec_hash: &str,
        tool_call_id: &str,
        arguments: &Value,
    ) -> Self {
        let canonical = canonical_text(arguments);
        let mut hasher = Sha256::new();
        for part in [
            ctx.run_id(),
            ctx.tenant_id(),
            ctx.actor_id(),
            tool_name,
            spec_hash,
            tool_call_id,
            canonical.as_str(),
        ] {
            hasher.update((part.len() as u64).to_le_bytes());
            hasher.update(part.as_bytes());
        }
        Self(hasher.finalize().into())
    }
}

/// A call waiting for approval.
#[derive(Debug)]
pub struct ApprovalRequest<'a> {
    /// The tool's name.
    pub tool_name: &'a str,
    /// The call's id.
    pub tool_call_id: &'a str,
    /// What the tool does to the world.
    pub effect: ToolEffect,
    /// The validated arguments.
    pub arguments: &'a Value,
    /// Who asks.
    pub ctx: &'a ToolInvocationContext,
    /// The tool's spec (an approval is bound to its [`spec_hash`]).
    pub spec: &'a ToolSpec,
}

impl ApprovalRequest<'_> {
    /// Approves exactly this call, once.
    #[must_use]
    pub fn approve(&self) -> ApprovalDecision {
        ApprovalDecision::Approved(self.approval())
    }

    /// The approval this exact call needs (see [`Approval::of`]).
    #[must_use]
    pub fn approval(&self) -> Approval {
        Approval::of(self.ctx, self.spec, self.tool_call_id, self.arguments)
    }

    /// Denies it, with a message for the model.
    pub fn deny(&self, message: impl Into<String>) -> ApprovalDecision {
        ApprovalDecision::Denied { message: message.into() }
    }

    /// Approves the call with other arguments (a person corrected them). The runner validates
    /// them again against the tool's schema and runs the tool with them.
    #[must_use]
    pub fn edit(&self, arguments: Value) -> ApprovalDecision {
        ApprovalDecision::Edited { arguments }
    }

    /// Decides later: the call ends pending (see [`ApprovalDecision::Pending`]).
    #[must_use]
    pub fn defer(&self) -> ApprovalDecision {
        ApprovalDecision::Pending
    }
}

/// An approver's answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ApprovalDecision {
    /// Approved; the runner checks the approval matches the call.
    Approved(Approval),
    /// Denied, with a message for the model.
    Denied {
        /// Why, safe to show.
        message: String,
    },
    /// Approved with these arguments instead of the model's; they are validated again.
    Edited {
        /// The arguments to run the tool with.
        arguments: Value,
    },
    /// Not decided yet: someone decides later (a person answers in another HTTP request). The
    /// call does not run and ends waiting ([`WaitsFor::Approval`](crate::runtime::WaitsFor)),
    /// which is not a failure: its
    /// [`ToolExecResult::is_waiting`](crate::runtime::ToolExecResult::is_waiting) says so and
    /// the sink gets a [`ToolCallWaiting`](crate::runtime::ToolEvent::ToolCallWaiting) event
    /// instead of a result. The agent loop stops with a resumable
    /// [`RunState`](crate::agent::RunState) (see [`agent::deferred`](crate::agent::deferred)).
    Pending,
}

/// Decides calls that policy marks [`Decision::RequireApproval`] (a person in a UI, a rules
/// engine). Supplied by the application; the default, [`DenyAll`], says no.
#[async_trait]
pub trait Approver: Send + Sync + fmt::Debug {
    /// Approves, denies or defers one call.
    async fn review(&self, request: &ApprovalRequest<'_>) -> ApprovalDecision;
}

/// Denies every call that needs approval.
#[derive(Debug, Clone, Copy, Default)]
pub struct DenyAll;

#[async_trait]
impl Approver for DenyAll {
    async fn review(&self, request: &ApprovalRequest<'_>) -> ApprovalDecision {
        request.deny("this call needs approval and no approver is configured")
    }
}

/// Defers every call that needs approval: each ends waiting, for a person to decide later
/// (see [`ApprovalDecision::Pending`]).
///
/// ```
/// use std::sync::Arc;
/// use tool_runtime::policy::DeferAll;
/// use tool_runtime::prelude::*;
///
/// let runner = ToolRunner::builder(ToolCatalog::builder().build().unwrap())
///     .approver(Arc::new(DeferAll))
///     .build();
/// # let _ = runner;
/// ```
#[derive(Debug, Clone, Copy, Default)]
pub struct DeferAll;

#[async_trait]
impl Approver for DeferAll {
    async fn review(&self, request: &ApprovalRequest<'_>) -> ApprovalDecision {
        request.defer()
    }
}

/// Approves exactly the calls approved ahead of time (see [`Approval::of`]), each once: an
/// approval is spent by the first call it approves, so a second call with the same binding
/// (a retry, a replay) is denied.
///
/// ```
/// use serde_json::json;
/// use tool_runtime::policy::{Approval, ApprovalDecision, ApprovalRequest, Approver, PreApproved};
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
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// let ctx = ToolInvocationContext::new(ContextIds { run_id: "run-1", actor_id: "user-1", tenant_id: "acme" });
/// let arguments = json!({"number": 7});
/// let approver = PreApproved::new([Approval::of(&ctx, Close::spec(), "call_1", &arguments)]);
/// let request = ApprovalRequest {
///     tool_name: "tickets__close",
///     tool_call_id: "call_1",
///     effect: ToolEffect::StateChange,
///     arguments: &arguments,
///     ctx: &ctx,
///     spec: Close::spec(),
/// };
/// assert!(matches!(approver.review(&request).await, ApprovalDecision::Approved(_)));
/// assert!(matches!(approver.review(&request).await, ApprovalDecision::Denied { .. }));
/// # });
/// ```
#[derive(Debug, Default)]
pub struct PreApproved(std::sync::Mutex<BTreeSet<[u8; 32]>>);

impl PreApproved {
    /// Approves these calls, each once, and no others.
    pub fn new(approvals: impl IntoIterator<Item = Approval>) -> Self {
        Self(std::sync::Mutex::new(approvals.into_iter().map(|approval| approval.0).collect()))
    }
}

#[async_trait]
impl Approver for PreApproved {
    async fn review(&self, request: &ApprovalRequest<'_>) -> ApprovalDecision {
        let approval = request.approval();
        let spent =
            self.0.lock().unwrap_or_else(std::sync::PoisonError::into_inner).remove(&approval.0);
        if spent {
            ApprovalDecision::Approved(approval)
        } else {
            request.deny("this call was not approved (or its approval was used already)")
        }
    }
}

/// A per-call authorization hook, run after policy: row-level rules, tenant checks.
/// The default, [`AllowAll`], allows everything policy allows.
#[async_trait]
pub trait Authorizer: Send + Sync + fmt::Debug {
    /// Allows or refuses one call.
    ///
    /// # Errors
    ///
    /// [`AuthzDenied`] with a safe message.
    async fn authorize(
        &self,
        ctx: &ToolInvocationContext,
        spec: &ToolSpec,
    ) -> Result<(), AuthzDenied>;
}

/// An authorizer's refusal.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AuthzDenied(pub String);

impl fmt::Display for AuthzDenied {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for AuthzDenied {}

/// Allows every call.
#[derive(Debug, Clone, Copy, Default)]
pub struct AllowAll;

#[async_trait]
impl Authorizer for AllowAll {
    async fn authorize(
        &self,
        _ctx: &ToolInvocationContext,
        _spec: &ToolSpec,
    ) -> Result<(), AuthzDenied> {
        Ok(())
    }
}
