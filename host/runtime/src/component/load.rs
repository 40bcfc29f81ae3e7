//! Loading: from bytes to a [`LoadedComponent`], refusing anything unsafe or
//! unusable with an error that says what is wrong.

use std::path::Path;
use std::sync::Arc;

use wasmtime::component::Component;
use wasmtime::component::types::ComponentItem;

use super::{ComponentProbe, LoadedComponent};
use crate::bindings::{WorldVersion, v0_1_0};
use crate::cache::CacheOutcome;
use crate::capabilities::{Declared, Effective, Grants};
use crate::engine::Engine;
use crate::sandbox;
use toolhost_core::error::{Error, ErrorCode, Result};
use toolhost_core::identity::ComponentHash;
use toolhost_core::limits::{LimitsOverride, MetadataLimits};
use toolhost_core::registry::names::is_valid_tool_name;
use toolhost_core::registry::{ToolHints, ToolSpec};

/// Options for loading a component.
#[derive(Debug, Clone, Default)]
pub struct LoadOptions {
    /// The hash the bytes must have (a pin). A mismatch is `hash_mismatch`.
    pub expected_hash: Option<ComponentHash>,
    /// Limits for every call of this component (on top of the engine's).
    pub limits: LimitsOverride,
    /// What the operator grants this component (see [`crate::capabilities`]).
    pub grants: Grants,
}

impl Engine {
    /// Loads the component in `path`. See [`Engine::load`].
    ///
    /// # Errors
    ///
    /// `io` when the file cannot be read, then as [`Engine::load`].
    pub async fn load_file(&self, path: &Path, options: LoadOptions) -> Result<Arc<LoadedComponent>> {
        let bytes = tokio::fs::read(path)
            .await
            .map_err(|e| Error::io(format!("cannot read {}", path.display()), e))?;
        self.load(bytes, options).await
    }

    /// Checks, compiles (or fetches from the cache) and lists the tools of the
    /// component in `bytes`.
    ///
    /// # Errors
    ///
    /// - `hash_mismatch`: `options.expected_hash` is set and differs;
    /// - `invalid_component`: not WebAssembly, a core module rather than a
    ///   component, invalid, or its tool list breaks the rules (names must
    ///   match `^[A-Za-z0-9_-]{1,64}$` and be unique; parameters must be a JSON
    ///   object schema);
    /// - `unsupported_world`: it does not export a served `toolhost:plugin/tool`;
    /// - `missing_imports`: it imports interfaces the host does not provide
    ///   (all of them are listed);
    /// - `capability_not_granted`: it imports an interface whose capability
    ///   it is not granted (`wasi:http/outgoing-handler` without an `http`
    ///   host both declared and granted);
    /// - `config`: its memory limit exceeds the engine's ceiling, or its
    ///   stack limit is out of range or one size too many;
    /// - a call error if `list-tools` itself traps or runs out of a limit.
    pub async fn load(&self, bytes: Vec<u8>, options: LoadOptions) -> Result<Arc<LoadedComponent>> {
        self.probe(bytes, options).await?.load().await
    }

    /// Runs every check of [`Engine::load`] up to the tool list: the
    /// component is compiled, linked and granted, but `list-tools` is not
    /// called yet. For reviewing a component ([`ComponentProbe`]); serving
    /// it takes [`ComponentProbe::load`].
    ///
    /// # Errors
    ///
    /// As [`Engine::load`], but for the tool list's.
    pub async fn probe(&self, bytes: Vec<u8>, options: LoadOptions) -> Result<ComponentProbe> {
        let hash = ComponentHash::of(&bytes);
        if let Some(expected) = options.expected_hash
            && expected != hash
        {
            return Err(Error::new(
                ErrorCode::HashMismatch,
                format!(
                    "the component's bytes hash to {hash}, but the pin expects {expected}; refusing to load it (update the pin only if you trust the new bytes)"
                ),
            ));
        }
        check_header(&bytes)?;
        let declared = Declared::from_component(&bytes)?;
        let capabilities = Effective::resolve(&declared, &options.grants)?;
        let ceiling = self.config().max_memory_bytes;
        if let Some(mb) = options.limits.memory_mb
            && mb.saturating_mul(1 << 20) > ceiling
        {
            return Err(Error::new(
                ErrorCode::Config,
                format!(
                    "memory_mb = {mb} exceeds the engine's ceiling of {} MiB (max_memory_bytes)",
                    ceiling >> 20
                ),
            ));
        }
        if let Some(kb) = options.limits.wasm_stack_kb {
            // Builds the stack tier now, so that a bad value fails the load.
            let bytes = usize::try_from(kb.saturating_mul(1 << 10)).unwrap_or(usize::MAX);
            self.stack_tier(bytes)
                .map_err(|e| e.context("the plugin's wasm_stack_kb cannot be served"))?;
        }
        let engine = self.clone();
        let size_bytes = bytes.len();
        let (component, cache) = tokio::task::spawn_blocking(move || engine.compile(&hash, &bytes))
            .await
            .map_err(|e| Error::internal(format!("the compile task failed: {e}")))??;

        let (world, imports) = self.check_world(&component)?;
        check_granted(&imports, &declared, &capabilities)?;
        let instance_pre = self.inner.linker.instantiate_pre(&component).map_err(|e| {
            Error::new(
                ErrorCode::MissingImports,
                format!("the component cannot be linked: {e:#}"),
            )
        })?;
        let pre = v0_1_0::PluginPre::new(instance_pre).map_err(|e| {
            Error::new(
                ErrorCode::UnsupportedWorld,
                format!(
                    "the component's exports do not match {}: {e:#}",
                    world.world_name()
                ),
            )
        })?;
        let loaded = LoadedComponent {
            engine: self.clone(),
            hash,
            size_bytes,
            world,
            imports,
            tools: Vec::new(),
            limits: options.limits,
            declared,
            capabilities,
            cache,
            pre,
            tier_pres: Default::default(),
            log_budget: Arc::new(toolhost_core::limits::LogBudget::new(
                &self.config().default_limits.apply(&options.limits),
            )),
        };
        Ok(ComponentProbe::new(loaded))
    }

