//! `toolhost inspect FILE [--dir … --env … --http …]`: the component as the
//! host sees it, with the grants given (and a warning for each grant it
//! does not declare).

use super::outln;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;
use toolhost::LoadOptions;

use super::args::{EngineArgs, GrantArgs};

#[derive(Debug, Args)]
pub(crate) struct InspectArgs {
    /// The component file.
    file: PathBuf,
    #[command(flatten)]
    grants: GrantArgs,
    #[command(flatten)]
    engine: EngineArgs,
}

pub(crate) async fn run(args: InspectArgs) -> anyhow::Result<ExitCode> {
    let engine = args.engine.engine()?;
    let grants = match args.grants.grants() {
        Ok(grants) => grants,
        Err(e) => return Ok(super::print_error(&e)),
    };
    let options = LoadOptions {
        grants,
        ..Default::default()
    };
    match engine.load_file(&args.file, options).await {
        Ok(component) => {
            outln!("{}", serde_json::to_string_pretty(&component.describe())?);
            Ok(ExitCode::SUCCESS)
        }
        Err(e) => Ok(super::print_error(&e)),
    }
}
