//! Prompt templates a server offers its MCP clients (`prompts/list`, `prompts/get`): messages
//! made from the client's arguments, after asking the client's user or model what they need
//! (within the request for older clients, in input-required rounds for 2026-07-28).

use std::collections::BTreeMap;
use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use rmcp::ErrorData;
use rmcp::model::{
    GetPromptRequestParams, GetPromptResponse, GetPromptResult, InputRequiredResult, Prompt,
    PromptArgument, PromptMessage,
};
use rmcp::service::{RequestContext, RoleServer};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::asks::{Answer, Ask, Asking, Offered, input_requests};
use super::interact::ClientInteractor;
use super::rounds::{self, Rounds, now_ms};
use crate::digest::parts_hash;
use crate::runner::CatchUnwind;
use crate::runtime::interact::Asker;
use crate::runtime::{Interact, ToolError, ToolInvocationContext};
use crate::schema::Shown;

/// What a prompt's handler returns: its messages, or why there are none.
pub type PromptFuture = Pin<Box<dyn Future<Output = Result<Vec<PromptMessage>, ToolError>> + Send>>;

type Handler = Arc<dyn Fn(PromptRequest) -> PromptFuture + Send + Sync>;

/// A prompt template served over MCP ([`McpServerBuilder::prompt`](super::McpServerBuilder::prompt)):
/// its name, what it is for, the arguments it takes (strings, as MCP has them) and the handler
/// that makes its messages of them. The handler may ask first through
/// [`PromptRequest::interact`]: the client's user (a question), its model (a completion) or its
/// roots, as a tool with [`Interact`] does; it runs again from its start with the answers.
///
/// ```
/// use tool_runtime::mcp::McpPrompt;
/// use tool_runtime::mcp::rmcp::model::{PromptMessage, Role};
///
/// let review = McpPrompt::new("code_review", "Review a change for bugs.", |request| async move {
///     let language = request.arguments.get("language").cloned().unwrap_or_default();
///     Ok(vec![PromptMessage::new_text(Role::User, format!("Review this {language} change."))])
/// })
/// .argument("language", "The language of the change.", true);
/// assert_eq!(review.name(), "code_review");
/// ```
#[derive(Clone)]
pub struct McpPrompt {
    prompt: Prompt,
    handler: Handler,
}

impl fmt::Debug for McpPrompt {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("McpPrompt").field(&self.prompt.name).finish()
    }
}

/// What a prompt's handler is given.
#[derive(Debug)]
#[non_exhaustive]
pub struct PromptRequest {
    /// The client's arguments, by name.
    pub arguments: BTreeMap<String, String>,
    /// Who answers what the handler asks: the client of the request.
    pub interact: Interact,
    /// Who asks, as their calls would run.
    pub ctx: ToolInvocationContext,
}

impl McpPrompt {
    /// A prompt named `name` (what clients ask for), described by `description`, whose
    /// messages `handler` makes.
    pub fn new<F, Fut>(name: impl Into<String>, description: impl Into<String>, handler: F) -> Self
    where
        F: Fn(PromptRequest) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<Vec<PromptMessage>, ToolError>> + Send + 'static,
    {
        let handler: Handler = Arc::new(move |request| Box::pin(handler(request)));
        Self { prompt: Prompt::new(name, Some(description.into()), None), handler }
    }

    /// Adds an argument the prompt takes: its name, what it is, whether it must be given.
    #[must_use]
    pub fn argument(
        mut self,
        name: impl Into<String>,
        description: impl Into<String>,
        required: bool,
    ) -> Self {
        let argument =
            PromptArgument::new(name).with_description(description).with_required(required);
        self.prompt.arguments.get_or_insert_with(Vec::new).push(argument);
        self
    }

    /// Its name.
    #[must_use]
    pub fn name(&self) -> &str {
        &self.prompt.name
    }

    /// How `prompts/list` shows it.
    pub(super) fn listed(&self) -> &Prompt {
        &self.prompt
    }

    /// The client's `arguments`, checked: strings only, each required one given.
    fn arguments(
        &self,
        arguments: Option<&rmcp::model::JsonObject>,
    ) -> Result<BTreeMap<String, String>, ErrorData> {
        let mut taken = BTreeMap::new();
        for (name, value) in arguments.into_iter().flatten() {
            let Value::String(value) = value else {
                return Err(ErrorData::invalid_params(
                    format!("the argument `{}` of a prompt must be a string", Shown(name)),
                    None,
                ));
            };
            taken.insert(name.clone(), value.clone());
        }
        let missing = self.prompt.arguments.iter().flatten().find(|argument| {
            argument.required == Some(true) && !taken.contains_key(&argument.name)
        });
        if let Some(missing) = missing {
            return Err(ErrorData::invalid_params(
                format!(
                    "the prompt `{}` needs the argument `{}`",
                    Shown(self.name()),
                    missing.name
                ),
                None,
            ));
        }
        Ok(taken)
    }
}

/// What a prompt's `requestState` carries: the answers so far and what the round asks, bound to
/// the caller, the prompt and its arguments.
#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct PromptState {
    tenant: String,
    actor: String,
    prompt: String,
    /// A hash of the arguments the client sent.
    arguments: String,
    asks: Vec<Ask>,
    given: Vec<Answer>,
    expires_at_ms: i64,
}

