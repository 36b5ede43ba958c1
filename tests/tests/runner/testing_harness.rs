//! `tool_runtime::testing`: a tool's unit test runs it through a runner, in one line, with the
//! capabilities it declares; a tool of a lean crate (definitions only) is tested this way too.

use std::time::{Duration, UNIX_EPOCH};

use serde_json::json;
use tool_lean_tests::FindOrders;
use tool_runtime::policy::Budgets;
use tool_runtime::runtime::{Clock, ToolErrorCode as Code};
use tool_runtime::testing::{self, Harness};
use tool_tests::fixtures::{Echo, context};

#[tokio::test]
async fn one_line_runs_a_tool_through_the_runner_with_its_checks() {
    let echoed = testing::exec::<Echo>(json!({"word": "hi"})).await;
    assert!(echoed.is_ok(), "{echoed:?}");
    assert_eq!(echoed.args(), Some(&json!({"word": "hi"})));
    // Validation is the runner's: refused, with its code, and the tool never ran.
    let refused = testing::exec::<Echo>(json!({"word": 7})).await;
    assert_eq!(refused.error_code(), Some(Code::Validation));
}

#[tokio::test]
async fn a_lean_crates_tool_runs_with_what_it_declared_and_only_its_redacted_output_leaves() {
    let at = UNIX_EPOCH + Duration::from_millis(1_700_000_000_000);
    let harness = Harness::new().capability(Clock::fixed(at));
    let found = harness.exec::<FindOrders>(json!({"customer_id": "cus_ab12cd", "limit": 2})).await;
    assert_eq!(
        found.value(),
        Some(&json!({"orders": [
            {"id": "ord_1", "total_cents": 1000},
            {"id": "ord_2", "total_cents": 2000},
        ]}))
    );
    // Without the capability it declares, the catalog cannot be built: the call says so.
    let missing =
        Harness::new().exec::<FindOrders>(json!({"customer_id": "cus_ab12cd", "limit": 1})).await;
    assert_eq!(missing.error_code(), Some(Code::Unavailable));
    assert!(missing.error().unwrap().message.contains("clock"), "{missing:?}");
}

#[tokio::test]
async fn the_harness_takes_a_context_and_budgets() {
    let budgets = Budgets { max_argument_bytes: 8, ..Budgets::default() };
    let ctx = context("run-9", "actor-9", "tenant-9");
    let harness = Harness::new().context(ctx).budgets(budgets);
    let large = harness.exec::<Echo>(json!({"word": "longer than eight bytes"})).await;
    assert_eq!(large.error_code(), Some(Code::Validation));
    assert!(large.error().unwrap().message.contains("limit is 8"), "{large:?}");
}
