//! Deferred decisions and resumable runs: a guide.
//!
//! A call may have to wait: an [`Approver`](crate::runner::Approver) answers
//! [`ApprovalDecision::Pending`](crate::runner::ApprovalDecision::Pending) (a person decides in
//! a later HTTP request), a before-call hook answers
//! [`BeforeCallDecision::Pending`](crate::runner::BeforeCallDecision::Pending), the tool is
//! a [`ClientTool`](crate::runtime::ClientTool) that the application's client runs, or the
//! tool asks the user a question ([`Interact::elicit`](crate::runtime::Interact::elicit), see
//! [Questions to the user](#questions-to-the-user)). The runner ends such a call *waiting* (it
//! did not run to its end, and it did not fail). The agent loop then runs every other call of the model's turn it can, and stops
//! with [`StopReason::Waiting`](super::StopReason::Waiting) and a [`RunState`] in
//! [`AgentOutput::state`](super::AgentOutput::state): everything needed to go on later, in
//! another process.
//!
//! 1. Give the agent an application key ([`Agent::with_state_key`](super::Agent::with_state_key)):
//!    the state is sealed with HMAC-SHA256 over its canonical bytes, so a state that was
//!    edited (arguments, a tool's name, a result) is refused ([`ResumeError::Forged`]), as is
//!    one sealed with a key the agent does not hold ([`ResumeError::UnknownKey`]; rotate keys
//!    with [`Agent::with_retired_state_key`](super::Agent::with_retired_state_key)) or not
//!    sealed at all ([`ResumeError::Unsealed`]); none runs anything.
//! 2. Give it a run store ([`Agent::with_store`](super::Agent::with_store)), the same for
//!    every agent that may resume the run: an [`InMemoryStore`](crate::store::InMemoryStore)
//!    in one process, a `SqliteStore` for the processes of one host, a `PostgresStore` for
//!    several hosts (see [`store`](crate::store)). A run that stops waiting is saved there,
//!    sealed, for [`AgentConfig::state_ttl`](super::AgentConfig::state_ttl), and listed in its
//!    tenant's inbox ([`RunStore::list_waiting`](crate::store::RunStore::list_waiting)). The
//!    state is also in the output, to keep elsewhere if the application wants (the format
//!    below). There is no default store: an agent without one refuses to resume
//!    ([`ResumeError::NoStore`]), since a ledger of its own would forget with the agent and
//!    let the next request's agent run the same state again.
//! 3. When the decisions arrive, call [`Agent::resume_stored`](super::Agent::resume_stored)
//!    with [`Decisions`] by call id and the caller's context (or [`Agent::resume`](super::Agent::resume)
//!    with the state itself). The context names the run, and must name the same tenant and
//!    actor as the state ([`ResumeError::OtherCaller`]); each waiting tool must still have
//!    the spec it had ([`ResumeError::ToolChanged`]: the run stays listed for an operator);
//!    every decision must name a waiting call ([`ResumeError::NotWaiting`]).
//! 4. Approved calls run once, through the runner (policy, validation, budgets and
//!    redaction apply), under an approval bound to run, tenant, actor, tool, spec hash, call id
//!    and arguments. The before-call hooks are not asked again: they saw the call on its way
//!    to waiting, and the stored arguments are the ones they left; the after-call hooks see
//!    every decided call, denied and supplied ones too. Edited arguments are validated again. Denied calls go back to the model
//!    as `approval_denied` errors. A client tool's supplied result is checked against its
//!    output schema and redacted. Calls left without a decision keep waiting: the resume stops
//!    waiting again with a new state, saved in place of the old one, that says which calls
//!    ran, which were denied and which wait.
//! 5. Decided calls are spent in the store, all of a resume's at once, before any of them
//!    runs, in one transaction with the check that no other resume spent them and that the
//!    stored state is the one decided on: so a call runs at most once, whichever process
//!    resumes it and however often. Deciding a spent call again is
//!    [`ResumeError::AlreadyResumed`] and runs nothing (a call that waits on questions is
//!    decided once per question: its answers are spent as `<call id>#answer-<n>`). Until the
//!    resume saves the state that follows, or marks the run ended, another resume of the run
//!    is refused ([`StoreError::Busy`]), and one that decided
//!    on the old state after that is told it moved on
//!    ([`StoreError::Moved`]): load it again.
//! 6. A resume cancelled, dropped or killed after its calls were spent leaves them spent and
//!    not ended: the store lists them
//!    ([`RunStore::unfinished`](crate::store::RunStore::unfinished)), and an operator decides
//!    each again with [`Agent::take_over`](super::Agent::take_over) (approve: run it again;
//!    deny: mark it failed). A resume past the state's time to live is refused
//!    ([`StoreError::Expired`]); the application deletes
//!    expired runs with [`RunStore::expire`](crate::store::RunStore::expire), and a tenant's
//!    runs with [`RunStore::delete_tenant`](crate::store::RunStore::delete_tenant).
//!
//! ```
//! use std::sync::Arc;
//! use tool_runtime::agent::deferred::{Decisions, StateKey};
//! use tool_runtime::agent::{Agent, Message, ScriptedModel, ScriptedTurn, StopReason};
//! use tool_runtime::runner::DeferAll;
//! use tool_runtime::prelude::*;
//! use tool_runtime::store::{InMemoryStore, RunStore, WaitingQuery};
//!
//! /// Close a ticket.
//! #[tool(name = "tickets__close", effect = state_change, redact = ["closed"])]
//! struct Close { number: u32 }
//! #[derive(Serialize, ToolSchema)]
//! struct Closed { closed: bool }
//! impl Tool for Close {
//!     type Output = Closed;
//!     async fn run(self, _: &ToolInvocationContext, _: &ToolCapabilities) -> Result<Closed, ToolError> {
//!         Ok(Closed { closed: true })
//!     }
//! }
//!
//! # tokio::runtime::Runtime::new().unwrap().block_on(async {
//! // One store for every agent of the process (`SqliteStore` or `PostgresStore` for several).
//! let store = Arc::new(InMemoryStore::new());
//! let agent = |turns: Vec<ScriptedTurn>| {
//!     let policy = ToolPolicy { require_approval: vec![ToolEffect::StateChange], ..ToolPolicy::allowing(["tickets__*"]) };
//!     let runner = ToolRunner::builder(ToolCatalog::builder().register::<Close>().build().unwrap())
//!         .policy(policy)
//!         .approver(Arc::new(DeferAll))
//!         .build();
//!     Agent::new(Arc::new(ScriptedModel::new(turns)), runner)
//!         .with_state_key(StateKey::new(*b"an application secret of 32 byte"))
//!         .with_store(store.clone())
//! };
//! let ctx = ToolInvocationContext::new(ContextIds { run_id: "run-1", actor_id: "user-1", tenant_id: "acme" });
//!
//! // Request 1: the model asks to close ticket 7; the call waits.
//! let first = agent(vec![ScriptedTurn::openai_calls(&[("call_1", "tickets__close", r#"{"number": 7}"#)])])
//!     .run(vec![Message::user("Close ticket 7.")], &ctx, &|_| {})
//!     .await;
//! assert_eq!(first.done.stop, StopReason::Waiting { calls: vec!["call_1".into()] });
//! // The tenant's inbox lists it.
//! let inbox = store.list_waiting(&WaitingQuery::tenant("acme")).await.unwrap();
//! assert_eq!(inbox[0].waiting[0].tool_name, "tickets__close");
//!
//! // Request 2, maybe in another process: the person approved.
//! let second = agent(vec![ScriptedTurn::openai_text("Ticket 7 is closed.")])
//!     .resume_stored(Decisions::new().approve("call_1"), &ctx, &|_| {})
//!     .await
//!     .unwrap();
//! assert_eq!(second.done.stop, StopReason::Answered);
//! assert_eq!(second.done.records[0].result, Some(serde_json::json!({"closed": true})));
//!
//! // The same approval again: refused, nothing runs.
//! let replay = agent(vec![]).resume_stored(Decisions::new().approve("call_1"), &ctx, &|_| {}).await;
//! assert!(replay.is_err());
//! # });
//! ```
//!
//! # Questions to the user
//!
//! A tool that declares [`Interact`](crate::runtime::Interact) may ask the user for structured
//! input mid-call. Served over MCP, the question goes to the client (`elicitation/create`). In
//! the agent loop (with [`ChatModelSampler`](super::ChatModelSampler) or no backend bound) it is
//! a deferred decision: the question returns
//! [`InteractError::Waiting`](crate::runtime::InteractError::Waiting), which the tool returns
//! with `?`, and the call ends waiting, [`WaitsFor::Elicitation`], with the question in
//! [`CallStatus::Waiting`]'s `question` (its message, and the JSON Schema of the answer, an
//! object of flat properties to render as a form). The application shows it to the user and
//! resumes with [`Decisions::answer`] (or denies the call).
//!
//! On resume the call runs again **from its start**, under the approval it already had and
//! without the before-call hooks it passed, and each question gets its answer back in order:
//! so a tool asks its questions before any side effect, and the same questions each time
//! (another question is [`InteractError::Failed`](crate::runtime::InteractError::Failed)). An
//! accepted answer is checked against the question's type there: one that does not match is
//! [`InteractError::InvalidAnswer`](crate::runtime::InteractError::InvalidAnswer) for the tool,
//! as an MCP client's would be. A tool that asks a second question waits again, and the state
//! keeps the first question and its answer (`answered`).
//!
//! A question asked by a call another tool made (through
//! [`ToolCalls`](crate::runner::ToolCalls)) waits on the model's call that made it, when that
//! tool declares `Interact` too and fails with the child's error (`?`, or
//! `ToolError::from(error)`: the question goes along with it): on resume the parent runs
//! again, calls its child again, and the child gets the answer. Under a parent that does not
//! declare `Interact` the child's call ends `approval_denied` at once, since a call made by
//! another tool cannot wait.
//!
//! The runner's events for such a call are `tool_call_start`, `tool_call_waiting`, then on
//! resume `tool_call_start` again and its `tool_call_result` (or `tool_call_waiting` once
//! more): each run of the call starts once and ends once.
//!
//! ```
//! use std::sync::Arc;
//! use tool_runtime::agent::deferred::{CallStatus, Decisions, StateKey, WaitsFor};
//! use tool_runtime::agent::{Agent, Message, ScriptedModel, ScriptedTurn, StopReason};
//! use tool_runtime::prelude::*;
//! use tool_runtime::runtime::{ElicitAnswer, ElicitResponse, Interact};
//! use tool_runtime::store::InMemoryStore;
//!
//! #[derive(Deserialize, ToolSchema)]
//! struct Size {
//!     /// Cups of coffee.
//!     cups: u8,
//! }
//!
//! /// Order coffee, asking the user how many cups.
//! #[tool(name = "coffee__order", effect = read_only, redact = ["cups"], capabilities = [Interact])]
//! struct Order { drink: String }
//! #[derive(Serialize, ToolSchema)]
//! struct Ordered { cups: u8 }
//! impl Tool for Order {
//!     type Output = Ordered;
//!     async fn run(self, _: &ToolInvocationContext, caps: &ToolCapabilities) -> Result<Ordered, ToolError> {
//!         let answer = caps.get::<Interact>()?.elicit::<Size>("How many cups?").await?;
//!         Ok(Ordered { cups: answer.accepted().map_or(0, |size| size.cups) })
//!     }
//! }
//!
//! # tokio::runtime::Runtime::new().unwrap().block_on(async {
//! let store = Arc::new(InMemoryStore::new());
//! let agent = |turns: Vec<ScriptedTurn>| {
//!     let catalog = ToolCatalog::builder()
//!         .register::<Order>()
//!         .capability(Interact::unavailable())
//!         .build()
//!         .unwrap();
//!     let runner = ToolRunner::builder(catalog).policy(ToolPolicy::allowing(["coffee__*"])).build();
//!     Agent::new(Arc::new(ScriptedModel::new(turns)), runner)
//!         .with_state_key(StateKey::new(*b"an application secret of 32 byte"))
//!         .with_store(store.clone())
//! };
//! let ctx = ToolInvocationContext::new(ContextIds { run_id: "run-1", actor_id: "user-1", tenant_id: "acme" });
//!
//! let first = agent(vec![ScriptedTurn::openai_calls(&[("call_1", "coffee__order", r#"{"drink": "espresso"}"#)])])
//!     .run(vec![Message::user("Order coffee.")], &ctx, &|_| {})
//!     .await;
//! let state = first.state.unwrap();
//! let waiting = state.waiting().next().unwrap();
//! let CallStatus::Waiting { waits_for, question, .. } = &waiting.status else { unreachable!() };
//! assert_eq!(*waits_for, WaitsFor::Elicitation);
//! assert_eq!(question.as_ref().unwrap().message, "How many cups?");
//!
//! let answer = ElicitResponse::Accept(serde_json::json!({"cups": 2}));
//! let second = agent(vec![ScriptedTurn::openai_text("Two cups are on their way.")])
//!     .resume(state, Decisions::new().answer("call_1", answer), &ctx, &|_| {})
//!     .await
//!     .unwrap();
//! assert_eq!(second.done.stop, StopReason::Answered);
//! assert_eq!(second.done.records[0].result, Some(serde_json::json!({"cups": 2})));
//! # });
//! ```
//!
//! # The stored format
//!
//! A [`RunState`] is one JSON object, format `1`:
//!
//! | key | value |
//! |---|---|
//! | `format` | `1` |
//! | `run_id`, `tenant_id`, `actor_id` | the caller the run belongs to |
//! | `iterations` | model turns taken |
//! | `input_tokens`, `output_tokens` | usage so far |
//! | `elapsed_ms` | wall-clock time the run has used of its budget |
//! | `call_ids` | every call id the run has handed out (ids stay unique after a resume) |
//! | `messages` | the conversation in the [stored form](crate::adapters::stored), ending with the model's turn whose calls wait |
//! | `calls` | each call of that turn, in model order: `id` (the run's), `wire_id` (the provider's), `tool_name`, `status`, and for `"waiting"` (read as `"pending"` too, as states written before 0.2 say): `waits_for` (`"approval"`, `"client"` or `"elicitation"`), `arguments`, `arguments_hash` (SHA-256 of their canonical JSON), `spec_hash` ([`spec_hash`](crate::spec::ToolSpec::spec_hash)), and for `"elicitation"`: `question` (`{"message", "schema"}`), when earlier questions were answered `answered` (`[{"question", "answer"}]`, answers as `{"action": "accept", "content": {..}}`, `{"action": "decline"}` or `{"action": "cancel"}`), and `approved: true` when the call was approved before it asked; for `"ran"`, `"approved"`, `"edited"`, `"denied"`, `"supplied"`, `"answered"`: `result` (a stored tool result) |
//! | `key` | the [id](StateKey::id) of the key that sealed it (states written before 0.2 have none) |
//! | `seal` | HMAC-SHA256 (hex) over the canonical JSON (keys sorted) of everything else |
//!
//! Unknown keys are refused. A [run store](crate::store) keeps a state as one header line,
//! `tool-runtime-state/1 <key id> <hmac>`, then this JSON: the HMAC-SHA256 (hex) of the JSON's
//! bytes as stored, checked before they are parsed. Records ([`ToolInvocationRecord`](crate::runtime::ToolInvocationRecord)s)
//! are not part of the state: each [`AgentDone`](super::AgentDone) lists the calls that ran in
//! its own part of the run.

