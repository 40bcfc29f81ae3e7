//! # The approval gate
//!
//! [`ApprovalGate`] decides whether a command or tool call may run:
//!
//! 1. operator deny rules (program names, normalized: `/bin/rm`, `\rm`,
//!    `"rm"` and `/usr/bin/../bin/rm` are all `rm`) block outright;
//! 2. commands the detector does not flag run;
//! 3. the permanent allowlist, then this session's approvals, may allow;
//! 4. an optional [`SmartApprover`] may approve (strict `APPROVE` only);
//! 5. otherwise the [`ApprovalCallback`] is asked, with a timeout.
//!
//! With no callback the call is blocked (fail-closed). Blocked and pending
//! calls produce a [`BlockedResult`] for the model.

use std::sync::Arc;
use std::time::Duration;

use toolhost_core::dispatch::Waiting;

use crate::approval::Verdict;
use crate::approval::allowlist::{Allowlist, AllowlistError, pattern_for};
use crate::approval::callback::{ApprovalCallback, ApprovalOutcome, ApprovalRequest, Choice, Subject};
use crate::approval::result::{BlockReason, BlockedResult};
use crate::approval::session::SessionApprovals;
use crate::approval::smart::{SmartApprover, is_approval};
use crate::approval::tools::ToolApprovalRules;
use crate::approval::{Context, inspect_with, normalized_program_name};

/// How long the callback may take by default.
pub const DEFAULT_APPROVAL_TIMEOUT: Duration = Duration::from_secs(300);

/// The operator's approval configuration.
#[derive(Debug, Clone)]
pub struct ApprovalPolicy {
    /// Program names or paths that may never run (`command_denylist`).
    pub denylist: Vec<String>,
    /// Tool-name patterns that need approval (`require_approval`).
    pub tools: ToolApprovalRules,
    /// How long to wait for the callback.
    pub timeout: Duration,
    /// toolhost's own files (its config, allowlist, storage): a command that
    /// writes one is flagged `host_config_write` (see
    /// [`Context::with_protected`](crate::approval::Context::with_protected)).
    pub protected_paths: Vec<String>,
    /// Folders inside the protected ones that commands may change freely:
    /// the exec workspace, where the model is meant to work (see
    /// [`Context::with_writable`](crate::approval::Context::with_writable));
    /// a protected path inside one stays protected.
    pub writable_paths: Vec<String>,
    /// The home folder `~` stands for in commands (default: `$HOME`).
    pub home: Option<String>,
}

impl Default for ApprovalPolicy {
    fn default() -> Self {
        ApprovalPolicy {
            denylist: Vec::new(),
            tools: ToolApprovalRules::default(),
            timeout: DEFAULT_APPROVAL_TIMEOUT,
            protected_paths: Vec::new(),
            writable_paths: Vec::new(),
            home: std::env::var("HOME").ok(),
        }
    }
}

/// Why a call was allowed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum AllowedBy {
    /// Nothing needed approval.
    NotFlagged,
    /// The permanent allowlist.
    Allowlist,
    /// An earlier "approve for this session".
    Session,
    /// The smart approver replied `APPROVE`.
    Smart,
    /// The user chose once, session or always.
    User(Choice),
}

/// The gate's decision.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Decision {
    /// Run it.
    Allow(AllowedBy),
    /// Do not run it; return this result to the model.
    Block(BlockedResult),
}

impl Decision {
    /// Whether the call may run.
    pub fn is_allowed(&self) -> bool {
        matches!(self, Decision::Allow(_))
    }
}

/// What [`ApprovalGate::evaluate`] found.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Evaluation {
    /// The detector's verdict.
    pub verdict: Verdict,
    /// What the operator's rules make of it.
    pub rule: RuleOutcome,
}

/// What the operator's rules make of a command, before anyone is asked.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(tag = "outcome", rename_all = "snake_case")]
pub enum RuleOutcome {
    /// The detector did not flag it: it runs.
    NotFlagged,
    /// It runs a program of the denylist: it never runs.
    Denylisted {
        /// The program, normalized.
        program: String,
    },
    /// Flagged, but every reason is allowed by the allowlist: it runs.
    Allowlisted,
    /// Flagged: a session approval, the smart approver or a person decides.
    NeedsApproval,
}

