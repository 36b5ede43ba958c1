//! The checks behind the fuzz targets in `fuzz/`, one function per untrusted entry point.
//!
//! Each function takes the raw bytes a fuzzer (or a committed corpus file) supplies and panics
//! when the runtime breaks a promise on them: a panic inside the runtime, disagreement with an
//! oracle, output that is not bounded by the input and the configured limits. The fuzz targets
//! call them under libFuzzer (nightly, `cargo fuzz`); `tests/tests/repo/fuzz_corpus.rs` replays
//! the committed corpus through the very same functions on stable, so CI keeps every finding.
//!
//! ```
//! // Any bytes are fine; a broken promise panics.
//! fuzz_checks::arguments::check(br#"{"query": "rust"}"#);
//! fuzz_checks::streams::check(tool_runtime::adapters::Provider::Ollama, b"\x00\x00{\"done\": true}");
//! ```

pub mod arguments;
pub mod grammar;
pub mod images;
pub mod import;
pub mod serve;
pub mod states;
pub mod streams;

/// Runs `future` to its end on this thread's runtime (one per thread, made on first use:
/// building one per input would be most of a check's work).
pub(crate) fn block_on<F: Future>(future: F) -> F::Output {
    thread_local! {
        static RUNTIME: tokio::runtime::Runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("a runtime");
    }
    RUNTIME.with(|runtime| runtime.block_on(future))
}

/// A check: takes one input and panics when a promise is broken.
pub type Check = fn(&[u8]);

/// Every fuzz target: its name (the directory of its corpus under `fuzz/corpus/`) and its check.
pub const TARGETS: &[(&str, Check)] = &[
    ("arguments", arguments::check),
    ("one_pass", arguments::check_one_pass),
    ("stream_openai_chat", streams::check_openai_chat),
    ("stream_openai_responses", streams::check_openai_responses),
    ("stream_anthropic", streams::check_anthropic),
    ("stream_gemini", streams::check_gemini),
    ("stream_ollama", streams::check_ollama),
    ("sse_framing", streams::check_sse),
    ("ndjson_framing", streams::check_ndjson),
    ("mcp_schema", import::check),
    ("image_header", images::check),
    ("run_state", states::check),
    ("mcp_http", serve::check),
    ("grammar_chat", grammar::check),
];
