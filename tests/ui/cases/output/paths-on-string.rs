use tool_runtime::prelude::*;

/// Shout the text back.
#[tool(name = "text__shout", effect = read_only, redact = ["text"])]
struct Shout {
    text: String,
}

impl Tool for Shout {
    type Output = String;
    async fn run(self, _: &ToolInvocationContext, _: &ToolCapabilities) -> Result<String, ToolError> {
        Ok(self.text.to_uppercase())
    }
}

fn main() {}
