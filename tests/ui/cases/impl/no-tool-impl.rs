use tool_runtime::prelude::*;

/// Get the current time.
#[tool(name = "core__get_time", effect = read_only, redact = ["iso8601"])]
struct GetTime {}

fn main() {}
