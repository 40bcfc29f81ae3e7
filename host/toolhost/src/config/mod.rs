//! # Configuration
//!
//! The host's TOML configuration (`toolhost.toml`): plugins, toolsets and
//! the registry mode. Every section rejects unknown keys; an error names the
//! file, line, column and key.
//!
//! ```toml
//! require_approval = ["deploy*"]  # tool-name globs whose calls need approval
//! command_denylist = ["mkfs"]     # programs exec never runs, however spelled
//! command_allowlist = []          # "always" approvals, written back by the gate
//!
//! [tools]
//! registry_mode = "full"          # or "lazy"
//! enabled_toolsets = ["hello"]    # or disabled_toolsets = [...]; not both
//! batch_concurrency = 8
//!
//! [[plugins]]
//! path = "plugins/hello.wasm"     # relative to this file's folder
//!                                 # (or source = "oci://HOST/REPO:TAG", see `distribution`,
//!                                 # or bundled = "calc", a standard plugin: see `crate::standard`)
//! hash = "blake3:..."             # optional pin
//! toolset = "hello"               # default: the file name without `.wasm`
//! allow_tool_override = false     # may its tools override built-ins?
//! [plugins.limits]                # see `LimitsOverride`
//! timeout_ms = 2000
//!
//! [toolsets.web]                  # a defined (composite) toolset
//! includes = ["http", "time"]
//! tools = ["extra_tool"]
//!
//! [[mcp.servers]]                 # tools bridged in as mcp__NAME__TOOL
//! name = "everything"             # toolset `mcp-everything`
//! transport = "stdio"             # or "http" with url and headers
//! command = "npx"
//! args = ["-y", "@modelcontextprotocol/server-everything"]
//! ```
//!
//! ```
//! use toolhost::config::Config;
//! use toolhost::internal::registry::lazy::RegistryMode;
//!
//! let config = Config::parse("[tools]\nregistry_mode = \"lazy\"\n", "toolhost.toml".as_ref()).unwrap();
//! assert_eq!(config.tools.registry_mode, RegistryMode::Lazy);
//!
//! let err = Config::parse("[tools]\nregistry_mode = \"lazy\"\nfoo = 1\n", "toolhost.toml".as_ref()).unwrap_err();
//! assert!(err.message().contains("toolhost.toml:3:1"), "{err}");
//! assert!(err.message().contains("key `foo`"), "{err}");
//! ```

mod console;
pub mod distribution;
mod exec;
mod metrics;
mod otlp;
pub(crate) mod plugins;
pub mod plugins_dir;
mod pool;
pub mod protected;
mod store;
mod traces;

pub use console::{ConsoleConfig, plugins_view};
pub use distribution::{OciConfig, SignaturesConfig};
pub use exec::{ExecConfig, SshConfig, sandbox_works};
pub use metrics::{AuditConfig, MetricsConfig};
pub use plugins::{PluginConfig, PluginStatus};
pub use plugins_dir::PluginsDirConfig;
pub use pool::PoolConfig;
pub use protected::ProtectedPaths;
pub use store::{Shared, StoreConfig, TasksConfig};
#[doc(inline)]
pub use toolhost_core::metrics::Metrics;
pub use traces::{Traces, TracesConfig};

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde::Deserialize;

use crate::dispatch::{Dispatcher, DispatcherBuilder, McpDispatcher};
use crate::engine::Engine;
use crate::error::{Error, ErrorCode, Result};
use crate::mcp::{McpConfig, McpTransport};
use crate::registry::Registry;
use crate::registry::lazy::RegistryMode;
use crate::spill::SpillConfig;
use crate::toolsets::{ToolsetDef, ToolsetSelection, Toolsets};
use toolhost_core::metrics::CallObserver;

/// The most bytes a config file may have (it is read whole).
pub const MAX_CONFIG_BYTES: u64 = 16 << 20;

