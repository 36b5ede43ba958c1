// Enums without data become string `enum`s; `rename_all`, `rename`, `skip`, `default` and
// `alias` are honoured on enums, nested structs and the tool itself.
use serde_json::json;
use tool_runtime::prelude::*;

/// How results are ordered.
#[derive(Debug, PartialEq, Deserialize, ToolSchema)]
#[serde(rename_all = "snake_case")]
enum Order {
    MostRelevant,
    Newest,
    #[serde(rename = "stars")]
    MostStarred,
    #[serde(skip)]
    #[allow(dead_code)]
    Internal,
}

/// Which issues to include.
#[derive(Debug, Deserialize, ToolSchema)]
#[serde(rename_all = "SCREAMING-KEBAB-CASE")]
enum State {
    Open,
    Closed,
}

/// A time window.
#[derive(Debug, Deserialize, ToolSchema)]
#[serde(rename_all = "PascalCase")]
struct Window {
    days_back: u16,
    include_today: bool,
}

/// Search the issues of a repository.
#[tool(name = "github__search_issues", effect = read_only, redact = ["issueTitles"])]
#[serde(rename_all = "camelCase")]
struct SearchIssues {
    repo_name: String,
    #[serde(alias = "q")]
    query_text: String,
    #[serde(default)]
    order_by: Option<Order>,
    states: Vec<State>,
    #[serde(rename = "within")]
    window: Window,
    #[serde(skip)]
    cache_hits: u32,
}

#[derive(Serialize, ToolSchema)]
#[serde(rename_all = "camelCase")]
struct Issues {
    issue_titles: Vec<String>,
}

impl Tool for SearchIssues {
    type Output = Issues;
    async fn run(self, _: &ToolInvocationContext, _: &ToolCapabilities) -> Result<Issues, ToolError> {
        let title = format!("{}{}{:?}{:?}{:?}{}", self.repo_name, self.query_text, self.order_by, self.states, self.window, self.cache_hits);
        Ok(Issues { issue_titles: vec![title] })
    }
}

fn main() {
    let spec = SearchIssues::spec();
    let input = spec.input_schema().to_json();
    let properties = &input["properties"];
    let names: Vec<&str> = properties.as_object().unwrap().keys().map(String::as_str).collect();
    assert_eq!(names, ["repoName", "queryText", "orderBy", "states", "within"]);
    assert_eq!(properties["orderBy"]["enum"], json!(["most_relevant", "newest", "stars", null]));
    assert_eq!(properties["orderBy"]["type"], json!(["string", "null"]));
    assert_eq!(properties["states"]["items"]["enum"], json!(["OPEN", "CLOSED"]));
    assert_eq!(properties["within"]["required"], json!(["DaysBack", "IncludeToday"]));
    assert_eq!(input["required"], json!(["repoName", "queryText", "states", "within"]));
    assert_eq!(Order::SCHEMA.to_json()["description"], "How results are ordered.");

    let args = json!({
        "repoName": "rust-lang/rust",
        "q": "ice",
        "orderBy": "stars",
        "states": ["OPEN"],
        "within": {"DaysBack": 7, "IncludeToday": true},
    });
    let search: SearchIssues = serde_json::from_value(args).unwrap();
    assert_eq!(search.query_text, "ice");
    assert_eq!(search.order_by, Some(Order::MostStarred));
    assert_eq!(search.cache_hits, 0);
}
