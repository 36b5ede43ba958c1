//! The layout rule (DESIGN.md 3a): provider wire formats live only in
//! `tool-runtime/src/adapters/`. This walks the rest of `tool-runtime/src` and fails, naming
//! file and line, where code (not comments) holds a string literal with a provider-specific
//! JSON key, as a key or as a segment of a JSON pointer (`"/usage/prompt_tokens"`).
//!
//! The layer order (DESIGN.md 3): each top-level module of `tool-runtime/src` is a layer, and
//! no code (comments and doc links aside) names a layer above its own through `crate::`.
//!
//! No import circle: no file reaches itself through the modules it imports from, within a
//! layer as across them.

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

/// Keys of the runtime's own vocabulary that happen to equal a provider's: the conversation
/// model's name for a turn that ended asking for tools (`FinishReason::ToolCalls`) and the
/// key its record of a decoded turn lists the calls under.
const OWN_KEYS: &[(&str, &str)] = &[("conversation/turn.rs", "tool_calls")];

/// Folders never walked: build output, fetched packages, fuzz inputs, VCS data.
const SKIPPED: &[&str] = &["target", "node_modules", ".git", "corpus", "artifacts"];

/// The files under `dir` whose extension is one of `extensions`, sorted, skipping the
/// folders in `SKIPPED`.
pub(super) fn source_files(dir: &Path, extensions: &[&str], out: &mut Vec<PathBuf>) {
    let mut entries: Vec<_> = fs::read_dir(dir)
        .unwrap_or_else(|error| panic!("cannot read {}: {error}", dir.display()))
        .map(|entry| entry.unwrap().path())
        .collect();
    entries.sort();
    for path in entries {
        if path.is_dir() {
            let name = path.file_name().map(|name| name.to_string_lossy().into_owned());
            if !name.is_some_and(|name| SKIPPED.contains(&name.as_str())) {
                source_files(&path, extensions, out);
            }
        } else if path.extension().is_some_and(|ext| extensions.iter().any(|wanted| ext == *wanted))
        {
            out.push(path);
        }
    }
}

