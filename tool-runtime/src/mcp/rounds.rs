//! Calls that wait, carried over MCP 2026-07-28 input-required results (SEP-2322): a served
//! call that waits for approval or for its user's answer ends its `tools/call` with
//! `resultType: "input_required"`, an elicitation form for the client's user and a sealed
//! `requestState`. The client calls again with the answer and the state; the server reads
//! everything it needs from the state (any replica does), checks it was issued to this caller
//! for this call, spends it in the [store](crate::store) (so it is good once) and goes on from
//! there: the approved call runs, the answered question is answered, a denied call is refused.

use std::collections::BTreeMap;
use std::sync::Arc;

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use hmac::Mac as _;
use rmcp::ErrorData;
use rmcp::model::{
    ElicitRequest as McpElicit, ElicitResult, InputRequest, InputRequiredResult, InputResponses,
    ProtocolVersion,
};
use rmcp::service::{RequestContext, RoleServer};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use super::asks::{Answer, Ask, Given, input_requests};
use super::wire::{answer_of, elicit_params};
use crate::agent::deferred::StateKey;
use crate::digest::{arguments_hash, hex};
use crate::runner::ToolRunner;
use crate::runtime::{ElicitRequest, ElicitResponse, ToolInvocationContext, WaitsFor};
use crate::schema::Shown;
use crate::spec::ToolSpec;
pub(super) use crate::store::now_ms;
use crate::store::{Decided, RunKey, RunStore, StoreError, StoredRun, WaitingCall};

/// The key of the approval form in `inputRequests` and `inputResponses`.
pub(super) const APPROVAL: &str = "approval";

/// What a `requestState` starts with: the version of its layout.
const LAYOUT: &str = "trs1";

/// The longest `requestState` read (its arguments and answers included): 1 MiB.
const MAX_STATE: usize = 1 << 20;

/// Where a server keeps the calls that wait, and how it seals what clients carry between
/// rounds (see [`McpServerBuilder::store`](super::McpServerBuilder::store)).
pub(super) struct Rounds {
    pub(super) store: Arc<dyn RunStore>,
    /// The key new states are sealed with, then the retired ones still read.
    pub(super) keys: Vec<StateKey>,
    pub(super) ttl_ms: u64,
}

/// What a `requestState` carries: everything the next round needs, bound to the caller, the
/// tool, its version and the arguments the client sent.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct Pending {
    /// The tenant and actor it was issued to.
    pub(super) tenant: String,
    pub(super) actor: String,
    /// The call's id; the store keeps the call as the run `mcp:<call>` of the tenant.
    pub(super) call: String,
    /// The tool's id (never its served name) and its spec hash when the call was made.
    pub(super) tool: String,
    pub(super) spec_hash: String,
    /// The SHA-256 of the arguments as the client sent them: a next round sends the same.
    pub(super) request: String,
    /// The validated arguments the call waits with.
    pub(super) arguments: Value,
    /// What it waits for.
    pub(super) waits_for: WaitsFor,
    /// What the round asks the client, in the order the call asked; empty when the call waits
    /// for approval.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub(super) asks: Vec<Ask>,
    /// What the client gave the call's requests of earlier rounds, in the order they were
    /// asked.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub(super) given: Vec<Answer>,
    /// The answers this round has already (a task's update that answered part of it), by key.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub(super) partial: BTreeMap<String, Given>,
    /// Whether the call was approved before it asked.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub(super) approved: bool,
    /// When the state expires, in milliseconds since the Unix epoch.
    pub(super) expires_at_ms: i64,
}

impl Pending {
    /// The key a round of it spends in the store's ledger, as the agent's are: the call id for
    /// the approval, `<call id>#answer-<n>` for the round whose answers are the `n`th (and
    /// later) the call gets (a call is decided once per round).
    fn ledger_key(&self) -> String {
        if self.asks.is_empty() {
            self.call.clone()
        } else {
            format!("{}#answer-{}", self.call, self.given.len() + 1)
        }
    }

    /// The store's key of this call.
    pub(super) fn key(&self) -> RunKey {
        RunKey::new(self.tenant.clone(), format!("mcp:{}", self.call))
    }
}

/// What the client said to the round.
pub(super) enum Reply {
    /// Run the call (approved).
    Approve,
    Deny,
    /// Go on with these answers to what the round asked, in its order.
    Answers(Vec<Answer>),
}

