use tool_runtime::prelude::*;

/// Search the issue tracker.
#[tool(name = "tracker__search", effect = read_only, redact = ["titles"])]
struct SearchIssues {
    /// Words to look for.
    #[schema(format = "date-time", length(max = 64), format = "email")]
    query: String,
}

#[derive(Serialize, ToolSchema)]
struct Found {
    titles: Vec<String>,
}

impl Tool for SearchIssues {
    type Output = Found;
    async fn run(self, _: &ToolInvocationContext, _: &ToolCapabilities) -> Result<Found, ToolError> {
        Ok(Found { titles: vec![format!("{:?}", self.query)] })
    }
}

fn main() {}
