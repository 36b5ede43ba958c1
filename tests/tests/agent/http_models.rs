//! The HTTP model clients against a real HTTP/1.1 server on loopback that replays recorded
//! provider streams: streamed calls and text, retries (429 with `retry-after`, 500s, a hang-up
//! before any byte), provider errors without the key, cut and stalled streams, and the agent
//! loop end to end.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tool_runtime::adapters::{FinishReason, StreamEvent, ToolChoice};
use tool_runtime::agent::{
    Agent, AnthropicMessages, ChatModel, HttpConfigError, Message, ModelError, ModelErrorKind,
    ModelRequest, ModelTurn, OpenAiCompatible, RetryPolicy, StopReason, Timeouts, Usage,
};
use tool_runtime::catalog::ToolCatalog;
use tool_runtime::policy::ToolPolicy;
use tool_runtime::prelude::*;
use tool_runtime::runner::ToolRunner;
use tool_tests::fixtures::context;
use tracing_subscriber::layer::SubscriberExt;

const KEY: &str = "sk-test-SECRET-0123456789";

// ---------------------------------------------------------------------------------------------
// Recorded bodies, written from the providers' documented stream formats.

/// OpenAI Chat Completions: the model calls `math__add` with `{"a": 2, "b": 40}`, then a usage
/// chunk.
const OPENAI_CALL: &[&str] = &[
    "data: {\"id\":\"chatcmpl-1\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"gpt-4o-mini\",\"system_fingerprint\":\"fp\",\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":null,\"tool_calls\":[{\"index\":0,\"id\":\"call_abc\",\"type\":\"function\",\"function\":{\"name\":\"math__add\",\"arguments\":\"\"}}],\"refusal\":null},\"logprobs\":null,\"finish_reason\":null}],\"usage\":null}\n\n",
    "data: {\"id\":\"chatcmpl-1\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"gpt-4o-mini\",\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"function\":{\"arguments\":\"{\\\"a\\\": 2,\"}}]},\"logprobs\":null,\"finish_reason\":null}],\"usage\":null}\n\n",
    "data: {\"id\":\"chatcmpl-1\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"gpt-4o-mini\",\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"function\":{\"arguments\":\" \\\"b\\\": 40}\"}}]},\"logprobs\":null,\"finish_reason\":null}],\"usage\":null}\n\n",
    "data: {\"id\":\"chatcmpl-1\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"gpt-4o-mini\",\"choices\":[{\"index\":0,\"delta\":{},\"logprobs\":null,\"finish_reason\":\"tool_calls\"}],\"usage\":null}\n\n",
    "data: {\"id\":\"chatcmpl-1\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"gpt-4o-mini\",\"choices\":[],\"usage\":{\"prompt_tokens\":81,\"completion_tokens\":18,\"total_tokens\":99}}\n\n",
    "data: [DONE]\n\n",
];

/// OpenAI Chat Completions: the model answers in text, then a usage chunk.
const OPENAI_TEXT: &[&str] = &[
    "data: {\"id\":\"chatcmpl-2\",\"object\":\"chat.completion.chunk\",\"created\":2,\"model\":\"gpt-4o-mini\",\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"\"},\"finish_reason\":null}],\"usage\":null}\n\n",
    "data: {\"id\":\"chatcmpl-2\",\"object\":\"chat.completion.chunk\",\"created\":2,\"model\":\"gpt-4o-mini\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"2 + 40 \"},\"finish_reason\":null}],\"usage\":null}\n\n",
    "data: {\"id\":\"chatcmpl-2\",\"object\":\"chat.completion.chunk\",\"created\":2,\"model\":\"gpt-4o-mini\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"= 42.\"},\"finish_reason\":null}],\"usage\":null}\n\n",
    "data: {\"id\":\"chatcmpl-2\",\"object\":\"chat.completion.chunk\",\"created\":2,\"model\":\"gpt-4o-mini\",\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}],\"usage\":null}\n\n",
    "data: {\"id\":\"chatcmpl-2\",\"object\":\"chat.completion.chunk\",\"created\":2,\"model\":\"gpt-4o-mini\",\"choices\":[],\"usage\":{\"prompt_tokens\":120,\"completion_tokens\":7,\"total_tokens\":127}}\n\n",
    "data: [DONE]\n\n",
];

