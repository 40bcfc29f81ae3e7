//! `toolhost tools [--config F] [--audience public]`: the definitions the
//! model would see.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::{Args, ValueEnum};
use toolhost::Error;
use toolhost::config::Config;
use toolhost::dispatch::{Dispatcher, Session};
use toolhost::registry::{Registry, ToolAudience};

use super::EngineArgs;

/// The default config file, used when present in the current folder.
const DEFAULT_CONFIG: &str = "toolhost.toml";

#[derive(Debug, Args)]
pub(crate) struct ToolsArgs {
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
    pub(crate) async fn dispatcher(&self) -> Result<(Dispatcher, std::sync::Arc<Session>), Error> {
        let config = match &self.config {
            Some(path) => Config::load(path)?,
            None if Path::new(DEFAULT_CONFIG).exists() => Config::load(Path::new(DEFAULT_CONFIG))?,
            None => Config::default(),
        };
        let engine = self
            .engine
            .engine()
            .map_err(|e| Error::new(toolhost::ErrorCode::Config, format!("{e:#}")))?;
        // Flagged commands are put to the user when there is a terminal to
        // ask on; otherwise (headless) they are denied.
        let approver = toolhost::approval::CliPrompt::stdio()
            .ok()
            .map(|p| std::sync::Arc::new(p) as std::sync::Arc<dyn toolhost::approval::ApprovalCallback>);
        let dispatcher = config
            .dispatcher_with_approver(&engine, Registry::new(), approver)
            .await?;
        let audience = match self.audience {
            Audience::Trusted => ToolAudience::Trusted,
            Audience::Public => ToolAudience::Public,
        };
        Ok((dispatcher, Session::new("cli", audience)))
    }
}

pub(crate) async fn run(args: ToolsArgs) -> anyhow::Result<ExitCode> {
    let result = async {
        let (dispatcher, session) = args.config.dispatcher().await?;
        dispatcher.definitions(&session)
    }
    .await;
    match result {
        Ok(defs) => {
            println!("{}", serde_json::to_string_pretty(&defs)?);
            Ok(ExitCode::SUCCESS)
        }
        Err(e) => Ok(super::print_error(&e)),
    }
}
