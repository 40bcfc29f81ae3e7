use std::fmt;

/// Why a tool could not produce a result.
///
/// Return [`ToolError::invalid_arguments`] when the arguments do not fit (the
/// model can correct its call) and [`ToolError::failed`] when the work itself
/// failed. Any [`std::error::Error`] converts into `failed` with `?`.
pub struct ToolError {
    pub(crate) kind: Kind,
    pub(crate) message: String,
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Kind {
    InvalidArguments,
    Failed,
}

impl ToolError {
    /// The arguments do not fit the tool; `message` says which and why.
    pub fn invalid_arguments(message: impl Into<String>) -> Self {
        ToolError {
            kind: Kind::InvalidArguments,
            message: message.into(),
        }
    }

    /// The tool could not do its work; `message` says what went wrong.
    pub fn failed(message: impl Into<String>) -> Self {
        ToolError {
            kind: Kind::Failed,
            message: message.into(),
        }
    }

    /// The message.
    pub fn message(&self) -> &str {
        &self.message
    }

    /// True for [`ToolError::invalid_arguments`].
    pub fn is_invalid_arguments(&self) -> bool {
        self.kind == Kind::InvalidArguments
    }
}

impl fmt::Debug for ToolError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ToolError")
            .field("kind", &self.kind)
            .field("message", &self.message)
            .finish()
    }
}

/// `?` turns any error into a `failed` tool error carrying its message (and
/// its sources', joined with `: `).
impl<E: std::error::Error> From<E> for ToolError {
    fn from(err: E) -> Self {
        let mut message = err.to_string();
        let mut source = err.source();
        while let Some(cause) = source {
            message.push_str(": ");
            message.push_str(&cause.to_string());
            source = cause.source();
        }
        ToolError::failed(message)
    }
}

/// Why something the plugin asked of the host did not happen: a nested tool
/// call ([`tools::call`](crate::tools::call)), a question to the user
/// ([`client::elicit`](crate::client::elicit)) or a request to the client's
/// model ([`client::sample`](crate::client::sample)). It carries the host's
/// error code and message; with `?` in a tool, it becomes that tool's
/// `failed` error whose message is `CODE: MESSAGE`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HostError {
    code: String,
    message: String,
}

impl HostError {
    /// The host's error code, one of its stable `error_code` names:
    /// `capability_not_granted` (not declared, or not granted),
    /// `unavailable` (no client to ask, or it lacks the capability),
    /// `blocked` (a hook, a policy, a denied approval, a nesting or sampling
    /// limit), `invalid_arguments`, `unknown_tool`, `timeout`, `cancelled`,
    /// `tool_failed`, or a sandbox limit's code (`out_of_fuel`, ...).
    pub fn code(&self) -> &str {
        &self.code
    }

    /// What went wrong, for a person or a model.
    pub fn message(&self) -> &str {
        &self.message
    }

    /// An error found by the SDK itself, before or after asking the host
    /// (arguments that do not serialize, an answer that does not
    /// deserialize), under the host's code for it.
    pub(crate) fn local(code: &str, message: String) -> Self {
        HostError {
            code: code.to_string(),
            message,
        }
    }
}

impl fmt::Display for HostError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.code, self.message)
    }
}

impl std::error::Error for HostError {}

impl From<crate::__private::server::toolhost::plugin::types::HostError> for HostError {
    fn from(e: crate::__private::server::toolhost::plugin::types::HostError) -> Self {
        HostError {
            code: e.code,
            message: e.message,
        }
    }
}
