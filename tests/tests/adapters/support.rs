//! Shared by the adapters suites: fixtures on disk and decoding helpers.

#![allow(dead_code)]

use std::path::PathBuf;

use serde_json::Value;
use tool_runtime::adapters::{Adapter, Decoded, Provider};

/// Every provider's fixture directory name (its `Provider::as_str`).
pub const PROVIDERS: [&str; 5] =
    ["openai-chat", "openai-responses", "anthropic", "gemini", "ollama"];

fn dir(provider: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("fixtures").join(provider)
}

/// The bytes of `tests/fixtures/<provider>/<name>`.
pub fn fixture(provider: &str, name: &str) -> Vec<u8> {
    let path = dir(provider).join(name);
    std::fs::read(&path).unwrap_or_else(|error| panic!("cannot read {}: {error}", path.display()))
}

/// Every fixture of `provider` as (file name, bytes), sorted by name.
pub fn fixtures(provider: &str) -> Vec<(String, Vec<u8>)> {
    let mut names: Vec<String> = std::fs::read_dir(dir(provider))
        .expect("the fixture directory exists")
        .map(|entry| entry.expect("a directory entry").file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names.into_iter().map(|name| (name.clone(), fixture(provider, &name))).collect()
}

/// Whether a fixture is a raw stream (as opposed to a whole JSON body).
pub fn is_stream(name: &str) -> bool {
    name.ends_with(".sse") || name.ends_with(".ndjson")
}

/// The default (non-strict) adapter of a provider.
pub fn adapter(provider: &str) -> Box<dyn Adapter> {
    provider.parse::<Provider>().expect("a provider name").adapter(false)
}

/// Feeds `bytes` in pieces of `size` bytes and finishes the session.
pub fn stream_in_pieces(adapter: &dyn Adapter, bytes: &[u8], size: usize) -> Decoded {
    let mut session = adapter.stream();
    for piece in bytes.chunks(size.max(1)) {
        session.feed(piece);
    }
    session.finish()
}

/// Decodes a fixture the way it was sent: streamed fixtures through a session (all at once),
/// whole bodies through `decode`.
pub fn decode_fixture(provider: &str, name: &str) -> Decoded {
    let bytes = fixture(provider, name);
    let adapter = adapter(provider);
    if is_stream(name) {
        stream_in_pieces(adapter.as_ref(), &bytes, bytes.len())
    } else {
        adapter.decode(&bytes).unwrap_or_else(|error| panic!("{provider}/{name}: {error}"))
    }
}

/// The decoded response as JSON (what `wire decode` prints).
pub fn json(decoded: &Decoded) -> Value {
    serde_json::to_value(decoded).expect("a decoded response serialises")
}

/// The example tools the golden files pin (fixed, so the files do not move when the catalog
/// grows).
pub fn specs() -> Vec<&'static tool_runtime::spec::ToolSpec> {
    use tool_runtime::spec::ToolDefinition;
    vec![
        examples::time::GetCurrentTime::spec(),
        examples::search::SearchDocs::spec(),
        examples::tickets::CreateTicket::spec(),
    ]
}
