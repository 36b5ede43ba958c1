//! The grammars of `gbnf` checked by two GBNF implementations no one here wrote
//! (`tests/gbnf_oracle.py`): PyPI's `gbnf`, a port of llama.cpp's own grammar parser and
//! matcher, and `llguidance`, the grammar engine llama.cpp can be built with. Each must parse
//! every grammar, match every valid call (generated from the schema, written compact and
//! pretty) and refuse every wrong one (an unknown or missing argument, another tool, trailing
//! text). Both are installed, pinned, into a venv under the target directory on first use.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use crate::gbnf_support::{call, specs, writings, wrong_calls};
use crate::schema_values::{Integers, valid};
use proptest::strategy::{Strategy, ValueTree};
use proptest::test_runner::TestRunner;
use serde_json::{Value, json};
use tool_runtime::gbnf::Grammar;
use tool_runtime::spec::ToolSpec;
use tool_tests::python::{self, PinnedVenv};

/// The oracle packages the test pins (pure Python, and one abi3 wheel: seconds to install).
const ORACLES: &[&str] = &["gbnf==0.0.32", "llguidance==1.9.1"];

/// A venv under the target directory with the oracles installed, created on first use and
/// reused after. Panics with what went wrong when Python or PyPI is out of reach: this test
/// must not pass without having asked the real implementations.
fn python_with_oracles() -> PathBuf {
    PinnedVenv {
        name: "gbnf",
        pins: ORACLES,
        // `gbnf` declares a file watcher for its own development as a dependency; neither
        // package needs anything else at run time.
        pip_args: &["--no-deps"],
        build_env: &[],
        needed_by: "the GBNF oracle test",
        what: "the oracles",
    }
    .python(Path::new(env!("CARGO_TARGET_TMPDIR")))
}

/// `count` valid arguments for `spec`, the same on every run.
fn samples(spec: &ToolSpec, count: usize) -> Vec<Value> {
    let schema = spec.input_schema().as_static().unwrap();
    let strategy = valid(schema, Integers::Digits);
    let mut runner = TestRunner::deterministic();
    (0..count).map(|_| strategy.new_tree(&mut runner).unwrap().current()).collect()
}

