use tool_runtime::prelude::*;

/// Ask the user to pick a date in their calendar.
#[tool(name = "ui__pick_date", effect = read_only, redact = ["date"], client = Picked)]
struct PickDate {
    prompt: String,
}

#[derive(Serialize, ToolSchema)]
struct Picked {
    date: String,
}

// The client runs it: there is no `run` to write, and one written anyway is refused.
impl Tool for PickDate {
    type Output = Picked;
    async fn run(self, _: &ToolInvocationContext, _: &ToolCapabilities) -> Result<Picked, ToolError> {
        Ok(Picked { date: String::new() })
    }
}

fn main() {}
