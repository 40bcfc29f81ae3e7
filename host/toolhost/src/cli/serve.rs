//! `toolhost serve (--stdio | --http ADDR [--stateless]) [--config F]
//! [--plugin PATH]... [--plugins DIR]`: the configured registry as an MCP
//! server. `SIGHUP` (and `[oci] poll_interval_s`) reloads the `[[plugins]]`
//! entries (see `toolhost::live`).

use super::errln;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context;
use clap::Args;
use tokio_util::sync::CancellationToken;
use toolhost::admission::{PluginRequest, Via};
use toolhost::config::{Config, PluginsDirConfig, Shared, Started, metrics_text, plugins_view};
use toolhost::internal::admin;
use toolhost::internal::approval::{ApprovalCallback, CliPrompt};
use toolhost::internal::mcp::console::{Console, PendingApprovals};
use toolhost::internal::mcp::request_state::STATE_KEY_ENV;
use toolhost::internal::mcp::{HttpOptions, McpApprover, MetricsFn, StateKey, serve_http, serve_stdio};
use toolhost::internal::registry::Registry;
use toolhost::internal::registry::lazy::RegistryMode;
use toolhost::live::LivePlugins;

use super::args::ConfigArgs;

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
    /// Serve HTTP with no bearer token at all, for clients that cannot send
    /// a header (the MCP conformance suite, say). Only on a loopback
    /// address: any other is refused.
    #[arg(long, conflicts_with = "token", conflicts_with = "stdio")]
    no_token: bool,
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
    /// Watch this folder of components: a `NAME.wasm` added is loaded, one
    /// removed unloaded, one replaced swapped (overrides `[plugins_dir]
    /// path`, keeping its other settings).
    #[arg(long = "plugins", value_name = "DIR")]
    plugins_dir: Option<PathBuf>,
    /// Over HTTP, keep no MCP session between requests, so that replicas
    /// behind an ordinary load balancer answer any request. Lazy mode needs
    /// sessions and is refused. Clients on MCP 2026-07-28 are asked for
    /// approvals by multi-round-trip results (replicas need one shared
    /// `[mcp] state_key_file`); earlier clients cannot be asked.
    #[arg(long, conflicts_with = "stdio")]
    stateless: bool,
    /// Over HTTP, the most MCP sessions open at once; an `initialize` past
    /// them is answered HTTP 503 (retry later).
    #[arg(long, default_value_t = HttpOptions::default().max_sessions, value_name = "N", conflicts_with = "stdio", value_parser = at_least_one::<usize>())]
    max_sessions: usize,
    /// Over HTTP, how long a session may go without a message before it
    /// ends.
    #[arg(long, default_value_t = HttpOptions::default().session_idle.as_secs(), value_name = "SECONDS", conflicts_with = "stdio", value_parser = at_least_one::<u64>())]
    session_idle_secs: u64,
    /// Over HTTP, the most connections served at once (more wait to be
    /// accepted); at most half the process's open-file limit.
    #[arg(long, default_value_t = HttpOptions::default().max_connections, value_name = "N", conflicts_with = "stdio", value_parser = at_least_one::<usize>())]
    max_connections: usize,
    /// How long calls in flight may run after SIGTERM or Ctrl-C.
    #[arg(long, default_value_t = 5000, value_name = "MS")]
    grace_ms: u64,
    #[command(flatten)]
    config: ConfigArgs,
}