/// Anthropic Messages: a sentence, then a `math__add` call, ended by `tool_use`.
const ANTHROPIC_CALL: &[&str] = &[
    "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_1\",\"type\":\"message\",\"role\":\"assistant\",\"model\":\"claude-sonnet-4-5\",\"content\":[],\"stop_reason\":null,\"stop_sequence\":null,\"usage\":{\"input_tokens\":472,\"cache_read_input_tokens\":8,\"output_tokens\":2}}}\n\n",
    "event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n",
    "event: ping\ndata: {\"type\": \"ping\"}\n\n",
    "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"Let me add.\"}}\n\n",
    "event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0}\n\n",
    "event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":1,\"content_block\":{\"type\":\"tool_use\",\"id\":\"toolu_01\",\"name\":\"math__add\",\"input\":{}}}\n\n",
    "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":1,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"{\\\"a\\\": 2, \"}}\n\n",
    "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":1,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"\\\"b\\\": 40}\"}}\n\n",
    "event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":1}\n\n",
    "event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"tool_use\",\"stop_sequence\":null},\"usage\":{\"output_tokens\":89}}\n\n",
    "event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n",
];

// ---------------------------------------------------------------------------------------------
// A small HTTP/1.1 server: one scripted reply per connection, every request recorded.

enum Reply {
    /// A whole response.
    Full { status: u16, headers: Vec<(&'static str, &'static str)>, body: String },
    /// `200 text/event-stream`, chunked, one chunk per piece, properly ended.
    Stream(&'static [&'static str]),
    /// Like `Stream` with the first `n` pieces, then the connection closes mid-body.
    Cut(&'static [&'static str], usize),
    /// Like `Cut`, but the connection stays open and silent for a while.
    Stall(&'static [&'static str], usize),
    /// The connection closes before any response.
    HangUp,
}

#[derive(Debug)]
struct Seen {
    path: String,
    headers: HashMap<String, String>,
    body: Value,
}

struct Server {
    base: String,
    seen: Arc<Mutex<Vec<Seen>>>,
}

impl Server {
    /// `127.0.0.1:port`.
    fn authority(&self) -> &str {
        self.base.trim_start_matches("http://")
    }

    async fn start(replies: Vec<Reply>) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let base = format!("http://{}", listener.local_addr().unwrap());
        let seen = Arc::new(Mutex::new(Vec::new()));
        let record = seen.clone();
        tokio::spawn(async move {
            for reply in replies {
                let (mut socket, _) = listener.accept().await.unwrap();
                if let Some(request) = read_request(&mut socket).await {
                    record.lock().unwrap().push(request);
                }
                write_reply(socket, reply).await;
            }
        });
        Self { base, seen }
    }

    fn requests(&self) -> usize {
        self.seen.lock().unwrap().len()
    }

    fn request(&self, index: usize) -> (String, HashMap<String, String>, Value) {
        let seen = self.seen.lock().unwrap();
        let request = &seen[index];
        (request.path.clone(), request.headers.clone(), request.body.clone())
    }
}

async fn read_request(socket: &mut TcpStream) -> Option<Seen> {
    let mut buffer = Vec::new();
    let mut piece = [0u8; 4096];
    let head_end = loop {
        if let Some(at) = buffer.windows(4).position(|window| window == b"\r\n\r\n") {
            break at + 4;
        }
        let read = socket.read(&mut piece).await.ok()?;
        if read == 0 {
            return None;
        }
        buffer.extend_from_slice(&piece[..read]);
    };
    let head = String::from_utf8(buffer[..head_end].to_vec()).unwrap();
    let mut lines = head.split("\r\n");
    let path = lines.next().unwrap().split(' ').nth(1).unwrap().to_owned();
    let headers: HashMap<String, String> = lines
        .filter_map(|line| line.split_once(':'))
        .map(|(name, value)| (name.trim().to_ascii_lowercase(), value.trim().to_owned()))
        .collect();
    let length: usize = headers.get("content-length").map_or(0, |value| value.parse().unwrap());
    while buffer.len() < head_end + length {
        let read = socket.read(&mut piece).await.ok()?;
        if read == 0 {
            return None;
        }
        buffer.extend_from_slice(&piece[..read]);
    }
    let body = serde_json::from_slice(&buffer[head_end..head_end + length]).unwrap();
    Some(Seen { path, headers, body })
}

