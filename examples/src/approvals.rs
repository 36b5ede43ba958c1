//! Human in the loop across HTTP requests and processes: the server of `cargo run -p examples
//! --bin approvals`.
//!
//! [`serve`] answers three routes over HTTP/1.1, each handled by a fresh agent, as separate
//! processes would; every process of the shop opens the same run store ([`Shop::open`]: one
//! SQLite file, or PostgreSQL when `DATABASE_URL` is set):
//!
//! - `POST /chat?run=<run id>` with the user's text ([`Shop::chat`]) runs an agent turn; when
//!   the model asks for a refund (a state change), the call waits for a person, and the run is
//!   saved in the store.
//! - `GET /inbox` ([`Shop::inbox`]) lists the runs that wait, oldest first.
//! - `POST /approve?run=<run id>` with a call id ([`Shop::approve`]) approves the call and
//!   resumes the run from the store, in whichever process gets the request; the refund runs
//!   once. A second approval is refused (`409 Conflict`) and runs nothing.
//!
//! [`play`] is the whole story with two server processes, restarted halfway.

use std::convert::Infallible;
use std::io::Write as _;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};

use bytes::Bytes;
use http_body_util::{BodyExt, Full, Limited};
use hyper::body::Incoming;
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Method, Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use serde_json::{Value, json};
use tokio::net::TcpListener;
use tool_runtime::agent::deferred::{Decisions, ResumeError, StateKey};
use tool_runtime::agent::{Agent, AgentOutput, Message, ScriptedModel, ScriptedTurn};
use tool_runtime::prelude::*;
use tool_runtime::runner::DeferAll;
use tool_runtime::runtime::Capability;
use tool_runtime::store::{
    PostgresOptions, PostgresStore, RunStore, SqliteStore, StoreError, WaitingQuery,
};

/// The shop's payment system: a log of the refunds it made, one order a line, which every
/// process of the shop appends to.
#[derive(Debug)]
pub struct Payments {
    log: PathBuf,
    appending: Mutex<()>,
}

impl Capability for Payments {
    const NAME: &'static str = "payments";
}

impl Payments {
    /// Payments that log refunds to `log`.
    pub fn new(log: impl Into<PathBuf>) -> Self {
        Self { log: log.into(), appending: Mutex::new(()) }
    }

    /// Refunds made so far, by every process.
    #[must_use]
    pub fn refunds(&self) -> usize {
        refunds_in(&self.log)
    }

    fn refund(&self, order: u32) -> std::io::Result<()> {
        let _one_at_a_time = self.appending.lock().unwrap_or_else(PoisonError::into_inner);
        let mut log = std::fs::OpenOptions::new().create(true).append(true).open(&self.log)?;
        // One short write in append mode: lines of several processes never interleave.
        log.write_all(format!("{order}\n").as_bytes())
    }
}

/// The refunds logged in `log` (none when there is no log yet).
#[must_use]
pub fn refunds_in(log: &Path) -> usize {
    std::fs::read_to_string(log).map_or(0, |text| text.lines().count())
}

/// Refund an order in full.
#[derive(Debug)]
#[tool(name = "shop__refund", effect = state_change, redact = ["refunded"], capabilities = [Payments])]
pub struct Refund {
    /// The order's number.
    pub order: u32,
}

/// A refund made.
#[derive(Debug, Serialize, ToolSchema)]
pub struct Refunded {
    /// The order refunded.
    pub refunded: u32,
}

impl Tool for Refund {
    type Output = Refunded;
    async fn run(
        self,
        _: &ToolInvocationContext,
        caps: &ToolCapabilities,
    ) -> Result<Refunded, ToolError> {
        caps.get::<Payments>()?
            .refund(self.order)
            .map_err(|error| ToolError::retryable(format!("the payment log failed: {error}")))?;
        Ok(Refunded { refunded: self.order })
    }
}

/// The application's key for run states (in production: from a secret store).
const KEY: &[u8; 32] = b"example key, never use in a shop";

/// The shop's tenant and the user who chats.
const TENANT: &str = "shop-1";
const ACTOR: &str = "alice";

