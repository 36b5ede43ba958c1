//! The conversation model, in provider-independent terms: what is asked of a model
//! ([`ModelRequest`]: the [`Message`]s, the tools, the [`ToolChoice`]; [`RequestOptions`]), what
//! it answered ([`Decoded`]: its [`ToolCall`]s, how the turn ended, what it used, the
//! [`Problem`]s met on the way), what goes back for each call ([`ToolResult`]), the rules a
//! conversation handed in from outside must keep ([`check_conversation`]) and its stored form
//! ([`stored`]).
//!
//! Nothing here knows a provider: the [`adapters`](crate::adapters) encode these types into each
//! provider's wire format and decode its responses into them (and re-export them, so one import
//! brings a codec and its words). The agent loop, the model clients and the MCP import speak
//! only these types.
//!
//! ```
//! use serde_json::json;
//! use tool_runtime::conversation::{Decoded, Message, ToolCall, ToolResult, check_conversation};
//!
//! let call = ToolCall::new("call_1", "clock__now", json!({}));
//! let turn = Decoded::new("", vec![call.clone()]);
//! let conversation = vec![
//!     Message::user("What time is it?"),
//!     Message::Assistant(turn),
//!     Message::ToolResults(vec![ToolResult::ok(&call, json!({"time": "09:30"}))]),
//! ];
//! check_conversation(&conversation).unwrap();
//!
//! // The stored form reads back whatever provider the conversation is continued with.
//! let text = serde_json::to_string(&conversation).unwrap();
//! let back: Vec<Message> = serde_json::from_str(&text).unwrap();
//! assert_eq!(back.len(), 3);
//! ```

pub(crate) mod args;
mod check;
mod problem;
mod request;
mod result;
pub mod stored;
mod text;
mod turn;

pub use check::{
    ConversationError, ConversationProblem, MAX_CALL_ID_LEN, check_conversation, check_ready,
};
pub use problem::{Limit, Problem, ProviderError};
pub(crate) use request::search_parameters;
pub use request::{
    ChoiceMode, ClientSearch, DeferLoading, Message, ModelRequest, RequestOptions, SEARCH_TOOL,
    ToolChoice, ToolSearch,
};
pub use result::{ToolOutcome, ToolResult};
pub(crate) use text::text_of;
pub(crate) use turn::{ASYNC, CALLER, SEARCH_CALL, TOOL_REFERENCES};
pub use turn::{
    ArgumentsProblem, CallArguments, Decoded, Extras, Finish, FinishReason, IdOrigin, StreamEvent,
    ToolCall, Usage,
};
