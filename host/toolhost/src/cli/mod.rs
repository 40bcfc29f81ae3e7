//! The command-line interface: one module per subcommand.

mod args;
mod bench;
mod call;
mod call_tool;
mod check_command;
mod conformance;
mod declare;
mod hash;
mod inspect;
mod mcp;
mod new;
mod pull;
mod push;
mod serve;
mod sign;
mod tools;
mod verify;

use std::process::ExitCode;

use clap::{Parser, Subcommand};

/// Run LLM-agent tools as sandboxed WebAssembly components.
#[derive(Debug, Parser)]
#[command(name = "toolhost", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
#[allow(clippy::enum_variant_names, reason = "the subcommand is called check-command")]
enum Command {
    /// Print a component's identity: the blake3 hash of its bytes.
    Hash(hash::HashArgs),
    /// Print a component's hash, world, tools, imports, capabilities (with
    /// the grants given), size and warnings as JSON.
    Inspect(inspect::InspectArgs),
    /// Add capability declarations to any component (a
    /// `toolhost:capabilities` section) and print its new hash.
    Declare(declare::DeclareArgs),
    /// Call one tool of a component, in a fresh sandbox, and print its result.
    Call(call::CallArgs),
    /// Print the dangerous-command detector's verdict on a command as JSON
    /// (`dangerous`, `categories`, `matches`), without running it.
    CheckCommand(check_command::CheckCommandArgs),
    /// Print the tool definitions the model would see, as JSON.
    Tools(tools::ToolsArgs),
    /// Call a tool through the full dispatch pipeline of the configured registry.
    CallTool(call_tool::CallToolArgs),
    /// Serve components' tools as an MCP server, over stdio or streamable HTTP.
    Serve(serve::ServeArgs),
    /// Measure a tool's calls and loads as the host runs them, each beside
    /// the bare-wasmtime floor for the same component, in the same run.
    Bench(bench::BenchArgs),
    /// Push a component to an OCI registry (CNCF Wasm artifact layout),
    /// with its signature FILE.minisig when present.
    Push(push::PushArgs),
    /// Pull a component from an OCI registry, with its signature.
    Pull(pull::PullArgs),
    /// Sign a file with a minisign secret key: writes FILE.minisig.
    Sign(sign::SignArgs),
    /// Verify FILE.minisig with a minisign public key and say which key signed.
    Verify(verify::VerifyArgs),
    /// Check that components are good plugins: run the conformance suite on
    /// each and print its report (exit code 1 if any check failed).
    Conformance(conformance::ConformanceArgs),
    /// Create a new Rust plugin crate that builds and passes conformance as
    /// it is.
    New(new::NewArgs),
    /// Bridged MCP servers: `mcp login NAME` signs in to one that wants
    /// OAuth.
    Mcp(mcp::McpArgs),
}

/// Parses the command line, runs the command, and maps its outcome to an
/// exit code: 0 on success, 1 when the command failed (its error already
/// printed), 2 for usage errors (clap's convention).
pub fn main() -> ExitCode {
    let cli = Cli::parse();
    init_tracing();
    let runtime = match tokio::runtime::Builder::new_multi_thread().enable_all().build() {
        Ok(rt) => rt,
        Err(e) => {
            errln!("toolhost: cannot start the async runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    let result = runtime.block_on(async {
        match cli.command {
            Command::Hash(args) => hash::run(args),
            Command::Inspect(args) => inspect::run(args).await,
            Command::Declare(args) => declare::run(args),
            Command::Call(args) => call::run(args).await,
            Command::CheckCommand(args) => check_command::run(args),
            Command::Tools(args) => tools::run(args).await,
            Command::CallTool(args) => call_tool::run(args).await,
            Command::Serve(args) => serve::run(args).await,
            Command::Bench(args) => bench::run(args).await,
            Command::Push(args) => push::run(args).await,
            Command::Pull(args) => pull::run(args).await,
            Command::Sign(args) => sign::run(args),
            Command::Verify(args) => verify::run(args),
            Command::Conformance(args) => conformance::run(args).await,
            Command::New(args) => new::run(args),
            Command::Mcp(args) => mcp::run(args).await,
        }
    });
    match result {
        Ok(code) => code,
        Err(e) => {
            errln!("toolhost: {}", report(&e));
            ExitCode::FAILURE
        }
    }
}

/// Logs go to stderr (never stdout, which carries results), filtered by
/// `TOOLHOST_LOG` (default `warn`), e.g. `TOOLHOST_LOG=toolhost=debug`.
fn init_tracing() {
    let filter = tracing_subscriber::EnvFilter::try_from_env("TOOLHOST_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn"));
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .try_init();
}

