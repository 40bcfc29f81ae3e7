//! The options and arguments several subcommands share: the engine
//! (`--cache-dir`, `--no-cache`), the configured registry (`--config`,
//! `--audience`), a component's limits (`--fuel`, `--memory-mb`, ...) and
//! grants (`--dir`, `--env`, `--http`), and JSON arguments, read by one rule
//! with one message.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use clap::{Args, ValueEnum};
use toolhost::config::{Config, Started};
use toolhost::internal::approval::ApprovalCallback;
use toolhost::internal::capabilities::{DirGrant, DirMode, Grants};
use toolhost::internal::dispatch::{Dispatcher, McpDispatcher, Session};
use toolhost::internal::registry::{Registry, ToolAudience};
use toolhost::{Engine, EngineConfig, Error, ErrorCode, LimitsOverride};

/// The default config file, used when present in the current folder.
const DEFAULT_CONFIG: &str = "toolhost.toml";

/// The longest a one-shot command waits for bridged MCP servers.
const MCP_SETTLE_LIMIT: Duration = Duration::from_secs(120);

/// Options every command that loads components shares.
#[derive(Debug, Args)]
pub(crate) struct EngineArgs {
    /// The compilation cache folder [default: $TOOLHOST_CACHE_DIR, else
    /// $XDG_CACHE_HOME/toolhost, else ~/.cache/toolhost].
    #[arg(long, global = true)]
    cache_dir: Option<PathBuf>,
    /// Compile every component afresh; do not read or write the cache.
    #[arg(long, global = true)]
    no_cache: bool,
}

impl EngineArgs {
    pub(crate) fn engine(&self) -> anyhow::Result<Engine> {
        self.engine_with(EngineConfig::default())
    }

    /// The engine of `config` with the cache these options choose.
    fn engine_with(&self, config: EngineConfig) -> anyhow::Result<Engine> {
        let cache_dir = if self.no_cache {
            None
        } else {
            self.cache_dir.clone().or_else(default_cache_dir)
        };
        Ok(Engine::new(EngineConfig { cache_dir, ..config })?)
    }
}

fn default_cache_dir() -> Option<PathBuf> {
    if let Some(dir) = std::env::var_os("TOOLHOST_CACHE_DIR") {
        return Some(dir.into());
    }
    if let Some(dir) = std::env::var_os("XDG_CACHE_HOME") {
        return Some(PathBuf::from(dir).join("toolhost"));
    }
    std::env::var_os("HOME").map(|home| PathBuf::from(home).join(".cache").join("toolhost"))
}

/// Options of the commands that serve a configured registry.
#[derive(Debug, Args)]
pub(crate) struct ConfigArgs {
    /// The config file [default: ./toolhost.toml if present, else the
    /// standard config: the standard plugins that come with toolhost].
    #[arg(long)]
    config: Option<PathBuf>,
    /// The session's audience: public sessions see and call public tools only.
    #[arg(long, value_enum, default_value_t = Audience::Trusted)]
    audience: Audience,
    #[command(flatten)]
    engine: EngineArgs,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
enum Audience {
    Trusted,
    Public,
}

impl ConfigArgs {
    /// The configured dispatcher and a session of the chosen audience.
    /// Flagged commands are put to the user when there is a terminal on
    /// standard input to ask on; otherwise (headless) they are denied.
    pub(crate) async fn dispatcher(&self) -> Result<(Dispatcher, Arc<Session>), Error> {
        let (started, session) = self.started().await?;
        Ok((started.dispatcher, session))
    }

    /// As [`ConfigArgs::dispatcher`], with the start-up report.
    pub(crate) async fn started(&self) -> Result<(Started, Arc<Session>), Error> {
        let approver = toolhost::internal::approval::CliPrompt::stdio()
            .ok()
            .map(|p| Arc::new(p) as Arc<dyn ApprovalCallback>);
        let config = self.load()?;
        let started = config
            .start(&self.engine_for(&config)?, Registry::new(), approver)
            .await?;
        let dispatcher = &started.dispatcher;
        // A one-shot command should see the bridged MCP servers' tools: wait
        // for each to connect and list, or fail (each within its timeout).
        if !dispatcher.mcp_settled(MCP_SETTLE_LIMIT).await {
            tracing::warn!(
                "some MCP servers had not answered after {MCP_SETTLE_LIMIT:?}; going on without them"
            );
        }
        Ok((started, Session::new("cli", self.audience())))
    }

    /// The config the options name: `--config`, else `./toolhost.toml`
    /// if there is one, else the standard config (the bundled standard
    /// plugins: see `toolhost::standard`).
    pub(crate) fn load(&self) -> Result<Config, Error> {
        match self.file() {
            Some(path) => Config::load(path),
            None => Config::standard(),
        }
    }

    /// The config file [`ConfigArgs::load`] reads; `None` for the
    /// standard config.
    pub(crate) fn file(&self) -> Option<&Path> {
        match &self.config {
            Some(path) => Some(path),
            None if Path::new(DEFAULT_CONFIG).exists() => Some(Path::new(DEFAULT_CONFIG)),
            None => None,
        }
    }

    /// The engine the options describe, with the bounds of `config`
    /// (`[admission] max_component_bytes`, `[pool]`).
    pub(crate) fn engine_for(&self, config: &Config) -> Result<Engine, Error> {
        let engine = config.pool.engine(EngineConfig {
            max_component_bytes: config.admission.max_component_bytes,
            ..EngineConfig::default()
        })?;
        self.engine
            .engine_with(engine)
            .map_err(|e| Error::new(toolhost::ErrorCode::Config, super::report(&e)))
    }