impl Reply {
    fn label(&self) -> &'static str {
        match self {
            Self::Approve => "approved",
            Self::Deny => "denied",
            Self::Answers(_) => "answered",
        }
    }
}

/// What a round's `inputResponses` come to.
pub(super) enum Replied {
    /// They answer nothing more of it: it is asked again.
    Nothing,
    /// They answer part of it (these, by key, with what it had): the rest is asked again.
    Partial(BTreeMap<String, Given>),
    /// They decide it.
    Full(Reply),
}

/// Whether the client of this request speaks 2026-07-28 or later: it takes input-required
/// results, and is sent no request within a call.
pub(super) fn speaks_2026(context: &RequestContext<RoleServer>) -> bool {
    let version = context.protocol_version();
    version
        .as_ref()
        .is_some_and(|version| version.as_str() >= ProtocolVersion::V_2026_07_28.as_str())
}

/// Whether the client of this request declared elicitation (for this request, or for its
/// session): its user can be asked.
pub(super) fn elicits(context: &RequestContext<RoleServer>) -> bool {
    context.client_capabilities().is_some_and(|caps| caps.elicitation.is_some())
}

/// A fresh call id, unique across processes and hosts: 128 random bits.
pub(super) fn call_id() -> String {
    let mut bytes = [0u8; 16];
    // The system's random source does not fail on the platforms this crate runs on; were it
    // to, the clock and a counter still keep ids apart within a process.
    if getrandom::fill(&mut bytes).is_err() {
        let fallback =
            format!("{:?}{:?}", std::time::SystemTime::now(), std::thread::current().id());
        bytes.copy_from_slice(&crate::digest::parts_hash([fallback.as_str()])[..16]);
    }
    format!("mcp_{}", hex(&bytes))
}

fn refused(message: impl Into<String>) -> ErrorData {
    ErrorData::invalid_params(message.into(), None)
}

/// The form that asks the client's user to approve the call of `served` with `arguments` (the
/// validated ones: what will run), under the key `approval`: a yes/no (`{"approve": true}`).
pub(super) fn approval_form(served: &str, arguments: &Value) -> ElicitRequest {
    let shown = serde_json::to_string_pretty(arguments).unwrap_or_else(|_| arguments.to_string());
    let message =
        format!("Allow the call of `{}`? It runs with these arguments:\n{shown}", Shown(served));
    let schema = json!({
        "type": "object",
        "properties": {"approve": {
            "type": "boolean",
            "title": "Approve",
            "description": "true runs the call once; false refuses it"
        }},
        "required": ["approve"]
    });
    let Value::Object(schema) = schema else { unreachable!("an object literal") };
    ElicitRequest { message, schema, key: Some(APPROVAL.to_owned()) }
}

/// Whether the user's `answer` to the [approval form](approval_form) approves the call: an
/// accept with `{"approve": true}`. `None` for an accept that says neither yes nor no.
pub(super) fn approves(answer: &ElicitResponse) -> Option<bool> {
    match answer {
        ElicitResponse::Accept(content) => content.get("approve").and_then(Value::as_bool),
        ElicitResponse::Decline | ElicitResponse::Cancel => Some(false),
    }
}

