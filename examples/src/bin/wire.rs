//! Prints the example tools' definitions for a provider, or decodes a provider response from
//! stdin. See [`examples::wire`].
//!
//! ```text
//! cargo run -p examples --bin wire -- encode --provider anthropic --strict
//! cargo run -p examples --bin wire -- decode --provider openai-chat < response.sse
//! ```

use std::process::ExitCode;

fn main() -> ExitCode {
    examples::wire::run(
        std::env::args().skip(1),
        &mut std::io::stdin().lock(),
        &mut std::io::stdout().lock(),
        &mut std::io::stderr().lock(),
    )
}
