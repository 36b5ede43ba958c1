//! An MCP `tools/call` round trip over an in-memory pipe (issue 29 item 2): the project's
//! server (`McpServer` over the bench runner: policy, validation, the run, output validation,
//! redaction) against a plain rmcp `#[tool]` server with the same tools
//! (`tool_benches::peers::PlainServer`: serde in, `Json` out), both behind rmcp's own service
//! and driven by one rmcp client each, in the same run.
//!
//! Each iteration is one whole request: the client encodes it, the server reads, runs and
//! answers it, the client reads the answer. Client and server share one current-thread Tokio
//! runtime, so the figure is the work of both ends and no thread hand-off.

use std::time::{Duration, Instant};

use criterion::{Criterion, criterion_group, criterion_main};
use rmcp::model::{CallToolRequestParams, CallToolResult};
use rmcp::service::{RoleClient, RunningService};
use serde_json::{Map, Value};
use tool_benches::bench_runner;
use tool_benches::peers::{PlainServer, connect};
use tool_benches::tools::{MEDIUM_ARGS, SMALL_ARGS};
use tool_runtime::mcp::McpServer;

type Client = RunningService<RoleClient, ()>;

fn params(tool: &str, args: &str) -> CallToolRequestParams {
    let arguments: Map<String, Value> = serde_json::from_str(args).expect("an object");
    CallToolRequestParams::new(tool.to_owned()).with_arguments(arguments)
}

async fn call(client: &Client, params: &CallToolRequestParams) -> CallToolResult {
    client.call_tool(params.clone()).await.expect("an answer")
}

fn mcp_pipe(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("a runtime");
    let ours = rt.block_on(connect(McpServer::builder(bench_runner()).build()));
    let plain = rt.block_on(connect(PlainServer::new()));
    for (size, tool, args) in
        [("small", "bench__small", SMALL_ARGS), ("medium", "bench__medium", MEDIUM_ARGS)]
    {
        let params = params(tool, args);
        // Both servers must give the same answer before their speed is compared.
        let theirs = rt.block_on(call(&plain, &params));
        let mine = rt.block_on(call(&ours, &params));
        assert_eq!(mine.is_error, Some(false), "{mine:?}");
        assert_eq!(mine.structured_content, theirs.structured_content, "{size}: the same output");

        let mut group = c.benchmark_group(format!("mcp_pipe/{size}"));
        for (name, client) in [("rmcp", &plain), ("project", &ours)] {
            group.bench_function(name, |b| {
                b.iter_custom(|iters| {
                    rt.block_on(async {
                        let start = Instant::now();
                        for _ in 0..iters {
                            std::hint::black_box(call(client, &params).await);
                        }
                        start.elapsed()
                    })
                });
            });
        }
        group.finish();
    }
    rt.block_on(async {
        let _ = ours.cancel().await;
        let _ = plain.cancel().await;
    });
}

criterion_group! {
    name = benches;
    config = Criterion::default()
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(3))
        .sample_size(30);
    targets = mcp_pipe
}
criterion_main!(benches);
