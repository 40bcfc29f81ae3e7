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
//! | [`ArgumentValidator`] | the one argument check every call path applies |
//! | [`Registry::list_schemas`], [`Registry::definitions`] | schema output ([`schemas`](Registry::definitions)) |
//! | [`lazy`] | the lazy mode's `tool_search` |
//! | [`Prompt`], [`Resources`], [`Catalog`] | prompts and resources beside the tools ([`catalog`](Registry::register_catalog)) |
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

mod arguments;
mod availability;
mod catalog;
mod entry;
pub mod lazy;
pub mod names;
mod prompt;
mod resource;
mod schemas;
mod tool;

use std::collections::BTreeMap;
use std::sync::Arc;

pub use arguments::ArgumentValidator;
pub use availability::{Check, CheckCache};
pub use catalog::{Catalog, PromptEntry, Provenance, ResourceEntry, TemplateEntry};
pub use entry::{Registration, SchemaPatch, ToolAudience, ToolEntry, ToolSource};
pub use prompt::{Completion, FnPrompt, Prompt, PromptArgument, PromptMessage, PromptResult, PromptSpec};
pub use resource::{MAX_URI_BYTES, ResourceSpec, ResourceTemplateSpec, Resources, UriTemplate, check_uri};
pub use schemas::openai_definition;
pub use tool::{
    BlockingFnTool, BoxFuture, CallContext, CallId, FnTool, NestedResult, Standing, TaskSupport, Tool,
    ToolCaller, ToolCallerHandle, ToolHints, ToolOutput, ToolSpec, Usage, model_text,
};

use crate::error::{Error, ErrorCode, Result};
use crate::identity::ComponentHash;

/// The tools, keyed by name (listed in name order), and the prompts,
/// resources and resource templates beside them. Cheap to clone: entries
/// are shared.
#[derive(Debug, Clone, Default)]
pub struct Registry {
    entries: BTreeMap<String, Arc<ToolEntry>>,
    prompts: BTreeMap<String, Arc<PromptEntry>>,
    resources: BTreeMap<String, Arc<ResourceEntry>>,
    templates: BTreeMap<String, Arc<TemplateEntry>>,
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

    /// Registers the prompts, resources and templates of `catalog` as
    /// offered by `source`, **trusted-only**. All or nothing. Their toolset
    /// is the catalog's, else the source's (`mcp-SERVER`, `wasm-HASH12`, or
    /// for a built-in `builtin`).
    ///
    /// # Errors
    ///
    /// `duplicate_tool` when a prompt name, resource URI or template is
    /// taken (by another source, or twice in the catalog);
    /// `invalid_arguments` for a prompt name that breaks the tool-name rule,
    /// a URI that is not one, or a template this host cannot match.
    pub fn register_catalog(&mut self, source: ToolSource, catalog: Catalog) -> Result<()> {
        self.add_catalog(source, ToolAudience::Trusted, catalog)
    }

    /// Registers a built-in catalog reviewed as safe for public turns: the
    /// only way to public prompts and resources.
    ///
    /// # Errors
    ///
    /// As [`Registry::register_catalog`].
    pub fn register_public_catalog(&mut self, catalog: Catalog) -> Result<()> {
        self.add_catalog(ToolSource::Builtin, ToolAudience::Public, catalog)
    }

