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
//! assert_eq!(policy.decide("core__get_current_time", ToolEffect::ReadOnly), Decision::Allow);
//! assert_eq!(policy.decide("tickets__create_ticket", ToolEffect::StateChange), Decision::RequireApproval);
//! assert!(matches!(policy.decide("shell__exec", ToolEffect::ExternalSideEffect), Decision::Deny { .. }));
//! assert_eq!(policy.budgets_for("core__slow_report").max_runtime_ms, 60_000);
//! assert_eq!(policy.budgets_for("core__get_current_time").max_argument_bytes, 8 * 1024);
//! ```

use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};

use crate::spec::ToolEffect;

mod pattern;

pub use pattern::{PatternProblem, PolicyError};

/// What may run, on which terms. Deny by default: a tool not listed in `allowed_tools` is
/// neither shown to the model nor run. Confirm side effects by default: calls of
/// `state_change` and `external_side_effect` tools need an [`Approver`](crate::runner::Approver)'s yes unless the policy
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
    /// Effects whose calls need an [`Approver`](crate::runner::Approver)'s yes (default: `state_change` and
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
    /// How much memory resizing one oversize image may take, in bytes (default 128 MiB; only
    /// with the cargo feature `image`): the decoded pixels, the resized copy and the new
    /// encoding together. Checked against the image's header before anything is decoded, and
    /// set as the decoder's own limit: an image that would need more (a small file that claims
    /// 20 000 x 20 000 pixels) is refused, never decoded.
    pub max_image_decode_bytes: usize,
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
            max_image_decode_bytes: 128 * 1024 * 1024,
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
    /// See [`Budgets::max_image_decode_bytes`].
    pub max_image_decode_bytes: Option<usize>,
    /// See [`Budgets::text_overflow`].
    pub text_overflow: Option<TextOverflow>,
    /// See [`Budgets::max_call_depth`].
    pub max_call_depth: Option<usize>,
    /// Whether the tool acts only on behalf of a subject: a call whose context has no
    /// [`subject_id`](crate::runtime::ToolInvocationContext::subject_id) (set by the server,
    /// never from a request) is refused (`policy_denied`) and the tool is not shown.
    #[serde(skip_serializing_if = "is_false")]
    pub requires_subject: bool,
    /// The graphs the tool runs in: when given, a call whose context's
    /// [`graph_id`](crate::runtime::ToolInvocationContext::graph_id) is absent or not listed is
    /// refused (`policy_denied`) and the tool is not shown.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub graphs: Option<BTreeSet<String>>,
}

fn is_false(flag: &bool) -> bool {
    !*flag
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
    /// Run it only if an [`Approver`](crate::runner::Approver) says yes.
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
    pub fn decide(&self, tool_name: &str, effect: ToolEffect) -> Decision {
        let exception = self.tools.get(tool_name);
        if !self.lists(tool_name) || exception.is_some_and(|exception| exception.deny) {
            return Decision::Deny { reason: "policy does not allow this tool".to_owned() };
        }
        let approval = exception
            .and_then(|exception| exception.require_approval)
            .unwrap_or_else(|| self.require_approval.contains(&effect));
        if approval { Decision::RequireApproval } else { Decision::Allow }
    }

    /// Whether `tool_name` may run for a caller with these ids: the context's
    /// [`subject_id`](crate::runtime::ToolInvocationContext::subject_id) and
    /// [`graph_id`](crate::runtime::ToolInvocationContext::graph_id), against the tool's
    /// [`requires_subject`](ToolOverride::requires_subject) and
    /// [`graphs`](ToolOverride::graphs).
    ///
    /// ```
    /// use tool_runtime::policy::ToolPolicy;
    ///
    /// let policy = ToolPolicy::from_json(r#"{
    ///     "allowed_tools": ["mail__*"],
    ///     "tools": {"mail__send": {"requires_subject": true, "graphs": ["sales"]}}
    /// }"#).unwrap();
    /// assert!(policy.identity_allows("mail__send", Some("user:ada"), Some("sales")).is_ok());
    /// assert!(policy.identity_allows("mail__send", None, Some("sales")).is_err());
    /// assert!(policy.identity_allows("mail__send", Some("user:ada"), Some("support")).is_err());
    /// assert!(policy.identity_allows("mail__read", None, None).is_ok());
    /// ```
    ///
    /// # Errors
    ///
    /// Why not, safe to show.
    #[inline]
    pub fn identity_allows(
        &self,
        tool_name: &str,
        subject_id: Option<&str>,
        graph_id: Option<&str>,
    ) -> Result<(), &'static str> {
        // Most policies have no per-tool entries: no lookup for them (this runs on every call).
        if self.tools.is_empty() {
            return Ok(());
        }
        let Some(exception) = self.tools.get(tool_name) else { return Ok(()) };
        if exception.requires_subject && subject_id.is_none() {
            return Err("this tool acts only on behalf of a subject, and the call has none");
        }
        if let Some(graphs) = &exception.graphs
            && !graph_id.is_some_and(|graph| graphs.contains(graph))
        {
            return Err("this tool does not run in the call's graph");
        }
        Ok(())
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
            budgets.max_image_decode_bytes =
                exception.max_image_decode_bytes.unwrap_or(budgets.max_image_decode_bytes);
            budgets.text_overflow = exception.text_overflow.unwrap_or(budgets.text_overflow);
            budgets.max_call_depth = exception.max_call_depth.unwrap_or(budgets.max_call_depth);
        }
        budgets
    }

    /// Whether the policy grants tools the connection `connection_id` (it is in
    /// `connections.allowed_connection_ids`). A call may use a connection that is granted here
    /// and requested by the call's context
    /// ([`requested_connection_ids`](crate::runtime::ToolInvocationContext::requested_connection_ids)).
    #[must_use]
    pub fn grants_connection(&self, connection_id: &str) -> bool {
        self.connections.allowed_connection_ids.contains(connection_id)
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
