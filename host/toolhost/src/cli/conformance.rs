//! `toolhost conformance FILE… [--format human|json|junit]`: the
//! conformance suite (`toolhost-conformance`) on each component. Exits 0
//! when every component passed, 1 when any check failed.

use super::{outln, outp};
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, ValueEnum};
use toolhost_conformance::{Report, Suite, human_summary, junit_xml};

use super::args::{EngineArgs, GrantArgs, LimitArgs};

#[derive(Debug, Args)]
pub(crate) struct ConformanceArgs {
    /// The component files to check.
    #[arg(required = true, value_name = "FILE")]
    files: Vec<PathBuf>,
    /// How to print the report: for a person, as JSON, or as JUnit XML (for
    /// CI systems to render).
    #[arg(long, value_enum, default_value_t = Format::Human)]
    format: Format,
    #[command(flatten)]
    limits: LimitArgs,
    #[command(flatten)]
    grants: GrantArgs,
    #[command(flatten)]
    engine: EngineArgs,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
enum Format {
    Human,
    Json,
    Junit,
}

pub(crate) async fn run(args: ConformanceArgs) -> anyhow::Result<ExitCode> {
    let grants = match args.grants.grants() {
        Ok(grants) => grants,
        Err(e) => return Ok(super::print_error(&e)),
    };
    let suite = Suite::new()
        .engine(args.engine.engine()?)
        .limits(args.limits.overrides())
        .grants(grants);
    let mut reports: Vec<Report> = Vec::with_capacity(args.files.len());
    for file in &args.files {
        reports.push(suite.run_async(file).await);
    }
    let passed = reports.iter().all(Report::passed);
    match args.format {
        Format::Human => outp!("{}", human_summary(&reports)),
        Format::Json => {
            let out = serde_json::json!({
                "passed": passed,
                "components": reports.iter().map(Report::to_json).collect::<Vec<_>>(),
            });
            outln!("{}", serde_json::to_string_pretty(&out)?);
        }
        Format::Junit => outp!("{}", junit_xml(&reports)),
    }
    Ok(if passed {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}
