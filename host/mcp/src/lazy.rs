//! # Lazy bridged servers
//!
//! A `[[mcp.servers]]` entry with `lazy = true` costs the model two tool
//! definitions, however many tools the server has (seed 003's lazy mode):
//!
//! | tool | what it does |
//! |---|---|
//! | `mcp__SERVER__list_tools()` | the server's catalog: `{"server", "tools": [{"name", "description", "input_schema"}]}` (and each tool's `output_schema` when it states one) |
//! | `mcp__SERVER__call_tool(tool_name, arguments)` | calls one tool of the catalog and returns `{"ok", "server", "tool", "is_error", "result"}` |
//!
//! (`PREFIXlist_tools` and `PREFIXcall_tool` when the entry has a
//! `prefix`.) The catalog is the server's listing, bounded as an eager
//! server's is ([`MAX_LISTED_TOOLS`] tools, [`MAX_LISTED_BYTES`] of
//! definitions), filtered by `enabled_tools` / `disabled_tools`, each
//! tool's description and schemas held to the per-tool caps of
//! [`MetadataLimits`]. It is cached: listed when the server connects, again
//! on `notifications/tools/list_changed`, and again once it is
//! `catalog_ttl_s` old (see [`McpServerConfig::catalog_ttl`]), for servers
//! that change their tools without saying so. A new catalog changes nothing
//! toolhost's own clients see (the same two tools), so it sends them no
//! `list_changed`. The server's prompts and resources are bridged as an
//! eager server's are.
//!
//! A call names a tool of the catalog by its name on the server (or its
//! bridged name), and its `arguments` are checked against that tool's input
//! schema before anything is sent. To hooks and approvals the call is the
//! call of the bridged tool it stands for ([`Tool::stands_for`]): a
//! `require_approval` pattern such as `mcp__SERVER__delete_*` gates
//! `call_tool(tool_name="delete_x")` exactly as it would gate the eager
//! `mcp__SERVER__delete_x`, with the remote arguments shown.
//!
//! The result is seed 003's dict. `result` is the joined text of the
//! result's text blocks (often JSON the caller parses), else its structured
//! content, else its content blocks as JSON; content beyond text (images,
//! audio, resources) also reaches toolhost's MCP clients as sent. An error
//! the remote tool reports does not fail the call: it comes back as
//! `ok: false, is_error: true` with the tool's text as `result`, and a
//! caller (a script) must check `ok`. A call that cannot be made fails
//! with a typed error in the same dict, `ok: false, is_error: false,
//! result: null`, plus `error_code` and `error`: `unknown_tool` (not in
//! the catalog, or left out by the operator), `invalid_arguments` (refused
//! by the tool's input schema), `unavailable` (the server is down, or its
//! catalog was refused), `timeout`, `cancelled`.
//!
//! ```
//! use serde_json::json;
//! use toolhost_mcp::lazy::{CALL_TOOL, LIST_TOOLS, envelope};
//! use toolhost_mcp::naming::bridged_name;
//!
//! assert_eq!(bridged_name("github", None, LIST_TOOLS), "mcp__github__list_tools");
//! assert_eq!(bridged_name("github", Some("gh_"), CALL_TOOL), "gh_call_tool");
//! let done = envelope("everything", "get-sum", false, json!("The sum of 2 and 3 is 5."));
//! assert_eq!(
//!     done,
//!     json!({"ok": true, "server": "everything", "tool": "get-sum", "is_error": false,
//!            "result": "The sum of 2 and 3 is 5."})
//! );
//! ```

use std::borrow::Cow;
use std::sync::Arc;

use rmcp::model::CallToolResult;
use serde_json::{Value, json};
use tokio::sync::watch;

use super::client::{MAX_LISTED_BYTES, MAX_LISTED_TOOLS, McpTool};
use super::config::McpServerConfig;
use super::naming::bridged_name;
use super::tool::{error_text, rich_blocks, texts};
use toolhost_core::error::{Error, ErrorCode, Result};
use toolhost_core::limits::MetadataLimits;
use toolhost_core::registry::{
    ArgumentValidator, BoxFuture, CallContext, Registry, Standing, TaskSupport, Tool, ToolHints, ToolOutput,
    ToolSpec, lazy,
};

/// The remote name of a lazy server's catalog tool.
pub const LIST_TOOLS: &str = "list_tools";
/// The remote name of a lazy server's calling tool.
pub const CALL_TOOL: &str = "call_tool";

/// What a lazy `call_tool` returns, seed 003's dict: `{"ok", "server",
/// "tool", "is_error", "result"}`, where `is_error` says the remote tool
/// reported an error (and `ok` is its opposite).
pub fn envelope(server: &str, tool: &str, is_error: bool, result: Value) -> Value {
    json!({"ok": !is_error, "server": server, "tool": tool, "is_error": is_error, "result": result})
}