async fn write_reply(mut socket: TcpStream, reply: Reply) {
    let stream_head = "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncache-control: no-cache\r\ntransfer-encoding: chunked\r\nconnection: close\r\n\r\n";
    let chunk = |piece: &str| format!("{:x}\r\n{piece}\r\n", piece.len());
    match reply {
        Reply::Full { status, headers, body } => {
            let mut out = format!(
                "HTTP/1.1 {status} Whatever\r\ncontent-length: {}\r\nconnection: close\r\n",
                body.len()
            );
            for (name, value) in headers {
                out.push_str(&format!("{name}: {value}\r\n"));
            }
            out.push_str("\r\n");
            out.push_str(&body);
            socket.write_all(out.as_bytes()).await.unwrap();
        }
        Reply::Stream(pieces) => {
            socket.write_all(stream_head.as_bytes()).await.unwrap();
            for piece in pieces {
                socket.write_all(chunk(piece).as_bytes()).await.unwrap();
                socket.flush().await.unwrap();
            }
            socket.write_all(b"0\r\n\r\n").await.unwrap();
        }
        Reply::Cut(pieces, n) | Reply::Stall(pieces, n) => {
            socket.write_all(stream_head.as_bytes()).await.unwrap();
            for piece in &pieces[..n] {
                socket.write_all(chunk(piece).as_bytes()).await.unwrap();
            }
            socket.flush().await.unwrap();
            if matches!(reply, Reply::Stall(..)) {
                tokio::time::sleep(Duration::from_secs(2)).await;
            }
        }
        Reply::HangUp => {}
    }
    let _ = socket.shutdown().await;
}

// ---------------------------------------------------------------------------------------------
// The tool and helpers.

/// Add two numbers.
#[tool(name = "math__add", effect = read_only, redact = ["sum"])]
struct Add {
    a: i64,
    b: i64,
}

#[derive(Serialize, ToolSchema)]
struct Sum {
    sum: i64,
}

impl Tool for Add {
    type Output = Sum;
    async fn run(self, _: &ToolInvocationContext, _: &ToolCapabilities) -> Result<Sum, ToolError> {
        Ok(Sum { sum: self.a + self.b })
    }
}

fn fast_retry() -> RetryPolicy {
    let mut retry = RetryPolicy::default();
    retry.initial_backoff = Duration::from_millis(5);
    retry.max_backoff = Duration::from_millis(20);
    retry
}

fn openai(server: &Server) -> OpenAiCompatible {
    OpenAiCompatible::builder()
        .base_url(format!("{}/v1/", server.base))
        .api_key(KEY)
        .model("gpt-4o-mini")
        .retry(fast_retry())
        .build()
        .unwrap()
}

fn anthropic(server: &Server) -> AnthropicMessages {
    AnthropicMessages::builder()
        .base_url(&server.base)
        .api_key(KEY)
        .max_tokens(512)
        .retry(fast_retry())
        .build()
        .unwrap()
}

/// Asks `model` once, with the `math__add` tool, and returns the turn and the streamed events.
async fn ask(model: &dyn ChatModel) -> (Result<ModelTurn, ModelError>, Vec<String>) {
    let spec = Add::spec();
    let messages = [Message::system("Be exact."), Message::user("What is 2 + 40?")];
    let request = ModelRequest {
        messages: &messages,
        tools: &[spec],
        choice: &ToolChoice::auto(),
        search: None,
    };
    let events = Mutex::new(Vec::new());
    let on_event = |event: StreamEvent| {
        let summary = match event {
            StreamEvent::CallStarted { name, .. } => format!("call {name}"),
            StreamEvent::TextDelta(text) => format!("text {text}"),
            StreamEvent::CallReady { call, .. } => format!("ready {}", call.name),
            StreamEvent::ArgumentsDelta { .. } => "args".to_owned(),
            StreamEvent::Finish(finish) => format!("finish {}", finish.reason),
            other => format!("{other:?}"),
        };
        events.lock().unwrap().push(summary);
    };
    let turn = model.respond(request, &on_event).await;
    (turn, events.into_inner().unwrap())
}

