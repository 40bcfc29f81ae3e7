//! Structured logging into the host's `tracing` output.
//!
//! Records are tagged by the host with the component's hash and the current
//! call. The host caps the number of records per call.

use crate::__private::bindings::toolhost::plugin::host::{self, Level};

fn emit(level: Level, message: &str, fields: &[(&str, &str)]) {
    let fields: Vec<(String, String)> = fields
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    host::log(level, message, &fields);
}

/// Logs `message` with `fields` at debug level.
pub fn debug(message: &str, fields: &[(&str, &str)]) {
    emit(Level::Debug, message, fields);
}

/// Logs `message` with `fields` at info level.
pub fn info(message: &str, fields: &[(&str, &str)]) {
    emit(Level::Info, message, fields);
}

/// Logs `message` with `fields` at warn level.
pub fn warn(message: &str, fields: &[(&str, &str)]) {
    emit(Level::Warn, message, fields);
}

/// Logs `message` with `fields` at error level.
pub fn error(message: &str, fields: &[(&str, &str)]) {
    emit(Level::Error, message, fields);
}
