//! # Hooks
//!
//! Pre-call hooks run before the lookup and may let a call through, rewrite
//! its arguments, or block it with a message (the caller gets
//! `Error executing NAME: MESSAGE`, code `blocked`). Post-call hooks see
//! every result, successful or not, and may rewrite it.
//!
//! A call of a tool that stands for another call (a lazy MCP server's
//! `call_tool` naming one of the server's tools, see
//! [`Tool::stands_for`](crate::registry::Tool::stands_for)) is that call
//! to the hooks as well: the pre-call hooks see it twice, as made (before
//! the lookup) and then as the call it stands for, its [`CallInfo::name`]
//! the name that tool would have (`mcp__SERVER__TOOL`) and its arguments
//! that tool's (a rewrite reaches it); the post-call hooks see it as the
//! call it stands for too (unless the tool refused it before it stood for
//! anything: an unknown remote tool, say).
//!
//! ```
//! use toolhost_core::dispatch::{CallInfo, PreDecision};
//!
//! let hook = |call: &CallInfo, _args: &serde_json::Value| {
//!     if call.name == "rm" { PreDecision::Block("rm is disabled".into()) } else { PreDecision::Continue }
//! };
//! # let _ = hook;
//! ```

use std::sync::Arc;

use serde_json::Value;

use super::ToolResult;
use crate::registry::{CallId, ToolAudience};

/// What a hook knows about the call.
#[derive(Debug, Clone)]
pub struct CallInfo {
    /// The call's id.
    pub call_id: CallId,
    /// The calling call, if any.
    pub parent_call_id: Option<CallId>,
    /// The tool's name, as the model asked for it; for a call that stands
    /// for another (see the module documentation), once resolved, the
    /// name of the tool it stands for.
    pub name: String,
    /// The session's id.
    pub session_id: Arc<str>,
    /// The session's audience.
    pub audience: ToolAudience,
    /// The caller's W3C trace context, if its request carried one (see
    /// [`crate::trace`]).
    pub trace: Option<Arc<crate::trace::TraceContext>>,
}

/// A pre-call hook's decision. Pre-call hooks run before the lookup;
/// a block reaches the caller as `Error executing NAME: MESSAGE`, code
/// `blocked`.
#[derive(Debug, Clone, PartialEq)]
pub enum PreDecision {
    /// Go on with the arguments as they are.
    Continue,
    /// Go on with these arguments instead (later hooks see them).
    Rewrite(Value),
    /// Refuse the call with this message.
    Block(String),
}

/// A pre-call hook.
pub type PreHook = Arc<dyn Fn(&CallInfo, &Value) -> PreDecision + Send + Sync>;

/// A post-call hook: sees every result (successful or not, except those of
/// intercepted host-application tools) and may rewrite it.
pub type PostHook = Arc<dyn Fn(&CallInfo, &mut ToolResult) + Send + Sync>;
