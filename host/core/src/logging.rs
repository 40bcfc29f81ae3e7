//! # A call's log, for its caller
//!
//! A tool's log records always go to `tracing`. A caller that wants them
//! too (an MCP client that set a level with `logging/setLevel` gets them
//! as `notifications/message`) puts a [`LogSink`] in its
//! [`DispatchContext`](crate::dispatch::DispatchContext); dispatch hands it
//! to the tool (and to the calls it makes) in its
//! [`CallContext`](crate::registry::CallContext). The sink keeps records at
//! or above its level and drops the others where they are made; it never
//! blocks and never fails. Tools that run untrusted code cap the size and
//! rate of what they log before it reaches the sink (a plugin's
//! `host.log` is capped per call and per second).
//!
//! The levels are MCP's (RFC 5424's syslog severities).
//!
//! ```
//! use std::sync::{Arc, Mutex};
//! use toolhost_core::logging::{LogLevel, LogRecord, LogSink};
//!
//! let seen = Arc::new(Mutex::new(Vec::new()));
//! let sink = LogSink::new(LogLevel::Info, {
//!     let seen = Arc::clone(&seen);
//!     move |r: LogRecord| seen.lock().unwrap().push(r.message)
//! });
//! sink.report(LogRecord::new(LogLevel::Debug, "hidden"));
//! sink.report(LogRecord::new(LogLevel::Warning, "shown"));
//! assert_eq!(*seen.lock().unwrap(), ["shown"]);
//! ```

use std::fmt;
use std::sync::Arc;

use serde::{Deserialize, Serialize};

/// The severity of a log record, least severe first (MCP's levels).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum LogLevel {
    /// Detail for debugging.
    Debug,
    /// Normal operation.
    Info,
    /// Normal but significant.
    Notice,
    /// Something unexpected, recovered from.
    Warning,
    /// A failure.
    Error,
    /// A critical condition.
    Critical,
    /// Action must be taken at once.
    Alert,
    /// The system is unusable.
    Emergency,
}

/// One log record of a call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LogRecord {
    /// Its severity.
    pub level: LogLevel,
    /// Who logged it (the tool's name), if known.
    pub logger: Option<String>,
    /// What happened.
    pub message: String,
    /// Key-value pairs attached to it.
    pub fields: Vec<(String, String)>,
}

impl LogRecord {
    /// A record of `level` saying `message`, with no logger and no fields.
    pub fn new(level: LogLevel, message: impl Into<String>) -> Self {
        LogRecord {
            level,
            logger: None,
            message: message.into(),
            fields: Vec::new(),
        }
    }
}

/// Where a call's log records go, from `level` up. Cheap to clone.
#[derive(Clone)]
pub struct LogSink {
    level: LogLevel,
    send: Arc<dyn Fn(LogRecord) + Send + Sync>,
}

impl fmt::Debug for LogSink {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("LogSink")
            .field("level", &self.level)
            .finish_non_exhaustive()
    }
}

impl LogSink {
    /// A sink handing every record at or above `level` to `send`, which
    /// must not block.
    pub fn new(level: LogLevel, send: impl Fn(LogRecord) + Send + Sync + 'static) -> Self {
        LogSink {
            level,
            send: Arc::new(send),
        }
    }

    /// The least severe level kept.
    pub fn level(&self) -> LogLevel {
        self.level
    }

    /// Whether a record of `level` would be kept (so that a tool need not
    /// build one that would not).
    pub fn wants(&self, level: LogLevel) -> bool {
        level >= self.level
    }

    /// Hands `record` on, if its level is kept.
    pub fn report(&self, record: LogRecord) {
        if self.wants(record.level) {
            (self.send)(record);
        }
    }
}
