//! A component's tools into a registry: [`RegisterComponent`] for a
//! [`Registry`].
//!
//! The registry is WIT-free: it takes a component's tools as registry
//! [`Registration`]s of one [`ToolSource::Wasm`] source, through
//! [`Registry::register_all`], and its prompts and resources as a
//! [`Catalog`](toolhost_core::registry::Catalog) of the same source, through
//! [`Registry::register_catalog`], like every other source.

use std::path::Path;
use std::sync::Arc;

use toolhost_core::error::Result;
use toolhost_core::registry::{Registration, Registry, ToolSource};

use super::LoadedComponent;

/// How a component's tools are registered.
#[derive(Debug, Clone, Default)]
pub struct ComponentRegistration {
    /// The toolset of its tools. Default: `wasm-HASH12` (its short hash).
    pub toolset: Option<String>,
    /// Whether its tools may override built-ins of the same name (the
    /// operator's opt-in, `allow_tool_override` in the config). Tools of
    /// other components or MCP servers, and reserved names, are never
    /// overridden.
    pub allow_tool_override: bool,
}

impl ComponentRegistration {
    /// The registration of the component file at `path`: its tools in
    /// `toolset`, or else in the toolset named after the file (`files.wasm`
    /// → `files`); no override of built-ins.
    pub fn for_file(path: &Path, toolset: Option<String>) -> Self {
        ComponentRegistration {
            toolset: toolset.or_else(|| path.file_stem().map(|s| s.to_string_lossy().into_owned())),
            allow_tool_override: false,
        }
    }
}

impl LoadedComponent {
    /// Registers every tool of this component in `registry`, trusted-only
    /// and tagged with its hash, then its prompts, resources and templates
    /// (in the same toolset), and returns the tools' names. All or
    /// nothing: when the catalog is refused, the tools are taken out again.
    ///
    /// # Errors
    ///
    /// As [`Registry::register_all`]: `duplicate_tool` when a name is taken
    /// or reserved; as [`Registry::register_catalog`]: `duplicate_tool`
    /// when a prompt name, resource URI or template is taken.
    pub fn register(
        self: &Arc<Self>,
        registry: &mut Registry,
        options: &ComponentRegistration,
    ) -> Result<Vec<String>> {
        let toolset = options
            .toolset
            .clone()
            .unwrap_or_else(|| format!("wasm-{}", self.hash().short()));
        let batch = self
            .wasm_tools()
            .into_iter()
            .map(|tool| Registration::new(tool).toolset(toolset.clone()));
        let source = ToolSource::Wasm {
            component_hash: self.hash(),
        };
        let names = registry.register_all(source.clone(), batch, options.allow_tool_override)?;
        if let Some(catalog) = self.registry_catalog(toolset)
            && let Err(e) = registry.register_catalog(source, catalog)
        {
            registry.unregister_component(self.hash());
            return Err(e);
        }
        Ok(names)
    }
}

/// Registering a component's tools, as a method of the registry.
pub trait RegisterComponent {
    /// See [`LoadedComponent::register`].
    ///
    /// # Errors
    ///
    /// As [`LoadedComponent::register`].
    fn register_component(
        &mut self,
        component: &Arc<LoadedComponent>,
        options: &ComponentRegistration,
    ) -> Result<Vec<String>>;
}

impl RegisterComponent for Registry {
    fn register_component(
        &mut self,
        component: &Arc<LoadedComponent>,
        options: &ComponentRegistration,
    ) -> Result<Vec<String>> {
        component.register(self, options)
    }
}
