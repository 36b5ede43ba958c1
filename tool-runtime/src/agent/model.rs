use std::fmt;

use async_trait::async_trait;
use serde::Serialize;

use crate::adapters::{Decoded, FinishReason, ModelRequest, Problem, ProviderError, StreamEvent};

/// One finished model turn: the decoded response, with its usage in [`Decoded::usage`] (the
/// one place the agent reads it from).
///
/// ```
/// use tool_runtime::adapters::{Adapter, Anthropic, Usage};
/// use tool_runtime::agent::ModelTurn;
///
/// let decoded = Anthropic::new()
///     .decode(br#"{"content": [{"type": "text", "text": "Hi."}], "stop_reason": "end_turn",
///         "usage": {"input_tokens": 9, "output_tokens": 2}}"#)
///     .unwrap();
/// let turn = ModelTurn::from(decoded);
/// assert_eq!(turn.decoded.usage, Some(Usage { input_tokens: 9, output_tokens: 2 }));
/// ```
#[derive(Debug, Clone)]
pub struct ModelTurn {
    /// The assembled response: text, calls in model order, finish reason, and token usage
    /// when the provider reports it.
    pub decoded: Decoded,
}

impl From<Decoded> for ModelTurn {
    fn from(decoded: Decoded) -> Self {
        Self { decoded }
    }
}

/// A model that could not answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ModelError {
    kind: ModelErrorKind,
    message: String,
}

/// The kind of a [`ModelError`]. Serialised in snake case: `"transport"`, `{"status": 503}`.
///
/// ```
/// use tool_runtime::agent::ModelErrorKind;
///
/// assert_eq!(serde_json::to_string(&ModelErrorKind::Status(503)).unwrap(), r#"{"status":503}"#);
/// assert_eq!(serde_json::to_string(&ModelErrorKind::ScriptExhausted).unwrap(), r#""script_exhausted""#);
/// assert_eq!(serde_json::to_string(&ModelErrorKind::Provider).unwrap(), r#""provider""#);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum ModelErrorKind {
    /// The provider answered with an error status (after any retries).
    Status(u16),
    /// The connection failed or dropped, or the response ended before the provider finished
    /// its turn without saying why.
    Transport,
    /// The provider reported an error inside a response it had begun (Anthropic's `error`
    /// event, an OpenAI `error` object or `response.failed`, a Gemini or Ollama `error`
    /// chunk): the message carries its error type and text (`overloaded_error: Overloaded`),
    /// cut and with credentials scrubbed as in error bodies. Nothing of the turn is kept.
    Provider,
    /// The request took longer than its timeout.
    Timeout,
    /// The request could not be built (a tool the provider cannot take, a bad setting).
    Request,
    /// The response could not be decoded.
    Decode,
    /// A scripted model has no turn left.
    ScriptExhausted,
}

impl ModelError {
    /// An error of `kind` with a message that says what happened (what the provider answered,
    /// never the request's credentials).
    pub fn new(kind: ModelErrorKind, message: impl Into<String>) -> Self {
        Self { kind, message: message.into() }
    }

    /// The kind.
    #[must_use]
    pub fn kind(&self) -> ModelErrorKind {
        self.kind
    }

    /// What happened.
    #[must_use]
    pub fn message(&self) -> &str {
        &self.message
    }
}

/// Characters of a provider's own message kept in a [`ModelError`].
pub(crate) const PROVIDER_MESSAGE_LIMIT: usize = 500;

/// `text` cut to [`PROVIDER_MESSAGE_LIMIT`] characters, `...` marking a cut.
pub(crate) fn cut_message(mut text: String) -> String {
    if let Some((cut, _)) = text.char_indices().nth(PROVIDER_MESSAGE_LIMIT) {
        text.truncate(cut);
        text.push_str("...");
    }
    text
}

/// The provider's error a turn ended with (an error event inside its response), as
/// `type: message`; `None` for a turn that did not end with [`FinishReason::Error`] or that
/// carries no such error. Not cut, not scrubbed: the caller does both, in that order.
pub(crate) fn provider_error(decoded: &Decoded) -> Option<String> {
    if decoded.finish.reason != FinishReason::Error {
        return None;
    }
    decoded.problems.iter().find_map(|problem| match problem {
        Problem::Provider(error) => Some(provider_error_text(error)),
        _ => None,
    })
}

