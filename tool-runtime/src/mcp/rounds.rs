//! Calls that wait, carried over MCP 2026-07-28 input-required results (SEP-2322): a served
//! call that waits for approval or for its user's answer ends its `tools/call` with
//! `resultType: "input_required"`, an elicitation form for the client's user and a sealed
//! `requestState`. The client calls again with the answer and the state; the server reads
//! everything it needs from the state (any replica does), checks it was issued to this caller
//! for this call, spends it in the [store](crate::store) (so it is good once) and goes on from
//! there: the approved call runs, the answered question is answered, a denied call is refused.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use hmac::Mac as _;
use rmcp::ErrorData;
use rmcp::model::{
    ClientCapabilities, ElicitRequest as McpElicit, ElicitRequestParams, ElicitResult,
    ElicitationAction, ElicitationSchema, InputRequest, InputRequests, InputRequiredResult,
    InputResponses, ProtocolVersion,
};
use rmcp::service::{RequestContext, RoleServer};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};

use crate::agent::deferred::StateKey;
use crate::agent::parking::Parking;
use crate::digest::{arguments_hash, hex};
use crate::runner::ToolRunner;
use crate::runtime::{
    Answered, Completion, ElicitRequest, ElicitResponse, InteractError, InteractFuture, Interactor,
    SampleRequest, ToolInvocationContext, WaitsFor,
};
use crate::schema::Shown;
use crate::spec::ToolSpec;
pub(super) use crate::store::now_ms;
use crate::store::{Decided, RunKey, RunStore, StoreError, StoredRun, WaitingCall};

/// The key of the approval form in `inputRequests` and `inputResponses`.
pub(super) const APPROVAL: &str = "approval";

/// The key of a tool's question in `inputRequests` and `inputResponses`, unless it names one
/// ([`ElicitRequest::key`]).
pub(super) const QUESTION: &str = "question";

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
    /// The question it waits on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(super) question: Option<ElicitRequest>,
    /// The questions it asked before, with their answers, in order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub(super) answered: Vec<Answered>,
    /// Whether the call was approved before it asked its question.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub(super) approved: bool,
    /// When the state expires, in milliseconds since the Unix epoch.
    pub(super) expires_at_ms: i64,
}

impl Pending {
    /// The key a round of it spends in the store's ledger, as the agent's are: the call id for
    /// the approval, `<call id>#answer-<n>` for the answer to its `n`th question (a call is
    /// decided once per question).
    fn ledger_key(&self) -> String {
        match self.waits_for {
            WaitsFor::Elicitation => format!("{}#answer-{}", self.call, self.answered.len() + 1),
            _ => self.call.clone(),
        }
    }

    /// The key of its form in `inputRequests`: the question's own, else `question`, or
    /// `approval`.
    pub(super) fn input_key(&self) -> &str {
        match &self.question {
            Some(question) => question.key.as_deref().unwrap_or(QUESTION),
            None => APPROVAL,
        }
    }

    /// The store's key of this call.
    pub(super) fn key(&self) -> RunKey {
        RunKey::new(self.tenant.clone(), format!("mcp:{}", self.call))
    }
}

/// What the client's user said to the round's form.
pub(super) enum Reply {
    /// Run the call (approved) or go on with the answer.
    Approve,
    Deny,
    Answer(ElicitResponse),
}

impl Reply {
    fn label(&self) -> &'static str {
        match self {
            Self::Approve => "approved",
            Self::Deny => "denied",
            Self::Answer(_) => "answered",
        }
    }
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

/// Whether the client of this request declared sampling.
pub(super) fn samples(context: &RequestContext<RoleServer>) -> bool {
    context.client_capabilities().is_some_and(|caps| caps.sampling.is_some())
}

/// Who answers the questions of a call for a client of 2026-07-28 (set on the call's context
/// as its session's interactor): the answers given in earlier rounds, in order, then the first
/// question without one makes the call wait (a round asks it). No completion is asked of such
/// a client (sampling in input-required rounds is not served); a call that asks for one from a
/// client that did not declare sampling needs a capability the client lacks.
#[derive(Debug)]
pub(super) struct Asking {
    parking: Arc<Parking>,
    sampling_declared: bool,
    sampled: AtomicBool,
}

