//! `#[tool(examples = [...])]` on the wire: Anthropic receives the examples
//! as `input_examples` when asked (`Anthropic::input_examples(true)`, a beta); otherwise, and
//! for every other provider and an MCP client, they are read at the end of the description. Patterns, which the compiler cannot check, are checked when the catalog is
//! built. (The compile-time checks are trybuild cases in `tests/ui/cases/examples/`.)

use serde_json::{Value, json};
use tool_runtime::adapters::{
    Adapter, Anthropic, Gemini, Ollama, OpenAiChat, OpenAiResponses, Provider,
};
use tool_runtime::catalog::{CatalogProblem, ToolCatalog};
use tool_runtime::prelude::*;

/// Look up an order.
#[tool(
    name = "shop__get_order",
    effect = read_only,
    redact = all,
    examples = [{"order_id": "A-1001"}, {"order_id": "B-2002", "with_items": true}]
)]
struct GetOrder {
    #[schema(pattern = "^[A-Z]-[0-9]{4}$")]
    order_id: String,
    with_items: Option<bool>,
}

impl Tool for GetOrder {
    type Output = String;
    async fn run(
        self,
        _: &ToolInvocationContext,
        _: &ToolCapabilities,
    ) -> Result<String, ToolError> {
        Ok(if self.with_items == Some(true) {
            format!("{} with items", self.order_id)
        } else {
            self.order_id
        })
    }
}

/// Look up an order, with an example its pattern refuses.
#[tool(name = "shop__get_order_badly", effect = read_only, redact = all, examples = [{"order_id": "1001"}])]
struct GetOrderBadly {
    #[schema(pattern = "^[A-Z]-[0-9]{4}$")]
    order_id: String,
}

impl Tool for GetOrderBadly {
    type Output = String;
    async fn run(
        self,
        _: &ToolInvocationContext,
        _: &ToolCapabilities,
    ) -> Result<String, ToolError> {
        Ok(self.order_id)
    }
}

/// Tell the time.
#[tool(name = "core__now", effect = read_only, redact = all)]
struct Now {}

impl Tool for Now {
    type Output = String;
    async fn run(
        self,
        _: &ToolInvocationContext,
        _: &ToolCapabilities,
    ) -> Result<String, ToolError> {
        Ok(String::new())
    }
}

const WITH_EXAMPLES: &str = "Look up an order.\n\nExamples of arguments:\n{\"order_id\":\"A-1001\"}\n{\"order_id\":\"B-2002\",\"with_items\":true}";

/// The description a provider's definition of `GetOrder` carries, wherever it puts it.
fn description(provider: Provider, definition: &Value) -> &str {
    let found = match provider {
        Provider::OpenAiChat | Provider::Ollama => &definition["function"]["description"],
        _ => &definition["description"],
    };
    found.as_str().unwrap_or_else(|| panic!("{provider}: no description in {definition}"))
}

#[test]
fn anthropic_gets_input_examples_when_asked_and_a_plain_description() {
    let definition = Anthropic::new().input_examples(true).tool(GetOrder::spec()).unwrap();
    insta::assert_json_snapshot!("anthropic_input_examples", definition);
    assert_eq!(definition["description"], "Look up an order.");
    assert_eq!(
        definition["input_examples"],
        json!([{"order_id": "A-1001"}, {"order_id": "B-2002", "with_items": true}])
    );
}

#[test]
fn other_providers_read_the_examples_in_the_description() {
    // Anthropic too, unless asked for `input_examples` (a beta a request must opt into).
    let adapters: [&dyn Adapter; 5] = [
        &Anthropic::new(),
        &OpenAiChat::new(),
        &OpenAiResponses::new(),
        &Gemini::new(),
        &Ollama::new(),
    ];
    for adapter in adapters {
        let definition = adapter.tool(GetOrder::spec()).unwrap();
        assert_eq!(description(adapter.provider(), &definition), WITH_EXAMPLES);
        assert!(!definition.to_string().contains("input_examples"), "{definition}");
    }
    assert_eq!(GetOrder::spec().description_with_examples(), WITH_EXAMPLES);
}

#[test]
fn a_tool_without_examples_is_encoded_as_before() {
    let adapters: [&dyn Adapter; 5] = [
        &Anthropic::new(),
        &OpenAiChat::new(),
        &OpenAiResponses::new(),
        &Gemini::new(),
        &Ollama::new(),
    ];
    for adapter in adapters {
        let definition = adapter.tool(Now::spec()).unwrap();
        assert_eq!(description(adapter.provider(), &definition), "Tell the time.");
        assert!(definition.get("input_examples").is_none());
    }
    let spec = serde_json::to_value(Now::spec()).unwrap();
    assert!(spec.get("examples").is_none(), "a spec lists examples only when it has some");
    let spec = serde_json::to_value(GetOrder::spec()).unwrap();
    assert_eq!(spec["examples"][0], json!({"order_id": "A-1001"}));
}

#[test]
fn an_example_its_pattern_refuses_keeps_the_catalog_from_building() {
    assert!(ToolCatalog::builder().register::<GetOrder>().build().is_ok());
    let error = ToolCatalog::builder()
        .register::<GetOrder>()
        .register::<GetOrderBadly>()
        .build()
        .unwrap_err();
    match error.problems() {
        [CatalogProblem::InvalidExample { tool, example: 1, problem }] => {
            assert_eq!(tool, "shop__get_order_badly");
            assert!(problem.contains("order_id"), "{problem}");
        }
        other => panic!("expected one invalid example, got {other:?}"),
    }
    assert!(error.to_string().contains("example 1 of tool `shop__get_order_badly`"), "{error}");
}