/// The whole configuration file.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Config {
    /// `[tools]`: the registry mode and toolset selection.
    #[serde(default)]
    pub tools: ToolsConfig,
    /// `[[plugins]]`: WebAssembly components to load.
    #[serde(default)]
    pub plugins: Vec<PluginConfig>,
    /// `[plugins_dir]`: a folder watched while serving (see [`plugins_dir`]).
    pub plugins_dir: Option<PluginsDirConfig>,
    /// `[signatures]`: trusted keys, and whether plugins must be signed.
    #[serde(default)]
    pub signatures: SignaturesConfig,
    /// `[oci]`: registries spoken to in plain HTTP, the reload poll interval.
    #[serde(default)]
    pub oci: OciConfig,
    /// `[admission]`: what every plugin must pass, whatever door it comes
    /// in by (see [`crate::admission`]).
    #[serde(default)]
    pub admission: AdmissionConfig,
    /// `[toolsets.NAME]`: defined toolsets.
    #[serde(default)]
    pub toolsets: BTreeMap<String, ToolsetDef>,
    /// `[storage]`: the managed storage folder.
    #[serde(default)]
    pub storage: StorageConfig,
    /// `[spill]`: large results saved to files (off unless the section is
    /// present).
    pub spill: Option<SpillConfig>,
    /// `[exec]`: the `exec` and `process` built-ins (off unless present).
    pub exec: Option<ExecConfig>,
    /// Commands approved for good ("always"), written back atomically by the
    /// approval flow. Patterns: `category:command`, `category:prefix *`,
    /// `category`, `tool:NAME`.
    #[serde(default)]
    pub command_allowlist: Vec<String>,
    /// Programs that may never run, whatever the spelling of their path.
    #[serde(default)]
    pub command_denylist: Vec<String>,
    /// Glob patterns of tool names whose calls need approval.
    #[serde(default)]
    pub require_approval: Vec<String>,
    /// `[[mcp.servers]]`: MCP servers whose tools are bridged into the
    /// registry (see [`crate::mcp::bridge`]).
    #[serde(default)]
    pub mcp: McpConfig,
    /// `[store]`: where state shared by replicas lives (tasks).
    #[serde(default)]
    pub store: StoreConfig,
    /// `[auth]`: OAuth access tokens accepted over HTTP, and what their
    /// scopes grant (see [`crate::mcp::auth`]); off unless present.
    pub auth: Option<crate::mcp::auth::AuthConfig>,
    /// `[tasks]`: calls run as MCP tasks.
    #[serde(default)]
    pub tasks: TasksConfig,
    /// `[metrics]`: Prometheus metrics on the HTTP listener.
    #[serde(default)]
    pub metrics: MetricsConfig,
    /// `[audit]`: the audit log.
    #[serde(default)]
    pub audit: AuditConfig,
    /// `[traces]`: OpenTelemetry spans exported over OTLP.
    #[serde(default)]
    pub traces: TracesConfig,
    /// `[console]`: the operator's console on the HTTP listener.
    #[serde(default)]
    pub console: ConsoleConfig,
    /// `[pool]`: how many sandboxed calls run at once, and how many wait.
    #[serde(default)]
    pub pool: PoolConfig,
    /// The folder relative paths are resolved against: the file's, or the
    /// working directory for a config made in code; always absolute.
    #[serde(skip)]
    pub base_dir: PathBuf,
    /// The file the config was read from, if any (the approval flow writes
    /// "always" approvals back to it).
    #[serde(skip)]
    pub origin: Option<PathBuf>,
}

impl Default for Config {
    /// No plugins, no built-ins beyond the default ones, relative paths
    /// resolved against the working directory.
    fn default() -> Self {
        Config {
            tools: ToolsConfig::default(),
            plugins: Vec::new(),
            plugins_dir: None,
            signatures: SignaturesConfig::default(),
            oci: OciConfig::default(),
            admission: AdmissionConfig::default(),
            toolsets: BTreeMap::new(),
            storage: StorageConfig::default(),
            spill: None,
            exec: None,
            command_allowlist: Vec::new(),
            command_denylist: Vec::new(),
            require_approval: Vec::new(),
            mcp: McpConfig::default(),
            store: StoreConfig::default(),
            auth: None,
            tasks: TasksConfig::default(),
            metrics: MetricsConfig::default(),
            audit: AuditConfig::default(),
            traces: TracesConfig::default(),
            console: ConsoleConfig::default(),
            pool: PoolConfig::default(),
            base_dir: absolute(Path::new(".")),
            origin: None,
        }
    }
}

