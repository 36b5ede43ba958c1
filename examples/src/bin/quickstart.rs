//! A complete agent session with the example tools: a model calls two tools in parallel, one
//! call is denied by policy, one needs approval, the model corrects an invalid call, and it
//! answers. Prints the conversation, the tool events and the invocation records.
//!
//! ```text
//! cargo run -p examples --bin quickstart
//! ```
//!
//! The model is scripted (no network, no key) and replays OpenAI Chat Completions streams
//! through the real decoder. With `OPENAI_BASE_URL` set (and `OPENAI_API_KEY`, `OPENAI_MODEL`
//! where the endpoint needs them) the same session talks to that endpoint instead: OpenAI, or a
//! local server speaking its protocol (Ollama, vLLM, llama.cpp).

use std::sync::Arc;
use std::time::{Duration, UNIX_EPOCH};

use async_trait::async_trait;
use examples::app::TicketRules;
use tool_runtime::runner::{ApprovalDecision, ApprovalRequest, Approver};

use examples::quickstart;
use examples::table::cell;
use examples::tickets::TicketStore;
use tool_runtime::adapters::ToolOutcome;
use tool_runtime::agent::{Agent, AgentConfig, AgentEvent, ChatModel, Message, OpenAiCompatible};
use tool_runtime::prelude::*;
use tool_runtime::runtime::{Clock, CollectingSink, EventOutcome, ToolEvent, ToolInvocationRecord};

/// The example's approval rules, printing each decision as it is made.
#[derive(Debug)]
struct Announced(TicketRules);

#[async_trait]
impl Approver for Announced {
    async fn review(&self, request: &ApprovalRequest<'_>) -> ApprovalDecision {
        let decision = self.0.review(request).await;
        let verdict = match &decision {
            ApprovalDecision::Approved(_) => "approved".to_owned(),
            ApprovalDecision::Denied { message } => format!("denied: {message}"),
            ApprovalDecision::Edited { .. } => "approved with edited arguments".to_owned(),
            ApprovalDecision::Pending => "deferred".to_owned(),
        };
        println!(
            "  approval for {} ({}, {}): {verdict}",
            request.tool_name, request.tool_call_id, request.effect
        );
        decision
    }
}

fn show_event(event: AgentEvent) {
    match event {
        AgentEvent::IterationStarted { iteration, .. } => {
            println!("\n── model turn {iteration} ──")
        }
        AgentEvent::TextDelta { text } => print!("{text}"),
        AgentEvent::ToolCallStarted { id, name } => println!("model calls {name} ({id})"),
        AgentEvent::ToolCallResult { id, name, outcome } => match outcome {
            EventOutcome::Ok { .. } => println!("  {name} ({id}): ok"),
            EventOutcome::Err { error } => println!("  {name} ({id}): {error}"),
        },
        AgentEvent::IterationFinished { finish, calls: 0, .. } => println!("\n[{finish}]"),
        _ => {}
    }
}

fn show_conversation(messages: &[Message]) {
    println!("\n# Conversation\n");
    for message in messages {
        match message {
            Message::System(text) => println!("system     {text}"),
            Message::User(text) => println!("user       {text}"),
            Message::Assistant(turn) => {
                if !turn.text.is_empty() {
                    println!("assistant  {}", turn.text);
                }
                for call in &turn.calls {
                    println!("assistant  calls {} {}", call.name, call.arguments.to_json_text());
                }
            }
            Message::ToolResults(results) => {
                for result in results {
                    match &result.outcome {
                        ToolOutcome::Done(_) => {
                            println!("tool       {} ok: {}", result.call_id, result.content_text())
                        }
                        ToolOutcome::Failed(error) => {
                            println!("tool       {} {error}", result.call_id)
                        }
                        _ => {}
                    }
                }
            }
            _ => {}
        }
    }
}

fn show_tool_events(events: &[ToolEvent]) {
    println!("\n# Tool events\n");
    for event in events {
        match event {
            ToolEvent::ToolCallStart { tool_call_id, tool_name, .. } => {
                println!("{}  start   {tool_name}", cell(tool_call_id, 14));
            }
            ToolEvent::ToolCallResult { tool_call_id, tool_name, outcome, .. } => {
                let outcome = match outcome {
                    EventOutcome::Ok { .. } => "ok".to_owned(),
                    EventOutcome::Err { error } => error.code.to_string(),
                };
                println!("{}  result  {tool_name}: {outcome}", cell(tool_call_id, 14));
            }
            _ => {}
        }
    }
}

fn show_records(records: &[ToolInvocationRecord]) {
    println!("\n# Invocation records\n");
    println!(
        "{} | {} | {} | {} | result or error",
        cell("call", 14),
        cell("tool", 23),
        cell("outcome", 15),
        cell("arguments", 34)
    );
    println!("{}", "-".repeat(130));
    for record in records {
        let outcome =
            record.error.as_ref().map_or_else(|| "ok".to_owned(), |error| error.code.to_string());
        let args =
            record.args.as_ref().map_or_else(|| "(not validated)".to_owned(), ToString::to_string);
        let result = match (&record.result, &record.error) {
            (Some(value), _) => value.to_string(),
            (None, Some(error)) => error.message.clone(),
            (None, None) => String::new(),
        };
        println!(
            "{} | {} | {} | {} | {}",
            cell(&record.tool_call_id, 14),
            cell(&record.tool_name, 23),
            cell(&outcome, 15),
            cell(&args, 34),
            cell(&result, 34)
        );
    }
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let clock = Clock::fixed(UNIX_EPOCH + Duration::from_millis(1_795_000_000_000));
    let tickets = TicketStore::new();
    let tool_events = CollectingSink::new();
    let runner = examples::app::runner_with_approver(
        clock,
        tickets.clone(),
        Arc::new(tool_events.clone()),
        Arc::new(Announced(TicketRules)),
    )?;
    let (model, label): (Arc<dyn ChatModel>, String) =
        if std::env::var_os("OPENAI_BASE_URL").is_some() {
            let client = OpenAiCompatible::from_env()?;
            let label = format!("{} at {}", client.model(), client.endpoint());
            (Arc::new(client), label)
        } else {
            (Arc::new(quickstart::model()), "scripted model".to_owned())
        };
    let agent = Agent::new(model, runner).with_config(AgentConfig::default());
    let ctx = ToolInvocationContext::new(ContextIds {
        run_id: "quickstart-run",
        actor_id: "user-42",
        tenant_id: "acme",
    })
    .with_connection_id("acme-tracker")
    .with_requested_connections(["acme-tracker"]);

    println!("# Agent session ({label}; policy: examples/policy.toml)");
    println!("\nuser: {}", quickstart::QUESTION);
    let output = agent.run(quickstart::conversation(), &ctx, &show_event).await;

    show_conversation(&output.messages);
    show_tool_events(&tool_events.events());
    show_records(&output.done.records);
    println!(
        "\nStopped: {:?} after {} model turns; tickets in acme-tracker: {}",
        output.done.stop,
        output.done.iterations,
        tickets.tickets("acme-tracker").len()
    );
    Ok(())
}
