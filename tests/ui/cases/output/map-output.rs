use std::collections::HashMap;

use tool_runtime::prelude::*;

/// Count the words of a text.
#[tool(name = "text__word_counts", effect = read_only, redact = all)]
struct WordCounts {
    text: String,
}

impl Tool for WordCounts {
    type Output = HashMap<String, u32>;
    async fn run(self, _: &ToolInvocationContext, _: &ToolCapabilities) -> Result<HashMap<String, u32>, ToolError> {
        let mut counts = HashMap::new();
        for word in self.text.split_whitespace() {
            *counts.entry(word.to_owned()).or_insert(0) += 1;
        }
        Ok(counts)
    }
}

fn main() {}
