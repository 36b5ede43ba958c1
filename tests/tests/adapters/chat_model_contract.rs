//! A `ChatModel` written from the public docs alone, over a fake transport: it encodes the
//! request through the adapter, "sends" the bytes, and decodes canned provider bytes through
//! the adapter with the request's tools. It never calls a raise or normalise helper, and the
//! agent loop still runs a strict-mode call whose optional field came back as `null`: decoding
//! with the tools is the one place it is raised (the loop does not raise it again).

use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use serde_json::{Value, json};
use tool_runtime::adapters::{
    Adapter, Anthropic, OpenAiChat, RequestOptions, StreamEvent, Usage, openai_sse,
};
use tool_runtime::agent::{
    Agent, AgentEvent, ChatModel, Message, ModelError, ModelErrorKind, ModelRequest, ModelTurn,
    StopReason,
};
use tool_runtime::prelude::*;
use tool_tests::fixtures::context;

/// Search the documentation.
#[tool(name = "docs__search", effect = read_only, redact = ["hits"])]
struct Search {
    /// Words to look for.
    query: String,
    /// How many hits at most (absent: 3).
    #[serde(default = "three")]
    limit: u8,
}

fn three() -> u8 {
    3
}

#[derive(Serialize, ToolSchema)]
struct Hits {
    hits: Vec<String>,
}

impl Tool for Search {
    type Output = Hits;
    async fn run(self, _: &ToolInvocationContext, _: &ToolCapabilities) -> Result<Hits, ToolError> {
        Ok(Hits { hits: vec![format!("{} x{}", self.query, self.limit)] })
    }
}

/// How the fake model decodes: the documented way, or the bare session (to show what the
/// documented way is for).
#[derive(Debug, Clone, Copy, PartialEq)]
enum Decoding {
    WithTools,
    Bare,
}

/// The fake transport: what was sent, and the provider bytes to answer with, one per request.
#[derive(Debug)]
struct FakeTransport {
    sent: Mutex<Vec<Vec<u8>>>,
    replies: Mutex<Vec<Vec<u8>>>,
}

impl FakeTransport {
    fn new(replies: Vec<Vec<u8>>) -> Self {
        Self { sent: Mutex::default(), replies: Mutex::new(replies) }
    }

    /// "POST": keeps the body, hands back the next reply in pieces as a network would.
    fn post(&self, body: Vec<u8>) -> Option<Vec<Vec<u8>>> {
        self.sent.lock().unwrap().push(body);
        let mut replies = self.replies.lock().unwrap();
        if replies.is_empty() {
            return None;
        }
        Some(replies.remove(0).chunks(5).map(<[u8]>::to_vec).collect())
    }
}

/// A model client written against `ChatModel`'s and `Adapter`'s docs.
#[derive(Debug)]
struct FakeModel<A> {
    adapter: A,
    options: RequestOptions,
    transport: FakeTransport,
    decoding: Decoding,
}

#[async_trait]
impl<A: Adapter> ChatModel for FakeModel<A> {
    async fn respond(
        &self,
        request: ModelRequest<'_>,
        on_event: &(dyn Fn(StreamEvent) + Send + Sync),
    ) -> Result<ModelTurn, ModelError> {
        let body = self
            .adapter
            .encode_body(&request, &self.options)
            .map_err(|error| ModelError::new(ModelErrorKind::Request, error.to_string()))?;
        let pieces = self.transport.post(body).ok_or_else(|| {
            ModelError::new(ModelErrorKind::ScriptExhausted, "the fake transport has no reply")
        })?;
        let mut session = match self.decoding {
            Decoding::WithTools => self.adapter.stream_for(request.tools),
            Decoding::Bare => self.adapter.stream(),
        };
        for piece in &pieces {
            session.feed(piece).into_iter().for_each(on_event);
        }
        session.close().into_iter().for_each(on_event);
        Ok(ModelTurn::from(session.finish()))
    }
}

fn runner() -> ToolRunner {
    ToolRunner::builder(ToolCatalog::builder().register::<Search>().build().unwrap())
        .policy(ToolPolicy::allowing(["docs__search"]))
        .build()
}

