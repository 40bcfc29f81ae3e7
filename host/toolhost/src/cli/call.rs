//! `toolhost call FILE TOOL [JSON_ARGS]`.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;
use toolhost::{ComponentHash, Error, ErrorCode, LimitsOverride, LoadOptions};

use super::args::{EngineArgs, GrantArgs, LimitArgs};

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
    limits: LimitArgs,
    #[command(flatten)]
    grants: GrantArgs,
    /// Refuse the component unless its hash is this (`blake3:...`).
    #[arg(long)]
    expect_hash: Option<String>,
    #[command(flatten)]
    engine: EngineArgs,
}

pub(crate) async fn run(args: CallArgs) -> anyhow::Result<ExitCode> {
    match call(&args).await {
        Ok(json) => {
            println!("{json}");
            Ok(ExitCode::SUCCESS)
        }
        Err(e) => Ok(super::print_error(&e)),
    }
}

async fn call(args: &CallArgs) -> Result<String, Error> {
    let expected_hash = args
        .expect_hash
        .as_deref()
        .map(str::parse::<ComponentHash>)
        .transpose()?;
    let arguments = super::args::json_object(&args.json_args)?;
    let engine = args
        .engine
        .engine()
        .map_err(|e| Error::new(ErrorCode::Config, format!("{e:#}")))?;
    // The limits apply from the start: `list-tools` at load runs under
    // them too (a component may need more memory just to start).
    let options = LoadOptions {
        expected_hash,
        grants: args.grants.grants()?,
        limits: args.limits.overrides(),
        ..LoadOptions::default()
    };
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
