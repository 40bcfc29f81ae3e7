//! # Smart approval
//!
//! A [`SmartApprover`] (for example an auxiliary LLM) may approve low-risk
//! matches such as `rm -rf node_modules/`. It is asked only when every
//! category of the verdict is one where low-risk cases are common
//! ([`Category::smart_reviewable`](crate::approval::Category::smart_reviewable))
//! and the verdict is complete; its reply is parsed strictly by
//! [`is_approval`]: only the word `APPROVE` approves.

use crate::approval::Verdict;
use crate::approval::callback::BoxFuture;

/// The error of a smart approver that could not answer; treated as "not
/// approved".
#[derive(Debug, thiserror::Error)]
#[error("smart approver failed: {0}")]
pub struct SmartError(pub String);

/// Reviews a flagged command and answers in text.
pub trait SmartApprover: Send + Sync {
    /// Returns the reviewer's reply for `command` flagged as `verdict`.
    /// Only a reply accepted by [`is_approval`] approves.
    fn review<'a>(
        &'a self,
        command: &'a str,
        verdict: &'a Verdict,
    ) -> BoxFuture<'a, Result<String, SmartError>>;
}

/// The instruction to give a smart approver (for example as an LLM prompt).
pub fn review_prompt(command: &str, verdict: &Verdict) -> String {
    format!(
        "A coding agent wants to run this shell command:\n\n{command}\n\n\
         A safety filter flagged it: {}.\n\
         If running it is clearly low-risk (for example deleting a build or \
         dependency folder inside the project), reply with exactly APPROVE. \
         Otherwise reply with exactly DENY.",
        verdict.summary()
    )
}

/// Whether a reviewer's reply approves: its first line, trimmed, is exactly
/// `APPROVE` (any letter case), and no later line says `DENY` or
/// `DISAPPROVE`. `DISAPPROVE`, `I approve? no`, `APPROVE.`,
/// `APPROVE\nDENY` and an empty reply do not approve.
pub fn is_approval(reply: &str) -> bool {
    let mut lines = reply.trim().lines();
    let first = lines.next().unwrap_or_default().trim();
    let retracted = lines.any(|l| {
        l.split(|c: char| !c.is_ascii_alphabetic())
            .any(|w| w.eq_ignore_ascii_case("deny") || w.eq_ignore_ascii_case("disapprove"))
    });
    first.eq_ignore_ascii_case("approve") && !retracted
}

#[cfg(test)]
mod tests {
    use super::is_approval;

    #[test]
    fn strict_parsing() {
        for yes in ["APPROVE", " approve\n", "Approve\nthe folder is a build output"] {
            assert!(is_approval(yes), "{yes:?}");
        }
        for no in [
            "DISAPPROVE",
            "I approve? no",
            "",
            "APPROVE.",
            "approve it",
            "NOT APPROVE",
            "APPROVE\nDENY",
            "approve\nactually, on second thought: deny",
        ] {
            assert!(!is_approval(no), "{no:?}");
        }
    }
}