/// The agent each request builds: refunds need a person's approval, which comes later.
fn agent(shop: &Shop, turns: Vec<ScriptedTurn>) -> Agent {
    let catalog = ToolCatalog::builder()
        .register::<Refund>()
        .shared_capability(Arc::clone(&shop.payments))
        .build()
        .unwrap_or_else(|error| panic!("the example catalog is valid: {error}"));
    let policy = ToolPolicy {
        require_approval: vec![ToolEffect::StateChange],
        ..ToolPolicy::allowing(["shop__*"])
    };
    let runner = ToolRunner::builder(catalog).policy(policy).approver(Arc::new(DeferAll)).build();
    Agent::new(Arc::new(ScriptedModel::new(turns)), runner)
        .with_state_key(StateKey::new(*KEY))
        .with_store(Arc::clone(&shop.store))
}

/// The context of the run `run_id`: one run of the shop's user.
#[must_use]
pub fn ctx(run_id: &str) -> ToolInvocationContext {
    ToolInvocationContext::new(ContextIds { run_id, actor_id: ACTOR, tenant_id: TENANT })
}

/// What every request of every process of the shop shares: the run store and the payment
/// system.
#[derive(Debug)]
pub struct Shop {
    store: Arc<dyn RunStore>,
    payments: Arc<Payments>,
}

impl Shop {
    /// The shop whose processes share `dir`: its payments log, and its run store, the SQLite
    /// file `runs.sqlite` there, or, when `DATABASE_URL` is set, that PostgreSQL database (in
    /// the schema `APPROVALS_SCHEMA`, by default `approvals_example`).
    ///
    /// # Errors
    ///
    /// The store could not be opened.
    pub async fn open(dir: &Path) -> Result<Self, StoreError> {
        let store: Arc<dyn RunStore> = match std::env::var("DATABASE_URL") {
            Ok(url) => {
                let schema = std::env::var("APPROVALS_SCHEMA")
                    .unwrap_or_else(|_| "approvals_example".to_owned());
                let options = PostgresOptions { schema, ..PostgresOptions::default() };
                Arc::new(PostgresStore::connect(&url, options).await?)
            }
            Err(_) => Arc::new(SqliteStore::open(dir.join("runs.sqlite")).await?),
        };
        Ok(Self { store, payments: Arc::new(Payments::new(dir.join("refunds.log"))) })
    }

    /// Refunds made so far, by every process of the shop.
    #[must_use]
    pub fn refunds(&self) -> usize {
        self.payments.refunds()
    }

