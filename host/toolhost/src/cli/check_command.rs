//! `toolhost check-command CMD [--cwd DIR] [--config F]`: the approval
//! detector's verdict, and what the configured rules make of it, without
//! running anything.

use super::outln;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;
use toolhost::config::Config;

#[derive(Debug, Args)]
pub(crate) struct CheckCommandArgs {
    /// The command line, exactly as the model would send it.
    command: String,
    /// The working directory the command would run in (relative paths in
    /// it are judged there).
    #[arg(long, value_name = "DIR")]
    cwd: Option<String>,
    /// Apply this config's `command_denylist` and `command_allowlist` too,
    /// and print the outcome as `rule`.
    #[arg(long, value_name = "FILE")]
    config: Option<PathBuf>,
}

pub(crate) fn run(args: CheckCommandArgs) -> anyhow::Result<ExitCode> {
    let Some(path) = &args.config else {
        let verdict = toolhost::internal::approval::inspect_in(&args.command, args.cwd.as_deref()).verdict;
        outln!("{}", serde_json::to_string_pretty(&verdict)?);
        return Ok(ExitCode::SUCCESS);
    };
    let config = Config::load(path)?;
    let gate = config.approval_gate(None)?;
    let evaluation = gate.evaluate(&args.command, args.cwd.as_deref());
    let mut out = serde_json::to_value(&evaluation.verdict)?;
    out["rule"] = serde_json::to_value(&evaluation.rule)?;
    outln!("{}", serde_json::to_string_pretty(&out)?);
    Ok(ExitCode::SUCCESS)
}