    fn add_catalog(
        &mut self,
        source: ToolSource,
        audience: ToolAudience,
        mut catalog: Catalog,
    ) -> Result<()> {
        let toolset = catalog
            .toolset
            .take()
            .unwrap_or_else(|| default_toolset(&source, "builtin"));
        let checked = catalog.check(Provenance {
            source: source.clone(),
            audience,
            toolset,
        })?;
        if let Some((name, existing)) = checked
            .prompts
            .iter()
            .find_map(|p| self.prompts.get(&p.spec().name).map(|e| (&p.spec().name, e)))
        {
            return Err(catalog::taken("prompt", name, &existing.provenance, &source));
        }
        if let Some((uri, existing)) = checked
            .resources
            .iter()
            .find_map(|r| self.resources.get(&r.spec.uri).map(|e| (&r.spec.uri, e)))
        {
            return Err(catalog::taken("resource", uri, &existing.provenance, &source));
        }
        if let Some((template, existing)) = checked.templates.iter().find_map(|t| {
            self.templates
                .get(&t.spec.uri_template)
                .map(|e| (&t.spec.uri_template, e))
        }) {
            return Err(catalog::taken(
                "resource template",
                template,
                &existing.provenance,
                &source,
            ));
        }
        for p in checked.prompts {
            self.prompts.insert(p.spec().name.clone(), Arc::new(p));
        }
        for r in checked.resources {
            self.resources.insert(r.spec.uri.clone(), Arc::new(r));
        }
        for t in checked.templates {
            self.templates.insert(t.spec.uri_template.clone(), Arc::new(t));
        }
        Ok(())
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
        let default_toolset = default_toolset(&source, &name);
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
        if let Some((name, theirs)) = other.prompts.iter().find(|(n, _)| self.prompts.contains_key(*n)) {
            let existing = &self.prompts[name].provenance;
            return Err(catalog::taken(
                "prompt",
                name,
                existing,
                &theirs.provenance.source,
            ));
        }
        if let Some((uri, theirs)) = other
            .resources
            .iter()
            .find(|(n, _)| self.resources.contains_key(*n))
        {
            let existing = &self.resources[uri].provenance;
            return Err(catalog::taken(
                "resource",
                uri,
                existing,
                &theirs.provenance.source,
            ));
        }
        if let Some((t, theirs)) = other
            .templates
            .iter()
            .find(|(n, _)| self.templates.contains_key(*n))
        {
            let existing = &self.templates[t].provenance;
            return Err(catalog::taken(
                "resource template",
                t,
                existing,
                &theirs.provenance.source,
            ));
        }
        self.entries
            .extend(other.entries.iter().map(|(k, v)| (k.clone(), Arc::clone(v))));
        self.prompts
            .extend(other.prompts.iter().map(|(k, v)| (k.clone(), Arc::clone(v))));
        self.resources
            .extend(other.resources.iter().map(|(k, v)| (k.clone(), Arc::clone(v))));
        self.templates
            .extend(other.templates.iter().map(|(k, v)| (k.clone(), Arc::clone(v))));
        Ok(())
    }

    /// A copy without any MCP tool, prompt or resource.
    pub fn clone_without_mcp(&self) -> Registry {
        self.filtered(|source, _| !matches!(source, ToolSource::Mcp { .. }))
    }

    /// Removes every MCP tool, prompt and resource; returns how many tools
    /// were removed.
    pub fn unregister_mcp(&mut self) -> usize {
        self.remove_where(|source| matches!(source, ToolSource::Mcp { .. }))
    }

    /// Removes every tool, prompt and resource of MCP server `server` (and
    /// nothing else); returns how many tools were removed.
    pub fn unregister_mcp_server(&mut self, server: &str) -> usize {
        self.remove_where(|source| matches!(source, ToolSource::Mcp { server: s } if s == server))
    }

    /// Removes every tool, prompt and resource of the component with `hash`
    /// (and nothing else); returns how many tools were removed.
    pub fn unregister_component(&mut self, hash: ComponentHash) -> usize {
        self.remove_where(|source| *source == ToolSource::Wasm { component_hash: hash })
    }

    /// A copy with only what a turn of `audience` may use: for
    /// [`ToolAudience::Public`], only what was registered public.
    pub fn clone_for_audience(&self, audience: ToolAudience) -> Registry {
        self.filtered(|_, entry| audience.may_use(entry))
    }

