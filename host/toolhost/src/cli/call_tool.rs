//! `toolhost call-tool NAME [JSON] [--config F]`: one call through the full
//! dispatch pipeline of the configured registry.

use super::outln;
use std::process::ExitCode;

use clap::Args;
use toolhost::internal::dispatch::DispatchContext;

use super::args::ConfigArgs;

#[derive(Debug, Args)]
pub(crate) struct CallToolArgs {
    /// The tool to call.
    name: String,
    /// The arguments, a JSON object.
    #[arg(default_value = "{}")]
    json_args: String,
    #[command(flatten)]
    config: ConfigArgs,
}

/// Prints the result (a JSON error object on failure, with exit code 1).
pub(crate) async fn run(args: CallToolArgs) -> anyhow::Result<ExitCode> {
    let arguments = match super::args::json_object(&args.json_args) {
        Ok(v) => v,
        Err(e) => return Ok(super::print_error(&e)),
    };
    let (dispatcher, session) = match args.config.dispatcher().await {
        Ok(d) => d,
        Err(e) => return Ok(super::print_error(&e)),
    };
    let result = dispatcher
        .dispatch(&args.name, arguments, &DispatchContext::new(session))
        .await;
    outln!("{}", result.content);
    Ok(if result.is_error() {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    })
}
