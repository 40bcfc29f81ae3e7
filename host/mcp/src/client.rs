//! # Bridging MCP servers in
//!
//! [`McpConnection::start`] connects to one `[[mcp.servers]]` entry and keeps
//! it connected: it lists the server's tools (every page), lists them again
//! on `notifications/tools/list_changed`, and when the server dies or cannot
//! be reached it marks the server unavailable (its tools leave the list) and
//! reconnects with exponential backoff, from 200 ms up to 30 s. Nothing a
//! server does can take the host down: each message is held to 16 MiB
//! (rmcp's transports), a listing to [`MAX_LISTED_TOOLS`] tools and
//! [`MAX_LISTED_BYTES`] of definitions (past either it fails, and the
//! server is unavailable), and `list_changed` notifications that arrive
//! while a listing runs make one more listing, however many they are. A
//! lazy server (see [`lazy`](super::lazy)) is also listed again once its
//! catalog is `catalog_ttl_s` old.
//!
//! The current state is a [`tokio::sync::watch`] of [`McpState`]: whether the
//! server is available, its tools as [`McpTool`] values (each a registry
//! [`Tool`](toolhost_core::registry::Tool) named `mcp__SERVER__TOOL`, see [`naming`](super::naming)), and
//! the last error. The registry syncs from it.
//!
//! A call that the server reports as an error (`isError`) is a
//! [`ErrorCode::ToolFailed`] error with the server's text (a lazy server's
//! `call_tool` returns it in its result dict instead). A call that runs
//! past the server's `timeout_ms` (or the call's deadline) is
//! [`ErrorCode::Timeout`], and the request is cancelled on the server
//! (`notifications/cancelled`); so is a call whose [`CallContext::cancel`](toolhost_core::registry::CallContext::cancel)
//! fires.
//!
//! ```no_run
//! # async fn demo() {
//! use toolhost_mcp::{McpConnection, McpServerConfig};
//!
//! let config = McpServerConfig::stdio("everything", "mcp-server-everything", vec![]);
//! let connection = McpConnection::start(config);
//! let mut state = connection.subscribe();
//! state.wait_for(|s| s.available).await.unwrap();
//! for tool in &state.borrow().tools {
//!     println!("{}", toolhost_core::registry::Tool::spec(tool.as_ref()).name);
//! }
//! # }
//! ```

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use rmcp::model::{
    ClientCapabilities, ClientConfig, Implementation, PaginatedRequestParams, ProtocolVersion,
    SubscriptionFilter,
};
use rmcp::service::{ClientLifecycleMode, ClientServiceExt, NotificationContext, RunningService};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::{ClientHandler, Peer, RoleClient};
use tokio::sync::{Notify, watch};
use tokio_util::sync::CancellationToken;

use super::config::{McpServerConfig, McpTransport};
use super::naming::{NameTable, bridged_name};
use toolhost_core::error::{Error, ErrorCode, Result};

const BACKOFF_MIN: Duration = Duration::from_millis(200);
const BACKOFF_MAX: Duration = Duration::from_secs(30);

/// One connected server's state, as published by [`McpConnection`].
#[derive(Debug, Clone, Default)]
pub struct McpState {
    /// The server is connected and its tool list is usable.
    pub available: bool,
    /// Its tools (empty while unavailable), in the server's order.
    pub tools: Vec<Arc<McpTool>>,
    /// Why the server is unavailable, or why its last listing failed.
    pub error: Option<String>,
    /// Its prompts, resources and resource templates (empty while
    /// unavailable, or when it offers none).
    pub catalog: RemoteCatalog,
    /// Bumped on every change.
    pub generation: u64,
}

use super::remote_catalog::RemoteCatalog;
pub use super::tool::McpTool;
use super::tool::PeerSlot;

/// Hears `notifications/tools/list_changed`: any number of them while a
/// listing runs make one more listing, not one each (a server flooding
/// them costs a listing per round trip at most).
struct Events {
    list_changed: Arc<Notify>,
}

impl ClientHandler for Events {
    async fn on_tool_list_changed(&self, _context: NotificationContext<RoleClient>) {
        self.list_changed.notify_one();
    }

    async fn on_prompt_list_changed(&self, _context: NotificationContext<RoleClient>) {
        self.list_changed.notify_one();
    }

    async fn on_resource_list_changed(&self, _context: NotificationContext<RoleClient>) {
        self.list_changed.notify_one();
    }

    fn get_info(&self) -> ClientConfig {
        ClientConfig::new(
            ClientCapabilities::default(),
            Implementation::new("toolhost", env!("CARGO_PKG_VERSION")),
        )
    }
}

