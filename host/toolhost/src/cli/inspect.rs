//! `toolhost inspect FILE`.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;

use super::args::EngineArgs;

#[derive(Debug, Args)]
pub(crate) struct InspectArgs {
    /// The component file.
    file: PathBuf,
    #[command(flatten)]
    engine: EngineArgs,
}

pub(crate) async fn run(args: InspectArgs) -> anyhow::Result<ExitCode> {
    let engine = args.engine.engine()?;
    match engine.load_file(&args.file, Default::default()).await {
        Ok(component) => {
            println!("{}", serde_json::to_string_pretty(&component.describe())?);
            Ok(ExitCode::SUCCESS)
        }
        Err(e) => Ok(super::print_error(&e)),
    }
}
