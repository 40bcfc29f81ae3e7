//! # The call gate
//!
//! The dispatch pipeline asks a [`CallGate`], once a call's arguments are
//! final (after the pre-call hooks and validation), whether the call may
//! run. toolhost's approval gate (`toolhost_exec::approval::ApprovalGate`,
//! `require_approval` patterns and the person or client it asks) is one;
//! the pipeline knows only this trait.
//!
//! ```
//! use serde_json::{Value, json};
//! use toolhost_core::dispatch::{CallGate, Dispatcher, GateDecision, Waiting};
//! use toolhost_core::registry::{BoxFuture, Registry, ToolOutput};
//!
//! /// Lets nothing through on Fridays; every other day, everything.
//! #[derive(Debug)]
//! struct NotOnFriday(bool);
//!
//! impl CallGate for NotOnFriday {
//!     fn check_call<'a>(&'a self, _session: &'a str, tool: &'a str, _args: &'a Value, _waiting: &'a Waiting) -> BoxFuture<'a, GateDecision> {
//!         Box::pin(async move {
//!             if self.0 {
//!                 let refusal = json!({"error": format!("no {tool} on Fridays"), "error_code": "blocked"});
//!                 GateDecision::Refuse(ToolOutput::refused(toolhost_core::ErrorCode::Blocked, refusal.to_string()))
//!             } else {
//!                 GateDecision::Allow
//!             }
//!         })
//!     }
//! }
//! let _dispatcher = Dispatcher::builder(Registry::new()).gate(std::sync::Arc::new(NotOnFriday(true))).build().unwrap();
//! ```

use serde_json::Value;

use super::Waiting;
use crate::registry::{BoxFuture, ToolOutput};

/// What a [`CallGate`] decided.
#[derive(Debug, Clone, PartialEq)]
pub enum GateDecision {
    /// The call runs.
    Allow,
    /// The call does not run; this is its result (already in the gate's
    /// words, with its `error_code` set, e.g. the seed's `BLOCKED: …`
    /// object).
    Refuse(ToolOutput),
}

/// Decides whether a call may run. Object-safe (`Arc<dyn CallGate>`).
pub trait CallGate: Send + Sync + std::fmt::Debug {
    /// Whether the call of `tool` with `arguments` (exactly as the tool will
    /// get them) in session `session` may run. May wait (for a person's
    /// answer); the call's deadline and cancellation still apply. While it
    /// waits for a person, it holds [`Waiting::person`] of `waiting`, so
    /// that the clock of a script the call belongs to stops meanwhile.
    fn check_call<'a>(
        &'a self,
        session: &'a str,
        tool: &'a str,
        arguments: &'a Value,
        waiting: &'a Waiting,
    ) -> BoxFuture<'a, GateDecision>;
}
