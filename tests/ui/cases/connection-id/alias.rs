use tool_runtime::prelude::*;

/// List the open pull requests of a repository.
#[tool(name = "github__list_pulls", effect = read_only, redact = ["titles"], requires_connection)]
struct ListPulls {
    repo: String,
    #[serde(alias = "connection_id")]
    account: String,
}

#[derive(Serialize, ToolSchema)]
struct Pulls {
    titles: Vec<String>,
}

impl Tool for ListPulls {
    type Output = Pulls;
    async fn run(self, _: &ToolInvocationContext, _: &ToolCapabilities) -> Result<Pulls, ToolError> {
        Ok(Pulls { titles: vec![self.repo, self.account] })
    }
}

fn main() {}
