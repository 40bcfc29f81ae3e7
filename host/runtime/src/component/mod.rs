//! # Components
//!
//! A [`LoadedComponent`] is a plugin that passed every load-time check: its
//! bytes have the expected hash, they are a component of a served world, it
//! imports nothing the host does not provide, its tools have valid, unique
//! names and object schemas, and it is compiled and type-checked against the
//! linker (an `InstancePre` is kept). From then on each call instantiates it
//! afresh, so no state survives between calls.
//!
//! [`WasmTool`] is one of its tools as a registry [`Tool`](toolhost_core::registry::Tool).
//!
//! [`ComponentProbe`] ([`Engine::probe`]) is a component that passed every
//! check but those of its tool list, whose `list-tools` can be asked for as
//! it is, in fresh instances: what the conformance suite judges.

mod call;
mod catalog;
mod load;
mod probe;
mod register;
mod shape;
mod tool;

use std::borrow::Cow;
use std::sync::{Arc, Mutex, PoisonError};

use serde::Serialize;

use crate::bindings::{PluginPre, WorldVersion};
use crate::cache::CacheOutcome;
use crate::capabilities::{Declared, Effective};
use crate::engine::{Engine, StackTier};
use crate::http::HttpAccess;
use crate::sandbox::{ComponentRef, WasiKits};
use toolhost_core::error::{Error, Result};
use toolhost_core::identity::ComponentHash;
use toolhost_core::limits::{Limits, LimitsOverride};
use toolhost_core::registry::ToolSpec;

pub use call::{NO_STRUCTURED, NOT_AN_OBJECT, NOT_JSON, OUTPUT_MISFIT, Sandboxed, SandboxedCall};
pub use catalog::{ComponentCatalog, ComponentPrompt, ComponentResources};
pub use load::{LoadOptions, ToolCalls, read_component_file};
pub use probe::{ComponentProbe, ListedTool, Listing};
pub use register::{ComponentRegistration, RegisterComponent};
pub use shape::check_header;
pub use tool::WasmTool;

/// One tool's schemas, compiled at load.
#[derive(Debug)]
pub(crate) struct ToolChecks {
    /// Its parameters: what a direct call's arguments are checked against
    /// (dispatch checks with its own entry, the same validator).
    pub(crate) arguments: toolhost_core::registry::ArgumentValidator,
    /// Its output schema, when it states one: every result must fit it.
    pub(crate) output: Option<jsonschema::Validator>,
}

/// A component loaded, checked and ready to call. Cheap to share (`Arc`).
pub struct LoadedComponent {
    engine: Engine,
    hash: ComponentHash,
    size_bytes: usize,
    world: WorldVersion,
    imports: Vec<String>,
    tools: Vec<ToolSpec>,
    /// Its tools' names (by index), for the calls' log records.
    tool_names: Vec<Arc<str>>,
    /// Each tool's compiled schemas (by index).
    checks: Vec<ToolChecks>,
    /// Its prompts, resources and templates (from 0.3.0 on), checked.
    catalog: Arc<ComponentCatalog>,
    limits: LimitsOverride,
    /// The engine's default limits under `limits`: what a call without
    /// overrides runs under, worked out once.
    base_limits: Limits,
    keep_stdout: bool,
    /// Which tools it may call (see [`ToolCalls`]).
    tool_calls: ToolCalls,
    declared: Declared,
    capabilities: Effective,
    /// `capabilities.http`, shared by the calls.
    http_access: Arc<HttpAccess>,
    /// WASI contexts its calls left for its next calls.
    wasi_kits: WasiKits,
    cache: CacheOutcome,
    /// Linked against the primary engine (the default stack limit).
    pre: PluginPre,
    /// Linked against the engine's stack tiers, by stack size, built on
    /// first use.
    tier_pres: Mutex<Vec<(usize, PluginPre)>>,
    /// Its log budget over time, shared by all its calls.
    log_budget: Arc<toolhost_core::limits::LogBudget>,
}

impl std::fmt::Debug for LoadedComponent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LoadedComponent")
            .field("hash", &self.hash)
            .field("world", &self.world)
            .field("tools", &self.tools.iter().map(|t| &t.name).collect::<Vec<_>>())
            .finish_non_exhaustive()
    }
}

impl LoadedComponent {
    /// The component's identity.
    pub fn hash(&self) -> ComponentHash {
        self.hash
    }

    /// The size of the component's bytes.
    pub fn size_bytes(&self) -> usize {
        self.size_bytes
    }

    /// The world version it implements.
    pub fn world(&self) -> WorldVersion {
        self.world
    }

    /// The interfaces it imports, as `ns:pkg/iface@version`.
    pub fn imports(&self) -> &[String] {
        &self.imports
    }

    /// Its tools, in the order the component listed them.
    pub fn tools(&self) -> &[ToolSpec] {
        &self.tools
    }

    /// Its prompts, resources and resource templates, in the order the
    /// component listed them (empty before 0.3.0, and for a component of
    /// the `plugin` world).
    pub fn catalog(&self) -> &ComponentCatalog {
        &self.catalog
    }

    /// The limits every call of this component runs under (on top of the
    /// engine's defaults).
    pub fn limits(&self) -> &LimitsOverride {
        &self.limits
    }

