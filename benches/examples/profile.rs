//! A fixed workload for `valgrind --tool=callgrind`, whose instruction counts are stable on a
//! noisy machine where wall-clock timings are not:
//!
//! ```text
//! cargo build --release -p tool-benches --example profile
//! valgrind --tool=callgrind target/release/examples/profile exec-medium 2000
//! ```
//!
//! Workloads: `exec-small`, `exec-medium` (`ToolRunner::exec`), `exec-small-hooks`,
//! `exec-medium-hooks` (the same with one before-call and one after-call hook that decide
//! nothing), `baseline-small`, `baseline-medium` (serde alone), `validate-medium`,
//! `validate-medium-invalid`, `validate-small`, `validate-small-invalid` (`Schema::validate`,
//! the walk over the schema tree), `validate-as-small`, `validate-as-medium` (`validate_as`,
//! the generated validator), `agent` (a 6x4 scripted
//! session), `mcp-small`, `mcp-medium` (a `tools/call` round trip to `McpServer` over an
//! in-memory pipe, both ends counted), `mcp-rmcp-small`, `mcp-rmcp-medium` (the same to the
//! plain rmcp server of `tool_benches::peers`), `mcp-list` (a `tools/list` round trip to
//! `McpServer`: the two bench tools' definitions).
//!
//! `encode <provider> [count]` encodes the definitions of 100 dynamic tools with the medium
//! input schema (`catalog/encode_100`), non-strict, `count` times.
//!
//! `stream <provider> <delta> <bytes> [count]` decodes one call's stream of `bytes` bytes of
//! arguments in `delta`-byte deltas (`tool_benches::streams`) through the provider's
//! `StreamSession`, `count` times. To count the decoding alone, leave building the stream out
//! with `--toggle-collect='*decode_stream*'`.

use std::hint::black_box;
use std::sync::Arc;

use tool_benches::streams::{self, Stream};
use tool_benches::tools::{
    MEDIUM_ARGS, MEDIUM_INVALID_ARGS, Medium, SMALL_ARGS, Small, small_invalid_args,
};
use tool_benches::{bench_runner, bench_runner_with_hooks};
use tool_runtime::adapters::Provider;
use tool_runtime::agent::{Agent, Message, ScriptedModel, ScriptedTurn};
use tool_runtime::prelude::*;
use tool_runtime::schema::validate_as;

fn main() {
    let mut args = std::env::args().skip(1);
    let workload = args.next().unwrap_or_else(|| "exec-small".to_owned());
    let count: usize = args.next().and_then(|n| n.parse().ok()).unwrap_or(1000);
    let rt = tokio::runtime::Builder::new_current_thread().enable_time().build().expect("runtime");
    let runner = bench_runner();
    let ctx = ToolInvocationContext::new(ContextIds {
        run_id: "run-1",
        actor_id: "user-1",
        tenant_id: "tenant-1",
    })
    .with_tool_call_id("call_1");
    match workload.as_str() {
        "exec-small" | "exec-medium" | "exec-small-hooks" | "exec-medium-hooks" => {
            let runner =
                if workload.ends_with("-hooks") { bench_runner_with_hooks() } else { runner };
            let (tool, raw) = if workload.starts_with("exec-small") {
                ("bench__small", SMALL_ARGS)
            } else {
                ("bench__medium", MEDIUM_ARGS)
            };
            rt.block_on(async {
                for _ in 0..count {
                    let result = runner.exec(tool, raw.as_bytes(), &ctx).await;
                    assert!(result.value().is_some());
                    black_box(result);
                }
            });
        }
        "baseline-small" => {
            for _ in 0..count {
                let args: Small = serde_json::from_str(black_box(SMALL_ARGS)).expect("valid");
                black_box(serde_json::to_value(args.answer()).expect("serialisable"));
            }
        }
        "baseline-medium" => {
            for _ in 0..count {
                let args: Medium = serde_json::from_str(black_box(MEDIUM_ARGS)).expect("valid");
                black_box(serde_json::to_value(args.answer()).expect("serialisable"));
            }
        }
        "validate-medium" => {
            let value: serde_json::Value = serde_json::from_str(MEDIUM_ARGS).expect("JSON");
            for _ in 0..count {
                assert!(Medium::SCHEMA.validate(black_box(&value)).is_ok());
            }
        }
        "validate-as-medium" => {
            let value: serde_json::Value = serde_json::from_str(MEDIUM_ARGS).expect("JSON");
            for _ in 0..count {
                assert!(validate_as::<Medium>(black_box(&value)).is_ok());
            }
        }
        "validate-as-small" => {
            let value: serde_json::Value = serde_json::from_str(SMALL_ARGS).expect("JSON");
            for _ in 0..count {
                assert!(validate_as::<Small>(black_box(&value)).is_ok());
            }
        }
        "validate-medium-invalid" => {
            let value: serde_json::Value = serde_json::from_str(MEDIUM_INVALID_ARGS).expect("JSON");
            for _ in 0..count {
                assert_eq!(Medium::SCHEMA.validate(black_box(&value)).map_err(|e| e.len()), Err(6));
            }
        }
        "validate-small" | "validate-small-invalid" => {
            let raw = if workload == "validate-small" {
                SMALL_ARGS.to_owned()
            } else {
                small_invalid_args()
            };
            let value: serde_json::Value = serde_json::from_str(&raw).expect("JSON");
            for _ in 0..count {
                let valid = Small::SCHEMA.validate(black_box(&value)).map_err(|e| e.len());
                assert_eq!(valid.is_ok(), workload == "validate-small");
            }
        }
        "agent" => {
            let medium = serde_json::from_str::<serde_json::Value>(MEDIUM_ARGS).expect("JSON");
            let medium = medium.to_string();
            for _ in 0..count {
                let mut turns: Vec<ScriptedTurn> = (0..6)
                    .map(|turn| {
                        let ids: Vec<String> = (0..4).map(|n| format!("call_{turn}_{n}")).collect();
                        let calls: Vec<(&str, &str, &str)> = (0..4)
                            .map(|n| {
                                if n % 2 == 0 {
                                    (ids[n].as_str(), "bench__small", SMALL_ARGS)
                                } else {
                                    (ids[n].as_str(), "bench__medium", medium.as_str())
                                }
                            })
                            .collect();
                        ScriptedTurn::openai_calls(&calls)
                    })
                    .collect();
                turns.push(ScriptedTurn::openai_text("Done."));
                let model = ScriptedModel::new(turns).chunk_size(4096);
                let agent = Agent::new(Arc::new(model), runner.clone());
                let ctx = ToolInvocationContext::new(ContextIds {
                    run_id: "run-1",
                    actor_id: "user-1",
                    tenant_id: "tenant-1",
                });
                let output = rt.block_on(agent.run(vec![Message::user("Go.")], &ctx, &|_| {}));
                assert_eq!(output.done.records.len(), 24);
            }
        }
        "mcp-small" | "mcp-medium" | "mcp-rmcp-small" | "mcp-rmcp-medium" => {
            let (tool, raw) = if workload.ends_with("small") {
                ("bench__small", SMALL_ARGS)
            } else {
                ("bench__medium", MEDIUM_ARGS)
            };
            let plain = workload.starts_with("mcp-rmcp");
            rt.block_on(mcp_workload(plain, tool, raw, count));
        }
        "mcp-list" => rt.block_on(mcp_list_workload(count)),
        "stream" => stream_workload(std::env::args().skip(2)),
        "encode" => encode_workload(std::env::args().skip(2)),
        other => panic!("unknown workload `{other}`"),
    }
}

