//! Call ids in the form a provider insists on. Most providers take any string as a call's id
//! and echo it; Mistral takes only its own form (exactly 9 ASCII letters and digits) and
//! refuses a conversation holding ids another provider minted (`toolu_01...`, `call_...`).

use std::borrow::Cow;
use std::collections::HashMap;

use sha2::{Digest, Sha256};

use crate::conversation::Message;

use super::error::EncodeError;

/// How an adapter writes call ids into a request ([`OpenAiChat::call_ids`](super::OpenAiChat::call_ids)).
///
/// The conversation keeps its own ids (records, events and the stored form are unchanged);
/// only the request carries the provider's form. The mapping is a pure function of the id
/// ([`wire_id`](Self::wire_id)), the same in every request and every process, so a
/// conversation's requests stay prefixes of each other (a provider's prompt cache holds), and an
/// audit finds the id a provider saw for a recorded call without a table.
///
/// ```
/// use tool_runtime::adapters::CallIdFormat;
///
/// // Mistral's own ids go as they are; another provider's get their 9-character form.
/// assert_eq!(CallIdFormat::Mistral.wire_id("D681PevKs"), "D681PevKs");
/// let wire = CallIdFormat::Mistral.wire_id("toolu_01A09q90qw90lq917835lq9");
/// assert_eq!(wire.len(), 9);
/// assert!(wire.chars().all(|c| c.is_ascii_alphanumeric()));
/// assert_eq!(wire, CallIdFormat::Mistral.wire_id("toolu_01A09q90qw90lq917835lq9"));
/// assert_eq!(CallIdFormat::AsGiven.wire_id("call_1"), "call_1");
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum CallIdFormat {
    /// As the conversation holds them (OpenAI, vLLM, Ollama, llama.cpp: any string).
    #[default]
    AsGiven,
    /// Mistral's: exactly 9 ASCII letters and digits. An id already in that form (Mistral's
    /// own) is sent as it is; any other as 9 letters and digits taken from its SHA-256.
    Mistral,
}

/// The letters and digits a Mistral id is written in.
const ALPHANUMERIC: &[u8; 62] = b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

/// How long a Mistral id is.
const MISTRAL_LEN: usize = 9;

impl CallIdFormat {
    /// The id a request carries for the call `id`.
    #[must_use]
    pub fn wire_id(self, id: &str) -> Cow<'_, str> {
        match self {
            Self::AsGiven => Cow::Borrowed(id),
            Self::Mistral if is_mistral(id) => Cow::Borrowed(id),
            Self::Mistral => {
                let digest = Sha256::digest(id.as_bytes());
                // 62^9 needs 54 bits: the first 8 bytes, read as one number, in base 62.
                let mut number = u64::from_be_bytes(digest[..8].try_into().unwrap_or([0; 8]));
                let mut out = [0u8; MISTRAL_LEN];
                for slot in out.iter_mut().rev() {
                    *slot = ALPHANUMERIC[usize::try_from(number % 62).unwrap_or(0)];
                    number /= 62;
                }
                Cow::Owned(out.iter().map(|&byte| char::from(byte)).collect())
            }
        }
    }

    /// Checks that no two different ids of `messages` get the same id in a request: a model
    /// would not know which result answers which call. With 62^9 ids a clash between derived
    /// ids is beyond likely; one between a derived id and a Mistral id chosen to match it is
    /// not, and is refused here rather than sent.
    pub(crate) fn check_distinct(self, messages: &[Message]) -> Result<(), EncodeError> {
        if self == Self::AsGiven {
            return Ok(());
        }
        let mut seen: HashMap<Cow<'_, str>, &str> = HashMap::new();
        let ids = messages.iter().flat_map(|message| match message {
            Message::Assistant(turn) => turn.calls.iter().map(|call| call.id.as_str()).collect(),
            Message::ToolResults(results) => {
                results.iter().map(|result| result.call_id.as_str()).collect()
            }
            _ => Vec::new(),
        });
        for id in ids {
            let wire = self.wire_id(id);
            match seen.get(&wire) {
                Some(first) if *first != id => {
                    return Err(EncodeError::CallIdClash {
                        first: (*first).to_owned(),
                        second: id.to_owned(),
                        wire: wire.into_owned(),
                    });
                }
                Some(_) => {}
                None => {
                    seen.insert(wire, id);
                }
            }
        }
        Ok(())
    }
}

/// Whether `id` is in Mistral's own form.
fn is_mistral(id: &str) -> bool {
    id.len() == MISTRAL_LEN && id.bytes().all(|byte| byte.is_ascii_alphanumeric())
}
