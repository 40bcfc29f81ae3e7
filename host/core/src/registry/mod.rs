//! # The tool registry
//!
//! Holds every tool the host offers, whatever its source, and decides who
//! may see it.
//!
//! | type | role |
//! |---|---|
//! | [`Tool`], [`ToolSpec`], [`FnTool`], [`BlockingFnTool`] | the WIT-free tool interface |
//! | [`Registry`] | the entries, keyed by name; registration, filtering, merging |
//! | [`ToolEntry`], [`ToolSource`], [`ToolAudience`], [`Registration`] | one registered tool |
//! | [`Check`] | availability checks ([`availability`](Check)) |
//! | [`Registry::list_schemas`], [`Registry::definitions`] | schema output ([`schemas`](Registry::definitions)) |
//! | [`lazy`] | the lazy mode's `tool_search` |
//!
//! Registration is fail-closed: [`Registry::register`] makes a trusted-only
//! built-in, [`Registry::register_public`] is the only way to a public one,
//! and MCP and WASM tools are always trusted-only. Duplicate names are
//! rejected; [`Registry::replace`] swaps a handler and keeps the metadata.
//!
//! ```
//! use serde_json::json;
//! use toolhost_core::registry::{FnTool, Registry, ToolAudience, ToolOutput, ToolSpec};
//!
//! let echo = |name: &str| FnTool::new(
//!     ToolSpec::new(name, "Echoes.", json!({"type": "object"})),
//!     |args, _| async move { Ok(ToolOutput::json(&args)) },
//! );
//! let mut registry = Registry::new();
//! registry.register(echo("private_echo")).unwrap();
//! registry.register_public(echo("public_echo")).unwrap();
//! assert!(registry.register(echo("public_echo")).is_err());
//!
//! let public = registry.clone_for_audience(ToolAudience::Public);
//! assert_eq!(public.names(), ["public_echo"]);
//! assert_eq!(registry.list_schemas()[0]["source"], "builtin");
//! ```

mod availability;
mod entry;
pub mod lazy;
pub mod names;
mod schemas;
mod tool;

use std::collections::BTreeMap;
use std::sync::Arc;

pub use availability::{Check, CheckCache};
pub use entry::{Registration, SchemaPatch, ToolAudience, ToolEntry, ToolSource};
pub use schemas::openai_definition;
pub use tool::{
    BlockingFnTool, BoxFuture, CallContext, CallId, FnTool, NestedResult, Tool, ToolCaller, ToolCallerHandle,
    ToolHints, ToolOutput, ToolSpec, Usage, model_text,
};

use crate::error::{Error, ErrorCode, Result};
use crate::identity::ComponentHash;

/// The tools, keyed by name (listed in name order). Cheap to clone: entries
/// are shared.
#[derive(Debug, Clone, Default)]
pub struct Registry {
    entries: BTreeMap<String, Arc<ToolEntry>>,
}

impl Registry {
    /// An empty registry.
    pub fn new() -> Self {
        Registry::default()
    }

    /// Registers a trusted-only built-in. Its toolset defaults to its name.
    ///
    /// # Errors
    ///
    /// `duplicate_tool` when the name is taken (naming both owners);
    /// `invalid_arguments` when its parameter schema is not a JSON Schema.
    pub fn register(&mut self, tool: impl Into<Registration>) -> Result<()> {
        self.add(tool.into(), ToolSource::Builtin, ToolAudience::Trusted, false)
    }

    /// Registers a built-in reviewed as safe for public (untrusted) turns.
    /// This is the only way to a public tool.
    ///
    /// # Errors
    ///
    /// As [`Registry::register`].
    pub fn register_public(&mut self, tool: impl Into<Registration>) -> Result<()> {
        self.add(tool.into(), ToolSource::Builtin, ToolAudience::Public, false)
    }

    /// Registers a trusted-only tool of MCP server `server`; its toolset
    /// defaults to `mcp-SERVER`.
    ///
    /// # Errors
    ///
    /// As [`Registry::register`].
    pub fn register_mcp(&mut self, tool: impl Into<Registration>, server: impl Into<String>) -> Result<()> {
        let source = ToolSource::Mcp {
            server: server.into(),
        };
        self.register_all(source, [tool.into()], false).map(drop)
    }

