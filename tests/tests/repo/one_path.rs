//! One execution path (DESIGN.md 1): only the runner runs tools. `Tool::run` and
//! `BoundToolRuntime::exec` take the `ToolCapabilities` only the runner makes, so code elsewhere
//! cannot call them; this walks the repository's Rust sources and Markdown (doc examples
//! included) and fails, naming file and line, where a call of either passes capabilities
//! outside the runner. Handing on the capabilities a wrapper was given, inside its own `exec`
//! (or `run`), is delegation within the runner's call and allowed; so is the one bridge the
//! runner calls through, `StaticTool::exec` calling its type's `run`.

use std::fs;
use std::path::Path;

use super::layout::source_files;

/// Where tools may be run from: the runner, and the bridge from a bound tool to its `run`.
const RUNNER: &[&str] = &["tool-runtime/src/runner/", "tool-runtime/src/runtime/bound.rs"];

/// The arguments of the call whose `(` is at `open` in `line`, split at top-level commas;
/// `None` when the call does not close on this line.
fn arguments(line: &str, open: usize) -> Option<Vec<&str>> {
    let mut depth = 0usize;
    let mut start = open + 1;
    let mut out = Vec::new();
    for (index, byte) in line.bytes().enumerate().skip(open) {
        match byte {
            b'(' | b'[' | b'{' => depth += 1,
            b')' | b']' | b'}' => {
                depth -= 1;
                if depth == 0 {
                    out.push(line[start..index].trim());
                    return Some(out);
                }
            }
            b',' if depth == 1 => {
                out.push(line[start..index].trim());
                start = index + 1;
            }
            _ => {}
        }
    }
    None
}

/// Whether an argument is capabilities.
fn is_capabilities(argument: &str) -> bool {
    let argument = argument.to_ascii_lowercase();
    argument.contains("caps") || argument.contains("capabilities")
}

/// The calls in `text` that run a tool with capabilities, outside a function named `exec` or
/// `run` (which may hand on its own): `(line number, line)`.
fn bypasses(text: &str) -> Vec<(usize, String)> {
    let mut found = Vec::new();
    let mut enclosing = String::new();
    for (number, line) in text.lines().enumerate() {
        let code = line.trim_start().trim_start_matches("///").trim_start_matches("//!");
        if let Some(at) = code.find("fn ") {
            let name: String =
                code[at + 3..].chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect();
            if !name.is_empty() {
                enclosing = name;
            }
        }
        for (method, count) in [(".run(", 2), ("::run(", 3), (".exec(", 3)] {
            let mut from = 0;
            while let Some(at) = code[from..].find(method) {
                let open = from + at + method.len() - 1;
                from = open + 1;
                let Some(args) = arguments(code, open) else { continue };
                let passes_caps =
                    args.len() == count && args.last().is_some_and(|last| is_capabilities(last));
                if passes_caps && enclosing != "exec" && enclosing != "run" {
                    found.push((number + 1, line.trim().to_owned()));
                }
            }
        }
    }
    found
}

#[test]
fn only_the_runner_runs_tools() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap().to_path_buf();
    let mut files = Vec::new();
    source_files(&root, &["rs", "md"], &mut files);
    assert!(files.len() > 100, "the walk found the sources ({} files)", files.len());
    let mut problems = Vec::new();
    for path in files {
        let relative = path.strip_prefix(&root).unwrap().to_string_lossy().replace('\\', "/");
        // This file shows the scan a bypass in its own test; the changelog shows the old way
        // in a migration note.
        if RUNNER.iter().any(|allowed| relative.starts_with(allowed))
            || relative == "tests/tests/repo/one_path.rs"
            || relative == "CHANGELOG.md"
        {
            continue;
        }
        let text = fs::read_to_string(&path).unwrap_or_default();
        for (number, line) in bypasses(&text) {
            problems.push(format!("{relative}:{number}: {line}"));
        }
    }
    assert!(
        problems.is_empty(),
        "tools run past the runner (DESIGN.md 1: only the runner runs a tool; tests use `tool_runtime::testing`):\n{}",
        problems.join("\n")
    );
}

#[test]
fn the_scan_finds_a_direct_call_and_lets_delegation_and_the_runner_be() {
    let code = r#"
async fn test_it() {
    let out = Add { a: 1, b: 2 }.run(&ctx, &caps).await;
    let out = tool.exec(args, &ctx, &ToolCapabilities::default()).await;
    let out = <Add as Tool>::run(add, &ctx, &caps).await;
    let ok = runner.exec("math__add", args, &ctx).await;
}
async fn exec(&self, args: ValidatedArgs, ctx: &Ctx, caps: &ToolCapabilities) -> Out {
    self.0.exec(args, ctx, caps).await
}
"#;
    let lines: Vec<usize> = bypasses(code).into_iter().map(|(line, _)| line).collect();
    assert_eq!(lines, [3, 4, 5]);
}
