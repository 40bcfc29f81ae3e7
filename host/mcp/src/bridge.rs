//! # MCP servers in the registry
//!
//! [`McpBridge`] connects every `[[mcp.servers]]` entry (through
//! [`McpConnection`]) and keeps a [`Dispatcher`]'s registry in step with
//! each server: its tools are registered trusted-only as
//! `Mcp { server }` sources in toolset `mcp-SERVER`, replaced whenever the
//! server's list changes, and kept behind an availability check while the
//! server is down, so that they leave the definitions (and a call says the
//! server is unavailable) until it is back. Every change bumps the
//! dispatcher's generation, which the MCP server turns into
//! `notifications/tools/list_changed`.
//!
//! A bridged name that another tool already has (a built-in, a plugin's
//! tool, another server's) is never replaced and never dropped silently: the
//! tool is left out, with an error in the log and in [`McpServerStatus::refused`].
//!
//! A lazy server (`lazy = true`, see [`lazy`]) is registered
//! as its two tools, `list_tools` and `call_tool`, behind the same check,
//! and its listings go to the catalog they read instead: a new catalog
//! registers nothing, so toolhost's clients hear of a lazy server only
//! when it comes, goes, or changes its prompts or resources.
//!
//! [`Dispatcher::connect_mcp`] starts a bridge and attaches it to the
//! dispatcher, which then owns it: dropping the last handle to the
//! dispatcher disconnects every server.

use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use serde::Serialize;
use serde_json::Value;
use tokio::sync::watch;
use tokio::task::JoinHandle;

use super::client::{McpConnection, McpState, McpTool};
use super::config::{McpConfig, McpServerConfig};
use super::lazy::{self, ToolCatalog};
use super::remote_catalog::RemoteCatalog;
use toolhost_core::dispatch::{Dispatcher, WeakDispatcher};
use toolhost_core::error::{Error, ErrorCode, Result};
use toolhost_core::limits::{MetadataLimits, ToolClaim};
use toolhost_core::registry::{
    BoxFuture, Catalog, Check, Prompt, Registration, Registry, Resources, Tool, ToolSource, ToolSpec,
};

/// What a bridged server looks like now, for operators (`toolhost tools
/// --mcp-status`) and for embedding applications.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct McpServerStatus {
    /// Its `[[mcp.servers]]` name.
    pub name: String,
    /// Whether it is connected and its tools are listed.
    pub available: bool,
    /// The registered names of its tools (also while it is down: they are
    /// hidden then, not removed).
    pub tools: Vec<String>,
    /// Why it is unavailable, or why its last listing failed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// Its tools that could not be registered (or, for a lazy server, be
    /// put in its catalog), each with the reason (a name another tool has
    /// already, an invalid schema).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub refused: Vec<String>,
    /// Whether it is bridged lazily: `tools` are its `list_tools` and
    /// `call_tool`, and `catalog` holds its tools (see [`lazy`]).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub lazy: bool,
    /// A lazy server's catalog: the names on the server of the tools its
    /// `call_tool` may call.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub catalog: Vec<String>,
}

/// The connections to the configured MCP servers and the tasks that keep
/// the registry in step with them. See the module documentation.
#[derive(Debug)]
pub struct McpBridge {
    servers: Vec<Bridged>,
}

#[derive(Debug)]
struct Bridged {
    connection: McpConnection,
    lazy: bool,
    synced: watch::Receiver<Synced>,
    task: JoinHandle<()>,
}

/// What the sync task last did for one server.
#[derive(Debug, Clone, Default)]
pub(crate) struct Synced {
    /// The [`McpState::generation`] it last applied (0: none yet).
    generation: u64,
    tools: Vec<String>,
    refused: Vec<String>,
    /// A lazy server's catalog (remote names).
    catalog: Vec<String>,
}

impl McpBridge {
    /// Starts connecting to every server of `config` and syncing its tools
    /// into `dispatcher`'s registry (on the current tokio runtime).
    ///
    /// # Errors
    ///
    /// `config` when an entry is invalid or two entries share a name;
    /// `internal` when called outside a tokio runtime.
    pub fn start(config: &McpConfig, dispatcher: &Dispatcher) -> Result<McpBridge> {
        config.validate()?;
        if tokio::runtime::Handle::try_current().is_err() {
            return Err(toolhost_core::error::Error::new(
                toolhost_core::error::ErrorCode::Internal,
                "MCP servers can only be connected from within a tokio runtime",
            ));
        }
        let servers = config
            .servers
            .iter()
            .map(|server| {
                let connection = McpConnection::start(server.clone());
                let (synced_tx, synced) = watch::channel(Synced::default());
                let task = tokio::spawn(sync_loop(
                    server.clone(),
                    connection.subscribe(),
                    dispatcher.downgrade(),
                    synced_tx,
                ));
                Bridged {
                    connection,
                    lazy: server.lazy,
                    synced,
                    task,
                }
            })
            .collect();
        Ok(McpBridge { servers })
    }