/// Errors of the gate itself (the decision is still fail-closed).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum GateError {
    /// Writing an "always" approval to the allowlist failed.
    #[error(transparent)]
    Allowlist(#[from] AllowlistError),
    /// An "always" approval was given, but the gate has no allowlist file
    /// to write it to.
    #[error("there is no allowlist file to keep an \"always\" approval in")]
    NoAllowlist,
}

/// Decides whether commands and tool calls may run. Share it across
/// sessions (`Arc<ApprovalGate>`); all state is per session id.
pub struct ApprovalGate {
    policy: ApprovalPolicy,
    deny: Vec<String>,
    sessions: SessionApprovals,
    allowlist: Option<Allowlist>,
    callback: Option<Arc<dyn ApprovalCallback>>,
    smart: Option<Arc<dyn SmartApprover>>,
}

impl std::fmt::Debug for ApprovalGate {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ApprovalGate")
            .field("policy", &self.policy)
            .field("allowlist", &self.allowlist)
            .field("callback", &self.callback.is_some())
            .field("smart", &self.smart.is_some())
            .finish()
    }
}

impl ApprovalGate {
    /// A gate with `policy` and no allowlist, callback or smart approver:
    /// every flagged call is blocked until those are added.
    pub fn new(policy: ApprovalPolicy) -> ApprovalGate {
        let deny = policy
            .denylist
            .iter()
            .map(|d| normalized_program_name(d.trim()))
            .collect();
        ApprovalGate {
            policy,
            deny,
            sessions: SessionApprovals::new(),
            allowlist: None,
            callback: None,
            smart: None,
        }
    }

    /// Uses `allowlist` for "always" approvals.
    pub fn with_allowlist(mut self, allowlist: Allowlist) -> Self {
        self.allowlist = Some(allowlist);
        self
    }

    /// Asks `callback` when approval is needed.
    pub fn with_callback(mut self, callback: Arc<dyn ApprovalCallback>) -> Self {
        self.callback = Some(callback);
        self
    }

    /// Lets `smart` approve low-risk matches first.
    pub fn with_smart_approver(mut self, smart: Arc<dyn SmartApprover>) -> Self {
        self.smart = Some(smart);
        self
    }

    /// The per-session approvals.
    pub fn sessions(&self) -> &SessionApprovals {
        &self.sessions
    }

    /// Decides whether `command` may run in `session`. Never panics; any
    /// failure to ask or to decide blocks the command.
    pub async fn check_command(&self, session: &str, command: &str) -> Decision {
        self.check_command_in(session, command, None).await
    }

    /// As [`ApprovalGate::check_command`], for a command that runs in the
    /// working directory `cwd`: its relative paths are judged where they
    /// point, and the person asked sees the directory.
    pub async fn check_command_in(&self, session: &str, command: &str, cwd: Option<&str>) -> Decision {
        self.check_command_with(session, command, cwd, &Waiting::none())
            .await
    }

    /// As [`ApprovalGate::check_command_in`], holding [`Waiting::person`]
    /// of `waiting` while a person is asked (so that the clock of a script
    /// the call belongs to stops meanwhile).
    pub async fn check_command_with(
        &self,
        session: &str,
        command: &str,
        cwd: Option<&str>,
        waiting: &Waiting,
    ) -> Decision {
        let Evaluation { verdict, rule } = off_the_workers(command.len(), || self.evaluate(command, cwd));
        match rule {
            RuleOutcome::NotFlagged => return Decision::Allow(AllowedBy::NotFlagged),
            RuleOutcome::Denylisted { program } => {
                let n = self.sessions.record_denial(session);
                let summary = format!("`{program}` is on the command denylist");
                return Decision::Block(BlockedResult::new(
                    BlockReason::DenyRule,
                    "this command",
                    &summary,
                    Vec::new(),
                    n,
                ));
            }
            RuleOutcome::Allowlisted => {
                self.sessions.record_allowed(session);
                return Decision::Allow(AllowedBy::Allowlist);
            }
            RuleOutcome::NeedsApproval => {}
        }
        if self.sessions.categories_approved(session, &verdict.categories) {
            self.sessions.record_allowed(session);
            return Decision::Allow(AllowedBy::Session);
        }
        let reviewable = !verdict.truncated && verdict.categories.iter().all(|c| c.smart_reviewable());
        if let Some(smart) = self.smart.as_ref().filter(|_| reviewable) {
            let reply = tokio::time::timeout(self.policy.timeout, smart.review(command, &verdict)).await;
            if let Ok(Ok(text)) = reply
                && is_approval(&text)
            {
                self.sessions.record_allowed(session);
                return Decision::Allow(AllowedBy::Smart);
            }
        }
        let request = ApprovalRequest {
            session_id: session.to_string(),
            summary: verdict.summary(),
            subject: Subject::Command {
                command: command.to_string(),
                cwd: cwd.map(str::to_string),
                verdict: verdict.clone(),
            },
        };
        self.ask(session, &request, &verdict, "this command", waiting)
            .await
    }