/// A `call_tool` call that could not be made, in the same dict: `ok:
/// false`, `is_error: false` (the remote tool reported nothing), `result:
/// null`, and the typed error's `error_code` and `error`. Dispatch reports
/// the call as failed with that code.
fn refusal(server: &str, tool: &str, error: &Error) -> ToolOutput {
    let message = error.with_causes();
    let out = json!({
        "ok": false, "server": server, "tool": tool, "is_error": false, "result": null,
        "error_code": error.code().as_str(), "error": message,
    });
    ToolOutput::refused_because(error.code(), message, out.to_string())
}

/// What a lazy server's catalog may claim: the per-tool caps of an eager
/// server's tools, but as many tools and bytes as a listing may hold (the
/// catalog is read on demand, not sent with every turn).
fn catalog_limits() -> MetadataLimits {
    MetadataLimits {
        max_tools: u32::try_from(MAX_LISTED_TOOLS).unwrap_or(u32::MAX),
        metadata_bytes: MAX_LISTED_BYTES as u64,
        ..MetadataLimits::default()
    }
}

/// One callable tool of a catalog, its schema compiled once.
struct Entry {
    tool: Arc<McpTool>,
    validator: ArgumentValidator,
}

/// A lazy server's catalog, as its two tools see it.
#[derive(Clone)]
pub(crate) struct ToolCatalog {
    /// Its callable tools, in the server's order: those of its last
    /// listing (kept while it is down, for the status).
    tools: Arc<[Entry]>,
    /// The `list_tools` result, made once per listing.
    listing: Arc<str>,
    /// Why it cannot be used now: the server is down, or its listing was
    /// refused.
    unusable: Option<Error>,
}

impl ToolCatalog {
    /// The catalog before the server's first outcome.
    pub(crate) fn pending(server: &str) -> ToolCatalog {
        ToolCatalog::unusable_with(
            Arc::from([]),
            Error::new(
                ErrorCode::Unavailable,
                format!("MCP server {server:?} is not connected yet"),
            ),
        )
    }

    fn unusable_with(tools: Arc<[Entry]>, why: Error) -> ToolCatalog {
        ToolCatalog {
            tools,
            listing: Arc::from(""),
            unusable: Some(why),
        }
    }

    /// The catalog of server `config` from the tools it listed, with the
    /// tools left out and why: one whose schema is not a JSON Schema, or
    /// whose bridged name another tool of `registry` has already (by that
    /// name approvals and hooks know it). A catalog past [`catalog_limits`]
    /// is refused whole.
    pub(crate) fn listed(
        config: &McpServerConfig,
        tools: &[Arc<McpTool>],
        registry: &Registry,
    ) -> (ToolCatalog, Vec<String>) {
        let specs: Vec<&ToolSpec> = tools.iter().map(|t| t.spec()).collect();
        if let Err(why) = super::bridge::check_claims(&config.name, &specs, catalog_limits()) {
            tracing::error!(server = %config.name, "the lazy MCP server's catalog was refused: {why}");
            let error = Error::new(ErrorCode::Unavailable, why.clone());
            return (ToolCatalog::unusable_with(Arc::from([]), error), vec![why]);
        }
        let mut left_out = Vec::new();
        let mut entries = Vec::new();
        for tool in tools {
            let name = &tool.spec().name;
            let checked = if registry.contains(name) {
                Err(format!(
                    "{name}: another tool is registered under this name, by which approvals and hooks would know this one too"
                ))
            } else {
                ArgumentValidator::compile(tool.spec()).map_err(|e| format!("{name}: {}", e.message()))
            };
            match checked {
                Ok(validator) => entries.push(Entry {
                    tool: Arc::clone(tool),
                    validator,
                }),
                Err(why) => {
                    tracing::error!(server = %config.name, "a tool of a lazy MCP server was left out of its catalog: {why}");
                    left_out.push(why);
                }
            }
        }
        let listed: Vec<Value> = entries.iter().map(|e| listing(&e.tool)).collect();
        let listing = json!({"server": config.name, "tools": listed}).to_string();
        let catalog = ToolCatalog {
            tools: entries.into(),
            listing: listing.into(),
            unusable: None,
        };
        (catalog, left_out)
    }

    /// This catalog while its server is down: `why`.
    pub(crate) fn down(&self, why: Error) -> ToolCatalog {
        ToolCatalog::unusable_with(Arc::clone(&self.tools), why)
    }

