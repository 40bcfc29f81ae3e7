//! # toolhost-exec
//!
//! Shell commands for agents, and the approval flow that guards them (and
//! any other tool the operator names). It knows the core and the detector,
//! and nothing of WebAssembly or MCP.
//!
//! | type | role |
//! | --- | --- |
//! | [`approval`] | the approval gate (a core [`CallGate`](toolhost_core::dispatch::CallGate)), allowlists, prompts, the smart approver |
//! | [`ExecTool`], [`ProcessTool`] | the `exec` and `process` built-ins |
//! | [`ExecRequest`] → [`ExecResult`] | one command: `sh -c`, cwd, environment allowlist, timeout, output cap |
//! | [`Backend`] | where it runs: [`LocalBackend`], [`SandboxBackend`] (bubblewrap), [`SshBackend`] |
//! | [`BackgroundManager`] | background processes: start, poll, read output, kill |
//! | [`ReceiptStore`], [`Receipt`] | one atomic result file per finished background process |
//!
//! Guarantees of every backend: the command runs in its own process group;
//! on timeout, on completion (leftover background children) and when the
//! future is dropped, the whole group is killed with SIGKILL. The
//! environment is not inherited (see [`ExecRequest`]). Output beyond the
//! cap keeps its head and tail around a `[... N bytes cut ...]` marker.
//!
//! ```no_run
//! use toolhost_exec::{Backend, ExecRequest, LocalBackend};
//!
//! # async fn demo() -> Result<(), toolhost_exec::ExecError> {
//! let result = LocalBackend::default().run(&ExecRequest::new("echo hi")).await?;
//! assert_eq!(result.stdout, "hi\n");
//! # Ok(()) }
//! ```

#![deny(missing_docs)]

pub mod approval;
mod backend;
mod background;
mod output;
mod receipts;
mod request;
mod runner;
mod ssh;
mod tool;

pub use backend::{Backend, LocalBackend, SandboxBackend};
pub use background::{BackgroundManager, LIVE_LOG_BYTES, OutputChunk, ProcState};
pub use output::cut_marker;
pub use receipts::{Caller, Receipt, ReceiptStore};
pub use request::{DEFAULT_PATH, ExecError, ExecRequest, ExecResult};
pub use runner::{Prepared, find_program};
pub use ssh::{HostKeyCheck, SshBackend, shell_quote};
pub use tool::{ExecSettings, ExecTool, ProcessTool};
