//! Telemetry: what the runner tells `tracing`. A secret handed to the broker never reaches a
//! span or event, and spans carry the GenAI attributes, escaped (`spans`); the `execute_tool`
//! span exported through OpenTelemetry (`otel`); a refused MCP tool logged once, not on every
//! refresh (`mcp_refusal_log`).
//!
//! A binary of its own because these tests install `tracing` subscribers, and `tracing` caches
//! each callsite's interest for the whole process. A test elsewhere that reaches a callsite
//! first, on a thread with no subscriber, while one of these tests installs its own, can leave
//! the callsite cached as uninteresting and the capture without its spans. Here every test
//! installs its subscriber before running the code whose events it checks, so every callsite is
//! registered while an interested subscriber exists. `mcp_refusal_log` sets the global default
//! subscriber; it counts only the importer's refusal warnings, which no other test here emits,
//! and the others capture with a thread-local subscriber, which takes precedence on their
//! threads.

mod mcp_refusal_log;
mod otel;
mod spans;
