//! The layout rule (DESIGN.md 3a): provider wire formats live only in
//! `tool-runtime/src/adapters/`. This walks the rest of `tool-runtime/src` and fails, naming
//! file and line, where code (not comments) holds a string literal with a provider-specific
//! JSON key, as a key or as a segment of a JSON pointer (`"/usage/prompt_tokens"`).
//!
//! The layer order (DESIGN.md 3): each top-level module of `tool-runtime/src` is a layer, and
//! no code (comments and doc links aside) names a layer above its own through `crate::`.

use std::fs;
use std::path::{Path, PathBuf};

/// Keys that belong to one provider's wire format or another and to nothing else in the crate.
/// Keys shared with MCP's protocol JSON (`content`, `type`, `text`) or with the runtime's own
/// records (`tool_call_id`, which `ToolExecResult` serialises) are not listed.
const PROVIDER_KEYS: &[&str] = &[
    "tool_calls",
    "tool_use",
    "tool_result",
    "tool_use_id",
    "tool_choice",
    "parallel_tool_calls",
    "functionCall",
    "functionResponse",
    "functionDeclarations",
    "function_call",
    "function_call_output",
    "usage",
    "usageMetadata",
    "input_tokens",
    "output_tokens",
    "prompt_tokens",
    "completion_tokens",
    "cache_read_input_tokens",
    "finish_reason",
    "finishReason",
    "stop_reason",
    "candidates",
    "choices",
    "message_start",
    "message_delta",
    "content_block_delta",
    "input_json_delta",
    "stream_options",
    "include_usage",
    "max_tokens",
    "max_completion_tokens",
    "systemInstruction",
    "eval_count",
    "prompt_eval_count",
];

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<_> = fs::read_dir(dir)
        .unwrap_or_else(|error| panic!("cannot read {}: {error}", dir.display()))
        .map(|entry| entry.unwrap().path())
        .collect();
    entries.sort();
    for path in entries {
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|ext| ext == "rs") {
            out.push(path);
        }
    }
}

/// The code of a line: everything before a `//` comment that does not start inside a string.
/// Good enough for this crate's sources (no `//` inside char literals, no multi-line strings
/// holding provider keys outside `adapters/`).
fn code_of(line: &str) -> &str {
    let bytes = line.as_bytes();
    let mut in_string = false;
    let mut escaped = false;
    for (at, &byte) in bytes.iter().enumerate() {
        if in_string {
            match byte {
                _ if escaped => escaped = false,
                b'\\' => escaped = true,
                b'"' => in_string = false,
                _ => {}
            }
        } else if byte == b'"' {
            in_string = true;
        } else if byte == b'/' && bytes.get(at + 1) == Some(&b'/') {
            return &line[..at];
        }
    }
    line
}

/// The contents of the string literals of a line of code (escapes left as written).
fn string_literals(code: &str) -> Vec<&str> {
    let mut literals = Vec::new();
    let mut start = None;
    let mut escaped = false;
    for (at, byte) in code.bytes().enumerate() {
        match start {
            Some(_) if escaped => escaped = false,
            Some(_) if byte == b'\\' => escaped = true,
            Some(from) if byte == b'"' => {
                literals.push(&code[from..at]);
                start = None;
            }
            Some(_) => {}
            None if byte == b'"' => start = Some(at + 1),
            None => {}
        }
    }
    literals
}

/// Whether a string literal holds `/key` as a JSON-pointer segment (`"/usage/prompt_tokens"`).
fn pointer_holds(literal: &str, key: &str) -> bool {
    literal.split('/').skip(1).any(|segment| segment == key)
}

