use std::collections::VecDeque;
use std::sync::{Mutex, PoisonError};

use async_trait::async_trait;

use super::{ChatModel, Message, ModelError, ModelErrorKind, ModelRequest, ModelTurn};
use crate::adapters::{Provider, StreamEvent, ToolChoice, openai_sse};

/// One recorded model response, as the provider sent it.
#[derive(Debug, Clone)]
pub struct ScriptedTurn {
    provider: Provider,
    body: Vec<u8>,
    streamed: bool,
}

impl ScriptedTurn {
    /// A streamed response body (SSE, or NDJSON for Ollama), exactly as `provider` sends it.
    pub fn stream(provider: Provider, body: impl Into<Vec<u8>>) -> Self {
        Self { provider, body: body.into(), streamed: true }
    }

    /// A whole (non-streamed) response body.
    pub fn body(provider: Provider, body: impl Into<Vec<u8>>) -> Self {
        Self { provider, body: body.into(), streamed: false }
    }

    /// An OpenAI Chat Completions stream in which the model writes `text` and stops.
    pub fn openai_text(text: &str) -> Self {
        Self::stream(Provider::OpenAiChat, openai_sse::text(text))
    }

    /// An OpenAI Chat Completions stream in which the model calls tools: `(id, name, raw
    /// arguments)`, the arguments streamed in fragments exactly as written (they need not be
    /// valid JSON).
    pub fn openai_calls(calls: &[(&str, &str, &str)]) -> Self {
        Self::stream(Provider::OpenAiChat, openai_sse::calls(calls))
    }
}

/// What a [`ScriptedModel`] was asked, for tests and displays.
#[derive(Debug, Clone)]
pub struct SeenRequest {
    /// The conversation it was given.
    pub messages: Vec<Message>,
    /// The names of the tools it was shown.
    pub tools: Vec<String>,
    /// The tool choice.
    pub choice: ToolChoice,
    /// With tool search ([`ModelRequest::search`]), the names of the tools the model could
    /// find; empty without it.
    pub deferred: Vec<String>,
}

/// A model that replays recorded provider responses, in order, through the real decoders: the
/// default model of examples and tests, needing no network and no key.
///
/// Streams are fed to the decoder in small chunks, as a network would deliver them.
///
/// ```
/// use tool_runtime::agent::{ScriptedModel, ScriptedTurn};
///
/// let model = ScriptedModel::new([
///     ScriptedTurn::openai_calls(&[("call_1", "core__get_current_time", r#"{"timezone": "UTC"}"#)]),
///     ScriptedTurn::openai_text("It is noon in UTC."),
/// ]);
/// assert_eq!(model.remaining(), 2);
/// ```
#[derive(Debug)]
pub struct ScriptedModel {
    turns: Mutex<VecDeque<ScriptedTurn>>,
    seen: Mutex<Vec<SeenRequest>>,
    chunk: usize,
}

impl ScriptedModel {
    /// A model that will answer with `turns`, one per request.
    pub fn new(turns: impl IntoIterator<Item = ScriptedTurn>) -> Self {
        Self { turns: Mutex::new(turns.into_iter().collect()), seen: Mutex::default(), chunk: 7 }
    }

    /// Feeds streams in chunks of `bytes` (at least 1; default 7).
    #[must_use]
    pub fn chunk_size(mut self, bytes: usize) -> Self {
        self.chunk = bytes.max(1);
        self
    }

    /// How many turns are left.
    #[must_use]
    pub fn remaining(&self) -> usize {
        self.turns.lock().unwrap_or_else(PoisonError::into_inner).len()
    }

    /// Every request received so far.
    #[must_use]
    pub fn requests(&self) -> Vec<SeenRequest> {
        self.seen.lock().unwrap_or_else(PoisonError::into_inner).clone()
    }
}

#[async_trait]
impl ChatModel for ScriptedModel {
    async fn respond(
        &self,
        request: ModelRequest<'_>,
        on_event: &(dyn Fn(StreamEvent) + Send + Sync),
    ) -> Result<ModelTurn, ModelError> {
        self.seen.lock().unwrap_or_else(PoisonError::into_inner).push(SeenRequest {
            messages: request.messages.to_vec(),
            tools: request.tools.iter().map(|spec| spec.name().to_owned()).collect(),
            choice: request.choice.clone(),
            deferred: (request.search.iter())
                .flat_map(|search| search.deferred)
                .map(|spec| spec.name().to_owned())
                .collect(),
        });
        let turn = self.turns.lock().unwrap_or_else(PoisonError::into_inner).pop_front();
        let turn = turn.ok_or_else(|| {
            ModelError::new(ModelErrorKind::ScriptExhausted, "the scripted model has no turn left")
        })?;
        let adapter = turn.provider.adapter(false);
        let decoded = if turn.streamed {
            let mut session = adapter.stream_for(request.tools);
            for chunk in turn.body.chunks(self.chunk) {
                session.feed(chunk).into_iter().for_each(on_event);
            }
            session.close().into_iter().for_each(on_event);
            session.finish()
        } else {
            adapter
                .decode_for(request.tools, &turn.body)
                .map_err(|error| ModelError::new(ModelErrorKind::Decode, error.to_string()))?
        };
        Ok(ModelTurn::from(decoded))
    }
}
