//! Logging at MCP's eight levels.
//!
//! A record goes into the host's `tracing` output, tagged with the
//! component's hash and the current call, and to the client that asked for
//! the call's log at its level or a more severe one (MCP
//! `notifications/message`, before the call's result). The host caps the
//! size and rate of records per call and per unit of time; records past
//! the cap are dropped and counted. Logging never fails and never blocks.
//!
//! ```ignore
//! use toolhost_sdk::log;
//!
//! log::info("fetched the page", &[("url", url), ("bytes", &len.to_string())]);
//! log::log(log::Level::Notice, "cache is cold", &[]);
//! ```

use crate::__private::server::toolhost::plugin::host::{self, Level as WitLevel};

/// The severity of a record: MCP's (RFC 5424's) eight levels, least severe
/// first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Level {
    /// Detail useful when debugging.
    Debug,
    /// Normal operation worth recording.
    Info,
    /// Normal but significant.
    Notice,
    /// Something unexpected that the plugin recovered from.
    Warning,
    /// A failure.
    Error,
    /// A failure of a critical part.
    Critical,
    /// Action must be taken at once.
    Alert,
    /// The system is unusable.
    Emergency,
}

impl From<Level> for WitLevel {
    fn from(level: Level) -> Self {
        match level {
            Level::Debug => WitLevel::Debug,
            Level::Info => WitLevel::Info,
            Level::Notice => WitLevel::Notice,
            Level::Warning => WitLevel::Warning,
            Level::Error => WitLevel::Error,
            Level::Critical => WitLevel::Critical,
            Level::Alert => WitLevel::Alert,
            Level::Emergency => WitLevel::Emergency,
        }
    }
}

/// Logs `message` with `fields` (key, value) at `level`.
pub fn log(level: Level, message: &str, fields: &[(&str, &str)]) {
    let fields: Vec<(String, String)> = fields
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    host::log(level.into(), message, &fields);
}

/// Logs `message` with `fields` at debug level.
pub fn debug(message: &str, fields: &[(&str, &str)]) {
    log(Level::Debug, message, fields);
}

/// Logs `message` with `fields` at info level.
pub fn info(message: &str, fields: &[(&str, &str)]) {
    log(Level::Info, message, fields);
}

/// Logs `message` with `fields` at notice level.
pub fn notice(message: &str, fields: &[(&str, &str)]) {
    log(Level::Notice, message, fields);
}

/// Logs `message` with `fields` at warning level.
pub fn warn(message: &str, fields: &[(&str, &str)]) {
    log(Level::Warning, message, fields);
}

/// Logs `message` with `fields` at error level.
pub fn error(message: &str, fields: &[(&str, &str)]) {
    log(Level::Error, message, fields);
}

/// Logs `message` with `fields` at critical level.
pub fn critical(message: &str, fields: &[(&str, &str)]) {
    log(Level::Critical, message, fields);
}

/// Logs `message` with `fields` at alert level.
pub fn alert(message: &str, fields: &[(&str, &str)]) {
    log(Level::Alert, message, fields);
}

/// Logs `message` with `fields` at emergency level.
pub fn emergency(message: &str, fields: &[(&str, &str)]) {
    log(Level::Emergency, message, fields);
}