/// The `[admission]` section: the bounds every plugin source shares.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AdmissionConfig {
    /// The most bytes a component may have (default 64 MiB): a file larger
    /// than this is refused before it is read, a pulled blob before it is
    /// downloaded. It is the engine's
    /// [`EngineConfig::max_component_bytes`](crate::EngineConfig::max_component_bytes).
    #[serde(default = "default_max_component_bytes")]
    pub max_component_bytes: u64,
}

impl Default for AdmissionConfig {
    fn default() -> Self {
        AdmissionConfig {
            max_component_bytes: default_max_component_bytes(),
        }
    }
}

fn default_max_component_bytes() -> u64 {
    crate::engine::DEFAULT_MAX_COMPONENT_BYTES
}

/// The `[storage]` section: where toolhost keeps what it manages (spilled
/// results, process receipts, and whatever plugin grants point into it).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StorageConfig {
    /// The folder, relative to the config file (default `.toolhost`). It is
    /// created at start-up.
    #[serde(default = "default_storage_dir")]
    pub dir: PathBuf,
}

impl Default for StorageConfig {
    fn default() -> Self {
        StorageConfig {
            dir: default_storage_dir(),
        }
    }
}

fn default_storage_dir() -> PathBuf {
    PathBuf::from(".toolhost")
}

/// The `[tools]` section.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ToolsConfig {
    /// `"full"` (default) or `"lazy"`.
    #[serde(default)]
    pub registry_mode: RegistryMode,
    /// Only these toolsets.
    pub enabled_toolsets: Option<Vec<String>>,
    /// All toolsets but these.
    #[serde(default)]
    pub disabled_toolsets: Vec<String>,
    /// How many calls of a batch run at once (default 8).
    pub batch_concurrency: Option<usize>,
    /// `[tools.codemode]`: the `run_tools_script` built-in (off by default).
    #[serde(default)]
    pub codemode: crate::codemode::CodemodeConfig,
}

impl Config {
    /// Reads and parses the file at `path`.
    ///
    /// # Errors
    ///
    /// `io` when it cannot be read; `config` as [`Config::parse`].
    pub fn load(path: &Path) -> Result<Config> {
        let text = crate::bounded::read_to_string(path, MAX_CONFIG_BYTES)
            .map_err(|e| crate::bounded::error("the config file", path, MAX_CONFIG_BYTES, e))?;
        Config::parse(&text, path)
    }

    /// The standard config ([`crate::standard::STANDARD_CONFIG`]): the
    /// bundled standard plugins with their default grants, relative paths
    /// resolved against the working directory, and no file behind it (so
    /// "always" approvals last as long as the process).
    ///
    /// # Errors
    ///
    /// `config` when this build bundles no standard plugins.
    pub fn standard() -> Result<Config> {
        Config::from_toml(crate::standard::STANDARD_CONFIG)
    }

    /// A config written in code, in the `toolhost.toml` format: relative
    /// paths are resolved against the working directory, and no file is
    /// behind it ("always" approvals last as long as the process).
    ///
    /// ```
    /// let config = toolhost::Config::from_toml("require_approval = [\"deploy\"]").unwrap();
    /// assert_eq!(config.require_approval, ["deploy"]);
    /// assert!(config.origin.is_none());
    /// ```
    ///
    /// # Errors
    ///
    /// As [`Config::parse`].
    pub fn from_toml(text: &str) -> Result<Config> {
        let mut config = Config::parse(text, Path::new("(the config)"))?;
        config.base_dir = absolute(Path::new("."));
        config.origin = None;
        Ok(config)
    }

