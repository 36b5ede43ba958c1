use tool_runtime::prelude::*;

/// Search the issue tracker.
#[tool(name = "tracker__search", effect = read_only, redact = ["titles"])]
struct SearchIssues {
    /// How many issues to return.
    #[schema(range(min = 0.5, max = 50))]
    limit: u32,
}

#[derive(Serialize, ToolSchema)]
struct Found {
    titles: Vec<String>,
}

impl Tool for SearchIssues {
    type Output = Found;
    async fn run(self, _: &ToolInvocationContext, _: &ToolCapabilities) -> Result<Found, ToolError> {
        Ok(Found { titles: vec![format!("{:?}", self.limit)] })
    }
}

fn main() {}
