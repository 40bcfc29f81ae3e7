//! # Loading and unloading components while serving
//!
//! `toolhost serve --admin` adds two trusted-only tools to its
//! [`LocalCatalog`], so a trusted MCP client can change what is served
//! without a restart:
//!
//! - `toolhost__load_component {"path": "...", "public": false}` loads a
//!   component file and adds its tools; it answers `{"hash", "tools"}`.
//! - `toolhost__unload_component {"hash": "blake3:..."}` removes them; it
//!   answers `{"tools"}`. Calls already running finish normally.
//!
//! Either sends `notifications/tools/list_changed`. The tools are off unless
//! `--admin` is given, and never visible to the public audience. The library
//! API is [`LocalCatalog::load_file`] and [`LocalCatalog::unload_component`].

use std::path::PathBuf;
use std::sync::{Arc, Weak};

use serde_json::{Value, json};

use super::catalog::LocalCatalog;
use crate::engine::Engine;
use crate::error::{Error, ErrorCode, Result};
use crate::identity::ComponentHash;
use crate::registry::{FnTool, Tool, ToolOutput, ToolSpec};

/// The name of the load tool.
pub const LOAD_TOOL: &str = "toolhost__load_component";
/// The name of the unload tool.
pub const UNLOAD_TOOL: &str = "toolhost__unload_component";

/// Adds the admin tools to `catalog` (trusted-only).
///
/// # Errors
///
/// [`ErrorCode::DuplicateTool`] if they are there already.
pub fn add_admin_tools(catalog: &Arc<LocalCatalog>, engine: Engine) -> Result<()> {
    for tool in admin_tools(Arc::downgrade(catalog), engine) {
        catalog.add_tool(tool, false)?;
    }
    Ok(())
}

fn admin_tools(catalog: Weak<LocalCatalog>, engine: Engine) -> Vec<Arc<dyn Tool>> {
    let load_spec = ToolSpec::new(
        LOAD_TOOL,
        "Load a WebAssembly component file and serve its tools.",
        json!({
            "type": "object",
            "properties": {
                "path": {"type": "string", "description": "The component file on the server's machine."},
                "public": {"type": "boolean", "description": "Whether the public audience may see its tools.", "default": false}
            },
            "required": ["path"]
        }),
    );
    let unload_spec = ToolSpec::new(
        UNLOAD_TOOL,
        "Stop serving the tools of a loaded component.",
        json!({
            "type": "object",
            "properties": {"hash": {"type": "string", "description": "The component's hash, blake3:..."}},
            "required": ["hash"]
        }),
    );
    let weak = catalog.clone();
    let load = FnTool::new(load_spec, move |args: Value, _ctx| {
        let (catalog, engine) = (weak.clone(), engine.clone());
        async move {
            let path = args
                .get("path")
                .and_then(Value::as_str)
                .map(PathBuf::from)
                .ok_or_else(|| Error::new(ErrorCode::InvalidArguments, "\"path\" must be a string"))?;
            let public = args.get("public").and_then(Value::as_bool).unwrap_or(false);
            let catalog = upgrade(&catalog)?;
            let component = catalog.load_file(&engine, &path, public).await?;
            let tools: Vec<&str> = component.tools().iter().map(|t| t.name.as_str()).collect();
            Ok(ToolOutput::json(
                &json!({"hash": component.hash(), "tools": tools}),
            ))
        }
    });
    let unload = FnTool::new(unload_spec, move |args: Value, _ctx| {
        let catalog = catalog.clone();
        async move {
            let hash: ComponentHash = args
                .get("hash")
                .and_then(Value::as_str)
                .ok_or_else(|| Error::new(ErrorCode::InvalidArguments, "\"hash\" must be a string"))?
                .parse()?;
            let tools = upgrade(&catalog)?.unload_component(hash)?;
            Ok(ToolOutput::json(&json!({"tools": tools})))
        }
    });
    vec![Arc::new(load), Arc::new(unload)]
}

fn upgrade(catalog: &Weak<LocalCatalog>) -> Result<Arc<LocalCatalog>> {
    catalog
        .upgrade()
        .ok_or_else(|| Error::new(ErrorCode::Unavailable, "the catalog is gone"))
}