    /// Each server's state now, in config order.
    pub fn status(&self) -> Vec<McpServerStatus> {
        self.servers
            .iter()
            .map(|s| {
                let state = s.connection.subscribe().borrow().clone();
                let synced = s.synced.borrow().clone();
                McpServerStatus {
                    name: s.connection.name().to_string(),
                    available: state.available,
                    tools: synced.tools,
                    error: state.error,
                    refused: synced.refused,
                    lazy: s.lazy,
                    catalog: synced.catalog,
                }
            })
            .collect()
    }

    /// Waits until every server has had its first outcome (connected and
    /// listed, or failed, or disabled) applied to the registry, or `within`
    /// has passed. Returns whether all had.
    pub async fn settled(&self, within: Duration) -> bool {
        settled(self.receivers().collect(), within).await
    }

    fn receivers(&self) -> impl Iterator<Item = watch::Receiver<Synced>> + '_ {
        self.servers.iter().map(|s| s.synced.clone())
    }
}

impl Drop for McpBridge {
    fn drop(&mut self) {
        for server in &self.servers {
            server.connection.shutdown();
            server.task.abort();
        }
    }
}

/// Applies each new state of server `config` to the registry until the
/// connection or the dispatcher is gone: an eager server's tools, or a lazy
/// server's two tools and its catalog.
async fn sync_loop(
    config: McpServerConfig,
    mut state: watch::Receiver<McpState>,
    dispatcher: WeakDispatcher,
    synced: watch::Sender<Synced>,
) {
    let name = config.name.clone();
    let connected = {
        let state = state.clone();
        Check::fallible(format!("MCP server {name:?} connected"), move || {
            Ok(state.borrow().available)
        })
    };
    let mut lazy = config.lazy.then(|| Lazy::new(&config));
    let mut last: Vec<Arc<McpTool>> = Vec::new();
    loop {
        let mut now = state.borrow_and_update().clone();
        if now.generation > 0 {
            let Some(dispatcher) = dispatcher.upgrade() else {
                return;
            };
            if now.available {
                last = std::mem::take(&mut now.tools);
            }
            // Unlike tools, which stay registered but hidden while the
            // server is down, prompts and resources leave with it (the
            // catalog is empty then).
            let done = match &mut lazy {
                Some(lazy) => lazy.sync(&config, &dispatcher, &now, &last, &connected),
                None => {
                    let tools: Vec<Arc<dyn Tool>> =
                        last.iter().map(|t| Arc::clone(t) as Arc<dyn Tool>).collect();
                    let (tools, refused) = register(&dispatcher, &name, &tools, &connected, &now.catalog);
                    Synced {
                        tools,
                        refused,
                        ..Synced::default()
                    }
                }
            };
            synced.send_replace(Synced {
                generation: now.generation,
                ..done
            });
        }
        if state.changed().await.is_err() {
            return;
        }
    }
}

/// A lazy server's side of the sync: its two tools and its prompts and
/// resources, registered again only when the server's availability or its
/// prompts and resources change, and the catalog the two tools read.
struct Lazy {
    tools: [Arc<dyn Tool>; 2],
    catalog: watch::Sender<ToolCatalog>,
    /// What was registered last, if anything.
    registered: Option<Registered>,
    /// The tools left out of the catalog, with the reasons.
    left_out: Vec<String>,
}

/// One registration of a lazy server.
struct Registered {
    /// Whether the server was available.
    available: bool,
    /// Its prompts and resources then.
    offered: RemoteCatalog,
    /// The names registered and the refusals.
    names: Vec<String>,
    refused: Vec<String>,
}

impl Lazy {
    fn new(config: &McpServerConfig) -> Lazy {
        let (catalog, reader) = watch::channel(ToolCatalog::pending(&config.name));
        Lazy {
            tools: lazy::tools(config, reader),
            catalog,
            registered: None,
            left_out: Vec::new(),
        }
    }

