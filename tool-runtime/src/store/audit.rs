//! The audit trail: one entry per call an agent handed its runner, with the call as the model
//! sent it.

use std::fmt;

use crate::runtime::{RawCall, ToolErrorCode, ToolInvocationRecord, WaitsFor};

use super::RunKey;

/// One call of a run, as the audit trail keeps it: its record (the validated arguments, the
/// redacted result or the error, the times) and the call as the model sent it
/// ([`RawCall`]), which is kept here and nowhere else that is shown.
///
/// An agent with a [store](crate::agent::Agent::with_store) appends an entry for every call it
/// handed its runner in a run or a resume ([`RunStore::append_audit`](super::RunStore::append_audit)),
/// refused calls included (arguments that are not JSON, an unknown tool, a call policy
/// denied): an audit sees what the model asked for, not only what ran. A call that waits gets
/// two: one when it starts waiting ([`AuditOutcome::Waiting`], with the model's text), one when a
/// resume decides it (its outcome; no raw call, which the sealed state never holds). Calls
/// that never reach the runner get none: those of a turn the provider cut off and those
/// refused once the tool-calling turns are used up (the conversation still shows them).
///
/// The entries of a run are appended together when the run (or resume) ends, in one
/// transaction: a process that dies in the middle of a run leaves no entry of it. Entries outlive the run they belong
/// to until they expire ([`AgentConfig::audit_ttl`](crate::agent::AgentConfig::audit_ttl));
/// [`RunStore::delete_tenant`](super::RunStore::delete_tenant) deletes them with the tenant's
/// runs.
///
/// `Debug` shows the raw call's size only, as [`RawCall`]'s does.
///
/// ```
/// use tool_runtime::runtime::{RawCall, ToolInvocationRecord};
/// use tool_runtime::store::{AuditEntry, AuditOutcome, RunKey};
///
/// let record = ToolInvocationRecord {
///     tool_call_id: "call_1".into(),
///     tool_name: "shop__refund".into(),
///     args: None,
///     args_received: None,
///     result: None,
///     parts: Vec::new(),
///     details: None,
///     limited: Vec::new(),
///     error: None,
///     waiting: None,
///     started_ms: 1_000,
///     ended_ms: 1_002,
///     partial: None,
///     subject_id: None,
///     graph_id: None,
///     raw: Some(RawCall::new(r#"{"id": "call_1", "name": "shop__refund", "arguments": "{\"order\": 7}"}"#)),
/// };
/// let entry = AuditEntry::of(RunKey::new("acme", "run-1"), "user-7", &record, 86_400_000);
/// assert_eq!((entry.call_id.as_str(), entry.outcome), ("call_1", AuditOutcome::Ok));
/// assert!(entry.raw.as_ref().unwrap().text().contains("\\\"order\\\": 7"));
/// // The record as JSON holds no raw text: it is only in `raw`.
/// assert!(!entry.record.contains("order"));
/// assert!(!format!("{entry:?}").contains("order"));
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AuditEntry {
    /// The run the call belongs to.
    pub key: RunKey,
    /// Who the run ran for.
    pub actor_id: String,
    /// The call's id (its first 256 bytes, a NUL as U+FFFD: the model may send anything).
    pub call_id: String,
    /// The tool the model asked for (kept as the call id is).
    pub tool_name: String,
    /// How the call ended.
    pub outcome: AuditOutcome,
    /// The call's [record](ToolInvocationRecord), as JSON (it serialises without the raw
    /// call).
    pub record: String,
    /// The call as the model sent it, when the record had it (not for a call decided on
    /// resume: its `waiting` entry has it).
    pub raw: Option<RawCall>,
    /// When the call left the runner (its record's `ended_ms`), in milliseconds since the Unix
    /// epoch.
    pub recorded_at_ms: i64,
    /// When the entry expires, in milliseconds since the Unix epoch: from then on
    /// [`RunStore::expire`](super::RunStore::expire) deletes it.
    pub expires_at_ms: i64,
}

impl AuditEntry {
    /// The entry of `record`, a call of the run at `key` on behalf of `actor_id`, kept for
    /// `ttl_ms` after the call ended.
    #[must_use]
    pub fn of(key: RunKey, actor_id: &str, record: &ToolInvocationRecord, ttl_ms: u64) -> Self {
        let outcome = match (&record.error, &record.waiting) {
            (Some(error), _) => AuditOutcome::Failed(error.code),
            (None, Some(waiting)) => AuditOutcome::Waiting(waiting.waits_for),
            (None, None) => AuditOutcome::Ok,
        };
        let ttl = i64::try_from(ttl_ms).unwrap_or(i64::MAX);
        Self {
            key,
            actor_id: column(actor_id),
            call_id: column(&record.tool_call_id),
            tool_name: column(&record.tool_name),
            outcome,
            // A record is JSON values and strings under string keys: it always serialises.
            record: serde_json::to_string(record).unwrap_or_default(),
            raw: record.raw.clone(),
            recorded_at_ms: record.ended_ms,
            expires_at_ms: record.ended_ms.saturating_add(ttl),
        }
    }
}

/// How an audited call ended, kept by a store as its [word](Self::as_str).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum AuditOutcome {
    /// It ran and returned a result.
    Ok,
    /// It started waiting (a second entry comes when a resume decides it).
    Waiting(WaitsFor),
    /// It was refused or failed, with this code.
    Failed(ToolErrorCode),
}

impl AuditOutcome {
    /// The word a store keeps: `ok`, `waiting_for_approval` (`_client`, `_elicitation`), or the
    /// error's code (`invalid_json`, `policy_denied`, ...).
    ///
    /// ```
    /// use tool_runtime::runtime::{ToolErrorCode, WaitsFor};
    /// use tool_runtime::store::AuditOutcome;
    ///
    /// assert_eq!(AuditOutcome::Waiting(WaitsFor::Approval).as_str(), "waiting_for_approval");
    /// let failed = AuditOutcome::Failed(ToolErrorCode::InvalidJson);
    /// assert_eq!(AuditOutcome::from_word(failed.as_str()), Some(failed));
    /// ```
    #[must_use]
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Ok => "ok",
            // `waiting_for_` and `WaitsFor::as_str`, which `from_word` reads back.
            Self::Waiting(WaitsFor::Approval) => "waiting_for_approval",
            Self::Waiting(WaitsFor::Client) => "waiting_for_client",
            Self::Waiting(WaitsFor::Elicitation) => "waiting_for_elicitation",
            Self::Failed(code) => code.as_str(),
        }
    }

    /// The outcome of a stored word; `None` for a word this code does not know (a row a newer
    /// version wrote).
    #[must_use]
    pub fn from_word(word: &str) -> Option<Self> {
        if word == "ok" {
            return Some(Self::Ok);
        }
        if let Some(waits_for) = word.strip_prefix("waiting_for_") {
            return super::waits_for_named(waits_for).map(Self::Waiting);
        }
        serde_json::from_value(serde_json::Value::String(word.to_owned())).ok().map(Self::Failed)
    }
}

impl fmt::Display for AuditOutcome {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The most bytes of a call id, tool name or actor an entry keeps: the model names calls and
/// tools, and a store's column is no place for a megabyte.
const MAX_COLUMN_BYTES: usize = 256;

/// `text` as a store's text column takes it: cut to [`MAX_COLUMN_BYTES`] on a character
/// boundary, a NUL (which PostgreSQL's text refuses, failing the whole append) as U+FFFD.
fn column(text: &str) -> String {
    text[..text.floor_char_boundary(MAX_COLUMN_BYTES)].replace('\0', "\u{FFFD}")
}
