//! The MCP server as two replicas behind a load balancer with no session affinity: two server
//! processes (this test binary again, as [`an_mcp_replica`]) sharing one store and one state
//! key, behind a round-robin proxy written here, so that consecutive requests of one client go
//! to alternate replicas. An approval asked on one replica is decided on the other, the
//! refund runs once, a second caller's use of the first one's `requestState` is refused and a
//! replay is refused by the replica that did not run it. On SQLite (one host) and PostgreSQL.

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;

use serde_json::json;
use tool_runtime::agent::StateKey;
use tool_runtime::catalog::ToolCatalog;
use tool_runtime::mcp::{McpServer, TaskSupport};
use tool_runtime::policy::ToolPolicy;
use tool_runtime::prelude::*;
use tool_runtime::runner::{DeferAll, ToolRunner};
use tool_runtime::runtime::Capability;
use tool_runtime::store::{RunStore, SqliteStore};
use tool_tests::stores::{drop_schema, fresh_file, fresh_schema, postgres_store};

use super::rounds::{answering, call, error_message, refund, rpc};
use super::serve::Tokens;

/// Where a replica's refunds are written, one line (the replica's process id) per refund.
#[derive(Debug, Clone)]
struct RefundLog(PathBuf);

impl Capability for RefundLog {
    const NAME: &'static str = "refund_log";
}

/// Refund an order.
#[tool(name = "shop__refund", effect = state_change, redact = ["refunded"], capabilities = [RefundLog])]
struct Refund {
    order: String,
    cents: u32,
}

#[derive(Serialize, ToolSchema)]
struct Refunded {
    refunded: u32,
}

impl Tool for Refund {
    type Output = Refunded;
    async fn run(
        self,
        _: &ToolInvocationContext,
        caps: &ToolCapabilities,
    ) -> Result<Refunded, ToolError> {
        let log = &caps.get::<RefundLog>()?.0;
        let mut file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(log)
            .map_err(|error| ToolError::new(error.to_string()))?;
        writeln!(file, "{} {}", std::process::id(), self.order)
            .map_err(|error| ToolError::new(error.to_string()))?;
        Ok(Refunded { refunded: self.cents })
    }
}

/// Refund an order slowly: the refund is made (and written down) first, then the call takes
/// a few seconds to end.
#[tool(name = "shop__slow_refund", effect = external_side_effect, redact = [], capabilities = [RefundLog])]
struct SlowRefund {
    order: String,
}

impl Tool for SlowRefund {
    type Output = Refunded;
    async fn run(
        self,
        ctx: &ToolInvocationContext,
        caps: &ToolCapabilities,
    ) -> Result<Refunded, ToolError> {
        Refund { order: self.order, cents: 1 }.run(ctx, caps).await?;
        tokio::time::sleep(std::time::Duration::from_secs(30)).await;
        Ok(Refunded { refunded: 1 })
    }
}

/// The store `spec` names: `sqlite:<path>` or `postgres:<schema>`.
async fn open_store(spec: &str) -> Arc<dyn RunStore> {
    match spec.split_once(':') {
        Some(("sqlite", path)) => Arc::new(SqliteStore::open(path).await.unwrap()),
        Some(("postgres", schema)) => Arc::new(postgres_store(schema).await.unwrap()),
        _ => panic!("no store `{spec}`"),
    }
}

/// Not a test of its own: one replica, on the store `MCP_REPLICA_STORE`, writing its refunds
/// to `MCP_REPLICA_LOG`; prints where it listens, then serves until killed.
#[test]
#[ignore = "a child process of the replica tests, not a test on its own"]
fn an_mcp_replica() {
    let (Ok(store), Ok(log)) =
        (std::env::var("MCP_REPLICA_STORE"), std::env::var("MCP_REPLICA_LOG"))
    else {
        return;
    };
    let runtime =
        tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build();
    runtime.unwrap().block_on(async move {
        let catalog = ToolCatalog::builder()
            .register::<Refund>()
            .register::<SlowRefund>()
            .capability(RefundLog(PathBuf::from(log)))
            .build()
            .unwrap();
        let policy = ToolPolicy::from_json(
            r#"{"allowed_tools": ["shop__*"], "require_approval": ["state_change"]}"#,
        )
        .unwrap();
        let runner =
            ToolRunner::builder(catalog).policy(policy).approver(Arc::new(DeferAll)).build();
        let server = McpServer::builder(runner)
            .authenticator(Arc::new(Tokens))
            .store(open_store(&store).await, StateKey::new(*b"the replicas' shared secret!!!!!"))
            .task("shop__slow_refund", TaskSupport::Optional)
            .build();
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        println!("listening on {}", listener.local_addr().unwrap());
        std::io::stdout().flush().unwrap();
        let served = server.serve_http(listener, tokio_util::sync::CancellationToken::new()).await;
        panic!("the replica stopped: {served:?}");
    });
}

/// A replica process, killed when dropped.
struct Replica {
    child: Child,
    address: String,
}

