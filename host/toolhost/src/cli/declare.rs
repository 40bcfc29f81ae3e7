//! `toolhost declare IN OUT [--env NAME]... [--dir PATH]... [--http HOST]...
//! [--secret NAME]... [--tool NAME]... [--elicitation] [--sampling] [--roots]
//! [--task TOOL=optional|required]...`: adds capability declarations to
//! any component (one a toolchain other than the Rust SDK built: jco,
//! componentize-py, wit-bindgen by hand), as a `toolhost:capabilities`
//! custom section, and prints the new hash.

use super::{errln, outln};
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use clap::Args;
use toolhost::ComponentHash;
use toolhost::internal::capabilities::Declared;
use toolhost::internal::registry::TaskSupport;

#[derive(Debug, Args)]
pub(crate) struct DeclareArgs {
    /// The component to read.
    input: PathBuf,
    /// Where to write the component with its declarations (may be INPUT).
    output: PathBuf,
    /// Declare an environment variable the component reads.
    #[arg(long = "env", value_name = "NAME")]
    env: Vec<String>,
    /// Declare a directory the component wants preopened, by its guest
    /// path (e.g. /workspace).
    #[arg(long = "dir", value_name = "GUEST_PATH")]
    dirs: Vec<String>,
    /// Declare a host the component sends HTTP requests to (a name,
    /// `*.example.com`, `*` or an IP address).
    #[arg(long = "http", value_name = "HOST")]
    http: Vec<String>,
    /// Declare a secret the host may add to its requests.
    #[arg(long = "secret", value_name = "NAME")]
    secrets: Vec<String>,
    /// Declare a tool the component calls through `toolhost:plugin/tools`.
    #[arg(long = "tool", value_name = "NAME")]
    tools: Vec<String>,
    /// Declare that the component asks the user of a call's MCP client
    /// questions (`toolhost:plugin/client.elicit`, 0.3.0).
    #[arg(long)]
    elicitation: bool,
    /// Declare that the component asks a call's MCP client for completions
    /// from its model (`toolhost:plugin/client.sample`, 0.3.0).
    #[arg(long)]
    sampling: bool,
    /// Declare that the component lists the roots of a call's MCP client
    /// (`toolhost:plugin/client.list-roots`, 0.3.1).
    #[arg(long)]
    roots: bool,
    /// Declare that a tool's calls may run as MCP tasks: `TOOL=optional`
    /// (for clients that support tasks) or `TOOL=required` (only as tasks);
    /// `,deferred` after it (`TOOL=required,deferred`) when the tool begins
    /// its task itself (`client.begin-task`, 0.3.1), once it has asked what
    /// it needs.
    #[arg(long = "task", value_name = "TOOL=SUPPORT[,deferred]", value_parser = task_support)]
    tasks: Vec<(String, TaskSupport, bool)>,
}

/// Reads `TOOL=optional|required|forbidden[,deferred]`.
fn task_support(text: &str) -> Result<(String, TaskSupport, bool), String> {
    let (tool, support) = text
        .split_once('=')
        .ok_or_else(|| format!("{text:?}: write TOOL=optional or TOOL=required"))?;
    let (support, deferred) = match support.split_once(',') {
        Some((support, "deferred")) => (support, true),
        Some((_, other)) => {
            return Err(format!(
                "{other:?}: the only word after the support is `deferred`"
            ));
        }
        None => (support, false),
    };
    let support = TaskSupport::parse(support)
        .ok_or_else(|| format!("{support:?}: task support is optional, required or forbidden"))?;
    Ok((tool.to_string(), support, deferred))
}

/// Prints the new component's hash on stdout (what to pin), and what was
/// added on stderr; a JSON error and exit code 1 when it cannot.
pub(crate) fn run(args: DeclareArgs) -> anyhow::Result<ExitCode> {
    let bytes = super::read_file(&args.input)?;
    let more = Declared {
        dirs: args.dirs,
        env: args.env,
        tools: args.tools,
        http: args.http,
        secrets: args.secrets,
        elicitation: args.elicitation,
        sampling: args.sampling,
        roots: args.roots,
        tasks: args.tasks.iter().map(|(t, s, _)| (t.clone(), *s)).collect(),
        tasks_deferred: args
            .tasks
            .iter()
            .filter(|(_, _, deferred)| *deferred)
            .map(|(t, _, _)| t.clone())
            .collect(),
    };
    let (out, added) = match toolhost::internal::capabilities::declare(&bytes, &more) {
        Ok(done) => done,
        Err(e) => return Ok(super::print_error(&e)),
    };
    std::fs::write(&args.output, &out).with_context(|| format!("cannot write {}", args.output.display()))?;
    if added.is_empty() {
        errln!("toolhost: nothing to add: the component declares all of it already");
    } else {
        errln!(
            "toolhost: declared {}",
            added.to_section().trim_end().replace('\n', ", ")
        );
    }
    outln!("{}", ComponentHash::of(&out));
    Ok(ExitCode::SUCCESS)
}
