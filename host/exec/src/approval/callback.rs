//! # Asking someone: requests, choices and the callback trait
//!
//! An [`ApprovalRequest`] describes what needs approval; an
//! [`ApprovalCallback`] (a chat gateway, a GUI, the CLI prompt) answers with
//! an [`ApprovalOutcome`]: a [`Choice`], or "pending" when the answer will
//! come later through another channel.

use serde::{Deserialize, Serialize};

use crate::approval::Verdict;

/// A boxed, sendable future, as returned by the object-safe traits here
/// (the crate's one alias, shared with the registry's `Tool` trait).
pub use toolhost_core::registry::BoxFuture;

/// What the user decided.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Choice {
    /// Run it this one time.
    Once,
    /// Approve the command's categories for the rest of this session.
    Session,
    /// Approve permanently: the pattern is written to the allowlist file.
    Always,
    /// Do not run it.
    Deny,
}

/// What needs approval.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Subject {
    /// A shell command flagged by the detector.
    Command {
        /// The command exactly as it will run.
        command: String,
        /// The working directory it will run in, when known.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        cwd: Option<String>,
        /// Why it was flagged.
        verdict: Verdict,
    },
    /// A tool call matched by a `require_approval` pattern.
    ToolCall {
        /// The tool's name.
        tool: String,
        /// The arguments exactly as they will be used, as pretty JSON.
        arguments: String,
        /// The configured pattern that matched.
        pattern: String,
    },
}

/// A request for approval, as shown to the person asked.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ApprovalRequest {
    /// The session the request comes from.
    pub session_id: String,
    /// What needs approval.
    pub subject: Subject,
    /// A one-line description (`recursive_delete: rm -rf build`).
    pub summary: String,
}

impl ApprovalRequest {
    /// The text a person should see: the summary and the exact subject.
    /// Control characters (terminal escapes among them) are shown escaped
    /// (`\u{1b}`), never sent to the terminal, so that nothing in the
    /// command can hide or restyle part of what is approved.
    pub fn display_text(&self) -> String {
        let text = match &self.subject {
            Subject::Command {
                command,
                cwd,
                verdict,
            } => {
                let place = cwd.as_deref().map(|c| format!(" (in {c})")).unwrap_or_default();
                let mut s = format!("This command{place} needs approval:\n\n  {command}\n\n");
                for m in &verdict.matches {
                    s.push_str(&format!("  - {}: {} ({})\n", m.category, m.reason, m.matched));
                }
                s
            }
            Subject::ToolCall {
                tool,
                arguments,
                pattern,
            } => format!(
                "The tool `{tool}` needs approval (rule `{pattern}`). It will be called with:\n\n{arguments}\n"
            ),
        };
        visible(&text)
    }
}

/// `text` with every control character but newline and tab, and every
/// invisible formatting character (zero-width, bidirectional overrides),
/// escaped.
fn visible(text: &str) -> String {
    let invisible = |c: char| matches!(c, '\u{200b}'..='\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2060}'..='\u{2069}' | '\u{feff}' | '\u{061c}');
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if (c.is_control() && c != '\n' && c != '\t') || invisible(c) {
            out.extend(c.escape_unicode());
        } else {
            out.push(c);
        }
    }
    out
}

/// The answer of an [`ApprovalCallback`]. More kinds of answer may come:
/// a `match` outside this crate needs an arm for them, and any answer it
/// does not know must be taken as a denial (fail closed).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ApprovalOutcome {
    /// The user decided.
    Decided(Choice),
    /// The question was delivered; the answer will arrive later (for
    /// example as a chat reply). `ticket` identifies the question.
    Pending {
        /// An identifier the application can use to match the answer.
        ticket: String,
    },
    /// Nobody can be asked (for example, no terminal); treated as a denial.
    Unavailable,
    /// Too many questions already wait for an answer, so this one was not
    /// put; a denial, and the model is told why.
    Overloaded,
}

/// Asks a person to approve something.
///
/// Object-safe: store it as `Arc<dyn ApprovalCallback>`. Implementations
/// must not block the async runtime; blocking I/O belongs on
/// `tokio::task::spawn_blocking`.
pub trait ApprovalCallback: Send + Sync {
    /// Asks about `request`; the future resolves to the outcome.
    fn request<'a>(&'a self, request: &'a ApprovalRequest) -> BoxFuture<'a, ApprovalOutcome>;
}
