//! # Results returned to the model
//!
//! A blocked or pending call returns a JSON object in the seed's style:
//! `{"status": "blocked", "error": "BLOCKED: ... Do NOT retry ..."}` (or
//! `"approval_required"` when the user will answer later).

use serde::{Deserialize, Serialize};

use crate::approval::Category;
use toolhost_core::error::ErrorCode;
use toolhost_core::registry::ToolOutput;

/// How many denials in a row make the result tell the model to stop.
pub const STOP_AFTER_DENIALS: u32 = 3;

/// The status of a call that did not run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum BlockStatus {
    /// Denied, timed out, or nobody could be asked.
    Blocked,
    /// The question is pending; the user will answer later.
    ApprovalRequired,
}

/// Why a call did not run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum BlockReason {
    /// The user denied it.
    Denied,
    /// Nobody answered in time.
    TimedOut,
    /// There was no way to ask (headless, no callback).
    NoApprover,
    /// An operator deny rule matched.
    DenyRule,
    /// The question was sent; the answer will come later.
    Pending,
    /// Too many approvals were already waiting for an answer.
    Overloaded,
}

/// The JSON result of a call that did not run.
///
/// `error` always starts with `BLOCKED: ` and contains `Do NOT retry`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BlockedResult {
    /// `blocked` or `approval_required`.
    pub status: BlockStatus,
    /// The message for the model.
    pub error: String,
    /// Why it did not run.
    pub reason: BlockReason,
    /// The categories that needed approval (empty for deny rules on tools).
    pub categories: Vec<Category>,
    /// The pending question's ticket, for `approval_required`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ticket: Option<String>,
}

impl BlockedResult {
    /// Builds the result; `what` names the call (`this command`), `summary`
    /// says why it needed approval, `denials` is the session's count of
    /// denials in a row including this one.
    pub fn new(
        reason: BlockReason,
        what: &str,
        summary: &str,
        categories: Vec<Category>,
        denials: u32,
    ) -> BlockedResult {
        let mut error = match reason {
            BlockReason::Denied => format!(
                "BLOCKED: {what} needs approval ({summary}) and the user denied it. Do NOT retry this command or variations of it."
            ),
            BlockReason::TimedOut => format!(
                "BLOCKED: {what} needs approval ({summary}) and the approval request timed out. Do NOT retry this command or variations of it."
            ),
            BlockReason::NoApprover => format!(
                "BLOCKED: {what} needs approval ({summary}) and there is no one to approve it in this session. Do NOT retry this command or variations of it; ask the user to run it themselves or to allow it."
            ),
            BlockReason::DenyRule => format!(
                "BLOCKED: {what} is forbidden by operator policy ({summary}). Do NOT retry this command or variations of it."
            ),
            BlockReason::Overloaded => format!(
                "BLOCKED: {what} needs approval ({summary}) and too many approvals are already waiting for an answer, so it was not asked. Do NOT retry this command or variations of it now; ask the user to look at the pending approvals."
            ),
            BlockReason::Pending => format!(
                "BLOCKED: {what} needs approval ({summary}); the user has been asked and will answer later. Do NOT retry this command or variations of it; wait for the user's answer."
            ),
        };
        if denials >= STOP_AFTER_DENIALS && reason != BlockReason::Pending {
            error.push_str(&format!(
                " This is blocked attempt number {denials} in a row: stop trying variations of this command and ask the user how to proceed."
            ));
        }
        BlockedResult {
            status: if reason == BlockReason::Pending {
                BlockStatus::ApprovalRequired
            } else {
                BlockStatus::Blocked
            },
            error,
            reason,
            categories,
            ticket: None,
        }
    }

    /// `blocked`, or `approval_required` while the question is pending.
    pub fn code(&self) -> ErrorCode {
        match self.status {
            BlockStatus::Blocked => ErrorCode::Blocked,
            BlockStatus::ApprovalRequired => ErrorCode::ApprovalRequired,
        }
    }

    /// The result as a JSON string, with its `error_code` (never fails).
    pub fn to_json(&self) -> String {
        let mut value = serde_json::to_value(self).unwrap_or_else(|_| {
            serde_json::json!({"status": "blocked", "error": "BLOCKED: Do NOT retry this command or variations of it."})
        });
        value["error_code"] = serde_json::json!(self.code().as_str());
        value.to_string()
    }

    /// The result as a tool's output: a refusal (see
    /// [`ToolOutput::refused`]) whose content is [`BlockedResult::to_json`].
    pub fn into_output(self) -> ToolOutput {
        ToolOutput::refused_because(self.code(), self.error.clone(), self.to_json())
    }
}
