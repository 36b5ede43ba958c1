//! The stored form of a conversation: [`Message`] as JSON that another process (or a later
//! request) reads back, whatever provider the conversation was held with.
//!
//! One object per message, told apart by `role`:
//!
//! | `role` | keys |
//! |---|---|
//! | `system`, `user`, `notice` | `text` |
//! | `assistant` | `text`, `calls` (`id`, `name`, `arguments` (an object) or `arguments_text` (what arrived, when it was not valid), `complete`, `id_origin`, `extras`), `finish`, `provider_finish`, `extras` |
//! | `tool_results` | `results` (`call_id`, `name`, `extras`, and `ok: true` with `parts` and `details`, or `ok: false` with `code` and `message`) |
//!
//! A part is `{"type": "json", "value": ..}`, `{"type": "text", "text": ..}`,
//! `{"type": "image" | "audio", "mime_type": .., "data": <base64>}`,
//! `{"type": "resource", "uri": .., "mime_type": .., "text": ..}` (or `"data"` for bytes), or
//! `{"type": "resource_link", "uri": .., "name": .., "mime_type": .., "description": ..}`.
//! Keys whose value is empty (`""`, `[]`, `{}`, absent) may be left out; unknown keys are
//! refused. A turn's decoding problems and usage are not stored: they are diagnostics and
//! accounting, not conversation.

use std::borrow::Cow;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use serde::de::Error as _;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::{Map, Value};

use crate::content::{Bytes, Part, Resource, ResourceBody, ResourceLink, ToolOutput};
use crate::runtime::{ExecError, ToolErrorCode};

use super::args;
use super::request::Message;
use super::result::{ToolOutcome, ToolResult};
use super::turn::{CallArguments, Decoded, Extras, Finish, FinishReason, IdOrigin, ToolCall};

#[derive(Serialize, Deserialize)]
#[serde(tag = "role", rename_all = "snake_case")]
enum StoredMessage<'a> {
    System {
        #[serde(borrow)]
        text: Cow<'a, str>,
    },
    User {
        #[serde(borrow)]
        text: Cow<'a, str>,
    },
    Notice {
        #[serde(borrow)]
        text: Cow<'a, str>,
    },
    Assistant(StoredTurn<'a>),
    ToolResults {
        results: Vec<StoredResult<'a>>,
    },
}

fn is_empty_map(map: &Map<String, Value>) -> bool {
    map.is_empty()
}

fn is_true(flag: &bool) -> bool {
    *flag
}

const fn yes() -> bool {
    true
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct StoredTurn<'a> {
    #[serde(borrow, default, skip_serializing_if = "str::is_empty")]
    text: Cow<'a, str>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    calls: Vec<StoredCall<'a>>,
    finish: Cow<'a, str>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    provider_finish: Option<Cow<'a, str>>,
    #[serde(default, skip_serializing_if = "is_empty_map")]
    extras: Map<String, Value>,
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct StoredCall<'a> {
    #[serde(borrow)]
    id: Cow<'a, str>,
    #[serde(borrow)]
    name: Cow<'a, str>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    arguments: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    arguments_text: Option<Cow<'a, str>>,
    #[serde(default = "yes", skip_serializing_if = "is_true")]
    complete: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    id_origin: Option<StoredIdOrigin<'a>>,
    #[serde(default, skip_serializing_if = "is_empty_map")]
    extras: Map<String, Value>,
}

#[derive(Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
enum StoredIdOrigin<'a> {
    Minted,
    Reminted {
        #[serde(borrow)]
        provider_id: Cow<'a, str>,
    },
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct StoredResult<'a> {
    #[serde(borrow)]
    call_id: Cow<'a, str>,
    #[serde(borrow)]
    name: Cow<'a, str>,
    ok: bool,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    parts: Vec<StoredPart<'a>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    details: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    code: Option<ToolErrorCode>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    message: Option<Cow<'a, str>>,
    #[serde(default, skip_serializing_if = "is_empty_map")]
    extras: Map<String, Value>,
}

#[derive(Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
enum StoredPart<'a> {
    Json {
        value: Value,
    },
    Text {
        #[serde(borrow)]
        text: Cow<'a, str>,
    },
    Image {
        #[serde(borrow)]
        mime_type: Cow<'a, str>,
        data: Base64,
    },
    Audio {
        #[serde(borrow)]
        mime_type: Cow<'a, str>,
        data: Base64,
    },
    Resource {
        #[serde(borrow)]
        uri: Cow<'a, str>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        mime_type: Option<Cow<'a, str>>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        text: Option<Cow<'a, str>>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        data: Option<Base64>,
    },
    ResourceLink {
        #[serde(borrow)]
        uri: Cow<'a, str>,
        #[serde(borrow)]
        name: Cow<'a, str>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        mime_type: Option<Cow<'a, str>>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        description: Option<Cow<'a, str>>,
    },
}

