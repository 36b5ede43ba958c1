//! Tools for MCP clients only (`DynamicToolBuilder::mcp_only`): their input schema uses all of
//! JSON Schema 2020-12, which MCP clients take and model providers do not. Served as written and
//! validated against all of it; never offered to a model.

use std::sync::Arc;

use serde_json::{Value, json};
use tool_runtime::adapters::{EncodeError, Provider};
use tool_runtime::agent::{Agent, ScriptedModel, ScriptedTurn, StopReason};
use tool_runtime::catalog::ToolCatalog;
use tool_runtime::conversation::Message;
use tool_runtime::mcp::McpServer;
use tool_runtime::policy::ToolPolicy;
use tool_runtime::prelude::*;
use tool_runtime::runner::ToolRunner;
use tool_runtime::runtime::{BoundToolRuntime, DynamicTool, DynamicToolError};
use tool_tests::fixtures::context;

/// A contact: a phone or an e-mail address, the one its `contactMethod` names required.
fn contact_schema() -> Value {
    json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "type": "object",
        "$defs": {"address": {"$anchor": "postal", "type": "object", "properties": {"city": {"type": "string"}}}},
        "properties": {
            "name": {"type": "string"},
            "address": {"$ref": "#/$defs/address"},
            "contactMethod": {"type": "string", "enum": ["phone", "email"]},
            "phone": {"type": "string"},
            "email": {"type": "string"}
        },
        "allOf": [{"anyOf": [{"required": ["phone"]}, {"required": ["email"]}]}],
        "if": {"properties": {"contactMethod": {"const": "phone"}}, "required": ["contactMethod"]},
        "then": {"required": ["phone"]},
        "else": {"required": ["email"]},
        "additionalProperties": false
    })
}

fn contact(schema: Value) -> Result<DynamicTool, DynamicToolError> {
    DynamicTool::builder("crm__add_contact", "Add a contact.", schema)
        .effect(ToolEffect::ReadOnly)
        .mcp_only()
        .redact_all()
        .build(|args, _, _| async move { Ok(json!(format!("added {}", args["name"]))) })
}

/// Say hello.
#[tool(name = "crm__hello", effect = read_only, redact = all)]
struct Hello {}

impl Tool for Hello {
    type Output = String;
    async fn run(
        self,
        _: &ToolInvocationContext,
        _: &ToolCapabilities,
    ) -> Result<String, ToolError> {
        Ok("hello".into())
    }
}

fn runner() -> ToolRunner {
    let catalog = ToolCatalog::builder()
        .register::<Hello>()
        .register_dynamic(contact(contact_schema()).unwrap())
        .build()
        .unwrap();
    ToolRunner::builder(catalog).policy(ToolPolicy::allowing(["crm__*"])).build()
}

#[tokio::test]
async fn an_mcp_only_tool_is_listed_as_written_and_its_arguments_meet_all_of_its_schema() {
    let runner = runner();
    let server = McpServer::builder(runner.clone()).build();
    let listed = server.tools();
    let form = listed.iter().find(|tool| tool.name == "crm__add_contact").unwrap();
    assert_eq!(Value::Object((*form.input_schema).clone()), contact_schema());

    let ctx = context("run-1", "alice", "acme");
    let by_phone = br#"{"name": "Ann", "contactMethod": "phone", "phone": "555-0100"}"#;
    let result = runner.exec("crm__add_contact", by_phone, &ctx).await;
    assert_eq!(result.value(), Some(&json!("added \"Ann\"")), "{:?}", result.error());
    // `if`/`then`: a phone contact needs a phone, whatever else it has.
    let no_phone = br#"{"name": "Ann", "contactMethod": "phone", "email": "a@example.com"}"#;
    let refused = runner.exec("crm__add_contact", no_phone, &ctx).await;
    assert_eq!(refused.error().map(|e| e.code), Some(ToolErrorCode::Validation));
    // The `$ref` into `$defs` holds too.
    let bad_address = br#"{"name": "Ann", "email": "a@example.com", "address": {"city": 7}}"#;
    let refused = runner.exec("crm__add_contact", bad_address, &ctx).await;
    assert_eq!(refused.error().map(|e| e.code), Some(ToolErrorCode::Validation));
}

#[tokio::test]
async fn no_model_is_offered_an_mcp_only_tool() {
    let form = contact(contact_schema()).unwrap();
    for provider in Provider::ALL {
        let refused = provider.adapter(false).tool(form.spec());
        assert_eq!(refused, Err(EncodeError::McpOnly("crm__add_contact".into())), "{provider}");
    }
    let model = Arc::new(ScriptedModel::new([ScriptedTurn::openai_text("hi")]));
    let agent = Agent::new(model.clone(), runner());
    let output = agent
        .run(vec![Message::user("add Ann")], &context("run-1", "alice", "acme"), &|_| {})
        .await;
    assert_eq!(output.done.stop, StopReason::Answered);
    assert_eq!(model.requests()[0].tools, ["crm__hello"]);
}

#[test]
fn an_mcp_only_schema_is_still_an_object_schema_without_connection_ids_or_remote_references() {
    let refused = |schema: Value| contact(schema).unwrap_err();
    let error = refused(json!({"type": "string"}));
    assert!(matches!(error, DynamicToolError::InputSchema(_)), "{error}");
    let hidden_connection = json!({
        "type": "object",
        "$defs": {"target": {"type": "object", "properties": {"connectionId": {"type": "string"}}}},
        "properties": {"target": {"$ref": "#/$defs/target"}}
    });
    let DynamicToolError::InputSchema(error) = refused(hidden_connection) else {
        panic!("a connection id in `$defs` is refused")
    };
    assert_eq!(error.pointer(), "/$defs/target/properties/connectionId");
    // Nothing is fetched: a reference off the document does not resolve.
    let remote = json!({
        "type": "object",
        "properties": {"profile": {"$ref": "https://example.com/profile.json"}},
        "additionalProperties": false
    });
    assert!(matches!(refused(remote), DynamicToolError::InvalidSchema(_)));
}
