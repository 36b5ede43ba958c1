use tool_runtime::prelude::*;

/// Where to search: `b` would be read as `a`, the first field that takes it.
#[derive(Deserialize, ToolSchema)]
struct Range {
    #[serde(alias = "b")]
    a: u32,
    b: u32,
}

fn main() {}