/// Keeps one MCP server connected. Dropping it disconnects.
#[derive(Debug)]
pub struct McpConnection {
    name: String,
    state: watch::Receiver<McpState>,
    shutdown: CancellationToken,
}

impl McpConnection {
    /// Starts connecting to `config`'s server in the background (on the
    /// current tokio runtime) and keeps it connected. A disabled or invalid
    /// entry never connects: its state says why.
    ///
    /// # Panics
    ///
    /// Outside a tokio runtime (as `tokio::spawn`); [`McpBridge::start`](super::McpBridge::start)
    /// checks for one and returns an error instead.
    pub fn start(config: McpServerConfig) -> McpConnection {
        let (state_tx, state) = watch::channel(McpState::default());
        let shutdown = CancellationToken::new();
        let name = config.name.clone();
        tokio::spawn(supervise(config, state_tx, shutdown.clone()));
        McpConnection {
            name,
            state,
            shutdown,
        }
    }

    /// The server's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// A receiver of the server's state, for the registry to sync from.
    pub fn subscribe(&self) -> watch::Receiver<McpState> {
        self.state.clone()
    }

    /// Whether the server is available now.
    pub fn is_available(&self) -> bool {
        self.state.borrow().available
    }

    /// Its tools now (empty while unavailable).
    pub fn tools(&self) -> Vec<Arc<McpTool>> {
        self.state.borrow().tools.clone()
    }

    /// Disconnects; the state becomes unavailable.
    pub fn shutdown(&self) {
        self.shutdown.cancel();
    }
}

impl Drop for McpConnection {
    fn drop(&mut self) {
        self.shutdown.cancel();
    }
}

type Running = RunningService<RoleClient, Events>;

/// How the bridge opens a connection: MCP 2026-07-28 (`server/discover`,
/// no session) with a server that offers it, the `initialize` handshake of
/// the revision it offers otherwise (rmcp falls back when the server
/// answers `server/discover` as a method it does not know).
fn lifecycle() -> ClientLifecycleMode {
    ClientLifecycleMode::Auto {
        preferred_versions: vec![ProtocolVersion::V_2026_07_28],
        legacy_version: None,
    }
}

/// Whether `peer` negotiated MCP 2026-07-28 or later.
pub(crate) fn is_stateless_era(peer: &Peer<RoleClient>) -> bool {
    peer.peer_info()
        .is_some_and(|info| info.protocol_version.as_str() >= ProtocolVersion::V_2026_07_28.as_str())
}

/// Hears a 2026-07-28 server's list changes: that revision sends them only
/// on a `subscriptions/listen` stream, not to the session (there is none).
/// Each change wakes `list_changed`, as the earlier revisions'
/// notifications do through [`Events`]. Ends when the stream does; the
/// supervisor reconnects a server whose transport closed.
async fn listen_for_changes(name: String, peer: Peer<RoleClient>, list_changed: Arc<Notify>) {
    let filter = SubscriptionFilter::builder()
        .tools_list_changed()
        .prompts_list_changed()
        .resources_list_changed()
        .build();
    let mut subscription = match peer.listen(filter).await {
        Ok(subscription) => subscription,
        Err(e) => {
            tracing::debug!(server = %name, "subscriptions/listen refused: {e}; its lists are relisted on reconnect only");
            return;
        }
    };
    while let Ok(Some(_change)) = subscription.next().await {
        list_changed.notify_one();
    }
}

/// Installs the workspace's TLS crypto provider (ring) unless one is.
/// reqwest clients (rmcp's transport, the OAuth flows) are built without a
/// provider of their own and panic when none is installed: a library user
/// bridging an HTTP server before anything else made a TLS client would
/// meet that.
pub(crate) fn ensure_crypto_provider() {
    let _ = rustls::crypto::ring::default_provider().install_default();
}

