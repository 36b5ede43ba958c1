//! The concurrent-serving load benchmark (issue 29 item 5): an MCP server over Streamable
//! HTTP on loopback, called by many clients at once, the project's server against a plain rmcp
//! server with the same tools (`tool_benches::peers::PlainServer`). `benches/load.sh` runs it:
//! each server in its own process pinned to its own cores, the client in another, five
//! interleaved runs per server.
//!
//! ```text
//! load serve project|rmcp              serves on a free loopback port, prints its URL, runs
//!                                      until stdin closes
//! load client URL SECONDS CLIENTS      CLIENTS tasks call `bench__medium` back to back for
//!                                      SECONDS; prints one JSON line of figures
//! ```
//!
//! Each request is a stateless MCP 2026-07-28 `tools/call` (its `_meta` and routing headers, no
//! session), as `benches/benches/mcp_rounds.rs` sends them. Both servers sit behind rmcp's
//! `StreamableHttpService` on hyper's HTTP/1.1 with `TCP_NODELAY`; the project's through
//! `McpServer::serve_http`, the plain one through the same loop written out here.

use std::io::Read as _;
use std::sync::Arc;
use std::time::{Duration, Instant};

use rmcp::transport::StreamableHttpService;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;
use tool_benches::bench_runner;
use tool_benches::peers::PlainServer;
use tool_benches::tools::MEDIUM_ARGS;
use tool_runtime::mcp::McpServer;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build().expect("Tokio");
    match args.iter().map(String::as_str).collect::<Vec<_>>().as_slice() {
        ["serve", which] => runtime.block_on(serve(which)),
        ["client", url, seconds, clients] => {
            let seconds = seconds.parse().expect("SECONDS: a number");
            let clients = clients.parse().expect("CLIENTS: a number");
            let figures = runtime.block_on(client(url, Duration::from_secs_f64(seconds), clients));
            println!("{figures}");
        }
        _ => {
            eprintln!("usage: load serve project|rmcp | load client URL SECONDS CLIENTS");
            std::process::exit(2);
        }
    }
}

async fn serve(which: &str) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("a port");
    let url = format!("http://{}/mcp", listener.local_addr().expect("an address"));
    let shutdown = CancellationToken::new();
    match which {
        "project" => {
            let server = McpServer::builder(bench_runner()).build();
            tokio::spawn(server.serve_http(listener, shutdown.clone()));
        }
        "rmcp" => {
            tokio::spawn(serve_plain(listener, shutdown.clone()));
        }
        other => panic!("no server `{other}`: project or rmcp"),
    }
    println!("{url}");
    // Until whoever started the server closes its stdin.
    tokio::task::spawn_blocking(|| {
        let _ = std::io::stdin().read_to_end(&mut Vec::new());
    })
    .await
    .expect("stdin");
    shutdown.cancel();
}

/// The plain rmcp server behind rmcp's Streamable HTTP service on hyper, each connection with
/// `TCP_NODELAY`: the loop of `McpServer::serve_http` less its limits.
async fn serve_plain(listener: tokio::net::TcpListener, shutdown: CancellationToken) {
    let config = McpServer::local_http_config().with_cancellation_token(shutdown.child_token());
    let service = StreamableHttpService::new(
        || Ok(PlainServer::new()),
        Arc::new(LocalSessionManager::default()),
        config,
    );
    loop {
        let (stream, _) = tokio::select! {
            () = shutdown.cancelled() => return,
            accepted = listener.accept() => accepted.expect("a connection"),
        };
        let _ = stream.set_nodelay(true);
        let service = hyper_util::service::TowerToHyperService::new(service.clone());
        tokio::spawn(async move {
            let _ = hyper::server::conn::http1::Builder::new()
                .serve_connection(hyper_util::rt::TokioIo::new(stream), service)
                .await;
        });
    }
}

/// One stateless `tools/call` of `bench__medium`, as bytes.
fn request_body() -> Vec<u8> {
    let arguments: Value = serde_json::from_str(MEDIUM_ARGS).expect("JSON");
    let body = json!({
        "jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": {
            "name": "bench__medium", "arguments": arguments,
            "_meta": {
                "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                "io.modelcontextprotocol/clientCapabilities": {}
            }
        }
    });
    serde_json::to_vec(&body).expect("JSON")
}

/// One call; its latency, or why it failed.
async fn call(http: &reqwest::Client, url: &str, body: &[u8]) -> Result<Duration, String> {
    let start = Instant::now();
    let response = http
        .post(url)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2026-07-28")
        .header("mcp-method", "tools/call")
        .header("mcp-name", "bench__medium")
        .body(body.to_vec())
        .send()
        .await
        .map_err(|error| error.to_string())?;
    let status = response.status();
    let text = response.text().await.map_err(|error| error.to_string())?;
    if !status.is_success() || !text.contains("\"isError\":false") {
        return Err(format!("{status}: {text}"));
    }
    Ok(start.elapsed())
}

async fn client(url: &str, length: Duration, clients: usize) -> Value {
    let http = reqwest::Client::builder()
        .pool_max_idle_per_host(clients)
        .tcp_nodelay(true)
        .build()
        .expect("a client");
    let body: Arc<[u8]> = request_body().into();
    // The server answers correctly before it is timed.
    let first = call(&http, url, &body).await;
    assert!(first.is_ok(), "the server answers `bench__medium`: {first:?}");
    let deadline = Instant::now() + length;
    let start = Instant::now();
    let tasks: Vec<_> = (0..clients)
        .map(|_| {
            let (http, url, body) = (http.clone(), url.to_owned(), Arc::clone(&body));
            tokio::spawn(async move {
                let mut latencies = Vec::new();
                let mut errors = 0_u64;
                while Instant::now() < deadline {
                    match call(&http, &url, &body).await {
                        Ok(took) => latencies.push(took),
                        Err(_) => errors += 1,
                    }
                }
                (latencies, errors)
            })
        })
        .collect();
    let mut latencies = Vec::new();
    let mut errors = 0;
    for task in tasks {
        let (mine, failed) = task.await.expect("a client task");
        latencies.extend(mine);
        errors += failed;
    }
    let elapsed = start.elapsed().as_secs_f64();
    latencies.sort_unstable();
    let at = |q: f64| {
        let index = ((latencies.len() as f64 - 1.0) * q).round() as usize;
        latencies.get(index).map_or(0.0, |took| took.as_secs_f64() * 1e6)
    };
    json!({
        "requests": latencies.len(),
        "errors": errors,
        "seconds": elapsed,
        "rps": latencies.len() as f64 / elapsed,
        "p50_us": at(0.50),
        "p99_us": at(0.99),
    })
}
