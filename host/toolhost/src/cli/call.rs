//! `toolhost call FILE TOOL [JSON_ARGS]`: the arguments are checked against
//! the tool's schema first, as dispatch checks them.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;
use toolhost::{Error, ErrorCode, LimitsOverride};

use super::args::{ComponentArgs, EngineArgs};

#[derive(Debug, Args)]
pub(crate) struct CallArgs {
    /// The component file.
    file: PathBuf,
    /// The tool to call.
    tool: String,
    /// The arguments, a JSON object.
    #[arg(default_value = "{}")]
    json_args: String,
    #[command(flatten)]
    component: ComponentArgs,
    #[command(flatten)]
    engine: EngineArgs,
}

pub(crate) async fn run(args: CallArgs) -> anyhow::Result<ExitCode> {
    Ok(super::print_outcome(call(&args).await))
}

async fn call(args: &CallArgs) -> Result<String, Error> {
    let options = args.component.load_options()?;
    let arguments = super::args::json_object(&args.json_args)?;
    let engine = args
        .engine
        .engine()
        .map_err(|e| Error::new(ErrorCode::Config, super::report(&e)))?;
    let component = engine.load_file(&args.file, options).await?;
    let outcome = component
        .call(
            &args.tool,
            &arguments.to_string(),
            &LimitsOverride::default(),
            None,
            1,
        )
        .await;
    outcome.result.map(|output| output.content)
}
