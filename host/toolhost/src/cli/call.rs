//! `toolhost call FILE TOOL [JSON_ARGS]`: the arguments are checked against
//! the tool's schema first, as dispatch checks them.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;
use toolhost::{ComponentHash, Error, ErrorCode, LimitsOverride, LoadOptions};

use super::args::{EngineArgs, GrantArgs};

#[derive(Debug, Args)]
pub(crate) struct CallArgs {
    /// The component file.
    file: PathBuf,
    /// The tool to call.
    tool: String,
    /// The arguments, a JSON object.
    #[arg(default_value = "{}")]
    json_args: String,
    /// Fuel for the call (roughly, instructions).
    #[arg(long)]
    fuel: Option<u64>,
    /// The memory limit, in MiB.
    #[arg(long)]
    memory_mb: Option<u64>,
    /// The wall-clock limit, in milliseconds.
    #[arg(long)]
    timeout_ms: Option<u64>,
    /// The WebAssembly stack limit, in KiB (default 1024; from 16 up to the
    /// engine's ceiling, 8192).
    #[arg(long)]
    stack_kb: Option<u64>,
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
    let grants = args.grants.grants()?;
    // The limits apply from the start: `list-tools` at load runs under
    // them too (a component may need more memory just to start).
    let limits = LimitsOverride {
        fuel: args.fuel,
        memory_mb: args.memory_mb,
        timeout_ms: args.timeout_ms,
        wasm_stack_kb: args.stack_kb,
        ..Default::default()
    };
    let options = LoadOptions {
        expected_hash,
        grants,
        limits,
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
