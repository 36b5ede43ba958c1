//! Approvals are bound to run, tenant, actor, tool, spec, call id and arguments, and are
//! spent on use.

use std::sync::Arc;

use serde_json::json;
use tool_runtime::catalog::ToolCatalog;
use tool_runtime::policy::ToolPolicy;
use tool_runtime::prelude::*;
use tool_runtime::runner::ToolRunner;
use tool_runtime::runner::{Approval, PreApproved};
use tool_runtime::runtime::{BoundToolRuntime, DynamicTool, ToolErrorCode};
use tool_tests::fixtures::context;

/// Closes a ticket.
#[tool(name = "tickets__close", effect = state_change, redact = ["closed"])]
struct Close {
    number: u32,
}

#[derive(Serialize, ToolSchema)]
struct Closed {
    closed: u32,
}

impl Tool for Close {
    type Output = Closed;
    async fn run(
        self,
        _: &ToolInvocationContext,
        _: &ToolCapabilities,
    ) -> Result<Closed, ToolError> {
        Ok(Closed { closed: self.number })
    }
}

fn gated() -> ToolPolicy {
    ToolPolicy {
        require_approval: vec![ToolEffect::StateChange],
        ..ToolPolicy::allowing(["tickets__*"])
    }
}

fn ctx(run: &str, tenant: &str, actor: &str) -> ToolInvocationContext {
    context(run, actor, tenant).with_tool_call_id("call_1")
}

fn runner(approvals: impl IntoIterator<Item = Approval>) -> ToolRunner {
    ToolRunner::builder(ToolCatalog::builder().register::<Close>().build().unwrap())
        .policy(gated())
        .approver(Arc::new(PreApproved::new(approvals)))
        .build()
}

fn approval_for_run_1() -> Approval {
    Approval::of(&ctx("run-1", "acme", "user-1"), Close::spec(), "call_1", &json!({"number": 7}))
}

