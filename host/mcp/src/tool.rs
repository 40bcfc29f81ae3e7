//! # A remote tool as a registry tool
//!
//! [`McpTool`] is one tool of a bridged MCP server (see [`client`](super::client)):
//! its spec under the bridged name, the server's annotations kept whole, and
//! calls sent to whichever connection to the server is current.

use std::time::{Duration, Instant};

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, InputRequest, RequestParamsMeta,
    Tool as RemoteTool, ToolAnnotations,
};
use rmcp::{Peer, RoleClient, ServiceError};
use serde_json::Value;
use tokio::sync::watch;

use super::config::McpServerConfig;
use toolhost_core::content::ContentBlock;
use toolhost_core::error::{Error, ErrorCode, Result};
use toolhost_core::registry::{BoxFuture, CallContext, TaskSupport, Tool, ToolHints, ToolOutput, ToolSpec};

/// The connection a tool calls through: `None` while the server is down.
pub(super) type PeerSlot = watch::Receiver<Option<Peer<RoleClient>>>;

/// A tool of an MCP server, as a registry [`Tool`].
pub struct McpTool {
    spec: ToolSpec,
    server: String,
    remote_name: String,
    annotations: Option<ToolAnnotations>,
    timeout: Duration,
    peer: PeerSlot,
}

impl std::fmt::Debug for McpTool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpTool")
            .field("name", &self.spec.name)
            .field("server", &self.server)
            .field("remote_name", &self.remote_name)
            .finish_non_exhaustive()
    }
}

impl McpTool {
    /// The `[[mcp.servers]]` name of its server (the `Mcp { server }` source).
    pub fn server(&self) -> &str {
        &self.server
    }

    /// Its name on the server.
    pub fn remote_name(&self) -> &str {
        &self.remote_name
    }

    /// The server's annotations, kept whole (the title too).
    pub fn annotations(&self) -> Option<&ToolAnnotations> {
        self.annotations.as_ref()
    }

    pub(super) fn from_remote(
        config: &McpServerConfig,
        name: String,
        remote: RemoteTool,
        peer: PeerSlot,
    ) -> McpTool {
        let hints = remote
            .annotations
            .as_ref()
            .map(|a| ToolHints {
                read_only: a.read_only_hint,
                destructive: a.destructive_hint,
                idempotent: a.idempotent_hint,
                open_world: a.open_world_hint,
            })
            .unwrap_or_default();
        let description = remote.description.as_deref().unwrap_or_default().to_string();
        let parameters = Value::Object((*remote.input_schema).clone());
        // Toolhost waits for the remote call, so a client that supports
        // tasks may have it as one, whatever the remote does with tasks.
        let mut spec = ToolSpec::new(name, description, parameters)
            .with_hints(hints)
            .with_task_support(TaskSupport::Optional);
        spec.title = remote.title.clone();
        spec.output_schema = remote
            .output_schema
            .as_ref()
            .map(|schema| Value::Object((**schema).clone()));
        McpTool {
            spec,
            server: config.name.clone(),
            remote_name: remote.name.to_string(),
            annotations: remote.annotations,
            timeout: config.timeout(),
            peer,
        }
    }

    /// Calls the remote tool with `arguments` (a JSON object, or null for
    /// none) within the server's `timeout_ms`, the call's deadline and its
    /// cancellation: the server's result, as it sent it.
    pub(super) async fn request(&self, arguments: Value, ctx: CallContext) -> Result<CallToolResult> {
        let peer = self.peer.borrow().clone().ok_or_else(|| {
            Error::new(
                ErrorCode::Unavailable,
                format!("MCP server {:?} is not connected", self.server),
            )
        })?;
        let arguments = match arguments {
            Value::Object(map) => map,
            Value::Null => serde_json::Map::new(),
            _ => {
                return Err(Error::new(
                    ErrorCode::InvalidArguments,
                    "the arguments must be a JSON object",
                ));
            }
        };
        let mut timeout = self.timeout;
        if let Some(deadline) = ctx.deadline {
            timeout = timeout.min(deadline.saturating_duration_since(Instant::now()));
        }
        let mut params = CallToolRequestParams::new(self.remote_name.clone()).with_arguments(arguments);
        // The caller's trace goes on to the bridged server, so its spans
        // join the caller's trace (see `toolhost_core::trace`).
        if let Some(trace) = &ctx.trace {
            params.set_traceparent(trace.traceparent());
            if let Some(state) = trace.tracestate() {
                params.set_tracestate(state);
            }
        }
        // Dropping the request future (on timeout or cancellation) makes rmcp
        // send `notifications/cancelled` for it.
        let result = tokio::select! {
            r = tokio::time::timeout(timeout, peer.call_tool_once(params)) => match r {
                Ok(r) => self.complete(r.map_err(|e| self.service_error(e))?)?,
                Err(_) => return Err(Error::new(ErrorCode::Timeout, format!(
                    "MCP tool {:?} of server {:?} did not answer within {} ms; the call was cancelled on the server",
                    self.remote_name, self.server, timeout.as_millis()))),
            },
            () = ctx.cancel.cancelled() => return Err(Error::new(ErrorCode::Cancelled, "the call was cancelled")),
        };
        Ok(result)
    }

