//! What a served call asks its MCP 2026-07-28 client in an input-required round (SEP-2322):
//! its user's answer (`elicitation/create`), its model's completion (`sampling/createMessage`)
//! or its roots (`roots/list`), as many at once as the call asked before it stopped. The call
//! runs again from its start with the answers, given back in the order it asked.
//!
//! rmcp marks sampling deprecated (SEP-2577 plans to replace it); 2026-07-28 still defines it
//! as an input request.
#![allow(deprecated)]

use std::collections::BTreeSet;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use rmcp::model::{
    ClientCapabilities, CreateMessageRequest, CreateMessageResult, ElicitRequest as McpElicit,
    ElicitResult, InputRequest, InputRequests, ListRootsRequest, ListRootsResult,
};
use rmcp::service::{RequestContext, RoleServer};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::wire::{answer_of, completion_of, elicit_params, roots_of, sampling_params, undeclared};
use crate::runtime::{
    Completion, ElicitRequest, ElicitResponse, InteractError, InteractFuture, InteractKind,
    Interactor, Root, SampleRequest,
};

/// The key of a tool's question in `inputRequests` unless it names one
/// ([`ElicitRequest::key`]).
const QUESTION: &str = "question";

/// The key of a request for a completion.
const COMPLETION: &str = "completion";

/// The key of a request for the client's roots.
const ROOTS: &str = "roots";

/// One request of a call to its client, under its key in `inputRequests`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "method", rename_all = "snake_case", deny_unknown_fields)]
pub(super) enum Ask {
    /// A question for the client's user.
    Elicit { key: String, question: ElicitRequest },
    /// A completion from the client's model.
    Sample { key: String, request: SampleRequest },
    /// The roots the client shares.
    Roots { key: String },
}

impl Ask {
    /// Its key in `inputRequests` and `inputResponses`.
    pub(super) fn key(&self) -> &str {
        match self {
            Self::Elicit { key, .. } | Self::Sample { key, .. } | Self::Roots { key } => key,
        }
    }

    fn kind(&self) -> InteractKind {
        match self {
            Self::Elicit { .. } => InteractKind::Elicit,
            Self::Sample { .. } => InteractKind::Sample,
            Self::Roots { .. } => InteractKind::Roots,
        }
    }

    /// The request as an input-required result carries it; `None` for a question whose schema
    /// a form cannot take (refused when the tool asked it: see `Interact::elicit`).
    pub(super) fn input_request(&self) -> Option<InputRequest> {
        Some(match self {
            Self::Elicit { question, .. } => {
                InputRequest::Elicitation(McpElicit::new(elicit_params(question.clone()).ok()?))
            }
            Self::Sample { request, .. } => InputRequest::CreateMessage(CreateMessageRequest::new(
                sampling_params(request).ok()?,
            )),
            Self::Roots { .. } => InputRequest::ListRoots(ListRootsRequest::default()),
        })
    }

    /// The client's `response` to it (an `ElicitResult`, a `CreateMessageResult`, a
    /// `ListRootsResult`), or why it is not one.
    pub(super) fn read(&self, response: &Value) -> Result<Given, String> {
        let key = self.key();
        let bad = |what: &str, error: serde_json::Error| {
            format!("the input response `{key}` is not {what}: {error}")
        };
        Ok(match self {
            Self::Elicit { .. } => {
                let result: ElicitResult = serde_json::from_value(response.clone())
                    .map_err(|error| bad("an elicitation result", error))?;
                Given::Elicit(answer_of(result))
            }
            Self::Sample { .. } => {
                let result: CreateMessageResult = serde_json::from_value(response.clone())
                    .map_err(|error| bad("a sampling result", error))?;
                Given::Sample(completion_of(result))
            }
            Self::Roots { .. } => {
                let result: ListRootsResult = serde_json::from_value(response.clone())
                    .map_err(|error| bad("a roots list", error))?;
                Given::Roots(roots_of(result))
            }
        })
    }
}

/// What the client gave in answer to an [`Ask`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "method", content = "answer", rename_all = "snake_case", deny_unknown_fields)]
pub(super) enum Given {
    Elicit(ElicitResponse),
    Sample(Completion),
    Roots(Vec<Root>),
}

/// A request of an earlier round and what the client gave.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct Answer {
    pub(super) ask: Ask,
    pub(super) given: Given,
}

/// What the client of a request declared it takes within rounds.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(super) struct Offered {
    elicit: bool,
    sample: bool,
    roots: bool,
}

