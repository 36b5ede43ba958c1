//! A loopback HTTP/1.1 server for the model clients' tests: one scripted reply per
//! connection, every request recorded as the raw bytes of its head and body; and the
//! one-message request those tests send.

use std::sync::{Arc, Mutex};

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

pub struct Server {
    /// `http://127.0.0.1:port`.
    pub base: String,
    seen: Arc<Mutex<Vec<String>>>,
}

impl Server {
    /// Answers each connection with the next of `replies` (whole HTTP responses), then
    /// closes it; connections past the last reply are recorded and closed.
    pub async fn start(replies: Vec<String>) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let base = format!("http://{}", listener.local_addr().unwrap());
        let seen = Arc::new(Mutex::new(Vec::new()));
        let record = seen.clone();
        tokio::spawn(async move {
            let mut replies = replies.into_iter();
            loop {
                let Ok((mut socket, _)) = listener.accept().await else { return };
                let request = read_request(&mut socket).await;
                record.lock().unwrap().push(request);
                if let Some(reply) = replies.next() {
                    let _ = socket.write_all(reply.as_bytes()).await;
                }
                let _ = socket.shutdown().await;
            }
        });
        Self { base, seen }
    }

    /// Every request received so far, head and body, as text.
    pub fn requests(&self) -> Vec<String> {
        self.seen.lock().unwrap().clone()
    }
}

/// Reads one request, head and body (as long as its `content-length` says), as text.
pub async fn read_request(socket: &mut TcpStream) -> String {
    let mut buffer = Vec::new();
    let mut piece = [0u8; 4096];
    loop {
        let text = String::from_utf8_lossy(&buffer).to_lowercase();
        if let Some(head_end) = text.find("\r\n\r\n") {
            let length = text
                .lines()
                .find_map(|line| line.strip_prefix("content-length:"))
                .and_then(|value| value.trim().parse::<usize>().ok())
                .unwrap_or(0);
            if buffer.len() >= head_end + 4 + length {
                break;
            }
        }
        match socket.read(&mut piece).await {
            Ok(0) | Err(_) => break,
            Ok(read) => buffer.extend_from_slice(&piece[..read]),
        }
    }
    String::from_utf8_lossy(&buffer).into_owned()
}

/// A whole response.
pub fn reply(status: u16, headers: &[(&str, &str)], content_type: &str, body: &str) -> String {
    let mut out = format!(
        "HTTP/1.1 {status} Whatever\r\ncontent-type: {content_type}\r\ncontent-length: {}\r\nconnection: close\r\n",
        body.len()
    );
    for (name, value) in headers {
        out.push_str(&format!("{name}: {value}\r\n"));
    }
    out.push_str("\r\n");
    out.push_str(body);
    out
}

/// `200 text/event-stream` with `body`.
pub fn stream(body: &str) -> String {
    reply(200, &[], "text/event-stream", body)
}

/// The one-message request every model test sends; its text is what must not leak.
pub const CONVERSATION: &str = "the confidential conversation 7c1f";

pub async fn ask(
    model: &dyn tool_runtime::agent::ChatModel,
) -> Result<tool_runtime::agent::ModelTurn, tool_runtime::agent::ModelError> {
    use tool_runtime::adapters::{Message, ModelRequest, ToolChoice};
    let messages = [Message::user(CONVERSATION)];
    let request =
        ModelRequest { messages: &messages, tools: &[], choice: &ToolChoice::auto(), search: None };
    model.respond(request, &|_| {}).await
}

pub fn no_retry() -> tool_runtime::agent::RetryPolicy {
    let mut retry = tool_runtime::agent::RetryPolicy::default();
    retry.max_attempts = 1;
    retry
}

/// Three attempts, 1 ms apart: retries on, as by default, without the default's waits.
pub fn quick_retries() -> tool_runtime::agent::RetryPolicy {
    let mut retry = tool_runtime::agent::RetryPolicy::default();
    retry.max_attempts = 3;
    retry.initial_backoff = std::time::Duration::from_millis(1);
    retry.max_backoff = std::time::Duration::from_millis(1);
    retry
}