use std::collections::BTreeMap;
use std::fmt;

use hmac::{Hmac, Mac};
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::Value;
use sha2::Sha256;

use super::Message;
use crate::adapters::ToolResult;
use crate::digest::{arguments_hash, canonical_text, hex};
use crate::runtime::{Answered, ElicitRequest, ElicitResponse};
use crate::store::StoreError;

/// The version of the stored format this crate writes and reads.
const FORMAT: u32 = 1;

/// The application's key for sealing [`RunState`]s. Keep it secret and the same across the
/// processes that resume each other's runs; 32 random bytes or more. Each key has an
/// [id](Self::id), derived from it, that every state it seals names, so a state sealed with a
/// key being rotated out ([`Agent::with_retired_state_key`](super::Agent::with_retired_state_key))
/// is still read, and one sealed with a key the agent does not hold is refused as such
/// ([`ResumeError::UnknownKey`]). Its `Debug` shows the id, never the key.
///
/// ```
/// use tool_runtime::agent::deferred::StateKey;
///
/// let key = StateKey::new(b"an application secret of 32 byte".to_vec());
/// assert_eq!(key.id().len(), 16);
/// assert_eq!(format!("{key:?}"), format!("StateKey({})", key.id()));
/// assert_ne!(key.id(), StateKey::new(b"another application secret, too!".to_vec()).id());
/// ```
#[derive(Clone)]
pub struct StateKey {
    id: String,
    bytes: Vec<u8>,
}