fn assert_add_call(turn: &ModelTurn) {
    assert_eq!(turn.decoded.finish.reason, FinishReason::ToolCalls);
    assert_eq!(turn.decoded.calls.len(), 1);
    let call = &turn.decoded.calls[0];
    assert_eq!(call.name, "math__add");
    assert!(call.is_executable());
    assert_eq!(call.arguments.value(), Some(&json!({"a": 2, "b": 40})));
}

// ---------------------------------------------------------------------------------------------
// The tests.

#[tokio::test]
async fn openai_streamed_tool_call() {
    let server = Server::start(vec![Reply::Stream(OPENAI_CALL)]).await;
    let (turn, events) = ask(&openai(&server)).await;
    let turn = turn.unwrap();
    assert_add_call(&turn);
    assert_eq!(turn.decoded.calls[0].id, "call_abc");
    assert_eq!(turn.decoded.usage, Some(Usage { input_tokens: 81, output_tokens: 18 }));
    assert_eq!(events.first().map(String::as_str), Some("call math__add"));
    assert!(events.contains(&"ready math__add".to_owned()), "{events:?}");

    let (path, headers, body) = server.request(0);
    assert_eq!(path, "/v1/chat/completions");
    assert_eq!(headers["authorization"], format!("Bearer {KEY}"));
    assert_eq!(headers["content-type"], "application/json");
    assert_eq!(body["model"], "gpt-4o-mini");
    assert_eq!(body["stream"], true);
    assert_eq!(body["stream_options"], json!({"include_usage": true}));
    assert_eq!(body["tool_choice"], "auto");
    assert_eq!(body["tools"][0]["function"]["name"], "math__add");
    assert_eq!(
        body["messages"],
        json!([{"role": "system", "content": "Be exact."}, {"role": "user", "content": "What is 2 + 40?"}])
    );
}

#[tokio::test]
async fn openai_text_answer() {
    let server = Server::start(vec![Reply::Stream(OPENAI_TEXT)]).await;
    let (turn, events) = ask(&openai(&server)).await;
    let turn = turn.unwrap();
    assert_eq!(turn.decoded.text, "2 + 40 = 42.");
    assert_eq!(turn.decoded.finish.reason, FinishReason::Stop);
    assert!(turn.decoded.calls.is_empty());
    assert_eq!(turn.decoded.usage, Some(Usage { input_tokens: 120, output_tokens: 7 }));
    assert!(events.contains(&"text = 42.".to_owned()), "{events:?}");
}