/// Every `(file, line, key)` outside `adapters/` whose code holds `"key"` (or its escaped
/// form `\"key\"`, as inside a string of JSON text) or a string literal with the segment
/// `/key` (a JSON pointer).
fn offences(src: &Path) -> Vec<String> {
    let adapters = src.join("adapters");
    let mut files = Vec::new();
    rust_files(src, &mut files);
    let mut found = Vec::new();
    for file in files.iter().filter(|file| !file.starts_with(&adapters)) {
        let text = fs::read_to_string(file).unwrap();
        for (number, line) in text.lines().enumerate() {
            let code = code_of(line);
            let literals = string_literals(code);
            for key in PROVIDER_KEYS {
                if code.contains(&format!("\"{key}\""))
                    || code.contains(&format!("\\\"{key}\\\""))
                    || literals.iter().any(|literal| pointer_holds(literal, key))
                {
                    let relative = file.strip_prefix(src).unwrap_or(file);
                    found.push(format!("{}:{}: `{key}`", relative.display(), number + 1));
                }
            }
        }
    }
    found
}

#[test]
fn provider_json_keys_appear_only_in_adapters() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tool-runtime/src");
    let found = offences(&src);
    assert!(
        found.is_empty(),
        "provider wire-format keys outside tool-runtime/src/adapters/ (move the JSON into an \
         adapter):\n{}",
        found.join("\n")
    );
}

