use tool_runtime::content::Content;
use tool_runtime::prelude::*;

/// Save a note.
#[tool(name = "notes__save", effect = state_change, redact = all, redact_details = ["path"])]
struct Save {}

impl Tool for Save {
    type Output = Content<(), String>;
    async fn run(self, _: &ToolInvocationContext, _: &ToolCapabilities) -> Result<Content<(), String>, ToolError> {
        Ok(Content::new().text("saved").details("/notes/1".to_owned()))
    }
}

fn main() {}
