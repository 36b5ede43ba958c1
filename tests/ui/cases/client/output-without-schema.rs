use tool_runtime::prelude::*;

/// Ask the user to pick a date in their calendar.
#[tool(name = "ui__pick_date", effect = read_only, redact = ["date"], client = Picked)]
struct PickDate {
    prompt: String,
}

// No `ToolSchema`: the client's results could not be checked.
#[derive(Serialize)]
struct Picked {
    date: String,
}

fn main() {}
