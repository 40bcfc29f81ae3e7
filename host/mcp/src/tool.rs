//! # A remote tool as a registry tool
//!
//! [`McpTool`] is one tool of a bridged MCP server (see [`client`](super::client)):
//! its spec under the bridged name, the server's annotations kept whole, and
//! calls sent to whichever connection to the server is current.

use rmcp::model::{
    CallToolRequest, CallToolRequestParams, CallToolResult, ClientRequest, RequestParamsMeta, ServerResult,
    Tool as RemoteTool, ToolAnnotations,
};
use rmcp::{Peer, RoleClient};
use serde_json::Value;
use tokio::sync::watch;

use super::config::McpServerConfig;
use super::relay::Remote;
use toolhost_core::content::ContentBlock;
use toolhost_core::error::{Error, ErrorCode, Result};
use toolhost_core::registry::{BoxFuture, CallContext, TaskSupport, Tool, ToolHints, ToolOutput, ToolSpec};

/// The connection a tool calls through: `None` while the server is down.
pub(super) type PeerSlot = watch::Receiver<Option<Peer<RoleClient>>>;

/// A tool of an MCP server, as a registry [`Tool`].
pub struct McpTool {
    spec: ToolSpec,
    remote_name: String,
    annotations: Option<ToolAnnotations>,
    remote: Remote,
}

impl std::fmt::Debug for McpTool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpTool")
            .field("name", &self.spec.name)
            .field("server", &self.remote.server)
            .field("remote_name", &self.remote_name)
            .finish_non_exhaustive()
    }
}

impl McpTool {
    /// The `[[mcp.servers]]` name of its server (the `Mcp { server }` source).
    pub fn server(&self) -> &str {
        &self.remote.server
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
            remote_name: remote.name.to_string(),
            annotations: remote.annotations,
            remote: Remote::new(config, peer),
        }
    }

    /// Calls the remote tool with `arguments` (a JSON object, or null for
    /// none) within the server's `timeout_ms`, the call's deadline and its
    /// cancellation, relaying the server's questions to the call's client
    /// (see [`relay`](super::relay)): the server's result, as it sent it.
    pub(super) async fn request(&self, arguments: Value, ctx: CallContext) -> Result<CallToolResult> {
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
        let what = format!("tools/call {:?}", self.remote_name);
        let answer = self
            .remote
            .send(&what, &ctx, |retry| {
                let mut params =
                    CallToolRequestParams::new(self.remote_name.clone()).with_arguments(arguments.clone());
                // The caller's trace goes on to the bridged server, so its
                // spans join the caller's trace (see `toolhost_core::trace`).
                if let Some(trace) = &ctx.trace {
                    params.set_traceparent(trace.traceparent());
                    if let Some(state) = trace.tracestate() {
                        params.set_tracestate(state);
                    }
                }
                if let Some(retry) = retry {
                    params.input_responses = Some(retry.responses);
                    params.request_state = retry.state;
                }
                ClientRequest::CallToolRequest(CallToolRequest::new(params))
            })
            .await?;
        self.complete(answer)
    }

    /// The server's final answer to a call. The bridge asks for no task:
    /// a server that answers with one, or with anything but a call's
    /// result, fails the call, saying so.
    fn complete(&self, answer: ServerResult) -> Result<CallToolResult> {
        match answer {
            ServerResult::CallToolResult(result) => Ok(result),
            // A result with no content (`{}`, or only its `resultType`)
            // is an empty one, as rmcp reads it.
            ServerResult::EmptyResult(_) | ServerResult::TaskAckResult(_) => Ok(CallToolResult::default()),
            ServerResult::CreateTaskResult(task) => Err(Error::new(
                ErrorCode::ToolFailed,
                format!(
                    "MCP server {:?} answered {:?} with a task ({}) it was not asked for",
                    self.remote.server, self.remote_name, task.task.task_id
                ),
            )),
            _ => Err(Error::new(
                ErrorCode::ToolFailed,
                format!(
                    "MCP server {:?} answered {:?} with a result of a kind this bridge does not know",
                    self.remote.server, self.remote_name
                ),
            )),
        }
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
