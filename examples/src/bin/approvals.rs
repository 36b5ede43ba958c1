//! Human in the loop: an approval that arrives in a later HTTP request.
//!
//! ```text
//! cargo run -p examples --bin approvals
//! ```
//!
//! Starts the shop's server ([`examples::approvals::serve`]) on a loopback port and plays three
//! HTTP requests against it, with a scripted model (no network beyond loopback, no key):
//!
//! 1. `POST /chat` "refund order 1001": the model asks for the refund, a state change, so the
//!    call waits for a person; the run stops pending and its sealed state goes to a file.
//! 2. `POST /approve` `call_1`: the state is read back, the call approved, the run resumed in a
//!    fresh agent; the refund runs once and the model answers.
//! 3. `POST /approve` `call_1` again: refused (`409`), nothing runs.
//!
//! Exits with an error if the refund did not run exactly once.

use std::sync::Arc;

use examples::approvals::{Shop, post, serve, state_file};
use tokio::net::TcpListener;

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let dir = std::env::temp_dir().join(format!("tool-runtime-approvals-{}", std::process::id()));
    std::fs::create_dir_all(&dir)?;
    let shop = Arc::new(Shop::new(&dir));
    let listener = TcpListener::bind("127.0.0.1:0").await?;
    let addr = listener.local_addr()?;
    let server = tokio::spawn(serve(listener, Arc::clone(&shop)));
    let client = reqwest::Client::new();
    println!("shop listening on http://{addr}");

    let (status, body) = post(&client, addr, "/chat", "Please refund order 1001.").await?;
    println!("POST /chat -> {status} {body}");
    println!("  state written to {}", state_file(&dir).display());
    println!("  refunds made: {}", shop.refunds());

    let (status, body) = post(&client, addr, "/approve", "call_1").await?;
    println!("POST /approve call_1 -> {status} {body}");
    println!("  refunds made: {}", shop.refunds());

    let (replayed, body) = post(&client, addr, "/approve", "call_1").await?;
    println!("POST /approve call_1 (again) -> {replayed} {body}");
    println!("  refunds made: {}", shop.refunds());

    server.abort();
    std::fs::remove_dir_all(&dir)?;
    if shop.refunds() != 1 || replayed != 409 {
        return Err(format!(
            "expected one refund and a refused replay, got {} refunds and status {replayed}",
            shop.refunds()
        )
        .into());
    }
    Ok(())
}