impl Asking {
    /// The interactor of a call, `answered` so far, of a client that declared sampling or not.
    pub(super) fn new(answered: Vec<Answered>, sampling_declared: bool) -> Arc<Self> {
        Arc::new(Self {
            parking: Parking::new(answered),
            sampling_declared,
            sampled: AtomicBool::new(false),
        })
    }

    /// The capabilities the call needed and the client did not declare: sampling, when the
    /// call asked for a completion.
    pub(super) fn missing(&self) -> Option<ClientCapabilities> {
        (self.sampled.load(Ordering::Relaxed) && !self.sampling_declared).then(|| {
            let mut required = ClientCapabilities::default();
            required.sampling = Some(Default::default());
            required
        })
    }
}

impl Interactor for Asking {
    fn elicit(&self, request: ElicitRequest) -> InteractFuture<'_, ElicitResponse> {
        self.parking.elicit(request)
    }

    fn sample(&self, _: SampleRequest) -> InteractFuture<'_, Completion> {
        self.sampled.store(true, Ordering::Relaxed);
        Box::pin(async {
            Err(InteractError::Unavailable(
                "this server asks MCP 2026-07-28 clients for no completions (sampling in input-required rounds is not served)"
                    .to_owned(),
            ))
        })
    }
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

/// What the client's user did, as an MCP elicitation result says it (an accept without content
/// accepts an empty object; anything but accept or decline cancels). Within a call or in an
/// input-required round alike.
pub(super) fn answer_of(result: ElicitResult) -> ElicitResponse {
    match result.action {
        ElicitationAction::Accept => {
            ElicitResponse::Accept(result.content.unwrap_or_else(|| Value::Object(Map::new())))
        }
        ElicitationAction::Decline => ElicitResponse::Decline,
        _ => ElicitResponse::Cancel,
    }
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
        question: Option<ElicitRequest>,
        answered: Vec<Answered>,
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
            question,
            answered,
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

    /// What the client's user said in `responses` to the form of `pending`; `None` when the
    /// responses do not answer it (the round is asked again). Keys it did not ask for are
    /// ignored.
    pub(super) fn reply(
        pending: &Pending,
        responses: Option<&InputResponses>,
    ) -> Result<Option<Reply>, ErrorData> {
        let key = pending.input_key();
        let Some(response) = responses.and_then(|responses| responses.get(key)) else {
            return Ok(None);
        };
        let result: ElicitResult = serde_json::from_value(response.clone()).map_err(|error| {
            refused(format!("the input response `{key}` is not an elicitation result: {error}"))
        })?;
        let answer = answer_of(result);
        if pending.question.is_some() {
            return Ok(Some(Reply::Answer(answer)));
        }
        match approves(&answer) {
            Some(true) => Ok(Some(Reply::Approve)),
            Some(false) => Ok(Some(Reply::Deny)),
            None => Err(refused(
                "the input response `approval` must accept with `{\"approve\": true}` or `{\"approve\": false}`",
            )),
        }
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

    /// The input-required result asking what `pending` waits for, with `state`.
    pub(super) fn asking(pending: &Pending, served: &str, state: String) -> InputRequiredResult {
        let key = pending.input_key().to_owned();
        let ElicitRequest { message, schema, .. } = match &pending.question {
            Some(question) => question.clone(),
            None => approval_form(served, &pending.arguments),
        };
        let mut requests = InputRequests::new();
        // A schema the client's form cannot take was refused when the tool asked (see
        // `Interact::elicit`); the approval form is one of flat primitives.
        if let Ok(requested_schema) =
            serde_json::from_value::<ElicitationSchema>(Value::Object(schema))
        {
            let params = ElicitRequestParams::FormElicitationParams {
                meta: None,
                message,
                requested_schema,
            };
            requests.insert(key, InputRequest::Elicitation(McpElicit::new(params)));
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
    Runs { runner: ToolRunner, ctx: ToolInvocationContext, answers: Vec<Answered>, approved: bool },
}
