//! Loading: from bytes to a [`LoadedComponent`], refusing anything unsafe or
//! unusable with an error that says what is wrong.

use std::path::Path;
use std::sync::Arc;

use wasmtime::component::Component;

use super::shape::Shape;
use super::{ComponentProbe, LoadedComponent, ToolChecks};
use crate::bindings::{PluginPre, WorldVersion, latest};
use crate::cache::CacheOutcome;
use crate::capabilities::{Declared, Effective, Grants};
use crate::engine::Engine;
use crate::sandbox::WasiKits;
use toolhost_core::error::{Error, ErrorCode, Result};
use toolhost_core::identity::ComponentHash;
use toolhost_core::limits::{LimitsOverride, MetadataLimits, ToolClaim};
use toolhost_core::registry::names::is_valid_tool_name;
use toolhost_core::registry::{ArgumentValidator, TaskSupport, ToolHints, ToolSpec};

/// Options for loading a component.
#[derive(Debug, Clone, Default)]
pub struct LoadOptions {
    /// The hash the bytes must have (a pin). A mismatch is `hash_mismatch`.
    pub expected_hash: Option<ComponentHash>,
    /// Limits for every call of this component (on top of the engine's).
    pub limits: LimitsOverride,
    /// What the operator grants this component (see [`crate::capabilities`]).
    pub grants: Grants,
    /// Which tools it may call (default: those declared and granted).
    pub tool_calls: ToolCalls,
    /// Whether its stdout goes back to the caller, in
    /// [`SandboxedCall::stdout`](super::SandboxedCall::stdout), instead of
    /// into the log (for a component whose output is its caller's business,
    /// such as a script's printed text).
    pub keep_stdout: bool,
}

/// Which tools a component may call through `toolhost:plugin/tools`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum ToolCalls {
    /// Those it declares and the operator grants by name: every plugin a
    /// config loads.
    #[default]
    Granted,
    /// Any tool the [`ToolCaller`](toolhost_core::registry::ToolCaller) of
    /// each call accepts. Only for a host's own component that a built-in
    /// calls with a caller enforcing its own rules (codemode's
    /// `run_tools_script` passes one that admits the session's visible tools
    /// minus its exclusions, and counts them). No config grant can ask for
    /// it, and the component loaded this way is never registered, so no
    /// other plugin and no ordinary dispatch reaches it.
    Caller,
}

impl Engine {
    /// Loads the component in `path`. See [`Engine::load`].
    ///
    /// # Errors
    ///
    /// As [`Engine::read_component`], then as [`Engine::load`].
    pub async fn load_file(&self, path: &Path, options: LoadOptions) -> Result<Arc<LoadedComponent>> {
        let bytes = self.read_component(path).await?;
        self.load(bytes, options).await
    }

    /// The bytes of the component file at `path`, read with the bounds of
    /// `toolhost_core::bounded` (a regular file of at most
    /// [`EngineConfig::max_component_bytes`](crate::EngineConfig::max_component_bytes),
    /// read off the async workers).
    ///
    /// # Errors
    ///
    /// `too_large` for a file over the cap; `io` when it cannot be read or
    /// is not a regular file (a named pipe, a device, a folder).
    pub async fn read_component(&self, path: &Path) -> Result<Vec<u8>> {
        read_component_file(path, self.config().max_component_bytes).await
    }

