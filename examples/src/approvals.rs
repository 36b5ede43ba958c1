//! Human in the loop across HTTP requests: the server of `cargo run -p examples --bin
//! approvals`.
//!
//! [`serve`] answers two routes over HTTP/1.1, each handled by a fresh agent as separate
//! processes would:
//!
//! - `POST /chat` with the user's text ([`Shop::chat`]) runs an agent turn; when the model asks
//!   for a refund (a state change), the call waits for a person, and the sealed run state goes
//!   to a file.
//! - `POST /approve` with a call id ([`Shop::approve`]) reads the state back, approves the call
//!   and resumes the run; the refund runs once. A second approval of the same state is refused
//!   (`409 Conflict`) and runs nothing: every request's agent spends decided calls in the one
//!   ledger the server shares.

use std::convert::Infallible;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use bytes::Bytes;
use http_body_util::{BodyExt, Full, Limited};
use hyper::body::Incoming;
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Method, Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use serde_json::{Value, json};
use tokio::net::TcpListener;
use tool_runtime::agent::deferred::{Decisions, ResumeError, RunState, StateKey};
use tool_runtime::agent::{Agent, AgentOutput, Message, ScriptedModel, ScriptedTurn};
use tool_runtime::prelude::*;
use tool_runtime::runner::DeferAll;
use tool_runtime::runtime::Capability;
use tool_runtime::store::InMemoryStore;

/// The shop's payment system: counts the refunds it made.
#[derive(Debug, Default)]
pub struct Payments {
    refunds: AtomicUsize,
}

impl Capability for Payments {
    const NAME: &'static str = "payments";
}

impl Payments {
    /// Refunds made so far.
    #[must_use]
    pub fn refunds(&self) -> usize {
        self.refunds.load(Ordering::SeqCst)
    }
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
        caps.get::<Payments>()?.refunds.fetch_add(1, Ordering::SeqCst);
        Ok(Refunded { refunded: self.order })
    }
}

/// The application's key for run states (in production: from a secret store).
const KEY: &[u8; 32] = b"example key, never use in a shop";

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
        .with_store(Arc::clone(&shop.ledger) as _)
}

/// The session's context: one run of one user of one tenant.
#[must_use]
pub fn ctx() -> ToolInvocationContext {
    ToolInvocationContext::new(ContextIds {
        run_id: "run-42",
        actor_id: "alice",
        tenant_id: "shop-1",
    })
}

/// Where a waiting run's state is kept in `dir`.
#[must_use]
pub fn state_file(dir: &Path) -> PathBuf {
    dir.join("run-42.json")
}

/// What every request of the server shares: the folder of run states, the payment system, and
/// the ledger of decided calls (in a real shop, tables of its database).
#[derive(Debug)]
pub struct Shop {
    dir: PathBuf,
    payments: Arc<Payments>,
    ledger: Arc<InMemoryStore>,
}

impl Shop {
    /// A shop that keeps run states in `dir`.
    pub fn new(dir: impl Into<PathBuf>) -> Self {
        Self { dir: dir.into(), payments: Arc::default(), ledger: Arc::default() }
    }

    /// Refunds made so far.
    #[must_use]
    pub fn refunds(&self) -> usize {
        self.payments.refunds()
    }

    /// `POST /chat`: runs the agent on the user's message. A run that waits writes its state
    /// to [`state_file`]; returns the run's output.
    ///
    /// # Errors
    ///
    /// The state file could not be written.
    pub async fn chat(&self, text: &str) -> std::io::Result<AgentOutput> {
        let model =
            vec![ScriptedTurn::openai_calls(&[("call_1", "shop__refund", r#"{"order": 1001}"#)])];
        let output = agent(self, model).run(vec![Message::user(text)], &ctx(), &|_| {}).await;
        if let Some(state) = &output.state {
            let json = serde_json::to_vec_pretty(state).map_err(std::io::Error::other)?;
            std::fs::write(state_file(&self.dir), json)?;
        }
        Ok(output)
    }

    /// `POST /approve`: reads the waiting run's state, approves `call_id` and resumes the run.
    ///
    /// # Errors
    ///
    /// The state file is missing or unreadable (`Err(io)`), or the resume was refused
    /// (`Ok(Err(resume))`): a forged or stale state, or one resumed already.
    pub async fn approve(
        &self,
        call_id: &str,
    ) -> std::io::Result<Result<AgentOutput, ResumeError>> {
        let json = std::fs::read(state_file(&self.dir))?;
        let state: RunState = serde_json::from_slice(&json).map_err(std::io::Error::other)?;
        let model = vec![ScriptedTurn::openai_text("Order 1001 is refunded.")];
        let decisions = Decisions::new().approve(call_id);
        Ok(agent(self, model).resume(state, decisions, &ctx(), &|_| {}).await)
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
    let failed = |error: std::io::Error| {
        reply(StatusCode::INTERNAL_SERVER_ERROR, &json!({"error": error.to_string()}))
    };
    let response = match (parts.method, parts.uri.path()) {
        (Method::POST, "/chat") => match shop.chat(text).await {
            Ok(output) => reply(StatusCode::OK, &answer(&output)),
            Err(error) => failed(error),
        },
        (Method::POST, "/approve") => match shop.approve(text.trim()).await {
            Ok(Ok(output)) => reply(StatusCode::OK, &answer(&output)),
            Ok(Err(refused)) => {
                reply(StatusCode::CONFLICT, &json!({"refused": refused.to_string()}))
            }
            Err(error) => failed(error),
        },
        _ => reply(StatusCode::NOT_FOUND, &json!({"error": "POST /chat or POST /approve"})),
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
