//! Bindings of `toolhost:plugin/plugin@0.1.0` (frozen). Its host functions
//! adapt into the newest version's ([`super::latest`]); its exports' types
//! convert into the newest's.
#![allow(missing_docs, reason = "generated code; the WIT documents every item")]

use super::latest;
use crate::sandbox::SandboxState;
use toolhost_core::error::ErrorCode;

wasmtime::component::bindgen!({
    path: "wit/0.1.0",
    world: "toolhost:plugin/plugin",
    imports: { default: async },
    exports: { default: async },
});

use self::toolhost::plugin::host::Level;
use self::toolhost::plugin::types::{Hints, ToolError, ToolSpec};

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
            output_schema: None,
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

/// 0.1.0's five levels in MCP's eight: `trace` is `debug`, `warn` is
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

impl self::toolhost::plugin::types::Host for SandboxState {}

impl self::toolhost::plugin::host::Host for SandboxState {
    async fn log(&mut self, level: Level, message: String, fields: Vec<(String, String)>) {
        latest::toolhost::plugin::host::Host::log(self, level.into(), message, fields).await
    }
}

impl self::toolhost::plugin::tools::Host for SandboxState {
    /// 0.1.0's shape: arguments that are not JSON are `invalid-arguments`;
    /// any other refusal or failure is `failed`, whose message is the host's
    /// error object as JSON text (`{"error": ..., "error_code": ...}`).
    async fn call(&mut self, name: String, arguments: String) -> Result<String, ToolError> {
        let failed = |e: toolhost_core::Error| ToolError::Failed(e.to_json().to_string());
        let call = match self.prepare_nested(name, &arguments) {
            Ok(call) => call,
            Err(e) if e.code() == ErrorCode::InvalidArguments => {
                return Err(ToolError::InvalidArguments(e.message().to_string()));
            }
            Err(e) => return Err(failed(e)),
        };
        call.run().await.map(|output| output.content).map_err(failed)
    }
}
