//! Serving MCP over HTTP to clients that abuse it (issue 24, item 4): a request head that never
//! ends, more connections or sessions than the server allows, sessions left open, a server out
//! of file descriptors, and a client that never reads a call's progress. Real TCP on
//! `127.0.0.1`, raw HTTP/1.1 so the client does exactly what each test says.
//!
//! Two tests need a process of their own: the one that runs the server out of file descriptors
//! (`ulimit -n`) and the one that measures memory (other tests of this binary would add to it).
//! Each re-runs this binary on one ignored test (`alone_*`) in a child process.

use std::fmt::Write as _;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use serde_json::json;
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::Notify;
use tokio_util::sync::CancellationToken;
use tool_runtime::catalog::ToolCatalog;
use tool_runtime::mcp::{HttpLimits, McpServer};
use tool_runtime::policy::ToolPolicy;
use tool_runtime::prelude::*;
use tool_runtime::runner::ToolRunner;
use tool_runtime::runtime::Capability;

/// A guard against a hang, never a measure of speed: everything here takes milliseconds.
const PATIENCE: Duration = Duration::from_secs(20);

/// What a test sees of its server's `test__flood` calls: a start, and the drop of the running
/// tool (the runner drops it when the call's time is up).
#[derive(Default)]
struct FloodProbe {
    started: Notify,
    dropped: Notify,
}

impl Capability for FloodProbe {
    const NAME: &'static str = "flood_probe";
}

struct DropProbe<'a>(&'a FloodProbe);

impl Drop for DropProbe<'_> {
    fn drop(&mut self) {
        self.0.dropped.notify_one();
    }
}

#[derive(Serialize, ToolSchema)]
struct Nothing {}

/// Report progress with a 64 KiB message every millisecond, forever.
#[tool(name = "test__flood", effect = read_only, redact = [], capabilities = [FloodProbe])]
struct Flood {}

impl Tool for Flood {
    type Output = Nothing;
    async fn run(
        self,
        ctx: &ToolInvocationContext,
        caps: &ToolCapabilities,
    ) -> Result<Nothing, ToolError> {
        let probe = caps.get::<FloodProbe>()?;
        let _probe = DropProbe(probe);
        probe.started.notify_one();
        let message = "x".repeat(64 * 1024);
        for step in 0_u32.. {
            ctx.report_progress(f64::from(step), None, message.clone());
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
        Ok(Nothing {})
    }
}

/// A server whose calls may run `max_runtime_ms`, with `limits`.
fn server(probe: &Arc<FloodProbe>, max_runtime_ms: u64, limits: HttpLimits) -> McpServer {
    let catalog = ToolCatalog::builder()
        .shared_capability(Arc::clone(probe))
        .register::<Flood>()
        .build()
        .unwrap();
    let policy = ToolPolicy::from_json(&format!(
        r#"{{"allowed_tools": ["test__*"], "budgets": {{"max_runtime_ms": {max_runtime_ms}}}}}"#
    ))
    .unwrap();
    let runner = ToolRunner::builder(catalog).policy(policy).build();
    McpServer::builder(runner).http_limits(limits).build()
}

/// Serves `server` on a fresh loopback port until the token is cancelled.
async fn serve(server: McpServer) -> (SocketAddr, CancellationToken) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    let shutdown = CancellationToken::new();
    tokio::spawn(server.serve_http(listener, shutdown.clone()));
    (address, shutdown)
}

const INITIALIZE: &str = r#"{"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "limits-test", "version": "1"}}}"#;

/// A complete HTTP/1.1 request; the server closes the connection after answering it.
fn request(method: &str, session: Option<&str>, body: &str) -> String {
    let mut request = format!(
        "{method} /mcp HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\n\
         accept: application/json, text/event-stream\r\nmcp-protocol-version: 2025-06-18\r\n\
         content-length: {}\r\nconnection: close\r\n",
        body.len()
    );
    if let Some(session) = session {
        write!(request, "mcp-session-id: {session}\r\n").unwrap();
    }
    request + "\r\n" + body
}

/// An answer, read to the end of the connection.
struct Answer {
    status: u16,
    head: String,
    text: String,
}

