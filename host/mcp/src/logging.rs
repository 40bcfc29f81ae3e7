//! # Tools' log records, to MCP clients
//!
//! A client that sets a level with `logging/setLevel` gets the log records
//! of its calls' tools (a plugin's `host.log`, within its caps) at or above
//! that level as `notifications/message`, sent before the call's result
//! (see `server`). MCP's 2026-07-28 revision deprecates logging (SEP-2577)
//! and rmcp marks its types so; the revisions clients negotiate today have
//! it, so it is served, here, in one place.
#![allow(
    deprecated,
    reason = "MCP logging is deprecated from 2026-07-28 (SEP-2577), served for the revisions before it"
)]

use rmcp::RoleServer;
use rmcp::model::{LoggingLevel, LoggingMessageNotificationParam};
use serde_json::Value;
use toolhost_core::logging::{LogLevel, LogRecord};

/// Sends `record` to the client of `peer`.
pub(crate) async fn send(
    peer: &rmcp::Peer<RoleServer>,
    record: LogRecord,
) -> Result<(), rmcp::service::ServiceError> {
    peer.notify_logging_message(message(record)).await
}

/// A log record as MCP's `notifications/message`: its message as the data,
/// or `{"message", ...fields}` when it has fields.
fn message(record: LogRecord) -> LoggingMessageNotificationParam {
    let level = match record.level {
        LogLevel::Debug => LoggingLevel::Debug,
        LogLevel::Info => LoggingLevel::Info,
        LogLevel::Notice => LoggingLevel::Notice,
        LogLevel::Warning => LoggingLevel::Warning,
        LogLevel::Error => LoggingLevel::Error,
        LogLevel::Critical => LoggingLevel::Critical,
        LogLevel::Alert => LoggingLevel::Alert,
        LogLevel::Emergency => LoggingLevel::Emergency,
    };
    let data = if record.fields.is_empty() {
        Value::String(record.message)
    } else {
        let mut object = serde_json::Map::new();
        for (k, v) in record.fields {
            object.insert(k, Value::String(v));
        }
        object.insert("message".into(), Value::String(record.message));
        Value::Object(object)
    };
    let param = LoggingMessageNotificationParam::new(level, data);
    match record.logger {
        Some(logger) => param.with_logger(logger),
        None => param,
    }
}

/// The level a client asked for, as toolhost's.
pub(crate) fn level(level: LoggingLevel) -> LogLevel {
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
