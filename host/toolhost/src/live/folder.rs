//! The watched plugins folder: `NAME.wasm` files (and their
//! `NAME.wasm.minisig`) loaded, swapped and unloaded as they come and go.
//!
//! The folder is watched with `notify` (inotify on Linux) for files
//! created, written, renamed and removed; reading a file raises events of
//! its own (opened, read, closed), which are ignored, so that loading a
//! file never schedules another look at it. A file is looked at only once
//! it has **settled** (no event for `settle_ms`, and the same size and
//! modification time as when its last event came), and only if it (or its
//! signature) **changed** since the last look: an unchanged folder costs
//! nothing, and a file that was refused is reported once, until it changes.
//! It is then admitted like every other plugin ([`crate::admission`]: a
//! regular file within the size cap, read off the async workers, then
//! signature, grants, compile) and swapped in one registry change. A
//! version that is refused leaves the previous one serving, and the status
//! says why. Files whose name starts with a dot are ignored, so a writer
//! can write `.NAME.wasm.tmp` and rename it for an atomic swap.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use notify::event::{EventKind, ModifyKind};
use notify::{RecursiveMode, Watcher};
use tokio::time::Instant;

use super::{LivePlugins, Outcome, Slot};
use crate::admission::{Place, PluginRequest, Via};
use crate::config::{PluginStatus, PluginsDirConfig};
use crate::distribution::signature::{SIGNATURE_SUFFIX, signature_path};
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

/// Whether a watch event can mean a file changed: created, written,
/// renamed or removed. Opening, reading and closing a file (what loading
/// it does) cannot.
fn may_change(kind: &EventKind) -> bool {
    !matches!(
        kind,
        EventKind::Access(_) | EventKind::Modify(ModifyKind::Metadata(_))
    )
}

/// What a file looked like, without opening it: its size, modification
/// and change times and inode (a rename over it changes the inode).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Seen {
    len: u64,
    modified: Option<SystemTime>,
    changed: i64,
    inode: u64,
}

/// What a file and its signature look like now (none: absent).
type Look = (Option<Seen>, Option<Seen>);

fn observe(path: &Path) -> Option<Seen> {
    use std::os::unix::fs::MetadataExt;
    let meta = std::fs::metadata(path).ok()?;
    Some(Seen {
        len: meta.len(),
        modified: meta.modified().ok(),
        changed: meta
            .ctime()
            .saturating_mul(1_000_000_000)
            .saturating_add(meta.ctime_nsec()),
        inode: meta.ino(),
    })
}

fn look(path: &Path) -> Look {
    (observe(path), observe(&signature_path(path)))
}

