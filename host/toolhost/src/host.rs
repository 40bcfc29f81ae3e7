//! # A host, for an application that embeds toolhost
//!
//! [`Host`] is what an application holds: the registry of tools (its own,
//! the plugins', bridged MCP servers'), the sandbox engine, the approval
//! gate and the plugins that can change while it runs. [`HostBuilder`]
//! makes one; [`Host::call`] runs a tool through the whole pipeline
//! (audience, toolsets, argument validation, approvals, limits, events);
//! [`Host::serve_stdio`] and [`Host::serve_http`] serve it to MCP clients.
//!
//! ```
//! # tokio::runtime::Runtime::new().unwrap().block_on(async {
//! use serde_json::json;
//! use toolhost::{Config, FnTool, Host, Session, ToolOutput, ToolSpec};
//!
//! # let dir = tempfile::tempdir().unwrap();
//! // The standard plugins that come with toolhost, with their default
//! // grants (storage in `.toolhost/` under the working directory)...
//! let mut config = Config::standard()?;
//! # config.base_dir = dir.path().to_path_buf();
//! let host = Host::builder()
//!     .config(config)
//!     // ... and a tool of the application's own.
//!     .tool(FnTool::new(
//!         ToolSpec::new("clock", "The current Unix time.", json!({"type": "object"})),
//!         |_, _| async { Ok(ToolOutput::json(&json!(1_700_000_000))) },
//!     ))
//!     .build()
//!     .await?;
//! let session = Session::trusted("agent-1");
//! let result = host
//!     .call("calculate_expression", json!({"expression": "6 * 7"}), &session)
//!     .await;
//! assert_eq!(result.json()["result"], "42", "{}", result.content);
//! assert_eq!(host.call("clock", json!({}), &session).await.content, "1700000000");
//! # Ok::<(), toolhost::Error>(())
//! # }).unwrap();
//! ```

use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;
use tokio::sync::broadcast;
use tokio_util::sync::CancellationToken;

use crate::admission::PluginRequest;
use crate::approval::ApprovalCallback;
use crate::component::LoadedComponent;
use crate::config::{Config, Shared, Started};
use crate::dispatch::{DispatchContext, Dispatcher, McpDispatcher, Session, ToolCallEvent, ToolResult};
use crate::engine::{Engine, EngineConfig};
use crate::error::{Error, ErrorCode, Result};
use crate::identity::ComponentHash;
use crate::live::LivePlugins;
use crate::mcp::{HttpOptions, McpApprover, McpServer, McpServerConfig, StateKey};
use crate::registry::{Registration, Registry, Tool, ToolAudience, ToolSpec};

/// How long calls in flight may run once serving is told to stop.
const GRACE: Duration = Duration::from_secs(5);

/// Builds a [`Host`]: see the [module docs](self).
#[derive(Default)]
#[must_use]
pub struct HostBuilder {
    config: Option<Config>,
    engine: EngineConfig,
    tools: Vec<(Registration, bool)>,
    approver: Option<Arc<dyn ApprovalCallback>>,
    ask_mcp_clients: bool,
    plugins: Vec<PluginRequest>,
    mcp_servers: Vec<McpServerConfig>,
}

impl std::fmt::Debug for HostBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HostBuilder")
            .field("tools", &self.tools.len())
            .field("plugins", &self.plugins.len())
            .field("mcp_servers", &self.mcp_servers.len())
            .finish_non_exhaustive()
    }
}

impl HostBuilder {
    /// What the host serves and how: its plugins, grants, toolsets, exec,
    /// approvals, MCP servers (default: [`Config::default`], nothing but the
    /// application's own tools; [`Config::standard`] for the standard
    /// plugins, [`Config::load`] for a `toolhost.toml`).
    pub fn config(mut self, config: Config) -> Self {
        self.config = Some(config);
        self
    }

    /// The sandbox engine's settings: the instance pool, memory and stack
    /// ceilings, the default limits of every call, the compile cache. Its
    /// `max_component_bytes` is the config's (`[admission]`), and so are
    /// the pool's bounds the config's `[pool]` sets.
    pub fn engine(mut self, engine: EngineConfig) -> Self {
        self.engine = engine;
        self
    }

    /// A tool of the application's, for trusted sessions only.
    pub fn tool(mut self, tool: impl Tool) -> Self {
        self.tools.push((Registration::new(tool), false));
        self
    }

    /// A tool of the application's, reviewed for public sessions too
    /// (every plugin's and MCP server's tools stay trusted-only).
    pub fn public_tool(mut self, tool: impl Tool) -> Self {
        self.tools.push((Registration::new(tool), true));
        self
    }

    /// A tool with its toolset, emoji or other registration details (see
    /// [`Registration`]); `public` as [`HostBuilder::public_tool`].
    pub fn registration(mut self, registration: Registration, public: bool) -> Self {
        self.tools.push((registration, public));
        self
    }

