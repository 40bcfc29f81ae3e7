//! # The layers beneath the facade
//!
//! Everything toolhost is made of, for the `toolhost` binary, its tests and
//! benchmarks, and applications that need a part the facade does not
//! offer: the registry and dispatcher, the sandbox engine and its WIT
//! bindings, capabilities, outbound HTTP, the dangerous-command detector
//! and exec backends, the MCP bridge and server, codemode, distribution,
//! and the binary's own pieces (the admin tools, `toolhost bench`, the
//! glibc advice). **No stability promise**: these paths change as the
//! layers do; the facade at the crate root is what the crate keeps.
//!
//! | crate | holds | here as |
//! |---|---|---|
//! | `toolhost-core` | errors, identity, limits, bounded file reads, the `Tool` trait, the registry, toolsets, dispatch, progress, logging, content blocks, client requests, spill, redaction | [`error`], [`identity`], [`limits`], [`bounded`], [`registry`], [`toolsets`], [`dispatch`], [`progress`], [`logging`], [`content`], [`client`], [`spill`], [`redact`], [`text`] |
//! | `toolhost-runtime` | the engine, compile cache, WIT bindings, components, the sandbox, capabilities, outbound HTTP, the bare-wasmtime floor | [`engine`], [`cache`], [`bindings`], [`component`], [`sandbox`], [`capabilities`], [`http`], [`floor`] |
//! | `toolhost-exec` (with `toolhost-detector`) | the approval gate and the detector, exec backends, background processes, receipts | [`approval`], [`exec`] |
//! | `toolhost-mcp` | the MCP bridge and server, elicitation approvals | [`mcp`] |
//! | `toolhost-codemode` | `run_tools_script` | [`codemode`] |
//! | `toolhost-distribution` | OCI push and pull, minisign signatures, the pull cache | [`distribution`] |
//! | `toolhost` | the admin tools, `toolhost bench`, the glibc advice | [`admin`], [`bench`], [`glibc`] |

pub mod admin;
pub mod bench;
pub mod glibc;

pub use toolhost_codemode as codemode;
pub use toolhost_core::{
    bounded, client, content, error, identity, limits, logging, progress, redact, spill, text, toolsets,
};
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
/// into it (`toolhost_mcp`). Plugins come in through
/// [`admission`](crate::admission).
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