impl Drop for Replica {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn start_replica(store: &str, log: &Path) -> Replica {
    let mut child = Command::new(std::env::current_exe().unwrap())
        .args(["--exact", "replicas::an_mcp_replica", "--ignored", "--nocapture"])
        .env("MCP_REPLICA_STORE", store)
        .env("MCP_REPLICA_LOG", log)
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap();
    let stdout = BufReader::new(child.stdout.take().unwrap());
    for line in stdout.lines() {
        let line = line.unwrap();
        if let Some(address) = line.strip_prefix("listening on ") {
            return Replica { child, address: address.to_owned() };
        }
    }
    let _ = child.kill();
    let _ = child.wait();
    panic!("the replica stopped before it listened");
}

/// A round-robin load balancer on loopback: each connection goes to the next replica of
/// `replicas`. Returns its URL.
async fn round_robin(replicas: Vec<String>) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    tokio::spawn(async move {
        for turn in 0.. {
            let Ok((mut inbound, _)) = listener.accept().await else { return };
            let replicas = replicas.clone();
            tokio::spawn(async move {
                // The next replica that takes the connection: one that died is passed over.
                for next in 0..replicas.len() {
                    let replica = &replicas[(turn + next) % replicas.len()];
                    if let Ok(mut outbound) = tokio::net::TcpStream::connect(replica).await {
                        let _ = tokio::io::copy_bidirectional(&mut inbound, &mut outbound).await;
                        return;
                    }
                }
            });
        }
    });
    url
}

/// The conversation, each request on a connection of its own so that they alternate replicas.
async fn an_approval_crosses_replicas(store: &str, name: &str) {
    let log = fresh_file(Path::new(env!("CARGO_TARGET_TMPDIR")), name).with_extension("log");
    let mut replicas = [start_replica(store, &log), start_replica(store, &log)];
    let url = round_robin(replicas.iter().map(|replica| replica.address.clone()).collect()).await;

    // 1 (replica A): asked.
    let first = call(&url, "alice-secret", refund(500)).await;
    assert_eq!(first["result"]["resultType"], "input_required", "{first}");
    let state = &first["result"]["requestState"];
    let approve = json!({"approval": {"action": "accept", "content": {"approve": true}}});
    // 2 (B): another caller of the same tenant with alice's state: refused.
    let carol = call(&url, "carol-secret", answering(refund(500), state, approve.clone())).await;
    assert!(error_message(&carol).contains("another caller"), "{carol}");
    // 3 (A): not answered, asked again with the same state.
    let again = call(&url, "alice-secret", answering(refund(500), state, json!({}))).await;
    assert_eq!(&again["result"]["requestState"], state, "{again}");
    // 4 (B): approved on the replica that did not ask: it runs there.
    let done = call(&url, "alice-secret", answering(refund(500), state, approve.clone())).await;
    assert_eq!(done["result"]["structuredContent"], json!({"refunded": 500}), "{done}");
    // 5 (A): a replay on the replica that asked: refused, from the shared store.
    let replay = call(&url, "alice-secret", answering(refund(500), state, approve)).await;
    assert!(error_message(&replay).contains("used already"), "{replay}");

    let refunds = std::fs::read_to_string(&log).unwrap();
    let ran_on = replicas[1].child.id();
    assert_eq!(refunds, format!("{ran_on} A-17\n"), "the refund ran once, on replica B");

    // 6 (B): a slow refund as a task, running on the replica that took it, which is killed in
    // the middle of it.
    let slow = json!({"name": "shop__slow_refund", "arguments": {"order": "B-9"}});
    let capabilities = json!({"extensions": {"io.modelcontextprotocol/tasks": {}}});
    let created = rpc(&url, "alice-secret", "tools/call", slow, capabilities.clone()).await;
    let id = created["result"]["taskId"].as_str().unwrap_or_else(|| panic!("{created}")).to_owned();
    let mut ran_on = None;
    for _ in 0..500 {
        let refunds = std::fs::read_to_string(&log).unwrap();
        ran_on = refunds.lines().find_map(|line| line.strip_suffix(" B-9")).map(str::to_owned);
        if ran_on.is_some() {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    let ran_on: u32 = ran_on.expect("the task started").parse().unwrap();
    let running = replicas.iter_mut().find(|replica| replica.child.id() == ran_on).unwrap();
    running.child.kill().unwrap();
    running.child.wait().unwrap();
    // The other replica answers for the task, from the store: working while the dead
    // replica's lease lasts, then failed; nothing runs it again.
    let get =
        || rpc(&url, "alice-secret", "tasks/get", json!({"taskId": id}), capabilities.clone());
    let got = get().await;
    assert_eq!(got["result"]["taskId"], id.as_str(), "{got}");
    assert_eq!(got["result"]["status"], "working", "{got}");
    let mut failed = None;
    for _ in 0..80 {
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
        let got = get().await;
        if got["result"]["status"] != "working" {
            failed = Some(got);
            break;
        }
    }
    let failed = failed.expect("the task reads as failed once the dead replica's lease ran out");
    assert_eq!(failed["result"]["status"], "failed", "{failed}");
    assert_eq!(failed["result"]["error"]["code"], -32603, "{failed}");
    let refunds = std::fs::read_to_string(&log).unwrap();
    assert_eq!(refunds.lines().filter(|line| line.ends_with("B-9")).count(), 1, "{refunds}");
    let _ = std::fs::remove_file(&log);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_approval_asked_on_one_replica_is_decided_on_the_other_over_sqlite() {
    let path = fresh_file(Path::new(env!("CARGO_TARGET_TMPDIR")), "mcp-replicas");
    // The file made once, before the replicas open it.
    drop(SqliteStore::open(&path).await.unwrap());
    an_approval_crosses_replicas(&format!("sqlite:{}", path.display()), "mcp-replicas-sqlite")
        .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_approval_asked_on_one_replica_is_decided_on_the_other_over_postgres() {
    let schema = fresh_schema("mcp_replicas").await;
    drop(postgres_store(&schema).await.unwrap());
    an_approval_crosses_replicas(&format!("postgres:{schema}"), "mcp-replicas-postgres").await;
    drop_schema(&schema).await;
}