pub(crate) async fn run(args: ServeArgs) -> anyhow::Result<ExitCode> {
    let mut config = args.config.load()?;
    // The console, over HTTP: approvals that no client can answer wait
    // there for the operator.
    let pending = console_approvals(&args, &config)?;
    if args.http.is_none() {
        // Nothing serves the console over stdio: nothing of it is kept
        // either (its ring of calls, and the spans made to file in it).
        config.console.enabled = false;
    }
    let tty = if args.approve_on_tty {
        let prompt = CliPrompt::tty().map_err(|_| {
            anyhow::anyhow!("--approve-on-tty: this process has no controlling terminal to ask on")
        })?;
        Some(Arc::new(prompt) as Arc<dyn ApprovalCallback>)
    } else {
        None
    };
    let fallback = match &pending {
        Some(pending) => Some(Arc::clone(pending) as Arc<dyn ApprovalCallback>),
        None => tty,
    };
    // Clients that can answer a form are asked (elicitation); the console or
    // the terminal, if either, for the others; otherwise the call is denied. A stateless
    // server asks 2026-07-28 clients only (multi-round-trip results): a
    // server-initiated request's answer would reach another request (or
    // another replica).
    let elicit = (!args.no_elicit).then(|| match args.stateless {
        true => McpApprover::without_sessions(fallback.clone()),
        false => McpApprover::new(fallback.clone()),
    });
    let approver = match &elicit {
        Some(elicit) => Some(Arc::clone(elicit) as Arc<dyn ApprovalCallback>),
        None => fallback,
    };
    let engine = args.config.engine_for(&config)?;
    if let Some(dir) = &args.plugins_dir {
        // Into the config before it starts, so that its protected paths
        // include the folder (no grant may write components into it).
        let path = std::path::absolute(dir).with_context(|| format!("--plugins {}", dir.display()))?;
        config.plugins_dir = Some(PluginsDirConfig {
            path,
            ..config
                .plugins_dir
                .take()
                .unwrap_or_else(|| PluginsDirConfig::new(dir))
        });
    }
    if let Some(file) = args.config.file()
        && config.plugins.is_empty()
        && config.plugins_dir.is_none()
        && config.mcp.servers.is_empty()
        && args.plugins.is_empty()
    {
        // A config replaces the standard one wholly: one written for a
        // single section (`[traces]`, say) serves no plugin at all.
        errln!(
            "toolhost: note: {} names no plugins, plugins folder or MCP servers, so only the built-in tools are served; the standard plugins are served only when there is no config: name them with [[plugins]] bundled = \"files\" (and \"memory\", \"time\", \"calc\", \"http\"), or start from the repository's toolhost.toml",
            file.display()
        );
    }
    let started = config.start(&engine, Registry::new(), approver).await?;
    if args.stateless {
        stateless_checks(&started)?;
    }
    if let Some(advice) = toolhost::internal::glibc::advice() {
        errln!("toolhost: note: {advice}");
    }
    for warning in &started.warnings {
        errln!("toolhost: warning: {warning}");
    }
    let live = Arc::clone(&started.live);
    let _watch = match live.config().plugins_dir.clone() {
        Some(folder) => Some(live.watch_folder(folder).await?),
        None => None,
    };
    tokio::spawn(reload_on_signal(Arc::clone(&live)));
    let metrics = started.metrics.clone();
    let audit = started.audit.clone();
    let console = match (pending, started.calls.clone()) {
        (Some(pending), Some(calls)) => {
            let mut console = Console::new(Arc::clone(&calls))
                .with_approvals(pending)
                .with_plugins(plugins_view(Arc::clone(&live), calls))
                .with_scopes(live.config().console.scopes());
            if let Some(audit) = &audit {
                console = console.with_audit(Arc::clone(audit));
            }
            Some(Arc::new(console))
        }
        _ => None,
    };
    let dispatcher = started.dispatcher;
    for path in &args.plugins {
        // Relative to the working directory, as a command-line path is.
        let path = std::path::absolute(path).with_context(|| format!("--plugin {}", path.display()))?;
        live.load_via(Via::CommandLine, PluginRequest::file(&path))
            .await
            .with_context(|| format!("--plugin {}", path.display()))?;
    }
    if args.admin {
        admin::add_admin_tools(&live)?;
    }
    let shutdown = CancellationToken::new();
    tokio::spawn(cancel_on_signal(shutdown.clone()));
    // One store for what replicas share: request states' single use,
    // session approvals, tasks; the server made as the library's Host makes it.
    let shared = Shared::open(live.config())?;
    let key = state_key(&started.live, args.stateless)?;
    let scrape: Option<MetricsFn> = metrics.clone().map(|metrics| {
        let (live, dispatcher) = (Arc::clone(&live), dispatcher.clone());
        Arc::new(move || metrics_text(&metrics, &live, &dispatcher)) as MetricsFn
    });
    let traces = started.traces.clone();
    let tracing = traces.as_ref().map(|traces| traces.tracing().clone());
    let server = shared.mcp_server(dispatcher, args.config.audience(), key, elicit, metrics, tracing);
    let grace = Duration::from_millis(args.grace_ms);
    if let Some(addr) = args.http {
        let listener = tokio::net::TcpListener::bind(addr)
            .await
            .with_context(|| format!("binding {addr}"))?;
        let local = listener.local_addr()?;
        if args.no_token && !local.ip().is_loopback() {
            anyhow::bail!(
                "--no-token serves only on a loopback address ({local} is not one): any process that can reach it could call the tools; give --token instead"
            );
        }
        // `[auth]`: the issuer's OAuth tokens, beside any static token.
        let auth = match live.config().auth.clone() {
            Some(section) => {
                let mut verifier =
                    toolhost::internal::mcp::auth::JwtVerifier::new(section).context("[auth]")?;
                if console.is_some() {
                    // Console-only tokens are let in (seeing no tools).
                    verifier = verifier.recognizing(live.config().console.scopes().configured());
                }
                Some(Arc::new(verifier))
            }
            None => None,
        };
        if args.no_token && auth.is_some() {
            anyhow::bail!(
                "--no-token: the config's [auth] section asks for OAuth tokens; remove one or the other"
            );
        }
        let token = match args.token.clone().filter(|t| !t.is_empty()) {
            Some(token) => token,
            None if args.no_token => String::new(),
            // With OAuth tokens, no static token unless the operator gives one.
            None if auth.is_some() => String::new(),
            // A public address needs the operator's own token (serve_http
            // refuses it without one); on loopback, one is made up so that
            // other local users and processes cannot call the tools.
            None if !local.ip().is_loopback() => String::new(),
            None => {
                let token = toolhost::internal::dispatch::new_session_id("");
                errln!(
                    "toolhost: no --token given; HTTP clients must send this generated one: Authorization: Bearer {token}"
                );
                token
            }
        };
        let status = Arc::clone(&live);
        let options = HttpOptions {
            bearer_token: Some(token).filter(|t| !t.is_empty()),
            auth,
            allowed_origins: args.allowed_origins.clone(),
            stateless: args.stateless,
            status: Some(Arc::new(move || status.status())),
            metrics: scrape,
            audit,
            console: console.clone(),
            max_sessions: args.max_sessions,
            session_idle: Duration::from_secs(args.session_idle_secs),
            max_connections: args.max_connections,
            ..HttpOptions::default()
        };
        errln!("toolhost: serving MCP at http://{local}{}", options.path);
        if console.is_some() {
            errln!("toolhost: the console is at http://{local}/console (give it the bearer token)");
        }
        serve_http(server, listener, options, shutdown, grace).await?;
    } else {
        serve_stdio(server, shutdown, grace).await?;
    }
    if let Some(traces) = traces {
        // The spans of the last calls go out before the process ends, for
        // at most the grace period (a collector that is gone costs that).
        let _ = tokio::task::spawn_blocking(move || traces.shutdown(grace)).await;
    }
    if let Some(audit) = started.audit {
        // The lines still in the log's ring go into the file before the
        // process ends (a failure was warned about; they stay in the ring
        // for the next start).
        let _ = tokio::task::spawn_blocking(move || audit.flush()).await;
    }
    Ok(ExitCode::SUCCESS)
}