    /// Parses `text`, read from `origin` (used in messages and as the base
    /// of relative paths).
    ///
    /// # Errors
    ///
    /// `config`, as `ORIGIN:LINE:COLUMN: key `KEY`: MESSAGE`, for invalid
    /// TOML, unknown keys and wrong types; also when both
    /// `enabled_toolsets` and `disabled_toolsets` are set.
    pub fn parse(text: &str, origin: &Path) -> Result<Config> {
        let mut config: Config = toml::from_str(text).map_err(|e| located(text, origin, &e))?;
        if config.tools.enabled_toolsets.is_some() && !config.tools.disabled_toolsets.is_empty() {
            return Err(Error::new(
                ErrorCode::Config,
                format!(
                    "{}: [tools] sets both `enabled_toolsets` and `disabled_toolsets`; use one of them",
                    origin.display()
                ),
            ));
        }
        for plugin in &config.plugins {
            crate::admission::PluginRequest::from_entry(plugin).map_err(|e| e.context(origin.display()))?;
        }
        // Every relative path in the file is relative to its folder, made
        // absolute once here: a path handed on relative would be joined to
        // another folder on its way (a working directory inside a sandbox,
        // say).
        let origin = absolute(origin);
        config.base_dir = origin
            .parent()
            .map_or_else(|| absolute(Path::new(".")), Path::to_path_buf);
        config.origin = Some(origin);
        Ok(config)
    }

    /// The toolset selection of `[tools]`.
    pub fn selection(&self) -> ToolsetSelection {
        ToolsetSelection {
            enabled: self.tools.enabled_toolsets.clone(),
            disabled: self.tools.disabled_toolsets.clone(),
        }
    }

    /// The defined toolsets (presets included).
    ///
    /// # Errors
    ///
    /// `config` when a definition redefines a preset.
    pub fn toolsets(&self) -> Result<Toolsets> {
        let mut toolsets = Toolsets::new();
        // Each configured MCP server's toolset is known from the start, so
        // that a selection naming it holds while the server is not (yet)
        // connected; its tools join it when they are bridged in.
        for server in &self.mcp.servers {
            let def = ToolsetDef {
                description: format!("the tools of MCP server {:?}", server.name),
                ..ToolsetDef::default()
            };
            toolsets.define(format!("mcp-{}", server.name), def)?;
        }
        // So is each `[[plugins]]` entry's (its tools come in after the
        // dispatcher is built, through admission). A `[toolsets]`
        // definition of the same name, below, takes its place; a preset's
        // name keeps the preset.
        for plugin in &self.plugins {
            if let Some(name) = crate::admission::PluginRequest::from_entry(plugin)
                .ok()
                .and_then(|r| r.toolset())
            {
                let def = ToolsetDef {
                    description: format!("the tools of plugin {}", plugin.name()),
                    ..ToolsetDef::default()
                };
                let _ = toolsets.define(name, def);
            }
        }
        for (name, def) in &self.toolsets {
            toolsets.define(name, def.clone())?;
        }
        Ok(toolsets)
    }

    /// The `[mcp]` table with relative paths (a stdio server's `cwd`, a
    /// `command` containing a slash, an `oauth.token_file`,
    /// `state_key_file`) resolved against the
    /// config file's folder.
    pub fn mcp_config(&self) -> McpConfig {
        let mut mcp = self.mcp.clone();
        for server in &mut mcp.servers {
            if let McpTransport::Stdio { command, cwd, .. } = &mut server.transport {
                if command.contains('/') && Path::new(command.as_str()).is_relative() {
                    *command = self.base_dir.join(&*command).display().to_string();
                }
                if let Some(cwd) = cwd {
                    *cwd = self.base_dir.join(&*cwd);
                }
            }
            if let McpTransport::Http {
                oauth: Some(oauth), ..
            } = &mut server.transport
                && let Some(file) = &mut oauth.token_file
            {
                *file = self.base_dir.join(&*file);
            }
        }
        if let Some(file) = &mut mcp.state_key_file {
            *file = self.base_dir.join(&*file);
        }
        mcp
    }

