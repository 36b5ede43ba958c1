// Every mistake of one item is reported in one build, each at its own token.
use tool_runtime::prelude::*;

#[tool(name = "get_time", efect = read_only, effect = readonly, description = "", redact = ["iso8601", ""])]
struct GetTime {
    #[schema(length(min = 5, max = 1), pattern = "([a-z]")]
    timezone: Option<String>,
    connection_id: String,
    #[serde(flatten)]
    options: Options,
}

#[derive(Debug, Deserialize, ToolSchema)]
struct Options {
    #[schema(range(min = 10, max = 1), lenght(max = 3))]
    precision: u8,
}

#[derive(Serialize, ToolSchema)]
struct Time {
    iso8601: String,
}

impl Tool for GetTime {
    type Output = Time;
    async fn run(self, _: &ToolInvocationContext, _: &ToolCapabilities) -> Result<Time, ToolError> {
        Ok(Time { iso8601: format!("{:?}{}{:?}", self.timezone, self.connection_id, self.options) })
    }
}

fn main() {}
