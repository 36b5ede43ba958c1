//! [`ChatModelSampler`]: the agent's model answering the sampling requests of its tools.

use std::sync::Arc;

use super::{ChatModel, Message, ModelRequest};
use crate::adapters::{Decoded, ToolChoice};
use crate::runtime::{
    Completion, ElicitRequest, ElicitResponse, InteractError, InteractFuture, Interactor,
    SampleRequest, SampleRole,
};

/// An [`Interactor`] backed by a [`ChatModel`]: a tool's [`sample`](crate::runtime::Interact::sample)
/// asks that model (with no tools) and gets its text. Register it on the catalog the agent's
/// runner uses, with the agent's own model:
/// `.capability(Interact::new(ChatModelSampler::new(Arc::clone(&model))))`.
///
/// The request's `max_tokens` and `temperature` are the model client's settings, not the
/// request's: a [`ChatModel`] takes a conversation only. Its elicitation is the agent loop's
/// deferred decision: in a call the loop runs, a question makes the call wait, the run stops
/// with its state, and the user's answer comes with the resume (see
/// [`deferred`](super::deferred)). Outside the loop (a direct `exec`) a question is
/// [`InteractError::Unavailable`](crate::runtime::InteractError::Unavailable).
///
/// ```
/// use std::sync::Arc;
/// use tool_runtime::agent::{ChatModel, ChatModelSampler, ScriptedModel, ScriptedTurn};
/// use tool_runtime::runtime::{Interact, SampleRequest};
///
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// let model: Arc<dyn ChatModel> = Arc::new(ScriptedModel::new([ScriptedTurn::openai_text("Done.")]));
/// let interact = Interact::new(ChatModelSampler::new(model));
/// let completion = interact.sample(SampleRequest::new("Summarise the file.")).await.unwrap();
/// assert_eq!(completion.text, "Done.");
/// # });
/// ```
#[derive(Debug, Clone)]
pub struct ChatModelSampler {
    model: Arc<dyn ChatModel>,
}

impl ChatModelSampler {
    /// Samples from `model`.
    #[must_use]
    pub fn new(model: Arc<dyn ChatModel>) -> Self {
        Self { model }
    }
}

impl Interactor for ChatModelSampler {
    fn elicit(&self, _: ElicitRequest) -> InteractFuture<'_, ElicitResponse> {
        // Reached only outside the agent loop: in it, the loop takes the questions.
        Box::pin(async {
            Err(InteractError::Unavailable(
                "nothing answers questions for this call: the agent's model samples only, and the call is not run by the agent loop".to_owned(),
            ))
        })
    }

    fn answers_questions(&self) -> bool {
        false
    }

    fn sample(&self, request: SampleRequest) -> InteractFuture<'_, Completion> {
        Box::pin(async move {
            let mut messages = Vec::with_capacity(request.messages.len() + 1);
            if let Some(system) = request.system {
                messages.push(Message::system(system));
            }
            for message in request.messages {
                messages.push(match message.role {
                    SampleRole::User => Message::user(message.text),
                    SampleRole::Assistant => {
                        Message::Assistant(Decoded::new(message.text, Vec::new()))
                    }
                });
            }
            let choice = ToolChoice::none();
            let request =
                ModelRequest { messages: &messages, tools: &[], choice: &choice, search: None };
            let turn = self
                .model
                .respond(request, &|_| {})
                .await
                .map_err(|error| InteractError::Failed(error.to_string()))?;
            let stop_reason = Some(turn.decoded.finish.reason.to_string());
            Ok(Completion { text: turn.decoded.text, model: None, stop_reason })
        })
    }
}