/// The Rust files under `dir`, sorted.
fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    source_files(dir, &["rs"], out);
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
        let relative = file.strip_prefix(src).unwrap_or(file);
        let own = |key: &str| {
            OWN_KEYS.iter().any(|(path, own)| relative == Path::new(path) && *own == key)
        };
        for (number, line) in text.lines().enumerate() {
            let code = code_of(line);
            let literals = string_literals(code);
            for key in PROVIDER_KEYS.iter().filter(|key| !own(key)) {
                if code.contains(&format!("\"{key}\""))
                    || code.contains(&format!("\\\"{key}\\\""))
                    || literals.iter().any(|literal| pointer_holds(literal, key))
                {
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
    "schema",
    "digest",
    "spec",
    "gbnf",
    "content",
    "policy",
    "runtime",
    "catalog",
    "runner",
    "conversation",
    "adapters",
    "store",
    "agent",
    "mcp",
    "testing",
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

/// The module path of a file of `src`: `adapters/sse.rs` -> `adapters::sse`,
/// `agent/mod.rs` -> `agent`, `lib.rs` -> `` (the crate root).
fn module_of(src: &Path, file: &Path) -> Vec<String> {
    let relative = file.strip_prefix(src).unwrap_or(file).with_extension("");
    let mut path: Vec<String> =
        relative.components().map(|part| part.as_os_str().to_string_lossy().into_owned()).collect();
    if path.last().is_some_and(|last| last == "mod" || last == "lib") {
        path.pop();
    }
    path
}

/// The code of a file that the circle check reads: every line before its test module (tests
/// may import what they like), comments left out.
fn code_before_tests(text: &str) -> Vec<&str> {
    text.lines().take_while(|line| *line != "#[cfg(test)]").map(code_of).collect()
}

/// Every path a file names through `crate::` or `super::`, each as the segments after the
/// root it starts from: `use super::{a::B, c};` gives `super::a::B` and `super::c`. Each
/// result is `(starts at the crate root, how many `super`s, the segments)`.
fn named_paths(code: &str) -> Vec<(bool, usize, Vec<String>)> {
    let mut found = Vec::new();
    let bytes = code.as_bytes();
    let is_word = |byte: u8| byte.is_ascii_alphanumeric() || byte == b'_';
    let mut at = 0;
    while at < code.len() {
        let rest = &code[at..];
        let start = if rest.starts_with("crate::") {
            Some(true)
        } else if rest.starts_with("super::") {
            Some(false)
        } else {
            None
        };
        let before = at.checked_sub(1).map(|before| bytes[before]);
        let Some(from_root) = start.filter(|_| !before.is_some_and(|b| is_word(b) || b == b'$'))
        else {
            at += rest.chars().next().map_or(1, char::len_utf8);
            continue;
        };
        // The whole path, through nested groups: `super::{a::B, c}`.
        let mut end = at;
        let mut depth = 0usize;
        for (offset, c) in rest.char_indices() {
            match c {
                '{' => depth += 1,
                '}' if depth == 0 => break,
                '}' => depth -= 1,
                ',' | ';' | ' ' | '\n' if depth == 0 => break,
                c if depth == 0 && !(c.is_alphanumeric() || c == '_' || c == ':') => break,
                _ => {}
            }
            end = at + offset + c.len_utf8();
        }
        for path in expand(&code[at..end]) {
            let mut segments: Vec<String> = path.split("::").map(str::to_owned).collect();
            segments.remove(0); // `crate` or the first `super`
            let mut supers = usize::from(!from_root);
            while segments.first().is_some_and(|segment| segment == "super") {
                segments.remove(0);
                supers += 1;
            }
            segments.retain(|segment| !segment.is_empty() && segment != "self");
            found.push((from_root, supers, segments));
        }
        at = end.max(at + 1);
    }
    found
}

/// `a::{b::C, d}` -> `a::b::C`, `a::d` (nested groups too).
fn expand(path: &str) -> Vec<String> {
    let Some(open) = path.find('{') else {
        return vec![path.to_owned()];
    };
    let prefix = &path[..open];
    let inner = path[open + 1..].strip_suffix('}').unwrap_or(&path[open + 1..]);
    let mut items = Vec::new();
    let mut depth = 0usize;
    let mut from = 0;
    for (at, c) in inner.char_indices() {
        match c {
            '{' => depth += 1,
            '}' => depth = depth.saturating_sub(1),
            ',' if depth == 0 => {
                items.push(&inner[from..at]);
                from = at + 1;
            }
            _ => {}
        }
    }
    items.push(&inner[from..]);
    items
        .into_iter()
        .map(str::trim)
        .filter(|item| !item.is_empty())
        .flat_map(|item| expand(&format!("{prefix}{item}")))
        .collect()
}

/// The import circles among the files of `src`: each a sorted list of the modules in it.
///
/// A file depends on the module a path of its code names (the longest prefix that is a file),
/// or, where that is a parent re-exporting the item from a child (`pub use child::Item;`), on
/// that child. A file's own parent and children are left out: a `mod.rs` that declares and
/// re-exports its children is their index, not a dependency.
fn import_circles(src: &Path) -> Vec<Vec<String>> {
    use std::collections::{BTreeMap, BTreeSet};

    let mut files = Vec::new();
    rust_files(src, &mut files);
    let modules: BTreeMap<Vec<String>, String> = files
        .iter()
        .map(|file| (module_of(src, file), fs::read_to_string(file).unwrap()))
        .collect();
    // Which child of each module an item it re-exports comes from.
    let mut reexports: BTreeMap<(Vec<String>, String), Vec<String>> = BTreeMap::new();
    for (module, text) in &modules {
        let code = code_before_tests(text).join("\n");
        for statement in code.split(';') {
            let statement = statement.trim();
            let Some(path) = ["pub use ", "pub(crate) use "]
                .iter()
                .find_map(|prefix| statement.strip_prefix(prefix))
            else {
                continue;
            };
            for item in expand(&path.split_whitespace().collect::<String>()) {
                let mut segments: Vec<&str> = item.split("::").collect();
                let name = segments.pop().unwrap_or_default();
                let name = name.rsplit("as").next().unwrap_or(name);
                let mut child = module.clone();
                child.extend(segments.iter().map(|s| (*s).to_owned()));
                if child.len() > module.len() && modules.contains_key(&child) {
                    reexports.insert((module.clone(), name.to_owned()), child);
                }
            }
        }
    }
    let mut edges: BTreeMap<Vec<String>, BTreeSet<Vec<String>>> = BTreeMap::new();
    for (module, text) in &modules {
        let mut targets = BTreeSet::new();
        for line in code_before_tests(text) {
            for (from_root, supers, segments) in named_paths(line) {
                let mut base: Vec<String> = if from_root { Vec::new() } else { module.clone() };
                if base.len() < supers {
                    continue;
                }
                base.truncate(base.len() - supers);
                let mut target = None;
                for take in (0..=segments.len()).rev() {
                    let mut candidate = base.clone();
                    candidate.extend(segments[..take].iter().cloned());
                    if modules.contains_key(&candidate) {
                        let next = segments.get(take).cloned().unwrap_or_default();
                        target = Some(
                            reexports.get(&(candidate.clone(), next)).cloned().unwrap_or(candidate),
                        );
                        break;
                    }
                }
                let Some(target) = target else { continue };
                let related = target.starts_with(module) || module.starts_with(&target);
                if !related {
                    targets.insert(target);
                }
            }
        }
        edges.insert(module.clone(), targets);
    }
    strongly_connected(&edges)
        .into_iter()
        .filter(|group| group.len() > 1)
        .map(|group| group.into_iter().map(|module| module.join("::")).collect())
        .collect()
}

/// The strongly connected groups of a graph (Tarjan's algorithm), each sorted.
fn strongly_connected(
    edges: &std::collections::BTreeMap<Vec<String>, std::collections::BTreeSet<Vec<String>>>,
) -> Vec<Vec<Vec<String>>> {
    use std::collections::BTreeMap;

    struct Walk<'a> {
        edges: &'a BTreeMap<Vec<String>, std::collections::BTreeSet<Vec<String>>>,
        index: BTreeMap<&'a Vec<String>, usize>,
        low: BTreeMap<&'a Vec<String>, usize>,
        stack: Vec<&'a Vec<String>>,
        groups: Vec<Vec<Vec<String>>>,
    }
    impl<'a> Walk<'a> {
        fn visit(&mut self, node: &'a Vec<String>) {
            let number = self.index.len();
            self.index.insert(node, number);
            self.low.insert(node, number);
            self.stack.push(node);
            for next in self.edges.get(node).into_iter().flatten() {
                if !self.index.contains_key(next) {
                    self.visit(next);
                    let low = self.low[node].min(self.low[next]);
                    self.low.insert(node, low);
                } else if self.stack.contains(&next) {
                    let low = self.low[node].min(self.index[next]);
                    self.low.insert(node, low);
                }
            }
            if self.low[node] == self.index[node] {
                let mut group = Vec::new();
                while let Some(member) = self.stack.pop() {
                    group.push(member.clone());
                    if member == node {
                        break;
                    }
                }
                group.sort();
                self.groups.push(group);
            }
        }
    }
    let mut walk = Walk {
        edges,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        groups: Vec::new(),
    };
    for node in edges.keys() {
        if !walk.index.contains_key(node) {
            walk.visit(node);
        }
    }
    walk.groups
}

#[test]
fn no_file_imports_itself_through_others() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tool-runtime/src");
    let circles = import_circles(&src);
    assert!(
        circles.is_empty(),
        "import circles in tool-runtime/src (move what both sides need into a file of its own, \
         or the impl to the side that uses it):\n{circles:#?}"
    );
}

#[test]
fn the_circle_scan_follows_groups_reexports_and_parents() {
    assert_eq!(expand("a::{b::{C, D}, e}"), ["a::b::C", "a::b::D", "a::e"]);
    assert_eq!(
        named_paths("use super::{turn::Decoded, problem}; crate::x::y(super::super::z);"),
        [
            (false, 1, vec!["turn".to_owned(), "Decoded".to_owned()]),
            (false, 1, vec!["problem".to_owned()]),
            (true, 0, vec!["x".to_owned(), "y".to_owned()]),
            (false, 2, vec!["z".to_owned()]),
        ]
    );

    // `a` and `b` reach each other, `b` through what `m` re-exports from `a`; `c` uses its
    // parent's own item and `d` imports only in its tests: neither makes a circle.
    let root = std::env::temp_dir().join(format!("circle-scan-{}", std::process::id()));
    let _ = fs::remove_dir_all(&root);
    fs::create_dir_all(root.join("m")).unwrap();
    fs::write(root.join("lib.rs"), "mod m;\n").unwrap();
    fs::write(root.join("m/mod.rs"), "mod a;\nmod b;\npub use a::{Alpha, other};\nstruct Own;\n")
        .unwrap();
    fs::write(root.join("m/a.rs"), "use super::b::Beta;\npub struct Alpha;\n").unwrap();
    fs::write(root.join("m/b.rs"), "// super::a\npub struct Beta(super::Alpha);\n").unwrap();
    fs::write(root.join("m/c.rs"), "use super::Own;\nuse crate::m::a::Alpha;\n").unwrap();
    fs::write(root.join("m/d.rs"), "#[cfg(test)]\nmod tests {\n    use super::super::c::X;\n}\n")
        .unwrap();
    fs::write(root.join("m/e.rs"), "pub struct E;\n").unwrap();
    let circles = import_circles(&root);
    fs::remove_dir_all(&root).unwrap();
    assert_eq!(circles, [vec!["m::a".to_owned(), "m::b".to_owned()]]);
}
