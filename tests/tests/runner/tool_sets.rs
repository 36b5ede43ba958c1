//! Per-run tool sets: a run narrowed to some tools shows the model only
//! those, and the runner refuses the others even when the model calls them anyway.

use tool_runtime::catalog::{ToolCatalog, visible_tools};
use tool_runtime::policy::ToolPolicy;
use tool_runtime::prelude::*;
use tool_runtime::runner::ToolRunner;
use tool_runtime::runtime::ToolErrorCode as Code;
use tool_tests::fixtures::ctx;

/// Echo the text back.
#[tool(name = "set__echo", effect = read_only, redact = ["text"])]
struct Echo {
    text: String,
}

/// Shout the text back.
#[tool(name = "set__shout", effect = read_only, redact = ["text"])]
struct Shout {
    text: String,
}

#[derive(Serialize, ToolSchema)]
struct Text {
    text: String,
}

impl Tool for Echo {
    type Output = Text;
    async fn run(self, _: &ToolInvocationContext, _: &ToolCapabilities) -> Result<Text, ToolError> {
        Ok(Text { text: self.text })
    }
}

impl Tool for Shout {
    type Output = Text;
    async fn run(self, _: &ToolInvocationContext, _: &ToolCapabilities) -> Result<Text, ToolError> {
        Ok(Text { text: self.text.to_uppercase() })
    }
}

fn runner() -> ToolRunner {
    let catalog = ToolCatalog::builder().register::<Echo>().register::<Shout>().build().unwrap();
    ToolRunner::builder(catalog).policy(ToolPolicy::allowing(["set__*"])).build()
}

#[test]
fn a_tool_set_hides_the_other_tools_from_the_list() {
    let runner = runner();
    assert_eq!(
        runner.visible_tools(&ctx()).names().collect::<Vec<_>>(),
        ["set__echo", "set__shout"]
    );
    let narrowed = ctx().with_tool_set(["set__echo"]);
    assert_eq!(runner.visible_tools(&narrowed).names().collect::<Vec<_>>(), ["set__echo"]);
    let visible = visible_tools(runner.catalog(), runner.policy(), &narrowed);
    assert_eq!(visible.names().collect::<Vec<_>>(), ["set__echo"]);
    assert!(runner.visible_tools(&ctx().with_tool_set(Vec::<String>::new())).is_empty());
}

#[test]
fn a_tool_set_never_widens_policy() {
    let catalog = ToolCatalog::builder().register::<Echo>().register::<Shout>().build().unwrap();
    let runner = ToolRunner::builder(catalog).policy(ToolPolicy::allowing(["set__echo"])).build();
    let narrowed = ctx().with_tool_set(["set__echo", "set__shout"]);
    assert_eq!(runner.visible_tools(&narrowed).names().collect::<Vec<_>>(), ["set__echo"]);
}

#[tokio::test]
async fn the_runner_refuses_a_call_outside_the_tool_set() {
    let runner = runner();
    let narrowed = ctx().with_tool_set(["set__echo"]);
    let refused = runner.exec("set__shout", r#"{"text": "hi"}"#, &narrowed).await;
    assert_eq!(refused.error_code(), Some(Code::PolicyDenied));
    let message = &refused.error().unwrap().message;
    assert!(message.contains("`set__shout` is not in this run's tool set"), "{message}");
    let allowed = runner.exec("set__echo", r#"{"text": "hi"}"#, &narrowed).await;
    assert!(allowed.is_ok(), "{:?}", allowed.outcome);
    let unnarrowed = runner.exec("set__shout", r#"{"text": "hi"}"#, &ctx()).await;
    assert!(unnarrowed.is_ok(), "without a tool set every allowed tool runs");
}
