//! # Errors
//!
//! Every fallible operation in toolhost returns [`Error`]: a machine-readable
//! [`ErrorCode`] and a message written for the person (or model) who has to act
//! on it, saying what happened and what to change.
//!
//! Traps are classified, never mixed with a tool's own error: a guest that runs
//! out of fuel is [`ErrorCode::OutOfFuel`], a tool that reports bad arguments is
//! [`ErrorCode::InvalidArguments`], a panic is [`ErrorCode::Trap`].

use std::fmt;
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use crate::limits::Usage;

/// A short, stable, machine-readable name for what went wrong.
///
/// The serialized form (`snake_case`, as returned by [`ErrorCode::as_str`]) is
/// part of toolhost's public contract: it appears as `"error_code"` in every
/// JSON error. New codes may be added; existing ones keep their meaning.
#[non_exhaustive]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ErrorCode {
    /// The guest used up its fuel (instruction budget).
    OutOfFuel,
    /// The call ran past its wall-clock limit.
    Timeout,
    /// The guest tried to grow its memory or tables past the limit.
    MemoryLimit,
    /// The guest exhausted its WebAssembly stack.
    StackOverflow,
    /// The guest trapped: a panic, `unreachable`, an out-of-bounds access.
    Trap,
    /// The arguments do not fit the tool's parameters.
    InvalidArguments,
    /// The tool ran but reported that it could not do its work.
    ToolFailed,
    /// No tool of that name is registered (or visible to the caller).
    UnknownTool,
    /// The result is larger than the call's output limit.
    OutputTooLarge,
    /// A plugin used, or imports an interface for, a capability it was not
    /// granted (or did not declare).
    CapabilityNotGranted,
    /// The bytes are not a valid WebAssembly component.
    InvalidComponent,
    /// The component does not implement a world the host serves.
    UnsupportedWorld,
    /// The component imports interfaces the host does not provide.
    MissingImports,
    /// The component's bytes do not have the pinned hash (or an OCI
    /// artifact does not have the digest its reference names).
    HashMismatch,
    /// The component's signature is missing where one is required, made by
    /// a key the operator does not trust, or does not verify.
    Untrusted,
    /// A tool name is registered already.
    DuplicateTool,
    /// The caller's audience may not use the tool.
    AudienceDenied,
    /// A hook or policy refused the call.
    Blocked,
    /// The call needs an approval that has not been given yet.
    ApprovalRequired,
    /// The call was cancelled before it finished.
    Cancelled,
    /// A caller's cap on how many tool calls it may make was reached (a
    /// codemode script's `max_tool_calls`).
    ToolCallLimit,
    /// A codemode script failed; its result says how (`codemode:timeout`,
    /// `codemode:script_error`, …).
    ScriptFailed,
    /// The tool exists but is unavailable right now (its check failed).
    Unavailable,
    /// Lazy mode: the tool exists but is not active in this session yet
    /// (activate it with `tool_search(name=...)`).
    NotActive,
    /// Bytes offered to the host (a component file, a pulled blob, a
    /// signature) exceed their cap.
    TooLarge,
    /// No prompt or resource by that name or URI is visible to the caller
    /// (unknown, or not for its audience or toolsets: the two are not told
    /// apart).
    NotFound,
    /// A configuration file or value is wrong.
    Config,
    /// Reading or writing a file failed.
    Io,
    /// A bug in toolhost itself; please report it.
    Internal,
}

impl ErrorCode {
    /// The stable `snake_case` name of this code.
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorCode::OutOfFuel => "out_of_fuel",
            ErrorCode::Timeout => "timeout",
            ErrorCode::MemoryLimit => "memory_limit",
            ErrorCode::StackOverflow => "stack_overflow",
            ErrorCode::Trap => "trap",
            ErrorCode::InvalidArguments => "invalid_arguments",
            ErrorCode::ToolFailed => "tool_failed",
            ErrorCode::UnknownTool => "unknown_tool",
            ErrorCode::OutputTooLarge => "output_too_large",
            ErrorCode::CapabilityNotGranted => "capability_not_granted",
            ErrorCode::InvalidComponent => "invalid_component",
            ErrorCode::UnsupportedWorld => "unsupported_world",
            ErrorCode::MissingImports => "missing_imports",
            ErrorCode::HashMismatch => "hash_mismatch",
            ErrorCode::Untrusted => "untrusted",
            ErrorCode::DuplicateTool => "duplicate_tool",
            ErrorCode::AudienceDenied => "audience_denied",
            ErrorCode::Blocked => "blocked",
            ErrorCode::ApprovalRequired => "approval_required",
            ErrorCode::Cancelled => "cancelled",
            ErrorCode::ToolCallLimit => "tool_call_limit",
            ErrorCode::ScriptFailed => "script_failed",
            ErrorCode::Unavailable => "unavailable",
            ErrorCode::NotActive => "not_active",
            ErrorCode::TooLarge => "too_large",
            ErrorCode::NotFound => "not_found",
            ErrorCode::Config => "config",
            ErrorCode::Io => "io",
            ErrorCode::Internal => "internal",
        }
    }
}

