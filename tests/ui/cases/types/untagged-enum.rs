use tool_runtime::prelude::*;

/// How long the event lasts.
#[derive(Debug, Deserialize, ToolSchema)]
#[serde(untagged)]
enum Duration {
    Minutes(u32),
    Until(String),
}

/// Create an event in the user's calendar.
#[tool(name = "calendar__create_event", effect = state_change, redact = ["id"])]
struct CreateEvent {
    title: String,
    duration: Duration,
}

#[derive(Serialize, ToolSchema)]
struct Created {
    id: String,
}

impl Tool for CreateEvent {
    type Output = Created;
    async fn run(self, _: &ToolInvocationContext, _: &ToolCapabilities) -> Result<Created, ToolError> {
        Ok(Created { id: format!("{}{:?}", self.title, self.duration) })
    }
}

fn main() {}
