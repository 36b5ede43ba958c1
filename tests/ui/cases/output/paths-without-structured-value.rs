use tool_runtime::content::Content;
use tool_runtime::prelude::*;

/// Say hello.
#[tool(name = "text__hello", effect = read_only, redact = ["greeting"])]
struct Hello {}

impl Tool for Hello {
    type Output = Content;
    async fn run(self, _: &ToolInvocationContext, _: &ToolCapabilities) -> Result<Content, ToolError> {
        Ok(Content::new().text("hello"))
    }
}

fn main() {}