    /// `POST /chat?run=<run_id>`: runs the agent on the user's message; a run that waits is
    /// saved in the store. Returns the run's output.
    pub async fn chat(&self, run_id: &str, text: &str) -> AgentOutput {
        let model =
            vec![ScriptedTurn::openai_calls(&[("call_1", "shop__refund", r#"{"order": 1001}"#)])];
        agent(self, model).run(vec![Message::user(text)], &ctx(run_id), &|_| {}).await
    }

    /// `GET /inbox`: the shop's runs that wait, oldest first: each run's id and its waiting
    /// calls' ids and tools.
    ///
    /// # Errors
    ///
    /// The store failed.
    pub async fn inbox(&self) -> Result<Value, StoreError> {
        let runs = self.store.list_waiting(&WaitingQuery::tenant(TENANT)).await?;
        let runs: Vec<Value> = runs
            .into_iter()
            .map(|run| {
                let calls: Vec<Value> = run
                    .waiting
                    .iter()
                    .map(|call| json!({"call": call.call_id, "tool": call.tool_name}))
                    .collect();
                json!({"run": run.key.run_id, "waiting": calls})
            })
            .collect();
        Ok(json!({ "runs": runs }))
    }

    /// `POST /approve?run=<run_id>`: approves `call_id` and resumes the run from the store.
    ///
    /// # Errors
    ///
    /// The resume was refused: the run is not stored, was resumed already, expired or was
    /// tampered with, or the store failed.
    pub async fn approve(&self, run_id: &str, call_id: &str) -> Result<AgentOutput, ResumeError> {
        let model = vec![ScriptedTurn::openai_text("Order 1001 is refunded.")];
        let decisions = Decisions::new().approve(call_id);
        agent(self, model).resume_stored(decisions, &ctx(run_id), &|_| {}).await
    }
}

/// The largest request body the server reads.
const MAX_BODY: usize = 64 * 1024;

/// Serves `shop` on `listener` until the task is dropped, one task per connection.
///
/// # Errors
///
/// The listener failed to accept a connection.
pub async fn serve(listener: TcpListener, shop: Arc<Shop>) -> std::io::Result<()> {
    loop {
        let (stream, _) = listener.accept().await?;
        let shop = Arc::clone(&shop);
        tokio::spawn(async move {
            let service = service_fn(move |request| handle(Arc::clone(&shop), request));
            // A connection that breaks ends on its own; the server goes on.
            let _ = http1::Builder::new().serve_connection(TokioIo::new(stream), service).await;
        });
    }
}

async fn handle(
    shop: Arc<Shop>,
    request: Request<Incoming>,
) -> Result<Response<Full<Bytes>>, Infallible> {
    let (parts, body) = request.into_parts();
    let Ok(body) = Limited::new(body, MAX_BODY).collect().await else {
        let error = json!({"error": "the body is unreadable or over 64 KiB"});
        return Ok(reply(StatusCode::PAYLOAD_TOO_LARGE, &error));
    };
    let body = body.to_bytes();
    let Ok(text) = std::str::from_utf8(&body) else {
        return Ok(reply(StatusCode::BAD_REQUEST, &json!({"error": "the body is not UTF-8"})));
    };
    let run = parts.uri.query().and_then(|query| query.strip_prefix("run=")).unwrap_or("");
    let response = match (parts.method, parts.uri.path()) {
        (Method::POST, "/chat") if !run.is_empty() => {
            let output = shop.chat(run, text).await;
            match &output.store_error {
                None => reply(StatusCode::OK, &answer(&output)),
                Some(error) => {
                    reply(StatusCode::INTERNAL_SERVER_ERROR, &json!({"error": error.to_string()}))
                }
            }
        }
        (Method::GET, "/inbox") => match shop.inbox().await {
            Ok(inbox) => reply(StatusCode::OK, &inbox),
            Err(error) => {
                reply(StatusCode::INTERNAL_SERVER_ERROR, &json!({"error": error.to_string()}))
            }
        },
        (Method::POST, "/approve") if !run.is_empty() => {
            // In a task of its own: a client that disconnects drops this handler, and must not
            // drop a resume that spent its call halfway.
            let (run, call) = (run.to_owned(), text.trim().to_owned());
            let approving = tokio::spawn(async move { shop.approve(&run, &call).await });
            match approving.await {
                Ok(Ok(output)) => reply(StatusCode::OK, &answer(&output)),
                Ok(Err(refused)) => {
                    let status = match &refused {
                        ResumeError::Store(StoreError::NotFound { .. }) => StatusCode::NOT_FOUND,
                        ResumeError::Store(StoreError::Expired { .. }) => StatusCode::GONE,
                        ResumeError::Store(StoreError::Backend { .. }) => {
                            StatusCode::INTERNAL_SERVER_ERROR
                        }
                        _ => StatusCode::CONFLICT,
                    };
                    reply(status, &json!({"refused": refused.to_string()}))
                }
                Err(panicked) => reply(
                    StatusCode::INTERNAL_SERVER_ERROR,
                    &json!({"error": panicked.to_string()}),
                ),
            }
        }
        _ => reply(
            StatusCode::NOT_FOUND,
            &json!({"error": "POST /chat?run=<id>, GET /inbox or POST /approve?run=<id>"}),
        ),
    };
    Ok(response)
}

/// What a request that ran the agent answers: why the run stopped, and the model's answer.
fn answer(output: &AgentOutput) -> Value {
    json!({"stop": output.done.stop, "answer": output.done.answer})
}

fn reply(status: StatusCode, body: &Value) -> Response<Full<Bytes>> {
    let mut response = Response::new(Full::new(Bytes::from(body.to_string())));
    *response.status_mut() = status;
    response
}

/// Posts `body` to `path` of the server at `addr`; returns the status and the JSON answer.
///
/// # Errors
///
/// The request failed, or the answer is not JSON.
pub async fn post(
    client: &reqwest::Client,
    addr: SocketAddr,
    path: &str,
    body: &str,
) -> reqwest::Result<(u16, Value)> {
    let response = client.post(format!("http://{addr}{path}")).body(body.to_owned()).send().await?;
    let status = response.status().as_u16();
    Ok((status, response.json().await?))
}

/// The run ids `GET /inbox` of the server at `addr` lists.
///
/// # Errors
///
/// The request failed, or the answer is not the inbox.
pub async fn inbox(client: &reqwest::Client, addr: SocketAddr) -> reqwest::Result<Vec<String>> {
    let inbox: Value = client.get(format!("http://{addr}/inbox")).send().await?.json().await?;
    let runs = inbox["runs"].as_array().cloned().unwrap_or_default();
    Ok(runs.iter().filter_map(|run| run["run"].as_str().map(str::to_owned)).collect())
}

/// Opens the shop of `dir` ([`Shop::open`]), listens on a loopback port, prints `listening on
/// http://<addr>` and serves until the process is stopped: one server process of [`play`].
///
/// # Errors
///
/// The store could not be opened, or the listener failed.
pub async fn run_server(dir: &Path) -> Result<(), Box<dyn std::error::Error>> {
    let shop = Arc::new(Shop::open(dir).await?);
    let listener = TcpListener::bind("127.0.0.1:0").await?;
    println!("listening on http://{}", listener.local_addr()?);
    std::io::stdout().flush()?;
    serve(listener, shop).await?;
    Ok(())
}

/// A server process of [`play`], killed when dropped.
struct Server {
    child: std::process::Child,
    addr: SocketAddr,
}

impl Server {
    /// Starts `command` (which runs [`run_server`]) and reads the address it listens on.
    fn start(mut command: std::process::Command) -> std::io::Result<Self> {
        use std::io::{BufRead, BufReader};
        let mut child = command.stdout(std::process::Stdio::piped()).spawn()?;
        let stdout = child.stdout.take().ok_or_else(|| std::io::Error::other("no stdout"))?;
        let mut lines = BufReader::new(stdout).lines();
        let addr = lines.find_map(|line| {
            let line = line.ok()?;
            let at = line.find("listening on http://")?;
            line[at + "listening on http://".len()..].trim().parse().ok()
        });
        let Some(addr) = addr else {
            let _ = child.kill();
            return Err(std::io::Error::other("the server process did not start"));
        };
        Ok(Self { child, addr })
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// What [`play`] saw.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Played {
    /// Refunds made by the approved run (once it was approved on the other server).
    pub refunds: usize,
    /// The status of the replayed approval.
    pub replayed: u16,
    /// The runs the inbox lists after both servers restarted.
    pub inbox_after_restart: Vec<String>,
}

/// The story with two server processes started by `server` (each runs [`run_server`] on the
/// same shop folder `dir`): run `<first>` pauses on the first, the approval arrives at the
/// second and the refund runs once; a replay at the first gets `409`; run `<second>` waits;
/// both servers restart, and the inbox still lists `<second>`. Prints each step. (Run ids are
/// the application's, unique within the tenant: a store that outlives the story, a
/// PostgreSQL database, keeps the ledger of earlier ones.)
///
/// # Errors
///
/// A server did not start, or a request failed.
pub async fn play(
    server: impl Fn() -> std::process::Command,
    dir: &Path,
    [first, second]: [&str; 2],
) -> Result<Played, Box<dyn std::error::Error>> {
    let client = reqwest::Client::new();
    let (one, two) = (Server::start(server())?, Server::start(server())?);
    println!("two shop servers: http://{} and http://{}", one.addr, two.addr);
    let log = dir.join("refunds.log");
    let (chat, approve) =
        (|run: &str| format!("/chat?run={run}"), |run: &str| format!("/approve?run={run}"));

    let (status, body) = post(&client, one.addr, &chat(first), "Refund order 1001.").await?;
    println!("server 1: POST /chat?run={first} -> {status} {body}");
    println!("server 2: GET /inbox -> {:?}", inbox(&client, two.addr).await?);
    let (status, body) = post(&client, two.addr, &approve(first), "call_1").await?;
    println!("server 2: POST /approve?run={first} call_1 -> {status} {body}");
    let refunds = refunds_in(&log);
    println!("  refunds made: {refunds}");
    let (replayed, body) = post(&client, one.addr, &approve(first), "call_1").await?;
    println!("server 1: POST /approve?run={first} call_1 (again) -> {replayed} {body}");

    let (status, _) = post(&client, one.addr, &chat(second), "Refund order 1001.").await?;
    println!("server 1: POST /chat?run={second} -> {status} (waits)");
    drop((one, two));
    println!("both servers stopped; starting them again");
    let (one, _two) = (Server::start(server())?, Server::start(server())?);
    let inbox_after_restart = inbox(&client, one.addr).await?;
    println!("server 1: GET /inbox -> {inbox_after_restart:?}");
    Ok(Played { refunds, replayed, inbox_after_restart })
}