async fn code(runner: &ToolRunner, ctx: &ToolInvocationContext) -> Option<ToolErrorCode> {
    runner.exec("tickets__close", br#"{"number": 7}"#, ctx).await.error_code()
}

#[tokio::test]
async fn an_approval_runs_its_call_once() {
    let runner = runner([approval_for_run_1()]);
    let ctx = ctx("run-1", "acme", "user-1");
    assert_eq!(code(&runner, &ctx).await, None);
    assert_eq!(code(&runner, &ctx).await, Some(ToolErrorCode::ApprovalDenied), "a second use");
}

#[tokio::test]
async fn an_approval_is_not_replayed_in_another_run_tenant_or_for_another_actor() {
    for other in [
        ctx("run-2", "acme", "user-1"),
        ctx("run-1", "globex", "user-1"),
        ctx("run-1", "acme", "user-2"),
    ] {
        let runner = runner([approval_for_run_1()]);
        assert_eq!(code(&runner, &other).await, Some(ToolErrorCode::ApprovalDenied), "{other:?}");
        // Refused elsewhere, it is still good where it was given.
        assert_eq!(code(&runner, &ctx("run-1", "acme", "user-1")).await, None);
    }
}

#[tokio::test]
async fn an_approval_is_not_replayed_after_the_tool_changed() {
    // The same name and arguments, another spec (its output schema changed).
    let changed = DynamicTool::builder(
        "tickets__close",
        "Closes a ticket.",
        json!({"type": "object", "properties": {"number": {"type": "integer"}}, "required": ["number"], "additionalProperties": false}),
    )
    .effect(ToolEffect::StateChange)
    .output_schema(json!({"type": "object", "properties": {"closed": {"type": "boolean"}, "at": {"type": "string"}}, "required": ["closed"], "additionalProperties": false}))
    .redact(["closed"])
    .build(|_, _, _| async { Ok(json!({"closed": true})) })
    .unwrap();
    assert_ne!(changed.spec().spec_hash(), Close::spec().spec_hash());
    let runner =
        ToolRunner::builder(ToolCatalog::builder().register_dynamic(changed).build().unwrap())
            .policy(gated())
            .approver(Arc::new(PreApproved::new([approval_for_run_1()])))
            .build();
    assert_eq!(
        code(&runner, &ctx("run-1", "acme", "user-1")).await,
        Some(ToolErrorCode::ApprovalDenied)
    );
}

/// A tool `name` with `Close`'s input and, with `other_output`, another output schema.
fn close_like(name: &str, other_output: bool) -> DynamicTool {
    let closed = if other_output { json!({"type": "boolean"}) } else { json!({"type": "integer"}) };
    DynamicTool::builder(
        name,
        "Closes a ticket.",
        json!({"type": "object", "properties": {"number": {"type": "integer"}}, "required": ["number"], "additionalProperties": false}),
    )
    .effect(ToolEffect::StateChange)
    .output_schema(json!({"type": "object", "properties": {"closed": closed}, "required": ["closed"], "additionalProperties": false}))
    .redact(["closed"])
    .build(|_, _, _| async { Ok(json!({"closed": 1})) })
    .unwrap()
}

#[test]
fn the_binding_covers_every_part() {
    let base = ctx("run-1", "acme", "user-1");
    let seven = json!({"number": 7});
    let approval = approval_for_run_1();
    assert_eq!(approval, Approval::of(&base, Close::spec(), "call_1", &seven));
    let (reopen, changed) =
        (close_like("tickets__reopen", false), close_like("tickets__close", true));
    assert_ne!(changed.spec().spec_hash(), Close::spec().spec_hash());
    let others = [
        ("run", Approval::of(&ctx("run-2", "acme", "user-1"), Close::spec(), "call_1", &seven)),
        (
            "tenant",
            Approval::of(&ctx("run-1", "globex", "user-1"), Close::spec(), "call_1", &seven),
        ),
        ("actor", Approval::of(&ctx("run-1", "acme", "user-2"), Close::spec(), "call_1", &seven)),
        ("tool", Approval::of(&base, reopen.spec(), "call_1", &seven)),
        ("spec", Approval::of(&base, changed.spec(), "call_1", &seven)),
        ("call id", Approval::of(&base, Close::spec(), "call_2", &seven)),
        ("arguments", Approval::of(&base, Close::spec(), "call_1", &json!({"number": 8}))),
    ];
    for (part, other) in others {
        assert_ne!(approval, other, "an approval with another {part} is another approval");
    }
}

#[tokio::test]
async fn side_effects_need_approval_by_default_unless_the_policy_says_otherwise() {
    use tool_runtime::agent::{Agent, AgentEvent, Message, ScriptedModel, ScriptedTurn};

    for policy in [
        ToolPolicy::default(),
        ToolPolicy::allowing(["x__*"]),
        ToolPolicy::from_json("{}").unwrap(),
    ] {
        assert_eq!(
            policy.require_approval,
            [ToolEffect::StateChange, ToolEffect::ExternalSideEffect]
        );
    }
    let catalog = || ToolCatalog::builder().register::<Close>().build().unwrap();
    let ctx = ctx("run-1", "acme", "user-1");
    let default =
        ToolRunner::builder(catalog()).policy(ToolPolicy::allowing(["tickets__*"])).build();
    assert_eq!(code(&default, &ctx).await, Some(ToolErrorCode::ApprovalDenied));
    let trusted =
        ToolPolicy::from_json(r#"{"allowed_tools": ["tickets__*"], "require_approval": []}"#)
            .unwrap();
    let trusted = ToolRunner::builder(catalog()).policy(trusted).build();
    assert_eq!(code(&trusted, &ctx).await, None);
    let one_tool = ToolPolicy::from_json(
        r#"{"allowed_tools": ["tickets__*"], "tools": {"tickets__close": {"require_approval": false}}}"#,
    )
    .unwrap();
    assert_eq!(code(&ToolRunner::builder(catalog()).policy(one_tool).build(), &ctx).await, None);

    // The agent says which calls go to the approver.
    let model = ScriptedModel::new([
        ScriptedTurn::openai_calls(&[("call_1", "tickets__close", r#"{"number": 7}"#)]),
        ScriptedTurn::openai_text("Not allowed."),
    ]);
    let events = std::sync::Mutex::new(Vec::new());
    Agent::new(Arc::new(model), default)
        .run(vec![Message::user("Close 7.")], &ctx, &|event| events.lock().unwrap().push(event))
        .await;
    assert!(events.lock().unwrap().contains(&AgentEvent::ApprovalRequired {
        id: "call_1".into(),
        name: "tickets__close".into()
    }));
}
