//! `toolhost mcp login NAME [--config F]`: signs in to a bridged server
//! that wants OAuth, once, for the bridge to use (see
//! `toolhost::internal::mcp::oauth`).

use std::process::{Command as Process, ExitCode, Stdio};

use clap::{Args, Subcommand};
use toolhost::internal::mcp::oauth;
use toolhost::{Error, ErrorCode};

use super::args::ConfigArgs;
use super::{errln, outln};

#[derive(Debug, Args)]
pub(crate) struct McpArgs {
    #[command(subcommand)]
    command: McpCommand,
}

#[derive(Debug, Subcommand)]
enum McpCommand {
    /// Sign in to a bridged MCP server that wants OAuth (`oauth = {...}` in
    /// its `[[mcp.servers]]` entry): prints the authorization URL (and
    /// opens it with $BROWSER when set), waits for the authorization
    /// server's redirect on a loopback port, and keeps the tokens for the
    /// bridge, which refreshes them.
    Login(LoginArgs),
}

#[derive(Debug, Args)]
struct LoginArgs {
    /// The `[[mcp.servers]]` entry's name.
    name: String,
    /// Also take the address the browser was sent to, pasted on standard
    /// input: for a browser on another machine (signing in over SSH),
    /// which cannot reach this machine's loopback port.
    #[arg(long)]
    paste: bool,
    #[command(flatten)]
    config: ConfigArgs,
}

pub(crate) async fn run(args: McpArgs) -> anyhow::Result<ExitCode> {
    match args.command {
        McpCommand::Login(args) => login(args).await,
    }
}

async fn login(args: LoginArgs) -> anyhow::Result<ExitCode> {
    let result = async {
        let config = args.config.load()?.mcp_config();
        let server = config
            .servers
            .iter()
            .find(|s| s.name == args.name)
            .ok_or_else(|| {
                Error::new(
                    ErrorCode::NotFound,
                    format!("no [[mcp.servers]] entry is named {:?}", args.name),
                )
            })?;
        let paste = args.paste;
        let open = move |url: &str| {
            open_browser(url);
            if paste {
                errln!(
                    "toolhost: if the browser cannot reach this machine, copy the address it was sent to (http://127.0.0.1:.../callback?...) and paste it here:"
                );
            }
        };
        oauth::login(server, open, paste).await
    }
    .await;
    match result {
        Ok(done) => {
            errln!(
                "toolhost: signed in to {:?}; the tokens are kept in {}",
                args.name,
                done.token_file.display()
            );
            outln!(
                "{}",
                serde_json::json!({
                    "server": args.name,
                    "token_file": done.token_file,
                    "scopes": done.scopes,
                })
            );
            Ok(ExitCode::SUCCESS)
        }
        Err(e) => Ok(super::print_error(&e)),
    }
}

/// Shows the authorization URL, and opens it with `$BROWSER` (a command,
/// given the URL as its last argument) when that is set.
fn open_browser(url: &str) {
    errln!("toolhost: to sign in, open this URL in a browser:\n\n  {url}\n");
    let Some(browser) = std::env::var_os("BROWSER") else {
        return;
    };
    let browser = browser.to_string_lossy().into_owned();
    let mut words = browser.split_whitespace();
    let Some(program) = words.next() else {
        return;
    };
    let started = Process::new(program)
        .args(words)
        .arg(url)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .spawn();
    if let Err(e) = started {
        errln!("toolhost: cannot start $BROWSER ({browser}): {e}; open the URL by hand");
    }
}
