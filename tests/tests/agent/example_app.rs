//! The example application's composition root behaves as its README and `runtime` example say.

use std::sync::Arc;
use std::time::{Duration, UNIX_EPOCH};

use examples::tickets::TicketStore;
use tool_runtime::runtime::{Clock, CollectingSink, ToolErrorCode as Code};
use tool_tests::fixtures::context;

#[tokio::test]
async fn allowed_denied_and_approval_gated_calls() {
    let clock = Clock::fixed(UNIX_EPOCH + Duration::from_millis(1_795_000_000_000));
    let tickets = TicketStore::new();
    let events = CollectingSink::new();
    let runner = examples::app::runner(clock, tickets.clone(), Arc::new(events.clone())).unwrap();
    let ctx = context("run-1", "user-42", "acme")
        .with_connection_id("acme-tracker")
        .with_requested_connections(["acme-tracker"]);
    assert_eq!(
        runner.visible_tools(&ctx).names().collect::<Vec<_>>(),
        ["core__get_current_time", "docs__search", "tickets__create_ticket"]
    );
    let no_connection = context("run-1", "user-42", "acme");
    assert_eq!(
        runner.visible_tools(&no_connection).names().collect::<Vec<_>>(),
        ["core__get_current_time", "docs__search"],
        "without a granted and requested connection the ticket tool is hidden"
    );
    let foreign = context("run-1", "user-42", "acme")
        .with_connection_id("globex-tracker")
        .with_requested_connections(["globex-tracker"]);

    let ticket = r#"{"title": "Search ignores tags", "body": "", "priority": "high"}"#;
    let urgent = r#"{"title": "Production is down", "body": "", "priority": "urgent"}"#;
    let cases = [
        ("core__get_current_time", &ctx, r#"{"timezone": "Europe/Berlin"}"#, None),
        ("docs__search", &ctx, r#"{"query": "schema"}"#, None),
        ("tickets__create_ticket", &ctx, ticket, None),
        ("tickets__create_ticket", &ctx, urgent, Some(Code::ApprovalDenied)),
        ("tickets__create_ticket", &foreign, ticket, Some(Code::PolicyDenied)),
        ("shell__exec", &ctx, "{}", Some(Code::Unavailable)),
        ("docs__search", &ctx, r#"{"query": ""}"#, Some(Code::Validation)),
    ];
    for (tool, ctx, raw, expected) in cases {
        let result = runner.exec(tool, raw.as_bytes(), ctx).await;
        assert_eq!(result.error_code(), expected, "{tool} {raw}: {:?}", result.error());
    }
    let stored = tickets.tickets("acme-tracker");
    assert_eq!(stored.len(), 1, "only the approved ticket was created");
    assert_eq!(stored[0].title, "Search ignores tags");
    let policy = examples::app::policy().unwrap();
    assert_eq!(policy.budgets_for("docs__search").max_result_bytes, 16384);
}
