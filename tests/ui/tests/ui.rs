//! Compile-error tests for `#[tool]` and `#[derive(ToolSchema)]`: one mistake per file in
//! `cases/<topic>/`, each with the `.stderr` a user sees, plus the programs in `cases/pass/` that must
//! build and run.
//!
//! Regenerate the `.stderr` files with `TRYBUILD=overwrite cargo test -p tool-ui-tests --test ui`
//! and read every changed one before committing it.

use std::path::Path;

#[test]
fn ui() {
    let cases = trybuild::TestCases::new();
    // Every folder but `pass/` is a topic of compile errors; all cases build in one project.
    let mut topics: Vec<String> = std::fs::read_dir(Path::new("cases"))
        .expect("the `cases` folder beside this crate's manifest")
        .filter_map(Result::ok)
        .filter(|entry| entry.path().is_dir() && entry.file_name() != "pass")
        .map(|entry| entry.file_name().to_string_lossy().into_owned())
        .collect();
    topics.sort();
    for topic in &topics {
        cases.compile_fail(format!("cases/{topic}/*.rs"));
    }
    cases.compile_fail("cases/*.rs");
    cases.pass("cases/pass/*.rs");
}
