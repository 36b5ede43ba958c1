//! The agent layer: the tool loop over a `ChatModel`. The loop's rules (`agent_loop`), names a model calls a tool by (`aliases`), where calls may come from (`callers`), tools the model does not wait for (`async_tools`), deferred
//! decisions and resumable runs (`deferred`), call ids unique within a run (`call_ids`), a
//! panicking hook in a batch (`hook_panics`), the HTTP model clients against a loopback server
//! (`http_models`), their body cap and credentials (`http_limits`), redirects never followed
//! (`http_redirects`) and errors inside a stream (`http_stream_errors`), all served by
//! `loopback`; a grammar-constrained local model on llama.cpp's own server (`llama_server`); the before-call hooks that edited arguments and the calls a call decided on
//! resume makes pass (`resume_guards`); and the README's quickstart and example application
//! (`quickstart`, `example_app`); the provider's payload kept in records and never shown (`raw_calls`), the run stores' contract (`store`) and an agent on a store
//! across processes (`durable`).
//!
//! One test binary, a module per behaviour.

mod agent_loop;
mod aliases;
mod async_tools;
mod call_ids;
mod callers;
mod config;
mod deferred;
mod durable;
mod example_app;
mod hook_panics;
mod http_limits;
mod http_models;
mod http_redirects;
mod http_stream_errors;
mod llama_server;
mod loopback;
mod quickstart;
mod raw_calls;
mod resume_guards;
mod store;
mod tool_search;
