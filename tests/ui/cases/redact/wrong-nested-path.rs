use tool_runtime::prelude::*;

/// Search the documentation.
#[tool(name = "docs__search", effect = read_only, redact = ["total", "hits.title", "hits.link"])]
struct SearchDocs {
    query: String,
}

#[derive(Serialize, ToolSchema)]
struct Hits {
    total: u32,
    hits: Vec<Hit>,
}

#[derive(Serialize, ToolSchema)]
struct Hit {
    title: String,
    url: String,
}

impl Tool for SearchDocs {
    type Output = Hits;
    async fn run(self, _: &ToolInvocationContext, _: &ToolCapabilities) -> Result<Hits, ToolError> {
        let hit = Hit { title: self.query, url: String::new() };
        Ok(Hits { total: 1, hits: vec![hit] })
    }
}

fn main() {}
