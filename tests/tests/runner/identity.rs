//! The context's subject and graph ids: they reach the record, the start event and the span,
//! and policy can require a subject for a tool or limit it to some graphs, on every call and
//! when tools are shown.

use serde_json::json;
use tool_runtime::catalog::visible_tools;
use tool_runtime::policy::ToolPolicy;
use tool_runtime::prelude::*;
use tool_runtime::runtime::{CollectingSink, ToolErrorCode as Code, ToolEvent};
use tool_tests::fixtures::{Echo, context};

/// Echo a word, on behalf of someone.
#[tool(name = "mail__echo", effect = read_only, redact = ["word"])]
struct MailEcho {
    word: String,
}

#[derive(Serialize, ToolSchema)]
struct Said {
    word: String,
}

impl Tool for MailEcho {
    type Output = Said;
    async fn run(self, _: &ToolInvocationContext, _: &ToolCapabilities) -> Result<Said, ToolError> {
        Ok(Said { word: self.word })
    }
}

fn runner(sink: &CollectingSink) -> ToolRunner {
    let catalog = ToolCatalog::builder().register::<Echo>().register::<MailEcho>().build().unwrap();
    let policy = ToolPolicy::from_json(
        r#"{"allowed_tools": ["text__*", "mail__*"],
            "tools": {"mail__echo": {"requires_subject": true, "graphs": ["sales"]}}}"#,
    )
    .unwrap();
    ToolRunner::builder(catalog).policy(policy).event_sink(sink.clone()).build()
}

#[tokio::test]
async fn the_ids_reach_the_record_and_the_start_event_only_when_set() {
    let sink = CollectingSink::new();
    let runner = runner(&sink);
    let ctx = context("r", "a", "t").with_subject_id("user:ada").with_graph_id("sales");
    let result = runner.exec("text__echo", r#"{"word": "hi"}"#, &ctx).await;
    let record = result.into_record();
    assert_eq!(
        (record.subject_id.as_deref(), record.graph_id.as_deref()),
        (Some("user:ada"), Some("sales"))
    );
    let json = serde_json::to_value(&record).unwrap();
    assert_eq!(
        (json["subject_id"].clone(), json["graph_id"].clone()),
        (json!("user:ada"), json!("sales"))
    );
    let start = sink.take().into_iter().next().unwrap();
    assert!(
        matches!(&start, ToolEvent::ToolCallStart { subject_id: Some(subject), graph_id: Some(graph), .. } if subject == "user:ada" && graph == "sales")
    );
    // Without them: nothing, and no keys in the JSON.
    let plain =
        runner.exec("text__echo", r#"{"word": "hi"}"#, &context("r", "a", "t")).await.into_record();
    assert!(plain.subject_id.is_none() && plain.graph_id.is_none());
    let json = serde_json::to_value(&plain).unwrap();
    assert!(json.get("subject_id").is_none() && json.get("graph_id").is_none());
    let start = serde_json::to_value(sink.take().first().unwrap()).unwrap();
    assert!(start.get("subject_id").is_none(), "{start}");
}

#[tokio::test]
async fn policy_requires_a_subject_and_a_listed_graph_for_a_tool_that_says_so() {
    let sink = CollectingSink::new();
    let runner = runner(&sink);
    let args = r#"{"word": "hi"}"#;
    let both = context("r", "a", "t").with_subject_id("user:ada").with_graph_id("sales");
    assert!(runner.exec("mail__echo", args, &both).await.is_ok());
    let no_subject = context("r", "a", "t").with_graph_id("sales");
    let refused = runner.exec("mail__echo", args, &no_subject).await;
    assert_eq!(refused.error_code(), Some(Code::PolicyDenied));
    assert!(refused.error().unwrap().message.contains("on behalf of a subject"));
    let other_graph = context("r", "a", "t").with_subject_id("user:ada").with_graph_id("support");
    let refused = runner.exec("mail__echo", args, &other_graph).await;
    assert_eq!(refused.error_code(), Some(Code::PolicyDenied));
    assert!(refused.error().unwrap().message.contains("graph"));
    // A tool without such rules runs for anyone.
    assert!(runner.exec("text__echo", args, &context("r", "a", "t")).await.is_ok());
    // And what the model is shown follows the same rules.
    let shown = |ctx: &ToolInvocationContext| -> Vec<String> {
        visible_tools(runner.catalog(), runner.policy(), ctx)
            .iter()
            .map(|tool| tool.name().to_owned())
            .collect()
    };
    assert_eq!(shown(&both), ["mail__echo", "text__echo"]);
    assert_eq!(shown(&no_subject), ["text__echo"]);
    assert_eq!(shown(&other_graph), ["text__echo"]);
}
