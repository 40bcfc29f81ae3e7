//! # Approvals that wait for the operator's console
//!
//! [`PendingApprovals`] is an [`ApprovalCallback`] that puts each question
//! in a list the console shows, and waits for an operator to approve it
//! (once) or refuse it there ([`PendingApprovals::decide`]). It asks no one
//! else: `toolhost serve` makes it the [`McpApprover`](crate::McpApprover)'s
//! fallback, for calls whose client cannot be asked.
//!
//! - **Bounded.** At most [`PendingApprovals::max`] questions wait at once;
//!   past them a question is not put and the call is refused with
//!   [`ApprovalOutcome::Overloaded`], which tells the model why.
//! - **Fail-closed.** The gate's timeout (or the call going away) drops the
//!   wait, which takes the question off the list: a late click finds
//!   nothing to decide, and the call was refused as timed out. Only an
//!   explicit "once" runs the call.
//! - **Once only.** The console offers "approve once" and "refuse", not
//!   the clients' "session" and "always": the operator approves one call
//!   they can see, not every later call of a session they cannot.

use std::collections::BTreeMap;
use std::sync::{Mutex, PoisonError};
use std::time::SystemTime;

use serde::Serialize;
use tokio::sync::oneshot;

use toolhost_exec::approval::{
    ApprovalCallback, ApprovalOutcome, ApprovalRequest, BoxFuture, Choice, Subject,
};

/// How many questions wait at once by default.
pub const DEFAULT_MAX_PENDING: usize = 64;

/// What an operator decides on the console.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Deserialize, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ConsoleDecision {
    /// Run this one call.
    Once,
    /// Do not run it.
    Deny,
}

/// Why [`PendingApprovals::decide`] decided nothing.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum DecideError {
    /// No question has this id any more: it was decided, it timed out, or
    /// its call went away.
    #[error("approval {0} is not pending: it was decided, it timed out, or its call went away")]
    NotPending(u64),
}

/// One question waiting, as the console shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PendingView {
    /// Its id, for [`PendingApprovals::decide`].
    pub id: u64,
    /// The session of the call.
    pub session: String,
    /// `command` or `tool_call`.
    pub kind: &'static str,
    /// The one-line summary.
    pub summary: String,
    /// The whole question, as a person should see it (control and
    /// invisible characters escaped: see
    /// [`ApprovalRequest::display_text`]).
    pub text: String,
    /// When it was asked (RFC 3339, milliseconds, UTC).
    pub asked: String,
}

struct Waiting {
    request: ApprovalRequest,
    asked: SystemTime,
    answer: oneshot::Sender<Choice>,
}

#[derive(Default)]
struct Inner {
    next: u64,
    pending: BTreeMap<u64, Waiting>,
}

/// Questions waiting for the console; see the module `console::approvals`.
pub struct PendingApprovals {
    max: usize,
    inner: Mutex<Inner>,
}

impl std::fmt::Debug for PendingApprovals {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PendingApprovals")
            .field("max", &self.max)
            .field("pending", &self.inner().pending.len())
            .finish()
    }
}

impl PendingApprovals {
    /// A list holding at most `max` questions at once (at least one).
    pub fn new(max: usize) -> PendingApprovals {
        PendingApprovals {
            max: max.max(1),
            inner: Mutex::default(),
        }
    }

    /// The most questions that wait at once.
    pub fn max(&self) -> usize {
        self.max
    }

    fn inner(&self) -> std::sync::MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The questions waiting now, oldest first.
    pub fn list(&self) -> Vec<PendingView> {
        self.inner()
            .pending
            .iter()
            .map(|(id, w)| PendingView {
                id: *id,
                session: w.request.session_id.clone(),
                kind: match w.request.subject {
                    Subject::Command { .. } => "command",
                    Subject::ToolCall { .. } => "tool_call",
                },
                summary: w.request.summary.clone(),
                text: w.request.display_text(),
                asked: toolhost_core::text::rfc3339_millis(w.asked),
            })
            .collect()
    }