/// A provider's error as `type: message`, or its message alone when it gave no type.
pub(crate) fn provider_error_text(error: &ProviderError) -> String {
    match error {
        ProviderError { kind: Some(kind), message } => format!("{kind}: {message}"),
        ProviderError { kind: None, message } => message.clone(),
    }
}

/// Why a turn that the provider broke off, without calls to answer, ends a run: the
/// provider's own error when it sent one ([`ModelErrorKind::Provider`]), else a cut response
/// ([`ModelErrorKind::Transport`]).
pub(crate) fn broken_turn(decoded: &Decoded) -> ModelError {
    match provider_error(decoded) {
        Some(said) => ModelError::new(
            ModelErrorKind::Provider,
            cut_message(format!("the model provider reported an error in its response: {said}")),
        ),
        None => ModelError::new(
            ModelErrorKind::Transport,
            format!(
                "the model's response ended early ({}) without an answer",
                decoded.finish.reason
            ),
        ),
    }
}

impl fmt::Display for ModelError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.kind {
            ModelErrorKind::Status(status) => {
                write!(f, "the model provider answered {status}: {}", self.message)
            }
            _ => f.write_str(&self.message),
        }
    }
}

impl std::error::Error for ModelError {}

/// A chat model that can call tools: given the conversation, the tools and a tool choice, it
/// streams [`StreamEvent`]s to `on_event` as they arrive and ends with the assembled turn.
///
/// The agent loop reads calls only from the returned [`ModelTurn`], never from the streamed
/// events, which are for display.
///
/// # Writing one
///
/// A model client is transport only; an [`Adapter`](crate::adapters::Adapter) does every
/// wire format. Encode the whole request with
/// [`encode_body`](crate::adapters::Adapter::encode_body), send it, and decode what comes back
/// with the request's tools: [`stream_for`](crate::adapters::Adapter::stream_for) (feed it the
/// bytes as they arrive, forward its events) or
/// [`decode_for`](crate::adapters::Adapter::decode_for). Decoding with the tools undoes what
/// lowering changed (a strict-mode `null` for a property the model left out), in the streamed
/// events too, and it is the one place that is undone: the [`Agent`](crate::agent::Agent)
/// runs the calls of the turn you return as they are. A model that decodes with the plain
/// [`stream`](crate::adapters::Adapter::stream) or [`decode`](crate::adapters::Adapter::decode)
/// hands such a `null` to the runner, whose validation refuses it; a model with a decoder of
/// its own raises its turn with [`Decoded::raise`] against `request.tools`. Usage is in
/// [`Decoded::usage`].
///
/// ```
/// use async_trait::async_trait;
/// use tool_runtime::adapters::{Adapter, OpenAiChat, RequestOptions, StreamEvent, openai_sse};
/// use tool_runtime::agent::{ChatModel, ModelError, ModelErrorKind, ModelRequest, ModelTurn};
///
/// /// A "transport" that always answers with the same recorded stream.
/// #[derive(Debug)]
/// struct Canned { adapter: OpenAiChat, reply: Vec<u8> }
///
/// #[async_trait]
/// impl ChatModel for Canned {
///     async fn respond(
///         &self,
///         request: ModelRequest<'_>,
///         on_event: &(dyn Fn(StreamEvent) + Send + Sync),
///     ) -> Result<ModelTurn, ModelError> {
///         let options = RequestOptions::new("gpt-4o-mini");
///         let _body = self.adapter.encode_body(&request, &options).map_err(|error| {
///             ModelError::new(ModelErrorKind::Request, error.to_string())
///         })?;
///         // ... send `_body`, then feed the response's bytes as they arrive:
///         let mut session = self.adapter.stream_for(request.tools);
///         for piece in self.reply.chunks(16) {
///             session.feed(piece).into_iter().for_each(on_event);
///         }
///         session.close().into_iter().for_each(on_event);
///         Ok(ModelTurn::from(session.finish()))
///     }
/// }
///
/// let model = Canned { adapter: OpenAiChat::new(), reply: openai_sse::text("Hello.") };
/// # let _ = model;
/// ```
#[async_trait]
pub trait ChatModel: Send + Sync + fmt::Debug {
    /// Produces one turn.
    ///
    /// # Errors
    ///
    /// [`ModelError`] when no turn could be produced.
    async fn respond(
        &self,
        request: ModelRequest<'_>,
        on_event: &(dyn Fn(StreamEvent) + Send + Sync),
    ) -> Result<ModelTurn, ModelError>;
}
