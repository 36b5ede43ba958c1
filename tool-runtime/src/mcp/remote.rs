//! How an imported tool's call reaches its server: the request, its progress notifications,
//! and the cancellation sent when the runner gives up on it.

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex, PoisonError};

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as BASE64;
use std::time::Duration;

use rmcp::model::{
    CallToolRequest, CallToolRequestParams, CallToolResult, CancelTaskParams,
    CancelledNotificationParam, ClientRequest, ContentBlock, ElicitRequestParams, GetTaskParams,
    GetTaskRequest, InputRequest, InputRequests, InputResponses, ProgressNotificationParam,
    ProgressToken, RequestId, ResourceContents, ServerResult, Task, TaskPayload, UpdateTaskParams,
    UpdateTaskRequest,
};
#[allow(deprecated)] // sampling: see `wire`
use rmcp::model::{CreateMessageRequestParams, SamplingMessageContentBlock};
use rmcp::service::{Peer, PeerRequestOptions, RoleClient, ServiceError};
use serde_json::{Value, json};

use super::text::capped;
use crate::content::{Part, Resource, ResourceBody, ResourceLink, ToolOutput};
use crate::runtime::{
    ElicitRequest, Interact, InteractError, SampleRequest, SampleRole, ToolCapabilities, ToolError,
    ToolInvocationContext,
};

/// Routes `notifications/progress` to the call that owns the progress token.
///
/// The token is only known once the request has been sent, so a server's first notifications
/// can arrive before their call subscribes: those wait here (the most recent
/// [`EARLY_LIMIT`] of them) and are handed over when the call subscribes.
#[derive(Clone, Default)]
pub(super) struct ProgressRoutes(Arc<Mutex<ProgressMap>>);

/// The most progress notifications of one call forwarded to its context.
pub(super) const MAX_PROGRESS: usize = 100;
/// The most characters of a progress message forwarded (control characters escaped).
pub(super) const PROGRESS_CHARS: usize = 256;

/// How many notifications for tokens no call has subscribed to are kept.
const EARLY_LIMIT: usize = 64;

#[derive(Default)]
struct ProgressMap {
    routes: HashMap<ProgressToken, ProgressSender>,
    early: VecDeque<ProgressNotificationParam>,
}

type ProgressSender = tokio::sync::mpsc::UnboundedSender<ProgressNotificationParam>;

/// One call's progress; unsubscribes when dropped.
struct ProgressRoute {
    routes: ProgressRoutes,
    token: ProgressToken,
    receiver: tokio::sync::mpsc::UnboundedReceiver<ProgressNotificationParam>,
}

impl ProgressRoutes {
    fn lock(&self) -> std::sync::MutexGuard<'_, ProgressMap> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }

    pub(super) fn route(&self, progress: ProgressNotificationParam) {
        let mut map = self.lock();
        if let Some(sender) = map.routes.get(&progress.progress_token) {
            let _ = sender.send(progress);
        } else {
            if map.early.len() == EARLY_LIMIT {
                map.early.pop_front();
            }
            map.early.push_back(progress);
        }
    }

    fn subscribe(&self, token: ProgressToken) -> ProgressRoute {
        let (sender, receiver) = tokio::sync::mpsc::unbounded_channel();
        let mut map = self.lock();
        // Whatever arrived for this token before the call subscribed, in order.
        let early = std::mem::take(&mut map.early);
        for progress in early {
            if progress.progress_token == token {
                let _ = sender.send(progress);
            } else {
                map.early.push_back(progress);
            }
        }
        map.routes.insert(token.clone(), sender);
        drop(map);
        ProgressRoute { routes: self.clone(), token, receiver }
    }
}

impl Drop for ProgressRoute {
    fn drop(&mut self) {
        self.routes.lock().routes.remove(&self.token);
    }
}

/// What a call was waiting on when the runner dropped its future (it was cancelled or ran out
/// of time): a request, or a task of the server's.
enum Abandoned {
    Request(RequestId),
    Task(String),
}

