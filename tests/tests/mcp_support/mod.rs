//! Shared by the MCP suites: the `mcp_server` example binary and the Python SDK's venv.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

/// The workspace root.
pub fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("the tests crate is in the workspace")
        .to_owned()
}

/// `target/<profile>`, the directory holding this test binary's `deps/`.
fn profile_dir() -> PathBuf {
    let exe = std::env::current_exe().expect("the test binary has a path");
    exe.parent()
        .and_then(Path::parent)
        .expect("test binaries live in target/<profile>/deps")
        .to_owned()
}

/// The `mcp_server` example binary, built once per test process with the profile of the
/// tests. (`cargo test` builds no plain binary of `examples`, which has no integration test, so
/// this build is needed; it resolves features on its own and so recompiles part of the graph.)
pub fn mcp_server() -> PathBuf {
    static BUILT: OnceLock<PathBuf> = OnceLock::new();
    BUILT
        .get_or_init(|| {
            let profile = profile_dir();
            let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned());
            let mut command = Command::new(cargo);
            command.current_dir(workspace()).args([
                "build",
                "--quiet",
                "-p",
                "examples",
                "--bin",
                "mcp_server",
            ]);
            if profile.file_name().is_some_and(|name| name == "release") {
                command.arg("--release");
            }
            let status = command.status().expect("cargo runs");
            assert!(
                status.success(),
                "`cargo test --workspace --no-run` (to build mcp_server) failed"
            );
            let binary = profile.join(format!("mcp_server{}", std::env::consts::EXE_SUFFIX));
            assert!(binary.exists(), "no mcp_server binary at {}", binary.display());
            binary
        })
        .clone()
}

/// The Python SDK version the interop test pins.
pub const PYTHON_MCP: &str = "2.3.0";

/// A venv under the target directory with `mcp==2.3.0` installed, created on first use and
/// reused after. Panics with what went wrong when Python or PyPI is out of reach: this test
/// must not pass without having talked to the real SDK.
pub fn python_with_mcp() -> PathBuf {
    let venv = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("mcp-venv-{PYTHON_MCP}"));
    let python = venv.join("bin").join("python");
    let marker = venv.join(".installed");
    if marker.exists() && python.exists() {
        return python;
    }
    let created = Command::new("python3").args(["-m", "venv"]).arg(&venv).output();
    match created {
        Ok(output) if output.status.success() => {}
        Ok(output) => panic!(
            "`python3 -m venv {}` failed; the MCP interop test needs python3 with the venv module:\n{}",
            venv.display(),
            String::from_utf8_lossy(&output.stderr)
        ),
        Err(error) => {
            panic!("python3 is needed for the MCP interop test and could not be run: {error}")
        }
    }
    let installed = Command::new(&python)
        .args(["-m", "pip", "install", "--quiet", "--disable-pip-version-check"])
        .arg(format!("mcp=={PYTHON_MCP}"))
        .output()
        .expect("the venv's python runs");
    assert!(
        installed.status.success(),
        "`pip install mcp=={PYTHON_MCP}` failed (is PyPI reachable?); the MCP interop test cannot run without \
         the official Python SDK:\n{}",
        String::from_utf8_lossy(&installed.stderr)
    );
    std::fs::write(&marker, PYTHON_MCP).expect("the venv marker can be written");
    python
}