    fn filtered(&self, keep: impl Fn(&ToolSource, ToolAudience) -> bool) -> Registry {
        fn keep_in<E>(map: &BTreeMap<String, Arc<E>>, keep: impl Fn(&E) -> bool) -> BTreeMap<String, Arc<E>> {
            map.iter()
                .filter(|(_, e)| keep(e))
                .map(|(k, v)| (k.clone(), Arc::clone(v)))
                .collect()
        }
        let by = |p: &Provenance| keep(&p.source, p.audience);
        Registry {
            entries: keep_in(&self.entries, |e| keep(&e.source, e.audience)),
            prompts: keep_in(&self.prompts, |e| by(&e.provenance)),
            resources: keep_in(&self.resources, |e| by(&e.provenance)),
            templates: keep_in(&self.templates, |e| by(&e.provenance)),
        }
    }

    fn remove_where(&mut self, remove: impl Fn(&ToolSource) -> bool) -> usize {
        let before = self.entries.len();
        self.entries.retain(|_, e| !remove(&e.source));
        self.prompts.retain(|_, e| !remove(&e.provenance.source));
        self.resources.retain(|_, e| !remove(&e.provenance.source));
        self.templates.retain(|_, e| !remove(&e.provenance.source));
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

    /// The prompt named `name`.
    pub fn prompt(&self, name: &str) -> Option<&Arc<PromptEntry>> {
        self.prompts.get(name)
    }

    /// Every prompt, in name order.
    pub fn prompts(&self) -> impl Iterator<Item = &Arc<PromptEntry>> {
        self.prompts.values()
    }

    /// Every resource, in URI order.
    pub fn resources(&self) -> impl Iterator<Item = &Arc<ResourceEntry>> {
        self.resources.values()
    }

    /// Every resource template, in template order.
    pub fn resource_templates(&self) -> impl Iterator<Item = &Arc<TemplateEntry>> {
        self.templates.values()
    }

    /// Where `uri` is read: the resource registered at `uri`, else the
    /// first template (in template order) that matches it; `None` when
    /// neither is.
    pub fn resource_for(&self, uri: &str) -> Option<(&Arc<dyn Resources>, &Provenance)> {
        if let Some(entry) = self.resources.get(uri) {
            return Some((&entry.reader, &entry.provenance));
        }
        self.templates
            .values()
            .find(|t| t.template.matches(uri).is_some())
            .map(|t| (&t.reader, &t.provenance))
    }

    /// The names of the toolsets the entries (tools, prompts, resources)
    /// belong to (the dynamic toolsets: one per built-in group, MCP server
    /// and component).
    pub fn toolset_names(&self) -> Vec<&str> {
        let catalog = self
            .prompts
            .values()
            .map(|e| &e.provenance)
            .chain(self.resources.values().map(|e| &e.provenance))
            .chain(self.templates.values().map(|e| &e.provenance))
            .map(|p| p.toolset.as_str());
        let mut names: Vec<&str> = self
            .entries
            .values()
            .map(|e| e.toolset.as_str())
            .chain(catalog)
            .collect();
        names.sort_unstable();
        names.dedup();
        names
    }

    /// Whether some tool, prompt, resource or template is in toolset `name`.
    pub fn has_toolset(&self, name: &str) -> bool {
        self.entries.values().any(|e| e.toolset == name)
            || self.prompts.values().any(|e| e.provenance.toolset == name)
            || self.resources.values().any(|e| e.provenance.toolset == name)
            || self.templates.values().any(|e| e.provenance.toolset == name)
    }
}

/// The toolset of what `source` registers without naming one: `mcp-SERVER`,
/// `wasm-HASH12`, or for a built-in `builtin_name` (a built-in tool's own
/// name).
fn default_toolset(source: &ToolSource, builtin_name: &str) -> String {
    match source {
        ToolSource::Builtin => builtin_name.to_string(),
        ToolSource::Mcp { server } => format!("mcp-{server}"),
        ToolSource::Wasm { component_hash } => format!("wasm-{}", component_hash.short()),
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
