//! MCP logging (`logging/setLevel`, `notifications/message`) in rmcp's types, and the
//! capabilities the server declares.
//!
//! rmcp marks these types deprecated (SEP-2577 plans to drop logging from the protocol), but
//! the protocol versions clients speak today, and the official conformance suite, still use
//! them; this module is the one place that names them.
#![allow(deprecated)]

use rmcp::model::{
    LoggingLevel, LoggingMessageNotificationParam, RequestMetaObject, ServerCapabilities,
};
use rmcp::service::{Peer, RoleServer};
use serde_json::Value;

use crate::runtime::{LogLevel, LogMessage};

/// What the server offers: tools, logging and tasks (when it serves some); prompts and
/// resources too, of which it serves
/// none (their lists are empty), so that clients that list everything get an answer.
pub(super) fn capabilities(tasks: bool) -> ServerCapabilities {
    let builder = ServerCapabilities::builder()
        .enable_tools()
        .enable_logging()
        .enable_prompts()
        .enable_resources();
    if tasks { builder.enable_tasks().build() } else { builder.build() }
}

/// Sends `message` to the client; a client that went away cannot be told.
pub(super) async fn notify(peer: &Peer<RoleServer>, message: LogMessage) {
    let level = match message.level {
        LogLevel::Debug => LoggingLevel::Debug,
        LogLevel::Info => LoggingLevel::Info,
        LogLevel::Notice => LoggingLevel::Notice,
        LogLevel::Warning => LoggingLevel::Warning,
        LogLevel::Error => LoggingLevel::Error,
        LogLevel::Critical => LoggingLevel::Critical,
        LogLevel::Alert => LoggingLevel::Alert,
        LogLevel::Emergency => LoggingLevel::Emergency,
    };
    let param = LoggingMessageNotificationParam::new(level, Value::String(message.message));
    let _ = peer.notify_logging_message(param).await;
}

/// The level a client asked for, as ours.
pub(super) fn level(level: LoggingLevel) -> LogLevel {
    match level {
        LoggingLevel::Debug => LogLevel::Debug,
        LoggingLevel::Info => LogLevel::Info,
        LoggingLevel::Notice => LogLevel::Notice,
        LoggingLevel::Warning => LogLevel::Warning,
        LoggingLevel::Error => LogLevel::Error,
        LoggingLevel::Critical => LogLevel::Critical,
        LoggingLevel::Alert => LogLevel::Alert,
        LoggingLevel::Emergency => LogLevel::Emergency,
    }
}

/// The level a request asks for in its `_meta` (`io.modelcontextprotocol/logLevel`, how
/// clients of the newest protocol versions opt in to log messages call by call), if any.
pub(super) fn requested(meta: &RequestMetaObject) -> Option<LogLevel> {
    meta.log_level().map(level)
}
