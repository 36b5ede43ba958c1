//! The suites that run again with features outside the workspace build, in one small binary
//! (`.ci/run`'s last step: `cargo test -p tool-tests --features image,embed-local --test
//! features`), so that step builds these modules alone rather than the whole `runner` and
//! `repo` binaries again:
//!
//! - `image`: result limits with oversize images resized instead of refused, and the fuzz
//!   corpus replayed through the resize (`result_limits`, `fuzz_corpus`, which the `runner` and
//!   `repo` binaries also run without the feature);
//! - `embed-local`: selection with a real sentence model (`selection_local`, over the labelled
//!   set of `selection` and the scratch folders of `selection_hybrid`).

// The suites' own files, where the `runner` and `repo` binaries keep them.
#[path = "../repo"]
mod repo {
    mod fuzz_corpus;
}

#[path = "../runner"]
mod runner {
    mod result_limits;
    mod selection;
    mod selection_hybrid;
    mod selection_local;
}