impl fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The error type of the toolhost library.
///
/// It carries an [`ErrorCode`] (`#[non_exhaustive]`: match on it with a
/// fallback) and a message of its own, which says what failed and never
/// repeats its cause: the underlying error, when there is one (an I/O
/// error, a parse error), is kept as its
/// [`source`](std::error::Error::source). `Display` shows the message;
/// the alternate form (`{:#}`) shows it with its causes, each once, as does
/// [`Error::to_json`] in the `{"error": ..., "error_code": ...}` form that
/// tools and the CLI return. Two errors are equal when their code, message
/// and usage are.
///
/// ```
/// use toolhost_core::{Error, ErrorCode};
///
/// let cause = std::io::Error::new(std::io::ErrorKind::NotFound, "no such file");
/// let e = Error::io("cannot read plugin.wasm", cause);
/// assert_eq!(e.code(), ErrorCode::Io);
/// assert_eq!(e.to_string(), "cannot read plugin.wasm");
/// assert_eq!(format!("{e:#}"), "cannot read plugin.wasm: no such file");
/// assert_eq!(e.to_json()["error"], "cannot read plugin.wasm: no such file");
/// ```
#[derive(Debug, Clone)]
pub struct Error {
    code: ErrorCode,
    message: String,
    usage: Option<Box<Usage>>,
    source: Option<Arc<dyn std::error::Error + Send + Sync>>,
}

impl PartialEq for Error {
    fn eq(&self, other: &Self) -> bool {
        self.code == other.code && self.message == other.message && self.usage == other.usage
    }
}

impl Eq for Error {}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if f.alternate() {
            f.write_str(&self.with_causes())
        } else {
            f.write_str(&self.message)
        }
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.source
            .as_deref()
            .map(|e| e as &(dyn std::error::Error + 'static))
    }
}

impl Error {
    /// Creates an error with `code` and `message`.
    pub fn new(code: ErrorCode, message: impl Into<String>) -> Self {
        Error {
            code,
            message: message.into(),
            usage: None,
            source: None,
        }
    }

    /// This error, caused by `source` (kept, and reachable through
    /// [`std::error::Error::source`]).
    pub fn with_source(mut self, source: impl std::error::Error + Send + Sync + 'static) -> Self {
        self.source = Some(Arc::new(source));
        self
    }

    /// This error, with what the failed call used of its limits (see
    /// [`Error::usage`]).
    pub fn with_usage(mut self, usage: Usage) -> Self {
        self.usage = Some(Box::new(usage));
        self
    }

    /// What the failed call used before it failed (fuel, peak memory, wall
    /// time), when it ran in a sandbox: set on traps, timeouts and
    /// exhausted limits as on a tool's own errors.
    pub fn usage(&self) -> Option<&Usage> {
        self.usage.as_deref()
    }

    /// The machine-readable code.
    pub fn code(&self) -> ErrorCode {
        self.code
    }

    /// The human-readable message: what failed, without its causes (see
    /// [`Error::with_causes`]).
    pub fn message(&self) -> &str {
        &self.message
    }

    /// The message with its causes, `message: cause: cause's cause`, each
    /// said once (a cause whose text the line already holds is left out):
    /// what a person or a model should read.
    pub fn with_causes(&self) -> String {
        with_causes(&self.message, std::error::Error::source(self))
    }

    /// Returns this error with `context: ` put in front of its message.
    pub fn context(mut self, context: impl fmt::Display) -> Self {
        self.message = format!("{context}: {}", self.message);
        self
    }

    /// The `{"error": MESSAGE, "error_code": CODE}` object (the message
    /// with its causes), with `"usage"` when the error has one.
    pub fn to_json(&self) -> serde_json::Value {
        let mut out = serde_json::json!({ "error": self.with_causes(), "error_code": self.code.as_str() });
        if let Some(usage) = &self.usage {
            out["usage"] = serde_json::json!(usage);
        }
        out
    }

    /// An `io` error: `what` failed because of `err` (kept as the source,
    /// not repeated in the message).
    pub fn io(what: impl fmt::Display, err: std::io::Error) -> Self {
        Error::new(ErrorCode::Io, what.to_string()).with_source(err)
    }

    /// This error, caused by the shared `source`.
    pub fn with_shared_source(mut self, source: Arc<dyn std::error::Error + Send + Sync>) -> Self {
        self.source = Some(source);
        self
    }

    /// An `internal` error: a bug in toolhost, described by `what`.
    pub fn internal(what: impl fmt::Display) -> Self {
        Error::new(ErrorCode::Internal, what.to_string())
    }
}

/// `message`, then each of `cause` and its own causes, `: ` between
/// them, each said once (a cause whose text the line already holds is left
/// out): how every toolhost library error shows itself with its causes.
pub fn with_causes(message: &str, mut cause: Option<&(dyn std::error::Error + 'static)>) -> String {
    let mut line = message.to_string();
    while let Some(e) = cause {
        let text = e.to_string();
        if !text.is_empty() && !line.contains(&text) {
            line.push_str(": ");
            line.push_str(&text);
        }
        cause = e.source();
    }
    line
}

/// The result type of the toolhost library.
pub type Result<T, E = Error> = std::result::Result<T, E>;
