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