    /// The remote names of its tools.
    pub(crate) fn names(&self) -> Vec<String> {
        self.tools
            .iter()
            .map(|e| e.tool.remote_name().to_string())
            .collect()
    }

    fn usable(&self) -> Result<()> {
        match &self.unusable {
            Some(why) => Err(why.clone()),
            None => Ok(()),
        }
    }
}

/// One tool as `list_tools` lists it.
fn listing(tool: &McpTool) -> Value {
    let spec = tool.spec();
    let mut out = json!({
        "name": tool.remote_name(),
        "description": spec.description,
        "input_schema": spec.parameters,
    });
    if let Some(schema) = &spec.output_schema {
        out["output_schema"] = schema.clone();
    }
    out
}

/// What a lazy server's two tools share: its config and its catalog.
struct LazyServer {
    config: McpServerConfig,
    catalog: watch::Receiver<ToolCatalog>,
    list_name: String,
}

/// A `call_tool` call resolved: the tool of the catalog it names and the
/// arguments that tool gets, checked against its schema.
struct Resolved<'a> {
    tool: Arc<McpTool>,
    arguments: Cow<'a, Value>,
}

impl LazyServer {
    fn catalog(&self) -> Result<ToolCatalog> {
        let catalog = self.catalog.borrow().clone();
        catalog.usable()?;
        Ok(catalog)
    }

    /// The tool a `call_tool` call names and its arguments, checked: the
    /// tool is in the catalog and the arguments fit its input schema.
    /// `Err`: the refusal to return.
    fn resolve<'a>(&self, arguments: &'a Value) -> std::result::Result<Resolved<'a>, Box<ToolOutput>> {
        let server = self.config.name.as_str();
        // Dispatch has checked `call_tool`'s own schema; a direct caller
        // may not have.
        let name = arguments.get("tool_name").and_then(Value::as_str).unwrap_or("");
        let refuse = |e: Error| Box::new(refusal(server, name, &e));
        let remote = match arguments.get("arguments") {
            None | Some(Value::Null) => Cow::Owned(Value::Object(serde_json::Map::new())),
            Some(object @ Value::Object(_)) => Cow::Borrowed(object),
            Some(_) => {
                let e = Error::new(ErrorCode::InvalidArguments, "`arguments` must be a JSON object");
                return Err(refuse(e));
            }
        };
        let catalog = self.catalog().map_err(refuse)?;
        let entry = catalog
            .tools
            .iter()
            .find(|e| e.tool.remote_name() == name)
            .or_else(|| catalog.tools.iter().find(|e| e.tool.spec().name == name))
            .ok_or_else(|| refuse(self.unknown(&catalog, name)))?;
        let remote_name = entry.tool.remote_name();
        entry.validator.validate(&remote).map_err(|e| {
            let why = format!("tool {remote_name:?} of MCP server {server:?}: {}", e.message());
            Box::new(refusal(server, remote_name, &Error::new(e.code(), why)))
        })?;
        Ok(Resolved {
            tool: Arc::clone(&entry.tool),
            arguments: remote,
        })
    }

    /// Why `name` cannot be called: the operator left it out, or the
    /// server has no such tool (with the names nearest to it).
    fn unknown(&self, catalog: &ToolCatalog, name: &str) -> Error {
        let server = &self.config.name;
        if !name.is_empty() && !self.config.keeps_tool(name) {
            return Error::new(
                ErrorCode::UnknownTool,
                format!(
                    "tool {name:?} of MCP server {server:?} is not offered: the operator's enabled_tools / disabled_tools leave it out"
                ),
            );
        }
        let names: Vec<&str> = catalog.tools.iter().map(|e| e.tool.remote_name()).collect();
        let near = lazy::suggest(names.iter().copied(), name, 3);
        let hint = if near.is_empty() {
            String::new()
        } else {
            format!("; did you mean {}?", near.join(", "))
        };
        Error::new(
            ErrorCode::UnknownTool,
            format!(
                "MCP server {server:?} has no tool {name:?}{hint} ({} lists its tools)",
                self.list_name
            ),
        )
    }

    /// A remote result as `call_tool`'s: the dict, with the content blocks
    /// as sent when there is more than text.
    fn output(&self, tool: &McpTool, result: CallToolResult) -> ToolOutput {
        let (server, remote) = (self.config.name.as_str(), tool.remote_name());
        if result.is_error == Some(true) {
            let message = error_text(&result);
            tracing::debug!(
                server,
                tool = remote,
                "a lazy MCP server's tool reported an error"
            );
            return ToolOutput::value(envelope(server, remote, true, Value::String(message)));
        }
        let blocks = match rich_blocks(&result) {
            Ok(blocks) => blocks,
            Err(e) => return refusal(server, remote, &e),
        };
        let texts = texts(&result.content);
        let value = if !texts.is_empty() {
            Value::String(texts.join("\n"))
        } else if let Some(structured) = result.structured_content {
            structured
        } else {
            serde_json::to_value(&result.content).unwrap_or(Value::Null)
        };
        let done = envelope(server, remote, false, value);
        match blocks {
            Some(blocks) => ToolOutput::blocks(blocks, Some(done)),
            None => ToolOutput::value(done),
        }
    }
}

