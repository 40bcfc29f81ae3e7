//! # MCP: bridging servers in, serving tools out
//!
//! toolhost speaks the Model Context Protocol on both sides, through the
//! official Rust SDK, rmcp.
//!
//! | concept | where |
//! |---|---|
//! | `[[mcp.servers]]` entries | [`config`]: [`McpConfig`], [`McpServerConfig`] |
//! | `mcp__SERVER__TOOL` names, collisions | [`naming`] |
//! | a remote tool as a [`Tool`](crate::registry::Tool), the connection manager | [`client`]: [`McpTool`], [`McpConnection`] |
//! | bridged servers kept in step with the registry | [`bridge`]: [`McpBridge`], [`Dispatcher::connect_mcp`](crate::dispatch::Dispatcher::connect_mcp) |
//! | the registry served over stdio and streamable HTTP | [`server`]: [`McpServer`], [`serve_stdio`], [`serve_http`] |
//! | approvals asked of the client (elicitation) | [`approval`]: [`McpApprover`] |
//! | load/unload components for `serve --admin` | [`admin`] |
//!
//! ```no_run
//! # async fn demo() -> toolhost::Result<()> {
//! use std::time::Duration;
//! use toolhost::config::Config;
//! use toolhost::mcp::{McpServer, serve_stdio};
//! use toolhost::registry::{Registry, ToolAudience};
//! use toolhost::{Engine, EngineConfig};
//!
//! // The config's built-ins, plugins and [[mcp.servers]], in one registry...
//! let engine = Engine::new(EngineConfig::default())?;
//! let config = Config::load("toolhost.toml".as_ref())?;
//! let dispatcher = config.dispatcher(&engine, Registry::new()).await?;
//! // ...served to a trusted MCP client on stdin and stdout.
//! let shutdown = tokio_util::sync::CancellationToken::new();
//! let server = McpServer::new(dispatcher, ToolAudience::Trusted);
//! serve_stdio(server, shutdown, Duration::from_secs(5)).await?;
//! # Ok(()) }
//! ```

pub mod admin;
pub mod approval;
pub mod bridge;
pub mod client;
pub mod config;
pub mod framing;
pub mod naming;
pub mod origin;
pub mod server;
mod tool;

pub use approval::McpApprover;
pub use bridge::{McpBridge, McpServerStatus};
pub use client::{McpConnection, McpState, McpTool};
pub use config::{McpConfig, McpServerConfig, McpTransport};
pub use server::{HttpOptions, McpServer, serve_http, serve_stdio};
