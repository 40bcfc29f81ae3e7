//! `toolhost call FILE TOOL [JSON_ARGS]`.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;
use toolhost::capabilities::{DirGrant, DirMode, Grants};
use toolhost::{ComponentHash, Error, ErrorCode, LimitsOverride, LoadOptions};

use super::args::EngineArgs;

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
    match call(&args).await {
        Ok(json) => {
            println!("{json}");
            Ok(ExitCode::SUCCESS)
        }
        Err(e) => Ok(super::print_error(&e)),
    }
}

async fn call(args: &CallArgs) -> Result<String, Error> {
    let arguments = super::args::json_object(&args.json_args)?;
    let options = args.component.load_options()?;
    let engine = args
        .engine
        .engine()
        .map_err(|e| Error::new(ErrorCode::Config, format!("{e:#}")))?;
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

/// How a component given on the command line is loaded: its limits, its
/// grants, a pin (`call` and `bench` share them).
#[derive(Debug, Args)]
pub(crate) struct ComponentArgs {
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
    /// Grant a directory: HOST_DIR:GUEST_PATH[:rw] (read-only unless `:rw`).
    /// The component must also declare it.
    #[arg(long = "dir", value_name = "HOST:GUEST[:rw]")]
    dirs: Vec<String>,
    /// Grant an environment variable (its value is taken from this process).
    /// The component must also declare it.
    #[arg(long = "env", value_name = "NAME")]
    env: Vec<String>,
    /// Grant outbound HTTP to a destination: `[scheme://]host[:port]`
    /// (https and the default port unless given). The component must also
    /// declare the host.
    #[arg(long = "http", value_name = "URL")]
    http: Vec<String>,
    /// Refuse the component unless its hash is this (`blake3:...`).
    #[arg(long)]
    expect_hash: Option<String>,
}

impl ComponentArgs {
    /// The load options the flags describe. The limits apply from the
    /// start: `list-tools` at load runs under them too (a component may
    /// need more memory just to start).
    pub(crate) fn load_options(&self) -> Result<LoadOptions, Error> {
        let expected_hash = self
            .expect_hash
            .as_deref()
            .map(str::parse::<ComponentHash>)
            .transpose()?;
        let grants = Grants {
            dirs: self.dirs.iter().map(|d| parse_dir(d)).collect::<Result<_, _>>()?,
            env: self.env.clone(),
            http: self
                .http
                .iter()
                .cloned()
                .map(toolhost::http::HttpGrant::Url)
                .collect(),
            secrets: Vec::new(),
            ..Default::default()
        };
        let limits = LimitsOverride {
            fuel: self.fuel,
            memory_mb: self.memory_mb,
            timeout_ms: self.timeout_ms,
            wasm_stack_kb: self.stack_kb,
            ..Default::default()
        };
        Ok(LoadOptions {
            expected_hash,
            grants,
            limits,
        })
    }
}

fn parse_dir(spec: &str) -> Result<DirGrant, Error> {
    let bad = || {
        Error::new(
            ErrorCode::Config,
            format!("--dir {spec:?}: expected HOST_DIR:GUEST_PATH or HOST_DIR:GUEST_PATH:rw"),
        )
    };
    let (rest, mode) = match spec.strip_suffix(":rw") {
        Some(rest) => (rest, DirMode::Rw),
        None => (spec.strip_suffix(":ro").unwrap_or(spec), DirMode::Ro),
    };
    let (host, guest) = rest.rsplit_once(':').ok_or_else(bad)?;
    if host.is_empty() || guest.is_empty() {
        return Err(bad());
    }
    Ok(DirGrant {
        host: host.into(),
        guest: guest.into(),
        mode,
    })
}
