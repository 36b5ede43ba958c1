use tool_runtime::prelude::*;

/// List the names.
#[tool(name = "files__names", effect = read_only, redact = ["name"])]
struct Names {}

impl Tool for Names {
    type Output = Vec<String>;
    async fn run(self, _: &ToolInvocationContext, _: &ToolCapabilities) -> Result<Vec<String>, ToolError> {
        Ok(Vec::new())
    }
}

fn main() {}
