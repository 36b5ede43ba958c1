use tool_runtime::prelude::*;

/// Fetch a document as JSON.
#[tool(name = "docs__fetch", effect = read_only, redact = all)]
struct Fetch {
    id: String,
}

impl Tool for Fetch {
    type Output = serde_json::Value;
    async fn run(self, _: &ToolInvocationContext, _: &ToolCapabilities) -> Result<serde_json::Value, ToolError> {
        Ok(serde_json::json!({ "id": self.id }))
    }
}

fn main() {}
