//! `toolhost hash FILE`.

use super::outln;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use clap::Args;
use toolhost::ComponentHash;

#[derive(Debug, Args)]
pub(crate) struct HashArgs {
    /// The component file.
    file: PathBuf,
}

pub(crate) fn run(args: HashArgs) -> anyhow::Result<ExitCode> {
    let bytes = std::fs::read(&args.file).with_context(|| format!("cannot read {}", args.file.display()))?;
    outln!("{}", ComponentHash::of(&bytes));
    Ok(ExitCode::SUCCESS)
}