impl Offered {
    /// What the client of `context` declared, for this request or its session.
    pub(super) fn of(context: &RequestContext<RoleServer>) -> Self {
        context.client_capabilities().map_or_else(Self::default, |caps| Self {
            elicit: caps.elicitation.is_some(),
            sample: caps.sampling.is_some(),
            roots: caps.roots.is_some(),
        })
    }

    fn has(self, kind: InteractKind) -> bool {
        match kind {
            InteractKind::Elicit => self.elicit,
            InteractKind::Sample => self.sample,
            InteractKind::Roots => self.roots,
        }
    }
}

/// The capabilities `kinds` name, as a `-32021` error lists them.
fn capabilities(kinds: &BTreeSet<InteractKind>) -> ClientCapabilities {
    let mut required = ClientCapabilities::default();
    for kind in kinds {
        match kind {
            InteractKind::Elicit => required.elicitation = Some(Default::default()),
            InteractKind::Sample => required.sampling = Some(Default::default()),
            InteractKind::Roots => required.roots = Some(Default::default()),
        }
    }
    required
}

/// The input requests of `asks`, by key, as an input-required result carries them.
pub(super) fn input_requests<'a>(asks: impl IntoIterator<Item = &'a Ask>) -> InputRequests {
    let mut requests = InputRequests::new();
    for ask in asks {
        if let Some(request) = ask.input_request() {
            requests.insert(ask.key().to_owned(), request);
        }
    }
    requests
}

/// Who answers the requests of a call for a client of 2026-07-28 (its session's interactor):
/// the answers of earlier rounds, in the order the call asked; then every request without one
/// waits (the call stops, and the next round asks them all). A request the client did not
/// declare the capability for is unavailable, and noted: the call then needs a capability the
/// client lacks (`-32021`).
#[derive(Debug)]
pub(super) struct Asking {
    state: Mutex<State>,
    offered: Offered,
}

#[derive(Debug, Default)]
struct State {
    given: Vec<Answer>,
    next: usize,
    /// The keys given out in this run, in order: a key asked twice gets `-2`, `-3`, ...
    keys: BTreeSet<String>,
    asked: Vec<Ask>,
    missing: BTreeSet<InteractKind>,
}

impl Asking {
    /// The interactor of a call that was given `given` in earlier rounds, for a client that
    /// `offered` what it declared.
    pub(super) fn new(given: Vec<Answer>, offered: Offered) -> Arc<Self> {
        Arc::new(Self { state: Mutex::new(State { given, ..State::default() }), offered })
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// What the call asked that waits for the client, in the order it asked.
    pub(super) fn asked(&self) -> Vec<Ask> {
        self.lock().asked.clone()
    }

    /// The capabilities the call needed and the client did not declare, if any.
    pub(super) fn missing(&self) -> Option<ClientCapabilities> {
        let state = self.lock();
        (!state.missing.is_empty()).then(|| capabilities(&state.missing))
    }

    /// The answer to `ask` (its key not yet unique), or why there is none yet.
    fn answer(&self, ask: impl FnOnce(String) -> Ask, base: &str) -> Result<Given, InteractError> {
        let mut state = self.lock();
        let mut key = base.to_owned();
        let mut n = 1;
        while state.keys.contains(&key) {
            n += 1;
            key = format!("{base}-{n}");
        }
        state.keys.insert(key.clone());
        let ask = ask(key);
        if let Some(answer) = state.given.get(state.next) {
            if answer.ask != ask {
                return Err(InteractError::Failed(format!(
                    "the call asked otherwise than before its answers came (`{}`): it must ask the same, in the same order, each time it runs",
                    answer.ask.key().escape_debug()
                )));
            }
            let given = answer.given.clone();
            state.next += 1;
            return Ok(given);
        }
        let kind = ask.kind();
        if !self.offered.has(kind) {
            state.missing.insert(kind);
            return Err(undeclared(kind));
        }
        // The call stops on it: the runner ends it waiting, and the round asks everything the
        // call asked. A request that is not a question waits under a stand-in question that
        // says what it waits for.
        let waits = match &ask {
            Ask::Elicit { question, .. } => question.clone(),
            Ask::Sample { key, .. } => stand_in(key, "a completion from the client's model"),
            Ask::Roots { key } => stand_in(key, "the roots the client shares"),
        };
        state.asked.push(ask);
        Err(InteractError::Waiting(Box::new(waits)))
    }
}

/// The question a request that is not one waits under, in the call's record and events.
fn stand_in(key: &str, what: &str) -> ElicitRequest {
    ElicitRequest {
        message: format!("waits for {what}"),
        schema: Map::new(),
        key: Some(key.to_owned()),
    }
}

fn unexpected(given: &Given) -> InteractError {
    let what = match given {
        Given::Elicit(_) => "an answer",
        Given::Sample(_) => "a completion",
        Given::Roots(_) => "a roots list",
    };
    InteractError::Failed(format!("the client gave {what} where the call asked otherwise"))
}

impl Interactor for Asking {
    fn elicit(&self, request: ElicitRequest) -> InteractFuture<'_, ElicitResponse> {
        let base = request.key.clone().unwrap_or_else(|| QUESTION.to_owned());
        let answer = self.answer(
            |key| Ask::Elicit {
                question: ElicitRequest { key: Some(key.clone()), ..request },
                key,
            },
            &base,
        );
        Box::pin(async move {
            match answer? {
                Given::Elicit(answer) => Ok(answer),
                other => Err(unexpected(&other)),
            }
        })
    }