/// `stream <provider> <delta> <bytes> [count]`: decodes one stream `count` times (default 1).
fn stream_workload(mut args: impl Iterator<Item = String>) {
    let usage = "usage: stream <provider> <delta> <bytes> [count]";
    let provider: Provider = args.next().and_then(|p| p.parse().ok()).expect(usage);
    let delta: usize = args.next().and_then(|n| n.parse().ok()).expect(usage);
    let bytes: usize = args.next().and_then(|n| n.parse().ok()).expect(usage);
    let count: usize = args.next().and_then(|n| n.parse().ok()).unwrap_or(1);
    let stream = streams::stream(provider, &streams::arguments(bytes), delta);
    for _ in 0..count {
        black_box(decode_stream(black_box(&stream)));
    }
    eprintln!("{} argument bytes, {} wire bytes", stream.argument_bytes, stream.wire.len());
}

/// Feeds `stream` through a fresh session and finishes it; the unit callgrind counts.
#[inline(never)]
fn decode_stream(stream: &Stream) -> usize {
    let mut session = stream.provider.adapter(false).stream();
    let mut events = 0;
    for read in stream.reads() {
        events += session.feed(read).len();
    }
    let decoded = session.finish();
    assert_eq!(decoded.calls.len(), 1);
    assert!(decoded.calls[0].arguments.value().is_some());
    events
}

/// `encode <provider> [count]`: encodes 100 tools' definitions `count` times (default 1).
fn encode_workload(mut args: impl Iterator<Item = String>) {
    let usage = "usage: encode <provider> [count]";
    let provider: Provider = args.next().and_then(|p| p.parse().ok()).expect(usage);
    let count: usize = args.next().and_then(|n| n.parse().ok()).unwrap_or(1);
    let schema = Medium::spec().input_schema().to_json();
    let tools = tool_benches::dynamic_tools(100, &schema);
    let specs: Vec<&ToolSpec> = tools.iter().map(|tool| tool.spec()).collect();
    let adapter = provider.adapter(false);
    for _ in 0..count {
        black_box(adapter.tools(black_box(&specs)).expect("encodes"));
    }
}

/// `count` `tools/call`s of `tool` with `raw` over an in-memory pipe, to the project's server
/// or (`plain`) to the plain rmcp one; client and server on this thread.
async fn mcp_workload(plain: bool, tool: &str, raw: &str, count: usize) {
    use rmcp::model::CallToolRequestParams;
    use tool_benches::peers::{PlainServer, connect};

    let client = if plain {
        connect(PlainServer::new()).await
    } else {
        connect(tool_runtime::mcp::McpServer::builder(bench_runner()).build()).await
    };
    let arguments: serde_json::Map<String, serde_json::Value> =
        serde_json::from_str(raw).expect("an object");
    let params = CallToolRequestParams::new(tool.to_owned()).with_arguments(arguments);
    for _ in 0..count {
        let result = client.call_tool(params.clone()).await.expect("an answer");
        assert_eq!(result.is_error, Some(false));
        black_box(result);
    }
    let _ = client.cancel().await;
}

/// `count` `tools/list` requests to the project's server over an in-memory pipe.
async fn mcp_list_workload(count: usize) {
    let server = tool_runtime::mcp::McpServer::builder(bench_runner()).build();
    let client = tool_benches::peers::connect(server).await;
    for _ in 0..count {
        let listed = client.list_tools(None).await.expect("an answer");
        assert_eq!(listed.tools.len(), 2);
        black_box(listed);
    }
    let _ = client.cancel().await;
}
