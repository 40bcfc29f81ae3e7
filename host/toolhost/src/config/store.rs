//! `[store]` (where state shared by replicas lives) and `[tasks]` (how long
//! calls run as MCP tasks are kept and watched).
//!
//! ```toml
//! [store]
//! url = "redis://127.0.0.1:6379/0"  # none: the embedded store (one process)
//! prefix = "toolhost:"
//! timeout_ms = 2000
//!
//! [tasks]
//! ttl_secs = 3600
//! ```

use std::sync::Arc;
use std::time::Duration;

use serde::Deserialize;

use crate::error::{Error, ErrorCode, Result};
use toolhost_core::dispatch::Dispatcher;
use toolhost_core::metrics::Metrics;
use toolhost_core::registry::ToolAudience;
use toolhost_core::spans::Tracing;
use toolhost_mcp::{
    McpApprover, McpServer, MemoryStore, RedisOptions, RedisStore, RoundTrips, StateKey, StateSealer, Store,
    TaskOptions, Tasks,
};

/// The `[store]` section.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StoreConfig {
    /// `redis://HOST:PORT/DB` (or `rediss://`): a Redis or Valkey every
    /// replica reaches. None: the embedded store, this process only.
    #[serde(default)]
    pub url: Option<String>,
    /// Put before every key, so that one Redis serves several deployments.
    #[serde(default = "default_prefix")]
    pub prefix: String,
    /// The longest one store operation may take, connecting included.
    #[serde(default = "default_timeout_ms")]
    pub timeout_ms: u64,
}

fn default_prefix() -> String {
    "toolhost:".into()
}

fn default_timeout_ms() -> u64 {
    2000
}

impl Default for StoreConfig {
    fn default() -> Self {
        StoreConfig {
            url: None,
            prefix: default_prefix(),
            timeout_ms: default_timeout_ms(),
        }
    }
}

/// The `[tasks]` section.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TasksConfig {
    /// Serve the tasks extension at all.
    #[serde(default = "default_true")]
    pub enabled: bool,
    /// How long a task is kept from its creation (`ttlMs`), in seconds.
    #[serde(default = "default_ttl_secs")]
    pub ttl_secs: u64,
    /// The polling interval suggested to clients, in milliseconds.
    #[serde(default = "default_poll_ms")]
    pub poll_interval_ms: u64,
    /// How long a replica's claim on a running task lasts unrenewed, in
    /// seconds: a replica that stopped has its tasks failed this long after.
    #[serde(default = "default_lease_secs")]
    pub lease_secs: u64,
    /// How often the running replica looks for cancels and answers, in
    /// milliseconds.
    #[serde(default = "default_watch_ms")]
    pub watch_interval_ms: u64,
}

fn default_true() -> bool {
    true
}

fn default_ttl_secs() -> u64 {
    3600
}

fn default_poll_ms() -> u64 {
    1000
}

fn default_lease_secs() -> u64 {
    15
}

fn default_watch_ms() -> u64 {
    250
}

impl Default for TasksConfig {
    fn default() -> Self {
        TasksConfig {
            enabled: true,
            ttl_secs: default_ttl_secs(),
            poll_interval_ms: default_poll_ms(),
            lease_secs: default_lease_secs(),
            watch_interval_ms: default_watch_ms(),
        }
    }
}

impl StoreConfig {
    /// The store this section names: Redis when it has a `url`, else the
    /// embedded one.
    ///
    /// # Errors
    ///
    /// `config` for a URL that is not a Redis URL or a zero timeout.
    pub fn open(&self) -> Result<Arc<dyn Store>> {
        let Some(url) = &self.url else {
            return Ok(Arc::new(MemoryStore::new()));
        };
        if self.timeout_ms == 0 {
            return Err(Error::new(
                ErrorCode::Config,
                "[store] timeout_ms must be at least 1",
            ));
        }
        let store = RedisStore::new(RedisOptions {
            url: url.clone(),
            prefix: self.prefix.clone(),
            timeout: Duration::from_millis(self.timeout_ms),
        })
        .map_err(|e| Error::new(ErrorCode::Config, format!("[store] url: {e}")))?;
        Ok(Arc::new(store))
    }
}

impl TasksConfig {
    /// The tasks of this server, in `store`; none when disabled.
    ///
    /// # Errors
    ///
    /// `config` when an interval is zero, or the lease is not longer than
    /// two watch intervals (a healthy replica would lose its tasks).
    pub fn tasks(&self, store: Arc<dyn Store>) -> Result<Option<Arc<Tasks>>> {
        if !self.enabled {
            return Ok(None);
        }
        if self.ttl_secs == 0 || self.poll_interval_ms == 0 || self.watch_interval_ms == 0 {
            return Err(Error::new(
                ErrorCode::Config,
                "[tasks] ttl_secs, poll_interval_ms and watch_interval_ms must be at least 1",
            ));
        }
        if self.lease_secs.saturating_mul(1000) <= self.watch_interval_ms.saturating_mul(2) {
            return Err(Error::new(
                ErrorCode::Config,
                "[tasks] lease_secs must be longer than two watch intervals (watch_interval_ms), or running tasks would be failed as abandoned",
            ));
        }
        Ok(Some(Arc::new(Tasks::new(
            store,
            TaskOptions {
                ttl: Duration::from_secs(self.ttl_secs),
                poll_interval: Duration::from_millis(self.poll_interval_ms),
                lease: Duration::from_secs(self.lease_secs),
                watch_interval: Duration::from_millis(self.watch_interval_ms),
            },
        ))))
    }
}

/// What an MCP server of a config shares with the other replicas: one
/// store (`[store]`) for request states' single use, session approvals and
/// tasks, and the tasks (`[tasks]`). `toolhost serve` and
/// [`Host`](crate::Host) make their servers with it, the same way.
#[derive(Debug, Clone)]
pub struct Shared {
    store: Arc<dyn Store>,
    tasks: Option<Arc<Tasks>>,
}

impl Shared {
    /// Opens `config`'s store and sets up its tasks.
    ///
    /// # Errors
    ///
    /// As [`StoreConfig::open`] and [`TasksConfig::tasks`].
    pub fn open(config: &crate::Config) -> Result<Shared> {
        let store = config.store.open()?;
        let tasks = config.tasks.tasks(Arc::clone(&store))?;
        Ok(Shared { store, tasks })
    }

    /// The MCP server of `dispatcher` for `audience`: its request states
    /// sealed with `key`, its approvals asked by `approver` (none: the
    /// dispatcher's own gate decides), its tasks served when `[tasks]` is
    /// on, its requests counted in `metrics` when `[metrics]` is, and
    /// traced when `[traces]` is.
    pub fn mcp_server(
        &self,
        dispatcher: Dispatcher,
        audience: ToolAudience,
        key: StateKey,
        approver: Option<Arc<McpApprover>>,
        metrics: Option<Arc<Metrics>>,
        tracing: Option<Tracing>,
    ) -> McpServer {
        let sealer = StateSealer::new(key, Arc::clone(&self.store));
        let mut server = McpServer::new(dispatcher, audience).with_round_trips(RoundTrips::new(sealer));
        if let Some(approver) = approver {
            server = server.with_approver(approver);
        }
        if let Some(tasks) = &self.tasks {
            server = server.with_tasks(Arc::clone(tasks));
        }
        if let Some(metrics) = metrics {
            server = server.with_metrics(metrics);
        }
        if let Some(tracing) = tracing {
            server = server.with_tracing(tracing);
        }
        server
    }
}
