//! Arguments in the other spelling: a tool or a catalog that tolerates case takes `userId` for
//! a property named `user_id` (and `user_id` for `userId`) at the top level, renamed before
//! validation; one given under both spellings is refused; a tool that does not opt in refuses
//! the other spelling as it refuses any unknown property.

use serde_json::json;
use tool_runtime::catalog::ToolCatalogBuilder;
use tool_runtime::policy::ToolPolicy;
use tool_runtime::prelude::*;
use tool_runtime::runtime::{DynamicTool, ToolErrorCode as Code};
use tool_tests::fixtures::context;

/// Find users.
#[tool(name = "crm__find_users", effect = read_only, redact = all, tolerate_case)]
struct FindUsers {
    user_id: String,
    #[serde(default)]
    max_results: Option<u8>,
    /// One word: it has no other spelling.
    query: Option<String>,
}

impl Tool for FindUsers {
    type Output = String;
    async fn run(
        self,
        _: &ToolInvocationContext,
        _: &ToolCapabilities,
    ) -> Result<String, ToolError> {
        Ok(format!("{} {:?} {:?}", self.user_id, self.max_results, self.query))
    }
}

/// Find orders (camelCase properties).
#[tool(name = "shop__find_orders", effect = read_only, redact = all, tolerate_case)]
#[serde(rename_all = "camelCase")]
struct FindOrders {
    order_number: u32,
}

impl Tool for FindOrders {
    type Output = u32;
    async fn run(self, _: &ToolInvocationContext, _: &ToolCapabilities) -> Result<u32, ToolError> {
        Ok(self.order_number)
    }
}

/// Find users, strictly.
#[tool(name = "crm__find_strict", effect = read_only, redact = all)]
struct FindStrict {
    user_id: String,
}

impl Tool for FindStrict {
    type Output = String;
    async fn run(
        self,
        _: &ToolInvocationContext,
        _: &ToolCapabilities,
    ) -> Result<String, ToolError> {
        Ok(self.user_id)
    }
}

fn dynamic() -> DynamicTool {
    DynamicTool::builder(
        "crm__lookup",
        "Look a user up.",
        json!({"type": "object", "properties": {"user_id": {"type": "string"}}, "required": ["user_id"], "additionalProperties": false}),
    )
    .redact_all()
    .effect(ToolEffect::ReadOnly)
    .build(|args, _, _| async move { Ok(args["user_id"].clone()) })
    .unwrap()
}

fn runner(catalog: ToolCatalogBuilder) -> ToolRunner {
    ToolRunner::builder(catalog.build().unwrap())
        .policy(ToolPolicy::allowing(["crm__*", "shop__*"]))
        .build()
}

fn ctx() -> ToolInvocationContext {
    context("run-1", "user-1", "t-1")
}

#[tokio::test]
async fn a_tool_that_tolerates_case_takes_the_other_spelling_and_names_it_its_own_way() {
    let runner = runner(
        ToolCatalog::builder()
            .register::<FindUsers>()
            .register::<FindOrders>()
            .register::<FindStrict>(),
    );
    let found = runner
        .exec("crm__find_users", r#"{"userId": "u-7", "maxResults": 3, "query": "x"}"#, &ctx())
        .await;
    assert_eq!(found.value(), Some(&json!("u-7 Some(3) Some(\"x\")")));
    // Validated, recorded and shown to hooks under the schema's names.
    assert_eq!(found.args(), Some(&json!({"user_id": "u-7", "max_results": 3, "query": "x"})));
    // The schema's own spelling goes through untouched; parsed arguments too.
    let parsed = json!({"user_id": "u-8"});
    assert_eq!(runner.exec("crm__find_users", &parsed, &ctx()).await.args(), Some(&parsed));
    // And back: a camelCase tool takes snake_case.
    let order = runner.exec("shop__find_orders", r#"{"order_number": 12}"#, &ctx()).await;
    assert_eq!(order.value(), Some(&json!(12)));
    assert_eq!(order.args(), Some(&json!({"orderNumber": 12})));
    // A tool that does not opt in refuses the other spelling like any unknown property.
    let strict = runner.exec("crm__find_strict", r#"{"userId": "u-7"}"#, &ctx()).await;
    assert_eq!(strict.error_code(), Some(Code::Validation));
    assert!(FindUsers::spec().tolerates_case() && !FindStrict::spec().tolerates_case());
    assert_eq!(serde_json::to_value(FindUsers::spec()).unwrap()["tolerates_case"], json!(true));
    assert!(serde_json::to_value(FindStrict::spec()).unwrap().get("tolerates_case").is_none());
}

#[tokio::test]
async fn a_property_given_under_both_spellings_is_refused_and_nothing_runs() {
    let runner = runner(ToolCatalog::builder().register::<FindUsers>());
    let twice = runner.exec("crm__find_users", r#"{"user_id": "a", "userId": "b"}"#, &ctx()).await;
    assert_eq!(twice.error_code(), Some(Code::Validation));
    let message = &twice.error().unwrap().message;
    assert!(
        message.contains("`user_id` is given twice, as `user_id` and as `userId`"),
        "{message}"
    );
    // Other spellings that are no property's stay unknown properties.
    let unknown = runner.exec("crm__find_users", r#"{"userId": "a", "pageSize": 2}"#, &ctx()).await;
    assert_eq!(unknown.error_code(), Some(Code::Validation));
    assert!(unknown.error().unwrap().message.contains("pageSize"), "{:?}", unknown.error());
    // Text that is not JSON is still `invalid_json`.
    let broken = runner.exec("crm__find_users", r#"{"userId": "#, &ctx()).await;
    assert_eq!(broken.error_code(), Some(Code::InvalidJson));
}

#[tokio::test]
async fn a_catalog_that_tolerates_case_does_for_every_tool_and_a_catalog_that_does_not_for_none() {
    let strict = runner(ToolCatalog::builder().register_dynamic(dynamic()));
    let refused = strict.exec("crm__lookup", r#"{"userId": "u-7"}"#, &ctx()).await;
    assert_eq!(refused.error_code(), Some(Code::Validation));
    let tolerant = runner(ToolCatalog::builder().register_dynamic(dynamic()).tolerate_case());
    let found = tolerant.exec("crm__lookup", r#"{"userId": "u-7"}"#, &ctx()).await;
    assert_eq!(found.value(), Some(&json!("u-7")));
    assert_eq!(found.args(), Some(&json!({"user_id": "u-7"})));
    let own = DynamicTool::builder(
        "crm__own",
        "Look a user up.",
        json!({"type": "object", "properties": {"user_id": {"type": "string"}}, "required": ["user_id"], "additionalProperties": false}),
    )
    .tolerate_case()
    .effect(ToolEffect::ReadOnly)
    .redact_all()
    .build(|args, _, _| async move { Ok(args["user_id"].clone()) })
    .unwrap();
    let runner = runner(ToolCatalog::builder().register_dynamic(own));
    assert_eq!(
        runner.exec("crm__own", r#"{"userId": "u-9"}"#, &ctx()).await.value(),
        Some(&json!("u-9"))
    );
}
