use tool_runtime::prelude::*;

/// Search the docs.
#[tool(
    name = "docs__search",
    effect = read_only,
    redact = all,
    examples = [{"query": "select", "tags": ["tutorial"]}]
)]
struct Search {
    #[schema(length(min = 1, max = 20))]
    query: String,
    #[schema(range(min = 1, max = 10))]
    limit: Option<u32>,
    #[serde(alias = "kinds")]
    #[schema(items(max = 2))]
    tags: Option<Vec<Tag>>,
}

#[derive(Deserialize, Serialize, ToolSchema)]
#[serde(rename_all = "snake_case")]
enum Tag {
    Guide,
    Api,
}

impl Tool for Search {
    type Output = Vec<String>;
    async fn run(self, _: &ToolInvocationContext, _: &ToolCapabilities) -> Result<Vec<String>, ToolError> {
        Ok(vec![])
    }
}

fn main() {}
