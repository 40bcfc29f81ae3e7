//! # Call events
//!
//! Every dispatched call publishes one [`ToolCallEvent`] when it ends: to
//! the subscribers of [`Dispatcher::subscribe`](super::Dispatcher::subscribe)
//! (a broadcast channel; a slow subscriber loses the oldest events, never
//! blocks a call) and to `tracing` (target `toolhost::dispatch`, level info).

use std::sync::Arc;
use std::time::Duration;

use serde::Serialize;

use crate::error::ErrorCode;
use crate::registry::{CallId, ToolSource, Usage};

/// How a call ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case", tag = "status", content = "error_code")]
pub enum CallOutcome {
    /// It returned a result.
    Ok,
    /// It failed with this code.
    Error(ErrorCode),
}

/// One finished call. Published to the subscribers of
/// [`Dispatcher::subscribe`](super::Dispatcher::subscribe) (a broadcast
/// channel: a slow subscriber loses the oldest events and never blocks a
/// call) and to `tracing` (target `toolhost::dispatch`, level info).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ToolCallEvent {
    /// The call's id.
    pub call_id: CallId,
    /// The calling call, if any.
    pub parent_call_id: Option<CallId>,
    /// The session's id.
    pub session_id: Arc<str>,
    /// The tool's name.
    pub name: String,
    /// The call it stood for (see
    /// [`Tool::stands_for`](crate::registry::Tool::stands_for)): for a lazy
    /// MCP server's `call_tool`, the bridged name of the remote tool.
    pub stands_for: Option<String>,
    /// Where the tool comes from (`None` for an unknown tool).
    pub source: Option<ToolSource>,
    /// From the start of dispatch to the result.
    pub duration: Duration,
    /// How it ended.
    pub outcome: CallOutcome,
    /// For WASM tools: fuel used and peak memory.
    pub usage: Option<Usage>,
}

impl ToolCallEvent {
    pub(super) fn trace(&self) {
        let (fuel, memory) = self.usage.map_or((None, None), |u| {
            (Some(u.fuel_consumed), Some(u.peak_memory_bytes))
        });
        tracing::info!(
            target: "toolhost::dispatch",
            call_id = self.call_id,
            parent_call_id = self.parent_call_id,
            session = %self.session_id,
            tool = %self.name,
            stands_for = self.stands_for.as_deref(),
            source = self.source.as_ref().map(|s| s.kind()),
            duration_ms = self.duration.as_secs_f64() * 1e3,
            outcome = ?self.outcome,
            fuel,
            peak_memory_bytes = memory,
            "tool call"
        );
    }
}
