//! # The tool registry
//!
//! Holds every tool the host offers, whatever its source.

mod tool;

pub use tool::{
    BlockingFnTool, BoxFuture, CallContext, CallId, FnTool, Tool, ToolCaller, ToolCallerHandle, ToolHints,
    ToolOutput, ToolSpec, Usage,
};
