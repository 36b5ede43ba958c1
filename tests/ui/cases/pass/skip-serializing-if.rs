use tool_runtime::prelude::*;

/// A page of results.
///
/// The cursor is absent on the last page.
#[derive(Serialize, Deserialize, ToolSchema)]
pub struct Page {
    pub items: Vec<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cursor: Option<String>,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub note: String,
}

fn main() {
    let schema = Page::SCHEMA.to_json();
    assert_eq!(schema["required"], serde_json::json!(["items"]));
    assert_eq!(schema["description"], "A page of results.\n\nThe cursor is absent on the last page.");
    let last = Page { items: vec![], cursor: None, note: String::new() };
    let written = serde_json::to_value(&last).unwrap();
    assert_eq!(written, serde_json::json!({"items": []}));
    Page::SCHEMA.validate(&written).unwrap();
    let read: Page = tool_runtime::schema::parse_arguments(written.to_string().as_bytes()).unwrap();
    assert!(read.cursor.is_none() && read.note.is_empty());
}
