//! MCP over Streamable HTTP: arbitrary bytes as what a client sends on one connection to the
//! served service, through hyper's HTTP/1.1 server as [`McpServer::serve_http`] runs it.
//!
//! Input layout: the first byte picks how the rest is cut (0: whole; else pieces of
//! `1 + byte % 64` bytes, the server running between them); the rest is the client's bytes,
//! after which the client closes its side. Before them a session is opened (`initialize`,
//! then `notifications/initialized`), and each `{session}` in them is replaced by its id, so
//! inputs reach what only a session may ask (`tools/call`, its standing `GET` stream, `DELETE`).
//!
//! The server keeps calls that wait (in memory), so a request of 2026-07-28 (no session, its
//! `_meta` on the request) reaches input-required rounds (an approval, a question) and tasks.
//!
//! On any input the server must: not panic; answer or close the connection within a bound
//! (ten minutes of the runtime's clock, which is paused, so the wait costs nothing: twice the
//! sessions' idle timeout, after which even a standing stream ends), with at most 1 MiB of
//! answers; and afterwards still answer a valid `initialize` on a new connection of the same
//! service.

use std::sync::Arc;
use std::time::Duration;

use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::service::TowerToHyperService;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio_util::sync::CancellationToken;
use tool_runtime::agent::StateKey;
use tool_runtime::catalog::ToolCatalog;
use tool_runtime::mcp::rmcp::model::{PromptMessage, Role};
use tool_runtime::mcp::{HttpLimits, McpPrompt, McpServer, TaskSupport};
use tool_runtime::policy::ToolPolicy;
use tool_runtime::prelude::*;
use tool_runtime::runner::{DeferAll, ToolRunner};
use tool_runtime::runtime::{ElicitAnswer, Interact, SampleRequest};
use tool_runtime::store::InMemoryStore;

/// How long a connection may take to be answered or closed, on the paused clock.
const BOUND: Duration = Duration::from_secs(600);

/// The most a connection's answers may hold: at most 8 KiB of requests ask for far less.
const MAX_ANSWER: u64 = 1 << 20;

/// How long a session may sit idle (a standing stream ends with it).
const SESSION_IDLE: Duration = Duration::from_secs(300);

/// Replaced in the input by the id of the session opened before it.
const SESSION: &[u8] = b"{session}";

/// A valid `initialize`, the request every session starts with.
pub const INITIALIZE: &[u8] = b"POST /mcp HTTP/1.1\r\nhost: localhost\r\n\
content-type: application/json\r\naccept: application/json, text/event-stream\r\n\
content-length: 149\r\n\r\n\
{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{\"protocolVersion\":\"2025-06-18\",\
\"capabilities\":{},\"clientInfo\":{\"name\":\"fuzz\",\"version\":\"1\"}}}";

/// Echo a text.
#[tool(name = "fuzz__echo", effect = read_only, redact = ["text"])]
struct Echo {
    text: String,
}

#[derive(Serialize, ToolSchema)]
struct Echoed {
    text: String,
}

impl Tool for Echo {
    type Output = Echoed;
    async fn run(
        self,
        ctx: &ToolInvocationContext,
        _: &ToolCapabilities,
    ) -> Result<Echoed, ToolError> {
        ctx.report_progress(1.0, Some(1.0), self.text.clone());
        Ok(Echoed { text: self.text })
    }
}

/// Close a ticket: a state change, which waits for approval (the server's approver defers).
#[tool(name = "fuzz__close", effect = state_change, redact = ["closed"])]
struct Close {
    number: u32,
}

#[derive(Serialize, ToolSchema)]
struct Closed {
    closed: u32,
}

impl Tool for Close {
    type Output = Closed;
    async fn run(
        self,
        _: &ToolInvocationContext,
        _: &ToolCapabilities,
    ) -> Result<Closed, ToolError> {
        Ok(Closed { closed: self.number })
    }
}

/// The answer to `fuzz__ask`'s question.
#[derive(Deserialize, ToolSchema)]
struct Answer {
    text: String,
}

