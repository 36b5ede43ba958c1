//! Human in the loop across HTTP requests and processes.
//!
//! ```text
//! cargo run -p examples --bin approvals
//! DATABASE_URL=postgres://postgres@127.0.0.1:5432/test cargo run -p examples --bin approvals
//! ```
//!
//! Starts two server processes of the shop ([`examples::approvals::run_server`]: this program
//! again, `approvals serve <dir>`) sharing one run store, the SQLite file of a temporary folder
//! or the PostgreSQL database of `DATABASE_URL`, and plays the story of
//! [`examples::approvals::play`] against them, with a scripted model (no network beyond
//! loopback, no key): the refund waits on one server, is approved on the other and runs once,
//! a replay gets `409`, and after both restart the inbox still lists the run that waits. Its
//! run ids carry the process id, so runs against one database never meet.
//!
//! Exits with an error if any of that did not happen.

use examples::approvals::{play, run_server};

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    if let [_, serve, dir] = args.as_slice()
        && serve == "serve"
    {
        return run_server(std::path::Path::new(dir)).await;
    }
    let dir = std::env::temp_dir().join(format!("tool-runtime-approvals-{}", std::process::id()));
    std::fs::create_dir_all(&dir)?;
    let exe = std::env::current_exe()?;
    let server = || {
        let mut command = std::process::Command::new(&exe);
        command.arg("serve").arg(&dir);
        command
    };
    let (first, second) =
        (format!("run-42-{}", std::process::id()), format!("run-43-{}", std::process::id()));
    let played = play(server, &dir, [&first, &second]).await;
    std::fs::remove_dir_all(&dir)?;
    let played = played?;
    if played.refunds != 1
        || played.replayed != 409
        || !played.inbox_after_restart.contains(&second)
    {
        return Err(format!(
            "expected one refund, a refused replay and run-43 waiting: {played:?}"
        )
        .into());
    }
    Ok(())
}
