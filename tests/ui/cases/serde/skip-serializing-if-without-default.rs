use tool_runtime::prelude::*;

#[derive(Serialize, Deserialize, ToolSchema)]
pub struct Page {
    pub items: Vec<String>,
    #[serde(skip_serializing_if = "String::is_empty")]
    pub cursor: String,
}

fn main() {}
