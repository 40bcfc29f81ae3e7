//! `[metrics]`: Prometheus metrics at `GET /metrics` on the HTTP listener
//! (see [`toolhost_core::metrics`] for what is counted), and `[audit]`: the
//! audit log (see [`toolhost_core::audit`]).
//!
//! ```toml
//! [metrics]
//! enabled = true   # off by default: nothing is counted then
//!
//! [audit]
//! path = "audit.jsonl"   # none (the default): no audit log
//! ```

use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde::Deserialize;
use serde_json::json;

use crate::approval::{ApprovalCallback, ApprovalOutcome, ApprovalRequest, Choice};
use crate::registry::BoxFuture;
use toolhost_core::audit::{AuditLog, AuditOptions};
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

/// The `[audit]` section.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AuditConfig {
    /// The file audit lines are appended to (relative to the config file);
    /// none: no audit log.
    #[serde(default)]
    pub path: Option<PathBuf>,
    /// The most bytes the file grows to before it is rotated.
    #[serde(default = "default_audit_max_bytes")]
    pub max_bytes: u64,
    /// How many rotated files are kept (`PATH.1` ... `PATH.N`).
    #[serde(default = "default_audit_keep")]
    pub keep: usize,
}

fn default_audit_max_bytes() -> u64 {
    64 * 1024 * 1024
}

fn default_audit_keep() -> usize {
    5
}

impl Default for AuditConfig {
    fn default() -> Self {
        AuditConfig {
            path: None,
            max_bytes: default_audit_max_bytes(),
            keep: default_audit_keep(),
        }
    }
}

impl AuditConfig {
    /// The log, opened, when a path is set; `base` is the folder relative
    /// paths are resolved against.
    ///
    /// # Errors
    ///
    /// As [`AuditLog::open`].
    pub fn open(&self, base: &Path) -> crate::error::Result<Option<Arc<AuditLog>>> {
        let Some(path) = &self.path else { return Ok(None) };
        let options = AuditOptions {
            path: base.join(path),
            max_bytes: self.max_bytes,
            keep: self.keep,
        };
        Ok(Some(Arc::new(AuditLog::open(options)?)))
    }
}

/// The person asked about approvals, observed: every question counted and
/// what was decided (a question nobody could be asked is refused), and
/// each decision written to the audit log with who asked and what for.
pub(crate) struct ObservedApprovals {
    pub inner: Arc<dyn ApprovalCallback>,
    pub metrics: Option<Arc<Metrics>>,
    pub audit: Option<Arc<AuditLog>>,
}

impl ApprovalCallback for ObservedApprovals {
    fn request<'a>(&'a self, request: &'a ApprovalRequest) -> BoxFuture<'a, ApprovalOutcome> {
        Box::pin(async move {
            let count = |decision| {
                if let Some(metrics) = &self.metrics {
                    metrics.approval(decision);
                }
            };
            count("asked");
            let outcome = self.inner.request(request).await;
            let (decision, choice) = match &outcome {
                ApprovalOutcome::Decided(Choice::Deny) => ("refused", Some("deny")),
                ApprovalOutcome::Unavailable | ApprovalOutcome::Overloaded => ("refused", None),
                ApprovalOutcome::Decided(Choice::Once) => ("granted", Some("once")),
                ApprovalOutcome::Decided(Choice::Session) => ("granted", Some("session")),
                ApprovalOutcome::Decided(Choice::Always) => ("granted", Some("always")),
                // Answered later, by whoever holds the ticket.
                ApprovalOutcome::Pending { .. } => ("pending", None),
                // An answer of a kind not known here is a denial.
                _ => ("refused", None),
            };
            if decision != "pending" {
                count(decision);
            }
            if let Some(audit) = &self.audit {
                let mut line = serde_json::Map::new();
                line.insert("session".into(), json!(request.session_id));
                line.insert("subject".into(), json!(request.subject));
                line.insert("decision".into(), json!(decision));
                line.insert("choice".into(), json!(choice));
                let why = match &outcome {
                    ApprovalOutcome::Unavailable => "nobody could be asked: refused",
                    ApprovalOutcome::Overloaded => "too many approvals were waiting: refused unasked",
                    ApprovalOutcome::Pending { .. } => "asked; the answer comes later",
                    _ => "the person asked decided",
                };
                line.insert("why".into(), json!(why));
                line.insert("summary".into(), json!(request.summary));
                audit.record("approval", line);
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
        let counted = ObservedApprovals {
            inner: Arc::new(Scripted(std::sync::Mutex::new(vec![
                ApprovalOutcome::Decided(Choice::Once),
                ApprovalOutcome::Decided(Choice::Always),
                ApprovalOutcome::Decided(Choice::Deny),
                ApprovalOutcome::Unavailable,
                ApprovalOutcome::Pending { ticket: "t".into() },
            ]))),
            metrics: Some(Arc::clone(&metrics)),
            audit: None,
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
