//! The runtime at work: a composition root (clock, fake vault, policy file, approval rules)
//! runs allowed, denied and approval-gated calls, then prints the events and the records.
//!
//! ```text
//! cargo run -p examples --bin runtime
//! ```

use std::sync::Arc;
use std::time::{Duration, UNIX_EPOCH};

use examples::table::cell;
use examples::tickets::TicketStore;
use tool_runtime::prelude::*;
use tool_runtime::runtime::{CallOutcome, Clock, CollectingSink, EventOutcome, ToolEvent};

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let clock = Clock::fixed(UNIX_EPOCH + Duration::from_millis(1_795_000_000_000));
    let tickets = TicketStore::new();
    let events = CollectingSink::new();
    let runner = examples::app::runner(clock, tickets.clone(), Arc::new(events.clone()))?;

    println!("# Policy (examples/policy.toml)\n\n{}", examples::app::POLICY_TOML);

    let ctx = ToolInvocationContext::new(ContextIds {
        run_id: "run-1",
        actor_id: "user-42",
        tenant_id: "acme",
    })
    .with_connection_id("acme-tracker")
    .with_requested_connections(["acme-tracker"]);
    let visible = runner.visible_tools(&ctx);
    println!("# Tools the model is shown\n\n{}\n", visible.names().collect::<Vec<_>>().join(", "));

    let foreign = ToolInvocationContext::new(ContextIds {
        run_id: "run-1",
        actor_id: "user-42",
        tenant_id: "acme",
    })
    .with_connection_id("globex-tracker")
    .with_requested_connections(["globex-tracker"]);
    let calls: [(&str, &str, &ToolInvocationContext, &str); 7] = [
        ("allowed", "core__get_current_time", &ctx, r#"{"timezone": "Europe/Berlin"}"#),
        ("allowed", "docs__search", &ctx, r#"{"query": "schema", "limit": 2}"#),
        (
            "approved by the rules",
            "tickets__create_ticket",
            &ctx,
            r#"{"title": "Search ignores tags", "body": "Filtering by tag returns everything.", "priority": "high", "labels": ["bug"]}"#,
        ),
        (
            "denied by the rules",
            "tickets__create_ticket",
            &ctx,
            r#"{"title": "Production is down", "body": "", "priority": "urgent"}"#,
        ),
        (
            "foreign connection",
            "tickets__create_ticket",
            &foreign,
            r#"{"title": "Leak data", "body": "", "priority": "low"}"#,
        ),
        ("not registered", "shell__exec", &ctx, r#"{"command": "rm -rf /"}"#),
        ("invalid arguments", "docs__search", &ctx, r#"{"query": "", "limit": 50}"#),
    ];
    println!("# Calls\n");
    let mut records = Vec::new();
    for (index, (why, tool, ctx, raw)) in calls.into_iter().enumerate() {
        let ctx = ctx.clone().with_tool_call_id(format!("call_{}", index + 1));
        let result = runner.exec(tool, raw.as_bytes(), &ctx).await;
        match &result.outcome {
            CallOutcome::Done(output) => println!(
                "[{why}] {tool} {raw}\n  ok: {}\n",
                output.structured().map(ToString::to_string).unwrap_or_default()
            ),
            CallOutcome::Failed(error) => println!("[{why}] {tool} {raw}\n  {error}\n"),
            CallOutcome::Waiting(waiting) => {
                println!("[{why}] {tool} {raw}\n  waiting: {}\n", waiting.message)
            }
            _ => {}
        }
        records.push(result.into_record());
    }

    println!("# Events\n");
    for event in events.events() {
        match event {
            ToolEvent::ToolCallStart { tool_call_id, tool_name, .. } => {
                println!("{tool_call_id}  start   {tool_name}")
            }
            ToolEvent::ToolCallProgress { tool_call_id, progress, .. } => {
                println!("{tool_call_id}  progress {}", progress.progress)
            }
            ToolEvent::ToolCallResult {
                tool_call_id, outcome: EventOutcome::Ok { .. }, ..
            } => println!("{tool_call_id}  result  ok"),
            ToolEvent::ToolCallResult {
                tool_call_id,
                outcome: EventOutcome::Err { error },
                ..
            } => println!("{tool_call_id}  result  {}", error.code),
            _ => {}
        }
    }

    println!("\n# Invocation records\n");
    println!(
        "{} | {} | {} | arguments -> result",
        cell("call", 7),
        cell("tool", 23),
        cell("outcome", 16)
    );
    println!("{}", "-".repeat(110));
    for record in &records {
        let outcome =
            record.error.as_ref().map_or_else(|| "ok".to_owned(), |error| error.code.to_string());
        let args =
            record.args.as_ref().map_or_else(|| "(not validated)".to_owned(), ToString::to_string);
        let result = record.result.as_ref().map_or_else(
            || record.error.as_ref().map(|error| error.message.clone()).unwrap_or_default(),
            ToString::to_string,
        );
        println!(
            "{} | {} | {} | {}",
            cell(&record.tool_call_id, 7),
            cell(&record.tool_name, 23),
            cell(&outcome, 16),
            cell(&format!("{args} -> {result}"), 60)
        );
    }
    println!("\nTickets in acme-tracker: {}", tickets.tickets("acme-tracker").len());
    Ok(())
}