async fn connect(config: &McpServerConfig, events: Events) -> Result<Running> {
    let failed = |what: String| {
        Error::new(
            ErrorCode::Unavailable,
            format!("MCP server {:?}: {what}", config.name),
        )
    };
    let start = async {
        match &config.transport {
            McpTransport::Stdio {
                command,
                args,
                env,
                cwd,
            } => {
                let mut cmd = tokio::process::Command::new(command);
                cmd.args(args).envs(env);
                if let Some(cwd) = cwd {
                    cmd.current_dir(cwd);
                }
                let transport = crate::child::ChildStdio::spawn(&config.name, cmd)
                    .map_err(|e| failed(format!("cannot start {command:?}: {e}")))?;
                open(events, transport).await.map_err(failed)
            }
            McpTransport::Http { url, headers, oauth } => {
                let mut http_config = StreamableHttpClientTransportConfig::with_uri(url.as_str());
                let mut custom = HashMap::new();
                for (k, v) in headers {
                    if k.eq_ignore_ascii_case("authorization")
                        && let Some(token) = v.strip_prefix("Bearer ")
                    {
                        http_config = http_config.auth_header(token);
                        continue;
                    }
                    let name = http::HeaderName::try_from(k.as_str())
                        .map_err(|e| failed(format!("header {k:?}: {e}")))?;
                    let value = http::HeaderValue::try_from(v.as_str())
                        .map_err(|e| failed(format!("header {k:?}: {e}")))?;
                    custom.insert(name, value);
                }
                ensure_crypto_provider();
                let http_config = http_config.custom_headers(custom);
                if oauth.is_some() {
                    // Tokens from the sign-in (or the client's own
                    // credentials), refreshed as they expire.
                    let client = crate::oauth::authorized_client(config).await?;
                    let transport = StreamableHttpClientTransport::with_client(client, http_config);
                    return open(events, transport).await.map_err(failed);
                }
                let transport = StreamableHttpClientTransport::from_config(http_config);
                open(events, transport).await.map_err(failed)
            }
        }
    };
    tokio::time::timeout(config.timeout(), start)
        .await
        .map_err(|_| failed(format!("no answer to initialize within {} ms", config.timeout_ms)))?
}

/// Opens the MCP connection over `transport`, as [`lifecycle`] says; its
/// failure, said.
async fn open<T, E, A>(events: Events, transport: T) -> std::result::Result<Running, String>
where
    T: rmcp::transport::IntoTransport<RoleClient, E, A>,
    E: std::error::Error + Send + Sync + 'static,
{
    events
        .serve_with_lifecycle(transport, lifecycle())
        .await
        .map_err(|e| e.to_string())
}

/// `error`, saying to sign in again when the server refused the bridge's
/// OAuth tokens since `since` (see [`oauth`](crate::oauth)).
fn explained(config: &McpServerConfig, since: std::time::SystemTime, error: String) -> String {
    let refused = config
        .token_file()
        .and_then(|file| crate::oauth::refused(&config.name, &file, since));
    match refused {
        Some(why) => format!("{error}; {why}"),
        None => error,
    }
}

async fn list(
    config: &McpServerConfig,
    peer: &Peer<RoleClient>,
    slot: &PeerSlot,
) -> Result<Vec<Arc<McpTool>>> {
    let remote = tokio::time::timeout(config.timeout(), list_pages(peer))
        .await
        .map_err(|_| {
            Error::new(
                ErrorCode::Timeout,
                format!("MCP server {:?}: tools/list timed out", config.name),
            )
        })?
        .map_err(|e| {
            Error::new(
                ErrorCode::Unavailable,
                format!("MCP server {:?}: tools/list failed: {e}", config.name),
            )
        })?;
    let mut names = NameTable::new(&config.name);
    let mut tools = Vec::new();
    for tool in remote.into_iter().filter(|t| config.keeps_tool(&t.name)) {
        let name = bridged_name(&config.name, config.prefix.as_deref(), &tool.name);
        names.insert(&name, &tool.name)?;
        tools.push(Arc::new(McpTool::from_remote(config, name, tool, slot.clone())));
    }
    Ok(tools)
}

/// The most tools one bridged server may list, and the most bytes their
/// definitions may take as JSON: past either, its listing fails, so that a
/// server that pages on without end, or defines tools without end, cannot
/// take the host's memory (each message is already held to 16 MiB by
/// rmcp's transports).
pub const MAX_LISTED_TOOLS: usize = 4096;
/// See [`MAX_LISTED_TOOLS`].
pub const MAX_LISTED_BYTES: usize = 16 << 20;

/// Every page of the server's `tools/list`, within [`MAX_LISTED_TOOLS`] and
/// [`MAX_LISTED_BYTES`] (rmcp's `list_all_tools` follows cursors without a
/// bound). Empty pages count as tools, so that paging itself is bounded.
async fn list_pages(peer: &Peer<RoleClient>) -> std::result::Result<Vec<rmcp::model::Tool>, String> {
    super::remote_catalog::paginate("tools", |cursor| async move {
        let page = peer
            .list_tools(Some(PaginatedRequestParams::default().with_cursor(cursor)))
            .await?;
        Ok((page.tools, page.next_cursor))
    })
    .await
}

