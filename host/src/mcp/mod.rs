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
//! | what a server serves, a simple implementation | [`catalog`]: [`ToolCatalog`], [`LocalCatalog`] |
//! | the server, over stdio and streamable HTTP | [`server`]: [`McpServer`], [`serve_stdio`], [`serve_http`] |
//! | load/unload tools for `serve --admin` | [`admin`] |
//!
//! ```no_run
//! # async fn demo() -> toolhost::Result<()> {
//! use std::time::Duration;
//! use toolhost::mcp::{Audience, LocalCatalog, McpServer, serve_stdio};
//! use toolhost::{Engine, EngineConfig};
//!
//! let engine = Engine::new(EngineConfig::default())?;
//! let catalog = LocalCatalog::new(Audience::Trusted);
//! catalog.load_file(&engine, "hello.wasm".as_ref(), false).await?;
//! let shutdown = tokio_util::sync::CancellationToken::new();
//! serve_stdio(McpServer::new(catalog), shutdown, Duration::from_secs(5)).await?;
//! # Ok(()) }
//! ```

pub mod admin;
pub mod catalog;
pub mod client;
pub mod config;
pub mod naming;
pub mod server;
mod tool;

pub use catalog::{Audience, LocalCatalog, ToolCatalog};
pub use client::{McpConnection, McpState, McpTool};
pub use config::{McpConfig, McpServerConfig, McpTransport};
pub use server::{HttpOptions, McpServer, serve_http, serve_stdio};
