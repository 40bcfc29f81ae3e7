//! Bindings of `toolhost:plugin/plugin@0.2.0`, the newest world, and the
//! logic of its host functions: `host.log`, `progress.report`, `tools.call`
//! and `tools.call-many`. Older versions' host functions call these.
//!
//! The `plugin-wasi` world is the `plugin` world plus WASI interfaces the
//! linker provides anyway, with the same exports: a component of either
//! world is served by these bindings.
#![allow(missing_docs, reason = "generated code; the WIT documents every item")]

use std::time::Instant;

use futures_util::future::BoxFuture;

use crate::sandbox::{MAX_LOG_MESSAGE, SandboxState};
use toolhost_core::error::{Error, ErrorCode};
use toolhost_core::logging::{LogLevel, LogRecord};
use toolhost_core::progress::Progress;
use toolhost_core::registry::{CallContext, ToolCallerHandle, ToolOutput as CoreToolOutput};
use toolhost_core::text::truncate_utf8;

wasmtime::component::bindgen!({
    path: "wit/0.2.0",
    world: "toolhost:plugin/plugin",
    imports: { default: async },
    exports: { default: async },
});

pub use self::toolhost::plugin::host::Level;
pub use self::toolhost::plugin::tools::{CallError, ToolCall};
pub use self::toolhost::plugin::types::{Capabilities, Hints, ToolError, ToolOutput, ToolSpec};

impl From<CoreToolOutput> for ToolOutput {
    fn from(output: CoreToolOutput) -> Self {
        ToolOutput {
            json: output.content,
            text: output.text,
        }
    }
}

impl From<Error> for CallError {
    fn from(e: Error) -> Self {
        CallError {
            code: e.code().as_str().to_string(),
            message: e.message().to_string(),
        }
    }
}

impl self::toolhost::plugin::types::Host for SandboxState {}

impl self::toolhost::plugin::host::Host for SandboxState {
    async fn log(&mut self, level: Level, mut message: String, fields: Vec<(String, String)>) {
        if self.logs_left == 0 {
            self.logs_dropped = self.logs_dropped.saturating_add(1);
            return;
        }
        self.logs_left -= 1;
        truncate_utf8(&mut message, MAX_LOG_MESSAGE);
        let mut fields_text = String::new();
        for (k, v) in fields.iter().take(32) {
            fields_text.push_str(&format!(" {k}={v:?}"));
        }
        truncate_utf8(&mut fields_text, MAX_LOG_MESSAGE);
        if !self.log_budget.take(message.len() + fields_text.len() + 16) {
            self.logs_dropped = self.logs_dropped.saturating_add(1);
            return;
        }
        let component = self.hash.short();
        let tool = self.tool.as_deref().unwrap_or("-");
        let call_id = self.call_id;
        macro_rules! emit {
            ($lvl:ident) => {
                tracing::$lvl!(target: "toolhost::plugin", component, tool, call_id, fields = %fields_text, "{message}")
            };
        }
        match level {
            Level::Trace => emit!(trace),
            Level::Debug => emit!(debug),
            Level::Info => emit!(info),
            Level::Warn => emit!(warn),
            Level::Error => emit!(error),
        }
        // And to the caller, when it asked for the call's log (an MCP
        // client that set a level): within the same caps as above.
        if let Some(sink) = &self.ctx.log {
            let level = match level {
                Level::Trace | Level::Debug => LogLevel::Debug,
                Level::Info => LogLevel::Info,
                Level::Warn => LogLevel::Warning,
                Level::Error => LogLevel::Error,
            };
            if sink.wants(level) {
                sink.report(LogRecord {
                    level,
                    logger: self.tool.as_deref().map(str::to_string),
                    message,
                    fields: fields.into_iter().take(32).collect(),
                });
            }
        }
    }
}

impl self::toolhost::plugin::progress::Host for SandboxState {
    async fn report(&mut self, done: f64, total: Option<f64>, message: Option<String>) {
        let Some(sink) = &self.ctx.progress else {
            return;
        };
        let report = Progress { done, total, message };
        if let Some(report) = self.progress_gate.admit(report, Instant::now()) {
            sink.report(report);
        }
    }
}

impl self::toolhost::plugin::tools::Host for SandboxState {
    async fn call(&mut self, name: String, arguments: String) -> Result<ToolOutput, CallError> {
        self.nested_call(name, arguments)
            .await
            .map(Into::into)
            .map_err(Into::into)
    }