/// Bytes as standard base64 text.
struct Base64(Bytes);

impl Serialize for Base64 {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&STANDARD.encode(&self.0))
    }
}

impl<'de> Deserialize<'de> for Base64 {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = Cow::<str>::deserialize(deserializer)?;
        STANDARD
            .decode(text.as_bytes())
            .map(|bytes| Self(Bytes::from(bytes)))
            .map_err(|error| D::Error::custom(format_args!("`data` is not base64 ({error})")))
    }
}

fn borrowed(text: &str) -> Cow<'_, str> {
    Cow::Borrowed(text)
}

fn extras_map(extras: &Extras) -> Map<String, Value> {
    extras.iter().map(|(key, value)| (key.to_owned(), value.clone())).collect()
}

fn extras_from(map: Map<String, Value>) -> Extras {
    let mut extras = Extras::new();
    for (key, value) in map {
        extras.insert(key, value);
    }
    extras
}

fn stored_part(part: &Part) -> StoredPart<'_> {
    match part {
        Part::Json(value) => StoredPart::Json { value: value.clone() },
        Part::Text(text) => StoredPart::Text { text: borrowed(text) },
        Part::Image(media) => StoredPart::Image {
            mime_type: borrowed(&media.mime_type),
            data: Base64(media.data.clone()),
        },
        Part::Audio(media) => StoredPart::Audio {
            mime_type: borrowed(&media.mime_type),
            data: Base64(media.data.clone()),
        },
        Part::Resource(resource) => {
            let (text, data) = match &resource.body {
                ResourceBody::Text(text) => (Some(borrowed(text)), None),
                ResourceBody::Bytes(bytes) => (None, Some(Base64(bytes.clone()))),
            };
            StoredPart::Resource {
                uri: borrowed(&resource.uri),
                mime_type: resource.mime_type.as_deref().map(borrowed),
                text,
                data,
            }
        }
        Part::ResourceLink(link) => StoredPart::ResourceLink {
            uri: borrowed(&link.uri),
            name: borrowed(&link.name),
            mime_type: link.mime_type.as_deref().map(borrowed),
            description: link.description.as_deref().map(borrowed),
        },
    }
}

fn part_from<E: serde::de::Error>(part: StoredPart<'_>) -> Result<Part, E> {
    Ok(match part {
        StoredPart::Json { value } => Part::Json(value),
        StoredPart::Text { text } => Part::Text(text.into_owned()),
        StoredPart::Image { mime_type, data } => Part::image(mime_type, data.0),
        StoredPart::Audio { mime_type, data } => Part::audio(mime_type, data.0),
        StoredPart::Resource { uri, mime_type, text, data } => {
            let body = match (text, data) {
                (Some(text), None) => ResourceBody::Text(text.into_owned()),
                (None, Some(data)) => ResourceBody::Bytes(data.0),
                _ => return Err(E::custom("a resource part has either `text` or `data`")),
            };
            Part::from(Resource {
                uri: uri.into_owned(),
                mime_type: mime_type.map(Cow::into_owned),
                body,
            })
        }
        StoredPart::ResourceLink { uri, name, mime_type, description } => {
            Part::from(ResourceLink {
                uri: uri.into_owned(),
                name: name.into_owned(),
                mime_type: mime_type.map(Cow::into_owned),
                description: description.map(Cow::into_owned),
            })
        }
    })
}

fn stored_call(call: &ToolCall) -> StoredCall<'_> {
    let (arguments, arguments_text) = match &call.arguments {
        CallArguments::Parsed(value) => (Some(value.clone()), None),
        CallArguments::Invalid { raw, .. } => (None, Some(borrowed(raw))),
    };
    StoredCall {
        id: borrowed(&call.id),
        name: borrowed(&call.name),
        arguments,
        arguments_text,
        complete: call.complete,
        id_origin: match &call.id_origin {
            IdOrigin::Provider => None,
            IdOrigin::Minted => Some(StoredIdOrigin::Minted),
            IdOrigin::Reminted(id) => Some(StoredIdOrigin::Reminted { provider_id: borrowed(id) }),
        },
        extras: extras_map(&call.extras),
    }
}