    /// What the operator's rules alone say about `command` run in `cwd`:
    /// the detector's verdict, then the denylist and the allowlist. Asks
    /// no one and records nothing (for `toolhost check-command`).
    pub fn evaluate(&self, command: &str, cwd: Option<&str>) -> Evaluation {
        let protected: Vec<&str> = self.policy.protected_paths.iter().map(String::as_str).collect();
        let writable: Vec<&str> = self.policy.writable_paths.iter().map(String::as_str).collect();
        let mut context = Context::new().with_protected(&protected).with_writable(&writable);
        if let Some(cwd) = cwd {
            context = context.with_cwd(cwd);
        }
        if let Some(home) = &self.policy.home {
            context = context.with_home(home);
        }
        let inspection = inspect_with(command, &context);
        let verdict = inspection.verdict;
        let rule = if let Some(p) = inspection.programs.iter().find(|p| self.deny.contains(p)) {
            RuleOutcome::Denylisted { program: p.clone() }
        } else if !verdict.dangerous {
            RuleOutcome::NotFlagged
        } else if self.allowlist.as_ref().is_some_and(|a| a.allows(&verdict)) {
            RuleOutcome::Allowlisted
        } else {
            RuleOutcome::NeedsApproval
        };
        Evaluation { verdict, rule }
    }

    /// Decides whether a call of `tool` with `arguments` may run, by the
    /// `require_approval` patterns and the tool deny rules.
    pub async fn check_tool(&self, session: &str, tool: &str, arguments: &serde_json::Value) -> Decision {
        self.check_tool_with(session, tool, arguments, &Waiting::none())
            .await
    }

    /// As [`ApprovalGate::check_tool`], holding [`Waiting::person`] of
    /// `waiting` while a person is asked.
    pub async fn check_tool_with(
        &self,
        session: &str,
        tool: &str,
        arguments: &serde_json::Value,
        waiting: &Waiting,
    ) -> Decision {
        let Some(request) = self.policy.tools.request(session, tool, arguments) else {
            return Decision::Allow(AllowedBy::NotFlagged);
        };
        if self.allowlist.as_ref().is_some_and(|a| a.allows_tool(tool)) {
            return Decision::Allow(AllowedBy::Allowlist);
        }
        if self.sessions.tool_approved(session, tool) {
            return Decision::Allow(AllowedBy::Session);
        }
        let what = format!("the tool call `{tool}`");
        self.ask(session, &request, &Verdict::default(), &what, waiting)
            .await
    }

    async fn ask(
        &self,
        session: &str,
        request: &ApprovalRequest,
        verdict: &Verdict,
        what: &str,
        waiting: &Waiting,
    ) -> Decision {
        let block = |reason: BlockReason| {
            let n = if reason == BlockReason::Pending {
                0
            } else {
                self.sessions.record_denial(session)
            };
            BlockedResult::new(reason, what, &request.summary, verdict.categories.clone(), n)
        };
        let Some(callback) = &self.callback else {
            return Decision::Block(block(BlockReason::NoApprover));
        };
        let asking = waiting.person();
        let outcome = tokio::time::timeout(self.policy.timeout, callback.request(request)).await;
        drop(asking);
        let outcome = match outcome {
            Ok(o) => o,
            Err(_) => return Decision::Block(block(BlockReason::TimedOut)),
        };
        let choice = match outcome {
            ApprovalOutcome::Decided(c) => c,
            ApprovalOutcome::Pending { ticket } => {
                let mut r = block(BlockReason::Pending);
                r.ticket = Some(ticket);
                return Decision::Block(r);
            }
            ApprovalOutcome::Unavailable => return Decision::Block(block(BlockReason::NoApprover)),
            ApprovalOutcome::Overloaded => return Decision::Block(block(BlockReason::Overloaded)),
        };
        if choice == Choice::Deny {
            return Decision::Block(block(BlockReason::Denied));
        }
        // A failed "always" falls back to the session; the call runs anyway.
        let _ = self.remember(session, request, verdict, choice);
        self.sessions.record_allowed(session);
        Decision::Allow(AllowedBy::User(choice))
    }

