//! `toolhost serve (--stdio | --http ADDR) [--config F] [--plugin PATH]...`:
//! the configured registry as an MCP server.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context;
use clap::Args;
use tokio_util::sync::CancellationToken;
use toolhost::admin;
use toolhost::approval::{ApprovalCallback, CliPrompt};
use toolhost::component::LoadOptions;
use toolhost::mcp::{HttpOptions, McpApprover, McpServer, serve_http, serve_stdio};
use toolhost::registry::ComponentRegistration;

use super::args::ConfigArgs;
use toolhost::dispatch::LoadComponent;

#[derive(Debug, Args)]
#[command(group(clap::ArgGroup::new("transport").required(true).args(["stdio", "http"])))]
pub(crate) struct ServeArgs {
    /// Serve MCP on stdin and stdout (stdout carries only the protocol; logs
    /// go to stderr). Exits when stdin closes.
    #[arg(long)]
    stdio: bool,
    /// Serve MCP over streamable HTTP at http://ADDR/mcp (e.g.
    /// 127.0.0.1:8080). A non-loopback ADDR needs --token.
    #[arg(long, value_name = "ADDR")]
    http: Option<SocketAddr>,
    /// A component to serve besides the config's plugins (repeatable): no
    /// grants, default limits, toolset = its file name without `.wasm`.
    #[arg(long = "plugin", value_name = "PATH")]
    plugins: Vec<PathBuf>,
    /// The bearer token HTTP clients must send. Without one, a random token
    /// is made up and printed on stderr at start (a non-loopback ADDR needs
    /// this option).
    #[arg(long, env = "TOOLHOST_MCP_TOKEN", hide_env_values = true)]
    token: Option<String>,
    /// A browser origin allowed besides the loopback ones (repeatable), e.g.
    /// https://app.example.com:443.
    #[arg(long = "allow-origin", value_name = "ORIGIN")]
    allowed_origins: Vec<String>,
    /// Serve the trusted-only admin tools toolhost__load_component and
    /// toolhost__unload_component (off by default).
    #[arg(long)]
    admin: bool,
    /// When a call needs approval (a flagged command, a `require_approval`
    /// tool) and its MCP client cannot be asked, ask on the controlling
    /// terminal (/dev/tty). Without it, such calls are denied.
    #[arg(long)]
    approve_on_tty: bool,
    /// Never ask MCP clients (elicitation) for approvals: calls that need
    /// one are denied, unless --approve-on-tty.
    #[arg(long)]
    no_elicit: bool,
    /// How long calls in flight may run after SIGTERM or Ctrl-C.
    #[arg(long, default_value_t = 5000, value_name = "MS")]
    grace_ms: u64,
    #[command(flatten)]
    config: ConfigArgs,
}

pub(crate) async fn run(args: ServeArgs) -> anyhow::Result<ExitCode> {
    let tty = if args.approve_on_tty {
        let prompt = CliPrompt::tty().map_err(|_| {
            anyhow::anyhow!("--approve-on-tty: this process has no controlling terminal to ask on")
        })?;
        Some(Arc::new(prompt) as Arc<dyn ApprovalCallback>)
    } else {
        None
    };
    // Clients that can answer a form are asked (elicitation); the terminal,
    // if allowed, for the others; otherwise the call is denied.
    let elicit = (!args.no_elicit).then(|| McpApprover::new(tty.clone()));
    let approver = match &elicit {
        Some(elicit) => Some(Arc::clone(elicit) as Arc<dyn ApprovalCallback>),
        None => tty,
    };
    let engine = args.config.engine()?;
    let started = args.config.start_with(&engine, approver).await?;
    for warning in &started.warnings {
        eprintln!("toolhost: warning: {warning}");
    }
    let dispatcher = started.dispatcher;
    for path in &args.plugins {
        let registration = ComponentRegistration::for_file(path, None);
        dispatcher
            .load_component(&engine, path, LoadOptions::default(), &registration)
            .await
            .with_context(|| format!("loading {}", path.display()))?;
    }
    if args.admin {
        admin::add_admin_tools(&dispatcher, engine)?;
    }
    let shutdown = CancellationToken::new();
    tokio::spawn(cancel_on_signal(shutdown.clone()));
    let mut server = McpServer::new(dispatcher, args.config.audience());
    if let Some(elicit) = elicit {
        server = server.with_approver(elicit);
    }
    let grace = Duration::from_millis(args.grace_ms);
    if let Some(addr) = args.http {
        let listener = tokio::net::TcpListener::bind(addr)
            .await
            .with_context(|| format!("binding {addr}"))?;
        let local = listener.local_addr()?;
        let token = match args.token.clone().filter(|t| !t.is_empty()) {
            Some(token) => token,
            // A public address needs the operator's own token (serve_http
            // refuses it without one); on loopback, one is made up so that
            // other local users and processes cannot call the tools.
            None if !local.ip().is_loopback() => String::new(),
            None => {
                let token = toolhost::dispatch::new_session_id("");
                eprintln!(
                    "toolhost: no --token given; HTTP clients must send this generated one: Authorization: Bearer {token}"
                );
                token
            }
        };
        let options = HttpOptions {
            bearer_token: Some(token).filter(|t| !t.is_empty()),
            allowed_origins: args.allowed_origins.clone(),
            ..HttpOptions::default()
        };
        eprintln!("toolhost: serving MCP at http://{local}{}", options.path);
        serve_http(server, listener, options, shutdown, grace).await?;
    } else {
        serve_stdio(server, shutdown, grace).await?;
    }
    Ok(ExitCode::SUCCESS)
}

async fn cancel_on_signal(shutdown: CancellationToken) {
    let ctrl_c = tokio::signal::ctrl_c();
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        match signal(SignalKind::terminate()) {
            Ok(mut term) => {
                tokio::select! {
                    _ = term.recv() => {}
                    _ = ctrl_c => {}
                }
            }
            Err(_) => {
                let _ = ctrl_c.await;
            }
        }
    }
    #[cfg(not(unix))]
    let _ = ctrl_c.await;
    shutdown.cancel();
}
