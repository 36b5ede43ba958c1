//! Replays the committed fuzz corpus (`fuzz/corpus/<target>/`) through the same checks the
//! libFuzzer targets run (`fuzz-checks`), on the stable toolchain: every input a fuzzing run
//! kept, and every crash it found, stays a regression test in CI.

use std::path::Path;

#[test]
fn every_target_has_a_corpus_and_every_input_passes_its_checks() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../fuzz/corpus");
    for (target, check) in fuzz_checks::TARGETS {
        let dir = root.join(target);
        let mut files: Vec<_> = std::fs::read_dir(&dir)
            .unwrap_or_else(|error| panic!("{}: {error}", dir.display()))
            .map(|entry| entry.expect("a corpus entry").path())
            .collect();
        files.sort();
        assert!(!files.is_empty(), "no corpus for `{target}`");
        for file in files {
            let data = std::fs::read(&file).expect("a corpus file");
            let outcome = std::panic::catch_unwind(|| check(&data));
            assert!(outcome.is_ok(), "`{target}` fails on {}", file.display());
        }
    }
}

#[test]
fn every_fuzz_target_is_listed() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../fuzz/fuzz_targets");
    let mut on_disk: Vec<String> = std::fs::read_dir(&dir)
        .expect("fuzz/fuzz_targets")
        .map(|entry| {
            let path = entry.expect("an entry").path();
            path.file_stem().expect("a name").to_string_lossy().into_owned()
        })
        .collect();
    on_disk.sort();
    let mut listed: Vec<String> =
        fuzz_checks::TARGETS.iter().map(|(name, _)| (*name).to_owned()).collect();
    listed.sort();
    assert_eq!(on_disk, listed);
}
