//! `toolhost check-command CMD`: the approval detector's verdict, without
//! running anything.

use std::process::ExitCode;

use clap::Args;

#[derive(Debug, Args)]
pub(crate) struct CheckCommandArgs {
    /// The command line, exactly as the model would send it.
    command: String,
}

pub(crate) fn run(args: CheckCommandArgs) -> anyhow::Result<ExitCode> {
    let verdict = toolhost::approval::detect(&args.command);
    println!("{}", serde_json::to_string_pretty(&verdict)?);
    Ok(ExitCode::SUCCESS)
}
