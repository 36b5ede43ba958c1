//! Every output shape with the allowlist it needs.

use tool_runtime::content::Content;
use tool_runtime::prelude::*;

/// Shout the text back.
#[tool(name = "text__shout", effect = read_only, redact = all)]
struct Shout {
    text: String,
}

impl Tool for Shout {
    type Output = String;
    async fn run(self, _: &ToolInvocationContext, _: &ToolCapabilities) -> Result<String, ToolError> {
        Ok(self.text.to_uppercase())
    }
}

/// Whether it is set; the model is told nothing.
#[tool(name = "flags__probe", effect = read_only, redact = [])]
struct Probe {}

impl Tool for Probe {
    type Output = bool;
    async fn run(self, _: &ToolInvocationContext, _: &ToolCapabilities) -> Result<bool, ToolError> {
        Ok(true)
    }
}

#[derive(Serialize, ToolSchema)]
struct Entry {
    name: String,
    size: u64,
}

/// List a directory.
#[tool(name = "files__list", effect = read_only, redact = ["name"])]
struct List {}

impl Tool for List {
    type Output = Vec<Entry>;
    async fn run(self, _: &ToolInvocationContext, _: &ToolCapabilities) -> Result<Vec<Entry>, ToolError> {
        Ok(Vec::new())
    }
}

/// Find one entry.
#[tool(name = "files__find", effect = read_only, redact = ["name", "size"])]
struct Find {}

impl Tool for Find {
    type Output = Option<Entry>;
    async fn run(self, _: &ToolInvocationContext, _: &ToolCapabilities) -> Result<Option<Entry>, ToolError> {
        Ok(None)
    }
}

#[derive(Serialize, ToolSchema)]
struct Saved {
    path: String,
    owner: String,
}

/// Take a screenshot.
#[tool(name = "screen__shot", effect = read_only, redact = [], redact_details = ["path"])]
struct Shot {}

impl Tool for Shot {
    type Output = Content<(), Saved>;
    async fn run(self, _: &ToolInvocationContext, _: &ToolCapabilities) -> Result<Content<(), Saved>, ToolError> {
        Ok(Content::new().image("image/png", vec![0u8; 4]).details(Saved { path: "/tmp/a.png".into(), owner: "x".into() }))
    }
}

/// Save a note, details whole.
#[tool(name = "notes__save", effect = state_change, redact = all, redact_details = all)]
struct Save {}

impl Tool for Save {
    type Output = Content<u32, String>;
    async fn run(self, _: &ToolInvocationContext, _: &ToolCapabilities) -> Result<Content<u32, String>, ToolError> {
        Ok(Content::new().json(1).details("/notes/1".to_owned()))
    }
}

fn main() {
    assert!(Shout::spec().redaction().is_all());
    assert!(Probe::spec().redaction().is_empty());
    assert_eq!(List::spec().redaction().paths().collect::<Vec<_>>(), ["name"]);
    assert!(Find::spec().redaction_keeps_valid_output());
    assert_eq!(Shot::spec().details_redaction().paths().collect::<Vec<_>>(), ["path"]);
    assert!(Save::spec().details_redaction().is_all());
}