#[tokio::test]
async fn openai_whole_json_answer_when_the_server_does_not_stream() {
    let body = json!({"id": "chatcmpl-3", "object": "chat.completion", "choices": [{"index": 0,
        "message": {"role": "assistant", "content": "42"}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 5, "completion_tokens": 1}});
    let full = Reply::Full {
        status: 200,
        headers: vec![("content-type", "application/json")],
        body: body.to_string(),
    };
    let server = Server::start(vec![full]).await;
    let (turn, events) = ask(&openai(&server)).await;
    let turn = turn.unwrap();
    assert_eq!(turn.decoded.text, "42");
    assert_eq!(turn.decoded.usage, Some(Usage { input_tokens: 5, output_tokens: 1 }));
    assert_eq!(events, ["text 42"]);
}

#[tokio::test]
async fn a_429_with_retry_after_is_waited_out() {
    let limited = Reply::Full {
        status: 429,
        headers: vec![("retry-after", "1"), ("content-type", "application/json")],
        body: r#"{"error": {"message": "Rate limit reached", "type": "requests"}}"#.to_owned(),
    };
    let server = Server::start(vec![limited, Reply::Stream(OPENAI_TEXT)]).await;
    let waits = Waits::default();
    let _logged =
        tracing::subscriber::set_default(tracing_subscriber::registry().with(waits.clone()));
    let started = Instant::now();
    let (turn, _) = ask(&openai(&server)).await;
    let waited = started.elapsed();
    assert_eq!(turn.unwrap().decoded.text, "2 + 40 = 42.");
    assert_eq!(server.requests(), 2);
    // `retry-after: 1` beats the 5 ms backoff: the client says it waits 1 000 ms, and did
    // (a lower bound only: how much longer the machine took is not the client's doing).
    assert_eq!(*waits.0.lock().unwrap(), [1000]);
    assert!(waited >= Duration::from_secs(1), "{waited:?}");
}

/// The `wait_ms` of each retry the HTTP clients log.
#[derive(Clone, Default)]
struct Waits(Arc<Mutex<Vec<u64>>>);

impl<S: tracing::Subscriber> tracing_subscriber::Layer<S> for Waits {
    fn on_event(&self, event: &tracing::Event<'_>, _: tracing_subscriber::layer::Context<'_, S>) {
        struct WaitMs(Option<u64>);
        impl tracing::field::Visit for WaitMs {
            fn record_u64(&mut self, field: &tracing::field::Field, value: u64) {
                if field.name() == "wait_ms" {
                    self.0 = Some(value);
                }
            }
            fn record_debug(&mut self, _: &tracing::field::Field, _: &dyn std::fmt::Debug) {}
        }
        let mut wait = WaitMs(None);
        event.record(&mut wait);
        if let Some(ms) = wait.0 {
            self.0.lock().unwrap().push(ms);
        }
    }
}

#[tokio::test]
async fn two_500s_then_success() {
    let failing = || Reply::Full {
        status: 500,
        headers: vec![],
        body: r#"{"error": {"message": "The server had an error", "type": "server_error"}}"#
            .to_owned(),
    };
    let server = Server::start(vec![failing(), failing(), Reply::Stream(OPENAI_CALL)]).await;
    let (turn, _) = ask(&openai(&server)).await;
    assert_add_call(&turn.unwrap());
    assert_eq!(server.requests(), 3);
}

#[tokio::test]
async fn retries_give_up_with_the_last_answer() {
    let overloaded = || Reply::Full {
        status: 529,
        headers: vec![],
        body:
            r#"{"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}"#
                .to_owned(),
    };
    let server = Server::start(vec![overloaded(), overloaded(), overloaded()]).await;
    let (turn, _) = ask(&anthropic(&server)).await;
    let error = turn.unwrap_err();
    assert_eq!(error.kind(), ModelErrorKind::Status(529));
    assert_eq!(error.message(), "overloaded_error: Overloaded (after 3 attempts)");
    assert_eq!(server.requests(), 3);
}

#[tokio::test]
async fn a_hang_up_before_any_byte_is_retried() {
    let server = Server::start(vec![Reply::HangUp, Reply::Stream(OPENAI_TEXT)]).await;
    let (turn, _) = ask(&openai(&server)).await;
    assert_eq!(turn.unwrap().decoded.text, "2 + 40 = 42.");
    assert_eq!(server.requests(), 2);
}

#[tokio::test]
async fn a_401_says_what_the_provider_said_and_never_the_key() {
    let denied = Reply::Full {
        status: 401,
        headers: vec![("content-type", "application/json")],
        body: json!({"error": {"message": format!("Incorrect API key provided: {KEY}."),
            "type": "invalid_request_error", "param": null, "code": "invalid_api_key"}})
        .to_string(),
    };
    let server = Server::start(vec![denied, Reply::Stream(OPENAI_TEXT)]).await;
    let model = openai(&server);
    let (turn, _) = ask(&model).await;
    let error = turn.unwrap_err();
    assert_eq!(error.kind(), ModelErrorKind::Status(401));
    let shown = error.to_string();
    assert!(shown.contains("401") && shown.contains("Incorrect API key provided"), "{shown}");
    assert!(!shown.contains(KEY), "{shown}");
    assert!(!format!("{model:?}").contains(KEY));
    assert_eq!(server.requests(), 1, "a 401 is not retried");
}

#[tokio::test]
async fn a_dropped_connection_mid_stream_is_a_transport_error_and_not_retried() {
    let server = Server::start(vec![Reply::Cut(OPENAI_CALL, 2), Reply::Stream(OPENAI_CALL)]).await;
    let (turn, events) = ask(&openai(&server)).await;
    let error = turn.unwrap_err();
    assert_eq!(error.kind(), ModelErrorKind::Transport);
    assert!(error.message().contains("the stream was cut"), "{}", error.message());
    // The first events were forwarded; the cut call was never reported ready.
    assert_eq!(events, ["call math__add", "args"]);
    assert_eq!(server.requests(), 1);
}

#[tokio::test]
async fn a_body_that_ends_before_the_turn_is_finished_is_refused() {
    let partial = Reply::Full {
        status: 200,
        headers: vec![("content-type", "text/event-stream")],
        body: OPENAI_CALL[..3].concat(),
    };
    let server = Server::start(vec![partial]).await;
    let (turn, _) = ask(&openai(&server)).await;
    let error = turn.unwrap_err();
    assert_eq!(error.kind(), ModelErrorKind::Transport);
    assert!(error.message().contains("was cut"), "{}", error.message());
    // A local server is named by its address, never called OpenAI.
    let server_name = format!("the OpenAI-compatible server at {}", server.authority());
    assert!(error.message().contains(&server_name), "{}", error.message());
    assert!(!error.message().contains("OpenAI "), "{}", error.message());
}

#[tokio::test]
async fn a_silent_stream_times_out() {
    let server = Server::start(vec![Reply::Stall(OPENAI_CALL, 1)]).await;
    let mut timeouts = Timeouts::default();
    timeouts.idle = Duration::from_millis(150);
    let model = OpenAiCompatible::builder()
        .base_url(format!("{}/v1", server.base))
        .timeouts(timeouts)
        .build()
        .unwrap();
    let (turn, _) = ask(&model).await;
    let error = turn.unwrap_err();
    assert_eq!(error.kind(), ModelErrorKind::Timeout);
    assert!(error.message().contains("the stream was cut"), "{}", error.message());
    let (_, headers, _) = server.request(0);
    assert!(!headers.contains_key("authorization"), "no key, no header");
}

#[tokio::test]
async fn anthropic_streamed_tool_call() {
    let server = Server::start(vec![Reply::Stream(ANTHROPIC_CALL)]).await;
    let (turn, events) = ask(&anthropic(&server)).await;
    let turn = turn.unwrap();
    assert_add_call(&turn);
    assert_eq!(turn.decoded.text, "Let me add.");
    assert_eq!(turn.decoded.usage, Some(Usage { input_tokens: 480, output_tokens: 89 }));
    assert!(events.contains(&"ready math__add".to_owned()), "{events:?}");

    let (path, headers, body) = server.request(0);
    assert_eq!(path, "/v1/messages");
    assert_eq!(headers["x-api-key"], KEY);
    assert_eq!(headers["anthropic-version"], "2023-06-01");
    assert!(!headers.contains_key("authorization"));
    assert_eq!(body["max_tokens"], 512);
    assert_eq!(body["stream"], true);
    assert_eq!(body["system"], "Be exact.");
    assert_eq!(
        body["messages"],
        json!([{"role": "user", "content": [{"type": "text", "text": "What is 2 + 40?"}]}])
    );
    assert_eq!(body["tools"][0]["name"], "math__add");
    assert_eq!(body["tool_choice"], json!({"type": "auto"}));
}

#[tokio::test]
async fn anthropic_401() {
    let denied = Reply::Full {
        status: 401,
        headers: vec![("content-type", "application/json")],
        body: r#"{"type": "error", "error": {"type": "authentication_error", "message": "invalid x-api-key"}}"#.to_owned(),
    };
    let server = Server::start(vec![denied]).await;
    let (turn, _) = ask(&anthropic(&server)).await;
    let error = turn.unwrap_err();
    assert_eq!(
        error.to_string(),
        "the model provider answered 401: authentication_error: invalid x-api-key"
    );
}

#[test]
fn settings_from_the_environment() {
    let vars = |pairs: &'static [(&str, &str)]| {
        move |name: &str| pairs.iter().find(|(key, _)| *key == name).map(|(_, v)| (*v).to_owned())
    };
    // Nothing configured is an error naming what to set, not the public endpoint without a key.
    let unset = OpenAiCompatible::builder_from_vars(vars(&[])).build().unwrap_err();
    assert_eq!(
        unset,
        HttpConfigError::NotConfigured { variables: &["OPENAI_API_KEY", "OPENAI_BASE_URL"] }
    );
    assert_eq!(
        unset.to_string(),
        "no model endpoint is configured: set `OPENAI_API_KEY` or `OPENAI_BASE_URL` (a key for the public endpoint, a base URL for a local server)"
    );
    let unset = AnthropicMessages::builder_from_vars(vars(&[])).build().unwrap_err();
    assert_eq!(unset, HttpConfigError::NotConfigured { variables: &["ANTHROPIC_API_KEY"] });
    // Only the key is listed, so no local server is suggested.
    assert_eq!(unset.to_string(), "no model endpoint is configured: set `ANTHROPIC_API_KEY`");
    // A builder given a base URL but no key still needs one.
    let keyless = AnthropicMessages::builder_from_vars(vars(&[]))
        .base_url("http://127.0.0.1:9")
        .build()
        .unwrap_err();
    assert_eq!(keyless, HttpConfigError::MissingApiKey { variable: "ANTHROPIC_API_KEY" });
    // A base URL or key given to the builder afterwards is configuration enough.
    let local = OpenAiCompatible::builder_from_vars(vars(&[]))
        .base_url("http://127.0.0.1:8000/v1")
        .build()
        .unwrap();
    assert_eq!(local.endpoint(), "http://127.0.0.1:8000/v1/chat/completions");
    let model =
        OpenAiCompatible::builder_from_vars(vars(&[("OPENAI_API_KEY", KEY)])).build().unwrap();
    assert_eq!(model.endpoint(), "https://api.openai.com/v1/chat/completions");
    assert_eq!(model.model(), "gpt-4o-mini");
    let model = AnthropicMessages::builder_from_vars(vars(&[
        ("ANTHROPIC_API_KEY", KEY),
        ("ANTHROPIC_BASE_URL", "http://127.0.0.1:9/"),
        ("ANTHROPIC_MODEL", "claude-haiku-4-5"),
    ]))
    .build()
    .unwrap();
    assert_eq!(model.endpoint(), "http://127.0.0.1:9/v1/messages");
    assert_eq!(model.model(), "claude-haiku-4-5");
    let bad = OpenAiCompatible::builder().base_url("localhost:8080").build().unwrap_err();
    assert!(bad.to_string().contains("not an absolute http(s) URL"), "{bad}");
    let bad_key = OpenAiCompatible::builder().api_key("sk\nx").build().unwrap_err();
    assert!(!bad_key.to_string().contains("sk\nx"));
}