impl Rounds {
    /// The pending call a waiting call becomes, for the caller of `ctx`.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn pending(
        &self,
        ctx: &ToolInvocationContext,
        call: &str,
        spec: &ToolSpec,
        request: &Value,
        arguments: Value,
        waits_for: WaitsFor,
        asks: Vec<Ask>,
        given: Vec<Answer>,
        approved: bool,
    ) -> Pending {
        let ttl = i64::try_from(self.ttl_ms).unwrap_or(i64::MAX);
        Pending {
            tenant: ctx.tenant_id().to_owned(),
            actor: ctx.actor_id().to_owned(),
            call: call.to_owned(),
            tool: spec.name().to_owned(),
            spec_hash: spec.spec_hash().to_owned(),
            request: arguments_hash(request),
            arguments,
            waits_for,
            asks,
            given,
            partial: BTreeMap::new(),
            approved,
            expires_at_ms: now_ms().saturating_add(ttl),
        }
    }

    /// `value` sealed: `trs1.<base64url JSON>.<key id>.<HMAC-SHA256 hex>`, and the HMAC (the
    /// revision the store keeps it under).
    pub(super) fn seal<T: Serialize>(&self, value: &T) -> (String, String) {
        // What is sealed is strings and JSON values under string keys: it always serialises.
        let json = serde_json::to_vec(value).unwrap_or_default();
        let key = &self.keys[0];
        let mac = hex(&key.mac(&json).finalize().into_bytes());
        (format!("{LAYOUT}.{}.{}.{mac}", URL_SAFE_NO_PAD.encode(&json), key.id()), mac)
    }

    /// What `sealed` holds, when this server's key (or a retired one) sealed it, and its HMAC;
    /// `None` for anything else. The HMAC is checked before the JSON is read.
    pub(super) fn unseal<T: DeserializeOwned>(&self, sealed: &str) -> Option<(T, String)> {
        if sealed.len() > MAX_STATE {
            return None;
        }
        let mut fields = sealed.split('.');
        let (Some(LAYOUT), Some(body), Some(key_id), Some(mac), None) =
            (fields.next(), fields.next(), fields.next(), fields.next(), fields.next())
        else {
            return None;
        };
        let json = URL_SAFE_NO_PAD.decode(body).ok()?;
        let key = self.keys.iter().find(|key| key.id() == key_id)?;
        let tag = crate::agent::deferred::unhex(mac)?;
        key.mac(&json).verify_slice(&tag).ok()?;
        Some((serde_json::from_slice(&json).ok()?, mac.to_owned()))
    }

    /// The pending call `state` carries, checked: sealed by this server's key (or a retired
    /// one), not expired, issued to the caller of `ctx` for the tool of `spec` as it is now and
    /// for the arguments `request`. Also the state's revision.
    pub(super) fn open(
        &self,
        state: &str,
        ctx: &ToolInvocationContext,
        spec: &ToolSpec,
        request: &Value,
    ) -> Result<(Pending, String), ErrorData> {
        let forged = || {
            refused(
                "the requestState was not issued by this server or was changed: call the tool again without it",
            )
        };
        let (pending, mac): (Pending, String) = self.unseal(state).ok_or_else(forged)?;
        if pending.tenant != ctx.tenant_id() || pending.actor != ctx.actor_id() {
            return Err(refused("the requestState was issued to another caller"));
        }
        if pending.tool != spec.name() || pending.request != arguments_hash(request) {
            return Err(refused(
                "the requestState was issued for another tool or other arguments: send the call it came with",
            ));
        }
        if pending.expires_at_ms <= now_ms() {
            return Err(refused("the requestState expired: call the tool again without it"));
        }
        if pending.spec_hash != spec.spec_hash() {
            return Err(refused(format!(
                "the tool `{}` changed since the requestState was issued: call it again without it",
                Shown(spec.name())
            )));
        }
        Ok((pending, mac))
    }

    /// What `responses` say to the round of `pending`: the approval decided, or answers to
    /// its requests (all of them, or some: kept for the next round), or nothing it asked.
    /// Keys it did not ask for are ignored; a response that is not of the kind asked is
    /// refused.
    pub(super) fn reply(
        pending: &Pending,
        responses: Option<&InputResponses>,
    ) -> Result<Replied, ErrorData> {
        if pending.asks.is_empty() {
            let Some(response) = responses.and_then(|responses| responses.get(APPROVAL)) else {
                return Ok(Replied::Nothing);
            };
            let result: ElicitResult =
                serde_json::from_value(response.clone()).map_err(|error| {
                    refused(format!(
                        "the input response `approval` is not an elicitation result: {error}"
                    ))
                })?;
            return match approves(&answer_of(result)) {
                Some(true) => Ok(Replied::Full(Reply::Approve)),
                Some(false) => Ok(Replied::Full(Reply::Deny)),
                None => Err(refused(
                    "the input response `approval` must accept with `{\"approve\": true}` or `{\"approve\": false}`",
                )),
            };
        }
        let mut got = pending.partial.clone();
        for ask in &pending.asks {
            if let Some(response) = responses.and_then(|responses| responses.get(ask.key())) {
                got.insert(ask.key().to_owned(), ask.read(response).map_err(refused)?);
            }
        }
        if pending.asks.iter().all(|ask| got.contains_key(ask.key())) {
            let answers = pending.asks.iter().map(|ask| Answer {
                given: got.remove(ask.key()).unwrap_or(Given::Elicit(ElicitResponse::Cancel)),
                ask: ask.clone(),
            });
            return Ok(Replied::Full(Reply::Answers(answers.collect())));
        }
        Ok(if got == pending.partial { Replied::Nothing } else { Replied::Partial(got) })
    }

    /// Spends the call of `pending` (state `revision`), kept at `key` (`pending.key()`, or a
    /// task's), with `reply`: of two rounds sending the same state, one goes on.
    pub(super) async fn spend(
        &self,
        key: &RunKey,
        pending: &Pending,
        revision: &str,
        reply: &Reply,
    ) -> Result<(), ErrorData> {
        let decided = [Decided::new(pending.ledger_key(), reply.label())];
        match self.store.spend(key, revision, &decided, now_ms()).await {
            Ok(()) => Ok(()),
            Err(
                StoreError::AlreadySpent { .. }
                | StoreError::NotFound { .. }
                | StoreError::Moved { .. },
            ) => Err(refused("the requestState was used already: call the tool again without it")),
            Err(StoreError::Expired { .. }) => {
                Err(refused("the requestState expired: call the tool again without it"))
            }
            Err(StoreError::Busy { .. }) => {
                Err(refused("another round of this call is running: wait for it to end"))
            }
            Err(error) => Err(ErrorData::internal_error(
                format!("the store refused the round: {}", Shown(&error.to_string())),
                None,
            )),
        }
    }

    /// Checks that `revision` is still the state the store keeps for the call of `pending`: a
    /// state answered in part is replaced by a new one, and must not be answered in part again
    /// once it was (or once its call ended).
    pub(super) async fn current(&self, pending: &Pending, revision: &str) -> Result<(), ErrorData> {
        match self.store.load(&pending.key()).await {
            Ok(Some(run)) if run.revision == revision => Ok(()),
            Ok(_) => {
                Err(refused("the requestState was used already: call the tool again without it"))
            }
            Err(error) => Err(ErrorData::internal_error(
                format!("the store could not be read: {}", Shown(&error.to_string())),
                None,
            )),
        }
    }

    /// Keeps `pending` in the store (replacing the state a round of it spent) and asks the
    /// client: the input-required result of `served` (the name the client called).
    pub(super) async fn ask(
        &self,
        pending: &Pending,
        served: &str,
    ) -> Result<InputRequiredResult, ErrorData> {
        let (state, revision) = self.seal(pending);
        let waiting = vec![WaitingCall {
            call_id: pending.call.clone(),
            tool_name: pending.tool.clone(),
            waits_for: pending.waits_for,
        }];
        let saved_at = now_ms();
        let ttl = u64::try_from(pending.expires_at_ms.saturating_sub(saved_at)).unwrap_or(0);
        let run = StoredRun::new(
            pending.key(),
            pending.actor.clone(),
            waiting,
            state.clone().into_bytes(),
            revision,
            saved_at,
            ttl,
        );
        self.store.save(run).await.map_err(|error| {
            ErrorData::internal_error(
                format!("the call waits and could not be stored: {}", Shown(&error.to_string())),
                None,
            )
        })?;
        Ok(Self::asking(pending, served, state))
    }

    /// The input-required result asking what `pending` waits for and does not have yet,
    /// with `state`.
    pub(super) fn asking(pending: &Pending, served: &str, state: String) -> InputRequiredResult {
        let unanswered = pending.asks.iter().filter(|ask| !pending.partial.contains_key(ask.key()));
        let mut requests = input_requests(unanswered);
        if pending.asks.is_empty() {
            // The approval form is one of flat primitives: it always makes a form.
            if let Ok(params) = elicit_params(approval_form(served, &pending.arguments)) {
                requests
                    .insert(APPROVAL.to_owned(), InputRequest::Elicitation(McpElicit::new(params)));
            }
        }
        InputRequiredResult::new(Some(requests), Some(state))
    }

    /// Ends the call of `pending` in the store: it ran, or was refused.
    pub(super) async fn end(&self, pending: &Pending) {
        if let Err(error) = self.store.end_run(&pending.key(), now_ms()).await {
            tracing::warn!(%error, call = %pending.call, "a served call ended and the store could not record it");
        }
    }
}

/// How a decided call goes on (see `Host::going_on`).
pub(super) enum GoingOn {
    /// Refused: it ends `approval_denied`, in this context.
    Refused(ToolInvocationContext),
    /// It runs on `runner` in `ctx`, with `answers`; `approved` when it was approved.
    Runs { runner: ToolRunner, ctx: ToolInvocationContext, answers: Vec<Answer>, approved: bool },
}
