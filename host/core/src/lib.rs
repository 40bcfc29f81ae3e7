//! # toolhost-core
//!
//! The layer every other toolhost crate builds on, with no WebAssembly, MCP
//! or shell in it: what a tool is, where tools are kept, and the one path
//! every call takes.
//!
//! | concept | where |
//! |---|---|
//! | reading untrusted files: regular files only, capped, off the async workers | [`bounded`] |
//! | errors and their codes | [`error`] |
//! | a component's identity (blake3 of its bytes) | [`identity`] |
//! | every sandbox limit and its default, usage, load-time claims, log budgets | [`limits`] |
//! | the WIT-free [`Tool`](registry::Tool) trait, the registry, tool names | [`registry`] |
//! | named bundles of tools | [`toolsets`] |
//! | sessions and the call pipeline: hooks, the call gate, events, batches, lazy mode | [`dispatch`] |
//! | the calls in flight and the last ones finished, for an operator's console | [`call_log`] |
//! | rich content (images, audio, resources) beside a result's JSON | [`content`] |
//! | asking the caller's client: elicitation and sampling | [`client`] |
//! | progress reports of long calls | [`progress`] |
//! | a call's log records, for its caller | [`logging`] |
//! | spilling large results to files | [`spill`] |
//! | redacting secrets from text | [`redact`] |
//! | text helpers | [`text`] |
//! | a caller's W3C trace context, carried into nested and bridged calls | [`trace`] |
//! | OpenTelemetry spans of calls and their steps | [`spans`] |
//!
//! ```
//! # tokio::runtime::Runtime::new().unwrap().block_on(async {
//! use serde_json::json;
//! use toolhost_core::dispatch::{DispatchContext, Dispatcher, Session};
//! use toolhost_core::registry::{FnTool, Registry, ToolOutput, ToolSpec};
//!
//! let mut registry = Registry::new();
//! registry.register(FnTool::new(
//!     ToolSpec::new("echo", "Echoes.", json!({"type": "object"})),
//!     |args, _| async move { Ok(ToolOutput::json(&args)) },
//! )).unwrap();
//! let dispatcher = Dispatcher::builder(registry).build().unwrap();
//! let ctx = DispatchContext::new(Session::trusted("demo"));
//! assert_eq!(dispatcher.dispatch("echo", json!({"a": 1}), &ctx).await.content, r#"{"a":1}"#);
//! # });
//! ```
#![deny(missing_docs)]

pub mod audit;
pub mod bounded;
pub mod call_log;
pub mod client;
pub mod content;
pub mod dispatch;
pub mod error;
pub mod identity;
pub mod limits;
pub mod logging;
pub mod metrics;
pub mod progress;
pub mod redact;
pub mod registry;
pub mod span_recorder;
pub mod spans;
pub mod spill;
pub mod text;
pub mod toolsets;
pub mod trace;

pub use error::{Error, ErrorCode, Result};

/// A map on a call's path whose keys the host itself makes (names it has,
/// its own call ids): hashed with foldhash, seeded per process, rather
/// than SipHash, which is built to stand keys an attacker picks and costs
/// several times more a lookup.
pub(crate) type FastMap<K, V> = std::collections::HashMap<K, V, foldhash::fast::RandomState>;
pub use identity::ComponentHash;
pub use limits::{Limits, LimitsOverride};
