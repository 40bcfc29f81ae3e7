//! # toolhost
//!
//! Runs LLM-agent tools as sandboxed WebAssembly components. This crate
//! composes the layers (the one place that does: [`config`]) and re-exports
//! them, so that an application needs only `toolhost`:
//!
//! | crate | holds | here as |
//! |---|---|---|
//! | `toolhost-core` | errors, identity, limits, bounded file reads, the `Tool` trait, the registry, toolsets, dispatch, progress, spill, redaction | [`error`], [`identity`], [`limits`], [`bounded`], [`registry`], [`toolsets`], [`dispatch`], [`progress`], [`spill`], [`redact`] |
//! | `toolhost-runtime` | the engine, compile cache, WIT bindings, components, the sandbox, capabilities, outbound HTTP, the bare-wasmtime floor | [`engine`], [`cache`], [`bindings`], [`component`], [`sandbox`], [`capabilities`], [`http`], [`floor`] |
//! | `toolhost-detector` | the dangerous-command detector | [`approval`] (re-exported there) |
//! | `toolhost-exec` | the approval gate, exec backends, background processes, receipts | [`approval`], [`exec`] |
//! | `toolhost-mcp` | the MCP bridge and server, elicitation approvals | [`mcp`] |
//! | `toolhost-codemode` | `run_tools_script`: Python scripts calling tools, in a sandboxed interpreter component | [`codemode`] |
//! | `toolhost-distribution` | OCI push and pull (CNCF Wasm layout), minisign signatures, the pull cache | [`distribution`] |
//! | `toolhost` | the one admission every plugin passes, the plugins a running host serves (reloads, the plugins folder), the `toolhost.toml` configuration, the admin tools, `toolhost bench`, the `toolhost` binary (and the advice for a slow glibc `memcpy`) | [`admission`], [`live`], [`config`], [`admin`], [`bench`], [`glibc`] |
//!
//! ```no_run
//! # async fn demo() -> toolhost::Result<()> {
//! use toolhost::engine::{Engine, EngineConfig};
//!
//! let engine = Engine::new(EngineConfig::default())?;
//! let hello = engine.load_file("hello.wasm".as_ref(), Default::default()).await?;
//! let outcome = hello.call("greet", r#"{"name":"Ada"}"#, &Default::default(), None, 1).await;
//! assert_eq!(outcome.result?.content, r#""Hello, Ada!""#);
//! # Ok(()) }
//! ```
#![deny(missing_docs)]

pub mod admin;
pub mod admission;
pub mod bench;
pub mod config;
pub mod glibc;
pub mod live;

pub use toolhost_codemode as codemode;
pub use toolhost_core::{bounded, error, identity, limits, progress, redact, spill, text, toolsets};
pub use toolhost_distribution as distribution;
pub use toolhost_exec::approval;
pub use toolhost_mcp as mcp;
pub use toolhost_runtime::{bindings, cache, capabilities, component, engine, floor, http, sandbox};

/// The registry (`toolhost_core::registry`), with registering a
/// component's tools (`toolhost_runtime`).
pub mod registry {
    pub use toolhost_core::registry::*;
    pub use toolhost_runtime::component::{ComponentRegistration, RegisterComponent};
}

/// The dispatcher (`toolhost_core::dispatch`), with bridging MCP servers
/// into it (`toolhost_mcp`). Plugins come in through [`admission`].
pub mod dispatch {
    pub use toolhost_core::dispatch::*;
    pub use toolhost_mcp::McpDispatcher;
}

/// Shell commands: backends, the `exec` and `process` tools, background
/// processes and receipts (`toolhost_exec`).
pub mod exec {
    pub use toolhost_exec::{
        Backend, BackgroundManager, Caller, DEFAULT_PATH, ExecError, ExecRequest, ExecResult, ExecSettings,
        ExecTool, HostKeyCheck, LIVE_LOG_BYTES, LocalBackend, OutputChunk, Prepared, ProcState, ProcessTool,
        Receipt, ReceiptStore, SandboxBackend, SshBackend, cut_marker, find_program, shell_quote,
    };
}

pub use toolhost_core::{ComponentHash, Error, ErrorCode, Limits, LimitsOverride, Result};
pub use toolhost_runtime::{Engine, EngineConfig, LoadOptions, LoadedComponent, WasmTool};
