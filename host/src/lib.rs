//! # toolhost
//!
//! Runs LLM-agent tools as sandboxed WebAssembly components.
//!
//! | concept | where |
//! |---|---|
//! | a component's identity (blake3 of its bytes) | [`identity`] |
//! | the shared engine, its epoch ticker, pooling | [`engine`] |
//! | the on-disk compilation cache | [`cache`] |
//! | loading, checking and calling a component | [`component`] |
//! | the per-call sandbox: WASI, limiter, captured output | [`sandbox`] |
//! | every sandbox limit and its default | [`limits`] |
//! | capabilities: declared by a component, granted by the operator | [`capabilities`] |
//! | outbound HTTP: host policy, secrets, budgets | [`http`] |
//! | the WIT world bindings, one module per version | [`bindings`] |
//! | the WIT-free `Tool` trait and the registry | [`registry`] |
//! | spilling large results to files | [`spill`] |
//! | dangerous-command detection and the approval flow | [`approval`] |
//! | running commands: local, bubblewrap sandbox, ssh; background processes | [`exec`] |
//! | redacting secrets from command lines, outputs and receipts | [`redact`] |
//! | named bundles of tools | [`toolsets`] |
//! | the call pipeline, hooks, events, batches | [`dispatch`] |
//! | the `toolhost.toml` configuration | [`config`] |
//! | MCP: servers bridged into the registry, the registry served out | [`mcp`] |
//! | errors and their codes | [`error`] |
//!
//! ```no_run
//! # async fn demo() -> toolhost::Result<()> {
//! use toolhost::engine::{Engine, EngineConfig};
//!
//! let engine = Engine::new(EngineConfig::default())?;
//! let hello = engine.load_file("hello.wasm".as_ref(), Default::default()).await?;
//! let outcome = hello.call("greet", r#"{"name":"Ada"}"#, &Default::default(), None, 1).await;
//! assert_eq!(outcome.result?, r#""Hello, Ada!""#);
//! # Ok(()) }
//! ```
#![deny(missing_docs)]

pub mod approval;
pub mod bindings;
pub mod cache;
pub mod capabilities;
pub mod component;
pub mod config;
pub mod dispatch;
pub mod engine;
pub mod error;
pub mod exec;
pub mod http;
pub mod identity;
pub mod limits;
pub mod mcp;
pub mod redact;
pub mod registry;
pub mod sandbox;
pub mod spill;
pub mod toolsets;

pub use component::{LoadOptions, LoadedComponent, WasmTool};
pub use engine::{Engine, EngineConfig};
pub use error::{Error, ErrorCode, Result};
pub use identity::ComponentHash;
pub use limits::{Limits, LimitsOverride};