/// Tells the server what a call was waiting on was abandoned, unless disarmed (`what` taken).
struct CancelOnDrop {
    peer: Peer<RoleClient>,
    what: Option<Abandoned>,
}

impl Drop for CancelOnDrop {
    fn drop(&mut self) {
        let (Some(what), Ok(runtime)) = (self.what.take(), tokio::runtime::Handle::try_current())
        else {
            return;
        };
        let peer = self.peer.clone();
        runtime.spawn(async move {
            match what {
                Abandoned::Request(id) => {
                    let reason = "the tool call was cancelled".to_owned();
                    let param = CancelledNotificationParam::new(Some(id), Some(reason));
                    let _ = peer.notify_cancelled(param).await;
                }
                Abandoned::Task(id) => {
                    let _ = peer.cancel_task(CancelTaskParams::new(id)).await;
                }
            }
        });
    }
}

/// The most input-required rounds of one call: a server that keeps asking is cut off.
const MAX_ROUNDS: usize = 10;

/// The most input requests of one round answered.
const MAX_REQUESTS: usize = 16;

/// The most characters of a server's question shown to the user (control characters escaped).
const QUESTION_CHARS: usize = 4096;

/// The server's response as a result, or the tool error that says why there is none.
fn refused(response: Result<ServerResult, ServiceError>) -> Result<ServerResult, ToolError> {
    match response {
        Ok(result) => Ok(result),
        Err(ServiceError::McpError(error)) => Err(ToolError::new(format!(
            "the MCP server refused the call (JSON-RPC error {})",
            error.code.0
        ))),
        Err(_) => Err(ToolError::retryable("the MCP server cannot be reached")),
    }
}

/// The answers to a round's `requests`, each from who answers the questions of the call of
/// `ctx` (the client of the MCP session the call serves, the agent loop's user: a question that
/// waits makes the call wait, and its answer comes back when the call runs again). A
/// question is asked under its key in the round; a completion (sampling) and the roots go to
/// what answers them for the call (`interact`: the serving session's client, the backend the
/// application bound); with nothing that lists roots, the list is empty.
async fn answer(
    requests: InputRequests,
    ctx: &ToolInvocationContext,
    interact: Option<&Interact>,
) -> Result<InputResponses, ToolError> {
    if requests.len() > MAX_REQUESTS {
        return Err(ToolError::new(format!(
            "the MCP server asked {} questions at once, more than {MAX_REQUESTS}",
            requests.len()
        )));
    }
    let mut responses = InputResponses::new();
    for (key, request) in requests {
        let response = match request {
            InputRequest::Elicitation(elicit) => {
                let ElicitRequestParams::FormElicitationParams {
                    message, requested_schema, ..
                } = elicit.params
                else {
                    return Err(ToolError::new(
                        "the MCP server asks to open a URL, which this client does not do",
                    ));
                };
                let Ok(Value::Object(schema)) = serde_json::to_value(requested_schema) else {
                    return Err(ToolError::new("the MCP server's question has no form"));
                };
                let question = ElicitRequest {
                    message: capped(&message, QUESTION_CHARS),
                    schema,
                    key: Some(key.clone()),
                };
                let asker = ctx.questions().ok_or_else(|| {
                    ToolError::new(
                        "the MCP server asks a question and nothing here answers it (the agent loop asks its user when the catalog binds `Interact`)",
                    )
                })?;
                let answer = asker.elicit(question).await?;
                serde_json::to_value(answer).unwrap_or(Value::Null)
            }
            InputRequest::ListRoots(_) => {
                let roots = match interact {
                    Some(interact) => match interact.roots().await {
                        Ok(roots) => roots,
                        Err(InteractError::Unavailable(_)) => Vec::new(),
                        Err(error) => return Err(error.into()),
                    },
                    None => Vec::new(),
                };
                json!({"roots": roots})
            }
            #[allow(deprecated)] // sampling: see `wire`
            InputRequest::CreateMessage(create) => {
                let interact = interact.ok_or_else(|| {
                    ToolError::new(
                        "the MCP server asks for a completion and nothing here gives one",
                    )
                })?;
                let completion = interact.sample(sample_request(&create.params)?).await?;
                json!({
                    "role": "assistant",
                    "content": {"type": "text", "text": completion.text},
                    "model": completion.model.unwrap_or_default(),
                    "stopReason": completion.stop_reason,
                })
            }
            _ => return Err(ToolError::new("the MCP server asks for input of an unknown kind")),
        };
        responses.insert(key, response);
    }
    Ok(responses)
}