    /// The result of a call answered in one round. The bridge declares no
    /// client capabilities to the servers it bridges, and asks for no task:
    /// a server that still asks its client for input (a 2026-07-28
    /// `InputRequiredResult`) or answers with a task fails the call, saying so.
    fn complete(&self, response: CallToolResponse) -> Result<CallToolResult> {
        match response {
            CallToolResponse::Complete(result) => Ok(result),
            CallToolResponse::InputRequired(asked) => {
                let what: Vec<String> = asked
                    .input_requests
                    .iter()
                    .flatten()
                    .map(|(key, request)| format!("{key} ({})", input_kind(request)))
                    .collect();
                Err(Error::new(
                    ErrorCode::Unavailable,
                    format!(
                        "MCP server {:?} asked its client for input ({}) to run {:?}; toolhost does not pass a bridged server's questions on to its own client, so the call cannot go on",
                        self.server,
                        what.join(", "),
                        self.remote_name
                    ),
                ))
            }
            CallToolResponse::Task(task) => Err(Error::new(
                ErrorCode::ToolFailed,
                format!(
                    "MCP server {:?} answered {:?} with a task ({}) it was not asked for",
                    self.server, self.remote_name, task.task.task_id
                ),
            )),
            _ => Err(Error::new(
                ErrorCode::ToolFailed,
                format!(
                    "MCP server {:?} answered {:?} with a result of a kind this bridge does not know",
                    self.server, self.remote_name
                ),
            )),
        }
    }

    fn service_error(&self, e: ServiceError) -> Error {
        let code = match e {
            ServiceError::TransportClosed | ServiceError::TransportSend(_) => ErrorCode::Unavailable,
            _ => ErrorCode::ToolFailed,
        };
        Error::new(code, format!("MCP server {:?}: {e}", self.server))
    }
}

/// A result as a tool output: a single text block as a JSON string, or
/// structured content with its text blocks as the model's text; any other
/// content (images, audio, resources, annotated or several blocks) passes
/// on intact as content blocks (see [`ToolOutput::blocks`]), with the
/// structured content, if any, as the JSON. An error the server reports is
/// a `tool_failed` error with its text (see [`error_text`]).
fn output_of(result: CallToolResult) -> Result<ToolOutput> {
    if result.is_error == Some(true) {
        return Err(Error::new(ErrorCode::ToolFailed, error_text(&result)));
    }
    if let Some(blocks) = rich_blocks(&result)? {
        return Ok(ToolOutput::blocks(blocks, result.structured_content));
    }
    let texts = texts(&result.content);
    if let Some(structured) = result.structured_content {
        // Servers often repeat the JSON as their text; that is no text of
        // its own. The value travels on as it is (`ToolOutput::value`):
        // toolhost's own MCP server sends it without reading it again.
        let output = ToolOutput::value(structured);
        let text = texts.join("\n");
        return Ok(if texts.is_empty() || text == output.content {
            output
        } else {
            output.with_text(text)
        });
    }
    if texts.len() == 1 && result.content.len() == 1 {
        return Ok(ToolOutput::json(&Value::from(texts[0])));
    }
    serde_json::to_string(&result.content)
        .map(ToolOutput::json_text)
        .map_err(|e| Error::internal(format!("cannot serialize MCP content: {e}")))
}

/// The text of a result's text blocks (`content`), in order.
pub(super) fn texts(content: &[rmcp::model::ContentBlock]) -> Vec<&str> {
    content
        .iter()
        .filter_map(|c| c.as_text())
        .map(|t| t.text.as_str())
        .collect()
}

/// What an error a server reports says: its text blocks joined by
/// newlines, or its content as JSON when it has no text.
pub(super) fn error_text(result: &CallToolResult) -> String {
    let texts = texts(&result.content);
    if texts.is_empty() {
        serde_json::to_string(&result.content).unwrap_or_default()
    } else {
        texts.join("\n")
    }
}

/// A result's content as the blocks MCP clients get as sent, when it is
/// more than plain text: images, audio, resources, annotated text, or
/// several blocks without structured content. `None`: plain text.
///
/// # Errors
///
/// `tool_failed` when the content cannot be read as content blocks.
pub(super) fn rich_blocks(result: &CallToolResult) -> Result<Option<Vec<ContentBlock>>> {
    let plain = result.content.iter().all(|c| {
        c.as_text()
            .is_some_and(|t| t.annotations.is_none() && t.meta.is_none())
    });
    if plain && (result.content.len() <= 1 || result.structured_content.is_some()) {
        return Ok(None);
    }
    serde_json::to_value(&result.content)
        .and_then(serde_json::from_value)
        .map(Some)
        .map_err(|e| {
            Error::new(
                ErrorCode::ToolFailed,
                format!("the MCP server's content cannot be read: {e}"),
            )
        })
}

impl Tool for McpTool {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    fn call(&self, arguments: Value, ctx: CallContext) -> BoxFuture<'_, Result<ToolOutput>> {
        Box::pin(async move { output_of(self.request(arguments, ctx).await?) })
    }
}

/// What an input request asks for, in words.
fn input_kind(request: &InputRequest) -> &'static str {
    match request {
        InputRequest::Elicitation(_) => "elicitation",
        InputRequest::CreateMessage(_) => "sampling",
        InputRequest::ListRoots(_) => "roots",
        _ => "another kind of input",
    }
}