    /// Who answers when a call needs approval (a flagged command, a tool
    /// matching `require_approval`). Without one, and without
    /// [`HostBuilder::ask_mcp_clients`], such calls are denied.
    ///
    /// ```
    /// # tokio::runtime::Runtime::new().unwrap().block_on(async {
    /// use std::sync::Arc;
    /// use serde_json::json;
    /// use toolhost::{ApprovalCallback, ApprovalOutcome, ApprovalRequest, BoxFuture, Choice};
    /// use toolhost::{Config, FnTool, Host, Session, ToolOutput, ToolSpec};
    ///
    /// struct Yes;
    /// impl ApprovalCallback for Yes {
    ///     fn request<'a>(&'a self, _: &'a ApprovalRequest) -> BoxFuture<'a, ApprovalOutcome> {
    ///         Box::pin(async { ApprovalOutcome::Decided(Choice::Once) })
    ///     }
    /// }
    /// let deploy = || FnTool::new(
    ///     ToolSpec::new("deploy", "Deploys.", json!({"type": "object"})),
    ///     |_, _| async { Ok(ToolOutput::json(&json!("deployed"))) },
    /// );
    /// let config = Config::from_toml(r#"require_approval = ["deploy"]"#)?;
    /// let session = Session::trusted("ops");
    /// // Without an approver, the call is refused; with one, it runs.
    /// let host = Host::builder().config(config.clone()).tool(deploy()).build().await?;
    /// assert!(host.call("deploy", json!({}), &session).await.is_error());
    /// let host = Host::builder().config(config).tool(deploy()).approver(Arc::new(Yes)).build().await?;
    /// assert_eq!(host.call("deploy", json!({}), &session).await.content, r#""deployed""#);
    /// # Ok::<(), toolhost::Error>(())
    /// # }).unwrap();
    /// ```
    pub fn approver(mut self, approver: Arc<dyn ApprovalCallback>) -> Self {
        self.approver = Some(approver);
        self
    }

    /// When serving MCP, ask the client of a session for approvals (by
    /// elicitation) when it can answer; the [`HostBuilder::approver`], if
    /// any, answers for the others.
    pub fn ask_mcp_clients(mut self, ask: bool) -> Self {
        self.ask_mcp_clients = ask;
        self
    }

    /// A plugin to admit at build (see [`crate::admission`]); the build
    /// fails if it is refused.
    pub fn plugin(mut self, request: PluginRequest) -> Self {
        self.plugins.push(request);
        self
    }

    /// An MCP server whose tools are bridged in, as `[[mcp.servers]]`.
    pub fn mcp_server(mut self, server: McpServerConfig) -> Self {
        self.mcp_servers.push(server);
        self
    }

    /// Builds the host: the engine, the registry with the application's
    /// tools, the config's built-ins and plugins (each admitted on its own: a
    /// refused `[[plugins]]` entry is left out and reported in
    /// [`Host::status`]), the plugins given by [`HostBuilder::plugin`], and
    /// the MCP bridge (servers connect in the background).
    ///
    /// # Errors
    ///
    /// `duplicate_tool` for two tools of one name; the config's errors (see
    /// [`Config::start`]; `config` for an unreadable or short
    /// `[mcp] state_key_file`); a refusal of a [`HostBuilder::plugin`].
    pub async fn build(self) -> Result<Host> {
        let mut config = self.config.unwrap_or_default();
        config.mcp.servers.extend(self.mcp_servers);
        let state_key = StateKey::configured(config.mcp_config().state_key_file.as_deref())
            .map_err(|e| Error::new(ErrorCode::Config, e.to_string()))?;
        let engine = Engine::new(config.pool.engine(EngineConfig {
            max_component_bytes: config.admission.max_component_bytes,
            ..self.engine
        })?)?;
        let mut registry = Registry::new();
        for (registration, public) in self.tools {
            if public {
                registry.register_public(registration)?;
            } else {
                registry.register(registration)?;
            }
        }
        let elicit = self
            .ask_mcp_clients
            .then(|| McpApprover::new(self.approver.clone()));
        let approver = match &elicit {
            Some(elicit) => Some(Arc::clone(elicit) as Arc<dyn ApprovalCallback>),
            None => self.approver,
        };
        let shared = Shared::open(&config)?;
        let started = config.start(&engine, registry, approver).await?;
        for request in self.plugins {
            started.live.load(request).await?;
        }
        Ok(Host {
            started,
            elicit,
            state_key,
            shared,
        })
    }
}