/// The approvals waiting for the console, when `[console] enabled` and
/// serving HTTP; the console refuses to go with what it cannot work with.
fn console_approvals(args: &ServeArgs, config: &Config) -> anyhow::Result<Option<Arc<PendingApprovals>>> {
    if !config.console.enabled {
        return Ok(None);
    }
    if args.http.is_none() {
        errln!("toolhost: note: [console] is served on the HTTP listener only; --stdio serves none");
        return Ok(None);
    }
    if args.no_token {
        anyhow::bail!(
            "--no-token: the console ([console] enabled) needs a bearer token, or anyone on this machine could decide approvals; give --token, or turn the console off"
        );
    }
    if args.approve_on_tty {
        anyhow::bail!(
            "--approve-on-tty: with [console] enabled, approvals no client can answer wait on the console; use one or the other"
        );
    }
    Ok(Some(Arc::new(PendingApprovals::new(config.console.max_pending))))
}

/// What needs MCP sessions, refused or announced in stateless mode.
/// A whole number of at least one, read as `T` (the HTTP bounds: zero
/// sessions, connections or idle seconds would serve no one).
fn at_least_one<T: TryFrom<u64> + Clone + Send + Sync + 'static>() -> clap::builder::RangedU64ValueParser<T> {
    clap::builder::RangedU64ValueParser::new().range(1..)
}