/// A server's `sampling/createMessage` request as this crate asks for a completion: its text
/// messages (each cut to [`QUESTION_CHARS`]), instructions and budget. A message that is not
/// text is refused.
#[allow(deprecated)] // sampling: see `wire`
fn sample_request(params: &CreateMessageRequestParams) -> Result<SampleRequest, ToolError> {
    let Some((first, rest)) = params.messages.split_first() else {
        return Err(ToolError::new("the MCP server asks for a completion of no messages"));
    };
    let text = |message: &rmcp::model::SamplingMessage| -> Result<(SampleRole, String), ToolError> {
        let role = match message.role {
            rmcp::model::Role::User => SampleRole::User,
            rmcp::model::Role::Assistant => SampleRole::Assistant,
        };
        let mut text = String::new();
        for block in message.content.clone().into_vec() {
            let SamplingMessageContentBlock::Text(block) = block else {
                return Err(ToolError::new(
                    "the MCP server asks for a completion of more than text, which this client does not give",
                ));
            };
            text.push_str(&block.text);
        }
        Ok((role, capped(&text, QUESTION_CHARS)))
    };
    let (role, first) = text(first)?;
    let mut request = SampleRequest::new(first).max_tokens(params.max_tokens);
    request.messages[0].role = role;
    for message in rest {
        let (role, text) = text(message)?;
        request = request.message(role, text);
    }
    if let Some(system) = &params.system_prompt {
        request = request.system(capped(system, QUESTION_CHARS));
    }
    if let Some(temperature) = params.temperature {
        request = request.temperature(temperature);
    }
    Ok(request)
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
        caps: &ToolCapabilities,
    ) -> Result<ToolOutput, ToolError> {
        let interact = caps.get::<Interact>().ok();
        let Value::Object(arguments) = args else {
            return Err(ToolError::new("the arguments of an MCP tool must be an object"));
        };
        let mut params = CallToolRequestParams::new(self.name.clone()).with_arguments(arguments);
        // A server of 2026-07-28 may ask for input first (an approval, a question): each round
        // is answered by who answers this call's questions, and the call sent again.
        for _ in 0..MAX_ROUNDS {
            let request = ClientRequest::CallToolRequest(CallToolRequest::new(params.clone()));
            match self.send(request, ctx).await? {
                ServerResult::CallToolResult(result) => return self.output(result),
                ServerResult::InputRequiredResult(asked) => {
                    let requests = asked.input_requests.unwrap_or_default();
                    params.input_responses = Some(answer(requests, ctx, interact).await?);
                    params.request_state = asked.request_state;
                }
                ServerResult::CreateTaskResult(created) => {
                    return self.follow(created.task, ctx, interact).await;
                }
                _ => {
                    return Err(ToolError::new(
                        "the MCP server answered with something other than a tool result",
                    ));
                }
            }
        }
        Err(ToolError::new(format!(
            "the MCP server asked for input more than {MAX_ROUNDS} times for one call"
        )))
    }

    /// Sends `request` and waits for its response, forwarding its progress to `ctx`; tells the
    /// server when the call is dropped before it answers.
    async fn send(
        &self,
        request: ClientRequest,
        ctx: &ToolInvocationContext,
    ) -> Result<ServerResult, ToolError> {
        let handle = self
            .peer
            .send_request_with_option(request, PeerRequestOptions::no_options())
            .await
            .map_err(|_| ToolError::retryable("the MCP server cannot be reached"))?;
        // Notifications that beat the subscription were kept for it (`ProgressRoutes`).
        let mut route = self.progress.subscribe(handle.progress_token.clone());
        let mut guard = CancelOnDrop {
            peer: self.peer.clone(),
            what: Some(Abandoned::Request(handle.id.clone())),
        };
        let response = handle.await_response();
        tokio::pin!(response);
        let mut forwarded = 0;
        let response = loop {
            tokio::select! {
                biased;
                Some(progress) = route.receiver.recv() => {
                    // Past the cap, notifications are still drained, never forwarded.
                    if forwarded < MAX_PROGRESS {
                        forwarded += 1;
                        let message = progress.message.as_deref().unwrap_or_default();
                        ctx.report_progress(
                            progress.progress,
                            progress.total,
                            capped(message, PROGRESS_CHARS),
                        );
                    }
                }
                response = &mut response => break response,
            }
        };
        guard.what = None;
        refused(response)
    }

    /// Follows the server's task `task` to its end: polled at the interval it asks for (within
    /// 50 ms to 5 s), its input requests answered as a round's are, its result read as a call's.
    /// A call dropped before (cancelled, out of time) cancels the task.
    async fn follow(
        &self,
        task: Task,
        ctx: &ToolInvocationContext,
        interact: Option<&Interact>,
    ) -> Result<ToolOutput, ToolError> {
        let id = task.task_id;
        let every = Duration::from_millis(task.poll_interval_ms.unwrap_or(500).clamp(50, 5000));
        let mut guard =
            CancelOnDrop { peer: self.peer.clone(), what: Some(Abandoned::Task(id.clone())) };
        loop {
            tokio::time::sleep(every).await;
            let request =
                ClientRequest::GetTaskRequest(GetTaskRequest::new(GetTaskParams::new(&id)));
            let ServerResult::GetTaskResult(got) = self.send(request, ctx).await? else {
                return Err(ToolError::new(
                    "the MCP server answered tasks/get with something else",
                ));
            };
            match got.task.payload {
                TaskPayload::InputRequired { input_requests } => {
                    let responses = answer(input_requests, ctx, interact).await?;
                    let update = UpdateTaskParams::new(&id, responses);
                    let request = ClientRequest::UpdateTaskRequest(UpdateTaskRequest::new(update));
                    self.send(request, ctx).await?;
                }
                TaskPayload::Completed { result } => {
                    guard.what = None;
                    let result: CallToolResult = serde_json::from_value(Value::Object(result))
                        .map_err(|_| {
                            ToolError::new("the MCP server's task result is not a tool result")
                        })?;
                    return self.output(result);
                }
                TaskPayload::Failed { .. } => {
                    guard.what = None;
                    return Err(ToolError::new("the MCP server's task failed"));
                }
                TaskPayload::Cancelled => {
                    guard.what = None;
                    return Err(ToolError::new("the MCP server cancelled the task"));
                }
                _ => {}
            }
        }
    }

    /// The server's result as parts: each content block becomes the part of its kind, in order
    /// (an image stays an image), and `structuredContent` the JSON part, which the runner
    /// validates against the imported output schema. The text block a server adds to repeat its
    /// structured content (as the protocol advises, for older clients) is left out: the JSON
    /// part says it once.
    fn output(&self, result: CallToolResult) -> Result<ToolOutput, ToolError> {
        if result.is_error == Some(true) {
            return Err(ToolError::new("the MCP tool reported an error"));
        }
        let structured = match result.structured_content {
            Some(value) if self.structured => Some(value),
            None if self.structured => {
                return Err(ToolError::new(
                    "the MCP tool declares an output schema but returned no structured content",
                ));
            }
            // Without a declared schema nothing could check it: only the blocks count.
            _ => None,
        };
        let mut output = ToolOutput::new();
        for block in result.content {
            if let (Some(value), ContentBlock::Text(text)) = (&structured, &block)
                && serde_json::from_str::<Value>(&text.text).is_ok_and(|parsed| parsed == *value)
            {
                continue;
            }
            output.push(part(block)?);
        }
        if let Some(value) = structured {
            output.push(Part::Json(value));
        }
        Ok(output)
    }
}

