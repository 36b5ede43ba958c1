//! The MCP layer: serving a catalog (`serve`) to clients that abuse it too (`serve_limits`),
//! what a served result looks like (`content`),
//! elicitation and sampling (`interact`), importing MCP tools (`import`) from hostile servers
//! too (`import_hostile`), and our server checked by clients no one here wrote: the official
//! conformance suite (`conformance`) and the Python SDK (`python_client`).
//!
//! One test binary, a module per behaviour; `support` builds the example binaries and installs
//! the conformance suite and the Python SDK. (The test that a refused tool is logged once is in
//! the `telemetry` binary: it installs a global `tracing` subscriber.)

mod conformance;
mod content;
mod full_schemas;
mod headers;
mod import;
mod import_hostile;
mod import_rounds;
mod inputs;
mod interact;
mod prompts;
mod python_client;
mod replicas;
mod rounds;
mod serve;
mod serve_limits;
mod support;
mod tasks;