    fn compile(&self, hash: &ComponentHash, bytes: &[u8]) -> Result<(Component, CacheOutcome)> {
        let wasmtime = &self.inner.wasmtime;
        let compile = || {
            Component::new(wasmtime, bytes).map_err(|e| {
                Error::new(
                    ErrorCode::InvalidComponent,
                    format!("the component is not valid: {e:#}"),
                )
            })
        };
        match &self.inner.cache {
            Some(cache) => cache.get_or_compile(wasmtime, hash, compile),
            None => Ok((compile()?, CacheOutcome::Compiled)),
        }
    }

    fn check_world(&self, component: &Component) -> Result<(WorldVersion, Vec<String>)> {
        let wasmtime = &self.inner.wasmtime;
        let ty = component.component_type();
        let exports: Vec<String> = ty.exports(wasmtime).map(|(name, _)| name.to_string()).collect();
        let world = exports.iter().find_map(|name| WorldVersion::from_export(name)).ok_or_else(|| {
            let served: Vec<&str> = WorldVersion::ALL.iter().map(|v| v.tool_export()).collect();
            Error::new(
                ErrorCode::UnsupportedWorld,
                format!(
                    "the component does not implement a toolhost plugin world: it exports [{}], but a plugin must export {}; build it against wit/ (for Rust, with toolhost-sdk)",
                    exports.join(", "),
                    served.join(" or ")
                ),
            )
        })?;
        let mut imports = Vec::new();
        let mut missing = Vec::new();
        for (name, item) in ty.imports(wasmtime) {
            imports.push(name.to_string());
            let is_interface = matches!(item.ty, ComponentItem::ComponentInstance(_));
            if !is_interface || !sandbox::is_provided(name) {
                missing.push(name.to_string());
            }
        }
        if !missing.is_empty() {
            return Err(Error::new(
                ErrorCode::MissingImports,
                format!(
                    "the component imports interfaces this host does not provide: {}; remove those imports or ask for a host that provides them",
                    missing.join(", ")
                ),
            ));
        }
        Ok((world, imports))
    }
}

impl ComponentProbe {
    /// Lists the component's tools, checks them as [`Engine::load`] does,
    /// and returns the component ready to serve.
    ///
    /// # Errors
    ///
    /// A call error if `list-tools` traps or runs out of a limit;
    /// `invalid_component` if the list breaks a rule (see [`Engine::load`]).
    pub async fn load(self) -> Result<Arc<LoadedComponent>> {
        let mut loaded = self.into_inner();
        let specs = loaded
            .list_tools()
            .await
            .result
            .map_err(|e| e.context("listing the component's tools failed"))?;
        let claims = loaded.effective_limits(&LimitsOverride::default()).metadata();
        loaded.tools = check_tools(specs, &claims)?;
        tracing::info!(
            component = %loaded.hash,
            tools = loaded.tools.len(),
            cache = ?loaded.cache,
            granted = ?loaded.capabilities,
            "component loaded"
        );
        Ok(Arc::new(loaded))
    }
}

