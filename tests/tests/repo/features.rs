//! What a feature of `tool-runtime` builds: an MCP server alone (`mcp-server`) pulls in no HTTP
//! client (and so no TLS). Read off `cargo tree` over the lock file (nothing is built; crates
//! not yet downloaded are fetched).

use std::path::Path;
use std::process::Command;

/// The crates of `tool-runtime`'s normal dependency tree with only `features` on.
fn crates_with(features: &str) -> Vec<String> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned());
    let output = Command::new(cargo)
        .current_dir(root)
        // Not `--offline`: on a fresh machine the crates of a tree no build has asked for yet
        // (`embed-local`'s) are not downloaded when this runs. `--locked`: read, never change,
        // the lock file.
        .args(["tree", "--locked", "-p", "tool-runtime", "--no-default-features"])
        .args(["--features", features, "-e", "normal", "--prefix", "none", "--format", "{p}"])
        .output()
        .expect("cargo tree runs");
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let text = String::from_utf8(output.stdout).expect("UTF-8");
    let mut crates: Vec<String> =
        text.lines().filter_map(|line| line.split_whitespace().next()).map(str::to_owned).collect();
    crates.sort();
    crates.dedup();
    crates
}

#[test]
fn a_server_only_mcp_build_has_no_http_client() {
    let server = crates_with("mcp-server");
    assert!(server.iter().any(|name| name == "rmcp"), "{server:?}");
    assert!(server.iter().any(|name| name == "hyper"), "the server's HTTP: {server:?}");
    for client in ["reqwest", "rustls", "hyper-rustls"] {
        assert!(!server.iter().any(|name| name == client), "`{client}` in {server:?}");
    }
    let both = crates_with("mcp");
    assert!(both.iter().any(|name| name == "reqwest"), "{both:?}");
    assert!(server.len() + 50 < both.len(), "{} against {}", server.len(), both.len());
}

/// The local embedding model's inference (candle, tokenizers) is in neither the default nor
/// the lean build; `embed-local` brings it, without the tokenizer's C regex engine or its
/// downloads.
#[test]
fn local_embeddings_are_only_built_when_asked_for() {
    let default = crates_with("default");
    let lean = crates_with("");
    for (name, tree) in [("default", &default), ("lean", &lean)] {
        for heavy in ["candle-core", "tokenizers", "gemm"] {
            assert!(!tree.iter().any(|crate_| crate_ == heavy), "`{heavy}` in the {name} build");
        }
    }
    let local = crates_with("embed-local");
    assert!(local.iter().any(|name| name == "candle-core"), "{local:?}");
    for absent in ["onig", "onig_sys", "hf-hub", "indicatif", "reqwest"] {
        assert!(!local.iter().any(|name| name == absent), "`{absent}` in {local:?}");
    }
}
