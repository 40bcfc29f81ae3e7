//! The diagnostic tools of the suite's `server-stateless` scenario (MCP
//! 2026-07-28): one whose answer streams back on its own request, one that
//! logs. Neither needs anything of the host but what every tool has: the
//! checks are about what the server sends around them (no request of its
//! own on the response stream; no log record unless the request's `_meta`
//! asked for a level).

use schemars::JsonSchema;
use serde::Deserialize;
use toolhost_sdk::{Output, ToolError, log, progress};

/// Diagnostic tool validating response progress streams
#[derive(Deserialize, JsonSchema)]
pub struct StreamingElicitation {}

/// Reports progress half way, then answers `Streaming complete`.
pub fn test_streaming_elicitation(_: StreamingElicitation) -> Result<Output, ToolError> {
    progress(50.0, Some(100.0), None);
    Ok(Output::default().text("Streaming complete"))
}

/// Diagnostic logging validator tool
#[derive(Deserialize, JsonSchema)]
pub struct LoggingTool {}

/// Logs one record at `info`, sent only to a request that set a level.
pub fn test_logging_tool(_: LoggingTool) -> Result<Output, ToolError> {
    log::info("Diagnostic trace logging activated", &[]);
    Ok(Output::default().text("Logging evaluated"))
}
