//! `toolhost tools [--config F] [--audience public]`: the definitions the
//! model would see.

use super::outln;
use std::process::ExitCode;

use clap::Args;
use toolhost::Error;
use toolhost::internal::dispatch::McpDispatcher;

use super::args::ConfigArgs;

#[derive(Debug, Args)]
pub(crate) struct ToolsArgs {
    /// Print every registered tool's schema with its source metadata
    /// (source, audience, toolset, mcpServer, componentHash), unfiltered,
    /// instead of the model's definitions.
    #[arg(long, conflicts_with = "mcp_status")]
    schemas: bool,
    /// Print every registered prompt, resource and resource template with
    /// where it comes from (source, audience, toolset, mcpServer,
    /// componentHash), unfiltered, instead of the model's definitions.
    #[arg(long, conflicts_with_all = ["schemas", "mcp_status", "status"])]
    catalog: bool,
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

pub(crate) async fn run(args: ToolsArgs) -> anyhow::Result<ExitCode> {
    let result = async {
        let (started, session) = args.config.started().await?;
        let dispatcher = &started.dispatcher;
        let out = if args.status {
            started.status()
        } else if args.catalog {
            dispatcher.registry().list_catalog()
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
            outln!("{}", serde_json::to_string_pretty(&out)?);
            Ok(ExitCode::SUCCESS)
        }
        Err(e) => Ok(super::print_error(&e)),
    }
}
