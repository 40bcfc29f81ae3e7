//! # Error wrapping
//!
//! Where a failed call's JSON is made: see [`Failure`] for the three levels.

use serde_json::{Value, json};

use crate::error::{Error, ErrorCode};
use crate::registry::lazy::TOOL_SEARCH;

/// How the `"error"` string of an unknown tool begins (and no other's).
pub(crate) const UNKNOWN_TOOL: &str = "Unknown tool: ";

/// Why a call produced no result, by wrapping level.
///
/// Every failed call returns well-formed JSON with `"error"` and a
/// machine-readable `"error_code"`. The `"error"` string takes one of the
/// seed's three forms, chosen here and nowhere else:
///
/// | failure | `error` | `error_code` |
/// |---|---|---|
/// | no such tool (or not in the session's toolsets) | `Unknown tool: NAME` | `unknown_tool` |
/// | the handler ran and failed: its own error, a sandbox limit, a trap, a timeout, a panic | `Tool execution failed: KIND: MESSAGE` | KIND (the handler's code, e.g. `timeout`, `trap`, `tool_failed`; `internal` for a panic) |
/// | the pipeline refused or could not run the call: audience denied, tool not active (lazy), unavailable, invalid arguments, a hook's block, cancellation | `Error executing NAME: MESSAGE` | the reason (`audience_denied`, `not_active`, `unavailable`, `invalid_arguments`, `blocked`, `cancelled`, ...) |
///
/// An unknown tool's error may add `"suggestions"` (the closest names) and,
/// in lazy mode, a `"hint"` saying how to activate them.
///
/// ```
/// use toolhost_core::dispatch::Failure;
/// use toolhost_core::{Error, ErrorCode};
///
/// let json = Failure::Handler(Error::new(ErrorCode::Timeout, "ran past 2s")).to_json("sleep");
/// assert_eq!(json["error"], "Tool execution failed: timeout: ran past 2s");
/// assert_eq!(json["error_code"], "timeout");
/// ```
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Failure {
    /// No such tool.
    Unknown {
        /// The closest existing names.
        suggestions: Vec<String>,
        /// Whether the session is in lazy mode (the hint names `tool_search`).
        lazy: bool,
    },
    /// The handler ran and failed.
    Handler(Error),
    /// The pipeline around the handler failed or refused.
    Pipeline(Error),
}

impl Failure {
    /// The code that goes into `"error_code"`.
    pub fn code(&self) -> ErrorCode {
        match self {
            Failure::Unknown { .. } => ErrorCode::UnknownTool,
            Failure::Handler(e) | Failure::Pipeline(e) => e.code(),
        }
    }

    /// The `"error"` string for a call of tool `name`.
    pub fn message(&self, name: &str) -> String {
        match self {
            Failure::Unknown { .. } => format!("{UNKNOWN_TOOL}{name}"),
            Failure::Handler(e) => format!("Tool execution failed: {}: {}", e.code(), e.message()),
            Failure::Pipeline(e) => format!("Error executing {name}: {}", e.message()),
        }
    }

    /// The error JSON for a call of tool `name`.
    pub fn to_json(&self, name: &str) -> Value {
        let mut out = json!({ "error": self.message(name), "error_code": self.code().as_str() });
        if let Failure::Handler(e) | Failure::Pipeline(e) = self
            && let Some(usage) = e.usage()
        {
            out["usage"] = json!(usage);
        }
        if let Failure::Unknown { suggestions, lazy } = self {
            if !suggestions.is_empty() {
                out["suggestions"] = json!(suggestions);
            }
            if *lazy {
                let example = suggestions.first().map_or("NAME", String::as_str);
                out["hint"] = json!(format!(
                    "Find tools with {TOOL_SEARCH}(query=\"...\") and activate one with {TOOL_SEARCH}(name=\"{example}\") before calling it."
                ));
            }
        }
        out
    }

    /// Converts into the library [`Error`] (code and the `"error"` string).
    pub fn into_error(self, name: &str) -> Error {
        Error::new(self.code(), self.message(name))
    }
}

/// The pipeline error for a tool that exists but is not active in a lazy
/// session, suggesting how to activate it.
pub(super) fn not_active(name: &str) -> Failure {
    Failure::Pipeline(Error::new(
        ErrorCode::NotActive,
        format!(
            "tool `{name}` is not active in this session; activate it with {TOOL_SEARCH}(name=\"{name}\"), then call it"
        ),
    ))
}

/// The message of a panic payload.
pub(super) fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    payload
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "a non-string panic payload".into())
}
