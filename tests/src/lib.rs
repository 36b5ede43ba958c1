//! Test-only crate: the suites live in `tests/`. The README's code is compiled and run here.
#![doc = include_str!("../../README.md")]