impl StateKey {
    /// A key of these bytes.
    pub fn new(bytes: impl Into<Vec<u8>>) -> Self {
        use sha2::Digest as _;
        let bytes = bytes.into();
        // A one-way digest of the key under a label of its own: the id tells keys apart and
        // gives nothing of them away.
        let digest =
            Sha256::new().chain_update(b"tool-runtime state key id\0").chain_update(&bytes);
        let id = hex(&digest.finalize()[..8]);
        Self { id, bytes }
    }

    /// The key's id (16 hex digits, derived from the key): what a state sealed with it names.
    #[must_use]
    pub fn id(&self) -> &str {
        &self.id
    }

    pub(crate) fn mac(&self, bytes: &[u8]) -> Hmac<Sha256> {
        // HMAC takes keys of any length.
        let mut mac = <Hmac<Sha256> as Mac>::new_from_slice(&self.bytes)
            .unwrap_or_else(|_| unreachable!("HMAC accepts keys of every length"));
        mac.update(bytes);
        mac
    }
}

impl fmt::Debug for StateKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "StateKey({})", self.id)
    }
}

#[doc(no_inline)]
pub use crate::runtime::WaitsFor;

/// Where one call of the waiting turn stands.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "status", rename_all = "snake_case")]
pub enum CallStatus {
    /// It waits for a decision. (`"status": "pending"`, as states written before 0.2 say,
    /// reads as this too.)
    #[serde(alias = "pending")]
    Waiting {
        /// For what.
        waits_for: WaitsFor,
        /// The validated arguments it waits with.
        arguments: Value,
        /// SHA-256 (hex) of their canonical JSON ([`arguments_hash`]).
        arguments_hash: String,
        /// The tool's [`spec_hash`](crate::spec::ToolSpec::spec_hash) when the call was made.
        spec_hash: String,
        /// For [`WaitsFor::Elicitation`]: the question the user is to answer (show its
        /// message, and a form of its schema).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        question: Option<ElicitRequest>,
        /// For [`WaitsFor::Elicitation`]: the questions the call asked before this one, with
        /// the answers given on earlier resumes, in order.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        answered: Vec<Answered>,
        /// For [`WaitsFor::Elicitation`]: whether the call was approved before it asked (policy
        /// required it then). Answered, it runs again under that approval; one that was not
        /// approved is refused (`approval_denied`) if policy has come to require approval.
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        approved: bool,
    },
    /// It went through the runner with the rest of its turn (it ran, or was refused).
    Ran {
        /// Its result as the model gets it.
        #[serde(with = "stored_result")]
        result: ToolResult,
    },
    /// It was approved on a resume and ran.
    Approved {
        /// Its result.
        #[serde(with = "stored_result")]
        result: ToolResult,
    },
    /// It was approved with edited arguments on a resume and ran (or they were refused).
    Edited {
        /// Its result.
        #[serde(with = "stored_result")]
        result: ToolResult,
    },
    /// It was denied on a resume; the model gets an `approval_denied` error.
    Denied {
        /// Its result.
        #[serde(with = "stored_result")]
        result: ToolResult,
    },
    /// Its client supplied the result on a resume (checked and redacted).
    Supplied {
        /// Its result.
        #[serde(with = "stored_result")]
        result: ToolResult,
    },
    /// The user answered its question on a resume, and it ran again, to its end.
    Answered {
        /// Its result.
        #[serde(with = "stored_result")]
        result: ToolResult,
    },
}

