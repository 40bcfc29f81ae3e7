//! # toolhost
//!
//! Runs LLM-agent tools as sandboxed WebAssembly components. A plugin is a
//! component identified by the blake3 hash of its bytes; its tools join one
//! registry beside the application's own tools and tools bridged from MCP
//! servers, and every call runs in a fresh sandboxed instance under fuel,
//! memory, stack, deadline and output limits, with only the capabilities the
//! operator grants.
//!
//! An application holds a [`Host`], made by a [`HostBuilder`]:
//!
//! ```
//! # tokio::runtime::Runtime::new().unwrap().block_on(async {
//! use serde_json::json;
//! use toolhost::{Config, Host, PluginRequest, Session};
//!
//! # let dir = tempfile::tempdir().unwrap();
//! let mut config = Config::standard()?;
//! # config.base_dir = dir.path().to_path_buf();
//! let host = Host::builder().config(config).build().await?;
//! let session = Session::trusted("agent");
//! let now = host.call("current_datetime", json!({}), &session).await;
//! assert!(!now.is_error(), "{}", now.content);
//! # Ok::<(), toolhost::Error>(())
//! # }).unwrap();
//! ```
//!
//! | to | use |
//! |---|---|
//! | build a host: config, engine, own tools, approvals, plugins, MCP servers | [`Host`], [`HostBuilder`], [`Config`], [`EngineConfig`] |
//! | load and unload plugins while it runs, from files, registries or memory | [`Host::load`], [`PluginRequest`], [`admission`], [`live`], [`standard`] |
//! | register the application's own tools | [`Tool`], [`FnTool`], [`ToolSpec`], [`ToolOutput`], [`CallContext`] |
//! | call tools, watch calls | [`Host::call`], [`Session`], [`ToolResult`], [`Host::subscribe`], [`ToolCallEvent`] |
//! | answer approvals | [`ApprovalCallback`], [`ApprovalRequest`], [`ApprovalOutcome`], [`Choice`] |
//! | bridge MCP servers, serve MCP | [`McpServerConfig`], [`Host::serve_stdio`], [`Host::serve_http`], [`HttpOptions`] |
//! | grant capabilities | [`Grants`], [`DirGrant`], [`DirMode`] |
//! | run one component on its own | [`Engine`], [`LoadOptions`], [`LoadedComponent`] |
//! | errors | [`Error`], [`ErrorCode`], [`Result`] |
//!
//! Everything else (the registry, dispatcher, sandbox, detector, MCP
//! server, distribution layers) is under [`internal`], with no stability
//! promise.
#![deny(missing_docs)]

pub mod admission;
pub mod config;
mod host;
pub mod internal;
pub mod live;
pub mod standard;

// The crate's own code names the layers by these paths.
use internal::{
    approval, bounded, capabilities, codemode, component, dispatch, distribution, engine, error, exec,
    identity, limits, mcp, redact, registry, spill, toolsets,
};

pub use admission::{Place, PluginRequest, Via};
pub use config::{Config, PluginStatus};
pub use host::{Host, HostBuilder};
pub use toolhost_core::dispatch::{
    CallOutcome, DispatchContext, Session, ToolCall, ToolCallEvent, ToolResult,
};
pub use toolhost_core::registry::{
    BoxFuture, CallContext, FnTool, Registration, Tool, ToolAudience, ToolHints, ToolOutput, ToolSpec,
};
pub use toolhost_core::{ComponentHash, Error, ErrorCode, Limits, LimitsOverride, Result};
pub use toolhost_exec::approval::{ApprovalCallback, ApprovalOutcome, ApprovalRequest, Choice};
pub use toolhost_mcp::{HttpOptions, McpServerConfig, McpTransport};
pub use toolhost_runtime::capabilities::{DirGrant, DirMode, Grants};
pub use toolhost_runtime::{Engine, EngineConfig, LoadOptions, LoadedComponent};