impl Answer {
    fn parse(bytes: &[u8]) -> Self {
        let text = String::from_utf8_lossy(bytes).into_owned();
        let head = text.split("\r\n\r\n").next().unwrap_or_default().to_owned();
        let status = head.split(' ').nth(1).and_then(|code| code.parse().ok()).unwrap_or(0);
        Self { status, head, text }
    }

    fn session(&self) -> Option<String> {
        self.head.lines().find_map(|line| {
            let (name, value) = line.split_once(':')?;
            name.eq_ignore_ascii_case("mcp-session-id").then(|| value.trim().to_owned())
        })
    }
}

async fn read_to_end(stream: &mut TcpStream) -> Vec<u8> {
    let mut bytes = Vec::new();
    let read = tokio::time::timeout(PATIENCE, stream.read_to_end(&mut bytes)).await;
    read.expect("the server neither answered nor closed the connection").ok();
    bytes
}

/// Sends `request` on a new connection and reads the answer.
async fn exchange(address: SocketAddr, request: &str) -> Answer {
    let mut stream = TcpStream::connect(address).await.unwrap();
    stream.write_all(request.as_bytes()).await.unwrap();
    Answer::parse(&read_to_end(&mut stream).await)
}

/// Opens a session, retrying while the server refuses: a slot frees just after a session ends
/// (its server is dropped once its stream has ended), so the first try may come too soon.
async fn initialize_until_accepted(address: SocketAddr) -> Answer {
    let deadline = tokio::time::Instant::now() + PATIENCE;
    loop {
        let answer = exchange(address, &request("POST", None, INITIALIZE)).await;
        if answer.status == 200 || tokio::time::Instant::now() > deadline {
            return answer;
        }
        tokio::task::yield_now().await;
    }
}

#[tokio::test]
async fn a_half_sent_request_head_is_closed_after_the_header_read_timeout() {
    let limits = HttpLimits::new().header_read_timeout(Duration::from_millis(200));
    let (address, shutdown) = serve(server(&Arc::default(), 1000, limits)).await;
    let mut stream = TcpStream::connect(address).await.unwrap();
    stream.write_all(b"POST /mcp HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-ty").await.unwrap();
    // Without the timeout the server would wait for the rest forever, and this would time out.
    let answer = read_to_end(&mut stream).await;
    assert!(!answer.starts_with(b"HTTP/1.1 200"), "{}", String::from_utf8_lossy(&answer));
    // The server still serves others.
    assert_eq!(exchange(address, &request("POST", None, INITIALIZE)).await.status, 200);
    shutdown.cancel();
}

#[tokio::test]
async fn connections_past_the_cap_get_503_and_are_closed_and_a_closed_one_frees_its_place() {
    let limits = HttpLimits::new().max_connections(2).header_read_timeout(Duration::from_secs(600));
    let (address, shutdown) = serve(server(&Arc::default(), 1000, limits)).await;
    // Two idle connections take both places (accepted in the order they connected).
    let first = TcpStream::connect(address).await.unwrap();
    let _second = TcpStream::connect(address).await.unwrap();
    let mut third = TcpStream::connect(address).await.unwrap();
    // Served, it would wait up to 600 s for a request head; refused, it is told at once.
    let answer = Answer::parse(&read_to_end(&mut third).await);
    assert_eq!(answer.status, 503, "{}", answer.text);
    drop(first);
    assert_eq!(initialize_until_accepted(address).await.status, 200);
    shutdown.cancel();
}

#[tokio::test]
async fn sessions_past_the_cap_are_refused_until_one_is_closed() {
    let limits = HttpLimits::new().max_sessions(2);
    let (address, shutdown) = serve(server(&Arc::default(), 1000, limits)).await;
    let first = exchange(address, &request("POST", None, INITIALIZE)).await;
    let second = exchange(address, &request("POST", None, INITIALIZE)).await;
    assert_eq!((first.status, second.status), (200, 200), "{}", second.text);
    let third = exchange(address, &request("POST", None, INITIALIZE)).await;
    assert_eq!(third.status, 500, "{}", third.text);
    assert!(third.text.contains("too many MCP sessions"), "{}", third.text);
    assert_eq!(third.session(), None);

    let closed = exchange(address, &request("DELETE", first.session().as_deref(), "")).await.status;
    assert_eq!(closed, 202);
    assert_eq!(initialize_until_accepted(address).await.status, 200);
    shutdown.cancel();
}

