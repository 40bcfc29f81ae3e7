//! # Approval of dangerous commands and tool calls
//!
//! | type | role |
//! | --- | --- |
//! | [`detect`], [`inspect`] → [`Verdict`], [`Category`], [`Match`] | judge a shell command (re-exported from `toolhost-detector`) |
//! | [`ApprovalGate`], [`ApprovalPolicy`], [`Decision`] | decide whether a command or tool call runs |
//! | [`ApprovalCallback`], [`ApprovalRequest`], [`ApprovalOutcome`], [`Choice`] | ask a person (asynchronously) |
//! | [`CliPrompt`] | ask on a terminal |
//! | [`SmartApprover`], [`is_approval`] | let an auxiliary reviewer approve low-risk matches |
//! | [`SessionApprovals`] | per-session, per-category approvals and denial counts |
//! | [`Allowlist`] | permanent approvals in a TOML file's `command_allowlist` |
//! | [`ToolApprovalRules`] | `require_approval` glob patterns on tool names |
//! | [`BlockedResult`] | the JSON returned to the model when a call does not run |
//!
//! ```
//! use toolhost_exec::approval::{ApprovalGate, ApprovalPolicy, Decision};
//!
//! # let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
//! # rt.block_on(async {
//! let gate = ApprovalGate::new(ApprovalPolicy::default());
//! assert!(gate.check_command("s1", "ls -la").await.is_allowed());
//! // No callback configured: a flagged command is blocked (fail-closed).
//! let Decision::Block(result) = gate.check_command("s1", "rm -rf build").await else { panic!() };
//! assert!(result.error.starts_with("BLOCKED: ") && result.error.contains("Do NOT retry"));
//! # });
//! ```

mod allowlist;
mod callback;
mod gate;
mod prompt;
mod result;
mod session;
mod smart;
mod tools;

pub use allowlist::{ALLOWLIST_KEY, Allowlist, AllowlistError, pattern_allows, pattern_for, write_atomic};
pub use callback::{ApprovalCallback, ApprovalOutcome, ApprovalRequest, BoxFuture, Choice, Subject};
pub use gate::{
    AllowedBy, ApprovalGate, ApprovalPolicy, DEFAULT_APPROVAL_TIMEOUT, Decision, Evaluation, GateError,
    RuleOutcome,
};
pub use prompt::{CliPrompt, NotATerminal, parse_choice};
pub use result::{BlockReason, BlockStatus, BlockedResult, STOP_AFTER_DENIALS};
pub use session::SessionApprovals;
pub use smart::{SmartApprover, SmartError, is_approval, review_prompt};
pub use tools::{ToolApprovalRules, glob_match};
// The detector is its own crate (`toolhost-detector`); its API stays
// reachable here under the paths the host has always used.
pub use toolhost_detector::{
    Category, Context, Inspection, MAX_COMMAND_BYTES, MAX_MATCHED_CHARS, MAX_MATCHES, Match, UnknownCategory,
    Verdict, detect, inspect, inspect_in, inspect_with, normalized_program_name,
};