impl CallStatus {
    /// A call that waits, its arguments hashed (the hash a resume checks them against).
    pub(super) fn waiting(
        waits_for: WaitsFor,
        arguments: Value,
        spec_hash: String,
        question: Option<ElicitRequest>,
        answered: Vec<Answered>,
        approved: bool,
    ) -> Self {
        Self::Waiting {
            waits_for,
            arguments_hash: arguments_hash(&arguments),
            arguments,
            spec_hash,
            question,
            answered,
            approved,
        }
    }

    /// The result, for a call that has one.
    #[must_use]
    pub fn result(&self) -> Option<&ToolResult> {
        match self {
            Self::Waiting { .. } => None,
            Self::Ran { result }
            | Self::Approved { result }
            | Self::Edited { result }
            | Self::Denied { result }
            | Self::Supplied { result }
            | Self::Answered { result } => Some(result),
        }
    }
}

/// One call of the turn a [`RunState`] waits on.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StateCall {
    /// The call's id within the run (events and decisions use it).
    pub id: String,
    /// The id the provider gave it (results go back to the model under it).
    pub wire_id: String,
    /// The tool's name.
    pub tool_name: String,
    /// Where it stands.
    #[serde(flatten)]
    pub status: CallStatus,
}

/// A run stopped on calls that wait: serialisable, sealed, resumable in another process with
/// [`Agent::resume`](super::Agent::resume). See the [module docs](self) for the format.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RunState {
    format: u32,
    run_id: String,
    tenant_id: String,
    actor_id: String,
    iterations: usize,
    input_tokens: u64,
    output_tokens: u64,
    elapsed_ms: u64,
    call_ids: Vec<String>,
    messages: Vec<Message>,
    calls: Vec<StateCall>,
    /// The id of the key that sealed it (states written before 0.2 name none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    key: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    seal: Option<String>,
}