fn stateless_checks(started: &Started) -> anyhow::Result<()> {
    if started.dispatcher.mode() == RegistryMode::Lazy {
        anyhow::bail!(
            "--stateless cannot serve registry_mode = \"lazy\": a tool activated by tool_search stays active only in its MCP session, and a stateless server keeps none. Serve lazy mode statefully (without --stateless), with sticky sessions at the load balancer (e.g. haproxy `stick on hdr(mcp-session-id)`)"
        );
    }
    let asks = started.live.config().exec.is_some() || !started.live.config().require_approval.is_empty();
    if asks {
        errln!(
            "toolhost: note: --stateless: clients on MCP 2026-07-28 are asked for approvals by multi-round-trip results; clients of earlier revisions cannot be asked (elicitation needs a session), so their calls that need approval are denied unless --approve-on-tty"
        );
    }
    Ok(())
}

/// The key that seals 2026-07-28 requests' states: from `[mcp]
/// state_key_file`, else `TOOLHOST_MCP_STATE_KEY`, else a random one of
/// this process (which `--stateless` warns about: replicas would refuse
/// each other's states).
fn state_key(live: &LivePlugins, stateless: bool) -> anyhow::Result<StateKey> {
    let file = live.config().mcp_config().state_key_file;
    let key = match StateKey::configured(file.as_deref()).context("the request-state key")? {
        Some(key) => key,
        None => {
            if stateless {
                errln!(
                    "toolhost: warning: --stateless without [mcp] state_key_file or {STATE_KEY_ENV}: request states are sealed with a random key of this process, so a replica refuses the retries another one asked for. Give every replica the same key file"
                );
            }
            StateKey::random()
        }
    };
    Ok(key)
}

/// Reloads the `[[plugins]]` entries on every SIGHUP and, with `[oci]
/// poll_interval_s`, that often.
async fn reload_on_signal(live: Arc<LivePlugins>) {
    let interval = live
        .config()
        .oci
        .poll_interval_s
        .filter(|s| *s > 0)
        .map(Duration::from_secs);
    #[cfg(unix)]
    let mut hup = match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::hangup()) {
        Ok(hup) => hup,
        Err(e) => {
            tracing::warn!("cannot listen for SIGHUP: {e}");
            return;
        }
    };
    loop {
        let tick = async {
            match interval {
                Some(every) => tokio::time::sleep(every).await,
                None => std::future::pending().await,
            }
        };
        #[cfg(unix)]
        tokio::select! {
            received = hup.recv() => if received.is_none() { return },
            () = tick => {}
        }
        #[cfg(not(unix))]
        tick.await;
        let report = live.reload().await;
        errln!("toolhost: plugins reloaded: {}", serde_json::json!(report));
    }
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