    /// Checks, compiles (or fetches from the cache) and lists the tools of the
    /// component in `bytes`.
    ///
    /// # Errors
    ///
    /// - `too_large`: the bytes exceed
    ///   [`EngineConfig::max_component_bytes`](crate::EngineConfig::max_component_bytes);
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
    /// component is compiled, linked and granted, but `list-tools` (and
    /// `declare`) are not called yet. For reviewing a component
    /// ([`ComponentProbe`]); serving it takes [`ComponentProbe::load`].
    ///
    /// # Errors
    ///
    /// As [`Engine::load`], but for the tool list's and the `declare`
    /// answer's.
    pub async fn probe(&self, bytes: Vec<u8>, options: LoadOptions) -> Result<ComponentProbe> {
        let max = self.config().max_component_bytes;
        if bytes.len() as u64 > max {
            return Err(too_large(bytes.len() as u64, max));
        }
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
        // Everything the bytes alone can tell is checked before compiling.
        let shape = Shape::read(&bytes)?;
        // Bad grants (a missing folder) fail now too; the effective
        // capabilities are resolved again if `declare()` adds to them.
        let sectioned = Effective::resolve(&shape.declared, &options.grants)?;
        if !shape.http_imports().is_empty() && options.grants.http.is_empty() {
            return Err(http_not_granted(&shape, &shape.declared));
        }
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

        let instance_pre = self.inner.linker.instantiate_pre(&component).map_err(|e| {
            Error::new(
                ErrorCode::MissingImports,
                format!("the component cannot be linked: {e:#}"),
            )
        })?;
        let world = shape.world;
        let pre = PluginPre::new(world, instance_pre).map_err(|e| {
            Error::new(
                ErrorCode::UnsupportedWorld,
                format!(
                    "the component's exports do not match {}: {e:#}",
                    world.world_name()
                ),
            )
        })?;
        let base_limits = self.config().default_limits.apply(&options.limits);
        let mut loaded = LoadedComponent {
            engine: self.clone(),
            hash,
            size_bytes,
            world,
            imports: shape.imports.clone(),
            tools: Vec::new(),
            tool_names: Vec::new(),
            checks: Vec::new(),
            catalog: Arc::default(),
            limits: options.limits,
            base_limits,
            keep_stdout: options.keep_stdout,
            tool_calls: options.tool_calls,
            declared: Declared::default(),
            capabilities: Effective::default(),
            http_access: Arc::default(),
            wasi_kits: WasiKits::new(&Effective::default()),
            cache,
            pre,
            tier_pres: Default::default(),
            log_budget: Arc::new(toolhost_core::limits::LogBudget::new(&base_limits)),
        };
        // 0.2.0's `list-tools` and `declare` run with no capabilities;
        // 0.1.0's `list-tools` always ran with its granted ones.
        if world == WorldVersion::V0_1_0 {
            loaded.set_capabilities(sectioned.clone());
        }
        Ok(ComponentProbe::new(loaded, shape, options.grants, sectioned))
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
}

impl ComponentProbe {
    /// Lists the component's tools (and asks what it declares, for a version
    /// that can say), checks them as [`Engine::load`] does, and returns the
    /// component ready to serve.
    ///
    /// # Errors
    ///
    /// A call error if `list-tools` or `declare` traps or runs out of a
    /// limit; `invalid_component` if the list or the declaration breaks a
    /// rule; `capability_not_granted` if `declare` leaves an import
    /// ungranted (see [`Engine::load`]).
    pub async fn load(self) -> Result<Arc<LoadedComponent>> {
        let (mut loaded, shape, grants, sectioned) = self.into_parts();
        let (hash, world, cache) = (loaded.hash, loaded.world, loaded.cache);
        let super::call::Listed {
            specs,
            declared: answer,
            catalog,
        } = loaded
            .list_and_declare()
            .await
            .result
            .map_err(|e| e.context("listing the component's tools failed"))?;
        let claims = loaded.effective_limits(&LimitsOverride::default()).metadata();
        let catalog = super::catalog::check_catalog(catalog, &claims)?;
        let (tools, checks) = check_tools(specs, &claims, !catalog.is_empty())?;
        let mut declared = shape.declared.clone();
        let mut capabilities = match answer {
            Some(answer) => {
                let answer = Declared::from(answer);
                answer.check()?;
                declared.merge(answer);
                Effective::resolve(&declared, &grants)?
            }
            None => sectioned,
        };
        capabilities.tools_from_caller = loaded.tool_calls == ToolCalls::Caller;
        if !shape.http_imports().is_empty() && !capabilities.http.is_usable() {
            return Err(http_not_granted(&shape, &declared));
        }
        let tools = with_task_support(tools, &declared)?;
        loaded.set_tools(tools, checks);
        loaded.catalog = Arc::new(catalog);
        loaded.declared = declared;
        loaded.set_capabilities(capabilities);
        for warning in loaded.warnings() {
            tracing::warn!(component = %hash, "{warning}");
        }
        tracing::info!(
            component = %hash,
            world = world.version(),
            tools = loaded.tools.len(),
            prompts = loaded.catalog.prompts.len(),
            resources = loaded.catalog.resources.len() + loaded.catalog.templates.len(),
            cache = ?cache,
            granted = ?loaded.capabilities,
            "component loaded"
        );
        Ok(Arc::new(loaded))
    }
}

/// The bytes of the component file at `path`, if it is a regular file of at
/// most `max` bytes, read off the async workers (`toolhost_core::bounded`):
/// the one way a component file is read.
///
/// # Errors
///
/// `too_large` for a file over the cap; `io` when it cannot be read or is
/// not a regular file (a named pipe, a device, a folder).
pub async fn read_component_file(path: &Path, max: u64) -> Result<Vec<u8>> {
    toolhost_core::bounded::read_file_async(path.to_path_buf(), max)
        .await
        .map_err(|e| toolhost_core::bounded::error("the component file", path, max, e))
}

/// The refusal of `size` bytes of component over the cap `max`.
fn too_large(size: u64, max: u64) -> Error {
    Error::new(
        ErrorCode::TooLarge,
        format!(
            "the component is {size} bytes, more than the engine's cap of {max} bytes (max_component_bytes); refusing it"
        ),
    )
}

/// The refusal of a component that imports `wasi:http/outgoing-handler`
/// without an `http` host both declared and granted, with the fix for each
/// side: the author declares, the operator grants.
fn http_not_granted(shape: &Shape, declared: &Declared) -> Error {
    let why = if declared.http.is_empty() {
        "it declares no `http` hosts".to_string()
    } else {
        format!(
            "it declares {} but its grants have no matching `http` hosts",
            declared
                .http
                .iter()
                .map(|h| format!("`http {h}`"))
                .collect::<Vec<_>>()
                .join(", ")
        )
    };
    Error::new(
        ErrorCode::CapabilityNotGranted,
        format!(
            "the component imports {} (outbound HTTP), which is not granted to it: {why}. To use HTTP, its author declares the hosts (Rust: toolhost_sdk::capabilities! {{ http: [\"api.example.com\"] }}; any language: return them from declare() in world {}, or run `toolhost declare IN OUT --http api.example.com` on the built component) and the operator grants them in its [plugins.grants], e.g. http = [\"https://api.example.com\"]. If it does not need HTTP, build it without the import (jco: `jco componentize -d http`; componentize-py: target a world that does not import wasi:http)",
            shape.http_imports().join(", "),
            WorldVersion::LATEST.world_name(),
        ),
    )
}

/// Checks the listed tools in one pass: sizes first (before any JSON is
/// parsed), then each name and schema; a `HashSet` finds duplicates. A
/// component must offer something: tools, or (`has_catalog`) prompts or
/// resources.
fn check_tools(
    specs: Vec<latest::ToolSpec>,
    claims: &MetadataLimits,
    has_catalog: bool,
) -> Result<(Vec<ToolSpec>, Vec<ToolChecks>)> {
    let invalid = |msg: String| Error::new(ErrorCode::InvalidComponent, msg);
    if specs.is_empty() && !has_catalog {
        return Err(invalid(
            "the component lists no tools (and no prompts or resources)".into(),
        ));
    }
    claims
        .check(
            "the component",
            specs.iter().map(|s| ToolClaim {
                name: &s.name,
                description: &s.description,
                parameters: &s.parameters,
                output_schema: s.output_schema.as_deref(),
            }),
        )
        .map_err(invalid)?;
    let mut seen = std::collections::HashSet::with_capacity(specs.len());
    let mut tools: Vec<ToolSpec> = Vec::with_capacity(specs.len());
    let mut checks = Vec::with_capacity(specs.len());
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
        let parameters = object_schema(&spec.name, "parameters", &spec.parameters)?;
        let (output_schema, output) = match &spec.output_schema {
            None => (None, None),
            Some(text) => {
                let schema = object_schema(&spec.name, "output schema", text)?;
                let validator = jsonschema::validator_for(&schema).map_err(|e| {
                    invalid(format!(
                        "the output schema of tool `{}` cannot be compiled: {e}",
                        spec.name
                    ))
                })?;
                (Some(schema), Some(validator))
            }
        };
        let h = spec.hints;
        if let Some(title) = &spec.title
            && (title.trim().is_empty() || title.len() > MAX_TITLE_BYTES || title.contains(['\n', '\r']))
        {
            return Err(invalid(format!(
                "the title of tool `{}` must be one non-empty line of at most {MAX_TITLE_BYTES} bytes",
                spec.name
            )));
        }
        let tool = ToolSpec {
            name: spec.name,
            title: spec.title,
            description: spec.description,
            parameters,
            output_schema,
            hints: ToolHints {
                read_only: h.read_only,
                destructive: h.destructive,
                idempotent: h.idempotent,
                open_world: h.open_world,
            },
            task_support: TaskSupport::Forbidden,
            task_deferred: false,
        };
        let arguments = ArgumentValidator::compile(&tool).map_err(|e| invalid(e.message().to_string()))?;
        checks.push(ToolChecks { arguments, output });
        tools.push(tool);
    }
    Ok((tools, checks))
}

