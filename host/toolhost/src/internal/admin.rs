//! # Loading and unloading components while serving
//!
//! `toolhost serve --admin` registers two trusted-only built-ins (toolset
//! `toolhost-admin`), so that a trusted MCP client can change what is served
//! without a restart:
//!
//! - `toolhost__load_component {"path", "hash"?, "toolset"?}` admits a
//!   component file as every plugin is admitted ([`crate::admission`]: a
//!   regular file within the size cap, the pin when `hash` is given, the
//!   config's signature policy, no grants) and registers its tools,
//!   trusted-only like every component's; it answers `{"hash", "tools"}`.
//! - `toolhost__unload_component {"hash": "blake3:..."}` removes them; it
//!   answers `{"tools"}`. Calls already running finish normally: they hold
//!   their own reference to the component.
//!
//! Either changes the registry, so every MCP session gets
//! `notifications/tools/list_changed`. The tools are off unless `--admin` is
//! given. The library API is [`LivePlugins::load`] and
//! [`LivePlugins::unload`].

use std::sync::{Arc, Weak};

use serde_json::{Value, json};

use crate::admission::{PluginRequest, Via};
use crate::error::{Error, ErrorCode, Result};
use crate::identity::ComponentHash;
use crate::live::LivePlugins;
use crate::registry::{FnTool, Registration, ToolOutput, ToolSpec};

/// The name of the load tool.
pub const LOAD_TOOL: &str = "toolhost__load_component";
/// The name of the unload tool.
pub const UNLOAD_TOOL: &str = "toolhost__unload_component";
/// The toolset of the admin tools.
pub const ADMIN_TOOLSET: &str = "toolhost-admin";

/// Registers the admin tools among `live`'s plugins' (trusted-only
/// built-ins). They hold only a weak handle to it.
///
/// # Errors
///
/// [`ErrorCode::DuplicateTool`] if they are there already;
/// [`ErrorCode::Unavailable`] when the server is shutting down.
pub fn add_admin_tools(live: &Arc<LivePlugins>) -> Result<()> {
    let weak = Arc::downgrade(live);
    let load_spec = ToolSpec::new(
        LOAD_TOOL,
        "Load a WebAssembly component file and serve its tools (trusted-only).",
        json!({
            "type": "object",
            "properties": {
                "path": {"type": "string", "description": "The component file on the server's machine."},
                "hash": {"type": "string", "description": "The blake3:... hash its bytes must have (a pin)."},
                "toolset": {"type": "string", "description": "The toolset of its tools (default: the file name without .wasm)."}
            },
            "required": ["path"],
            "additionalProperties": false
        }),
    );
    let unload_spec = ToolSpec::new(
        UNLOAD_TOOL,
        "Stop serving the tools of a loaded component.",
        json!({
            "type": "object",
            "properties": {"hash": {"type": "string", "description": "The component's hash, blake3:..."}},
            "required": ["hash"],
            "additionalProperties": false
        }),
    );
    let load = {
        let weak = weak.clone();
        FnTool::new(load_spec, move |args: Value, _ctx| {
            let weak = weak.clone();
            async move { load(&*upgrade(&weak)?, &args).await }
        })
    };
    let unload = FnTool::new(unload_spec, move |args: Value, _ctx| {
        let weak = weak.clone();
        async move { unload(&*upgrade(&weak)?, &args).await }
    });
    live.dispatcher()?.update_registry(|registry| {
        registry.register(Registration::new(load).toolset(ADMIN_TOOLSET))?;
        registry.register(Registration::new(unload).toolset(ADMIN_TOOLSET))
    })
}

async fn load(live: &LivePlugins, args: &Value) -> Result<ToolOutput> {
    let path = string_arg(args, "path")?.unwrap_or_default();
    let request = PluginRequest {
        pin: string_arg(args, "hash")?
            .map(|h| h.parse::<ComponentHash>())
            .transpose()?,
        toolset: string_arg(args, "toolset")?.map(String::from),
        ..PluginRequest::file(path)
    };
    let component = live.load_via(Via::Admin, request).await?;
    let tools: Vec<&str> = component.tools().iter().map(|t| t.name.as_str()).collect();
    Ok(ToolOutput::json(
        &json!({"hash": component.hash(), "tools": tools}),
    ))
}

async fn unload(live: &LivePlugins, args: &Value) -> Result<ToolOutput> {
    let hash: ComponentHash = string_arg(args, "hash")?.unwrap_or_default().parse()?;
    let tools = live.unload(hash).await?;
    Ok(ToolOutput::json(&json!({ "tools": tools })))
}

/// The string argument `key`, if present.
fn string_arg<'a>(args: &'a Value, key: &str) -> Result<Option<&'a str>> {
    match args.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s)),
        Some(_) => Err(Error::new(
            ErrorCode::InvalidArguments,
            format!("`{key}` must be a string"),
        )),
    }
}

fn upgrade(live: &Weak<LivePlugins>) -> Result<Arc<LivePlugins>> {
    live.upgrade()
        .ok_or_else(|| Error::new(ErrorCode::Unavailable, "the server is shutting down"))
}
