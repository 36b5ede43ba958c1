//! Human in the loop: an approval that arrives in a later HTTP request.
//!
//! ```text
//! cargo run -p examples --bin approvals
//! ```
//!
//! Plays three requests in one process, with plain functions for the handlers
//! ([`examples::approvals`]) and a scripted model (no network, no key):
//!
//! 1. `POST /chat` "refund order 1001": the model asks for the refund, a state change, so the
//!    call waits for a person; the run stops pending and its sealed state goes to a file.
//! 2. `POST /approve call_1`: the state is read back, the call approved, the run resumed in a
//!    fresh agent; the refund runs once and the model answers.
//! 3. `POST /approve call_1` again: refused, nothing runs.

use std::sync::Arc;

use examples::approvals::{Payments, approve, chat, state_file};
use tool_runtime::agent::deferred::InMemoryLedger;

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let dir = std::env::temp_dir().join(format!("tool-runtime-approvals-{}", std::process::id()));
    std::fs::create_dir_all(&dir)?;
    let payments = Arc::new(Payments::default());
    // Shared by every request of the server, as a table in its database would be.
    let ledger = Arc::new(InMemoryLedger::default());

    let first = chat(&dir, &payments, "Please refund order 1001.").await?;
    println!("POST /chat -> stop: {}", serde_json::to_string(&first.done.stop)?);
    println!("  state written to {}", state_file(&dir).display());
    println!("  refunds made: {}", payments.refunds());

    let second = approve(&dir, &payments, &ledger, "call_1").await??;
    println!("POST /approve call_1 -> {:?}: {}", second.done.stop, second.done.answer);
    println!("  refunds made: {}", payments.refunds());

    match approve(&dir, &payments, &ledger, "call_1").await? {
        Ok(_) => println!("POST /approve call_1 (again) -> resumed: this must not happen"),
        Err(refused) => println!("POST /approve call_1 (again) -> refused: {refused}"),
    }
    println!("  refunds made: {}", payments.refunds());

    std::fs::remove_dir_all(&dir)?;
    Ok(())
}