    fn sample(&self, request: SampleRequest) -> InteractFuture<'_, Completion> {
        let answer = self.answer(|key| Ask::Sample { key, request }, COMPLETION);
        Box::pin(async move {
            match answer? {
                Given::Sample(completion) => Ok(completion),
                other => Err(unexpected(&other)),
            }
        })
    }

    fn roots(&self) -> InteractFuture<'_, Vec<Root>> {
        let answer = self.answer(|key| Ask::Roots { key }, ROOTS);
        Box::pin(async move {
            match answer? {
                Given::Roots(roots) => Ok(roots),
                other => Err(unexpected(&other)),
            }
        })
    }

    fn offers(&self, kind: InteractKind) -> bool {
        self.offered.has(kind)
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn question(message: &str) -> ElicitRequest {
        ElicitRequest { message: message.to_owned(), schema: Map::new(), key: None }
    }

    const ALL: Offered = Offered { elicit: true, sample: true, roots: true };

    #[tokio::test]
    async fn every_request_without_an_answer_waits_and_the_round_asks_them_all() {
        let asking = Asking::new(Vec::new(), ALL);
        let (first, second, completion, roots) = tokio::join!(
            asking.elicit(question("first?")),
            asking.elicit(question("second?")),
            asking.sample(SampleRequest::new("Say hi.")),
            asking.roots(),
        );
        assert!(matches!(first, Err(InteractError::Waiting(_))));
        assert!(matches!(second, Err(InteractError::Waiting(_))));
        assert!(matches!(completion, Err(InteractError::Waiting(_))));
        assert!(matches!(roots, Err(InteractError::Waiting(_))));
        let keys: Vec<String> = asking.asked().iter().map(|ask| ask.key().to_owned()).collect();
        assert_eq!(keys, ["question", "question-2", "completion", "roots"]);
        assert_eq!(asking.missing(), None);
    }

    #[tokio::test]
    async fn answers_come_back_in_the_order_asked_and_another_request_is_refused() {
        let asked = Asking::new(Vec::new(), ALL);
        let _ = tokio::join!(asked.elicit(question("name?")), asked.roots());
        let answers: Vec<Answer> = asked
            .asked()
            .into_iter()
            .zip([
                Given::Elicit(ElicitResponse::Accept(json!({"name": "Ann"}))),
                Given::Roots(vec![Root::new("file:///srv")]),
            ])
            .map(|(ask, given)| Answer { ask, given })
            .collect();
        let again = Asking::new(answers.clone(), ALL);
        let (name, roots) = tokio::join!(again.elicit(question("name?")), again.roots());
        assert_eq!(name, Ok(ElicitResponse::Accept(json!({"name": "Ann"}))));
        assert_eq!(roots, Ok(vec![Root::new("file:///srv")]));
        assert!(again.asked().is_empty());

        let changed = Asking::new(answers, ALL);
        let other = changed.elicit(question("age?")).await;
        assert!(matches!(other, Err(InteractError::Failed(why)) if why.contains("otherwise")));
    }

    #[tokio::test]
    async fn a_request_the_client_did_not_declare_is_unavailable_and_noted() {
        let asking = Asking::new(Vec::new(), Offered { sample: true, ..Offered::default() });
        assert!(!asking.offers(InteractKind::Elicit));
        let question = asking.elicit(question("name?")).await;
        assert!(matches!(question, Err(InteractError::Unavailable(_))));
        let completion = asking.sample(SampleRequest::new("Say hi.")).await;
        assert!(matches!(completion, Err(InteractError::Waiting(_))));
        let missing = asking.missing().unwrap();
        assert!(missing.elicitation.is_some() && missing.sampling.is_none());
    }
}
