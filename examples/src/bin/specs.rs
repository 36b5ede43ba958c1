//! Prints the frozen spec of every example tool, then calls each once with sample arguments:
//! what the tool returned, and what redaction lets through to the model. The last call shows
//! what validation says about bad arguments.
//!
//! ```text
//! cargo run -p examples --bin specs
//! ```

use std::time::{Duration, UNIX_EPOCH};

use examples::search::{DocumentIndex, SearchDocs};
use examples::tickets::{CreateTicket, TicketStore};
use examples::time::GetCurrentTime;
use tool_runtime::prelude::*;
use tool_runtime::runtime::Clock;
use tool_runtime::schema::{ArgumentsError, parse_arguments};

/// Validates `raw` for `T`, runs it with the capabilities it declared, and describes the result.
async fn call<T: Tool>(raw: &str, ctx: &ToolInvocationContext, caps: &ToolCapabilities) -> String {
    let spec = T::spec();
    let heading = format!("{} {raw}", spec.name());
    let caps = caps.restricted_to(spec.capabilities());
    let body = match parse_arguments::<T>(raw.as_bytes()) {
        Ok(args) => match args.run(ctx, &caps).await {
            Ok(output) => {
                let output = serde_json::to_value(&output).unwrap_or_default();
                let seen = spec
                    .redaction()
                    .apply(&output)
                    .map_or_else(|error| error.to_string(), |value| value.to_string());
                format!("returned:    {output}\nmodel sees:  {seen}")
            }
            Err(error) => format!("tool error: {error}"),
        },
        Err(ArgumentsError::Validation(errors)) => {
            let lines: Vec<String> = errors.iter().map(|error| format!("  {error}")).collect();
            format!("rejected, {} problem(s):\n{}", errors.len(), lines.join("\n"))
        }
        Err(error) => format!("rejected: {error}"),
    };
    format!("{heading}\n{body}\n")
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    println!("# Tool specs\n");
    println!("{}\n", serde_json::to_string_pretty(&examples::specs())?);

    let ctx = ToolInvocationContext::new("run-1", "user-42", "acme")
        .with_tool_call_id("call_1")
        .with_connection_id("acme-tracker");
    let caps = ToolCapabilities::new()
        .with(Clock::fixed(UNIX_EPOCH + Duration::from_millis(1_795_000_000_000)))
        .with(DocumentIndex::sample())
        .with(TicketStore::new());

    println!("# Sample calls\n");
    println!("{}", call::<GetCurrentTime>(r#"{"timezone": "Europe/Berlin"}"#, &ctx, &caps).await);
    println!(
        "{}",
        call::<SearchDocs>(
            r#"{"query": "tool", "filters": {"kinds": ["how_to", "reference"]}, "limit": 2}"#,
            &ctx,
            &caps
        )
        .await
    );
    println!("{}", call::<CreateTicket>(r#"{"title": "Search ignores tags", "body": "Filtering by tag returns everything.", "priority": "high", "labels": ["bug"]}"#, &ctx, &caps).await);
    println!("{}", call::<CreateTicket>(r#"{"title": "", "priority": "asap", "labels": ["Not A Label"], "connectionId": "other"}"#, &ctx, &caps).await);
    Ok(())
}
