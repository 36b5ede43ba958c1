// Every `#[schema(...)]` constraint, on the tool and on a derived type, lands in the schema,
// tightened against the bounds the type has anyway.
use serde_json::json;
use tool_runtime::prelude::*;

/// A label to attach.
#[derive(Debug, Deserialize, ToolSchema)]
struct Label {
    #[schema(length(min = 1, max = 32), pattern = "^[a-z][a-z0-9-]*$")]
    name: String,
    /// Hex colour such as `ff0000`.
    #[schema(length(min = 6, max = 6))]
    colour: Option<String>,
}

/// How a reading is tagged.
#[derive(Debug, Deserialize, ToolSchema)]
struct Percent(#[schema(range(min = 0, max = 100))] u8);

/// File a new issue.
#[tool(name = "tracker__file_issue", effect = state_change, redact = ["id"])]
struct FileIssue {
    /// One-line summary.
    #[schema(length(min = 5, max = 120))]
    title: String,
    #[schema(description = "When the issue is due.", format = "date-time")]
    due: Option<String>,
    #[schema(items(min = 1, max = 5))]
    labels: Vec<Label>,
    #[schema(range(min = 1, max = 5))]
    priority: u8,
    #[schema(range(exclusive_min = 0, exclusive_max = 10))]
    severity: i32,
    #[schema(range(min = 0.0, exclusive_max = 1.5e3))]
    estimate_hours: f64,
    #[schema(range(exclusive_min = -1.5))]
    weight: f32,
    done: Percent,
}

#[derive(Serialize, ToolSchema)]
struct Filed {
    id: u64,
}

impl Tool for FileIssue {
    type Output = Filed;
    async fn run(self, _: &ToolInvocationContext, _: &ToolCapabilities) -> Result<Filed, ToolError> {
        let text = format!("{}{:?}{:?}{}{}{}{}{:?}", self.title, self.due, self.labels, self.priority, self.severity, self.estimate_hours, self.weight, self.done);
        Ok(Filed { id: text.len() as u64 })
    }
}

fn main() {
    let input = FileIssue::spec().input_schema().to_json();
    let properties = &input["properties"];
    assert_eq!(properties["title"], json!({"type": "string", "description": "One-line summary.", "minLength": 5, "maxLength": 120}));
    assert_eq!(properties["due"], json!({"type": ["string", "null"], "description": "When the issue is due.", "format": "date-time"}));
    assert_eq!(properties["labels"]["minItems"], 1);
    assert_eq!(properties["labels"]["maxItems"], 5);
    let label = &properties["labels"]["items"]["properties"];
    assert_eq!(label["name"], json!({"type": "string", "minLength": 1, "maxLength": 32, "pattern": "^[a-z][a-z0-9-]*$"}));
    assert_eq!(label["colour"]["minLength"], 6);
    assert_eq!(properties["priority"], json!({"type": "integer", "minimum": 1, "maximum": 5}));
    // Exclusive integer bounds become inclusive ones.
    assert_eq!(properties["severity"], json!({"type": "integer", "minimum": 1, "maximum": 9}));
    assert_eq!(properties["estimate_hours"], json!({"type": "number", "minimum": 0.0, "exclusiveMaximum": 1500.0}));
    assert_eq!(properties["weight"]["exclusiveMinimum"], -1.5);
    assert_eq!(properties["done"], json!({"type": "integer", "description": "How a reading is tagged.", "minimum": 0, "maximum": 100}));
}
