//! Prints the frozen spec of every example tool, then what validation says about a bad call.
//!
//! ```text
//! cargo run -p examples --bin specs
//! ```

use examples::tickets::CreateTicket;
use tool_runtime::schema::{ArgumentsError, parse_arguments};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    println!("{}\n", serde_json::to_string_pretty(&examples::specs())?);
    let raw =
        r#"{"title": "", "priority": "asap", "labels": ["Not A Label"], "connectionId": "other"}"#;
    println!("Validating tickets__create_ticket arguments {raw}");
    match parse_arguments::<CreateTicket>(raw.as_bytes()) {
        Err(ArgumentsError::Validation(errors)) => {
            for error in &errors {
                println!("  {error}");
            }
        }
        Err(error) => println!("  {error}"),
        Ok(_) => println!("  accepted"),
    }
    Ok(())
}
