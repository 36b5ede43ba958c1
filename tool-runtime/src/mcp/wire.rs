//! The MCP wire forms of what a served call asks its client and what the client answers:
//! shared by the questions asked within a call (older clients) and those asked in
//! input-required rounds (2026-07-28).
//!
//! rmcp marks sampling deprecated (SEP-2577 plans to replace it); the protocol versions clients
//! speak today still use it.
#![allow(deprecated)]

use rmcp::model::{
    CreateMessageRequestParams, CreateMessageResult, ElicitRequestParams, ElicitResult,
    ElicitationAction, ElicitationSchema, ListRootsResult, SamplingMessageContentBlock,
};
use serde_json::{Map, Value, json};

use super::text::{ERROR_CHARS, capped};
use crate::runtime::{
    Completion, ElicitRequest, ElicitResponse, InteractError, InteractKind, Root, SampleRequest,
    SampleRole,
};

/// A request to the client that failed on its way, its error cut to size.
pub(super) fn failed(error: impl std::fmt::Display) -> InteractError {
    InteractError::Failed(capped(&error.to_string(), ERROR_CHARS))
}

/// The error of a request of `kind` to a client that did not declare its capability.
pub(super) fn undeclared(kind: InteractKind) -> InteractError {
    let which = match kind {
        InteractKind::Elicit => "elicitation",
        InteractKind::Sample => "sampling",
        InteractKind::Roots => "roots",
    };
    InteractError::Unavailable(format!("the MCP client did not declare the `{which}` capability"))
}

/// What the client's user did, as an MCP elicitation result says it (an accept without content
/// accepts an empty object; anything but accept or decline cancels). Within a call or in an
/// input-required round alike.
pub(super) fn answer_of(result: ElicitResult) -> ElicitResponse {
    match result.action {
        ElicitationAction::Accept => {
            ElicitResponse::Accept(result.content.unwrap_or_else(|| Value::Object(Map::new())))
        }
        ElicitationAction::Decline => ElicitResponse::Decline,
        _ => ElicitResponse::Cancel,
    }
}

/// The form of `request` as MCP sends it (`elicitation/create`), or why its schema cannot be.
pub(super) fn elicit_params(request: ElicitRequest) -> Result<ElicitRequestParams, InteractError> {
    let requested_schema: ElicitationSchema = serde_json::from_value(Value::Object(request.schema))
        .map_err(|error| InteractError::UnsupportedSchema(error.to_string()))?;
    Ok(ElicitRequestParams::FormElicitationParams {
        meta: None,
        message: request.message,
        requested_schema,
    })
}

/// `request` as MCP sends it (`sampling/createMessage`): text messages, instructions, budget.
pub(super) fn sampling_params(
    request: &SampleRequest,
) -> Result<CreateMessageRequestParams, InteractError> {
    let messages: Vec<Value> = request
        .messages
        .iter()
        .map(|message| {
            let role = match message.role {
                SampleRole::User => "user",
                SampleRole::Assistant => "assistant",
            };
            json!({"role": role, "content": {"type": "text", "text": message.text}})
        })
        .collect();
    let mut params = json!({"messages": messages, "maxTokens": request.max_tokens});
    if let Some(system) = &request.system {
        params["systemPrompt"] = Value::String(system.clone());
    }
    if let Some(temperature) = request.temperature {
        params["temperature"] = json!(temperature);
    }
    serde_json::from_value(params).map_err(failed)
}

/// What a client's model wrote (`sampling/createMessage`'s result): its text blocks joined.
pub(super) fn completion_of(result: CreateMessageResult) -> Completion {
    let text = result
        .message
        .content
        .into_vec()
        .into_iter()
        .filter_map(|block| match block {
            SamplingMessageContentBlock::Text(text) => Some(text.text),
            _ => None,
        })
        .collect::<Vec<_>>()
        .join("");
    Completion { text, model: Some(result.model), stop_reason: result.stop_reason }
}

/// The roots a client listed (`roots/list`'s result).
pub(super) fn roots_of(result: ListRootsResult) -> Vec<Root> {
    result.roots.into_iter().map(|root| Root { uri: root.uri, name: root.name }).collect()
}