    /// Applies the mode, toolsets, selection and batch size to `builder`.
    ///
    /// # Errors
    ///
    /// As [`Config::toolsets`].
    pub fn configure(&self, mut builder: DispatcherBuilder) -> Result<DispatcherBuilder> {
        builder = builder
            .mode(self.tools.registry_mode)
            .toolsets(self.toolsets()?)
            .selection(self.selection());
        if let Some(n) = self.tools.batch_concurrency {
            builder = builder.batch_concurrency(n);
        }
        if let Some(spill) = self.spill_config() {
            // Errors are never spilled; a spill that cannot be written leaves
            // the result as it is rather than lose it.
            // A nested call's result goes to the tool (or script) that made
            // it, which cannot read a spill file back: only results for the
            // model are spilled.
            builder = builder.post_hook(move |info, result| {
                if result.is_error() || info.parent_call_id.is_some() {
                    return;
                }
                match spill.spill(&info.name, info.call_id, &result.content) {
                    Ok(Some(replacement)) => result.content = replacement,
                    Ok(None) => {}
                    Err(e) => tracing::warn!(tool = %info.name, error = format!("{e:#}"), "could not spill a large result"),
                }
            });
        }
        Ok(builder)
    }

    /// Loads the plugins into `registry`, builds a dispatcher serving it
    /// (with the built-ins, toolsets, spill and approval gate the config
    /// describes), and starts bridging its `[[mcp.servers]]` in (see
    /// [`Dispatcher::connect_mcp`]; [`Dispatcher::mcp_settled`] waits for
    /// them). A plugin entry that fails is left out (see [`Config::start`]
    /// for the report).
    ///
    /// # Errors
    ///
    /// As [`Config::start`].
    pub async fn dispatcher(&self, engine: &Engine, registry: Registry) -> Result<Dispatcher> {
        Ok(self.start(engine, registry, None).await?.dispatcher)
    }

    /// As [`Config::dispatcher`], with `approver` asked when a command is
    /// flagged or a call matches `require_approval` (for example the CLI's
    /// interactive prompt). One gate serves both, so session approvals and
    /// the count of denials in a row are shared.
    ///
    /// # Errors
    ///
    /// As [`Config::start`].
    pub async fn dispatcher_with_approver(
        &self,
        engine: &Engine,
        registry: Registry,
        approver: Option<Arc<dyn crate::approval::ApprovalCallback>>,
    ) -> Result<Dispatcher> {
        Ok(self.start(engine, registry, approver).await?.dispatcher)
    }