/// The parts of a [`RunState`] the loop fills in.
pub(super) struct StateParts {
    pub(super) run_id: String,
    pub(super) tenant_id: String,
    pub(super) actor_id: String,
    pub(super) iterations: usize,
    pub(super) input_tokens: u64,
    pub(super) output_tokens: u64,
    pub(super) elapsed_ms: u64,
    pub(super) call_ids: Vec<String>,
    pub(super) messages: Vec<Message>,
    pub(super) calls: Vec<StateCall>,
}

impl RunState {
    /// A state sealed with `key` (unsealed without one: such a state is never resumed).
    pub(super) fn sealed(parts: StateParts, key: Option<&StateKey>) -> Self {
        let mut state = Self {
            format: FORMAT,
            run_id: parts.run_id,
            tenant_id: parts.tenant_id,
            actor_id: parts.actor_id,
            iterations: parts.iterations,
            input_tokens: parts.input_tokens,
            output_tokens: parts.output_tokens,
            elapsed_ms: parts.elapsed_ms,
            call_ids: parts.call_ids,
            messages: parts.messages,
            calls: parts.calls,
            key: key.map(|key| key.id.clone()),
            seal: None,
        };
        state.seal = key.map(|key| hex(&key.mac(&state.canonical_bytes()).finalize().into_bytes()));
        state
    }

    /// The canonical bytes the seal covers: the state without its seal, as canonical JSON.
    fn canonical_bytes(&self) -> Vec<u8> {
        let unsealed = Self { seal: None, ..self.clone() };
        let json = serde_json::to_value(&unsealed).unwrap_or(Value::Null);
        canonical_text(&json).into_bytes()
    }

    /// Checks that the state is of a format this crate reads and sealed with `key`
    /// ([`Agent::resume`](super::Agent::resume) does this first; an application may check a
    /// state it reads back before it stores or shows it).
    ///
    /// # Errors
    ///
    /// [`ResumeError::UnsupportedFormat`]; [`ResumeError::Unsealed`] for a state sealed with
    /// no key; [`ResumeError::UnknownKey`] for a state that names another key;
    /// [`ResumeError::Forged`] for a seal that does not match.
    pub fn verify(&self, key: &StateKey) -> Result<(), ResumeError> {
        self.verify_with(std::slice::from_ref(key))
    }

    /// As [`verify`](Self::verify), with whichever of `keys` the state names (a state that
    /// names none, written before 0.2, may match any of them).
    pub(super) fn verify_with(&self, keys: &[StateKey]) -> Result<(), ResumeError> {
        if self.format != FORMAT {
            return Err(ResumeError::UnsupportedFormat { format: self.format });
        }
        let seal = self.seal.as_deref().ok_or(ResumeError::Unsealed)?;
        let seal = unhex(seal).ok_or(ResumeError::Forged)?;
        let bytes = self.canonical_bytes();
        let matches = |key: &StateKey| key.mac(&bytes).verify_slice(&seal).is_ok();
        match &self.key {
            Some(id) => {
                let key = keys.iter().find(|key| key.id == *id);
                let key = key.ok_or_else(|| ResumeError::UnknownKey { key_id: id.clone() })?;
                if matches(key) { Ok(()) } else { Err(ResumeError::Forged) }
            }
            None if keys.iter().any(matches) => Ok(()),
            None => Err(ResumeError::Forged),
        }
    }