    /// Applies state `now` of the server, whose last listed tools are
    /// `last` (kept while it is down).
    fn sync(
        &mut self,
        config: &McpServerConfig,
        dispatcher: &Dispatcher,
        now: &McpState,
        last: &[Arc<McpTool>],
        connected: &Check,
    ) -> Synced {
        // A new tool catalog is no news to toolhost's clients, who see the
        // same two tools: only the server's availability (which hides or
        // shows them) and its prompts and resources are registered.
        let registered = match self.registered.take() {
            Some(same) if same.available == now.available && same.offered.same_offer(&now.catalog) => same,
            _ => {
                let (names, refused) =
                    register(dispatcher, &config.name, &self.tools, connected, &now.catalog);
                Registered {
                    available: now.available,
                    offered: now.catalog.clone(),
                    names,
                    refused,
                }
            }
        };
        let catalog = if now.available {
            let (catalog, left_out) = ToolCatalog::listed(config, last, &dispatcher.registry());
            self.left_out = left_out;
            catalog
        } else {
            let why = now
                .error
                .clone()
                .unwrap_or_else(|| format!("MCP server {:?} is not connected", config.name));
            self.catalog
                .borrow()
                .down(Error::new(ErrorCode::Unavailable, why))
        };
        let synced = Synced {
            tools: registered.names.clone(),
            refused: registered.refused.iter().chain(&self.left_out).cloned().collect(),
            catalog: catalog.names(),
            ..Synced::default()
        };
        self.catalog.send_replace(catalog);
        self.registered = Some(registered);
        synced
    }
}

/// Checks what `specs` claim (names, descriptions, schemas) for server
/// `server` against `limits` (see `MetadataLimits`), in one pass.
///
/// # Errors
///
/// The first limit exceeded, as a message.
pub(crate) fn check_claims(
    server: &str,
    specs: &[&ToolSpec],
    limits: MetadataLimits,
) -> std::result::Result<(), String> {
    let schemas: Vec<(String, Option<String>)> = specs
        .iter()
        .map(|spec| {
            (
                spec.parameters.to_string(),
                spec.output_schema.as_ref().map(Value::to_string),
            )
        })
        .collect();
    limits.check(
        &format!("MCP server {server:?}"),
        specs
            .iter()
            .zip(&schemas)
            .map(|(spec, (parameters, output))| ToolClaim {
                name: spec.name.as_str(),
                description: spec.description.as_str(),
                parameters,
                output_schema: output.as_deref(),
            }),
    )
}

/// Replaces server `name`'s tools in the registry with `tools`, each behind
/// `connected`, and its prompts and resources with `catalog`'s. Returns the
/// names registered and the refusals.
fn register(
    dispatcher: &Dispatcher,
    name: &str,
    tools: &[Arc<dyn Tool>],
    connected: &Check,
    catalog: &RemoteCatalog,
) -> (Vec<String>, Vec<String>) {
    // What a server may claim is capped like a component's (see
    // `MetadataLimits`): past a limit, none of its tools is served.
    let specs: Vec<&ToolSpec> = tools.iter().map(|t| t.spec()).collect();
    if let Err(why) = check_claims(name, &specs, MetadataLimits::default()) {
        let why = format!("{why}; `lazy = true` bridges it as two tools, its catalog read on demand");
        tracing::error!(server = %name, "the MCP server's tools were not registered: {why}");
        let _ = dispatcher.update_registry(|registry| Ok(registry.unregister_mcp_server(name)));
        return (Vec::new(), vec![why]);
    }
    let outcome = dispatcher.update_registry(|registry| {
        registry.unregister_mcp_server(name);
        let mut registered = Vec::new();
        let mut refused = Vec::new();
        for tool in tools {
            let tool_name = tool.spec().name.clone();
            let registration = Registration::from_arc(Arc::clone(tool)).check(connected.clone());
            match registry.register_mcp(registration, name) {
                Ok(()) => registered.push(tool_name),
                Err(e) => {
                    tracing::error!(server = %name, tool = %tool_name, "an MCP tool was not registered: {e}");
                    refused.push(format!("{tool_name}: {}", e.message()));
                }
            }
        }
        refused.extend(register_catalog(registry, name, catalog));
        Ok((registered, refused))
    });
    // The closure never fails; a registry that could not be changed keeps
    // what it had.
    outcome.unwrap_or_default()
}

