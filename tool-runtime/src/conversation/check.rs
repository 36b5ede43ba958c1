//! The chat contract a conversation handed in from outside must keep: every tool result
//! answers a call of the assistant turn right before it, exactly once; call ids are short and
//! unique within their turn; a turn's calls are answered before anything else is said.

use std::collections::HashSet;
use std::fmt;

use serde::Serialize;

use super::request::Message;

/// The longest call id a conversation may carry, in bytes (OpenAI's limit; ids from other
/// providers are shorter).
pub const MAX_CALL_ID_LEN: usize = 128;

/// What is wrong at [`ConversationError::index`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case", tag = "kind")]
#[non_exhaustive]
pub enum ConversationProblem {
    /// Tool results that do not come right after an assistant turn with calls.
    ResultsWithoutCalls,
    /// A result whose call id is not a call of the assistant turn before it.
    UnknownCallId {
        /// The id (cut to 64 characters).
        call_id: String,
    },
    /// A second result for the same call.
    DuplicateResult {
        /// The id.
        call_id: String,
    },
    /// A call of an assistant turn that the next message does not answer.
    UnansweredCall {
        /// The id.
        call_id: String,
    },
    /// Two calls of one assistant turn share an id.
    DuplicateCallId {
        /// The id.
        call_id: String,
    },
    /// A call id that is empty or longer than [`MAX_CALL_ID_LEN`] bytes.
    BadCallId {
        /// Its length in bytes.
        len: usize,
    },
    /// No message at all: nothing for a model to answer ([`check_ready`]).
    Empty,
}

/// A conversation that breaks the chat contract: the index of the first message at fault
/// and what is wrong with it.
///
/// ```
/// use tool_runtime::adapters::{ConversationProblem, Message, check_conversation};
///
/// let results = Message::ToolResults(Vec::new());
/// let error = check_conversation(&[Message::user("hi"), results]).unwrap_err();
/// assert_eq!(error.index, 1);
/// assert_eq!(error.problem, ConversationProblem::ResultsWithoutCalls);
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ConversationError {
    /// The index of the message at fault.
    pub index: usize,
    /// What is wrong.
    #[serde(flatten)]
    pub problem: ConversationProblem,
}

impl fmt::Display for ConversationError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "message {}: ", self.index)?;
        match &self.problem {
            ConversationProblem::ResultsWithoutCalls => {
                f.write_str("tool results that do not follow an assistant turn with calls")
            }
            ConversationProblem::UnknownCallId { call_id } => {
                write!(f, "a result for `{call_id}`, which the turn before did not call")
            }
            ConversationProblem::DuplicateResult { call_id } => {
                write!(f, "a second result for call `{call_id}`")
            }
            ConversationProblem::UnansweredCall { call_id } => {
                write!(f, "call `{call_id}` is not answered by the next message")
            }
            ConversationProblem::DuplicateCallId { call_id } => {
                write!(f, "two calls share the id `{call_id}`")
            }
            ConversationProblem::BadCallId { len } => {
                write!(f, "a call id of {len} bytes (ids are 1 to {MAX_CALL_ID_LEN} bytes)")
            }
            ConversationProblem::Empty => f.write_str("the conversation has no message"),
        }
    }
}

impl std::error::Error for ConversationError {}

/// An id as errors show it: escaped and cut to 64 characters.
fn shown(id: &str) -> String {
    crate::schema::Shown(id).to_string()
}

/// Checks a conversation handed in from outside (history from a client, a stored run)
/// against the chat contract. The last assistant turn may be unanswered: its calls may still
/// wait for a decision.
///
/// # Errors
///
/// [`ConversationError`] for the first message at fault.
///
/// ```
/// use serde_json::json;
/// use tool_runtime::adapters::{Decoded, Message, ToolCall, ToolResult, check_conversation};
///
/// let call = ToolCall::new("call_1", "core__time", json!({}));
/// let conversation = vec![
///     Message::user("What time is it?"),
///     Message::Assistant(Decoded::new("", vec![call.clone()])),
///     Message::ToolResults(vec![ToolResult::ok(&call, json!({"iso8601": "2026-11-25T10:00:00Z"}))]),
/// ];
/// assert!(check_conversation(&conversation).is_ok());
/// assert!(check_conversation(&conversation[..1]).is_ok());
/// // Results twice for one call:
/// let mut twice = conversation.clone();
/// twice.push(conversation[2].clone());
/// assert_eq!(check_conversation(&twice).unwrap_err().index, 3);
/// ```
pub fn check_conversation(messages: &[Message]) -> Result<(), ConversationError> {
    let fail = |index, problem| Err(ConversationError { index, problem });
    for (index, message) in messages.iter().enumerate() {
        match message {
            Message::Assistant(turn) => {
                let mut ids = HashSet::with_capacity(turn.calls.len());
                for call in &turn.calls {
                    if call.id.is_empty() || call.id.len() > MAX_CALL_ID_LEN {
                        return fail(index, ConversationProblem::BadCallId { len: call.id.len() });
                    }
                    if !ids.insert(call.id.as_str()) {
                        let call_id = shown(&call.id);
                        return fail(index, ConversationProblem::DuplicateCallId { call_id });
                    }
                }
                let Some(next) = messages.get(index + 1) else { continue };
                let answered: HashSet<&str> = match next {
                    Message::ToolResults(results) => {
                        results.iter().map(|result| result.call_id.as_str()).collect()
                    }
                    _ => HashSet::new(),
                };
                if let Some(call) =
                    turn.calls.iter().find(|call| !answered.contains(call.id.as_str()))
                {
                    let call_id = shown(&call.id);
                    return fail(index + 1, ConversationProblem::UnansweredCall { call_id });
                }
            }
            Message::ToolResults(results) => {
                let calls = match index.checked_sub(1).map(|before| &messages[before]) {
                    Some(Message::Assistant(turn)) if !turn.calls.is_empty() => &turn.calls,
                    _ => return fail(index, ConversationProblem::ResultsWithoutCalls),
                };
                let mut seen = HashSet::with_capacity(results.len());
                for result in results {
                    let call_id = shown(&result.call_id);
                    if !calls.iter().any(|call| call.id == result.call_id) {
                        return fail(index, ConversationProblem::UnknownCallId { call_id });
                    }
                    if !seen.insert(result.call_id.as_str()) {
                        return fail(index, ConversationProblem::DuplicateResult { call_id });
                    }
                }
            }
            _ => {}
        }
    }
    Ok(())
}