#[tokio::test]
async fn the_agent_loop_runs_end_to_end_over_http() {
    let server = Server::start(vec![Reply::Stream(OPENAI_CALL), Reply::Stream(OPENAI_TEXT)]).await;
    let runner = ToolRunner::builder(ToolCatalog::builder().register::<Add>().build().unwrap())
        .policy(ToolPolicy::from_json(r#"{"allowed_tools": ["math__add"]}"#).unwrap())
        .build();
    let agent = Agent::new(Arc::new(openai(&server)), runner);
    let ctx = context("run-1", "user-1", "tenant-1");
    let text = Mutex::new(String::new());
    let output = agent
        .run(vec![Message::user("What is 2 + 40?")], &ctx, &|event| {
            if let tool_runtime::agent::AgentEvent::TextDelta { text: delta } = event {
                text.lock().unwrap().push_str(&delta);
            }
        })
        .await;
    assert_eq!(output.done.stop, StopReason::Answered);
    assert_eq!(output.done.answer, "2 + 40 = 42.");
    assert_eq!(*text.lock().unwrap(), "2 + 40 = 42.");
    assert_eq!(output.done.records[0].result, Some(json!({"sum": 42})));
    assert_eq!(output.done.usage, Usage { input_tokens: 201, output_tokens: 25 });

    // The second request carries the model's call and its result.
    let (_, _, body) = server.request(1);
    let messages = body["messages"].as_array().unwrap();
    assert_eq!(messages.len(), 3);
    assert_eq!(messages[1]["tool_calls"][0]["id"], "call_abc");
    assert_eq!(
        messages[2],
        json!({"role": "tool", "tool_call_id": "call_abc", "content": "{\"sum\":42}"})
    );
}
