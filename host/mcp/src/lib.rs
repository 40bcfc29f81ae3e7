//! # toolhost-mcp: bridging servers in, serving tools out
//!
//! toolhost speaks the Model Context Protocol on both sides, through the
//! official Rust SDK, rmcp. It knows the core's registry and dispatcher and
//! the approval flow's callback, and nothing of WebAssembly.
//!
//! | concept | where |
//! |---|---|
//! | `[[mcp.servers]]` entries | [`config`]: [`McpConfig`], [`McpServerConfig`] |
//! | `mcp__SERVER__TOOL` names, collisions | [`naming`] |
//! | a remote tool as a [`Tool`](toolhost_core::registry::Tool), the connection manager | [`client`]: [`McpTool`], [`McpConnection`] |
//! | a bridged stdio server's process and pipes, read within bounds | [`child`] |
//! | a bridged server's prompts and resources as registry entries | [`remote_catalog`] |
//! | a bridged request's rounds: its questions relayed to the call's client | [`relay`] |
//! | bridged servers kept in step with a dispatcher's registry | [`bridge`]: [`McpBridge`], [`McpDispatcher::connect_mcp`] |
//! | a lazy server's two tools, `list_tools` and `call_tool` | [`lazy`] |
//! | signing in to bridged servers with OAuth (`toolhost mcp login`, tokens kept and refreshed) | [`oauth`] |
//! | the registry served as an MCP server, over stdio | [`server`]: [`McpServer`], [`serve_stdio`] |
//! | the same over streamable HTTP, with what one client may hold | [`http`]: [`serve_http`], [`HttpOptions`] |
//! | every malformed request answered; the one bounded line reader | [`framing`] |
//! | browser origins | [`origin`] |
//! | OAuth access tokens (JWTs), the protected-resource metadata, scopes as grants | [`auth`]: [`auth::AuthConfig`], [`auth::JwtVerifier`] |
//! | approvals asked of the client (elicitation, or a 2026-07-28 client's input request) | [`approval`]: [`McpApprover`] |
//! | the operator's console at `/console`: calls, plugins, servers, approvals waiting, the audit log | [`console`]: [`console::Console`], [`console::PendingApprovals`] |
//! | a 2026-07-28 request's questions: multi-round-trip results | [`round_trip`]: [`RoundTrips`] |
//! | the sealed `requestState` they carry | [`request_state`]: [`StateSealer`], [`StateKey`] |
//! | a call's own questions to its client (elicitation, sampling) | [`asking`]: [`PeerClient`] |
//! | prompts, resources, subscriptions and completions served | `catalog` (used by [`server`]) |
//! | what replicas share: one-time request states, tasks | [`store`]: [`Store`], [`MemoryStore`] |
//! | long calls as tasks (MCP's tasks extension), shared by replicas | [`tasks`]: [`Tasks`], [`TaskOptions`] |
//! | the store in Redis or Valkey, for replicas | [`redis_store`]: [`RedisStore`] |
//!
//! ```no_run
//! # async fn demo() -> toolhost_core::Result<()> {
//! use std::time::Duration;
//! use serde_json::json;
//! use toolhost_core::dispatch::Dispatcher;
//! use toolhost_core::registry::{FnTool, Registry, ToolAudience, ToolOutput, ToolSpec};
//! use toolhost_mcp::{McpServer, serve_stdio};
//!
//! // A registry with one tool...
//! let mut registry = Registry::new();
//! registry.register(FnTool::new(
//!     ToolSpec::new("echo", "Echoes its arguments.", json!({"type": "object"})),
//!     |args, _| async move { Ok(ToolOutput::json(&args)) },
//! ))?;
//! let dispatcher = Dispatcher::builder(registry).build()?;
//! // ...served to a trusted MCP client on stdin and stdout.
//! let shutdown = tokio_util::sync::CancellationToken::new();
//! let server = McpServer::new(dispatcher, ToolAudience::Trusted);
//! serve_stdio(server, shutdown, Duration::from_secs(5)).await?;
//! # Ok(()) }
//! ```
#![deny(missing_docs)]

pub mod approval;
pub mod asking;
pub mod auth;
pub mod bridge;
mod catalog;
pub mod child;
pub mod client;
pub mod config;
pub mod console;
pub mod framing;
pub mod http;
pub mod lazy;
mod listen;
mod logging;
pub mod naming;
pub mod oauth;
pub mod origin;
pub mod redis_store;
pub mod relay;
pub mod remote_catalog;
pub mod request_state;
pub mod round_trip;
pub mod server;
pub mod store;
pub mod tasks;
mod tool;

pub use approval::McpApprover;
pub use asking::PeerClient;
pub use bridge::{McpBridge, McpDispatcher, McpServerStatus};
pub use client::{McpConnection, McpState, McpTool};
pub use config::{McpConfig, McpOAuth, McpServerConfig, McpTransport, OAuthGrant};
pub use http::{HttpOptions, MetricsFn, StatusFn, serve_http};
pub use redis_store::{RedisOptions, RedisStore};
pub use request_state::{StateKey, StateSealer};
pub use round_trip::RoundTrips;
pub use server::{McpServer, serve_stdio};
pub use store::{MemoryStore, Store, StoreError};
pub use tasks::{TaskError, TaskOptions, Tasks};