/// Ask the user for a text, then echo it.
#[tool(name = "fuzz__ask", effect = read_only, redact = ["text"], capabilities = [Interact])]
struct Ask {}

impl Tool for Ask {
    type Output = Echoed;
    async fn run(
        self,
        _: &ToolInvocationContext,
        caps: &ToolCapabilities,
    ) -> Result<Echoed, ToolError> {
        let interact = caps.get::<Interact>()?;
        // Everything at once: one round asks a question, a completion and the roots.
        let (answer, completion, roots) = tokio::join!(
            interact.elicitation::<Answer>("Which text?").key("text").send(),
            interact.sample(SampleRequest::new("Say a text.").max_tokens(10)),
            interact.roots(),
        );
        let (completion, roots) = (completion?, roots?);
        match answer? {
            ElicitAnswer::Accept(answer) => {
                Ok(Echoed { text: format!("{} {} {}", answer.text, completion.text, roots.len()) })
            }
            _ => Err(ToolError::new("no text")),
        }
    }
}

/// A prompt that asks the user for a topic first.
fn prompt() -> McpPrompt {
    McpPrompt::new("fuzz_prompt", "Write about a topic.", |request| async move {
        let answer = request.interact.elicitation::<Answer>("Which topic?").send().await?;
        let text = answer.accepted().map_or_else(String::new, |answer| answer.text);
        Ok(vec![PromptMessage::new_text(Role::User, text)])
    })
    .argument("style", "How to write.", false)
}

/// The served catalog: `fuzz__echo` (also served as a task, its text mirrored into the
/// `Mcp-Param-Text` header), `fuzz__close` (waits for approval) and `fuzz__ask` (asks a
/// question, a completion and the roots at once; a task once answered), and a prompt that asks
/// first, with calls that wait kept in memory so that 2026-07-28 clients get input-required
/// rounds and tasks.
fn server() -> McpServer {
    let catalog = ToolCatalog::builder()
        .register::<Echo>()
        .register::<Close>()
        .register::<Ask>()
        .capability(Interact::unavailable())
        .build()
        .expect("a catalog");
    let policy = ToolPolicy {
        require_approval: vec![ToolEffect::StateChange],
        ..ToolPolicy::allowing(["fuzz__*"])
    };
    let runner = ToolRunner::builder(catalog).policy(policy).approver(Arc::new(DeferAll)).build();
    let limits = HttpLimits::new().session_idle_timeout(SESSION_IDLE);
    McpServer::builder(runner)
        .http_limits(limits)
        .store(Arc::new(InMemoryStore::new()), StateKey::new(*b"the fuzzed server's state key!!!"))
        .task("fuzz__echo", TaskSupport::Optional)
        .task("fuzz__ask", TaskSupport::Optional)
        .ask_before_task("fuzz__ask")
        .param_header("fuzz__echo", "text", "Text")
        .expect("`text` is a string property of `fuzz__echo`")
        .prompt(prompt())
        .expect("one prompt, its name valid")
        .build()
}

/// The check; see the module's documentation.
///
/// # Panics
///
/// When the server panics, neither answers nor closes within the bound, or no longer answers
/// a valid `initialize`.
pub fn check(data: &[u8]) {
    let Some((&cut, bytes)) = data.split_first() else { return };
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .start_paused(true)
        .build()
        .expect("a runtime");
    runtime.block_on(async {
        let server = server();
        let shutdown = CancellationToken::new();
        let mut config =
            McpServer::local_http_config().with_cancellation_token(shutdown.child_token());
        // The SSE keep-alive (`sse-stream`, through rmcp) sets its next ping from
        // `std::time::Instant::now()`, which the paused clock runs ahead of: once the clock has
        // jumped, every ping is due at once and a standing stream pings without end. Real time
        // has no such gap; the pings are comments a client skips.
        config.sse_keep_alive = None;
        let service = server.http_service(config);
        let session = open_session(&service).await;
        let bytes = replace(bytes, SESSION, session.as_bytes());
        let answer = exchange(&service, &bytes, cut).await;
        let answer = answer.expect("the server neither answered nor closed within the bound");
        assert!(answer.len() as u64 <= MAX_ANSWER, "over {MAX_ANSWER} bytes of answers");
        let answer = exchange(&service, INITIALIZE, 0).await.expect("an answer to initialize");
        let text = String::from_utf8_lossy(&answer);
        assert!(text.starts_with("HTTP/1.1 200"), "initialize was not answered: {text}");
        assert!(text.contains("\"protocolVersion\""), "initialize was not answered: {text}");
        shutdown.cancel();
    });
}

