//! A tool its application's client runs, declared with the attribute: no `run` to write; the
//! runner checks its calls and ends them waiting for the client.
use tool_runtime::prelude::*;

/// Ask the user to pick a date in their calendar.
#[tool(name = "ui__pick_date", effect = read_only, redact = ["date"], client = Picked,
       examples = [{"prompt": "When shall we meet?"}])]
struct PickDate {
    /// What to ask the user.
    #[schema(length(min = 1, max = 200))]
    prompt: String,
}

/// The date the user picked.
#[derive(Serialize, ToolSchema)]
struct Picked {
    /// `YYYY-MM-DD`.
    date: String,
    /// Kept inside the application.
    calendar: String,
}

fn main() {
    let spec = PickDate::spec();
    assert!(spec.runs_on_client());
    assert!(spec.output_schema().is_some());
    let catalog = ToolCatalog::builder().register::<PickDate>().build().unwrap();
    let runner = ToolRunner::builder(catalog).policy(ToolPolicy::allowing(["ui__*"])).build();
    let ctx = ToolInvocationContext::new(ContextIds { run_id: "run-1", actor_id: "user-1", tenant_id: "acme" });
    tokio::runtime::Runtime::new().unwrap().block_on(async {
        let waiting = runner.exec("ui__pick_date", r#"{"prompt": "When?"}"#, &ctx).await;
        assert!(waiting.is_waiting());
        let refused = runner.exec("ui__pick_date", r#"{"prompt": ""}"#, &ctx).await;
        assert_eq!(refused.error_code(), Some(ToolErrorCode::Validation));
    });
}