/// A running host: see the [module docs](self). Dropping it stops its
/// bridged MCP servers; calls in flight hold what they need and finish.
#[derive(Debug)]
pub struct Host {
    started: Started,
    elicit: Option<Arc<McpApprover>>,
    /// What seals MCP 2026-07-28 request states, when configured.
    state_key: Option<StateKey>,
    /// The store and tasks its MCP servers share with other replicas.
    shared: Shared,
}

impl Host {
    /// A builder.
    pub fn builder() -> HostBuilder {
        HostBuilder::default()
    }

    /// Calls `tool` with `arguments` for `session`, through the whole
    /// pipeline. Never fails as a call: a refusal, a trap or an exhausted
    /// limit is a [`ToolResult`] with its `error_code`.
    pub async fn call(&self, tool: &str, arguments: Value, session: &Arc<Session>) -> ToolResult {
        let ctx = DispatchContext::new(Arc::clone(session));
        self.started.dispatcher.dispatch(tool, arguments, &ctx).await
    }

    /// The tools `session` may see (its audience, the toolset selection,
    /// lazy mode).
    ///
    /// # Errors
    ///
    /// `config` when the toolset selection names an unknown toolset.
    pub fn tools(&self, session: &Session) -> Result<Vec<ToolSpec>> {
        self.started.dispatcher.tool_specs(session)
    }

    /// Admits a plugin while the host runs (see [`crate::admission`]); its
    /// tools are served from the next call on.
    ///
    /// ```
    /// # tokio::runtime::Runtime::new().unwrap().block_on(async {
    /// use serde_json::json;
    /// use toolhost::{Host, PluginRequest, Session};
    ///
    /// let host = Host::builder().build().await?;
    /// let session = Session::trusted("agent");
    /// // Any component's bytes (here the bundled calculator's).
    /// let calc = toolhost::standard::get("calc")?.bytes;
    /// let loaded = host.load(PluginRequest::bytes("calc", calc)).await?;
    /// let six = host.call("calculate_expression", json!({"expression": "2 * 3"}), &session).await;
    /// assert_eq!(six.json()["result"], "6");
    /// // Unloaded, its tools are gone.
    /// assert_eq!(host.unload(loaded.hash()).await?, ["calculate_expression"]);
    /// assert!(host.call("calculate_expression", json!({"expression": "1"}), &session).await.is_error());
    /// # Ok::<(), toolhost::Error>(())
    /// # }).unwrap();
    /// ```
    ///
    /// # Errors
    ///
    /// The step of admission that refused it.
    pub async fn load(&self, request: PluginRequest) -> Result<Arc<LoadedComponent>> {
        self.started.live.load(request).await
    }

    /// Stops serving the plugin `hash`; returns its tools' names. Calls in
    /// flight finish on it.
    ///
    /// # Errors
    ///
    /// `unknown_tool` when no plugin has that hash.
    pub async fn unload(&self, hash: ComponentHash) -> Result<Vec<String>> {
        self.started.live.unload(hash).await
    }

    /// Every call's event, from now on: tool, session, outcome, duration,
    /// fuel and memory used.
    ///
    /// ```
    /// # tokio::runtime::Runtime::new().unwrap().block_on(async {
    /// use serde_json::json;
    /// use toolhost::{CallOutcome, FnTool, Host, Session, ToolOutput, ToolSpec};
    ///
    /// let host = Host::builder()
    ///     .tool(FnTool::new(ToolSpec::new("ping", "Pong.", json!({"type": "object"})), |_, _| async {
    ///         Ok(ToolOutput::json(&json!("pong")))
    ///     }))
    ///     .build()
    ///     .await?;
    /// let mut events = host.subscribe();
    /// host.call("ping", json!({}), &Session::trusted("agent")).await;
    /// let event = events.recv().await.unwrap();
    /// assert_eq!((event.name.as_str(), event.outcome), ("ping", CallOutcome::Ok));
    /// # Ok::<(), toolhost::Error>(())
    /// # }).unwrap();
    /// ```
    pub fn subscribe(&self) -> broadcast::Receiver<ToolCallEvent> {
        self.started.dispatcher.subscribe()
    }

    /// Waits, at most `within`, until every bridged MCP server has
    /// connected and listed its tools (or failed); returns whether all had.
    pub async fn mcp_settled(&self, within: Duration) -> bool {
        self.started.dispatcher.mcp_settled(within).await
    }

    /// What the host serves, as JSON: each plugin loaded or why not (and
    /// the door it came in by), the plugins folder, reloads, exec, the MCP
    /// servers, warnings.
    pub fn status(&self) -> Value {
        self.started.status()
    }

    /// The plugins that can change while the host runs (reloads, a watched
    /// folder): see [`crate::live`].
    pub fn plugins(&self) -> &Arc<LivePlugins> {
        &self.started.live
    }

    /// The dispatcher beneath (batches, hooks' effects, the registry).
    pub fn dispatcher(&self) -> &Dispatcher {
        &self.started.dispatcher
    }