    /// Records a session or permanent approval. A failure to write the
    /// allowlist still lets this one call run (the user approved it) and
    /// falls back to a session approval; the error is returned.
    fn remember(
        &self,
        session: &str,
        request: &ApprovalRequest,
        verdict: &Verdict,
        choice: Choice,
    ) -> Result<(), GateError> {
        let tool = match &request.subject {
            Subject::ToolCall { tool, .. } => Some(tool.as_str()),
            Subject::Command { .. } => None,
        };
        let session_only = || match tool {
            Some(t) => self.sessions.approve_tool(session, t),
            None => self.sessions.approve_categories(session, &verdict.categories),
        };
        // An opaque command or a write to toolhost's own files is approved
        // once at a time: a session or permanent approval would vouch for
        // scripts and writes no one has seen.
        let choice = match choice {
            Choice::Session | Choice::Always
                if tool.is_none() && !verdict.categories.iter().all(|c| c.allowlistable()) =>
            {
                tracing::info!(
                    "an approval of an opaque command or of a write to toolhost's own files applies once only"
                );
                Choice::Once
            }
            other => other,
        };
        match choice {
            Choice::Session => session_only(),
            Choice::Always => {
                let patterns: Vec<String> = match tool {
                    Some(t) => vec![format!("tool:{t}")],
                    None => verdict.matches.iter().map(pattern_for).collect(),
                };
                let written = match &self.allowlist {
                    Some(a) => a.add(&patterns).map_err(GateError::from),
                    None => Err(GateError::NoAllowlist),
                };
                if let Err(e) = written {
                    tracing::warn!("an \"always\" approval is kept for this session only: {e}");
                    session_only();
                    return Err(e);
                }
            }
            Choice::Once | Choice::Deny => {}
        }
        Ok(())
    }

    /// Applies a late answer to a pending question so that the model's next
    /// attempt is allowed: "always" is written to the allowlist (a command's
    /// patterns, or `tool:NAME`); "session" and "once" approve for the rest
    /// of the session (a retry cannot be told from a new call, so a late
    /// "once" cannot be narrower); "deny" records nothing.
    ///
    /// # Errors
    /// When "always" cannot be written to the allowlist (the approval is
    /// then kept for the session).
    pub fn resolve_pending(&self, request: &ApprovalRequest, choice: Choice) -> Result<(), GateError> {
        let verdict = match &request.subject {
            Subject::Command { verdict, .. } => verdict.clone(),
            Subject::ToolCall { .. } => Verdict::default(),
        };
        let choice = match choice {
            Choice::Once => Choice::Session,
            other => other,
        };
        self.remember(&request.session_id, request, &verdict, choice)
    }
}

impl toolhost_core::dispatch::CallGate for ApprovalGate {
    fn check_call<'a>(
        &'a self,
        session: &'a str,
        tool: &'a str,
        arguments: &'a serde_json::Value,
        waiting: &'a Waiting,
    ) -> toolhost_core::registry::BoxFuture<'a, toolhost_core::dispatch::GateDecision> {
        use toolhost_core::dispatch::GateDecision;
        Box::pin(async move {
            match self.check_tool_with(session, tool, arguments, waiting).await {
                Decision::Allow(_) => GateDecision::Allow,
                Decision::Block(blocked) => GateDecision::Refuse(blocked.into_output()),
            }
        })
    }
}

/// Commands at least this long are judged off the async runtime's workers.
const LONG_COMMAND_BYTES: usize = 64 << 10;

/// Runs `judge` (the detector, on a command of `len` bytes). The detector
/// is bounded by a work budget proportional to its input, which on a
/// hostile megabyte is seconds: a long command on a multi-thread runtime
/// is judged in `block_in_place`, so that the worker's other tasks (every
/// other tool call) move to another thread meanwhile. Short commands, and
/// a current-thread runtime (where `block_in_place` is not allowed), judge
/// in place.
fn off_the_workers<T>(len: usize, judge: impl FnOnce() -> T) -> T {
    let multi_thread = tokio::runtime::Handle::try_current()
        .is_ok_and(|h| h.runtime_flavor() == tokio::runtime::RuntimeFlavor::MultiThread);
    if len >= LONG_COMMAND_BYTES && multi_thread {
        tokio::task::block_in_place(judge)
    } else {
        judge()
    }
}
