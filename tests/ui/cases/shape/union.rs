use tool_runtime::prelude::*;

/// Store a number.
#[tool(name = "math__store", effect = state_change, redact = [])]
union Store {
    int: i64,
    float: f64,
}

#[derive(Serialize, ToolSchema)]
struct Stored {}

impl Tool for Store {
    type Output = Stored;
    async fn run(self, _: &ToolInvocationContext, _: &ToolCapabilities) -> Result<Stored, ToolError> {
        Ok(Stored {})
    }
}

fn main() {}
