use tool_runtime::prelude::*;

/// Send an email.
#[tool(name = "mail__send", effect = external_side_effect, redact = ["id"])]
#[serde(tag = "kind")]
struct SendMail {
    to: String,
}

#[derive(Serialize, ToolSchema)]
struct Sent {
    id: String,
}

impl Tool for SendMail {
    type Output = Sent;
    async fn run(self, _: &ToolInvocationContext, _: &ToolCapabilities) -> Result<Sent, ToolError> {
        Ok(Sent { id: self.to })
    }
}

fn main() {}