    /// Registers every tool of `batch` as tools of `source` (a component,
    /// an MCP server, or built-ins), **trusted-only**, and returns their
    /// names. All or nothing: on error, none is registered. A tool without
    /// a toolset goes to its source's: `mcp-SERVER`, `wasm-HASH12`, or (a
    /// built-in) its own name. With `override_builtins` (the operator's
    /// opt-in, `allow_tool_override`), a tool may replace a built-in of the
    /// same name, unless the name is reserved (see [`names`]); tools of
    /// other components or servers are never replaced.
    ///
    /// # Errors
    ///
    /// `duplicate_tool` when a name is taken or reserved; `invalid_arguments`
    /// for a name that breaks the rule or an invalid parameter schema.
    pub fn register_all(
        &mut self,
        source: ToolSource,
        batch: impl IntoIterator<Item = Registration>,
        override_builtins: bool,
    ) -> Result<Vec<String>> {
        let mut staged = self.clone();
        let mut names = Vec::new();
        for reg in batch {
            names.push(reg.handler.spec().name.clone());
            staged.add(reg, source.clone(), ToolAudience::Trusted, override_builtins)?;
        }
        *self = staged;
        Ok(names)
    }

    fn add(
        &mut self,
        reg: Registration,
        source: ToolSource,
        audience: ToolAudience,
        override_builtins: bool,
    ) -> Result<()> {
        let name = reg.handler.spec().name.clone();
        check_name(&name, &source)?;
        if let Some(existing) = self.entries.get(&name) {
            let overridable = override_builtins
                && source != ToolSource::Builtin
                && existing.source == ToolSource::Builtin
                && names::reserved(&name).is_none();
            if !overridable {
                return Err(duplicate(&name, existing, &source));
            }
            tracing::info!(tool = %name, by = %source, "plugin overrides a built-in (allow_tool_override)");
        }
        let default_toolset = match &source {
            ToolSource::Builtin => name.clone(),
            ToolSource::Mcp { server } => format!("mcp-{server}"),
            ToolSource::Wasm { component_hash } => format!("wasm-{}", component_hash.short()),
        };
        let entry = ToolEntry::build(reg, default_toolset, source, audience)?;
        self.entries.insert(name, Arc::new(entry));
        Ok(())
    }

    /// Replaces the handler of tool `name` (an intentional wrapper): the
    /// source, audience, toolset and metadata stay those of the original.
    ///
    /// # Errors
    ///
    /// `unknown_tool` when there is no such tool; `invalid_arguments` when
    /// the new tool's name differs or its schema is invalid.
    pub fn replace(&mut self, name: &str, tool: impl Tool) -> Result<()> {
        let handler: Arc<dyn Tool> = Arc::new(tool);
        if handler.spec().name != name {
            return Err(Error::new(
                ErrorCode::InvalidArguments,
                format!(
                    "cannot replace `{name}` with a tool named `{}`",
                    handler.spec().name
                ),
            ));
        }
        let existing = self.entries.get(name).ok_or_else(|| unknown(name))?;
        let entry = existing.with_handler(handler)?;
        self.entries.insert(name.to_string(), Arc::new(entry));
        Ok(())
    }

    /// Adds every entry of `other`.
    ///
    /// # Errors
    ///
    /// `duplicate_tool` when a name is in both; nothing is merged then.
    pub fn merge(&mut self, other: &Registry) -> Result<()> {
        if let Some((name, theirs)) = other.entries.iter().find(|(n, _)| self.entries.contains_key(*n)) {
            return Err(duplicate(name, &self.entries[name], &theirs.source));
        }
        self.entries
            .extend(other.entries.iter().map(|(k, v)| (k.clone(), Arc::clone(v))));
        Ok(())
    }

    /// A copy without any MCP tool.
    pub fn clone_without_mcp(&self) -> Registry {
        self.filtered(|e| !matches!(e.source, ToolSource::Mcp { .. }))
    }

