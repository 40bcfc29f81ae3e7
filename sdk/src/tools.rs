//! Calling other tools through the host: one at a time ([`call`]) or many
//! at once ([`call_many`]).
//!
//! Every call goes through the host's dispatch pipeline (argument
//! validation, audience and approval gates, hooks) with the calling tool's
//! remaining deadline and a depth limit. The plugin must declare each tool
//! it calls (`capabilities! { tools: ["name"] }`) and the operator must grant
//! it; otherwise the call fails with the code `capability_not_granted`.
//!
//! ```ignore
//! use serde_json::json;
//! use toolhost_sdk::tools;
//!
//! let sum = tools::call("calculate_expression", &json!({"expression": "2+2"}))?;
//! let both = tools::call_many([
//!     ("current_datetime", json!({})),
//!     ("calculate_expression", json!({"expression": "6*7"})),
//! ]);
//! ```

use std::fmt;

use serde::Serialize;
use serde_json::Value;

use crate::__private::bindings::toolhost::plugin::tools as wit;

/// Why a nested call did not produce a result: the host's error code and
/// message. With `?` in a tool, it becomes that tool's `failed` error whose
/// message is `CODE: MESSAGE`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CallError {
    code: String,
    message: String,
}

impl CallError {
    /// The host's error code: `invalid_arguments` (the arguments do not fit
    /// the tool's schema), `capability_not_granted`, `unknown_tool`,
    /// `blocked`, `timeout`, `tool_failed`, ... (see toolhost's error list).
    pub fn code(&self) -> &str {
        &self.code
    }

    /// What went wrong, for a person or a model.
    pub fn message(&self) -> &str {
        &self.message
    }

    fn local(code: &str, message: String) -> Self {
        CallError {
            code: code.to_string(),
            message,
        }
    }
}

impl fmt::Display for CallError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.code, self.message)
    }
}

impl std::error::Error for CallError {}

impl From<wit::CallError> for CallError {
    fn from(e: wit::CallError) -> Self {
        CallError {
            code: e.code,
            message: e.message,
        }
    }
}

fn result_of(name: &str, result: Result<wit::ToolOutput, wit::CallError>) -> Result<Value, CallError> {
    let output = result?;
    toolhost_json::from_str(&output.json).map_err(|e| {
        CallError::local(
            "tool_failed",
            format!("`{name}` returned text that is not JSON: {e}"),
        )
    })
}

/// Calls the tool `name` with `arguments` and waits for its JSON result.
///
/// # Errors
///
/// The host's [`CallError`]: the tool is not declared and granted, the
/// arguments do not fit, the called tool failed, ...
pub fn call(name: &str, arguments: &impl Serialize) -> Result<Value, CallError> {
    let arguments = toolhost_json::to_string(arguments).map_err(|e| {
        CallError::local(
            "invalid_arguments",
            format!("the arguments for `{name}` cannot be serialized: {e}"),
        )
    })?;
    result_of(name, wit::call(name, &arguments))
}

/// Starts every call in `calls` (tool name, arguments) at once, waits until
/// all have ended, and returns their results in the same order. The host
/// runs them concurrently: the time taken is that of the slowest. Each is
/// checked, counted and gated like a single [`call`].
pub fn call_many<'a>(calls: impl IntoIterator<Item = (&'a str, Value)>) -> Vec<Result<Value, CallError>> {
    let calls: Vec<wit::ToolCall> = calls
        .into_iter()
        .map(|(name, arguments)| wit::ToolCall {
            name: name.to_string(),
            arguments: arguments.to_string(),
        })
        .collect();
    let results = wit::call_many(&calls);
    calls
        .iter()
        .zip(results)
        .map(|(c, r)| result_of(&c.name, r))
        .collect()
}