    async fn call_many(&mut self, calls: Vec<ToolCall>) -> Vec<Result<ToolOutput, CallError>> {
        let started: Vec<_> = calls
            .into_iter()
            .map(|c| self.nested_call(c.name, c.arguments))
            .collect();
        crate::sandbox::run_all(started)
            .await
            .into_iter()
            .map(|r| r.map(Into::into).map_err(Into::into))
            .collect()
    }
}

/// A nested call that passed the sandbox's checks, ready to run.
pub(crate) struct NestedCall {
    name: String,
    arguments: serde_json::Value,
    caller: ToolCallerHandle,
    ctx: CallContext,
}

impl NestedCall {
    /// Runs the call through the caller (the dispatch pipeline).
    pub(crate) fn run(self) -> BoxFuture<'static, Result<CoreToolOutput, Error>> {
        Box::pin(async move {
            self.caller
                .0
                .call_tool(&self.name, self.arguments, self.ctx)
                .await
        })
    }
}

impl SandboxState {
    /// Checks a nested call of tool `name` with `arguments` (JSON text) and
    /// returns the future that runs it (see [`SandboxState::prepare_nested`]);
    /// a refusal is a ready error.
    pub(crate) fn nested_call(
        &mut self,
        name: String,
        arguments: String,
    ) -> BoxFuture<'static, Result<CoreToolOutput, Error>> {
        match self.prepare_nested(name, &arguments) {
            Ok(call) => call.run(),
            Err(e) => Box::pin(std::future::ready(Err(e))),
        }
    }

    /// Checks a nested call of tool `name` with `arguments` (JSON text): it
    /// runs through the call's caller (the dispatch pipeline), in the call's
    /// session, with its remaining deadline, one level deeper.
    ///
    /// # Errors
    ///
    /// `capability_not_granted` when the tool is not both declared and
    /// granted, or the call has no caller; `blocked` past the depth limit or
    /// the call's `nested_calls`; `invalid_arguments` (only) when
    /// `arguments` is not JSON.
    pub(crate) fn prepare_nested(&mut self, name: String, arguments: &str) -> Result<NestedCall, Error> {
        if !self.callable_by_caller && !self.callable.contains(&name) {
            return Err(Error::new(
                ErrorCode::CapabilityNotGranted,
                format!(
                    "this plugin may not call the tool `{name}`: it must declare it (`tools` in its declaration: toolhost_sdk::capabilities! {{ tools: [\"{name}\"] }}, `declare()`, or `toolhost declare --tool {name}`) and be granted it (tools = [\"{name}\"] in its [plugins.grants])"
                ),
            ));
        }
        let Some(caller) = self.ctx.caller.clone() else {
            return Err(Error::new(
                ErrorCode::CapabilityNotGranted,
                "nested tool calls are only available to calls made through the dispatch pipeline",
            ));
        };
        if self.ctx.depth >= self.call_depth {
            return Err(Error::new(
                ErrorCode::Blocked,
                format!(
                    "tool calls may nest at most {} deep; `{name}` would be deeper",
                    self.call_depth
                ),
            ));
        }
        let Some(left) = self.nested_left.checked_sub(1) else {
            return Err(Error::new(
                ErrorCode::Blocked,
                format!(
                    "this call has started {} tool calls, the most one call may (`nested_calls`); `{name}` was not called",
                    self.nested_limit
                ),
            ));
        };
        self.nested_left = left;
        let arguments: serde_json::Value = toolhost_json::from_str(arguments).map_err(|e| {
            Error::new(
                ErrorCode::InvalidArguments,
                format!("the arguments for `{name}` are not JSON: {e}"),
            )
        })?;
        let ctx = CallContext {
            call_id: 0,
            parent_call_id: Some(self.ctx.call_id),
            session_id: self.ctx.session_id.clone(),
            session_continues: std::sync::Arc::clone(&self.ctx.session_continues),
            deadline: Some(self.deadline),
            cancel: self.ctx.cancel.child_token(),
            limits: Default::default(),
            depth: self.ctx.depth + 1,
            caller: Some(caller.clone()),
            progress: None,
            log: self.ctx.log.clone(),
            waiting: self.ctx.waiting.clone(),
            client: self.ctx.client.clone(),
        };
        Ok(NestedCall {
            name,
            arguments,
            caller,
            ctx,
        })
    }
}

impl From<Capabilities> for crate::capabilities::Declared {
    fn from(c: Capabilities) -> Self {
        crate::capabilities::Declared {
            dirs: c.dirs,
            env: c.env,
            tools: c.tools,
            http: c.http,
            secrets: c.secrets,
        }
    }
}
