use std::fmt;

use async_trait::async_trait;

use super::Message;
use crate::adapters::{Decoded, StreamEvent, ToolChoice};
use crate::spec::ToolSpec;

/// What a model is asked: the conversation so far, the tools it may call and how.
#[derive(Debug, Clone, Copy)]
pub struct ModelRequest<'a> {
    /// The conversation, oldest first.
    pub messages: &'a [Message],
    /// The tools the model may be shown (already filtered by policy).
    pub tools: &'a [&'a ToolSpec],
    /// Whether and which tools it must call.
    pub choice: &'a ToolChoice,
}

/// Tokens a model turn used, as the provider reported them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
pub struct Usage {
    /// Tokens read.
    pub input_tokens: u64,
    /// Tokens written.
    pub output_tokens: u64,
}

/// One finished model turn: the decoded response and its usage.
#[derive(Debug, Clone)]
pub struct ModelTurn {
    /// The assembled response: text, calls in model order, finish reason.
    pub decoded: Decoded,
    /// Token usage, when the provider reports it.
    pub usage: Option<Usage>,
}

/// A model that could not answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ModelError {
    kind: ModelErrorKind,
    message: String,
}

/// The kind of a [`ModelError`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum ModelErrorKind {
    /// The provider answered with an error status (after any retries).
    Status(u16),
    /// The connection failed or dropped.
    Transport,
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