    /// Serves the host's tools to one MCP client on stdin and stdout, as
    /// `audience` may see them, until stdin closes or `shutdown` is
    /// cancelled (calls in flight then get 5 s to finish).
    ///
    /// # Errors
    ///
    /// When stdio cannot be served.
    pub async fn serve_stdio(self, audience: ToolAudience, shutdown: CancellationToken) -> Result<()> {
        let server = self.mcp_server(audience);
        crate::mcp::serve_stdio(server, shutdown, GRACE).await
    }

    /// Serves the host's tools over MCP's streamable HTTP on `listener`
    /// (at `options.path`, with its bearer token, origins and bounds), as
    /// `audience` may see them, until `shutdown` is cancelled. What the
    /// config turns on is served unless `options` sets it: `/metrics`
    /// (`[metrics]`), the audit log (`[audit]`), and the operator's
    /// console (`[console]`, without approvals: those are the
    /// application's callback's; for OAuth tokens holding only the
    /// console's scopes, build `options.auth` with
    /// [`JwtVerifier::recognizing`](crate::mcp::auth::JwtVerifier::recognizing)).
    ///
    /// ```
    /// # tokio::runtime::Runtime::new().unwrap().block_on(async {
    /// use tokio_util::sync::CancellationToken;
    /// use toolhost::{Host, HttpOptions, ToolAudience};
    ///
    /// let host = Host::builder().build().await?;
    /// let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    /// let options = HttpOptions { bearer_token: Some("s3cret".into()), ..HttpOptions::default() };
    /// let shutdown = CancellationToken::new();
    /// let serving = tokio::spawn(host.serve_http(listener, options, ToolAudience::Trusted, shutdown.clone()));
    /// // ... MCP clients call http://ADDR/mcp with `Authorization: Bearer s3cret` ...
    /// shutdown.cancel();
    /// serving.await.unwrap()?;
    /// # Ok::<(), toolhost::Error>(())
    /// # }).unwrap();
    /// ```
    ///
    /// # Errors
    ///
    /// `config` for a non-loopback listener without a bearer token; when
    /// the listener fails.
    pub async fn serve_http(
        self,
        listener: tokio::net::TcpListener,
        options: HttpOptions,
        audience: ToolAudience,
        shutdown: CancellationToken,
    ) -> Result<()> {
        let mut options = options;
        if options.metrics.is_none() {
            options.metrics = self.metrics_fn();
        }
        if options.audit.is_none() {
            options.audit = self.started.audit.clone();
        }
        if options.console.is_none() {
            options.console = self.console();
        }
        let server = self.mcp_server(audience);
        crate::mcp::serve_http(server, listener, options, shutdown, GRACE).await
    }

    /// The console of `[console] enabled`: the calls, the plugins, the
    /// audit log, its scopes. Approvals are the application's own
    /// callback's to ask, so none wait on it.
    fn console(&self) -> Option<Arc<crate::mcp::console::Console>> {
        let calls = self.started.calls.clone()?;
        let live = Arc::clone(&self.started.live);
        let mut console = crate::mcp::console::Console::new(Arc::clone(&calls))
            .with_plugins(crate::config::plugins_view(Arc::clone(&live), calls))
            .with_scopes(live.config().console.scopes());
        if let Some(audit) = &self.started.audit {
            console = console.with_audit(Arc::clone(audit));
        }
        Some(Arc::new(console))
    }

    /// `GET /metrics`'s text, when `[metrics]` is on.
    fn metrics_fn(&self) -> Option<crate::mcp::MetricsFn> {
        let metrics = self.started.metrics.clone()?;
        let live = Arc::clone(&self.started.live);
        let dispatcher = self.started.dispatcher.clone();
        Some(Arc::new(move || {
            crate::config::metrics_text(&metrics, &live, &dispatcher)
        }))
    }

    /// The host's metrics, when `[metrics] enabled` (to record or render
    /// beside its own).
    pub fn metrics(&self) -> Option<&Arc<crate::config::Metrics>> {
        self.started.metrics.as_ref()
    }

    /// The MCP server, made as `toolhost serve` makes it ([`Shared`]):
    /// `[store]`, `[tasks]`, and `[mcp] state_key_file` (or the
    /// environment's key, read when the host was built; without one, a
    /// random key of this process).
    fn mcp_server(self, audience: ToolAudience) -> McpServer {
        let key = self.state_key.unwrap_or_else(StateKey::random);
        let metrics = self.started.metrics.clone();
        let tracing = self
            .started
            .traces
            .as_ref()
            .map(|traces| traces.tracing().clone());
        self.shared.mcp_server(
            self.started.dispatcher,
            audience,
            key,
            self.elicit,
            metrics,
            tracing,
        )
    }
}