#[test]
fn independent_gbnf_implementations_agree() {
    let mut cases = Vec::new();
    let mut grammars = Vec::new();
    for spec in specs() {
        let schema = spec.input_schema().as_static().unwrap();
        let grammar = Grammar::for_tool(spec).unwrap();
        let (mut accept, mut reject) = (Vec::new(), Vec::new());
        for arguments in samples(spec, 12) {
            accept.extend(writings(&call(spec.name(), &arguments)));
            reject.extend(wrong_calls(spec.name(), &arguments, schema));
        }
        cases.push(json!({"grammar": grammar.as_str(), "accept": accept, "reject": reject}));
        grammars.push(spec.name().to_owned());
    }
    // The set of all the tools: one valid call of each.
    let all = Grammar::for_tools(&specs()).unwrap();
    let accept: Vec<String> =
        specs().iter().map(|spec| call(spec.name(), &samples(spec, 1)[0]).to_string()).collect();
    cases.push(json!({"grammar": all.as_str(), "accept": accept, "reject": ["{\"name\":\"nope\",\"arguments\":{}}"]}));
    grammars.push("all tools".to_owned());

    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("gbnf_oracle.py");
    let mut child = Command::new(python_with_oracles())
        .arg(&script)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the oracle script starts");
    child.stdin.take().unwrap().write_all(json!({"cases": cases}).to_string().as_bytes()).unwrap();
    let output = child.wait_with_output().unwrap();
    assert!(
        output.status.success(),
        "the oracle script failed:\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let verdicts: Value = serde_json::from_slice(&output.stdout).unwrap();
    let failures = disagreements(&cases, &grammars, &verdicts);
    assert!(failures.is_empty(), "{} disagreements:\n{}", failures.len(), failures.join("\n"));
}

/// What the oracles' `verdicts` say against the `cases` (named by `grammars`): a grammar that
/// does not parse, a text judged the wrong way, and a verdict missing or extra (an oracle that
/// answers for fewer cases or texts than it was given has not checked the rest).
fn disagreements(cases: &[Value], grammars: &[String], verdicts: &Value) -> Vec<String> {
    let mut failures = Vec::new();
    for oracle in ["gbnf", "llguidance"] {
        let Some(verdicts) = verdicts[oracle].as_array() else {
            failures.push(format!("{oracle}: no verdicts"));
            continue;
        };
        if verdicts.len() != cases.len() {
            failures.push(format!(
                "{oracle}: {} verdicts for {} grammars",
                verdicts.len(),
                cases.len()
            ));
        }
        for ((case, verdict), name) in cases.iter().zip(verdicts).zip(grammars) {
            if let Some(error) = verdict["grammar_error"].as_str() {
                failures.push(format!("{oracle}: the grammar of {name} does not parse: {error}"));
                continue;
            }
            for (kind, expected) in [("accept", true), ("reject", false)] {
                let texts = case[kind].as_array().map_or(&[][..], Vec::as_slice);
                let got = verdict[kind].as_array().map_or(&[][..], Vec::as_slice);
                if got.len() != texts.len() {
                    failures.push(format!(
                        "{oracle}: {name}: {} {kind} verdicts for {} texts",
                        got.len(),
                        texts.len()
                    ));
                }
                for (text, got) in texts.iter().zip(got) {
                    if got.as_bool() != Some(expected) {
                        failures.push(format!("{oracle}: {name} should {kind} {text}"));
                    }
                }
            }
        }
    }
    failures
}

/// The comparison cannot shrink silently: an oracle that leaves out a grammar, or a text of a
/// grammar, is a disagreement, and so is one that answers for more than it was given.
#[test]
fn a_verdict_missing_or_extra_is_a_disagreement() {
    let cases = [json!({"grammar": "root ::= \"a\"", "accept": ["a"], "reject": ["b", "c"]})];
    let grammars = ["a".to_owned()];
    let agreed = json!({"grammar_error": null, "accept": [true], "reject": [false, false]});
    let both = |verdicts: Value| json!({"gbnf": verdicts.clone(), "llguidance": verdicts});
    assert!(disagreements(&cases, &grammars, &both(json!([agreed]))).is_empty());

    let no_grammar = disagreements(&cases, &grammars, &both(json!([])));
    assert_eq!(
        no_grammar,
        ["gbnf: 0 verdicts for 1 grammars", "llguidance: 0 verdicts for 1 grammars"]
    );
    let one_text_short = json!({"grammar_error": null, "accept": [true], "reject": [false]});
    let short = disagreements(&cases, &grammars, &both(json!([one_text_short])));
    assert_eq!(
        short,
        ["gbnf: a: 1 reject verdicts for 2 texts", "llguidance: a: 1 reject verdicts for 2 texts"]
    );
    let extra = disagreements(&cases, &grammars, &both(json!([agreed, agreed])));
    assert_eq!(extra.len(), 2, "{extra:?}");
    let missing = disagreements(&cases, &grammars, &json!({"gbnf": [agreed]}));
    assert_eq!(missing, ["llguidance: no verdicts"]);
}

/// The venvs of the oracle suites are made once however many tests ask at the same time: CI
/// saw two `pip install`s into one venv break each other.
#[test]
fn an_install_runs_once_however_many_ask_at_once() {
    use std::sync::atomic::{AtomicUsize, Ordering};

    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("install-once-test-{}", std::process::id()));
    let runs = AtomicUsize::new(0);
    std::thread::scope(|scope| {
        for _ in 0..4 {
            scope.spawn(|| {
                python::install_once(&dir, || {
                    runs.fetch_add(1, Ordering::SeqCst);
                    std::fs::create_dir_all(&dir).unwrap();
                    std::thread::sleep(std::time::Duration::from_millis(50));
                });
            });
        }
    });
    assert_eq!(runs.load(Ordering::SeqCst), 1);
    assert!(dir.join(".installed").exists());
    std::fs::remove_dir_all(&dir).unwrap();
    std::fs::remove_file(
        dir.with_file_name(format!("{}.lock", dir.file_name().unwrap().to_str().unwrap())),
    )
    .unwrap();
}
