use crate::adapters::{Decoded, ToolResult};

/// One entry of a conversation, in provider-independent terms. Model clients turn these into
/// their provider's messages; the model's turns and the tool results keep the provider extras
/// they must echo.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum Message {
    /// Instructions for the model.
    System(String),
    /// What the user said (or what the loop tells the model, such as that the tool-calling
    /// limit is reached).
    User(String),
    /// A turn of the model: its text and its calls.
    Assistant(Decoded),
    /// The results of the previous turn's calls, in the model's call order.
    ToolResults(Vec<ToolResult>),
}

impl Message {
    /// A system message.
    pub fn system(text: impl Into<String>) -> Self {
        Self::System(text.into())
    }

    /// A user message.
    pub fn user(text: impl Into<String>) -> Self {
        Self::User(text.into())
    }
}
