//! `toolhost hash FILE`.

use super::outln;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;
use toolhost::ComponentHash;

#[derive(Debug, Args)]
pub(crate) struct HashArgs {
    /// The component file.
    file: PathBuf,
}

pub(crate) fn run(args: HashArgs) -> anyhow::Result<ExitCode> {
    let bytes = super::read_file(&args.file)?;
    outln!("{}", ComponentHash::of(&bytes));
    Ok(ExitCode::SUCCESS)
}