/// Checks a conversation about to be sent to a model: [`check_conversation`], and it is not
/// empty and its last assistant turn is answered (every provider refuses a request whose calls
/// have no results; a turn whose calls wait is taken up with
/// [`Agent::resume`](crate::agent::Agent::resume), not sent again).
///
/// # Errors
///
/// [`ConversationError`]: [`ConversationProblem::Empty`] at index 0, or
/// [`ConversationProblem::UnansweredCall`] at the index one past the last message.
///
/// ```
/// use serde_json::json;
/// use tool_runtime::adapters::{ConversationProblem, Decoded, Message, ToolCall, check_ready};
///
/// let waiting = vec![
///     Message::user("What time is it?"),
///     Message::Assistant(Decoded::new("", vec![ToolCall::new("call_1", "core__time", json!({}))])),
/// ];
/// assert!(check_ready(&waiting[..1]).is_ok());
/// let error = check_ready(&waiting).unwrap_err();
/// assert_eq!((error.index, error.problem), (2, ConversationProblem::UnansweredCall { call_id: "call_1".into() }));
/// assert_eq!(check_ready(&[]).unwrap_err().problem, ConversationProblem::Empty);
/// ```
pub fn check_ready(messages: &[Message]) -> Result<(), ConversationError> {
    check_conversation(messages)?;
    match messages.last() {
        None => Err(ConversationError { index: 0, problem: ConversationProblem::Empty }),
        Some(Message::Assistant(turn)) if !turn.calls.is_empty() => Err(ConversationError {
            index: messages.len(),
            problem: ConversationProblem::UnansweredCall { call_id: shown(&turn.calls[0].id) },
        }),
        Some(_) => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::conversation::{Decoded, ToolCall, ToolResult};

    fn turn(ids: &[&str]) -> (Message, Vec<ToolCall>) {
        let calls: Vec<ToolCall> =
            ids.iter().map(|id| ToolCall::new(*id, "t__x", json!({}))).collect();
        (Message::Assistant(Decoded::new("", calls.clone())), calls)
    }

    fn results(calls: &[&ToolCall]) -> Message {
        Message::ToolResults(calls.iter().map(|call| ToolResult::ok(call, json!({}))).collect())
    }

    fn problem(messages: &[Message]) -> (usize, ConversationProblem) {
        let error = check_conversation(messages).unwrap_err();
        (error.index, error.problem)
    }

    #[test]
    fn each_rule_names_the_message_at_fault() {
        let (assistant, calls) = turn(&["a", "b"]);
        let user = Message::user("hi");
        let ok = [user.clone(), assistant.clone(), results(&[&calls[1], &calls[0]])];
        assert_eq!(check_conversation(&ok), Ok(()));

        let unanswered = [user.clone(), assistant.clone(), results(&[&calls[0]])];
        let id = |id: &str| id.to_owned();
        assert_eq!(
            problem(&unanswered),
            (2, ConversationProblem::UnansweredCall { call_id: id("b") })
        );
        let interrupted = [user.clone(), assistant.clone(), user.clone()];
        assert_eq!(
            problem(&interrupted),
            (2, ConversationProblem::UnansweredCall { call_id: id("a") })
        );
        let twice = [user.clone(), assistant.clone(), results(&[&calls[0], &calls[1], &calls[0]])];
        assert_eq!(problem(&twice), (2, ConversationProblem::DuplicateResult { call_id: id("a") }));
        let stranger = ToolCall::new("c", "t__x", json!({}));
        let unknown =
            [user.clone(), assistant.clone(), results(&[&calls[0], &calls[1], &stranger])];
        assert_eq!(problem(&unknown), (2, ConversationProblem::UnknownCallId { call_id: id("c") }));
        let orphan = [user.clone(), results(&[&stranger])];
        assert_eq!(problem(&orphan), (1, ConversationProblem::ResultsWithoutCalls));
        let (same, _) = turn(&["a", "a"]);
        assert_eq!(
            problem(&[user.clone(), same]),
            (1, ConversationProblem::DuplicateCallId { call_id: id("a") })
        );
        let long = "x".repeat(MAX_CALL_ID_LEN + 1);
        let (too_long, _) = turn(&[long.as_str()]);
        assert_eq!(problem(&[user, too_long]), (1, ConversationProblem::BadCallId { len: 129 }));
    }

    #[test]
    fn a_last_turn_may_wait_for_its_results() {
        let (assistant, _) = turn(&["a"]);
        assert_eq!(check_conversation(&[Message::user("hi"), assistant]), Ok(()));
    }
}
