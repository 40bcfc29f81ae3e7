//! # toolhost-runtime
//!
//! Runs plugins: WebAssembly components implementing the WIT world in
//! `wit/`, each call in a fresh sandboxed instance. It knows the core's
//! registry and limits, and nothing of MCP, shell commands or approvals.
//!
//! | concept | where |
//! |---|---|
//! | the shared engine, its epoch ticker, pooling, stack tiers | [`engine`] |
//! | the on-disk compilation cache | [`cache`] |
//! | the WIT world bindings, one module per version | [`bindings`] |
//! | loading, checking, calling and registering a component | [`component`] |
//! | the per-call sandbox: WASI, limiter, captured output, the linker | [`sandbox`] |
//! | capabilities: declared by a component, granted by the operator | [`capabilities`] |
//! | outbound HTTP: host policy, secrets, budgets | [`http`] |
//! | the bare-wasmtime floor benchmarks compare against | [`floor`] |
//!
//! ```no_run
//! # async fn demo() -> toolhost_core::Result<()> {
//! use toolhost_runtime::{Engine, EngineConfig};
//!
//! let engine = Engine::new(EngineConfig::default())?;
//! let hello = engine.load_file("hello.wasm".as_ref(), Default::default()).await?;
//! let outcome = hello.call("greet", r#"{"name":"Ada"}"#, &Default::default(), None, 1).await;
//! assert_eq!(outcome.result?.content, r#""Hello, Ada!""#);
//! # Ok(()) }
//! ```
#![deny(missing_docs)]

pub mod bindings;
pub mod cache;
pub mod capabilities;
pub mod component;
pub mod engine;
pub mod floor;
mod gate;
pub mod http;
pub mod sandbox;

pub use component::{
    ComponentProbe, ComponentRegistration, LoadOptions, LoadedComponent, RegisterComponent, ToolCalls,
    WasmTool,
};
pub use engine::{Engine, EngineConfig};
