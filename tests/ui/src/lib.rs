//! Test-only crate: the compile-error suite for `#[tool]` and `#[derive(ToolSchema)]` lives in
//! `tests/ui.rs`, its cases in `cases/`.