fn call_from<E: serde::de::Error>(call: StoredCall<'_>) -> Result<ToolCall, E> {
    let arguments = match (call.arguments, call.arguments_text) {
        (Some(value), None) => args::from_value(value),
        (None, Some(text)) => args::from_text(text.into_owned()),
        _ => return Err(E::custom("a call has either `arguments` or `arguments_text`")),
    };
    let mut out = ToolCall::new(call.id, call.name, Value::Null);
    out.arguments = arguments;
    out.complete = call.complete;
    out.id_origin = match call.id_origin {
        None => IdOrigin::Provider,
        Some(StoredIdOrigin::Minted) => IdOrigin::Minted,
        Some(StoredIdOrigin::Reminted { provider_id }) => {
            IdOrigin::Reminted(provider_id.into_owned())
        }
    };
    out.extras = extras_from(call.extras);
    Ok(out)
}

fn turn_from<E: serde::de::Error>(turn: StoredTurn<'_>) -> Result<Decoded, E> {
    let Some(reason) = FinishReason::ALL.into_iter().find(|reason| reason.as_str() == turn.finish)
    else {
        return Err(E::custom(format_args!("unknown finish reason `{}`", turn.finish)));
    };
    let calls = turn.calls.into_iter().map(call_from).collect::<Result<_, E>>()?;
    let mut decoded = Decoded::new(turn.text, calls);
    decoded.finish = Finish::new(reason, turn.provider_finish.as_deref());
    decoded.extras = extras_from(turn.extras);
    Ok(decoded)
}

fn stored_result(result: &ToolResult) -> StoredResult<'_> {
    let mut stored = StoredResult {
        call_id: borrowed(&result.call_id),
        name: borrowed(&result.name),
        ok: true,
        parts: Vec::new(),
        details: None,
        code: None,
        message: None,
        extras: extras_map(&result.extras),
    };
    match &result.outcome {
        ToolOutcome::Done(output) => {
            stored.parts = output.parts().iter().map(stored_part).collect();
            stored.details = output.details().cloned();
        }
        ToolOutcome::Failed(error) => {
            stored.ok = false;
            stored.code = Some(error.code);
            stored.message = Some(borrowed(&error.message));
        }
    }
    stored
}

fn result_from<E: serde::de::Error>(result: StoredResult<'_>) -> Result<ToolResult, E> {
    let outcome = if result.ok {
        if result.code.is_some() || result.message.is_some() {
            return Err(E::custom("a successful result has no `code` or `message`"));
        }
        let mut output = ToolOutput::new();
        for part in result.parts {
            let part = part_from(part)?;
            if matches!(part, Part::Json(_)) && output.structured().is_some() {
                return Err(E::custom("a result has at most one `json` part"));
            }
            output.push(part);
        }
        if let Some(details) = result.details {
            output = output.with_details(details);
        }
        ToolOutcome::Done(output)
    } else {
        if !result.parts.is_empty() || result.details.is_some() {
            return Err(E::custom("a failed result has no `parts` or `details`"));
        }
        let Some(message) = result.message else {
            return Err(E::custom("a failed result has a `message`"));
        };
        // A result stored without a code failed in the tool.
        let code = result.code.unwrap_or(ToolErrorCode::Execution);
        ToolOutcome::Failed(ExecError::new(code, message.into_owned()))
    };
    let mut out = ToolResult::new(result.call_id, result.name, outcome);
    out.extras = extras_from(result.extras);
    Ok(out)
}

/// The stored form described in the [module docs](self): stable, pinned by snapshots.
impl Serialize for Message {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let stored = match self {
            Self::System(text) => StoredMessage::System { text: borrowed(text) },
            Self::User(text) => StoredMessage::User { text: borrowed(text) },
            Self::Notice(text) => StoredMessage::Notice { text: borrowed(text) },
            Self::Assistant(turn) => StoredMessage::Assistant(StoredTurn {
                text: borrowed(&turn.text),
                calls: turn.calls.iter().map(stored_call).collect(),
                finish: borrowed(turn.finish.reason.as_str()),
                provider_finish: turn.finish.provider_reason.as_deref().map(borrowed),
                extras: extras_map(&turn.extras),
            }),
            Self::ToolResults(results) => {
                StoredMessage::ToolResults { results: results.iter().map(stored_result).collect() }
            }
        };
        stored.serialize(serializer)
    }
}

/// Reads the stored form back; see the [module docs](self).
impl<'de> Deserialize<'de> for Message {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        Ok(match StoredMessage::deserialize(deserializer)? {
            StoredMessage::System { text } => Self::System(text.into_owned()),
            StoredMessage::User { text } => Self::User(text.into_owned()),
            StoredMessage::Notice { text } => Self::Notice(text.into_owned()),
            StoredMessage::Assistant(turn) => Self::Assistant(turn_from(turn)?),
            StoredMessage::ToolResults { results } => Self::ToolResults(
                results.into_iter().map(result_from).collect::<Result<_, D::Error>>()?,
            ),
        })
    }
}