#[tokio::test]
async fn an_idle_session_expires_and_frees_its_place() {
    let limits = HttpLimits::new().max_sessions(1).session_idle_timeout(Duration::from_millis(300));
    let (address, shutdown) = serve(server(&Arc::default(), 1000, limits)).await;
    let opened = exchange(address, &request("POST", None, INITIALIZE)).await;
    let session = opened.session().expect("a session id");
    // The session's standing stream ends when the session does.
    let mut listen = TcpStream::connect(address).await.unwrap();
    let get = format!(
        "GET /mcp HTTP/1.1\r\nhost: 127.0.0.1\r\naccept: text/event-stream\r\n\
         mcp-protocol-version: 2025-06-18\r\nmcp-session-id: {session}\r\nconnection: close\r\n\r\n"
    );
    listen.write_all(get.as_bytes()).await.unwrap();
    let stream = Answer::parse(&read_to_end(&mut listen).await);
    assert_eq!(stream.status, 200, "{}", stream.text);
    // Its place is free again, and the session is gone.
    assert_eq!(initialize_until_accepted(address).await.status, 200);
    let list = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}).to_string();
    let gone = exchange(address, &request("POST", Some(&session), &list)).await;
    assert_eq!(gone.status, 404, "{}", gone.text);
    shutdown.cancel();
}

#[tokio::test]
async fn a_call_whose_client_never_reads_its_progress_still_ends_at_its_deadline() {
    let probe = Arc::new(FloodProbe::default());
    let (address, shutdown) = serve(server(&probe, 2000, HttpLimits::new())).await;
    let opened = exchange(address, &request("POST", None, INITIALIZE)).await;
    let session = opened.session().expect("a session id");
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    let answer =
        exchange(address, &request("POST", Some(&session), &initialized.to_string())).await;
    assert_eq!(answer.status, 202, "{}", answer.text);

    let call = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
        "name": "test__flood", "arguments": {}, "_meta": {"progressToken": "flood"}
    }});
    let mut reader = TcpStream::connect(address).await.unwrap();
    reader.write_all(request("POST", Some(&session), &call.to_string()).as_bytes()).await.unwrap();
    // Never read: megabytes of progress fill the socket's buffers and the server's queues.
    tokio::time::timeout(PATIENCE, probe.started.notified()).await.expect("the call started");
    // The 2 s budget ends the call; the wait is a guard against a hang, not a time limit.
    let dropped = tokio::time::timeout(PATIENCE, probe.dropped.notified()).await;
    assert!(dropped.is_ok(), "the call outlived its budget while its client did not read");
    drop(reader);
    shutdown.cancel();
}

/// Runs the ignored test `name` of this binary alone in a child process, under `sh` with
/// `limits` (`ulimit` commands, or nothing) set first.
fn alone(name: &str, limits: &str) -> tokio::process::Child {
    let binary = std::env::current_exe().unwrap();
    let script =
        format!("{limits} exec \"$0\" --exact {name} --ignored --nocapture --test-threads 1");
    tokio::process::Command::new("sh")
        .arg("-c")
        .arg(script)
        .arg(binary)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap()
}

/// The resident set of this process in KiB, from `/proc/self/status`; fails loudly when it
/// cannot be read.
fn resident_kib() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").expect("/proc/self/status");
    let line = status.lines().find(|line| line.starts_with("VmRSS:")).expect("a VmRSS line");
    line.split_whitespace().nth(1).and_then(|kib| kib.parse().ok()).expect("VmRSS in kB")
}

#[tokio::test]
async fn four_thousand_abandoned_sessions_grow_the_heap_by_less_than_128_mib() {
    let child = alone("serve_limits::alone_four_thousand_abandoned_sessions", "");
    let output = child.wait_with_output().await.unwrap();
    let (stdout, stderr) =
        (String::from_utf8_lossy(&output.stdout), String::from_utf8_lossy(&output.stderr));
    assert!(output.status.success(), "{stdout}\n{stderr}");
    assert!(stdout.contains("1 passed"), "the child ran no test: {stdout}\n{stderr}");
    println!("{stdout}");
}

