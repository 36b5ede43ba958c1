use tool_runtime::content::Content;
use tool_runtime::prelude::*;

#[derive(Serialize, ToolSchema)]
struct Saved {
    path: String,
}

/// Save a note.
#[tool(name = "notes__save", effect = state_change, redact = all, redact_details = ["pth"])]
struct Save {}

impl Tool for Save {
    type Output = Content<(), Saved>;
    async fn run(self, _: &ToolInvocationContext, _: &ToolCapabilities) -> Result<Content<(), Saved>, ToolError> {
        Ok(Content::new().text("saved").details(Saved { path: "/notes/1".into() }))
    }
}

fn main() {}
