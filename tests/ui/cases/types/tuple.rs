use tool_runtime::prelude::*;

/// Create an event in the user's calendar.
#[tool(name = "calendar__create_event", effect = state_change, redact = ["id"])]
struct CreateEvent {
    title: String,
    /// Start and end, as ISO 8601 timestamps.
    span: (String, String),
}

#[derive(Serialize, ToolSchema)]
struct Created {
    id: String,
}

impl Tool for CreateEvent {
    type Output = Created;
    async fn run(self, _: &ToolInvocationContext, _: &ToolCapabilities) -> Result<Created, ToolError> {
        Ok(Created { id: format!("{}{:?}", self.title, self.span) })
    }
}

fn main() {}