/// One MCP content block as a part. Base64 that does not decode is the server's error, named by
/// the block's kind, never its data.
fn part(block: ContentBlock) -> Result<Part, ToolError> {
    let decode = |kind: &str, data: &str| {
        BASE64.decode(data).map_err(|_| {
            ToolError::new(format!("the MCP tool returned {kind} data that is not valid base64"))
        })
    };
    Ok(match block {
        ContentBlock::Text(text) => Part::Text(text.text),
        ContentBlock::Image(image) => Part::image(image.mime_type, decode("image", &image.data)?),
        ContentBlock::Audio(audio) => Part::audio(audio.mime_type, decode("audio", &audio.data)?),
        ContentBlock::Resource(embedded) => Part::from(match embedded.resource {
            ResourceContents::TextResourceContents { uri, mime_type, text, .. } => {
                Resource { uri, mime_type, body: ResourceBody::Text(text) }
            }
            ResourceContents::BlobResourceContents { uri, mime_type, blob, .. } => Resource {
                uri,
                mime_type,
                body: ResourceBody::Bytes(decode("resource", &blob)?.into()),
            },
            _ => return Err(unknown()),
        }),
        ContentBlock::ResourceLink(link) => Part::from(ResourceLink {
            uri: link.uri,
            name: link.name,
            mime_type: link.mime_type,
            description: link.description,
        }),
        _ => return Err(unknown()),
    })
}

