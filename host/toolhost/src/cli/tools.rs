//! `toolhost tools [--config F] [--audience public]`: the definitions the
//! model would see.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use std::sync::Arc;
use std::time::Duration;

use clap::{Args, ValueEnum};
use toolhost::approval::ApprovalCallback;
use toolhost::config::{Config, Started};
use toolhost::dispatch::{Dispatcher, Session};
use toolhost::registry::{Registry, ToolAudience};
use toolhost::{Engine, Error};

use super::EngineArgs;
use toolhost::dispatch::McpDispatcher;

/// The default config file, used when present in the current folder.
const DEFAULT_CONFIG: &str = "toolhost.toml";

/// The longest a one-shot command waits for bridged MCP servers.
const MCP_SETTLE_LIMIT: Duration = Duration::from_secs(120);

#[derive(Debug, Args)]
pub(crate) struct ToolsArgs {
    /// Print every registered tool's schema with its source metadata
    /// (source, audience, toolset, mcpServer, componentHash), unfiltered,
    /// instead of the model's definitions.
    #[arg(long, conflicts_with = "mcp_status")]
    schemas: bool,
    /// Print the state of each `[[mcp.servers]]` entry (available, tools,
    /// error, refused names) instead of the model's definitions.
    #[arg(long, conflicts_with = "status")]
    mcp_status: bool,
    /// Print what the config started: each `[[plugins]]` entry (loaded, or
    /// failed with its reason), the exec backend, the MCP servers and the
    /// warnings.
    #[arg(long, conflicts_with = "schemas")]
    status: bool,
    #[command(flatten)]
    pub(crate) config: ConfigArgs,
}

/// Options of the commands that serve a configured registry.
#[derive(Debug, Args)]
pub(crate) struct ConfigArgs {
    /// The config file [default: ./toolhost.toml if present, else none].
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
        let approver = toolhost::approval::CliPrompt::stdio()
            .ok()
            .map(|p| Arc::new(p) as Arc<dyn ApprovalCallback>);
        let started = self.start_with(&self.engine()?, approver).await?;
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

    /// What the config starts, loading components into `engine` and
    /// asking `approver` (none: deny) when a call needs approval.
    pub(crate) async fn start_with(
        &self,
        engine: &Engine,
        approver: Option<Arc<dyn ApprovalCallback>>,
    ) -> Result<Started, Error> {
        let config = match &self.config {
            Some(path) => Config::load(path)?,
            None if Path::new(DEFAULT_CONFIG).exists() => Config::load(Path::new(DEFAULT_CONFIG))?,
            None => Config::default(),
        };
        config.start(engine, Registry::new(), approver).await
    }

    /// The engine the options describe.
    pub(crate) fn engine(&self) -> Result<Engine, Error> {
        self.engine
            .engine()
            .map_err(|e| Error::new(toolhost::ErrorCode::Config, format!("{e:#}")))
    }

    /// The audience chosen.
    pub(crate) fn audience(&self) -> ToolAudience {
        match self.audience {
            Audience::Trusted => ToolAudience::Trusted,
            Audience::Public => ToolAudience::Public,
        }
    }
}

pub(crate) async fn run(args: ToolsArgs) -> anyhow::Result<ExitCode> {
    let result = async {
        let (started, session) = args.config.started().await?;
        let dispatcher = &started.dispatcher;
        let out = if args.status {
            started.status()
        } else if args.schemas {
            serde_json::Value::from(dispatcher.registry().list_schemas())
        } else if args.mcp_status {
            serde_json::to_value(dispatcher.mcp_status())
                .map_err(|e| Error::new(toolhost::ErrorCode::Internal, e.to_string()))?
        } else {
            serde_json::Value::from(dispatcher.definitions(&session)?)
        };
        Ok::<_, Error>(out)
    }
    .await;
    match result {
        Ok(out) => {
            println!("{}", serde_json::to_string_pretty(&out)?);
            Ok(ExitCode::SUCCESS)
        }
        Err(e) => Ok(super::print_error(&e)),
    }
}