#[test]
fn the_scan_sees_code_and_skips_comments() {
    assert_eq!(
        code_of(r#"let x = json!({"usage": 1}); // "usage""#),
        r#"let x = json!({"usage": 1}); "#
    );
    assert_eq!(code_of(r#"/// `"usage"` in a doc comment"#), "");
    assert_eq!(code_of(r#"let url = "http://host"; // note"#), r#"let url = "http://host"; "#);
    assert_eq!(code_of(r#"let s = "a \" // b";"#), r#"let s = "a \" // b";"#);
    assert_eq!(string_literals(r#"f("/a/b", "c \" d")"#), ["/a/b", r#"c \" d"#]);
    assert!(pointer_holds("/usage/prompt_tokens", "prompt_tokens"));
    assert!(!pointer_holds("/usageMetadata", "usage"));

    // A planted offence in a scratch tree is found with its file and line; the same key under
    // `adapters/` is not.
    let root = std::env::temp_dir().join(format!("layout-scan-{}", std::process::id()));
    let _ = fs::remove_dir_all(&root);
    fs::create_dir_all(root.join("agent")).unwrap();
    fs::create_dir_all(root.join("adapters")).unwrap();
    fs::write(root.join("agent/model.rs"), "fn f() {}\nlet v = json!({\"finish_reason\": 1});\n")
        .unwrap();
    fs::write(root.join("adapters/openai.rs"), "let v = json!({\"finish_reason\": 1});\n").unwrap();
    fs::write(root.join("agent/sniff.rs"), "const KEY: &[u8] = b\"\\\"usage\\\"\";\n").unwrap();
    fs::write(
        root.join("agent/pointer.rs"),
        "let n = v.pointer(\"/usage/prompt_tokens\");\nlet m = v.pointer(\"/usageMetadata\");\n",
    )
    .unwrap();
    let found = offences(&root);
    fs::remove_dir_all(&root).unwrap();
    let agent = Path::new("agent");
    assert_eq!(
        found,
        [
            format!("{}:2: `finish_reason`", agent.join("model.rs").display()),
            format!("{}:1: `usage`", agent.join("pointer.rs").display()),
            format!("{}:1: `prompt_tokens`", agent.join("pointer.rs").display()),
            format!("{}:2: `usageMetadata`", agent.join("pointer.rs").display()),
            format!("{}:1: `usage`", agent.join("sniff.rs").display()),
        ]
    );
}

/// The layers of `tool-runtime/src`, lowest first (DESIGN.md §3): a module may import from its
/// own layer and the layers before it, never from one after it, so no two layers import each
/// other. Each entry is a top-level module of the crate.
const LAYERS: &[&str] = &[
    "schema", "digest", "spec", "gbnf", "content", "policy", "runtime", "catalog", "runner",
    "adapters", "agent", "mcp",
];

/// Files of `src` that are no layer: the crate root and the macro support it exports.
const ROOTS: &[&str] = &["lib.rs"];

/// The top-level module a file of `src` belongs to (`runner/limits/resize.rs` -> `runner`).
fn layer_of(src: &Path, file: &Path) -> String {
    let relative = file.strip_prefix(src).unwrap_or(file);
    let first = relative.components().next().unwrap().as_os_str().to_string_lossy().into_owned();
    first.strip_suffix(".rs").map_or(first.clone(), str::to_owned)
}

/// The top-level modules a line of code names through `crate::<module>`. A grouped
/// `crate::{..}` import hides which layers it reaches, so it is reported as the layer `{`.
fn crate_paths(code: &str) -> Vec<String> {
    let mut found = Vec::new();
    let mut rest = code;
    while let Some(at) = rest.find("crate::") {
        let before = rest[..at].chars().next_back();
        rest = &rest[at + "crate::".len()..];
        if before.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == '$') {
            continue; // `$crate::` (a macro's) or another name ending in `crate`
        }
        if rest.starts_with('{') {
            found.push("{".to_owned());
            continue;
        }
        let name: String = rest.chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect();
        found.push(name);
    }
    found
}

/// Every `(file:line: layer -> layer)` of `src` that imports from a later layer, or from a
/// top-level module that is in no layer.
fn layer_offences(src: &Path) -> Vec<String> {
    let mut files = Vec::new();
    rust_files(src, &mut files);
    let rank = |name: &str| LAYERS.iter().position(|layer| *layer == name);
    let mut found = Vec::new();
    for file in &files {
        let relative = file.strip_prefix(src).unwrap_or(file);
        if ROOTS.iter().any(|root| relative == Path::new(root)) {
            continue;
        }
        let layer = layer_of(src, file);
        let Some(own) = rank(&layer) else {
            found.push(format!(
                "{}: `{layer}` is in no layer (add it to LAYERS)",
                relative.display()
            ));
            continue;
        };
        let text = fs::read_to_string(file).unwrap();
        for (number, line) in text.lines().enumerate() {
            for target in crate_paths(code_of(line)) {
                let higher = match rank(&target) {
                    Some(other) => other > own,
                    // `crate::{..}` and paths to the root's own items (`crate::ToolSchema`).
                    None => target == "{",
                };
                if higher {
                    found.push(format!(
                        "{}:{}: {layer} -> {target}",
                        relative.display(),
                        number + 1
                    ));
                }
            }
        }
    }
    found
}

#[test]
fn no_layer_imports_from_a_layer_above_it() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tool-runtime/src");
    let found = layer_offences(&src);
    assert!(
        found.is_empty(),
        "imports against the layer order {LAYERS:?} (DESIGN.md §3; a grouped `crate::{{..}}` \
         import counts as one, name each module):\n{}",
        found.join("\n")
    );
    // Every layer exists, so a renamed module cannot leave its rule behind.
    for layer in LAYERS {
        assert!(
            src.join(format!("{layer}.rs")).exists() || src.join(layer).join("mod.rs").exists(),
            "layer `{layer}` has no module"
        );
    }
}

#[test]
fn the_layer_scan_finds_an_upward_import_and_an_unknown_module() {
    assert_eq!(crate_paths("use crate::runtime::ToolError; // crate::agent"), ["runtime", "agent"]);
    assert_eq!(crate_paths(code_of("use crate::runtime::ToolError; // crate::agent")), ["runtime"]);
    assert_eq!(crate_paths("use crate::{policy::X, agent::Y};"), ["{"]);
    assert_eq!(crate_paths("$crate::schema::Schema"), Vec::<String>::new());

    let root = std::env::temp_dir().join(format!("layer-scan-{}", std::process::id()));
    let _ = fs::remove_dir_all(&root);
    fs::create_dir_all(root.join("runner")).unwrap();
    fs::write(root.join("policy.rs"), "use crate::runtime::ToolInvocationContext;\n").unwrap();
    fs::write(root.join("runner/steps.rs"), "use crate::policy::ToolPolicy;\n").unwrap();
    fs::write(root.join("spec.rs"), "/// [`X`](crate::agent::X)\nfn f() {}\n").unwrap();
    fs::write(root.join("extra.rs"), "fn g() {}\n").unwrap();
    let found = layer_offences(&root);
    fs::remove_dir_all(&root).unwrap();
    assert_eq!(
        found,
        ["extra.rs: `extra` is in no layer (add it to LAYERS)", "policy.rs:1: policy -> runtime"]
    );
}