fn arguments_hash(arguments: &BTreeMap<String, String>) -> String {
    let parts: Vec<&str> =
        arguments.iter().flat_map(|(name, value)| [name.as_str(), value.as_str()]).collect();
    crate::digest::hex(&parts_hash(parts))
}

/// `prompts/get`: the messages of `prompt` for the client of `context`, in `ctx`, or what they
/// wait for.
pub(super) async fn get_prompt(
    prompt: &McpPrompt,
    request: GetPromptRequestParams,
    ctx: ToolInvocationContext,
    rounds: Option<&Rounds>,
    context: &RequestContext<RoleServer>,
) -> Result<GetPromptResponse, ErrorData> {
    let arguments = prompt.arguments(request.arguments.as_ref())?;
    if !rounds::speaks_2026(context) {
        // An older client is asked within the request.
        let client = Arc::new(ClientInteractor { peer: context.peer.clone() });
        let interact = Interact::unavailable().for_call(&Asker::Session(client));
        let made = made(prompt, PromptRequest { arguments, interact, ctx }).await;
        return made.map(|messages| GetPromptResult::new(messages).into()).map_err(failed);
    }
    let hash = arguments_hash(&arguments);
    let given = match (&request.request_state, rounds) {
        (None, _) => Vec::new(),
        (Some(_), None) => {
            return Err(ErrorData::invalid_params(
                "this server issues no requestState: get the prompt without it",
                None,
            ));
        }
        (Some(state), Some(rounds)) => {
            let (state, _) = rounds.unseal::<PromptState>(state).ok_or_else(|| {
                ErrorData::invalid_params("the requestState was not issued by this server or was changed: get the prompt again without it", None)
            })?;
            if state.tenant != ctx.tenant_id() || state.actor != ctx.actor_id() {
                return Err(ErrorData::invalid_params(
                    "the requestState was issued to another caller",
                    None,
                ));
            }
            if state.prompt != prompt.name() || state.arguments != hash {
                return Err(ErrorData::invalid_params(
                    "the requestState was issued for another prompt or other arguments",
                    None,
                ));
            }
            if state.expires_at_ms <= now_ms() {
                return Err(ErrorData::invalid_params(
                    "the requestState expired: get the prompt again without it",
                    None,
                ));
            }
            let responses = request.input_responses.as_ref();
            let mut given = state.given;
            let mut answered = Vec::new();
            for ask in &state.asks {
                let Some(response) = responses.and_then(|responses| responses.get(ask.key()))
                else {
                    break;
                };
                let read =
                    ask.read(response).map_err(|why| ErrorData::invalid_params(why, None))?;
                answered.push(Answer { ask: ask.clone(), given: read });
            }
            if answered.len() < state.asks.len() {
                // Not every request answered: asked again, with the same state.
                return Ok(
                    asking_for(&state.asks, request.request_state.unwrap_or_default()).into()
                );
            }
            given.extend(answered);
            given
        }
    };
    let asking = Asking::new(given.clone(), Offered::of(context));
    let interact = Interact::unavailable().for_call(&Asker::Session(asking.clone()));
    let made = made(prompt, PromptRequest { arguments, interact, ctx: ctx.clone() }).await;
    if let Some(required) = asking.missing() {
        return Err(ErrorData::missing_required_client_capability(required));
    }
    let asks = asking.asked();
    match made {
        Ok(messages) => Ok(GetPromptResult::new(messages).into()),
        Err(error) if asks.is_empty() => Err(failed(error)),
        Err(_) => {
            let Some(rounds) = rounds else {
                return Err(ErrorData::internal_error(
                    "the prompt asks its client first, and this server keeps no state to ask with (give it a store)",
                    None,
                ));
            };
            let ttl = i64::try_from(rounds.ttl_ms).unwrap_or(i64::MAX);
            let state = PromptState {
                tenant: ctx.tenant_id().to_owned(),
                actor: ctx.actor_id().to_owned(),
                prompt: prompt.name().to_owned(),
                arguments: hash,
                asks: asks.clone(),
                given,
                expires_at_ms: now_ms().saturating_add(ttl),
            };
            let (sealed, _) = rounds.seal(&state);
            Ok(asking_for(&asks, sealed).into())
        }
    }
}

/// What `prompt`'s handler makes of `request`; a handler that panics fails.
async fn made(prompt: &McpPrompt, request: PromptRequest) -> Result<Vec<PromptMessage>, ToolError> {
    match CatchUnwind((prompt.handler)(request)).await {
        Ok(made) => made,
        Err(()) => Err(ToolError::new("the prompt failed unexpectedly (it panicked)")),
    }
}

/// The input-required result asking `asks`, with `state`.
fn asking_for(asks: &[Ask], state: String) -> InputRequiredResult {
    InputRequiredResult::new(Some(input_requests(asks)), Some(state))
}

/// A handler's failure, as the client sees it: its safe message.
fn failed(error: ToolError) -> ErrorData {
    ErrorData::internal_error(format!("the prompt failed: {}", Shown(&error.to_string())), None)
}