/// Opens a session and returns its id.
async fn open_session(service: &Service) -> String {
    let answer = exchange(service, INITIALIZE, 0).await.expect("an answer to initialize");
    let answer = String::from_utf8_lossy(&answer);
    let session = answer
        .lines()
        .take_while(|line| !line.is_empty())
        .find_map(|line| {
            let (name, value) = line.split_once(':')?;
            name.eq_ignore_ascii_case("mcp-session-id").then(|| value.trim().to_owned())
        })
        .unwrap_or_else(|| panic!("initialize opened no session: {answer}"));
    let body = br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
    let mut initialized = format!(
        "POST /mcp HTTP/1.1\r\nhost: localhost\r\ncontent-type: application/json\r\n\
         accept: application/json, text/event-stream\r\nmcp-protocol-version: 2025-06-18\r\n\
         mcp-session-id: {session}\r\ncontent-length: {}\r\n\r\n",
        body.len()
    )
    .into_bytes();
    initialized.extend_from_slice(body);
    let answer = exchange(service, &initialized, 0).await.expect("an answer to initialized");
    assert!(answer.starts_with(b"HTTP/1.1 202"), "{}", String::from_utf8_lossy(&answer));
    session
}

/// `bytes` with each `from` replaced by `to`.
fn replace(bytes: &[u8], from: &[u8], to: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(bytes.len());
    let mut rest = bytes;
    while !rest.is_empty() {
        if rest.starts_with(from) {
            out.extend_from_slice(to);
            rest = &rest[from.len()..];
        } else {
            out.push(rest[0]);
            rest = &rest[1..];
        }
    }
    out
}

type Service = tool_runtime::mcp::McpHttpService;

/// Sends `bytes` on a new connection (cut as `cut` says), closes the sending side and reads
/// what comes back until the server closes; `None` when that takes longer than [`BOUND`].
/// Resumes a panic of the server's connection task.
async fn exchange(service: &Service, bytes: &[u8], cut: u8) -> Option<Vec<u8>> {
    let (client, server_io) = tokio::io::duplex(64 * 1024);
    let service = TowerToHyperService::new(service.clone());
    let connection = tokio::spawn(async move {
        // As `McpServer::serve_http` serves each connection.
        let _ = hyper::server::conn::http1::Builder::new()
            .timer(TokioTimer::new())
            .header_read_timeout(HttpLimits::default().get_header_read_timeout())
            .serve_connection(TokioIo::new(server_io), service)
            .await;
    });
    let (mut reading, mut writing) = tokio::io::split(client);
    let write = async move {
        let piece = if cut == 0 { bytes.len().max(1) } else { 1 + usize::from(cut % 64) };
        for chunk in bytes.chunks(piece) {
            if writing.write_all(chunk).await.is_err() {
                return;
            }
            tokio::task::yield_now().await;
        }
        let _ = writing.shutdown().await;
    };
    let read = async move {
        let mut answer = Vec::new();
        let _ = (&mut reading).take(MAX_ANSWER + 1).read_to_end(&mut answer).await;
        answer
    };
    let answered = tokio::time::timeout(BOUND, async { tokio::join!(write, read).1 }).await.ok();
    if let Ok(Err(error)) = tokio::time::timeout(BOUND, connection).await
        && error.is_panic()
    {
        std::panic::resume_unwind(error.into_panic());
    }
    answered
}
