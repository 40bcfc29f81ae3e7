//! # Live plugins: reloads and a watched folder
//!
//! While serving, the set of plugins can change without a restart, and
//! without losing a call:
//!
//! - **Reload** ([`LivePlugins::reload`]; `toolhost serve` runs it on
//!   `SIGHUP` and every `[oci] poll_interval_s`): every `[[plugins]]` entry
//!   is fetched again (a `source` tag re-resolved in its registry, a file
//!   re-read) and checked as at start; an entry whose hash changed is
//!   swapped, one that now fails keeps serving its previous version (the
//!   failure is logged and returned). The config file itself is read at
//!   start only.
//! - **The plugins folder** ([`folder`], `[plugins_dir]` or `serve
//!   --plugins DIR`): a component added is loaded, one removed unloaded,
//!   one replaced swapped, once it has settled and checked.
//!
//! A swap is one registry change: the old version's tools go and the new
//! one's come in a single step ([`crate::dispatch::Dispatcher::update_registry`]),
//! so a call finds one or the other, never neither. Calls in flight hold
//! their own reference to the version they started on and finish on it.
//! Every change bumps the registry's generation, so MCP clients get
//! `notifications/tools/list_changed`.

pub mod folder;

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, PoisonError};

use serde::Serialize;

use crate::config::plugins::{Prepared, failed};
use crate::config::{Config, PluginStatus, Sources};
use crate::dispatch::{Dispatcher, WeakDispatcher};
use crate::engine::Engine;
use crate::error::{Error, ErrorCode, Result};
use crate::identity::ComponentHash;

/// The plugins of a running host that can change: the config's
/// `[[plugins]]` (reloaded) and the plugins folder's. Cheap to share.
#[derive(Debug)]
pub struct LivePlugins {
    dispatcher: WeakDispatcher,
    engine: Engine,
    config: Config,
    sources: Sources,
    /// Serializes changes (a reload and the folder's swaps).
    changing: tokio::sync::Mutex<()>,
    entries: Mutex<Vec<PluginStatus>>,
    folder: Mutex<BTreeMap<String, PluginStatus>>,
}

/// What a reload changed.
#[derive(Debug, Clone, Default, Serialize)]
pub struct ReloadReport {
    /// Entries now serving another version: `{plugin, from, to}`.
    pub swapped: Vec<serde_json::Value>,
    /// Entries that could not be fetched or loaded (their previous version,
    /// if any, still serves): `{plugin, error, error_code}`.
    pub failed: Vec<serde_json::Value>,
    /// Warnings (a cached copy served because the registry failed).
    pub warnings: Vec<String>,
}

impl LivePlugins {
    /// The live plugins of `dispatcher`, started from `config` with the
    /// start-up report `entries`.
    ///
    /// # Errors
    ///
    /// As [`Config::sources`].
    pub fn new(
        dispatcher: &Dispatcher,
        engine: Engine,
        config: Config,
        entries: Vec<PluginStatus>,
    ) -> Result<Arc<Self>> {
        Ok(Arc::new(LivePlugins {
            dispatcher: dispatcher.downgrade(),
            engine,
            sources: config.sources()?,
            config,
            changing: tokio::sync::Mutex::new(()),
            entries: Mutex::new(entries),
            folder: Mutex::new(BTreeMap::new()),
        }))
    }

    /// The config.
    pub fn config(&self) -> &Config {
        &self.config
    }

    /// Each `[[plugins]]` entry as it is now.
    pub fn entries(&self) -> Vec<PluginStatus> {
        self.entries
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// Each component of the plugins folder as it is now.
    pub fn folder(&self) -> Vec<PluginStatus> {
        folder::ordered(&self.folder.lock().unwrap_or_else(PoisonError::into_inner))
    }

    /// Every loaded component's hash, config entries first, then the folder's.
    pub fn hashes(&self) -> Vec<ComponentHash> {
        self.entries()
            .into_iter()
            .chain(self.folder())
            .filter(PluginStatus::is_loaded)
            .filter_map(|s| s.hash)
            .collect()
    }

    /// The JSON report: `{"plugins": [...], "plugins_dir": [...]}`.
    pub fn status(&self) -> serde_json::Value {
        serde_json::json!({ "plugins": self.entries(), "plugins_dir": self.folder() })
    }

    /// Fetches every `[[plugins]]` entry again and swaps those whose hash
    /// changed (see the [module docs](self)).
    pub async fn reload(&self) -> ReloadReport {
        let _changing = self.changing.lock().await;
        let mut report = ReloadReport::default();
        for (i, entry) in self.config.plugins.iter().enumerate() {
            let current = self.entries()[i].clone();
            let old = current.component.as_ref().map(|c| c.hash());
            let status = match self
                .config
                .prepare_plugin(entry, &self.engine, &self.sources)
                .await
            {
                Ok(prepared) => {
                    if let Some(w) = prepared.status(entry, Vec::new()).cache_warning() {
                        report.warnings.push(w);
                    }
                    if old == Some(prepared.component.hash()) {
                        // The same bytes: keep them, with the new report.
                        Some(PluginStatus {
                            tools: current.tools.clone(),
                            ..prepared.status(entry, Vec::new())
                        })
                    } else {
                        match self.swap(old, Some(&prepared)) {
                            Ok(tools) => {
                                report.swapped.push(serde_json::json!({
                                    "plugin": entry.name(), "from": old, "to": prepared.component.hash()
                                }));
                                Some(prepared.status(entry, tools))
                            }
                            Err(e) => {
                                report.failed.push(failure(&entry.name(), &e));
                                None
                            }
                        }
                    }
                }
                Err((_, e)) => {
                    report.failed.push(failure(&entry.name(), &e));
                    // Never loaded: the status says why; loaded: it keeps serving.
                    (old.is_none()).then(|| failed(entry, None, &e))
                }
            };
            if let Some(status) = status {
                self.entries.lock().unwrap_or_else(PoisonError::into_inner)[i] = status;
            }
        }
        for w in &report.warnings {
            tracing::warn!("{w}");
        }
        tracing::info!(
            swapped = report.swapped.len(),
            failed = report.failed.len(),
            "plugins reloaded"
        );
        report
    }

    /// Replaces component `old` (if any) by `new` (if any) in one registry
    /// change; returns the new one's tools.
    fn swap(&self, old: Option<ComponentHash>, new: Option<&Prepared>) -> Result<Vec<String>> {
        let dispatcher = self
            .dispatcher
            .upgrade()
            .ok_or_else(|| Error::new(ErrorCode::Unavailable, "the server is shutting down"))?;
        dispatcher.update_registry(|registry| {
            if let Some(old) = old {
                registry.unregister_component(old);
            }
            match new {
                Some(new) => new.component.register(registry, &new.registration),
                None => Ok(Vec::new()),
            }
        })
    }
}

fn failure(plugin: &str, error: &Error) -> serde_json::Value {
    tracing::error!(plugin, error_code = %error.code(), "plugin not reloaded: {error}");
    serde_json::json!({ "plugin": plugin, "error": error.message(), "error_code": error.code() })
}