    /// Starts what the config describes: the storage folder, the approval
    /// gate (asking `approver`, if any), the built-ins, the dispatcher, every
    /// plugin (each admitted on its own: see
    /// [`LivePlugins::load_entries`](crate::live::LivePlugins::load_entries))
    /// and the MCP bridge. Returns the dispatcher with a report of what loaded,
    /// what did not and why, and the warnings (also logged).
    ///
    /// # Errors
    ///
    /// `config` for settings that are wrong as a whole (an invalid
    /// `[[mcp.servers]]` entry, a `require_approval` pattern that can never
    /// match a tool name, an unknown exec backend, a toolset cycle); `io`
    /// when the storage folder cannot be created.
    pub async fn start(
        &self,
        engine: &Engine,
        mut registry: Registry,
        approver: Option<Arc<dyn crate::approval::ApprovalCallback>>,
    ) -> Result<Started> {
        let mcp = self.mcp_config();
        mcp.validate()?;
        let rules = crate::approval::ToolApprovalRules::new(self.require_approval.clone());
        rules
            .validate()
            .map_err(|e| Error::new(ErrorCode::Config, format!("require_approval: {e}")))?;
        let ceiling = engine.config().max_component_bytes;
        if self.admission.max_component_bytes > ceiling {
            return Err(Error::new(
                ErrorCode::Config,
                format!(
                    "[admission] max_component_bytes = {} exceeds the engine's ceiling of {ceiling} (EngineConfig::max_component_bytes)",
                    self.admission.max_component_bytes
                ),
            ));
        }
        self.console.validate()?;
        self.prepare_storage()?;
        let metrics = self.metrics.enabled.then(|| Arc::new(Metrics::new()));
        let calls = self
            .console
            .enabled
            .then(|| Arc::new(toolhost_core::call_log::CallLog::new(self.console.recent_calls)));
        if let Some(metrics) = &metrics {
            engine.count_waits(Arc::clone(metrics));
        }
        let audit = self.audit.open(&self.base_dir)?;
        let traces = self.traces.start(calls.clone())?.map(Arc::new);
        let approver = match approver {
            Some(inner) if metrics.is_some() || audit.is_some() => {
                Some(Arc::new(metrics::ObservedApprovals {
                    inner,
                    metrics: metrics.clone(),
                    audit: audit.clone(),
                }) as Arc<dyn crate::approval::ApprovalCallback>)
            }
            approver => approver,
        };
        let gate = self.approval_gate(approver)?;
        let exec_backend = self.register_builtins(&mut registry, &gate)?;
        self.register_codemode(engine, &mut registry).await?;
        let mut builder = self.configure(Dispatcher::builder(registry))?.approval(gate);
        if let Some(metrics) = &metrics {
            builder = builder.observer(Arc::clone(metrics) as Arc<dyn CallObserver>);
        }
        if let Some(audit) = &audit {
            builder = builder.observer(Arc::clone(audit) as Arc<dyn CallObserver>);
        }
        if let Some(traces) = &traces {
            builder = builder.tracing(traces.tracing().clone());
        }
        if let Some(calls) = &calls {
            builder = builder.observer(Arc::clone(calls) as Arc<dyn CallObserver>);
        }
        let dispatcher = builder.build()?;
        // Trusted keys that cannot be read are wrong as a whole: this fails.
        let live =
            crate::live::LivePlugins::audited(&dispatcher, engine.clone(), self.clone(), audit.clone())?;
        let plugins = live.load_entries().await;
        let mut warnings = Vec::new();
        if exec_backend.as_deref() == Some("local") {
            warnings.push(
                "exec runs on the `local` backend: a command the detector misjudges runs with all of this user's powers; use backend = \"sandbox\" (bubblewrap) where you can".to_string(),
            );
        }
        // Patterns may name tools that come later (an MCP server still
        // connecting, a component loaded at run time): a warning, not an error.
        let bridged: Vec<String> = mcp.servers.iter().map(|s| s.name.clone()).collect();
        for pattern in rules.unmatched(dispatcher.registry().names().into_iter()) {
            let maybe_mcp = !bridged.is_empty() && (pattern.starts_with("mcp") || pattern.starts_with('*'));
            if !maybe_mcp {
                let warning = format!(
                    "require_approval pattern `{pattern}` matches no tool registered at start; check its spelling"
                );
                tracing::warn!("{warning}");
                warnings.push(warning);
            }
        }
        dispatcher.connect_mcp(&mcp)?;
        warnings.extend(plugins.iter().filter_map(PluginStatus::cache_warning));
        Ok(Started {
            dispatcher,
            live,
            plugins,
            exec_backend,
            warnings,
            metrics,
            audit,
            traces,
            calls,
        })
    }

    /// Registers `run_tools_script` when `[tools.codemode] enabled = true`,
    /// loading its interpreter component (relative to the config file).
    ///
    /// # Errors
    ///
    /// `config` for invalid `[tools.codemode]` values; when the interpreter
    /// cannot be loaded, its error, saying how to build it. Enabled but
    /// unavailable stops start-up, rather than serve without it.
    pub async fn register_codemode(&self, engine: &Engine, registry: &mut Registry) -> Result<()> {
        let codemode = &self.tools.codemode;
        if !codemode.enabled {
            return Ok(());
        }
        let path = self.base_dir.join(&codemode.plugin);
        let tool = crate::codemode::RunToolsScript::load(engine, &path, codemode.clone()).await?;
        registry.register(tool.registration())
    }

    /// The managed storage folder, resolved against the config file's folder.
    pub fn storage_dir(&self) -> PathBuf {
        self.base_dir.join(&self.storage.dir)
    }

