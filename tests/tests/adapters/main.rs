//! The adapters layer: provider wire formats. Golden requests and decoded responses per
//! provider (`golden`, `requests`, `results`, `controls`, `callers`, `async_tools`), llama.cpp's server under a grammar
//! (`grammar_chat`), encoding and raising arguments
//! (`lowering`), call ids in a provider's own form (`call_ids`), scalar enums in run-time schemas (`scalar_enums`), request budgets (`budgets`), real-world stream quirks (`streams`), hostile and
//! cut streams (`hostile_streams`), decoder properties (`props`), the stored conversation format
//! (`stored_messages`), the `wire` command (`cli`), and a `ChatModel` written against the
//! adapters from their docs alone (`chat_model_contract`).
//!
//! One test binary, a module per behaviour; `support` reads the fixtures under
//! `tests/fixtures/` and decodes them.

mod async_tools;
mod budgets;
mod call_ids;
mod callers;
mod chat_model_contract;
mod cli;
mod controls;
mod golden;
mod grammar_chat;
mod hostile_streams;
mod lowering;
mod props;
mod requests;
mod results;
mod scalar_enums;
mod stored_messages;
mod streams;
mod support;
mod tool_search;
