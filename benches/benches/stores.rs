//! The run stores (issue 25), on SQLite (a file under `target/`) and PostgreSQL
//! (`TEST_DATABASE_URL`, by default the server at 127.0.0.1:5432, in a schema of its own that is
//! dropped at the end), against the in-memory store as the baseline:
//!
//! - `save` and `load` of a sealed 50-message state (the bytes the agent stores), and
//!   `agent_load`: `Agent::load`, which also checks the seal and parses the state;
//! - `list_100_of_10k`: the first page (100, oldest first) of a tenant's 10 000 waiting runs, and
//!   `list_tool_100_of_10k` the same filtered by tool (on PostgreSQL after `ANALYZE`, as
//!   autovacuum does);
//! - `resume`: `Agent::resume_stored` of a waiting run, the approved call run and the run ended
//!   (a fresh run saved for each iteration, outside the timing);
//! - `run_audited` / `run_unaudited`: a run of the 50-message conversation whose one call
//!   (`tickets__list`) does not wait, with the audit trail on (its entry appended: the write
//!   every run with a store now makes) and off (`AgentConfig::audit = false`: nothing stored).

use std::sync::Arc;
use std::time::Duration;

use criterion::{BatchSize, Criterion, criterion_group, criterion_main};
use tokio::runtime::Runtime;
use tool_benches::{approval_runner, conversation};
use tool_runtime::agent::deferred::{Decisions, StateKey};
use tool_runtime::agent::{Agent, AgentConfig, ScriptedModel, ScriptedTurn, StopReason};
use tool_runtime::prelude::*;
use tool_runtime::store::{
    InMemoryStore, PostgresOptions, PostgresStore, RunKey, RunStore, SqliteStore, StoredRun,
    WaitingCall, WaitingQuery,
};

const KEY: &[u8; 32] = b"bench key, 32 bytes long, really";

/// An agent over `store` whose `tickets__close` waits for approval; the model plays `turns`.
fn agent(store: Arc<dyn RunStore>, turns: Vec<ScriptedTurn>) -> Agent {
    let runner = approval_runner();
    Agent::new(Arc::new(ScriptedModel::new(turns)), runner)
        .with_state_key(StateKey::new(*KEY))
        .with_store(store)
}

fn ctx(run_id: &str) -> ToolInvocationContext {
    ToolInvocationContext::new(ContextIds { run_id, actor_id: "user-1", tenant_id: "acme" })
}