    /// Creates the folders of the managed storage folder the config uses
    /// (the exec receipts, and the plugin grants, spill folder and exec
    /// workspace that lie in it), so that they work on a fresh checkout.
    ///
    /// # Errors
    ///
    /// `io` when a folder cannot be created.
    pub fn prepare_storage(&self) -> Result<()> {
        let dir = self.storage_dir();
        // Only what the config uses: a host with no exec, spill or plugin
        // storage leaves no folder behind in the working directory.
        if self.exec.is_some() {
            let receipts = dir.join("receipts");
            std::fs::create_dir_all(&receipts).map_err(|e| {
                Error::io(
                    format!("cannot create the storage folder {}", receipts.display()),
                    e,
                )
            })?;
        }
        // Folders the config puts in the storage folder: plugin grants, the
        // spill folder, the exec workspace.
        let grants = self
            .plugins
            .iter()
            .flat_map(|p| &p.grants.dirs)
            .map(|g| self.base_dir.join(&g.host));
        let spill = self.spill_config().map(|s| s.dir);
        for host in grants.chain(spill).chain(self.exec_workspace()) {
            if host.starts_with(&dir) {
                std::fs::create_dir_all(&host)
                    .map_err(|e| Error::io(format!("cannot create {}", host.display()), e))?;
            }
        }
        Ok(())
    }

    /// The spill settings, with the folder resolved (a relative `dir` is
    /// relative to the config file).
    pub fn spill_config(&self) -> Option<SpillConfig> {
        self.spill.clone().map(|mut s| {
            s.dir = self.base_dir.join(&s.dir);
            s
        })
    }

    /// The approval gate the config describes: `command_denylist`,
    /// `require_approval`, the `command_allowlist` of the config file (for
    /// "always" approvals, written back atomically) and `callback` to ask
    /// (none: whatever needs approval is denied, fail-closed).
    ///
    /// # Errors
    ///
    /// `config` when the allowlist in the config file cannot be read.
    pub fn approval_gate(
        &self,
        callback: Option<Arc<dyn crate::approval::ApprovalCallback>>,
    ) -> Result<Arc<crate::approval::ApprovalGate>> {
        use crate::approval::{ApprovalGate, ApprovalPolicy, ToolApprovalRules};
        let policy = ApprovalPolicy {
            denylist: self.command_denylist.clone(),
            tools: ToolApprovalRules::new(self.require_approval.clone()),
            // A command writing toolhost's own files needs approval, once
            // at a time, on every backend (the sandbox also hides them).
            protected_paths: ProtectedPaths::of(self).all(),
            // The exec workspace lies in the storage folder; the model works
            // there, and its writes there need no approval.
            writable_paths: self
                .exec_workspace()
                .map(|w| protected::resolve(&w).display().to_string())
                .into_iter()
                .collect(),
            ..ApprovalPolicy::default()
        };
        let mut gate = ApprovalGate::new(policy);
        if let Some(origin) = &self.origin {
            let allowlist = crate::approval::Allowlist::load(origin).map_err(|e| {
                Error::new(ErrorCode::Config, "command_allowlist cannot be read").with_source(e)
            })?;
            gate = gate.with_allowlist(allowlist);
        }
        if let Some(callback) = callback {
            gate = gate.with_callback(callback);
        }
        Ok(Arc::new(gate))
    }
}

/// What [`Config::start`] started, and how it went.
#[derive(Debug)]
pub struct Started {
    /// The dispatcher serving the registry.
    pub dispatcher: Dispatcher,
    /// The plugins that can change while serving (reloads, the plugins
    /// folder): [`crate::live`].
    pub live: Arc<crate::live::LivePlugins>,
    /// Each `[[plugins]]` entry, in order: loaded or why not.
    pub plugins: Vec<PluginStatus>,
    /// The exec backend in use (`None` without `[exec]`).
    pub exec_backend: Option<String>,
    /// What the operator should know (also logged).
    pub warnings: Vec<String>,
    /// The metrics, when `[metrics] enabled`.
    pub metrics: Option<Arc<Metrics>>,
    /// The audit log, when `[audit] path` is set.
    pub audit: Option<Arc<toolhost_core::audit::AuditLog>>,
    /// The spans' tracer, when `[traces] endpoint` is set (exported) or
    /// the console is on (recorded in `calls`).
    pub traces: Option<Arc<Traces>>,
    /// The calls as the console shows them, when `[console] enabled`, with
    /// their spans (see [`TracesConfig::start`]).
    pub calls: Option<Arc<toolhost_core::call_log::CallLog>>,
}