    /// The state's seal (hex), for a state sealed with a key: it names this state and no
    /// other.
    pub(super) fn seal(&self) -> Option<&str> {
        self.seal.as_deref()
    }

    /// The run it belongs to.
    #[must_use]
    pub fn run_id(&self) -> &str {
        &self.run_id
    }

    /// The tenant it belongs to.
    #[must_use]
    pub fn tenant_id(&self) -> &str {
        &self.tenant_id
    }

    /// The actor it belongs to.
    #[must_use]
    pub fn actor_id(&self) -> &str {
        &self.actor_id
    }

    /// Model turns taken so far.
    #[must_use]
    pub fn iterations(&self) -> usize {
        self.iterations
    }

    /// The conversation, ending with the model's turn whose calls wait.
    #[must_use]
    pub fn messages(&self) -> &[Message] {
        &self.messages
    }

    /// Each call of the waiting turn, in model order, with where it stands.
    #[must_use]
    pub fn calls(&self) -> &[StateCall] {
        &self.calls
    }

    /// The calls that still wait.
    pub fn waiting(&self) -> impl Iterator<Item = &StateCall> {
        self.calls.iter().filter(|call| matches!(call.status, CallStatus::Waiting { .. }))
    }

    pub(super) fn into_parts(self) -> StateParts {
        StateParts {
            run_id: self.run_id,
            tenant_id: self.tenant_id,
            actor_id: self.actor_id,
            iterations: self.iterations,
            input_tokens: self.input_tokens,
            output_tokens: self.output_tokens,
            elapsed_ms: self.elapsed_ms,
            call_ids: self.call_ids,
            messages: self.messages,
            calls: self.calls,
        }
    }
}

pub(crate) fn unhex(text: &str) -> Option<Vec<u8>> {
    if !text.len().is_multiple_of(2) || !text.is_ascii() {
        return None;
    }
    (0..text.len()).step_by(2).map(|i| u8::from_str_radix(&text[i..i + 2], 16).ok()).collect()
}

/// A tool result in the stored form of [`Message`] (one entry of a `tool_results` message).
mod stored_result {
    use super::{Deserialize, Deserializer, Message, Serializer, ToolResult, Value};
    use serde::de::Error as _;
    use serde::ser::Error as _;

    pub(super) fn serialize<S: Serializer>(
        result: &ToolResult,
        serializer: S,
    ) -> Result<S::Ok, S::Error> {
        let message = serde_json::to_value(Message::ToolResults(vec![result.clone()]))
            .map_err(S::Error::custom)?;
        let stored = message.get("results").and_then(|results| results.get(0)).cloned();
        serde::Serialize::serialize(&stored.unwrap_or(Value::Null), serializer)
    }

    pub(super) fn deserialize<'de, D: Deserializer<'de>>(
        deserializer: D,
    ) -> Result<ToolResult, D::Error> {
        let stored = Value::deserialize(deserializer)?;
        let message = serde_json::json!({"role": "tool_results", "results": [stored]});
        match serde_json::from_value(message).map_err(D::Error::custom)? {
            Message::ToolResults(mut results) if results.len() == 1 => Ok(results.remove(0)),
            _ => Err(D::Error::custom("expected one stored tool result")),
        }
    }
}

/// The key a decision on `call_id` spends in the ledger: the call id, or for an answer to a
/// question, `<call id>#answer-<n>` (the `n`th question the call asked: a call that waits on
/// questions is decided once per question).
pub(super) fn ledger_key(state: &RunState, call_id: &str) -> String {
    let waiting = state.calls().iter().find(|call| call.id == call_id);
    match waiting.map(|call| &call.status) {
        Some(CallStatus::Waiting { waits_for: WaitsFor::Elicitation, answered, .. }) => {
            format!("{call_id}#answer-{}", answered.len() + 1)
        }
        _ => call_id.to_owned(),
    }
}

/// How a waiting call was decided: the word its [`AgentEvent::CallDecided`] carries, and the
/// status it ends with once it ran (or was refused).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Verdict {
    Approved,
    Edited,
    Denied,
    Supplied,
    Answered,
}

impl Verdict {
    pub(super) fn of(decision: &CallDecision) -> Self {
        match decision {
            CallDecision::Approve => Self::Approved,
            CallDecision::Edit { .. } => Self::Edited,
            CallDecision::Deny { .. } => Self::Denied,
            CallDecision::Supply { .. } => Self::Supplied,
            CallDecision::Answer { .. } => Self::Answered,
        }
    }

