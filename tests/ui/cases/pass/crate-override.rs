// `#[tool(crate = ...)]` and `#[schema(crate = ...)]` point the expansions at a re-export of
// `tool_runtime`, for crates that wrap it in a facade.
mod facade {
    pub use ::tool_runtime;
    pub use ::tool_runtime::prelude;
}

use facade::prelude::*;

/// Echo the text back.
#[tool(crate = facade::tool_runtime, name = "demo__echo", effect = read_only, redact = ["text"])]
struct Echo {
    text: String,
}

#[derive(Serialize, ToolSchema)]
#[schema(crate = facade::tool_runtime)]
struct Echoed {
    text: String,
}

impl Tool for Echo {
    type Output = Echoed;
    async fn run(self, _: &ToolInvocationContext, _: &ToolCapabilities) -> Result<Echoed, ToolError> {
        Ok(Echoed { text: self.text })
    }
}

fn main() {
    let spec = Echo::spec();
    assert_eq!(spec.name(), "demo__echo");
    assert_eq!(spec.input_schema().to_json()["required"], serde_json::json!(["text"]));
    let echo: Echo = serde_json::from_str(r#"{"text": "hi"}"#).unwrap();
    assert_eq!(echo.text, "hi");
}
