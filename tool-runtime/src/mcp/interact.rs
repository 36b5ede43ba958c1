//! A served call's questions, put within the call to the MCP client of its session (clients
//! before 2026-07-28): elicitation as `elicitation/create`, sampling as
//! `sampling/createMessage`, roots as `roots/list`, each only when the client declared the
//! capability.
//!
//! rmcp marks sampling deprecated (SEP-2577 plans to replace it); the protocol versions clients
//! speak today, and the official conformance suite, still use it.
#![allow(deprecated)]

use std::sync::Arc;

use async_trait::async_trait;
use rmcp::model::{ClientResult, CreateMessageRequest, ElicitRequest, ServerRequest};
use rmcp::service::{Peer, RoleServer};

use super::rounds::{approval_form, approves};
use super::wire::{
    answer_of, completion_of, elicit_params, failed, roots_of, sampling_params, undeclared,
};
use crate::runner::{ApprovalDecision, ApprovalRequest, Approver};
use crate::runtime::{
    Completion, ElicitRequest as Elicit, ElicitResponse, InteractError, InteractFuture,
    InteractKind, Interactor, Root, SampleRequest,
};

/// The client of one MCP session, answering the questions of the calls it made.
#[derive(Debug)]
pub(super) struct ClientInteractor {
    pub(super) peer: Peer<RoleServer>,
}

impl ClientInteractor {
    /// Whether the client declared what `kind` needs.
    fn offered(&self, kind: InteractKind) -> bool {
        self.peer.peer_info().is_some_and(|info| match kind {
            InteractKind::Elicit => info.capabilities.elicitation.is_some(),
            InteractKind::Sample => info.capabilities.sampling.is_some(),
            InteractKind::Roots => info.capabilities.roots.is_some(),
        })
    }

    fn declared(&self, kind: InteractKind) -> Result<(), InteractError> {
        if self.offered(kind) { Ok(()) } else { Err(undeclared(kind)) }
    }
}

impl Interactor for ClientInteractor {
    fn elicit(&self, request: Elicit) -> InteractFuture<'_, ElicitResponse> {
        Box::pin(async move {
            self.declared(InteractKind::Elicit)?;
            let params = elicit_params(request)?;
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
            self.declared(InteractKind::Sample)?;
            let params = sampling_params(&request)?;
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
            Ok(completion_of(*result))
        })
    }

    fn roots(&self) -> InteractFuture<'_, Vec<Root>> {
        Box::pin(async move {
            self.declared(InteractKind::Roots)?;
            Ok(roots_of(self.peer.list_roots().await.map_err(failed)?))
        })
    }

    fn offers(&self, kind: InteractKind) -> bool {
        self.offered(kind)
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
