//! Limits and secrets at the HTTP layer: a model response body has a cap, and no error or
//! `Debug` output of a model client shows a configured credential (key, header value, or user
//! name and password in the URL).

use std::time::Duration;

use tokio::io::AsyncWriteExt;
use tokio::net::TcpListener;
use tool_runtime::adapters::{
    DecodeOptions, Message, ModelRequest, OpenAiChat, StreamLimits, ToolChoice,
};
use tool_runtime::agent::{
    ChatModel, ModelError, ModelErrorKind, OpenAiCompatible, OpenAiCompatibleBuilder, RetryPolicy,
};

const SECRET_HEADER: &str = "hdr-secret-0123456789";
const URL_PASSWORD: &str = "url-pa55word-secret";

/// Serves one connection: reads the request head and body, then writes `reply` as it is.
async fn serve_once(reply: Vec<u8>) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("127.0.0.1:{}", listener.local_addr().unwrap().port());
    tokio::spawn(async move {
        let (mut socket, _) = listener.accept().await.unwrap();
        crate::loopback::read_request(&mut socket).await;
        let _ = socket.write_all(&reply).await;
        let _ = socket.shutdown().await;
    });
    base
}

fn builder(authority: &str) -> OpenAiCompatibleBuilder {
    let mut retry = RetryPolicy::default();
    retry.max_attempts = 1;
    OpenAiCompatible::builder()
        .base_url(format!("http://{authority}/v1/"))
        .api_key("sk-test-key-0123456789")
        .model("gpt-4o-mini")
        .retry(retry)
}

async fn ask(model: &dyn ChatModel) -> ModelError {
    let messages = [Message::user("hi")];
    let request =
        ModelRequest { messages: &messages, tools: &[], choice: &ToolChoice::auto(), search: None };
    match model.respond(request, &|_| {}).await {
        Ok(turn) => panic!("the turn was accepted: {:?}", turn.decoded.finish),
        Err(error) => error,
    }
}

fn streamed(body: &[u8]) -> Vec<u8> {
    let mut reply = format!(
        "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncontent-length: {}\r\nconnection: close\r\n\r\n",
        body.len()
    )
    .into_bytes();
    reply.extend_from_slice(body);
    reply
}

#[tokio::test]
async fn a_body_over_its_limit_fails_the_turn() {
    let body = ": keep-alive\n".repeat(10_000);
    let authority = serve_once(streamed(body.as_bytes())).await;
    let model = builder(&authority).limits(StreamLimits::new().body_bytes(4096)).build().unwrap();
    let error = ask(&model).await;
    assert_eq!(error.kind(), ModelErrorKind::Decode);
    assert!(error.message().contains("limit of 4096 bytes"), "{error}");
}

#[tokio::test]
async fn a_whole_json_body_over_its_limit_fails_the_turn() {
    let body = format!("{{\"pad\": \"{}\"}}", "x".repeat(100_000));
    let reply = format!(
        "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
        body.len()
    );
    let authority = serve_once(reply.into_bytes()).await;
    let model = builder(&authority).limits(StreamLimits::new().body_bytes(8192)).build().unwrap();
    let error = ask(&model).await;
    assert_eq!(error.kind(), ModelErrorKind::Decode);
    assert!(error.message().contains("limit of 8192 bytes"), "{error}");
}

#[tokio::test]
async fn a_line_over_the_adapters_limit_fails_the_turn() {
    let body = format!("data: {}\n\n", "x".repeat(10_000));
    let authority = serve_once(streamed(body.as_bytes())).await;
    let adapter = OpenAiChat::new()
        .decode_options(DecodeOptions::new().limits(StreamLimits::new().line_bytes(1024)));
    let model = builder(&authority).adapter(adapter).build().unwrap();
    let error = ask(&model).await;
    assert_eq!(error.kind(), ModelErrorKind::Decode);
    assert!(error.message().contains("1024 bytes in one line"), "{error}");
}

#[tokio::test]
async fn an_error_body_that_echoes_a_header_value_is_scrubbed() {
    let body =
        format!("{{\"error\": {{\"message\": \"bad token {SECRET_HEADER}\", \"type\": \"x\"}}}}");
    let reply = format!(
        "HTTP/1.1 400 Bad Request\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
        body.len()
    );
    let authority = serve_once(reply.into_bytes()).await;
    let model = builder(&authority).header("x-secret-token", SECRET_HEADER).build().unwrap();
    let error = ask(&model).await;
    assert_eq!(error.kind(), ModelErrorKind::Status(400));
    assert!(error.message().contains("bad token [redacted]"), "{error}");
    assert!(!format!("{error} {model:?}").contains(SECRET_HEADER));
}

#[tokio::test]
async fn credentials_in_the_url_never_reach_debug_or_errors() {
    // A port nobody listens on: the connection error names the URL.
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    drop(listener);
    let mut retry = RetryPolicy::default();
    retry.max_attempts = 1;
    retry.initial_backoff = Duration::from_millis(1);
    let model = OpenAiCompatible::builder()
        .base_url(format!("http://alice:{URL_PASSWORD}@127.0.0.1:{port}/v1/"))
        .model("gpt-4o-mini")
        .retry(retry)
        .build()
        .unwrap();
    assert!(!format!("{model:?}").contains(URL_PASSWORD), "{model:?}");
    let error = ask(&model).await;
    assert_eq!(error.kind(), ModelErrorKind::Transport);
    assert!(!error.to_string().contains(URL_PASSWORD), "{error}");

    let invalid = OpenAiCompatible::builder()
        .base_url(format!("http://alice:{URL_PASSWORD}@exa mple.com/v1/"))
        .model("m")
        .api_key("k")
        .build()
        .unwrap_err();
    let shown = invalid.to_string();
    assert!(!shown.contains(URL_PASSWORD) && shown.contains("[redacted]@exa mple.com"), "{shown}");
    assert!(!format!("{invalid:?}").contains(URL_PASSWORD));
}

#[tokio::test]
async fn a_header_value_straddling_the_cut_of_an_error_message_is_scrubbed() {
    // The message is cut after 500 characters; the secret starts ten before the cut.
    let body = format!("{}{SECRET_HEADER} and more", "a".repeat(490));
    let reply = format!(
        "HTTP/1.1 400 Bad Request\r\ncontent-type: text/plain\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
        body.len()
    );
    let authority = serve_once(reply.into_bytes()).await;
    let model = builder(&authority).header("x-secret-token", SECRET_HEADER).build().unwrap();
    let error = ask(&model).await;
    assert_eq!(error.kind(), ModelErrorKind::Status(400));
    let shown = error.to_string();
    assert!(!shown.contains(&SECRET_HEADER[..8]), "{shown}");
    assert!(shown.contains("[redacted]"), "{shown}");
}
