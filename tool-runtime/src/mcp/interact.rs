//! A served call's questions, put to the MCP client of its session: elicitation as
//! `elicitation/create`, sampling as `sampling/createMessage`, each only when the client
//! declared the capability.
//!
//! rmcp marks sampling deprecated (SEP-2577 plans to replace it); the protocol versions clients
//! speak today, and the official conformance suite, still use it. This module is the one place
//! that names its types.
#![allow(deprecated)]

use rmcp::model::{
    ClientResult, CreateMessageRequest, CreateMessageRequestParams, ElicitRequest,
    ElicitRequestParams, ElicitationSchema, SamplingMessageContentBlock, ServerRequest,
};
use rmcp::service::{Peer, RoleServer};
use serde_json::{Value, json};

use std::sync::Arc;

use async_trait::async_trait;

use super::rounds::{answer_of, approval_form, approves};
use super::text::{ERROR_CHARS, capped};
use crate::runner::{ApprovalDecision, ApprovalRequest, Approver};
use crate::runtime::{
    Completion, ElicitRequest as Elicit, ElicitResponse, InteractError, InteractFuture, Interactor,
    SampleRequest, SampleRole,
};

/// The client of one MCP session, answering the questions of the calls it made.
#[derive(Debug)]
pub(super) struct ClientInteractor {
    pub(super) peer: Peer<RoleServer>,
}

impl ClientInteractor {
    fn declared(&self, which: &str) -> Result<(), InteractError> {
        let declared = self.peer.peer_info().is_some_and(|info| match which {
            "elicitation" => info.capabilities.elicitation.is_some(),
            _ => info.capabilities.sampling.is_some(),
        });
        if declared {
            Ok(())
        } else {
            Err(InteractError::Unavailable(format!(
                "the MCP client did not declare the `{which}` capability"
            )))
        }
    }
}

fn failed(error: impl std::fmt::Display) -> InteractError {
    InteractError::Failed(capped(&error.to_string(), ERROR_CHARS))
}

impl Interactor for ClientInteractor {
    fn elicit(&self, request: Elicit) -> InteractFuture<'_, ElicitResponse> {
        Box::pin(async move {
            self.declared("elicitation")?;
            let requested_schema: ElicitationSchema =
                serde_json::from_value(Value::Object(request.schema))
                    .map_err(|error| InteractError::UnsupportedSchema(error.to_string()))?;
            let params = ElicitRequestParams::FormElicitationParams {
                meta: None,
                message: request.message,
                requested_schema,
            };
            let answer = self
                .peer
                .send_request(ServerRequest::ElicitRequest(ElicitRequest::new(params)))
                .await
                .map_err(failed)?;
            let ClientResult::ElicitResult(result) = answer else {
                return Err(failed(
                    "the client answered with something other than an elicitation result",
                ));
            };
            Ok(answer_of(result))
        })
    }

    fn sample(&self, request: SampleRequest) -> InteractFuture<'_, Completion> {
        Box::pin(async move {
            self.declared("sampling")?;
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
            if let Some(system) = request.system {
                params["systemPrompt"] = Value::String(system);
            }
            if let Some(temperature) = request.temperature {
                params["temperature"] = json!(temperature);
            }
            let params: CreateMessageRequestParams =
                serde_json::from_value(params).map_err(failed)?;
            let answer = self
                .peer
                .send_request(ServerRequest::CreateMessageRequest(CreateMessageRequest::new(
                    params,
                )))
                .await
                .map_err(failed)?;
            let ClientResult::CreateMessageResult(result) = answer else {
                return Err(failed("the client answered with something other than a completion"));
            };
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
            Ok(Completion { text, model: Some(result.model), stop_reason: result.stop_reason })
        })
    }
}

/// The approver of a call made by a client of an older protocol version that declared
/// elicitation: the application's approver first, and what it defers goes to the client's user
/// within the call, as a yes/no form with what will run. A client that cannot be asked leaves
/// the call waiting, as before.
#[derive(Debug)]
pub(super) struct ClientApprover {
    pub(super) first: Arc<dyn Approver>,
    pub(super) peer: Peer<RoleServer>,
    /// The name the client called the tool by.
    pub(super) served: String,
}

#[async_trait]
impl Approver for ClientApprover {
    async fn review(&self, request: &ApprovalRequest<'_>) -> ApprovalDecision {
        let decided = self.first.review(request).await;
        if decided != ApprovalDecision::Pending {
            return decided;
        }
        let client = ClientInteractor { peer: self.peer.clone() };
        match client.elicit(approval_form(&self.served, request.arguments)).await {
            Ok(answer) if approves(&answer) == Some(true) => request.approve(),
            Ok(_) => request.deny("the client's user refused the call"),
            Err(InteractError::Unavailable(_)) => ApprovalDecision::Pending,
            Err(error) => request.deny(format!("the client's user could not be asked: {error}")),
        }
    }
}
