use tool_runtime::prelude::*;

/// Search the docs.
#[tool(
    name = "docs__search",
    effect = read_only,
    redact = all,
    examples = [
        {"query": "select", "limit": 3},
        {"query": "spawn", "kinds": ["api", "guide"], "min_score": -0.5, "exact": true},
        {"query": "ünïcode", "limit": 10, "tags": null},
    ]
)]
struct Search {
    #[schema(length(min = 1, max = 7))]
    query: String,
    #[schema(range(min = 1, max = 10))]
    limit: Option<u32>,
    #[serde(alias = "kinds")]
    #[schema(items(max = 2))]
    tags: Option<Vec<Tag>>,
    min_score: Option<f64>,
    exact: Option<bool>,
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

fn main() {
    let examples = Search::spec().examples();
    assert_eq!(examples.len(), 3);
    assert_eq!(examples[1]["min_score"], -0.5);
    // Sent as the schema names them: the alias `kinds` is the property `tags`.
    assert_eq!(examples[1]["tags"], serde_json::json!(["api", "guide"]));
    assert!(examples[1].get("kinds").is_none());
    // Every example parses as the tool's arguments.
    for example in examples {
        let _: Search = serde_json::from_value(example.clone()).unwrap();
    }
}
