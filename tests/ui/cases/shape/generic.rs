use tool_runtime::prelude::*;

/// Echo the value back.
#[tool(name = "demo__echo", effect = read_only, redact = ["value"])]
struct Echo<T> {
    value: T,
}

#[derive(Serialize, ToolSchema)]
struct Echoed {
    value: String,
}

impl Tool for Echo<String> {
    type Output = Echoed;
    async fn run(self, _: &ToolInvocationContext, _: &ToolCapabilities) -> Result<Echoed, ToolError> {
        Ok(Echoed { value: self.value })
    }
}

fn main() {}
