use tool_runtime::prelude::*;

/// When the event repeats.
#[derive(Debug, Deserialize, ToolSchema)]
enum Repeat {
    Never,
    Daily { until: String },
    Weekly,
}

/// Create an event in the user's calendar.
#[tool(name = "calendar__create_event", effect = state_change, redact = ["id"])]
struct CreateEvent {
    title: String,
    repeat: Repeat,
}

#[derive(Serialize, ToolSchema)]
struct Created {
    id: String,
}

impl Tool for CreateEvent {
    type Output = Created;
    async fn run(self, _: &ToolInvocationContext, _: &ToolCapabilities) -> Result<Created, ToolError> {
        Ok(Created { id: format!("{}{:?}", self.title, self.repeat) })
    }
}

fn main() {}
