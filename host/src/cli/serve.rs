//! `toolhost serve (--stdio | --http ADDR) [--plugin PATH]... [--public-plugin PATH]...`

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use anyhow::Context;
use clap::Args;
use tokio_util::sync::CancellationToken;
use toolhost::mcp::{Audience, HttpOptions, LocalCatalog, McpServer, admin, serve_http, serve_stdio};

use super::EngineArgs;

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
    /// A config file whose [[plugins]] (with their pins, limits and grants)
    /// are served to the trusted audience.
    #[arg(long, value_name = "FILE")]
    config: Option<PathBuf>,
    /// A component whose tools are served to the trusted audience only.
    #[arg(long = "plugin", value_name = "PATH")]
    plugins: Vec<PathBuf>,
    /// A component whose tools are served to every audience.
    #[arg(long = "public-plugin", value_name = "PATH")]
    public_plugins: Vec<PathBuf>,
    /// Who the server is for: `trusted` sees every tool, `public` only the
    /// --public-plugin ones.
    #[arg(long, default_value = "trusted", value_parser = ["trusted", "public"])]
    audience: String,
    /// The bearer token HTTP clients must send.
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
    /// How long calls in flight may run after SIGTERM or Ctrl-C.
    #[arg(long, default_value_t = 5000, value_name = "MS")]
    grace_ms: u64,
    #[command(flatten)]
    engine: EngineArgs,
}

pub(crate) async fn run(args: ServeArgs) -> anyhow::Result<ExitCode> {
    let engine = args.engine.engine()?;
    let audience = match args.audience.as_str() {
        "public" => Audience::Public,
        _ => Audience::Trusted,
    };
    let catalog = LocalCatalog::new(audience);
    if let Some(path) = &args.config {
        let config = toolhost::config::Config::load(path)?;
        config.prepare_storage()?;
        let mut registry = toolhost::registry::Registry::new();
        for component in config.load_plugins(&engine, &mut registry).await? {
            catalog.load_component(&component, false)?;
        }
    }
    for (paths, public) in [(&args.plugins, false), (&args.public_plugins, true)] {
        for path in paths {
            catalog
                .load_file(&engine, path, public)
                .await
                .with_context(|| format!("loading {}", path.display()))?;
        }
    }
    if args.admin {
        admin::add_admin_tools(&catalog, engine.clone())?;
    }
    let shutdown = CancellationToken::new();
    tokio::spawn(cancel_on_signal(shutdown.clone()));
    let server = McpServer::new(catalog);
    let grace = Duration::from_millis(args.grace_ms);
    if let Some(addr) = args.http {
        let listener = tokio::net::TcpListener::bind(addr)
            .await
            .with_context(|| format!("binding {addr}"))?;
        let local = listener.local_addr()?;
        let options = HttpOptions {
            bearer_token: args.token.clone(),
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