/// `…list_tools`: the catalog.
struct ListTools {
    spec: ToolSpec,
    server: Arc<LazyServer>,
}

/// `…call_tool`: one tool of the catalog, called.
struct CallTool {
    spec: ToolSpec,
    server: Arc<LazyServer>,
}

/// The two tools of lazy server `config`, reading its catalog from
/// `catalog`: `…list_tools`, then `…call_tool`.
pub(crate) fn tools(config: &McpServerConfig, catalog: watch::Receiver<ToolCatalog>) -> [Arc<dyn Tool>; 2] {
    let name = |tool: &str| bridged_name(&config.name, config.prefix.as_deref(), tool);
    let (list_name, call_name) = (name(LIST_TOOLS), name(CALL_TOOL));
    let server_name = &config.name;
    let list = ToolSpec::new(
        list_name.clone(),
        format!(
            "List the tools of MCP server `{server_name}`: each one's name, description and input_schema (JSON Schema). \
             Call one with `{call_name}`."
        ),
        json!({"type": "object", "properties": {}, "additionalProperties": false}),
    )
    .with_hints(ToolHints {
        read_only: Some(true),
        destructive: Some(false),
        idempotent: Some(true),
        open_world: Some(false),
    });
    let call = ToolSpec::new(
        call_name,
        format!(
            "Call a tool of MCP server `{server_name}` by its name from `{list_name}`, with arguments that fit its \
             input_schema. Returns {{\"ok\", \"server\", \"tool\", \"is_error\", \"result\"}}: result is the tool's \
             text (often JSON to parse), else its structured result. An error the tool reports comes back with \
             ok: false, is_error: true and the tool's message as result: check ok."
        ),
        json!({
            "type": "object",
            "properties": {
                "tool_name": {"type": "string", "description": format!("The tool's name, as {list_name} gives it.")},
                "arguments": {"type": "object", "description": "Its arguments, as its input_schema describes them (default: none)."}
            },
            "required": ["tool_name"],
            "additionalProperties": false
        }),
    )
    // As a bridged tool's own (see `McpTool`): toolhost waits for the call.
    .with_task_support(TaskSupport::Optional);
    let server = Arc::new(LazyServer {
        config: config.clone(),
        catalog,
        list_name,
    });
    [
        Arc::new(ListTools {
            spec: list,
            server: Arc::clone(&server),
        }),
        Arc::new(CallTool { spec: call, server }),
    ]
}

impl Tool for ListTools {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    fn call(&self, _arguments: Value, _ctx: CallContext) -> BoxFuture<'_, Result<ToolOutput>> {
        let listing = self.server.catalog().map(|c| ToolOutput::json_text(&*c.listing));
        Box::pin(std::future::ready(listing))
    }

    fn calls_tools(&self) -> bool {
        false
    }
}

impl Tool for CallTool {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    fn call(&self, arguments: Value, ctx: CallContext) -> BoxFuture<'_, Result<ToolOutput>> {
        Box::pin(async move {
            // The catalog may have changed since dispatch resolved the call
            // for the gate: resolved again, the same name and arguments
            // (or a refusal).
            let tool = match self.server.resolve(&arguments) {
                Ok(resolved) => resolved.tool,
                Err(refused) => return Ok(*refused),
            };
            let remote = match arguments {
                Value::Object(mut map) => map.remove("arguments").unwrap_or(Value::Null),
                _ => Value::Null,
            };
            Ok(match tool.request(remote, ctx).await {
                Ok(result) => self.server.output(&tool, result),
                Err(e) => refusal(&self.server.config.name, tool.remote_name(), &e),
            })
        })
    }

    fn calls_tools(&self) -> bool {
        false
    }

    fn stands_for<'a>(&self, arguments: &'a Value) -> Standing<'a> {
        match self.server.resolve(arguments) {
            Ok(resolved) => Standing::For {
                name: resolved.tool.spec().name.clone(),
                arguments: resolved.arguments,
            },
            Err(refused) => Standing::Refused(refused),
        }
    }

    fn stand_in_arguments(&self, mut arguments: Value, effective: Value) -> Value {
        if let Value::Object(map) = &mut arguments {
            map.insert("arguments".into(), effective);
        }
        arguments
    }
}