/// An OpenAI stream calling `docs__search` with the strict-mode `null` for `limit`, ending with
/// a usage chunk; then a stream that answers.
fn openai_replies() -> Vec<Vec<u8>> {
    let mut calls =
        openai_sse::calls(&[("call_1", "docs__search", r#"{"query": "wire", "limit": null}"#)]);
    let done = b"data: [DONE]\n\n";
    calls.truncate(calls.len() - done.len());
    calls.extend_from_slice(
        b"data: {\"choices\":[],\"usage\":{\"prompt_tokens\":40,\"completion_tokens\":9}}\n\n",
    );
    calls.extend_from_slice(done);
    vec![calls, openai_sse::text("Found: wire x3.")]
}

async fn run<A: Adapter + 'static>(model: Arc<FakeModel<A>>) -> tool_runtime::agent::AgentOutput {
    let agent = Agent::new(model, runner());
    let ctx = context("run-1", "user-1", "tenant-1");
    agent.run(vec![Message::user("Find wire.")], &ctx, &|_| {}).await
}

#[tokio::test]
async fn a_documented_model_runs_a_strict_call_with_a_null_raised_away() {
    let model = Arc::new(FakeModel {
        adapter: OpenAiChat::new().strict(true),
        options: RequestOptions::new("gpt-4o-mini"),
        transport: FakeTransport::new(openai_replies()),
        decoding: Decoding::WithTools,
    });
    let events = Arc::new(Mutex::new(Vec::new()));
    let sink = {
        let events = Arc::clone(&events);
        move |event: AgentEvent| events.lock().unwrap().push(event)
    };
    let agent = Agent::new(Arc::clone(&model) as Arc<dyn ChatModel>, runner());
    let ctx = context("run-1", "user-1", "tenant-1");
    let output = agent.run(vec![Message::user("Find wire.")], &ctx, &sink).await;

    assert_eq!(output.done.stop, StopReason::Answered);
    assert_eq!(output.done.answer, "Found: wire x3.");
    assert_eq!(output.done.records.len(), 1);
    // `limit` was absent after raising, so its serde default applied.
    assert_eq!(output.done.records[0].result, Some(json!({"hits": ["wire x3"]})));
    // Usage came out of the adapter, into the turn and the run's total.
    assert_eq!(output.done.usage, Usage { input_tokens: 40, output_tokens: 9 });
    assert!(events.lock().unwrap().iter().any(|event| matches!(
        event,
        AgentEvent::Usage { usage } if *usage == Usage { input_tokens: 40, output_tokens: 9 }
    )));

    // What went over the fake wire was encoded whole by the adapter: strict tools, the
    // conversation, the stream flags; the second request carries the call and its result.
    let sent = model.transport.sent.lock().unwrap();
    assert_eq!(sent.len(), 2);
    let first: Value = serde_json::from_slice(&sent[0]).unwrap();
    assert_eq!(first["model"], json!("gpt-4o-mini"));
    assert_eq!(first["stream"], json!(true));
    assert_eq!(first["messages"], json!([{"role": "user", "content": "Find wire."}]));
    assert_eq!(first["tools"][0]["function"]["strict"], json!(true));
    let second: Value = serde_json::from_slice(&sent[1]).unwrap();
    let messages = second["messages"].as_array().unwrap();
    assert_eq!(messages.len(), 3);
    assert_eq!(messages[1]["tool_calls"][0]["id"], json!("call_1"));
    assert_eq!(messages[2]["tool_call_id"], json!("call_1"));
}

/// The `CallReady` arguments of the first OpenAI reply fed in pieces to `session`.
fn ready_arguments(mut session: Box<dyn tool_runtime::adapters::StreamSession + '_>) -> Vec<Value> {
    let mut events = Vec::new();
    for piece in openai_replies()[0].chunks(5) {
        events.extend(session.feed(piece));
    }
    events.extend(session.close());
    events
        .into_iter()
        .filter_map(|event| match event {
            StreamEvent::CallReady { call, .. } => call.arguments.value().cloned(),
            _ => None,
        })
        .collect()
}

#[test]
fn stream_for_raises_the_streamed_calls_and_stream_does_not() {
    // The run above shows `stream_for` raised the turn; its streamed events, which only the
    // model's caller sees, are raised too.
    let adapter = OpenAiChat::new().strict(true);
    let specs = [Search::spec()];
    assert_eq!(ready_arguments(adapter.stream_for(&specs)), [json!({"query": "wire"})]);
    assert_eq!(ready_arguments(adapter.stream()), [json!({"query": "wire", "limit": null})]);
}

#[tokio::test]
async fn a_model_that_decodes_without_the_tools_sends_its_null_to_validation() {
    // The same model decoding with the bare session, as a model that forgot `stream_for`
    // would: the loop takes the turn as it is, so the runner sees `"limit": null` and refuses
    // it, and the model gets the validation error to correct itself from.
    let model = Arc::new(FakeModel {
        adapter: OpenAiChat::new().strict(true),
        options: RequestOptions::new("gpt-4o-mini"),
        transport: FakeTransport::new(openai_replies()),
        decoding: Decoding::Bare,
    });
    let output = run(model).await;
    assert_eq!(output.done.stop, StopReason::Answered);
    assert_eq!(output.done.records.len(), 1);
    assert_eq!(output.done.records[0].result, None);
    let error = output.done.records[0].error.as_ref().map(|error| error.code);
    assert_eq!(error, Some(ToolErrorCode::Validation));
}

#[tokio::test]
async fn the_same_model_over_anthropic_bytes() {
    let call = concat!(
        "event: message_start\n",
        "data: {\"type\":\"message_start\",\"message\":{\"usage\":{\"input_tokens\":30,\"output_tokens\":1}}}\n\n",
        "event: content_block_start\n",
        "data: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"tool_use\",",
        "\"id\":\"toolu_1\",\"name\":\"docs__search\",\"input\":{}}}\n\n",
        "event: content_block_delta\n",
        "data: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"input_json_delta\",",
        "\"partial_json\":\"{\\\"query\\\": \\\"wire\\\", \\\"limit\\\": null}\"}}\n\n",
        "event: content_block_stop\n",
        "data: {\"type\":\"content_block_stop\",\"index\":0}\n\n",
        "event: message_delta\n",
        "data: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"tool_use\"},\"usage\":{\"output_tokens\":12}}\n\n",
        "event: message_stop\n",
        "data: {\"type\":\"message_stop\"}\n\n",
    );
    let answer = concat!(
        "event: message_start\n",
        "data: {\"type\":\"message_start\",\"message\":{\"usage\":{\"input_tokens\":50,\"output_tokens\":1}}}\n\n",
        "event: content_block_start\n",
        "data: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n",
        "event: content_block_delta\n",
        "data: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"Found it.\"}}\n\n",
        "event: message_delta\n",
        "data: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\"},\"usage\":{\"output_tokens\":4}}\n\n",
        "event: message_stop\n",
        "data: {\"type\":\"message_stop\"}\n\n",
    );
    let model = Arc::new(FakeModel {
        adapter: Anthropic::new().strict(true),
        options: RequestOptions::new("claude-haiku-4-5").max_tokens(512),
        transport: FakeTransport::new(vec![call.into(), answer.into()]),
        decoding: Decoding::WithTools,
    });
    let output = run(Arc::clone(&model)).await;
    assert_eq!(output.done.stop, StopReason::Answered);
    assert_eq!(output.done.answer, "Found it.");
    assert_eq!(output.done.records[0].result, Some(json!({"hits": ["wire x3"]})));
    assert_eq!(output.done.usage, Usage { input_tokens: 80, output_tokens: 16 });
    let sent = model.transport.sent.lock().unwrap();
    let first: Value = serde_json::from_slice(&sent[0]).unwrap();
    assert_eq!(first["max_tokens"], json!(512));
    assert_eq!(first["tools"][0]["strict"], json!(true));
}