    /// The audience chosen.
    pub(crate) fn audience(&self) -> ToolAudience {
        match self.audience {
            Audience::Trusted => ToolAudience::Trusted,
            Audience::Public => ToolAudience::Public,
        }
    }
}

/// Reads a command's JSON arguments: a JSON object, or an
/// `invalid_arguments` error saying what is wrong with `text`.
pub(crate) fn json_object(text: &str) -> Result<serde_json::Value, Error> {
    let value: serde_json::Value = serde_json::from_str(text).map_err(|e| {
        Error::new(
            ErrorCode::InvalidArguments,
            format!("the JSON arguments are not JSON: {e}"),
        )
    })?;
    if !value.is_object() {
        return Err(Error::new(
            ErrorCode::InvalidArguments,
            "the JSON arguments must be a JSON object, e.g. '{\"name\": \"Ada\"}'",
        ));
    }
    Ok(value)
}

/// Options of the commands that talk to an OCI registry. Credentials are
/// never options: they come from the environment or the Docker config file
/// (see `toolhost::internal::distribution::auth`).
#[derive(Debug, Args)]
pub(crate) struct RegistryArgs {
    /// A registry (HOST[:PORT]) to speak plain HTTP to (repeatable).
    /// Loopback registries always may; every other one is HTTPS only.
    #[arg(long = "insecure", value_name = "REGISTRY")]
    insecure: Vec<String>,
}

impl RegistryArgs {
    /// The client options (the pull's bounds at their defaults).
    pub(crate) fn options(&self) -> toolhost::internal::distribution::ClientOptions {
        toolhost::internal::distribution::ClientOptions {
            insecure: self.insecure.clone(),
            ..Default::default()
        }
    }
}
/// The limits a component runs under, as a plugin's `[plugins.limits]`.
#[derive(Debug, Args)]
pub(crate) struct LimitArgs {
    /// Fuel for a call (roughly, instructions).
    #[arg(long)]
    fuel: Option<u64>,
    /// The memory limit, in MiB.
    #[arg(long)]
    memory_mb: Option<u64>,
    /// The wall-clock limit of a call, in milliseconds.
    #[arg(long)]
    timeout_ms: Option<u64>,
    /// The WebAssembly stack limit, in KiB (default 1024; from 16 up to the
    /// engine's ceiling, 8192).
    #[arg(long)]
    stack_kb: Option<u64>,
}

impl LimitArgs {
    /// The limits given, over the defaults.
    pub(crate) fn overrides(&self) -> LimitsOverride {
        LimitsOverride {
            fuel: self.fuel,
            memory_mb: self.memory_mb,
            timeout_ms: self.timeout_ms,
            wasm_stack_kb: self.stack_kb,
            ..Default::default()
        }
    }
}

/// What a component is granted, as a plugin's `[plugins.grants]`.
#[derive(Debug, Args)]
pub(crate) struct GrantArgs {
    /// Grant a directory: HOST_DIR:GUEST_PATH[:rw] (read-only unless `:rw`).
    /// The component must also declare it.
    #[arg(long = "dir", value_name = "HOST:GUEST[:rw]")]
    dirs: Vec<String>,
    /// Grant an environment variable (its value is taken from this process).
    /// The component must also declare it.
    #[arg(long = "env", value_name = "NAME")]
    env: Vec<String>,
    /// Grant outbound HTTP to a destination: `[scheme://]host[:port]`
    /// (https and the default port unless given). The component must also
    /// declare the host.
    #[arg(long = "http", value_name = "URL")]
    http: Vec<String>,
}

impl GrantArgs {
    /// The grants given.
    pub(crate) fn grants(&self) -> Result<Grants, Error> {
        Ok(Grants {
            dirs: self.dirs.iter().map(|d| parse_dir(d)).collect::<Result<_, _>>()?,
            env: self.env.clone(),
            http: self
                .http
                .iter()
                .cloned()
                .map(toolhost::internal::http::HttpGrant::Url)
                .collect(),
            ..Default::default()
        })
    }
}

fn parse_dir(spec: &str) -> Result<DirGrant, Error> {
    let bad = || {
        Error::new(
            ErrorCode::Config,
            format!("--dir {spec:?}: expected HOST_DIR:GUEST_PATH or HOST_DIR:GUEST_PATH:rw"),
        )
    };
    let (rest, mode) = match spec.strip_suffix(":rw") {
        Some(rest) => (rest, DirMode::Rw),
        None => (spec.strip_suffix(":ro").unwrap_or(spec), DirMode::Ro),
    };
    let (host, guest) = rest.rsplit_once(':').ok_or_else(bad)?;
    if host.is_empty() || guest.is_empty() {
        return Err(bad());
    }
    Ok(DirGrant {
        host: host.into(),
        guest: guest.into(),
        mode,
    })
}

/// How a component given on the command line is loaded: its limits, its
/// grants, a pin (`call` and `bench` share them).
#[derive(Debug, Args)]
pub(crate) struct ComponentArgs {
    #[command(flatten)]
    limits: LimitArgs,
    #[command(flatten)]
    grants: GrantArgs,
    /// Refuse the component unless its hash is this (`blake3:...`).
    #[arg(long)]
    expect_hash: Option<String>,
}

impl ComponentArgs {
    /// The load options the flags describe. The limits apply from the
    /// start: `list-tools` at load runs under them too (a component may
    /// need more memory just to start).
    pub(crate) fn load_options(&self) -> Result<toolhost::LoadOptions, Error> {
        let expected_hash = self
            .expect_hash
            .as_deref()
            .map(str::parse::<toolhost::ComponentHash>)
            .transpose()?;
        Ok(toolhost::LoadOptions {
            expected_hash,
            grants: self.grants.grants()?,
            limits: self.limits.overrides(),
            ..toolhost::LoadOptions::default()
        })
    }
}
