use tool_runtime::prelude::*;

mod lowercase {
    use serde::{Deserialize, Deserializer};

    pub fn deserialize<'de, D: Deserializer<'de>>(deserializer: D) -> Result<String, D::Error> {
        String::deserialize(deserializer).map(|text| text.to_lowercase())
    }
}

/// Send an email.
#[tool(name = "mail__send", effect = external_side_effect, redact = ["id"])]
struct SendMail {
    #[serde(deserialize_with = "lowercase::deserialize")]
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
