//! # toolhost-codemode
//!
//! The seed's codemode: `run_tools_script` lets the model write one short
//! Python script instead of a tool call per step. The script calls other
//! tools, combines and filters their results, and returns only what
//! matters; independent calls run at once with `asyncio.gather`.
//!
//! | piece | where |
//! |---|---|
//! | `[tools.codemode]`: `enabled`, `timeout_seconds`, `max_tool_calls`, `max_memory_mb`, `max_output_chars`, `exclude` | [`config`] |
//! | the tool: a fresh instance of the interpreter component per script, the clock, the result | [`RunToolsScript`] |
//! | what a script may call, and how its calls are counted and gated | [`RunToolsScript::callable`] |
//! | one-line signatures from JSON Schemas, Python names | [`signature`] |
//! | result shape, error codes, cutting output and value | [`report`] |
//!
//! The interpreter is Pydantic's Monty compiled into the first-party
//! component `plugins/codemode`, loaded with
//! [`ToolCalls::Caller`](toolhost_runtime::ToolCalls::Caller): only this
//! tool's own instance may call "whatever the session can see", and only
//! through the caller each script gets, which admits the session's visible
//! tools minus [`NEVER_CALLABLE`] and `exclude`, counts them, and sends them
//! through the dispatch pipeline (audience, toolsets, validation, approvals
//! with their elicitation, hooks, events with `parent_call_id` set to the
//! script's call). Nested results are not spilled.
//!
//! Crate layering: this crate builds on `toolhost-core` and
//! `toolhost-runtime` only (no MCP, no shell).
#![deny(missing_docs)]

mod caller;
pub mod config;
pub mod report;
pub mod signature;
mod tool;

pub use config::CodemodeConfig;
pub use tool::{
    FUEL_PER_SECOND, INTERPRETER_OVERHEAD_MB, MAX_APPROVAL_PAUSE, NAME, NEVER_CALLABLE, RunToolsScript,
};