/// A kind of block this version of MCP does not know: refused, not dropped.
fn unknown() -> ToolError {
    ToolError::new("the MCP tool returned a content block of an unknown kind")
}

#[cfg(test)]
mod tests {
    use rmcp::model::{NumberOrString, ProgressNotificationParam, ProgressToken};

    use super::{EARLY_LIMIT, ProgressRoutes};

    fn progress(token: i64, progress: f64) -> ProgressNotificationParam {
        ProgressNotificationParam::new(ProgressToken(NumberOrString::Number(token)), progress)
    }

    fn received(route: &mut super::ProgressRoute) -> Vec<f64> {
        std::iter::from_fn(|| route.receiver.try_recv().ok()).map(|p| p.progress).collect()
    }

    #[test]
    fn notifications_that_beat_the_subscription_are_delivered_in_order() {
        let routes = ProgressRoutes::default();
        routes.route(progress(1, 0.1));
        routes.route(progress(2, 0.5));
        routes.route(progress(1, 0.2));
        let mut first = routes.subscribe(progress(1, 0.0).progress_token);
        routes.route(progress(1, 0.3));
        assert_eq!(received(&mut first), [0.1, 0.2, 0.3]);
        let mut second = routes.subscribe(progress(2, 0.0).progress_token);
        assert_eq!(received(&mut second), [0.5]);
        assert!(routes.lock().early.is_empty());
        drop(first);
        assert_eq!(routes.lock().routes.len(), 1, "a dropped route unsubscribes");
    }

    #[test]
    fn unclaimed_notifications_are_bounded() {
        let routes = ProgressRoutes::default();
        for n in 0..1000 {
            routes.route(progress(n, 1.0));
        }
        assert_eq!(routes.lock().early.len(), EARLY_LIMIT);
        let mut last = routes.subscribe(progress(999, 0.0).progress_token);
        assert_eq!(received(&mut last), [1.0]);
        let mut evicted = routes.subscribe(progress(0, 0.0).progress_token);
        assert!(received(&mut evicted).is_empty());
    }
}