    pub(super) fn label(self) -> &'static str {
        match self {
            Self::Approved => "approved",
            Self::Edited => "edited",
            Self::Denied => "denied",
            Self::Supplied => "supplied",
            Self::Answered => "answered",
        }
    }

    pub(super) fn status(self, result: ToolResult) -> CallStatus {
        match self {
            Self::Approved => CallStatus::Approved { result },
            Self::Edited => CallStatus::Edited { result },
            Self::Denied => CallStatus::Denied { result },
            Self::Supplied => CallStatus::Supplied { result },
            Self::Answered => CallStatus::Answered { result },
        }
    }
}

/// What to do with one waiting call.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "decision", rename_all = "snake_case", deny_unknown_fields)]
pub enum CallDecision {
    /// Run it as the model asked.
    Approve,
    /// Do not run it; the model gets an `approval_denied` error with this message.
    Deny {
        /// Why, safe to show to the model.
        message: String,
    },
    /// Run it with these arguments instead (validated again).
    Edit {
        /// The corrected arguments.
        arguments: Value,
    },
    /// A client tool's result, as its client produced it (checked against the output schema
    /// and redacted).
    Supply {
        /// The structured output.
        output: Value,
    },
    /// The user's answer to the call's question: the call runs again from its start and gets
    /// it (an accepted answer is checked against the question's type there).
    Answer {
        /// What the user did, in MCP's form: `{"action": "accept", "content": {...}}`,
        /// `{"action": "decline"}` or `{"action": "cancel"}`.
        answer: ElicitResponse,
    },
}

impl CallDecision {
    fn allowed_for(&self, waits_for: WaitsFor) -> bool {
        match self {
            Self::Deny { .. } => true,
            Self::Approve | Self::Edit { .. } => waits_for == WaitsFor::Approval,
            Self::Supply { .. } => waits_for == WaitsFor::Client,
            Self::Answer { .. } => waits_for == WaitsFor::Elicitation,
        }
    }
}

/// The decisions a resume applies, by call id (the run's, as in [`StateCall::id`]). As JSON:
/// `{"call_1": {"decision": "approve"}, "call_2": {"decision": "deny", "message": "no"}}`.
///
/// ```
/// use serde_json::json;
/// use tool_runtime::agent::deferred::{CallDecision, Decisions};
///
/// let decisions = Decisions::new().approve("call_1").deny("call_2", "not today");
/// assert_eq!(decisions.get("call_1"), Some(&CallDecision::Approve));
/// assert_eq!(
///     serde_json::to_value(&decisions).unwrap(),
///     json!({"call_1": {"decision": "approve"}, "call_2": {"decision": "deny", "message": "not today"}})
/// );
/// ```
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Decisions(BTreeMap<String, CallDecision>);

impl Decisions {
    /// No decisions.
    #[must_use]
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds (or replaces) the decision for `call_id`.
    #[must_use]
    pub fn decide(mut self, call_id: impl Into<String>, decision: CallDecision) -> Self {
        self.0.insert(call_id.into(), decision);
        self
    }

    /// Approves `call_id`.
    #[must_use]
    pub fn approve(self, call_id: impl Into<String>) -> Self {
        self.decide(call_id, CallDecision::Approve)
    }

    /// Denies `call_id` with a message for the model.
    #[must_use]
    pub fn deny(self, call_id: impl Into<String>, message: impl Into<String>) -> Self {
        self.decide(call_id, CallDecision::Deny { message: message.into() })
    }

    /// Approves `call_id` with other arguments.
    #[must_use]
    pub fn edit(self, call_id: impl Into<String>, arguments: Value) -> Self {
        self.decide(call_id, CallDecision::Edit { arguments })
    }

    /// Supplies the result of the client tool call `call_id`.
    #[must_use]
    pub fn supply(self, call_id: impl Into<String>, output: Value) -> Self {
        self.decide(call_id, CallDecision::Supply { output })
    }

    /// Answers the question the call `call_id` waits on.
    #[must_use]
    pub fn answer(self, call_id: impl Into<String>, answer: ElicitResponse) -> Self {
        self.decide(call_id, CallDecision::Answer { answer })
    }

    /// The decision for `call_id`.
    #[must_use]
    pub fn get(&self, call_id: &str) -> Option<&CallDecision> {
        self.0.get(call_id)
    }

    /// Whether there are none.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    pub(super) fn ids(&self) -> impl Iterator<Item = &String> {
        self.0.keys()
    }

    /// Each decision with its call id, in call id order.
    pub fn iter(&self) -> impl Iterator<Item = (&String, &CallDecision)> {
        self.0.iter()
    }

    pub(super) fn check(&self, state: &RunState) -> Result<(), ResumeError> {
        let waiting: BTreeMap<&str, WaitsFor> = state
            .calls
            .iter()
            .filter_map(|call| match &call.status {
                CallStatus::Waiting { waits_for, .. } => Some((call.id.as_str(), *waits_for)),
                _ => None,
            })
            .collect();
        let unknown: Vec<String> =
            self.0.keys().filter(|id| !waiting.contains_key(id.as_str())).cloned().collect();
        if !unknown.is_empty() {
            return Err(ResumeError::NotWaiting { call_ids: unknown });
        }
        for (id, decision) in &self.0 {
            let waits_for = waiting[id.as_str()];
            if !decision.allowed_for(waits_for) {
                return Err(ResumeError::InvalidDecision { call_id: id.clone(), waits_for });
            }
        }
        Ok(())
    }
}

