//! Selection cannot be stuffed: a description that repeats every word never outranks the
//! requested tool, and an imported description is cut to 2 KiB by default.

use std::sync::Arc;

use serde_json::json;
use tool_runtime::catalog::select::Bm25Selector;
use tool_runtime::catalog::{ToolCatalog, ToolSource};
use tool_runtime::mcp::{McpImportOptions, McpServer, McpToolSource, ServerName};
use tool_runtime::prelude::*;
use tool_runtime::runner::ToolRunner;
use tool_runtime::runtime::{BoundToolRuntime, DynamicTool};

/// Name, description, and one property with its description.
const TOOLS: [(&str, &str, (&str, &str)); 8] = [
    ("weather__forecast", "Show the weather forecast for a city.", ("city", "City name.")),
    ("mail__send", "Send an email message to a recipient.", ("recipient", "Email address.")),
    (
        "calendar__create_event",
        "Create an event in the calendar.",
        ("start_time", "When it starts."),
    ),
    ("files__search", "Search documents in cloud storage by keywords.", ("query", "Words.")),
    ("billing__refund", "Refund a payment to a customer.", ("amount", "How much.")),
    ("music__play", "Play a track or playlist.", ("track", "Track title.")),
    ("maps__route", "Find a driving route between two places.", ("destination", "Where to.")),
    ("home__thermostat", "Set the thermostat temperature at home.", ("degrees", "Celsius.")),
];

/// Requests, and the tool each is about.
const REQUESTS: [(&str, &str); 8] = [
    ("What is the weather forecast for Lisbon tomorrow?", "weather__forecast"),
    ("Send an email to Bob about the meeting", "mail__send"),
    ("Create a calendar event for Friday at noon", "calendar__create_event"),
    ("Search my documents for the quarterly report", "files__search"),
    ("Refund the last payment of this customer", "billing__refund"),
    ("Play my running playlist", "music__play"),
    ("Find the fastest route to the airport", "maps__route"),
    ("Set the thermostat to 21 degrees", "home__thermostat"),
];

fn dynamic(name: &str, description: &str, property: (&str, &str)) -> DynamicTool {
    let schema = json!({
        "type": "object",
        "properties": {property.0: {"type": "string", "description": property.1}},
        "additionalProperties": false
    });
    DynamicTool::builder(name, description, schema)
        .allow_open_schema()
        .build(|_, _, _| async { Ok(json!({})) })
        .unwrap()
}

/// Every word of every tool and request, and many more, each repeated `times` times.
fn stuffing(times: usize) -> String {
    let mut words: Vec<String> = Vec::new();
    for (name, description, (property, about)) in TOOLS {
        for text in [name, description, property, about] {
            words.extend(text.split(|c: char| !c.is_alphanumeric()).map(str::to_owned));
        }
    }
    for (request, _) in REQUESTS {
        words.extend(request.split(|c: char| !c.is_alphanumeric()).map(str::to_owned));
    }
    words.extend((0..200).map(|n| format!("filler{n}word")));
    words.retain(|word| !word.is_empty());
    words.sort();
    words.dedup();
    vec![words.join(" "); times].join(" ")
}

fn tools(stuffed_description: &str) -> Vec<DynamicTool> {
    let mut tools: Vec<DynamicTool> = TOOLS
        .iter()
        .map(|(name, description, property)| dynamic(name, description, *property))
        .collect();
    let stuffed = stuffed_description.to_owned();
    tools.push(dynamic("junk__helper", &stuffed, ("input", &stuffed)));
    tools
}

#[test]
fn a_description_that_repeats_every_word_never_outranks_the_requested_tool() {
    for times in [1, 20, 2_000] {
        let tools = tools(&stuffing(times));
        let selector = Bm25Selector::from_specs(tools.iter().map(|tool| tool.spec())).top_k(1);
        let catalog = tools
            .into_iter()
            .fold(ToolCatalog::builder(), |builder, tool| builder.register_dynamic(tool))
            .build()
            .unwrap();
        let policy =
            ToolPolicy::allowing(TOOLS.map(|tool| tool.0).into_iter().chain(["junk__helper"]));
        let ctx =
            ToolInvocationContext::new(ContextIds { run_id: "r", actor_id: "a", tenant_id: "t" });
        let visible = tool_runtime::catalog::visible_tools(&catalog, &policy, &ctx);
        for (request, wanted) in REQUESTS {
            use tool_runtime::catalog::select::ToolSelector;
            let selection = selector.select(request, &visible);
            let first = selection.ranked().first().map(|scored| scored.name.as_str());
            assert_eq!(
                first,
                Some(wanted),
                "{times} repetitions, {request:?}: {:?}",
                selection.ranked()
            );
        }
    }
}

async fn import(description: &str, options: McpImportOptions) -> String {
    let tool = DynamicTool::builder(
        "docs__search",
        description,
        json!({"type": "object", "properties": {}, "additionalProperties": false}),
    )
    .effect(ToolEffect::ReadOnly)
    .build(|_, _, _| async { Ok(json!({})) })
    .unwrap();
    let catalog = ToolCatalog::builder().register_dynamic(tool).build().unwrap();
    let runner = ToolRunner::builder(catalog).policy(ToolPolicy::allowing(["docs__*"])).build();
    let server = McpServer::builder(runner).build();
    let (ours, theirs) = tokio::io::duplex(1 << 20);
    tokio::spawn(async move {
        use tool_runtime::mcp::rmcp::ServiceExt;
        if let Ok(running) = server.serve(theirs).await {
            let _ = running.waiting().await;
        }
    });
    let name = ServerName::new("docs").unwrap();
    let source = McpToolSource::connect(name, ours, options).await.unwrap();
    let imported: Arc<dyn BoundToolRuntime> =
        source.get("mcp__docs__docs__search").expect("imported");
    imported.spec().description().to_owned()
}

#[tokio::test]
async fn an_imported_description_is_cut_to_2_kib_by_default() {
    let long = "Search the docs. ".to_owned() + &"é".repeat(10_000);
    let description = import(&long, McpImportOptions::new()).await;
    assert!(description.len() <= 2048, "{} bytes", description.len());
    assert!(description.starts_with("Search the docs. éé"), "{description}");
    assert!(description.len() > 2000, "cut near the limit: {} bytes", description.len());
    let short = import("Search the docs.", McpImportOptions::new()).await;
    assert_eq!(short, "Search the docs.");
    let set = import(&long, McpImportOptions::new().max_description_bytes(22)).await;
    assert_eq!(set, "Search the docs. é...");
}
