use tool_runtime::prelude::*;

/// Ask the user to pick a date in their calendar.
#[tool(name = "ui__pick_date", effect = read_only, redact = ["date"], client = "the browser")]
struct PickDate {
    prompt: String,
}

fn main() {}
