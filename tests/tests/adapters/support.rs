//! Shared by the adapters suites: fixtures on disk, decoding helpers, and the official SDKs as
//! an oracle for wire payloads.

#![allow(dead_code)]

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use serde_json::{Value, json};
use tool_runtime::adapters::{Adapter, Decoded, Provider};
use tool_tests::python::PinnedVenv;

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

/// The official SDKs the payloads are checked against (`tests/sdk_oracle.py`).
const SDKS: PinnedVenv<'static> = PinnedVenv {
    name: "sdks",
    pins: &["anthropic==2.14.0", "openai==3.57.0"],
    pip_args: &[],
    build_env: &[],
    needed_by: "the SDK oracle test",
    what: "the official anthropic and openai Python SDKs",
};

/// Each `(SDK type, value)` checked by the SDK's own types: what it made of each value, or
/// why it refused it.
pub fn sdk_check(checks: &[(&str, Value)]) -> Vec<Result<Value, String>> {
    let python = SDKS.python(Path::new(env!("CARGO_TARGET_TMPDIR")));
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("sdk_oracle.py");
    let mut child = Command::new(python)
        .arg(&script)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the oracle script starts");
    let checks: Vec<Value> =
        checks.iter().map(|(kind, value)| json!({"type": kind, "value": value})).collect();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(json!({"checks": checks}).to_string().as_bytes())
        .unwrap();
    let output = child.wait_with_output().unwrap();
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let answer: Value = serde_json::from_slice(&output.stdout).unwrap();
    answer["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|result| match result["ok"].as_bool() {
            Some(true) => Ok(result["parsed"].clone()),
            _ => Err(result["error"].as_str().unwrap_or_default().to_owned()),
        })
        .collect()
}

/// The request's own fields, its list fields (checked item by item) left empty.
pub fn top_level(body: &Value, lists: &[&str]) -> Value {
    let mut top = body.clone();
    for list in lists {
        top[*list] = json!([]);
    }
    top
}
