//! Test-only crate: the suites live in `tests/`, one test binary per layer (`schema`,
//! `adapters`, `runner`, `agent`, `mcp`, `telemetry`, `repo`, `load`), a module per behaviour.
//! This library holds what more than one binary shares. The README's code is compiled and run
//! here.
#![doc = include_str!("../../README.md")]

pub mod events;
pub mod fixtures;
pub mod models;
pub mod python;
pub mod stores;