impl Started {
    /// The report as JSON (`toolhost tools --status`): the plugins'
    /// (see [`LivePlugins::status`](crate::live::LivePlugins::status): as
    /// they are now, reloads change them), with `exec`, `mcp_servers` and
    /// `warnings`.
    pub fn status(&self) -> serde_json::Value {
        let mut status = self.live.status();
        status["exec"] = serde_json::json!(
            self.exec_backend
                .as_ref()
                .map(|b| serde_json::json!({ "backend": b }))
        );
        status["mcp_servers"] = serde_json::json!(self.dispatcher.mcp_status());
        status["warnings"] = serde_json::json!(self.warnings);
        status
    }

    /// The metrics as Prometheus scrapes them (`None` when off): see
    /// [`metrics_text`].
    pub fn metrics_text(&self) -> Option<String> {
        Some(metrics_text(self.metrics.as_ref()?, &self.live, &self.dispatcher))
    }
}

/// `metrics` as Prometheus scrapes them, with the plugins of `live`, its
/// engine's instance pool and the bridged servers of `dispatcher` counted
/// as they are now.
pub fn metrics_text(metrics: &Metrics, live: &crate::live::LivePlugins, dispatcher: &Dispatcher) -> String {
    let (waiting, in_use) = live.admission().engine().instance_queue();
    metrics.instances(waiting, in_use);
    let status = live.status();
    let plugins = status["plugins"]
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or_default();
    let loaded = plugins.iter().filter(|p| p["status"] == "loaded").count();
    metrics.plugins(loaded, plugins.len() - loaded);
    let servers = dispatcher.mcp_status();
    let up = servers.iter().filter(|s| s.available).count();
    metrics.bridged(up, servers.len() - up);
    metrics.render()
}

/// `path` made absolute against the working directory (lexically: links
/// are not followed), or left as it is when there is none.
fn absolute(path: &Path) -> PathBuf {
    std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf())
}

/// `ORIGIN:LINE:COL: key `KEY`: MESSAGE` from a TOML error's span.
fn located(text: &str, origin: &Path, error: &toml::de::Error) -> Error {
    let message = error.message().trim();
    let Some(span) = error.span() else {
        return Error::new(ErrorCode::Config, format!("{}: {message}", origin.display()));
    };
    let start = span.start.min(text.len());
    let before = &text[..start];
    let line = before.matches('\n').count() + 1;
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    let column = before[line_start..].chars().count() + 1;
    let line_text = text[line_start..].lines().next().unwrap_or("");
    let key = line_text
        .split_once('=')
        .map(|(k, _)| k.trim())
        .or_else(|| Some(line_text.trim().trim_matches(|c| c == '[' || c == ']')))
        .filter(|k| !k.is_empty());
    let key = key.map(|k| format!("key `{k}`: ")).unwrap_or_default();
    Error::new(
        ErrorCode::Config,
        format!("{}:{line}:{column}: {key}{message}", origin.display()),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wrong_type_names_key_and_line() {
        let text = "[tools]\n\n[[plugins]]\npath = \"a.wasm\"\nallow_tool_override = \"yes\"\n";
        let err = Config::parse(text, Path::new("c.toml")).unwrap_err();
        assert_eq!(err.code(), ErrorCode::Config);
        assert!(err.message().starts_with("c.toml:5:"), "{err}");
        assert!(err.message().contains("key `allow_tool_override`"), "{err}");
    }

    #[test]
    fn both_selections_rejected() {
        let text = "[tools]\nenabled_toolsets = [\"a\"]\ndisabled_toolsets = [\"b\"]\n";
        assert!(Config::parse(text, Path::new("c.toml")).is_err());
    }
}
