use tool_runtime::prelude::*;

/// A reminder, and the reminder before it.
#[derive(Debug, Deserialize, ToolSchema)]
struct Reminder {
    minutes_before: u32,
    earlier: Option<Box<Reminder>>,
}

/// Create an event in the user's calendar.
#[tool(name = "calendar__create_event", effect = state_change, redact = ["id"])]
struct CreateEvent {
    title: String,
    reminder: Reminder,
}

#[derive(Serialize, ToolSchema)]
struct Created {
    id: String,
}

impl Tool for CreateEvent {
    type Output = Created;
    async fn run(self, _: &ToolInvocationContext, _: &ToolCapabilities) -> Result<Created, ToolError> {
        Ok(Created { id: format!("{}{:?}", self.title, self.reminder) })
    }
}

fn main() {}
