//! `[metrics]`: Prometheus metrics at `GET /metrics` on the HTTP listener
//! (see [`toolhost_core::metrics`] for what is counted).
//!
//! ```toml
//! [metrics]
//! enabled = true   # off by default: nothing is counted then
//! ```

use std::sync::Arc;

use serde::Deserialize;

use crate::approval::{ApprovalCallback, ApprovalOutcome, ApprovalRequest, Choice};
use crate::registry::BoxFuture;
use toolhost_core::metrics::Metrics;

/// The `[metrics]` section.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MetricsConfig {
    /// Count calls, requests and approvals, and serve them at `GET
    /// /metrics` (behind the bearer token).
    #[serde(default)]
    pub enabled: bool,
}

/// The person asked about approvals, counted: every question, and what was
/// decided (a question nobody could be asked is refused).
pub(crate) struct CountedApprovals {
    pub inner: Arc<dyn ApprovalCallback>,
    pub metrics: Arc<Metrics>,
}

impl ApprovalCallback for CountedApprovals {
    fn request<'a>(&'a self, request: &'a ApprovalRequest) -> BoxFuture<'a, ApprovalOutcome> {
        Box::pin(async move {
            self.metrics.approval("asked");
            let outcome = self.inner.request(request).await;
            match &outcome {
                ApprovalOutcome::Decided(Choice::Deny) | ApprovalOutcome::Unavailable => {
                    self.metrics.approval("refused")
                }
                ApprovalOutcome::Decided(_) => self.metrics.approval("granted"),
                // Answered later, by whoever holds the ticket.
                ApprovalOutcome::Pending { .. } => {}
            }
            outcome
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::approval::Subject;

    /// Answers every request with the next of its outcomes.
    struct Scripted(std::sync::Mutex<Vec<ApprovalOutcome>>);

    impl ApprovalCallback for Scripted {
        fn request<'a>(&'a self, _: &'a ApprovalRequest) -> BoxFuture<'a, ApprovalOutcome> {
            let next = self.0.lock().unwrap().remove(0);
            Box::pin(async move { next })
        }
    }

    #[tokio::test]
    async fn every_question_is_counted_with_what_was_decided() {
        let metrics = Arc::new(Metrics::new());
        let counted = CountedApprovals {
            inner: Arc::new(Scripted(std::sync::Mutex::new(vec![
                ApprovalOutcome::Decided(Choice::Once),
                ApprovalOutcome::Decided(Choice::Always),
                ApprovalOutcome::Decided(Choice::Deny),
                ApprovalOutcome::Unavailable,
                ApprovalOutcome::Pending { ticket: "t".into() },
            ]))),
            metrics: Arc::clone(&metrics),
        };
        let request = ApprovalRequest {
            session_id: "s".into(),
            subject: Subject::ToolCall {
                tool: "deploy".into(),
                arguments: "{}".into(),
                pattern: "deploy".into(),
            },
            summary: "deploy".into(),
        };
        for _ in 0..5 {
            counted.request(&request).await;
        }
        let text = metrics.render();
        for line in [
            "toolhost_approvals_total{decision=\"asked\"} 5",
            "toolhost_approvals_total{decision=\"granted\"} 2",
            "toolhost_approvals_total{decision=\"refused\"} 2",
        ] {
            assert!(text.contains(line), "{line} in {text}");
        }
    }
}