    /// Answers question `id` with `decision`, and returns its request.
    ///
    /// # Errors
    ///
    /// [`DecideError::NotPending`] when no question has that id now.
    pub fn decide(&self, id: u64, decision: ConsoleDecision) -> Result<ApprovalRequest, DecideError> {
        let waiting = self
            .inner()
            .pending
            .remove(&id)
            .ok_or(DecideError::NotPending(id))?;
        let choice = match decision {
            ConsoleDecision::Once => Choice::Once,
            ConsoleDecision::Deny => Choice::Deny,
        };
        // The call may have gone in the meantime: then nothing runs.
        waiting
            .answer
            .send(choice)
            .map_err(|_| DecideError::NotPending(id))?;
        Ok(waiting.request)
    }

    /// Puts `request` on the list; `None` when the list is full.
    fn put(&self, request: &ApprovalRequest) -> Option<(u64, oneshot::Receiver<Choice>)> {
        let mut inner = self.inner();
        if inner.pending.len() >= self.max {
            return None;
        }
        let id = inner.next;
        inner.next += 1;
        let (answer, decided) = oneshot::channel();
        inner.pending.insert(
            id,
            Waiting {
                request: request.clone(),
                asked: SystemTime::now(),
                answer,
            },
        );
        Some((id, decided))
    }
}

/// Takes a question off the list when its wait ends, however it ends (a
/// decision, the gate's timeout, the call dropped).
struct OffTheList<'a> {
    approvals: &'a PendingApprovals,
    id: u64,
}

impl Drop for OffTheList<'_> {
    fn drop(&mut self) {
        self.approvals.inner().pending.remove(&self.id);
    }
}

impl ApprovalCallback for PendingApprovals {
    fn request<'a>(&'a self, request: &'a ApprovalRequest) -> BoxFuture<'a, ApprovalOutcome> {
        Box::pin(async move {
            let Some((id, decided)) = self.put(request) else {
                tracing::warn!(
                    max = self.max,
                    "an approval was refused unasked: the console already has its most pending approvals"
                );
                return ApprovalOutcome::Overloaded;
            };
            let _off = OffTheList { approvals: self, id };
            match decided.await {
                Ok(choice) => ApprovalOutcome::Decided(choice),
                Err(_) => ApprovalOutcome::Unavailable,
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    fn request(tool: &str) -> ApprovalRequest {
        ApprovalRequest {
            session_id: "s".into(),
            subject: Subject::ToolCall {
                tool: tool.into(),
                arguments: "{}".into(),
                pattern: tool.into(),
            },
            summary: format!("{tool} needs approval"),
        }
    }

    #[tokio::test]
    async fn a_question_waits_for_its_decision_and_leaves_the_list_however_it_ends() {
        let approvals = Arc::new(PendingApprovals::new(1));
        let asking = {
            let approvals = Arc::clone(&approvals);
            tokio::spawn(async move { approvals.request(&request("deploy")).await })
        };
        while approvals.list().is_empty() {
            tokio::task::yield_now().await;
        }
        // Full: the next question is refused unasked.
        assert_eq!(
            approvals.request(&request("other")).await,
            ApprovalOutcome::Overloaded
        );
        let id = approvals.list()[0].id;
        assert_eq!(approvals.list()[0].kind, "tool_call");
        approvals.decide(id, ConsoleDecision::Once).unwrap();
        assert_eq!(asking.await.unwrap(), ApprovalOutcome::Decided(Choice::Once));
        assert!(approvals.list().is_empty());
        assert_eq!(
            approvals.decide(id, ConsoleDecision::Deny),
            Err(DecideError::NotPending(id))
        );

        // A wait that times out takes its question off the list.
        let timed_out = tokio::time::timeout(
            std::time::Duration::from_millis(10),
            approvals.request(&request("x")),
        )
        .await;
        assert!(timed_out.is_err());
        assert!(approvals.list().is_empty());
    }
}
