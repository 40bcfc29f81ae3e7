//! The caller a script's nested calls go through: it admits only the
//! script's callable tools, counts calls against `max_tool_calls`, keeps
//! the list of failed calls (`tool_errors`) and the refusals a script may
//! end on, and passes every call on to the dispatch pipeline in the calling
//! session (audience, toolsets, validation, approvals, hooks, events).

use std::collections::{BTreeSet, HashMap};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Mutex, PoisonError};

use serde::Serialize;
use serde_json::Value;
use toolhost_core::dispatch::Waiting;
use toolhost_core::error::{Error, ErrorCode, Result};
use toolhost_core::registry::{
    BoxFuture, CallContext, NestedResult, ToolCaller, ToolCallerHandle, ToolOutput,
};

/// One failed nested call, as `tool_errors` lists it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub(crate) struct ToolFailure {
    pub(crate) tool: String,
    pub(crate) error_code: String,
}

pub(crate) struct ScriptCaller {
    /// The dispatch pipeline, in the calling session.
    inner: ToolCallerHandle,
    callable: BTreeSet<String>,
    max_calls: u32,
    made: AtomicU32,
    waiting: Waiting,
    failures: Mutex<Vec<ToolFailure>>,
    /// `"CODE: MESSAGE"` of a refused call (as the script's exception says
    /// it) → the JSON a direct call would have returned.
    refusals: Mutex<HashMap<String, String>>,
}

impl ScriptCaller {
    pub(crate) fn new(
        inner: ToolCallerHandle,
        callable: BTreeSet<String>,
        max_calls: u32,
        waiting: Waiting,
    ) -> Self {
        ScriptCaller {
            inner,
            callable,
            max_calls,
            made: AtomicU32::new(0),
            waiting,
            failures: Mutex::default(),
            refusals: Mutex::default(),
        }
    }

    /// The failed calls so far, in the order they ended.
    pub(crate) fn failures(&self) -> Vec<ToolFailure> {
        self.failures
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// The whole result of the refused call whose exception text is `text`.
    pub(crate) fn refusal(&self, text: &str) -> Option<String> {
        let refusals = self.refusals.lock().unwrap_or_else(PoisonError::into_inner);
        refusals.get(text).cloned()
    }

    fn fail(&self, tool: &str, code: &str) {
        // The tool and the code only: arguments and messages may hold what
        // the script was handling.
        tracing::warn!(target: "toolhost::codemode", tool, error_code = code, "a script's tool call failed");
        let mut failures = self.failures.lock().unwrap_or_else(PoisonError::into_inner);
        failures.push(ToolFailure {
            tool: tool.to_string(),
            error_code: code.to_string(),
        });
    }

    async fn call(&self, name: String, arguments: Value, mut ctx: CallContext) -> Result<ToolOutput> {
        if !self.callable.contains(&name) {
            self.fail(&name, ErrorCode::UnknownTool.as_str());
            return Err(Error::new(
                ErrorCode::UnknownTool,
                format!("`{name}` is not one of the tools this script may call"),
            ));
        }
        let number = self.made.fetch_add(1, Ordering::Relaxed) + 1;
        if number > self.max_calls {
            self.fail(&name, "codemode:tool_call_limit");
            return Err(Error::new(
                ErrorCode::ToolCallLimit,
                format!(
                    "a script may make at most {} tool calls (max_tool_calls); the call of `{name}` would be call {number}",
                    self.max_calls
                ),
            ));
        }
        ctx.waiting = self.waiting.clone();
        let result: NestedResult = self.inner.0.call_tool_whole(&name, arguments, ctx).await;
        match result.error {
            None => Ok(ToolOutput {
                text: result.text,
                ..ToolOutput::json_text(result.content)
            }),
            Some(error) => {
                self.fail(&name, error.code().as_str());
                if matches!(error.code(), ErrorCode::Blocked | ErrorCode::ApprovalRequired) {
                    let key = format!("{}: {}", error.code(), error.message());
                    let mut refusals = self.refusals.lock().unwrap_or_else(PoisonError::into_inner);
                    refusals.insert(key, result.content);
                }
                Err(error)
            }
        }
    }
}

impl ToolCaller for ScriptCaller {
    fn call_tool(&self, name: &str, arguments: Value, ctx: CallContext) -> BoxFuture<'_, Result<ToolOutput>> {
        Box::pin(self.call(name.to_string(), arguments, ctx))
    }
}
