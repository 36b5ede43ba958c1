use tool_runtime::prelude::*;

/// Get the current time (from code the model writes).
#[tool(name = "core__get_time", effect = read_only, callers = "programmatic", redact = ["iso8601"])]
struct GetTime {}

#[derive(Serialize, ToolSchema)]
struct Time {
    iso8601: String,
}

impl Tool for GetTime {
    type Output = Time;
    async fn run(self, _: &ToolInvocationContext, _: &ToolCapabilities) -> Result<Time, ToolError> {
        Ok(Time { iso8601: String::new() })
    }
}

fn main() {}
