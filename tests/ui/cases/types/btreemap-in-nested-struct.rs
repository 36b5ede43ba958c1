use tool_runtime::prelude::*;
use std::collections::BTreeMap;

/// Who is invited.
#[derive(Debug, Deserialize, ToolSchema)]
struct Invitees {
    /// Responses by email address.
    responses: Vec<BTreeMap<String, bool>>,
}

/// Create an event in the user's calendar.
#[tool(name = "calendar__create_event", effect = state_change, redact = ["id"])]
struct CreateEvent {
    title: String,
    invitees: Option<Invitees>,
}

#[derive(Serialize, ToolSchema)]
struct Created {
    id: String,
}

impl Tool for CreateEvent {
    type Output = Created;
    async fn run(self, _: &ToolInvocationContext, _: &ToolCapabilities) -> Result<Created, ToolError> {
        Ok(Created { id: format!("{}{:?}", self.title, self.invitees) })
    }
}

fn main() {}
