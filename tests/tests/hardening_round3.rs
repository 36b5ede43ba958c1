//! Issue 24 (hardening, round 3): findings 2, 10, 11, 12 and 7, one module each. Every test
//! here failed before its fix.

/// A small HTTP/1.1 server on loopback: one scripted reply per connection, every request
/// recorded as the raw bytes of its head and body.
mod server {
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

    async fn read_request(socket: &mut TcpStream) -> String {
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
}

/// The one-message request every model test sends; its text is what must not leak.
const CONVERSATION: &str = "the confidential conversation 7c1f";

async fn ask(
    model: &dyn tool_runtime::agent::ChatModel,
) -> Result<tool_runtime::agent::ModelTurn, tool_runtime::agent::ModelError> {
    use tool_runtime::adapters::{Message, ModelRequest, ToolChoice};
    let messages = [Message::user(CONVERSATION)];
    let request = ModelRequest { messages: &messages, tools: &[], choice: &ToolChoice::auto() };
    model.respond(request, &|_| {}).await
}

fn no_retry() -> tool_runtime::agent::RetryPolicy {
    let mut retry = tool_runtime::agent::RetryPolicy::default();
    retry.max_attempts = 1;
    retry
}

/// Finding 2: no redirect carries the key, a header or the conversation to another origin.
mod redirects {
    use tool_runtime::agent::{AnthropicMessages, ModelErrorKind, OpenAiCompatible};

    use super::server::{Server, reply, stream};
    use super::{CONVERSATION, ask, no_retry};

    const KEY: &str = "sk-redirect-test-key-0123456789";
    const AZURE_KEY: &str = "azure-api-key-0123456789";

    /// What the other origin answers, were it reached: a valid turn, so that following the
    /// redirect would succeed.
    fn elsewhere_answers() -> Vec<String> {
        let openai = "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"hi\"},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n";
        vec![stream(openai); 4]
    }

    fn redirect_to(status: u16, target: &Server, path: &str) -> String {
        let location = format!("{}{path}", target.base);
        reply(status, &[("location", &location)], "text/plain", "moved")
    }

    fn assert_never_reached(elsewhere: &Server) {
        for request in elsewhere.requests() {
            assert!(!request.contains(KEY), "the key reached the other origin: {request}");
            assert!(!request.contains(AZURE_KEY), "a header reached the other origin: {request}");
            assert!(!request.contains(CONVERSATION), "the body reached the other origin");
        }
        assert!(elsewhere.requests().is_empty(), "the other origin was contacted");
    }

    #[tokio::test]
    async fn a_cross_origin_redirect_of_an_openai_compatible_request_is_refused() {
        for status in [301, 302, 303, 307, 308] {
            let elsewhere = Server::start(elsewhere_answers()).await;
            let endpoint =
                Server::start(vec![redirect_to(status, &elsewhere, "/v1/chat/completions")]).await;
            let model = OpenAiCompatible::builder()
                .base_url(format!("{}/v1", endpoint.base))
                .api_key(KEY)
                .header("api-key", AZURE_KEY)
                .retry(no_retry())
                .build()
                .unwrap();
            let error = ask(&model).await.expect_err("a redirect is no answer");
            assert_eq!(error.kind(), ModelErrorKind::Status(status), "{error}");
            assert!(error.message().contains("redirect"), "{error}");
            assert!(error.message().contains(elsewhere.base.trim_start_matches("http://")));
            assert!(!error.message().contains(KEY) && !error.message().contains(AZURE_KEY));
            assert_eq!(endpoint.requests().len(), 1, "asked once, never retried");
            assert_never_reached(&elsewhere);
        }
    }

    #[tokio::test]
    async fn a_cross_origin_redirect_of_an_anthropic_request_is_refused() {
        for status in [307, 308] {
            let elsewhere = Server::start(elsewhere_answers()).await;
            let endpoint =
                Server::start(vec![redirect_to(status, &elsewhere, "/v1/messages")]).await;
            let model = AnthropicMessages::builder()
                .base_url(&endpoint.base)
                .api_key(KEY)
                .retry(no_retry())
                .build()
                .unwrap();
            let error = ask(&model).await.expect_err("a redirect is no answer");
            assert_eq!(error.kind(), ModelErrorKind::Status(status), "{error}");
            assert!(endpoint.requests()[0].contains(KEY), "the endpoint itself gets the key");
            assert_never_reached(&elsewhere);
        }
    }

    #[tokio::test]
    async fn a_same_host_redirect_is_not_followed_either() {
        let endpoint = Server::start(vec![reply(
            307,
            &[("location", "/v2/chat/completions?token=abc")],
            "text/plain",
            "",
        )])
        .await;
        let model = OpenAiCompatible::builder()
            .base_url(format!("{}/v1", endpoint.base))
            .api_key(KEY)
            .retry(no_retry())
            .build()
            .unwrap();
        let error = ask(&model).await.expect_err("a redirect is no answer");
        assert_eq!(error.kind(), ModelErrorKind::Status(307));
        assert!(error.message().contains("/v2/chat/completions"), "{error}");
        assert!(!error.message().contains("token=abc"), "the query is left out: {error}");
        assert_eq!(endpoint.requests().len(), 1);
    }
}
