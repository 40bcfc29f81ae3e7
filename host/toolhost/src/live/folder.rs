//! The watched plugins folder: `NAME.wasm` files (and their
//! `NAME.wasm.minisig`) loaded, swapped and unloaded as they come and go.
//!
//! The folder is watched with `notify` (inotify on Linux). A file is loaded
//! only once it has **settled** (no event for `settle_ms`, and the same size
//! and modification time as when its last event came), has been **checked**
//! (its signature as the policy asks, then the whole component: a file cut
//! short does not compile), and then **swapped** in one registry change. A
//! version that fails the check leaves the previous one serving, and the
//! status says why. Files whose name starts with a dot are ignored, so a
//! writer can write `.NAME.wasm.tmp` and rename it for an atomic swap.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::{Arc, PoisonError};
use std::time::{Duration, SystemTime};

use notify::{RecursiveMode, Watcher};
use tokio::time::Instant;

use super::LivePlugins;
use crate::config::plugins::failed;
use crate::config::{PluginConfig, PluginStatus, PluginsDirConfig};
use crate::distribution::signature::SIGNATURE_SUFFIX;
use crate::error::{Error, ErrorCode, Result};
use crate::identity::ComponentHash;

/// A running watch; dropping it stops watching (loaded plugins stay).
#[derive(Debug)]
pub struct FolderWatch {
    _watcher: notify::RecommendedWatcher,
    task: tokio::task::JoinHandle<()>,
    dir: PathBuf,
}

impl FolderWatch {
    /// The folder watched.
    pub fn dir(&self) -> &Path {
        &self.dir
    }
}

impl Drop for FolderWatch {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// The component a changed path belongs to: `NAME.wasm` for itself and for
/// `NAME.wasm.minisig`; none for hidden and other files.
fn component_name(path: &Path) -> Option<String> {
    let name = path.file_name()?.to_str()?;
    let name = name.strip_suffix(SIGNATURE_SUFFIX).unwrap_or(name);
    (name.ends_with(".wasm") && !name.starts_with('.') && name.len() > ".wasm".len())
        .then(|| name.to_string())
}

/// What a file looked like: its size and modification time.
type Seen = (u64, Option<SystemTime>);

/// What a file looks like now (none: absent).
fn observe(path: &Path) -> Option<Seen> {
    let meta = std::fs::metadata(path).ok()?;
    Some((meta.len(), meta.modified().ok()))
}

impl LivePlugins {
    /// Loads every component of the folder `dir` describes, then watches it
    /// (see the [module docs](self)) until the returned watch is dropped.
    ///
    /// # Errors
    ///
    /// `config` when the folder does not exist or cannot be watched.
    pub async fn watch_folder(self: &Arc<Self>, dir: PluginsDirConfig) -> Result<FolderWatch> {
        let path = self.config().base_dir.join(&dir.path);
        if !path.is_dir() {
            return Err(Error::new(
                ErrorCode::Config,
                format!("the plugins folder {} is not a folder", path.display()),
            ));
        }
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<PathBuf>();
        let watcher = notify::recommended_watcher(move |event: notify::Result<notify::Event>| match event {
            Ok(event) => event.paths.into_iter().for_each(|p| drop(tx.send(p))),
            Err(e) => tracing::warn!("watching the plugins folder: {e}"),
        })
        .and_then(|mut w| w.watch(&path, RecursiveMode::NonRecursive).map(|()| w))
        .map_err(|e| Error::new(ErrorCode::Config, format!("cannot watch {}: {e}", path.display())))?;
        // What is there at start loads now (after the watch, so that nothing
        // written meanwhile is missed).
        let mut present: Vec<String> = std::fs::read_dir(&path)
            .map_err(|e| Error::io(format!("cannot read {}", path.display()), e))?
            .filter_map(|e| e.ok().and_then(|e| component_name(&e.path())))
            .collect();
        present.sort();
        present.dedup();
        for name in present {
            self.sync_folder_file(&dir, &path, &name).await;
        }
        let live = Arc::clone(self);
        let settle = Duration::from_millis(dir.settle_ms);
        let folder = path.clone();
        let task = tokio::spawn(async move {
            // NAME → (when to look again, what it looked like at its last event).
            let mut pending: HashMap<String, (Instant, Option<Seen>)> = HashMap::new();
            loop {
                let next = pending.values().map(|(at, _)| *at).min();
                tokio::select! {
                    changed = rx.recv() => {
                        let Some(changed) = changed else { break };
                        if let Some(name) = component_name(&changed) {
                            let seen = observe(&folder.join(&name));
                            pending.insert(name, (Instant::now() + settle, seen));
                        }
                    }
                    () = sleep_until(next) => {
                        let now = Instant::now();
                        let due: Vec<String> = pending.iter().filter(|(_, (at, _))| *at <= now).map(|(n, _)| n.clone()).collect();
                        for name in due {
                            let Some((_, seen)) = pending.remove(&name) else { continue };
                            let current = observe(&folder.join(&name));
                            if current != seen {
                                // Still being written: look again later.
                                pending.insert(name, (Instant::now() + settle, current));
                                continue;
                            }
                            live.sync_folder_file(&dir, &folder, &name).await;
                        }
                    }
                }
            }
        });
        Ok(FolderWatch {
            _watcher: watcher,
            task,
            dir: path,
        })
    }

