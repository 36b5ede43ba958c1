//! Human in the loop across HTTP requests: the handlers of `cargo run -p examples --bin
//! approvals`, as plain functions.
//!
//! [`chat`] stands for `POST /chat`: it runs an agent turn; when the model asks for a refund
//! (a state change), the call waits for a person, and the sealed run state goes to a file.
//! [`approve`] stands for `POST /approve`: it reads the state back, approves the call and
//! resumes the run, in a fresh agent as another process would; the refund runs once. A second
//! [`approve`] of the same state is refused and runs nothing.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use tool_runtime::agent::deferred::{Decisions, ResumeError, RunState, StateKey};
use tool_runtime::agent::{Agent, AgentOutput, Message, ScriptedModel, ScriptedTurn};
use tool_runtime::policy::DeferAll;
use tool_runtime::prelude::*;
use tool_runtime::runtime::Capability;

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
fn agent(payments: &Arc<Payments>, turns: Vec<ScriptedTurn>) -> Agent {
    let catalog = ToolCatalog::builder()
        .register::<Refund>()
        .shared_capability(Arc::clone(payments))
        .build()
        .unwrap_or_else(|error| panic!("the example catalog is valid: {error}"));
    let policy = ToolPolicy {
        require_approval: vec![ToolEffect::StateChange],
        ..ToolPolicy::allowing(["shop__*"])
    };
    let runner = ToolRunner::builder(catalog).policy(policy).approver(Arc::new(DeferAll)).build();
    Agent::new(Arc::new(ScriptedModel::new(turns)), runner).with_state_key(StateKey::new(*KEY))
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

/// Where [`chat`] keeps a waiting run's state.
#[must_use]
pub fn state_file(dir: &Path) -> PathBuf {
    dir.join("run-42.json")
}

/// `POST /chat`: runs the agent on the user's message. A run that waits writes its state to
/// [`state_file`]; returns the run's output.
///
/// # Errors
///
/// The state file could not be written.
pub async fn chat(
    dir: &Path,
    payments: &Arc<Payments>,
    text: &str,
) -> std::io::Result<AgentOutput> {
    let model =
        vec![ScriptedTurn::openai_calls(&[("call_1", "shop__refund", r#"{"order": 1001}"#)])];
    let output = agent(payments, model).run(vec![Message::user(text)], &ctx(), &|_| {}).await;
    if let Some(state) = &output.state {
        let json = serde_json::to_vec_pretty(state).map_err(std::io::Error::other)?;
        std::fs::write(state_file(dir), json)?;
    }
    Ok(output)
}

/// `POST /approve`: reads the waiting run's state, approves `call_id` and resumes the run.
///
/// # Errors
///
/// The state file is missing or unreadable (`Err(Err(io))`), or the resume was refused
/// (`Ok(Err(resume))`): a forged or stale state, or one resumed already.
pub async fn approve(
    dir: &Path,
    payments: &Arc<Payments>,
    ledger: &Arc<tool_runtime::agent::deferred::InMemoryLedger>,
    call_id: &str,
) -> std::io::Result<Result<AgentOutput, ResumeError>> {
    let state: RunState =
        serde_json::from_slice(&std::fs::read(state_file(dir))?).map_err(std::io::Error::other)?;
    let model = vec![ScriptedTurn::openai_text("Order 1001 is refunded.")];
    let agent = agent(payments, model).with_ledger(Arc::clone(ledger) as _);
    Ok(agent.resume(state, Decisions::new().approve(call_id), &ctx(), &|_| {}).await)
}
