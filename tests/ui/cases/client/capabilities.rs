use tool_runtime::prelude::*;

/// Ask the user to pick a date in their calendar.
#[tool(name = "ui__pick_date", effect = read_only, redact = ["date"], client = Picked, capabilities = [Clock])]
struct PickDate {
    prompt: String,
}

#[derive(Serialize, ToolSchema)]
struct Picked {
    date: String,
}

fn main() {}
