use tool_runtime::prelude::*;

#[derive(Deserialize, ToolSchema)]
struct L10 { leaf: String }
#[derive(Deserialize, ToolSchema)]
struct L9 { next: L10 }
#[derive(Deserialize, ToolSchema)]
struct L8 { next: L9 }
#[derive(Deserialize, ToolSchema)]
struct L7 { next: L8 }
#[derive(Deserialize, ToolSchema)]
struct L6 { next: Vec<L7> }
#[derive(Deserialize, ToolSchema)]
struct L5 { next: L6 }
#[derive(Deserialize, ToolSchema)]
struct L4 { next: L5 }
#[derive(Deserialize, ToolSchema)]
struct L3 { next: L4 }
#[derive(Deserialize, ToolSchema)]
struct L2 { next: Option<L3> }
#[derive(Deserialize, ToolSchema)]
struct L1 { next: L2 }

/// Eleven levels of objects: the arguments, then `L1` to `L10`.
#[tool(name = "deep__tool", effect = read_only, redact = all)]
struct Deep {
    next: L1,
}

impl Tool for Deep {
    type Output = String;
    async fn run(self, _: &ToolInvocationContext, _: &ToolCapabilities) -> Result<String, ToolError> {
        Ok(String::new())
    }
}

fn main() {}