    /// The capabilities the component declares.
    pub fn declared(&self) -> &Declared {
        &self.declared
    }

    /// The capabilities it gets: declared and granted.
    pub fn capabilities(&self) -> &Effective {
        &self.capabilities
    }

    /// What the operator should know about how it was loaded: grants it
    /// does not declare, which it therefore does not get. Logged at load,
    /// shown by `toolhost inspect` and `toolhost tools --status`.
    pub fn warnings(&self) -> Vec<String> {
        let mut warnings = Vec::new();
        if !self.capabilities.not_declared.is_empty() {
            warnings.push(format!(
                "granted but not declared by the component, so not given to it: {}; a capability needs both (its author declares it: Rust toolhost_sdk::capabilities!, any language declare() in {}, or `toolhost declare IN OUT --env/--dir/--http/--secret/--tool` on the built component); remove the grant if it is not needed",
                self.capabilities.not_declared.join(", "),
                crate::bindings::WorldVersion::LATEST.world_name(),
            ));
        }
        warnings
    }

    /// Whether the compiled code came from the cache.
    pub fn cache_outcome(&self) -> CacheOutcome {
        self.cache
    }

    /// The engine it was loaded into.
    pub fn engine(&self) -> &Engine {
        &self.engine
    }

    /// Its compiled code, on the engine's primary wasmtime engine.
    pub fn compiled(&self) -> &wasmtime::component::Component {
        self.pre.instance_pre().component()
    }

    /// Every tool of the component as a registry tool.
    pub fn wasm_tools(self: &Arc<Self>) -> Vec<WasmTool> {
        (0..self.tools.len())
            .map(|i| WasmTool::new(Arc::clone(self), i))
            .collect()
    }

    /// A JSON description: `hash`, `world`, `tools`, `prompts`,
    /// `resources`, `resource_templates`, `imports`, `capabilities`
    /// (declared, granted), `size_bytes`, `warnings` (the output of
    /// `toolhost inspect`).
    pub fn describe(&self) -> serde_json::Value {
        #[derive(Serialize)]
        struct World<'a> {
            name: &'a str,
            version: &'a str,
        }
        serde_json::json!({
            "hash": self.hash,
            "world": World { name: self.world.world_name(), version: self.world.version() },
            "tools": self.tools,
            "prompts": self.catalog.prompts,
            "resources": self.catalog.resources,
            "resource_templates": self.catalog.templates,
            "imports": self.imports,
            "capabilities": { "declared": self.declared, "granted": self.capabilities },
            "size_bytes": self.size_bytes,
            "warnings": self.warnings(),
        })
    }
}

impl LoadedComponent {
    /// Sets its capabilities, and what its calls share of them.
    fn set_capabilities(&mut self, capabilities: Effective) {
        self.http_access = Arc::new(capabilities.http.clone());
        self.wasi_kits = WasiKits::new(&capabilities);
        self.capabilities = capabilities;
    }

    /// Sets its tools and their compiled schemas.
    fn set_tools(&mut self, tools: Vec<ToolSpec>, checks: Vec<ToolChecks>) {
        self.tool_names = tools.iter().map(|t| Arc::from(t.name.as_str())).collect();
        self.tools = tools;
        self.checks = checks;
    }

    /// What a call's sandbox needs of the component.
    fn for_call(&self) -> ComponentRef<'_> {
        ComponentRef {
            hash: self.hash,
            capabilities: &self.capabilities,
            http: &self.http_access,
            log_budget: &self.log_budget,
            kits: &self.wasi_kits,
        }
    }

    /// The pre-linked component for calls in stack tier `tier`: the
    /// primary one for the default stack (`None`), else one linked against
    /// that tier (see
    /// [`engine`](crate::engine#stack-tiers)), made on first use without
    /// recompiling.
    fn pre_for(&self, tier: Option<&StackTier>) -> Result<Cow<'_, PluginPre>> {
        let Some(tier) = tier else {
            return Ok(Cow::Borrowed(&self.pre));
        };
        let stack_bytes = tier.stack_bytes;
        let mut pres = self.tier_pres.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some((_, pre)) = pres.iter().find(|(size, _)| *size == stack_bytes) {
            return Ok(Cow::Owned(pre.clone()));
        }
        let primary = self.pre.instance_pre().component();
        let bytes = primary
            .serialize()
            .map_err(|e| Error::internal(format!("cannot serialize the compiled component: {e:#}")))?;
        // SAFETY: `bytes` were produced just now by `Component::serialize` in
        // this process, from code this host compiled (or integrity-checked out
        // of its cache), for an engine whose compatibility hash the tier's
        // engine shares (checked when the tier was built).
        let component = unsafe { wasmtime::component::Component::deserialize(&tier.wasmtime, &bytes) }
            .map_err(|e| Error::internal(format!("cannot move the component to a stack tier: {e:#}")))?;
        let instance_pre = tier
            .linker
            .instantiate_pre(&component)
            .map_err(|e| Error::internal(format!("cannot link the component in a stack tier: {e:#}")))?;
        let pre = PluginPre::new(self.world, instance_pre).map_err(|e| {
            Error::internal(format!("cannot type-check the component in a stack tier: {e:#}"))
        })?;
        pres.push((stack_bytes, pre.clone()));
        Ok(Cow::Owned(pre))
    }
}