    /// Removes every MCP tool; returns how many were removed.
    pub fn unregister_mcp(&mut self) -> usize {
        self.remove_where(|e| matches!(e.source, ToolSource::Mcp { .. }))
    }

    /// Removes every tool of MCP server `server` (and nothing else); returns
    /// how many were removed.
    pub fn unregister_mcp_server(&mut self, server: &str) -> usize {
        self.remove_where(|e| matches!(&e.source, ToolSource::Mcp { server: s } if s == server))
    }

    /// Removes every tool of the component with `hash` (and nothing else);
    /// returns how many were removed.
    pub fn unregister_component(&mut self, hash: ComponentHash) -> usize {
        self.remove_where(|e| e.source == ToolSource::Wasm { component_hash: hash })
    }

    /// A copy with only the tools a turn of `audience` may use: for
    /// [`ToolAudience::Public`], only the tools registered public.
    pub fn clone_for_audience(&self, audience: ToolAudience) -> Registry {
        self.filtered(|e| audience.may_use(e.audience))
    }

    fn filtered(&self, keep: impl Fn(&ToolEntry) -> bool) -> Registry {
        Registry {
            entries: self
                .entries
                .iter()
                .filter(|(_, e)| keep(e))
                .map(|(k, v)| (k.clone(), Arc::clone(v)))
                .collect(),
        }
    }

    fn remove_where(&mut self, remove: impl Fn(&ToolEntry) -> bool) -> usize {
        let before = self.entries.len();
        self.entries.retain(|_, e| !remove(e));
        before - self.entries.len()
    }

    /// The entry named `name`.
    pub fn get(&self, name: &str) -> Option<&Arc<ToolEntry>> {
        self.entries.get(name)
    }

    /// Whether a tool named `name` is registered.
    pub fn contains(&self, name: &str) -> bool {
        self.entries.contains_key(name)
    }

    /// Every entry, in name order.
    pub fn entries(&self) -> impl Iterator<Item = &Arc<ToolEntry>> {
        self.entries.values()
    }

    /// Every tool name, in order.
    pub fn names(&self) -> Vec<&str> {
        self.entries.keys().map(String::as_str).collect()
    }

    /// How many tools are registered.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether no tool is registered.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The names of the toolsets the entries belong to (the dynamic
    /// toolsets: one per built-in group, MCP server and component).
    pub fn toolset_names(&self) -> Vec<&str> {
        let mut names: Vec<&str> = self.entries.values().map(|e| e.toolset.as_str()).collect();
        names.sort_unstable();
        names.dedup();
        names
    }
}

/// The one naming rule, for every source (see [`names`]).
pub(crate) fn check_name(name: &str, source: &ToolSource) -> Result<()> {
    if !names::is_valid_tool_name(name) {
        return Err(Error::new(
            ErrorCode::InvalidArguments,
            format!(
                "{source} cannot register a tool named {:?}: names are 1 to 64 characters from A-Z a-z 0-9 _ -",
                name.chars().take(80).collect::<String>()
            ),
        ));
    }
    match names::reserved(name) {
        Some(names::Reserved::Dispatcher) => Err(Error::new(
            ErrorCode::DuplicateTool,
            format!(
                "tool `{name}` is reserved for the dispatcher (lazy mode's search); {source} cannot register it"
            ),
        )),
        Some(names::Reserved::Builtin) if *source != ToolSource::Builtin => Err(Error::new(
            ErrorCode::DuplicateTool,
            format!("tool `{name}` is reserved for toolhost's built-ins; {source} cannot register it"),
        )),
        _ => Ok(()),
    }
}

fn duplicate(name: &str, existing: &ToolEntry, newcomer: &ToolSource) -> Error {
    Error::new(
        ErrorCode::DuplicateTool,
        format!(
            "tool `{name}` is already registered by {} (toolset `{}`); {newcomer} cannot register it too. \
             Rename one of them, use `replace` for an intentional wrapper, or, for a plugin overriding a \
             built-in, set `allow_tool_override = true` for that plugin",
            existing.source, existing.toolset
        ),
    )
}

pub(crate) fn unknown(name: &str) -> Error {
    Error::new(ErrorCode::UnknownTool, format!("Unknown tool: {name}"))
}
