use tool_runtime::prelude::*;

/// Add two numbers.
#[tool(name = "math__add", effect = read_only, redact = ["sum"])]
struct Add(i64, i64);

#[derive(Serialize, ToolSchema)]
struct Sum {
    sum: i64,
}

impl Tool for Add {
    type Output = Sum;
    async fn run(self, _: &ToolInvocationContext, _: &ToolCapabilities) -> Result<Sum, ToolError> {
        Ok(Sum { sum: self.0 + self.1 })
    }
}

fn main() {}