/// `error` and its causes on one line, `: ` between them, each said once.
///
/// A library error's message already names its cause (an MCP client sees
/// only the message), and keeps the cause as its `source` for callers that
/// inspect it; so a cause whose text the line already ends with is not
/// repeated (anyhow's `{:#}` would print `cannot read x: No such file or
/// directory (os error 2): No such file or directory (os error 2)`).
pub(crate) fn report(error: &anyhow::Error) -> String {
    let mut line = String::new();
    for cause in error.chain() {
        let text = cause.to_string();
        if line.ends_with(&text) {
            continue;
        }
        if !line.is_empty() {
            line.push_str(": ");
        }
        line.push_str(&text);
    }
    line
}

/// Writes `text` to stdout. SIGPIPE is ignored in this process (so that no
/// peer closing a pipe can end it), so a reader of stdout that went away
/// (`toolhost tools | head`) shows up here as a broken pipe: the command
/// then ends quietly with success, as it would by SIGPIPE in other
/// command-line tools, where `print!` would panic.
pub(crate) fn out(text: std::fmt::Arguments<'_>) {
    use std::io::Write as _;
    let mut stdout = std::io::stdout().lock();
    if let Err(e) = stdout.write_fmt(text).and_then(|()| stdout.flush()) {
        if e.kind() == std::io::ErrorKind::BrokenPipe {
            std::process::exit(0);
        }
        // Nowhere left to say it but stderr; never panic over it.
        let _ = writeln!(std::io::stderr(), "toolhost: cannot write the output: {e}");
        std::process::exit(1);
    }
}

/// Writes a line to stderr, ignoring a stderr that is gone (`eprintln!`
/// would panic).
pub(crate) fn err(text: std::fmt::Arguments<'_>) {
    use std::io::Write as _;
    let _ = std::io::stderr().lock().write_fmt(text);
}

/// `println!` through [`out`].
macro_rules! outln {
    ($($arg:tt)*) => { $crate::cli::out(format_args!("{}\n", format_args!($($arg)*))) };
}
/// `print!` through [`out`].
macro_rules! outp {
    ($($arg:tt)*) => { $crate::cli::out(format_args!($($arg)*)) };
}
/// `eprintln!` through [`err`].
macro_rules! errln {
    ($($arg:tt)*) => { $crate::cli::err(format_args!("{}\n", format_args!($($arg)*))) };
}
pub(crate) use {errln, outln, outp};

/// Prints `error` as `{"error": ..., "error_code": ...}` on stdout and returns
/// the failure exit code.
pub(crate) fn print_error(error: &toolhost::Error) -> ExitCode {
    outln!("{}", error.to_json());
    ExitCode::FAILURE
}

/// Prints a command's answer (JSON) on stdout, or its error as
/// [`print_error`] does; the exit code says which.
pub(crate) fn print_outcome(outcome: Result<impl std::fmt::Display, toolhost::Error>) -> ExitCode {
    match outcome {
        Ok(answer) => {
            outln!("{answer}");
            ExitCode::SUCCESS
        }
        Err(e) => print_error(&e),
    }
}

/// The bytes of the file at `path` (a component, or a file to sign): a
/// regular file of at most 64 MiB (see `toolhost::internal::bounded`), or an error
/// naming it.
pub(crate) fn read_file(path: &std::path::Path) -> Result<Vec<u8>, toolhost::Error> {
    let max = toolhost::internal::engine::DEFAULT_MAX_COMPONENT_BYTES;
    toolhost::internal::bounded::read_file(path, max)
        .map_err(|e| toolhost::internal::bounded::error("the file", path, max, e))
}

#[cfg(test)]
mod tests {
    use anyhow::Context as _;

    use super::{read_file, report};

    #[test]
    fn a_report_names_each_cause_once() {
        let missing = std::path::Path::new("/nonexistent/toolhost/plugin.wasm");
        let error = read_file(missing).context("loading plugin.wasm").unwrap_err();
        let io = std::fs::read(missing).unwrap_err().to_string();
        assert_eq!(
            report(&error),
            format!(
                "loading plugin.wasm: cannot read the file {}: {io}",
                missing.display()
            )
        );
        // A cause the message does not already end with is kept.
        let error = anyhow::anyhow!("disk full").context("writing the cache");
        assert_eq!(report(&error), "writing the cache: disk full");
    }
}
