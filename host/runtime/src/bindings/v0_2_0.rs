//! Bindings of `toolhost:plugin/plugin@0.2.0` (frozen). Its host functions
//! adapt into the newest version's ([`super::latest`]); its exports' types
//! convert into the newest's.
//!
//! The `plugin-wasi` world is the `plugin` world plus WASI interfaces the
//! linker provides anyway, with the same exports: a component of either
//! world is served by these bindings.
#![allow(missing_docs, reason = "generated code; the WIT documents every item")]

use super::latest;
use crate::sandbox::SandboxState;
use toolhost_core::error::Error;
use toolhost_core::registry::ToolOutput as CoreToolOutput;

wasmtime::component::bindgen!({
    path: "wit/0.2.0",
    world: "toolhost:plugin/plugin",
    imports: { default: async },
    exports: { default: async },
});

pub use self::toolhost::plugin::host::Level;
pub use self::toolhost::plugin::tools::{CallError, ToolCall};
pub use self::toolhost::plugin::types::{Capabilities, Hints, ToolError, ToolOutput, ToolSpec};

/// A nested call's result as 0.2.0 had it: the JSON and the text, as the
/// host carries them.
impl From<CoreToolOutput> for ToolOutput {
    fn from(output: CoreToolOutput) -> Self {
        ToolOutput {
            json: output.content,
            text: output.text,
        }
    }
}

/// A result of 0.2.0 in the newest types: its JSON as the structured
/// result (any JSON value, as 0.2.0 allowed), its text as one text block.
impl From<ToolOutput> for latest::ToolOutput {
    fn from(output: ToolOutput) -> Self {
        latest::ToolOutput {
            structured: Some(output.json),
            content: output
                .text
                .into_iter()
                .map(|text| latest::ContentBlock {
                    content: latest::Content::Text(text),
                    annotations: None,
                })
                .collect(),
        }
    }
}

impl From<ToolSpec> for latest::ToolSpec {
    fn from(spec: ToolSpec) -> Self {
        let Hints {
            read_only,
            destructive,
            idempotent,
            open_world,
        } = spec.hints;
        latest::ToolSpec {
            name: spec.name,
            title: None,
            description: spec.description,
            parameters: spec.parameters,
            output_schema: spec.output_schema,
            hints: latest::Hints {
                read_only,
                destructive,
                idempotent,
                open_world,
            },
        }
    }
}

impl From<ToolError> for latest::ToolError {
    fn from(e: ToolError) -> Self {
        match e {
            ToolError::InvalidArguments(m) => latest::ToolError::InvalidArguments(m),
            ToolError::Failed(m) => latest::ToolError::Failed(m),
        }
    }
}

impl From<Capabilities> for latest::Capabilities {
    fn from(c: Capabilities) -> Self {
        latest::Capabilities {
            dirs: c.dirs,
            env: c.env,
            http: c.http,
            secrets: c.secrets,
            tools: c.tools,
            elicitation: false,
            sampling: false,
        }
    }
}

/// 0.2.0's five levels in MCP's eight: `trace` is `debug`, `warn` is
/// `warning`.
impl From<Level> for latest::Level {
    fn from(level: Level) -> Self {
        match level {
            Level::Trace | Level::Debug => latest::Level::Debug,
            Level::Info => latest::Level::Info,
            Level::Warn => latest::Level::Warning,
            Level::Error => latest::Level::Error,
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
    async fn log(&mut self, level: Level, message: String, fields: Vec<(String, String)>) {
        latest::toolhost::plugin::host::Host::log(self, level.into(), message, fields).await
    }
}

impl self::toolhost::plugin::progress::Host for SandboxState {
    async fn report(&mut self, done: f64, total: Option<f64>, message: Option<String>) {
        latest::toolhost::plugin::progress::Host::report(self, done, total, message).await
    }
}

impl self::toolhost::plugin::tools::Host for SandboxState {
    /// The newest version's nested call, its result as 0.2.0 had it (the
    /// host's JSON and text, whatever content blocks the called tool gave).
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