impl PluginsDirConfig {
    /// The admission request for the folder's `file` (named `name`): its
    /// toolset is its name without `.wasm`; grants given by name carry over
    /// to a new version, grants given by hash hold (and pin) those bytes
    /// only.
    pub fn request(&self, name: &str, file: PathBuf) -> PluginRequest {
        let stem = name.strip_suffix(".wasm").unwrap_or(name).to_string();
        let grants_by_hash = self
            .grants
            .iter()
            .filter_map(|(key, grants)| Some((key.parse::<ComponentHash>().ok()?, grants.clone())))
            .collect();
        PluginRequest {
            name: name.to_string(),
            place: Place::File(file),
            require_signature: self.require_signature,
            limits: self.limits,
            grants: self.grants.get(&stem).cloned().unwrap_or_default(),
            grants_by_hash,
            toolset: Some(stem),
            ..PluginRequest::file("")
        }
    }
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
            Ok(event) if may_change(&event.kind) => event.paths.into_iter().for_each(|p| drop(tx.send(p))),
            Ok(_) => {}
            Err(e) => tracing::warn!("watching the plugins folder: {e}"),
        })
        .and_then(|mut w| w.watch(&path, RecursiveMode::NonRecursive).map(|()| w))
        .map_err(|e| Error::new(ErrorCode::Config, format!("cannot watch {}: {e}", path.display())))?;
        // What is there at start loads now (after the watch, so that nothing
        // written meanwhile is missed).
        let listing = path.clone();
        let mut present: Vec<String> = tokio::task::spawn_blocking(move || {
            std::fs::read_dir(&listing).map(|entries| {
                entries
                    .filter_map(|e| e.ok().and_then(|e| component_name(&e.path())))
                    .collect::<Vec<_>>()
            })
        })
        .await
        .map_err(|e| Error::internal(format!("listing the plugins folder failed: {e}")))?
        .map_err(|e| Error::io(format!("cannot read {}", path.display()), e))?;
        present.sort();
        present.dedup();
        // NAME → what it looked like when it was last admitted or refused.
        let mut looked: HashMap<String, Look> = HashMap::new();
        for name in present {
            let seen = look(&path.join(&name));
            self.sync_folder_file(&dir, &path, &name).await;
            looked.insert(name, seen);
        }
        let live = Arc::clone(self);
        let settle = Duration::from_millis(dir.settle_ms);
        let folder = path.clone();
        let task = tokio::spawn(async move {
            // NAME → (when to look again, what it looked like at its last event).
            let mut pending: HashMap<String, (Instant, Look)> = HashMap::new();
            loop {
                let next = pending.values().map(|(at, _)| *at).min();
                tokio::select! {
                    changed = rx.recv() => {
                        let Some(changed) = changed else { break };
                        if let Some(name) = component_name(&changed) {
                            let seen = look(&folder.join(&name));
                            pending.insert(name, (Instant::now() + settle, seen));
                        }
                    }
                    () = sleep_until(next) => {
                        let now = Instant::now();
                        let due: Vec<String> = pending.iter().filter(|(_, (at, _))| *at <= now).map(|(n, _)| n.clone()).collect();
                        for name in due {
                            let Some((_, seen)) = pending.remove(&name) else { continue };
                            let current = look(&folder.join(&name));
                            if current != seen {
                                // Still being written: look again later.
                                pending.insert(name, (Instant::now() + settle, current));
                                continue;
                            }
                            if looked.get(&name) == Some(&current) {
                                // Nothing changed since the last look.
                                continue;
                            }
                            live.sync_folder_file(&dir, &folder, &name).await;
                            if current == (None, None) {
                                looked.remove(&name);
                            } else {
                                looked.insert(name, current);
                            }
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
        let slot = Slot::Folder(name.to_string());
        let path = folder.join(name);
        if observe(&path).is_none() {
            // Gone: unload it.
            let current = self.slots().get(&slot).cloned();
            if let Some(hash) = current.as_ref().filter(|s| s.is_loaded()).and_then(|s| s.hash) {
                match self.unload(hash).await {
                    Ok(_) => {
                        tracing::info!(plugin = name, "plugin removed from the plugins folder: unloaded")
                    }
                    Err(e) => tracing::error!(plugin = name, "cannot unload: {e:#}"),
                }
            }
            self.slots().remove(&slot);
            return;
        }
        let request = dir.request(name, path);
        let outcome = self.admit(Via::PluginsFolder, &slot, &request).await;
        let mut slots = self.slots();
        let current = slots.get(&slot).cloned();
        let status = match outcome {
            Outcome::Loaded(status) => *status,
            Outcome::Unchanged { .. } => match current {
                // The version serving is the file's again: nothing is refused.
                Some(status) => PluginStatus {
                    error: None,
                    error_code: None,
                    ..status
                },
                None => return,
            },
            Outcome::Refused(hash, e) => kept(current, &request, hash, &e),
        };
        slots.set(
            &slot,
            PluginStatus {
                path: Some(PathBuf::from(name)),
                ..status
            },
        );
    }
}

/// The status after a version was refused: the previous one still serves
/// (its status, with the refusal as its `error`), or the refusal.
fn kept(
    current: Option<PluginStatus>,
    request: &PluginRequest,
    hash: Option<ComponentHash>,
    error: &Error,
) -> PluginStatus {
    match current.filter(PluginStatus::is_loaded) {
        Some(previous) => {
            tracing::error!(plugin = %request.name, "the new version was refused, the previous one still serves: {error:#}");
            PluginStatus {
                error: Some(format!(
                    "a new version was refused, this one still serves: {}",
                    error.with_causes()
                )),
                error_code: Some(error.code()),
                ..previous
            }
        }
        None => PluginStatus::failed(Via::PluginsFolder, request, hash, error),
    }
}

async fn sleep_until(at: Option<Instant>) {
    match at {
        Some(at) => tokio::time::sleep_until(at).await,
        None => std::future::pending().await,
    }
}
