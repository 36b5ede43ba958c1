//! How an imported tool's call reaches its server: the request, its progress notifications,
//! and the cancellation sent when the runner gives up on it.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use rmcp::model::{
    CallToolRequest, CallToolRequestParams, CallToolResult, CancelledNotificationParam,
    ClientRequest, ProgressNotificationParam, ProgressToken, RequestId, ServerResult,
};
use rmcp::service::{Peer, PeerRequestOptions, RoleClient, ServiceError};
use serde_json::{Value, json};

use crate::runtime::{ToolCapabilities, ToolError, ToolInvocationContext};

/// Routes `notifications/progress` to the call that owns the progress token.
#[derive(Clone, Default)]
pub(super) struct ProgressRoutes(Arc<Mutex<ProgressMap>>);

type ProgressMap =
    HashMap<ProgressToken, tokio::sync::mpsc::UnboundedSender<ProgressNotificationParam>>;

/// One call's progress; unsubscribes when dropped.
struct ProgressRoute {
    routes: ProgressRoutes,
    token: ProgressToken,
    receiver: tokio::sync::mpsc::UnboundedReceiver<ProgressNotificationParam>,
}

impl ProgressRoutes {
    pub(super) fn route(&self, progress: ProgressNotificationParam) {
        let map = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(sender) = map.get(&progress.progress_token) {
            let _ = sender.send(progress);
        }
    }

    fn subscribe(&self, token: ProgressToken) -> ProgressRoute {
        let (sender, receiver) = tokio::sync::mpsc::unbounded_channel();
        self.0.lock().unwrap_or_else(PoisonError::into_inner).insert(token.clone(), sender);
        ProgressRoute { routes: self.clone(), token, receiver }
    }
}

impl Drop for ProgressRoute {
    fn drop(&mut self) {
        self.routes.0.lock().unwrap_or_else(PoisonError::into_inner).remove(&self.token);
    }
}

/// Tells the server a request was abandoned, unless disarmed: the runner drops a call's future
/// when it is cancelled or runs out of time.
struct CancelOnDrop {
    peer: Peer<RoleClient>,
    id: Option<RequestId>,
}

impl Drop for CancelOnDrop {
    fn drop(&mut self) {
        let (Some(id), Ok(runtime)) = (self.id.take(), tokio::runtime::Handle::try_current())
        else {
            return;
        };
        let peer = self.peer.clone();
        runtime.spawn(async move {
            let reason = "the tool call was cancelled".to_owned();
            let _ = peer
                .notify_cancelled(CancelledNotificationParam::new(Some(id), Some(reason)))
                .await;
        });
    }
}

/// How one imported tool reaches its server.
#[derive(Clone)]
pub(super) struct Remote {
    pub(super) peer: Peer<RoleClient>,
    pub(super) progress: ProgressRoutes,
    /// The tool's name on the server (its id may be shortened).
    pub(super) name: String,
    /// Whether the tool declared an output schema.
    pub(super) structured: bool,
}

impl Remote {
    pub(super) async fn call(
        &self,
        args: Value,
        ctx: &ToolInvocationContext,
        _caps: &ToolCapabilities,
    ) -> Result<Value, ToolError> {
        let Value::Object(arguments) = args else {
            return Err(ToolError::new("the arguments of an MCP tool must be an object"));
        };
        let params = CallToolRequestParams::new(self.name.clone()).with_arguments(arguments);
        let request = ClientRequest::CallToolRequest(CallToolRequest::new(params));
        let handle = self
            .peer
            .send_request_with_option(request, PeerRequestOptions::no_options())
            .await
            .map_err(|_| ToolError::retryable("the MCP server cannot be reached"))?;
        let mut route = self.progress.subscribe(handle.progress_token.clone());
        let mut guard = CancelOnDrop { peer: self.peer.clone(), id: Some(handle.id.clone()) };
        let response = handle.await_response();
        tokio::pin!(response);
        let response = loop {
            tokio::select! {
                biased;
                Some(progress) = route.receiver.recv() => ctx.report_progress(
                    progress.progress,
                    progress.total,
                    progress.message.unwrap_or_default(),
                ),
                response = &mut response => break response,
            }
        };
        guard.id = None;
        match response {
            Ok(ServerResult::CallToolResult(result)) => self.output(result),
            Ok(_) => Err(ToolError::new(
                "the MCP server answered with something other than a tool result",
            )),
            Err(ServiceError::McpError(error)) => Err(ToolError::new(format!(
                "the MCP server refused the call (JSON-RPC error {})",
                error.code.0
            ))),
            Err(_) => Err(ToolError::retryable("the MCP server cannot be reached")),
        }
    }

    fn output(&self, result: CallToolResult) -> Result<Value, ToolError> {
        if result.is_error == Some(true) {
            return Err(ToolError::new("the MCP tool reported an error"));
        }
        match result.structured_content {
            Some(value) => Ok(value),
            None if self.structured => Err(ToolError::new(
                "the MCP tool declares an output schema but returned no structured content",
            )),
            None => Ok(json!({ "content": result.content })),
        }
    }
}