/// `tools` with the task support the component declares for them (`task
/// TOOL SUPPORT` lines of its section).
///
/// # Errors
///
/// `invalid_component` when a line names a tool the component does not
/// list: a declaration that does nothing is a mistake, said at load.
fn with_task_support(mut tools: Vec<ToolSpec>, declared: &Declared) -> Result<Vec<ToolSpec>> {
    for (name, support) in &declared.tasks {
        let Some(tool) = tools.iter_mut().find(|t| &t.name == name) else {
            return Err(Error::new(
                ErrorCode::InvalidComponent,
                format!("the component declares task support for `{name}`, which is not one of its tools"),
            ));
        };
        tool.task_support = *support;
    }
    for name in &declared.tasks_deferred {
        match tools.iter_mut().find(|t| &t.name == name) {
            Some(tool) if !tool.task_support.is_forbidden() => tool.task_deferred = true,
            _ => {
                return Err(Error::new(
                    ErrorCode::InvalidComponent,
                    format!(
                        "the component declares the task of `{name}` deferred, but `{name}` is not one of its tools with task support (`task {name} optional` or `required`)"
                    ),
                ));
            }
        }
    }
    Ok(tools)
}

/// The longest title a tool, prompt or resource may state, in bytes.
pub(super) const MAX_TITLE_BYTES: usize = 256;

/// Parses `text`, tool `tool`'s `which` schema (`parameters` or `output
/// schema`), and checks that it is a valid JSON Schema describing an object.
fn object_schema(tool: &str, which: &str, text: &str) -> Result<serde_json::Value> {
    let invalid = |msg: String| Error::new(ErrorCode::InvalidComponent, msg);
    let are = if which.ends_with('s') { "are" } else { "is" };
    let schema: serde_json::Value = serde_json::from_str(text)
        .map_err(|e| invalid(format!("the {which} of tool `{tool}` {are} not JSON: {e}")))?;
    if schema.get("type").and_then(|t| t.as_str()) != Some("object") {
        return Err(invalid(format!(
            "the {which} of tool `{tool}` must be a JSON Schema with \"type\": \"object\""
        )));
    }
    if let Err(e) = jsonschema::meta::validate(&schema) {
        return Err(invalid(format!(
            "the {which} of tool `{tool}` {are} not a valid JSON Schema: {e}"
        )));
    }
    Ok(schema)
}