/// Runs `run_id` to its waiting call (50 messages), saved in `store`.
async fn waiting(store: &Arc<dyn RunStore>, run_id: &str) {
    let turn = ScriptedTurn::openai_calls(&[("call_1", "tickets__close", r#"{"number": 7}"#)]);
    let output =
        agent(Arc::clone(store), vec![turn]).run(conversation(), &ctx(run_id), &|_| {}).await;
    assert_eq!(output.done.stop, StopReason::Waiting { calls: vec!["call_1".into()] });
    assert_eq!(output.store_error, None);
}

/// The test database's URL.
fn database_url() -> String {
    std::env::var("TEST_DATABASE_URL")
        .unwrap_or_else(|_| "postgres://postgres@127.0.0.1:5432/test".to_owned())
}

/// The stores to measure: in memory, a new SQLite file, a new PostgreSQL schema.
fn stores(runtime: &Runtime, schema: &str) -> Vec<(&'static str, Arc<dyn RunStore>)> {
    let dir =
        std::env::temp_dir().join(format!("tool-runtime-bench-stores-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a folder for the SQLite file");
    let path = dir.join("runs.sqlite");
    for suffix in ["", "-wal", "-shm"] {
        let _ = std::fs::remove_file(format!("{}{suffix}", path.display()));
    }
    runtime.block_on(async {
        let sqlite = SqliteStore::open(&path).await.expect("the SQLite store opens");
        let options = PostgresOptions { schema: schema.to_owned(), max_connections: 4 };
        let postgres = PostgresStore::connect(&database_url(), options)
            .await
            .unwrap_or_else(|error| panic!("PostgreSQL at {}: {error}", database_url()));
        vec![
            ("memory", Arc::new(InMemoryStore::new()) as Arc<dyn RunStore>),
            ("sqlite", Arc::new(sqlite) as _),
            ("postgres", Arc::new(postgres) as _),
        ]
    })
}

/// Saves 10 000 waiting runs of `acme` (one in ten waiting on `billing__refund`), each with
/// `bytes` as its state.
async fn fill(store: &Arc<dyn RunStore>, bytes: &[u8]) {
    for index in 0..10_000 {
        let tool = if index % 10 == 0 { "billing__refund" } else { "tickets__close" };
        let call = WaitingCall {
            call_id: "call_1".into(),
            tool_name: tool.into(),
            waits_for: tool_runtime::runtime::WaitsFor::Approval,
        };
        let key = RunKey::new("acme", format!("inbox-{index:05}"));
        let run =
            StoredRun::new(key, "user-1", vec![call], bytes.to_vec(), "rev", index, 86_400_000);
        store.save(run).await.expect("saved");
    }
}

/// `ANALYZE` of the store's tables in `schema`.
async fn analyze(schema: &str) {
    let (client, connection) = tokio_postgres::connect(&database_url(), tokio_postgres::NoTls)
        .await
        .expect("PostgreSQL answers");
    tokio::spawn(connection);
    let tables = format!("ANALYZE {schema}.runs; ANALYZE {schema}.waiting_calls;");
    client.batch_execute(&tables).await.expect("analysed");
}

fn run_stores(c: &mut Criterion) {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("a runtime");
    let schema = format!("bench_stores_{}", std::process::id());
    let stores = stores(&runtime, &schema);
    let mut group = c.benchmark_group("stores");
    group.sample_size(20).measurement_time(Duration::from_secs(5));
    for (name, store) in &stores {
        runtime.block_on(waiting(store, "run-1"));
        let stored = runtime
            .block_on(store.load(&RunKey::new("acme", "run-1")))
            .expect("loaded")
            .expect("stored");
        println!("{name}: a sealed 50-message state is {} bytes", stored.state.len());
        group.bench_function(format!("{name}/save"), |b| {
            b.iter(|| runtime.block_on(store.save(stored.clone())));
        });
        let key = RunKey::new("acme", "run-1");
        group.bench_function(format!("{name}/load"), |b| {
            b.iter(|| runtime.block_on(store.load(&key)));
        });
        let reader = agent(Arc::clone(store), Vec::new());
        let reading = ctx("run-1");
        group.bench_function(format!("{name}/agent_load"), |b| {
            b.iter(|| runtime.block_on(reader.load(&reading)));
        });
        runtime.block_on(fill(store, &stored.state));
        if *name == "postgres" {
            // What autovacuum does soon after a fill: without statistics, the planner takes the
            // 10 000 rows for a handful and sorts them all for each page.
            runtime.block_on(analyze(&schema));
        }
        let first_page = WaitingQuery::tenant("acme").limit(100);
        group.bench_function(format!("{name}/list_100_of_10k"), |b| {
            b.iter(|| runtime.block_on(store.list_waiting(&first_page)));
        });
        let refunds = WaitingQuery::tenant("acme").tool("billing__refund").limit(100);
        group.bench_function(format!("{name}/list_tool_100_of_10k"), |b| {
            b.iter(|| runtime.block_on(store.list_waiting(&refunds)));
        });
        for (bench, audit) in [("run_audited", true), ("run_unaudited", false)] {
            let config = AgentConfig { audit, ..AgentConfig::default() };
            let mut next = 0_u64;
            group.bench_function(format!("{name}/{bench}"), |b| {
                b.iter_batched(
                    || {
                        next += 1;
                        let turns = vec![
                            ScriptedTurn::openai_calls(&[("call_1", "tickets__list", "{}")]),
                            ScriptedTurn::openai_text("None open."),
                        ];
                        let agent = agent(Arc::clone(store), turns).with_config(config.clone());
                        (agent, format!("{bench}-{next}"))
                    },
                    |(agent, run_id)| {
                        let output =
                            runtime.block_on(agent.run(conversation(), &ctx(&run_id), &|_| {}));
                        assert_eq!(output.done.stop, StopReason::Answered);
                        assert_eq!(output.audit_error, None);
                    },
                    BatchSize::PerIteration,
                );
            });
        }
        let mut next = 0_u64;
        group.bench_function(format!("{name}/resume"), |b| {
            b.iter_batched(
                || {
                    next += 1;
                    let run_id = format!("resume-{next}");
                    runtime.block_on(waiting(store, &run_id));
                    let turns = vec![ScriptedTurn::openai_text("Closed.")];
                    (agent(Arc::clone(store), turns), run_id)
                },
                |(agent, run_id)| {
                    let decisions = Decisions::new().approve("call_1");
                    let resumed =
                        runtime.block_on(agent.resume_stored(decisions, &ctx(&run_id), &|_| {}));
                    assert_eq!(resumed.expect("resumed").done.stop, StopReason::Answered);
                },
                BatchSize::PerIteration,
            );
        });
    }
    group.finish();
    runtime.block_on(async {
        let (client, connection) = tokio_postgres::connect(&database_url(), tokio_postgres::NoTls)
            .await
            .expect("PostgreSQL answers");
        tokio::spawn(connection);
        client.batch_execute(&format!("DROP SCHEMA {schema} CASCADE")).await.expect("dropped");
    });
}

criterion_group!(benches, run_stores);
criterion_main!(benches);