/// Refuses a component that imports an interface it may not use: today,
/// `wasi:http/outgoing-handler` without a declared and granted `http` host.
fn check_granted(imports: &[String], declared: &Declared, capabilities: &Effective) -> Result<()> {
    let needs_http: Vec<&str> = imports
        .iter()
        .map(String::as_str)
        .filter(|i| i.split('@').next() == Some(crate::http::OUTGOING_HANDLER))
        .collect();
    if needs_http.is_empty() || capabilities.http.is_usable() {
        return Ok(());
    }
    let why = if declared.http.is_empty() {
        "it declares no `http` hosts (toolhost_sdk::capabilities! { http: [...] })".to_string()
    } else {
        format!(
            "it declares {} but its grants have no `http` hosts",
            declared
                .http
                .iter()
                .map(|h| format!("`http {h}`"))
                .collect::<Vec<_>>()
                .join(", ")
        )
    };
    Err(Error::new(
        ErrorCode::CapabilityNotGranted,
        format!(
            "the component imports {} (outbound HTTP), which is not granted to it: {why}; grant hosts in its [plugins.grants], e.g. http = [\"https://api.example.com\"], or remove the import",
            needs_http.join(", ")
        ),
    ))
}

/// Checks that `bytes` are a WebAssembly component, before anything is
/// compiled.
///
/// # Errors
///
/// `invalid_component`, saying whether the bytes are a core module (and how
/// to make a component of it) or not WebAssembly at all.
pub fn check_header(bytes: &[u8]) -> Result<()> {
    if wasmparser::Parser::is_component(bytes) {
        return Ok(());
    }
    let message = if wasmparser::Parser::is_core_wasm(bytes) {
        "this is a core WebAssembly module, not a component; build the plugin for the wasm32-wasip2 target (or wrap it with `wasm-tools component new`)".to_string()
    } else {
        let shown = bytes.len().min(8);
        format!(
            "these bytes are not WebAssembly: they start with {:02x?} instead of the `\\0asm` magic number",
            &bytes[..shown]
        )
    };
    Err(Error::new(ErrorCode::InvalidComponent, message))
}

/// Checks the listed tools in one pass: sizes first (before any JSON is
/// parsed), then each name and schema; a `HashSet` finds duplicates.
fn check_tools(
    specs: Vec<v0_1_0::exports::toolhost::plugin::tool::ToolSpec>,
    claims: &MetadataLimits,
) -> Result<Vec<ToolSpec>> {
    let invalid = |msg: String| Error::new(ErrorCode::InvalidComponent, msg);
    if specs.is_empty() {
        return Err(invalid("the component lists no tools".into()));
    }
    claims
        .check(
            "the component",
            specs
                .iter()
                .map(|s| (s.name.as_str(), s.description.as_str(), s.parameters.as_str())),
        )
        .map_err(invalid)?;
    let mut seen = std::collections::HashSet::with_capacity(specs.len());
    let mut tools: Vec<ToolSpec> = Vec::with_capacity(specs.len());
    for spec in specs {
        if !is_valid_tool_name(&spec.name) {
            return Err(invalid(format!(
                "the component declares a tool named {:?}, which is not a valid tool name: names are 1 to 64 characters from A-Z a-z 0-9 _ -",
                spec.name.chars().take(80).collect::<String>()
            )));
        }
        if !seen.insert(spec.name.clone()) {
            return Err(invalid(format!(
                "the component declares the tool `{}` twice; tool names must be unique",
                spec.name
            )));
        }
        let parameters: serde_json::Value = serde_json::from_str(&spec.parameters).map_err(|e| {
            invalid(format!(
                "the parameters of tool `{}` are not JSON: {e}",
                spec.name
            ))
        })?;
        if parameters.get("type").and_then(|t| t.as_str()) != Some("object") {
            return Err(invalid(format!(
                "the parameters of tool `{}` must be a JSON Schema with \"type\": \"object\"",
                spec.name
            )));
        }
        if let Err(e) = jsonschema::meta::validate(&parameters) {
            return Err(invalid(format!(
                "the parameters of tool `{}` are not a valid JSON Schema: {e}",
                spec.name
            )));
        }
        let h = spec.hints;
        tools.push(ToolSpec {
            name: spec.name,
            description: spec.description,
            parameters,
            hints: ToolHints {
                read_only: h.read_only,
                destructive: h.destructive,
                idempotent: h.idempotent,
                open_world: h.open_world,
            },
        });
    }
    Ok(tools)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn headers_are_checked_before_compiling() {
        assert_eq!(
            check_header(b"garbage!").unwrap_err().code(),
            ErrorCode::InvalidComponent
        );
        let core = check_header(b"\0asm\x01\0\0\0").unwrap_err();
        assert!(
            core.message().contains("core WebAssembly module"),
            "{}",
            core.message()
        );
        assert!(check_header(b"\0asm\x0d\0\x01\0").is_ok());
        assert!(check_header(b"").is_err());
    }
}