/// How many bytes `value` takes as JSON, counted without writing it out.
pub(crate) fn json_len(value: &impl serde::Serialize) -> usize {
    struct Count(usize);
    impl std::io::Write for Count {
        fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
            self.0 += bytes.len();
            Ok(bytes.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut count = Count(0);
    // Writing to a counter fails only if serializing does; such a value
    // counts as what was written before.
    let _ = serde_json::to_writer(&mut count, value);
    count.0
}

fn publish(
    state: &watch::Sender<McpState>,
    available: bool,
    tools: Vec<Arc<McpTool>>,
    error: Option<String>,
) {
    state.send_modify(|s| {
        s.available = available;
        s.tools = tools;
        s.catalog = RemoteCatalog::default();
        s.error = error;
        s.generation += 1;
    });
}

/// Publishes a server that is available with `tools` and `catalog`;
/// `error` says why its prompts and resources could not be listed, if so
/// (its tools are served all the same).
fn publish_listed(
    state: &watch::Sender<McpState>,
    tools: Vec<Arc<McpTool>>,
    catalog: RemoteCatalog,
    error: Option<String>,
) {
    state.send_modify(|s| {
        s.available = true;
        s.tools = tools;
        s.catalog = catalog;
        s.error = error;
        s.generation += 1;
    });
}

async fn supervise(config: McpServerConfig, state: watch::Sender<McpState>, shutdown: CancellationToken) {
    let refusal = match config.validate() {
        Err(e) => Some(e.to_string()),
        Ok(()) if !config.enabled => Some(format!(
            "MCP server {:?} is disabled (enabled = false)",
            config.name
        )),
        Ok(()) => None,
    };
    if let Some(why) = refusal {
        publish(&state, false, Vec::new(), Some(why));
        return;
    }
    let (peer_tx, peer_slot) = watch::channel(None);
    let mut backoff = BACKOFF_MIN;
    while !shutdown.is_cancelled() {
        let list_changed = Arc::new(Notify::new());
        let events = Events {
            list_changed: Arc::clone(&list_changed),
        };
        let since = std::time::SystemTime::now();
        let connected = tokio::select! {
            r = connect(&config, events) => r,
            () = shutdown.cancelled() => break,
        };
        match connected {
            Err(e) => {
                let e = explained(&config, since, e.to_string());
                tracing::warn!(server = %config.name, "{e}");
                publish(&state, false, Vec::new(), Some(e));
            }
            Ok(running) => {
                let peer = running.peer().clone();
                let ct = running.cancellation_token();
                let mut done = tokio::spawn(running.waiting());
                let listening = is_stateless_era(&peer).then(|| {
                    tokio::spawn(listen_for_changes(
                        config.name.clone(),
                        peer.clone(),
                        Arc::clone(&list_changed),
                    ))
                });
                peer_tx.send_replace(Some(peer.clone()));
                let mut refresh = true;
                loop {
                    if std::mem::take(&mut refresh) {
                        match list(&config, &peer, &peer_slot).await {
                            Ok(tools) => {
                                backoff = BACKOFF_MIN;
                                let listed = super::remote_catalog::list(&config, &peer, &peer_slot).await;
                                let (catalog, error) = match listed {
                                    Ok(catalog) => (catalog, None),
                                    Err(e) => {
                                        tracing::warn!(server = %config.name, "{e}; its tools are served without them");
                                        (RemoteCatalog::default(), Some(e.to_string()))
                                    }
                                };
                                publish_listed(&state, tools, catalog, error);
                            }
                            Err(e) => {
                                let e = explained(&config, since, e.to_string());
                                tracing::warn!(server = %config.name, "{e}");
                                publish(&state, false, Vec::new(), Some(e));
                            }
                        }
                    }
                    tokio::select! {
                        _ = &mut done => break,
                        () = list_changed.notified() => refresh = true,
                        // A lazy server's catalog is kept `catalog_ttl_s`
                        // since its last listing, for servers that change
                        // their tools without saying so.
                        () = tokio::time::sleep(config.catalog_ttl()), if config.lazy => refresh = true,
                        () = shutdown.cancelled() => {
                            ct.cancel();
                            let _ = done.await;
                            break;
                        }
                    }
                }
                if let Some(listening) = listening {
                    listening.abort();
                }
                peer_tx.send_replace(None);
                let why = explained(
                    &config,
                    since,
                    format!("MCP server {:?} disconnected", config.name),
                );
                tracing::warn!(server = %config.name, "{why}; reconnecting");
                publish(&state, false, Vec::new(), Some(why));
            }
        }
        tokio::select! {
            () = tokio::time::sleep(backoff) => {}
            () = shutdown.cancelled() => break,
        }
        backoff = (backoff * 2).min(BACKOFF_MAX);
    }
    peer_tx.send_replace(None);
    publish(&state, false, Vec::new(), Some("shut down".into()));
}