    /// Brings the folder's `name` in line with its file: loaded, swapped or
    /// unloaded.
    async fn sync_folder_file(&self, dir: &PluginsDirConfig, folder: &Path, name: &str) {
        let _changing = self.changing.lock().await;
        let path = folder.join(name);
        let current = self
            .folder
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get(name)
            .cloned();
        let old = current
            .as_ref()
            .and_then(|s| s.component.as_ref())
            .map(|c| c.hash());
        let Ok(bytes) = std::fs::read(&path) else {
            // Gone: unload it.
            if let Err(e) = self.swap(old, None) {
                tracing::error!(plugin = name, "cannot unload: {e}");
            }
            if old.is_some() {
                tracing::info!(plugin = name, "plugin removed from the plugins folder: unloaded");
            }
            self.folder
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .remove(name);
            return;
        };
        let hash = ComponentHash::of(&bytes);
        if old == Some(hash) {
            // The version serving is the file's again: nothing was refused.
            if let Some(status) = self
                .folder
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .get_mut(name)
            {
                status.error = None;
                status.error_code = None;
            }
            return;
        }
        let stem = name.strip_suffix(".wasm").unwrap_or(name).to_string();
        let (grants, by_hash) = dir.grants_for(&stem, &hash);
        let entry = PluginConfig {
            path: Some(path.clone()),
            // Grants given by hash hold for these bytes only.
            hash: by_hash.then_some(hash),
            toolset: Some(stem.clone()),
            require_signature: dir.require_signature,
            limits: dir.limits,
            grants,
            ..PluginConfig::default()
        };
        let status = match self
            .config()
            .prepare_plugin(&entry, &self.engine, &self.sources)
            .await
        {
            Ok(prepared) => match self.swap(old, Some(&prepared)) {
                Ok(tools) => {
                    tracing::info!(plugin = name, from = ?old, to = %prepared.component.hash(), "plugins folder: loaded");
                    prepared.status(&entry, tools)
                }
                Err(e) => kept(current, &entry, Some(hash), &e),
            },
            Err((hash, e)) => kept(current, &entry, hash, &e),
        };
        let status = PluginStatus {
            path: Some(PathBuf::from(name)),
            ..status
        };
        self.folder
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(name.to_string(), status);
    }
}

/// The status after a version failed: the previous one still serves (its
/// status, with the failure as its `error`), or the failure.
fn kept(
    current: Option<PluginStatus>,
    entry: &PluginConfig,
    hash: Option<ComponentHash>,
    error: &Error,
) -> PluginStatus {
    match current.filter(PluginStatus::is_loaded) {
        Some(previous) => {
            tracing::error!(plugin = %entry.name(), "the new version was refused, the previous one still serves: {error}");
            PluginStatus {
                error: Some(format!(
                    "a new version was refused, this one still serves: {}",
                    error.message()
                )),
                error_code: Some(error.code()),
                ..previous
            }
        }
        None => failed(entry, hash, error),
    }
}

async fn sleep_until(at: Option<Instant>) {
    match at {
        Some(at) => tokio::time::sleep_until(at).await,
        None => std::future::pending().await,
    }
}

/// The folder's statuses in file-name order.
pub(crate) fn ordered(map: &BTreeMap<String, PluginStatus>) -> Vec<PluginStatus> {
    map.values().cloned().collect()
}