/// Why a resume was refused. Nothing ran.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ResumeError {
    /// The agent has no [`StateKey`], so it cannot check a state's seal.
    NoKey,
    /// The agent has no [`RunStore`](crate::store::RunStore)
    /// ([`Agent::with_store`](super::Agent::with_store)), so it could not tell a state resumed
    /// before from a new one.
    NoStore,
    /// The resume decides nothing: it names no call.
    NoDecisions,
    /// The state's conversation breaks the chat contract (see
    /// [`check_conversation`](crate::adapters::check_conversation)).
    Conversation(crate::adapters::ConversationError),
    /// The seal does not match: the state was edited, or sealed with another key.
    Forged,
    /// The state has no seal: an agent without a [`StateKey`] made it, and such a state is
    /// never resumed.
    Unsealed,
    /// The state names a key this agent does not hold (neither its key nor a retired one): it
    /// was sealed elsewhere, or with a key rotated out since.
    UnknownKey {
        /// The id of the key it names.
        key_id: String,
    },
    /// The run store refused or failed: the run is not stored (or ended, or expired and
    /// deleted), it expired, another state of it was saved since this one, another resume
    /// holds it, its stored state is too large or does not decode, or the store is
    /// unreachable. Nothing ran.
    Store(StoreError),
    /// A take-over ([`Agent::take_over`](super::Agent::take_over)) must decide every call the
    /// resume it takes over from spent and never ended; these were left out.
    Undecided {
        /// Those calls.
        call_ids: Vec<String>,
    },
    /// The state is of a format this crate does not read.
    UnsupportedFormat {
        /// Its format.
        format: u32,
    },
    /// The context names another run, tenant or actor than the state.
    OtherCaller {
        /// `"run_id"`, `"tenant_id"` or `"actor_id"`.
        field: &'static str,
    },
    /// A waiting call's tool is gone or no longer has the spec it had when the call was made.
    ToolChanged {
        /// The call.
        call_id: String,
        /// Its tool.
        tool_name: String,
    },
    /// Decisions name calls that do not wait in this state.
    NotWaiting {
        /// Those calls.
        call_ids: Vec<String>,
    },
    /// A decision that does not fit what its call waits for (an approval for a client tool's
    /// result, a supplied result for an approval).
    InvalidDecision {
        /// The call.
        call_id: String,
        /// What it waits for.
        waits_for: WaitsFor,
    },
    /// These calls were decided by an earlier resume of this run already.
    AlreadyResumed {
        /// Those calls.
        call_ids: Vec<String>,
    },
    /// The state's conversation is not a turn waiting on its calls.
    Inconsistent,
}

impl fmt::Display for ResumeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::NoKey => f.write_str("the agent has no state key to check the run state with"),
            Self::NoStore => f.write_str(
                "the agent has no run store to spend decided calls in (`Agent::with_store`)",
            ),
            Self::NoDecisions => f.write_str("the resume decides no call"),
            Self::Conversation(error) => write!(f, "the run state's conversation: {error}"),
            Self::Forged => f.write_str(
                "the run state's seal does not match: it was changed or sealed with another key",
            ),
            Self::Unsealed => f.write_str(
                "the run state has no seal: it was made by an agent without a state key",
            ),
            Self::UnknownKey { key_id } => write!(
                f,
                "the run state was sealed with the key `{key_id}`, which this agent does not hold"
            ),
            Self::Store(error) => write!(f, "the run store: {error}"),
            Self::Undecided { call_ids } => write!(
                f,
                "calls spent by the resume taken over need a decision: {}",
                call_ids.join(", ")
            ),
            Self::UnsupportedFormat { format } => {
                write!(f, "the run state has format {format}; this version reads format {FORMAT}")
            }
            Self::OtherCaller { field } => {
                write!(f, "the run state belongs to another caller (its `{field}` differs)")
            }
            Self::ToolChanged { call_id, tool_name } => write!(
                f,
                "call `{call_id}`: the tool `{tool_name}` is gone or changed since the call was made"
            ),
            Self::NotWaiting { call_ids } => {
                write!(f, "decisions for calls that do not wait: {}", call_ids.join(", "))
            }
            Self::InvalidDecision { call_id, waits_for } => {
                let needs = match waits_for {
                    WaitsFor::Approval => "approve, edit or deny",
                    WaitsFor::Client => "supply or deny",
                    WaitsFor::Elicitation => "answer or deny",
                };
                write!(f, "call `{call_id}` takes {needs}")
            }
            Self::AlreadyResumed { call_ids } => {
                write!(f, "these calls were decided already: {}", call_ids.join(", "))
            }
            Self::Inconsistent => f.write_str("the run state is not a turn waiting on its calls"),
        }
    }
}

impl std::error::Error for ResumeError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Self::Store(error) => Some(error),
            _ => None,
        }
    }
}
