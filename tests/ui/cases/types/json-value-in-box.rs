use tool_runtime::prelude::*;

/// Where the event takes place.
#[derive(Debug, Deserialize, ToolSchema)]
struct Location {
    name: String,
    /// Whatever the map provider returned.
    details: Option<serde_json::Value>,
}

/// Create an event in the user's calendar.
#[tool(name = "calendar__create_event", effect = state_change, redact = ["id"])]
struct CreateEvent {
    title: String,
    location: Box<Location>,
}

#[derive(Serialize, ToolSchema)]
struct Created {
    id: String,
}

impl Tool for CreateEvent {
    type Output = Created;
    async fn run(self, _: &ToolInvocationContext, _: &ToolCapabilities) -> Result<Created, ToolError> {
        Ok(Created { id: format!("{}{:?}", self.title, self.location) })
    }
}

fn main() {}