/// Registers server `name`'s prompts, resources and templates one by one,
/// as its tools are: one that another source has already is left out.
/// Returns the refusals.
fn register_catalog(registry: &mut Registry, name: &str, catalog: &RemoteCatalog) -> Vec<String> {
    let source = || ToolSource::Mcp {
        server: name.to_string(),
    };
    let mut items: Vec<(String, Catalog)> = catalog
        .prompts
        .iter()
        .map(|p| {
            let key = format!("prompt {}", p.spec().name);
            (key, Catalog::new().prompt_arc(Arc::clone(p) as Arc<dyn Prompt>))
        })
        .collect();
    if let Some(reader) = &catalog.reader {
        let reader = || Arc::clone(reader) as Arc<dyn Resources>;
        items.extend(catalog.resources.iter().map(|r| {
            let one = Catalog::new().resources(reader(), vec![r.clone()], Vec::new());
            (format!("resource {}", r.uri), one)
        }));
        items.extend(catalog.templates.iter().map(|t| {
            let one = Catalog::new().resources(reader(), Vec::new(), vec![t.clone()]);
            (format!("resource template {}", t.uri_template), one)
        }));
    }
    let mut refused = Vec::new();
    for (key, one) in items {
        if let Err(e) = registry.register_catalog(source(), one) {
            tracing::error!(server = %name, "an MCP {key} was not registered: {e}");
            refused.push(format!("{key}: {}", e.message()));
        }
    }
    refused
}

/// The bridges attached to a dispatcher (its extension; see
/// [`McpDispatcher::connect_mcp`]), dropped with it.
#[derive(Debug, Default)]
pub struct Attached(Mutex<Vec<McpBridge>>);

impl Attached {
    pub(crate) fn push(&self, bridge: McpBridge) {
        self.0.lock().unwrap_or_else(PoisonError::into_inner).push(bridge);
    }

    pub(crate) fn status(&self) -> Vec<McpServerStatus> {
        let bridges = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        bridges.iter().flat_map(McpBridge::status).collect()
    }

    /// The receivers [`McpBridge::settled`] waits on, taken out of the lock.
    pub(crate) fn pending(&self) -> Vec<watch::Receiver<Synced>> {
        let bridges = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        bridges.iter().flat_map(McpBridge::receivers).collect()
    }
}

/// Waits until every receiver of `pending` has applied a first outcome, or
/// `within` has passed. Returns whether all had.
pub(crate) async fn settled(pending: Vec<watch::Receiver<Synced>>, within: Duration) -> bool {
    let all = async {
        for mut synced in pending {
            // An error means that server's bridge is gone: nothing to wait for.
            let _ = synced.wait_for(|s| s.generation > 0).await;
        }
    };
    tokio::time::timeout(within, all).await.is_ok()
}

/// MCP servers bridged into a [`Dispatcher`]'s registry, as methods of the
/// dispatcher. The connections are kept in the dispatcher's extension slot
/// ([`Dispatcher::extension`]) and dropped (disconnecting their servers)
/// with it; the dispatcher itself knows no MCP type.
pub trait McpDispatcher {
    /// Connects the MCP servers of `config` and keeps their tools in this
    /// dispatcher's registry (see the module documentation).
    ///
    /// # Errors
    ///
    /// `config` when an entry is invalid or two share a name.
    fn connect_mcp(&self, config: &McpConfig) -> Result<()>;

    /// The state of every MCP server connected with
    /// [`McpDispatcher::connect_mcp`].
    fn mcp_status(&self) -> Vec<McpServerStatus>;

    /// Waits until every connected MCP server has had its first outcome
    /// (listed, failed, or disabled) applied to the registry, or `within`
    /// has passed; returns whether all had. For one-shot callers (a CLI
    /// command) that should see the servers' tools.
    fn mcp_settled(&self, within: Duration) -> BoxFuture<'_, bool>;
}

impl McpDispatcher for Dispatcher {
    fn connect_mcp(&self, config: &McpConfig) -> Result<()> {
        if config.servers.is_empty() {
            return Ok(());
        }
        let bridge = McpBridge::start(config, self)?;
        self.extension::<Attached>().push(bridge);
        Ok(())
    }

    fn mcp_status(&self) -> Vec<McpServerStatus> {
        self.extension::<Attached>().status()
    }

    fn mcp_settled(&self, within: Duration) -> BoxFuture<'_, bool> {
        let pending = self.extension::<Attached>().pending();
        Box::pin(settled(pending, within))
    }
}
