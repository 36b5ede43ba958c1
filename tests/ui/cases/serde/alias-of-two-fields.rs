use tool_runtime::prelude::*;

/// Where to search: `start` would be read as `from`, the first field that takes it.
#[derive(Deserialize, ToolSchema)]
struct Range {
    #[serde(alias = "start")]
    from: u32,
    #[serde(alias = "start")]
    to: u32,
}

fn main() {}