/// Opens 4 000 sessions with the default limits and never closes them.
#[tokio::test]
#[ignore = "run in a process of its own by `four_thousand_abandoned_sessions_grow_the_heap_by_less_than_128_mib`"]
async fn alone_four_thousand_abandoned_sessions() {
    let (address, shutdown) = serve(server(&Arc::default(), 1000, HttpLimits::new())).await;
    for _ in 0..8 {
        let warm = exchange(address, &request("POST", None, INITIALIZE)).await;
        exchange(address, &request("DELETE", warm.session().as_deref(), "")).await;
    }
    let before = resident_kib();
    let mut opened = 0;
    for _ in 0..4000 {
        let answer = exchange(address, &request("POST", None, INITIALIZE)).await;
        match answer.status {
            200 => opened += 1,
            500 => assert!(answer.text.contains("too many MCP sessions"), "{}", answer.text),
            _ => panic!("unexpected answer: {}", answer.text),
        }
    }
    let grown = resident_kib().saturating_sub(before);
    println!("{opened} sessions opened; the resident set grew by {} KiB", grown);
    assert!(opened <= HttpLimits::default().get_max_sessions(), "{opened} sessions opened");
    assert!(grown < 128 * 1024, "4 000 abandoned sessions grew the resident set by {grown} KiB");
    shutdown.cancel();
}

#[tokio::test]
async fn the_accept_loop_survives_running_out_of_file_descriptors() {
    let mut child = alone("serve_limits::alone_serve_with_few_file_descriptors", "ulimit -n 64;");
    let mut stdout = BufReader::new(child.stdout.take().unwrap()).lines();
    let mut stderr = BufReader::new(child.stderr.take().unwrap()).lines();
    let address = tokio::time::timeout(PATIENCE, async {
        while let Ok(Some(line)) = stdout.next_line().await {
            // The harness prints the test's name on the same line.
            if let Some((_, address)) = line.split_once("listening on ") {
                return address.parse::<SocketAddr>().unwrap();
            }
        }
        panic!("the child ended before it listened");
    })
    .await
    .unwrap();
    // More connections than the child may open files: its `accept` fails with EMFILE.
    let mut held = Vec::new();
    for _ in 0..80 {
        held.push(TcpStream::connect(address).await.unwrap());
    }
    let failed = tokio::time::timeout(PATIENCE, async {
        while let Ok(Some(line)) = stderr.next_line().await {
            if line.contains("accepting an MCP connection failed") {
                return true;
            }
        }
        false
    })
    .await;
    assert_eq!(failed, Ok(true), "the child never failed to accept, or ended");
    drop(held);
    let answer = initialize_until_accepted(address).await;
    assert_eq!(answer.status, 200, "{}", answer.text);
    child.kill().await.unwrap();
}

/// Prints warnings to stderr, for the parent test to read.
struct Warnings;

impl<S: tracing::Subscriber> tracing_subscriber::Layer<S> for Warnings {
    fn on_event(&self, event: &tracing::Event<'_>, _: tracing_subscriber::layer::Context<'_, S>) {
        if *event.metadata().level() <= tracing::Level::WARN {
            let mut text = String::new();
            event.record(&mut |field: &tracing::field::Field, value: &dyn std::fmt::Debug| {
                let _ = write!(text, "{}={value:?} ", field.name());
            });
            eprintln!("{} {text}", event.metadata().level());
        }
    }
}

/// Serves with default limits in a process allowed 64 open files, until killed.
#[tokio::test]
#[ignore = "run in a process of its own by `the_accept_loop_survives_running_out_of_file_descriptors`"]
async fn alone_serve_with_few_file_descriptors() {
    use tracing_subscriber::layer::SubscriberExt as _;
    let _warnings = tracing::subscriber::set_default(tracing_subscriber::registry().with(Warnings));
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    println!("listening on {}", listener.local_addr().unwrap());
    let served = server(&Arc::default(), 1000, HttpLimits::new())
        .serve_http(listener, CancellationToken::new())
        .await;
    eprintln!("serve_http ended: {served:?}");
}
