//! # Live plugins: every plugin a running host serves
//!
//! [`LivePlugins`] holds every plugin of a host, whatever door it came in
//! by, and is the one place that registers and unregisters them, each
//! admitted by [`crate::admission`] first:
//!
//! - **`[[plugins]]` entries**, admitted at start ([`Via::Config`]) and
//!   again on each **reload** ([`LivePlugins::reload`]; `toolhost serve`
//!   runs it on `SIGHUP` and every `[oci] poll_interval_s`): every entry is
//!   fetched again (a `source` tag re-resolved in its registry, a file
//!   re-read); an entry whose bytes changed is admitted and swapped, one
//!   that now fails keeps serving its previous version (the failure is
//!   logged and returned). The config file itself is read at start only.
//! - **The plugins folder** ([`folder`], `[plugins_dir]` or `serve
//!   --plugins DIR`): a component added is loaded, one removed unloaded,
//!   one replaced swapped, once it has settled.
//! - **Components loaded by a trusted admin** (`toolhost__load_component`),
//!   `serve --plugin PATH`, or an application ([`LivePlugins::load`]);
//!   [`LivePlugins::unload`] removes any plugin by its hash.
//!
//! A swap is one registry change: the old version's tools go and the new
//! one's come in a single step ([`crate::dispatch::Dispatcher::update_registry`]),
//! so a call finds one or the other, never neither. Calls in flight hold
//! their own reference to the version they started on and finish on it.
//! Every change bumps the registry's generation, so MCP clients get
//! `notifications/tools/list_changed`.
//!
//! Bytes are fetched (a file read, a pull) outside the lock that
//! serializes changes, so a slow registry never holds up the folder or an
//! admin; the checks from the pins on, and the swap, run under it, so that
//! no two plugins can take the same storage folder at once.

pub mod folder;

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use serde::Serialize;

use crate::admission::{Admission, Admitted, Held, PluginRequest, Via};
use crate::component::LoadedComponent;
use crate::config::{Config, PluginStatus};
use crate::dispatch::{Dispatcher, WeakDispatcher};
use crate::distribution::Origin;
use crate::engine::Engine;
use crate::error::{Error, ErrorCode, Result};
use crate::identity::ComponentHash;
use serde_json::json;
use toolhost_core::audit::AuditLog;

/// The plugins of a running host (see the [module docs](self)). Cheap to
/// share.
#[derive(Debug)]
pub struct LivePlugins {
    dispatcher: WeakDispatcher,
    admission: Admission,
    config: Config,
    /// Serializes changes (admissions past the bytes, swaps, unloads).
    changing: tokio::sync::Mutex<()>,
    slots: Mutex<Slots>,
    /// How many reloads have run, and what the last one changed.
    reloads: Mutex<(u64, Option<ReloadReport>)>,
    /// Where loads, refusals and unloads are written, when audited.
    audit: Option<Arc<AuditLog>>,
}

/// Every plugin's status, by where it sits.
#[derive(Debug, Default)]
struct Slots {
    /// The `[[plugins]]` entries, in order.
    entries: Vec<Option<PluginStatus>>,
    /// The plugins folder's files, by name.
    folder: BTreeMap<String, PluginStatus>,
    /// Components loaded by an admin, the command line or the library, in
    /// the order they came.
    loaded: BTreeMap<u64, PluginStatus>,
    next_loaded: u64,
}

/// Where a plugin sits among the [`Slots`].
#[derive(Debug, Clone, PartialEq, Eq)]
enum Slot {
    Entry(usize),
    Folder(String),
    Loaded(u64),
}

impl Slots {
    fn get(&self, slot: &Slot) -> Option<&PluginStatus> {
        match slot {
            Slot::Entry(i) => self.entries.get(*i).and_then(Option::as_ref),
            Slot::Folder(name) => self.folder.get(name),
            Slot::Loaded(id) => self.loaded.get(id),
        }
    }

    fn set(&mut self, slot: &Slot, status: PluginStatus) {
        match slot {
            Slot::Entry(i) => {
                if self.entries.len() <= *i {
                    self.entries.resize(*i + 1, None);
                }
                self.entries[*i] = Some(status);
            }
            Slot::Folder(name) => {
                self.folder.insert(name.clone(), status);
            }
            Slot::Loaded(id) => {
                self.loaded.insert(*id, status);
            }
        }
    }

    fn remove(&mut self, slot: &Slot) -> Option<PluginStatus> {
        match slot {
            Slot::Entry(i) => self.entries.get_mut(*i).and_then(Option::take),
            Slot::Folder(name) => self.folder.remove(name),
            Slot::Loaded(id) => self.loaded.remove(id),
        }
    }

    fn all(&self) -> impl Iterator<Item = (Slot, &PluginStatus)> {
        let entries = self
            .entries
            .iter()
            .enumerate()
            .filter_map(|(i, s)| s.as_ref().map(|s| (Slot::Entry(i), s)));
        let folder = self.folder.iter().map(|(n, s)| (Slot::Folder(n.clone()), s));
        let loaded = self.loaded.iter().map(|(id, s)| (Slot::Loaded(*id), s));
        entries.chain(folder).chain(loaded)
    }

    /// The folders every loaded plugin but the one in `slot` holds.
    fn held_except(&self, slot: &Slot) -> Vec<Held> {
        self.all()
            .filter(|(s, status)| s != slot && status.is_loaded() && !status.dirs.is_empty())
            .map(|(_, status)| Held {
                owner: status
                    .path
                    .as_ref()
                    .map(|p| p.display().to_string())
                    .or_else(|| status.source.clone())
                    .or_else(|| status.hash.map(|h| h.to_string()))
                    .unwrap_or_default(),
                dirs: status.dirs.clone(),
            })
            .collect()
    }
}

/// What became of one admission.
#[derive(Debug)]
enum Outcome {
    /// Admitted and registered: its status.
    Loaded(Box<PluginStatus>),
    /// The bytes are those already serving in the slot: nothing changed.
    Unchanged {
        digest: Option<String>,
        origin: Option<Origin>,
    },
    /// Refused at some step: its bytes' identity, if read, and why.
    Refused(Option<ComponentHash>, Error),
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
    /// The live plugins of `dispatcher`, admitting by the rules of `config`
    /// into `engine`. Nothing is loaded yet: [`LivePlugins::load_entries`]
    /// admits the config's `[[plugins]]`.
    ///
    /// # Errors
    ///
    /// As [`Admission::new`].
    pub fn new(dispatcher: &Dispatcher, engine: Engine, config: Config) -> Result<Arc<Self>> {
        LivePlugins::audited(dispatcher, engine, config, None)
    }

    /// [`LivePlugins::new`], every load, refusal and unload written to
    /// `audit` (see [`toolhost_core::audit`]).
    pub(crate) fn audited(
        dispatcher: &Dispatcher,
        engine: Engine,
        config: Config,
        audit: Option<Arc<AuditLog>>,
    ) -> Result<Arc<Self>> {
        Ok(Arc::new(LivePlugins {
            dispatcher: dispatcher.downgrade(),
            admission: Admission::new(engine, &config)?,
            config,
            changing: tokio::sync::Mutex::new(()),
            slots: Mutex::new(Slots::default()),
            reloads: Mutex::new((0, None)),
            audit,
        }))
    }

    /// The config.
    pub fn config(&self) -> &Config {
        &self.config
    }

    /// The dispatcher serving the plugins.
    ///
    /// # Errors
    ///
    /// `unavailable` once it is gone (the server is shutting down).
    pub fn dispatcher(&self) -> Result<Dispatcher> {
        self.dispatcher
            .upgrade()
            .ok_or_else(|| Error::new(ErrorCode::Unavailable, "the server is shutting down"))
    }

    /// The admission every plugin passes.
    pub fn admission(&self) -> &Admission {
        &self.admission
    }

    fn slots(&self) -> MutexGuard<'_, Slots> {
        self.slots.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Each `[[plugins]]` entry as it is now (an entry not yet admitted is
    /// left out).
    pub fn entries(&self) -> Vec<PluginStatus> {
        self.slots().entries.iter().flatten().cloned().collect()
    }

    /// Each component of the plugins folder as it is now, by file name.
    pub fn folder(&self) -> Vec<PluginStatus> {
        self.slots().folder.values().cloned().collect()
    }

    /// Each component loaded by an admin, the command line or the library.
    pub fn loaded(&self) -> Vec<PluginStatus> {
        self.slots().loaded.values().cloned().collect()
    }

    /// Every loaded component's hash: config entries first, then the
    /// folder's, then the others.
    pub fn hashes(&self) -> Vec<ComponentHash> {
        self.slots()
            .all()
            .filter(|(_, s)| s.is_loaded())
            .filter_map(|(_, s)| s.hash)
            .collect()
    }

    /// The JSON report: `{"plugins": [...], "plugins_dir": [...], "loaded":
    /// [...], "reloads": N, "last_reload": {...}}`.
    pub fn status(&self) -> serde_json::Value {
        let (reloads, last) = self
            .reloads
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone();
        serde_json::json!({
            "plugins": self.entries(),
            "plugins_dir": self.folder(),
            "loaded": self.loaded(),
            "reloads": reloads,
            "last_reload": last,
        })
    }

    /// Admits every `[[plugins]]` entry (each on its own: one that fails is
    /// logged and reported, and the others load) and returns their
    /// statuses, in order.
    pub async fn load_entries(&self) -> Vec<PluginStatus> {
        let mut statuses = Vec::with_capacity(self.config.plugins.len());
        for (i, entry) in self.config.plugins.iter().enumerate() {
            let status = match PluginRequest::from_entry(entry) {
                Ok(request) => match self.admit(Via::Config, &Slot::Entry(i), &request).await {
                    Outcome::Loaded(status) => *status,
                    Outcome::Refused(hash, e) => PluginStatus::failed(Via::Config, &request, hash, &e),
                    // A slot is empty at start; were it not, it would keep its status.
                    Outcome::Unchanged { .. } => match self.slots().get(&Slot::Entry(i)) {
                        Some(status) => status.clone(),
                        None => continue,
                    },
                },
                Err(e) => {
                    let request = PluginRequest::file(entry.name());
                    PluginStatus::failed(Via::Config, &request, None, &e)
                }
            };
            self.slots().set(&Slot::Entry(i), status.clone());
            statuses.push(status);
        }
        statuses
    }

    /// Admits `request` (see [`crate::admission`]) and serves its tools, as
    /// an application's own plugin ([`Via::Library`]); unload it with
    /// [`LivePlugins::unload`].
    ///
    /// # Errors
    ///
    /// The step of admission that refused it.
    pub async fn load(&self, request: PluginRequest) -> Result<Arc<LoadedComponent>> {
        self.load_via(Via::Library, request).await
    }

    /// [`LivePlugins::load`], labelled as coming through `via` in its
    /// status and the log (the admin tools, `serve --plugin`). The checks
    /// are the same whatever the door.
    ///
    /// # Errors
    ///
    /// As [`LivePlugins::load`].
    pub async fn load_via(&self, via: Via, request: PluginRequest) -> Result<Arc<LoadedComponent>> {
        let slot = {
            let mut slots = self.slots();
            slots.next_loaded += 1;
            Slot::Loaded(slots.next_loaded)
        };
        match self.admit(via, &slot, &request).await {
            Outcome::Loaded(status) => status
                .component
                .ok_or_else(|| Error::internal("a loaded plugin without its component")),
            Outcome::Refused(_, e) => {
                tracing::error!(plugin = %request.name, ?via, error_code = %e.code(), "plugin not loaded: {e:#}");
                Err(e)
            }
            Outcome::Unchanged { .. } => Err(Error::internal("a new slot already held a plugin")),
        }
    }

    /// Stops serving the component `hash`, whatever door it came in by;
    /// returns the names of the tools it had. A `[[plugins]]` entry so
    /// unloaded comes back at the next reload.
    ///
    /// # Errors
    ///
    /// `unknown_tool` when no loaded plugin has that hash.
    pub async fn unload(&self, hash: ComponentHash) -> Result<Vec<String>> {
        let _changing = self.changing.lock().await;
        let slot = self
            .slots()
            .all()
            .find(|(_, s)| s.is_loaded() && s.hash == Some(hash))
            .map(|(slot, _)| slot);
        let Some(slot) = slot else {
            return Err(Error::new(
                ErrorCode::UnknownTool,
                format!("no component {hash} is loaded"),
            ));
        };
        self.swap(Some(hash), None)?;
        let tools = self.slots().remove(&slot).map(|s| s.tools).unwrap_or_default();
        tracing::info!(component = %hash, "plugin unloaded");
        if let Some(audit) = &self.audit {
            let mut line = serde_json::Map::new();
            line.insert("component".into(), json!(hash.to_string()));
            line.insert("tools".into(), json!(tools));
            audit.record("plugin_unloaded", line);
        }
        Ok(tools)
    }

    /// Fetches every `[[plugins]]` entry again and swaps those whose bytes
    /// changed (see the [module docs](self)).
    pub async fn reload(&self) -> ReloadReport {
        let mut report = ReloadReport::default();
        for (i, entry) in self.config.plugins.iter().enumerate() {
            let slot = Slot::Entry(i);
            let Ok(request) = PluginRequest::from_entry(entry) else {
                // Refused at start for the same reason, and reported then.
                continue;
            };
            let old = self
                .slots()
                .get(&slot)
                .and_then(|s| s.component.as_ref().map(|c| c.hash()));
            match self.admit(Via::Reload, &slot, &request).await {
                Outcome::Loaded(status) => {
                    if let Some(w) = status.cache_warning() {
                        report.warnings.push(w);
                    }
                    report.swapped.push(serde_json::json!({
                        "plugin": request.name, "from": old, "to": status.hash
                    }));
                }
                Outcome::Unchanged { digest, origin } => {
                    let mut slots = self.slots();
                    if let Some(status) = slots.get(&slot).cloned() {
                        let status = PluginStatus {
                            digest,
                            origin,
                            ..status
                        };
                        if let Some(w) = status.cache_warning() {
                            report.warnings.push(w);
                        }
                        slots.set(&slot, status);
                    }
                }
                Outcome::Refused(hash, e) => {
                    tracing::error!(plugin = %request.name, error_code = %e.code(), "plugin not reloaded: {e:#}");
                    report.failed.push(serde_json::json!({
                        "plugin": request.name, "error": e.with_causes(), "error_code": e.code()
                    }));
                    // Never loaded: the status says why; loaded: it keeps serving.
                    if old.is_none() {
                        self.slots()
                            .set(&slot, PluginStatus::failed(Via::Reload, &request, hash, &e));
                    }
                }
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
        let mut reloads = self.reloads.lock().unwrap_or_else(PoisonError::into_inner);
        *reloads = (reloads.0 + 1, Some(report.clone()));
        report
    }

    /// Admits `request` into `slot`: its bytes fetched first, outside the
    /// lock, then every other step and the swap under it.
    async fn admit(&self, via: Via, slot: &Slot, request: &PluginRequest) -> Outcome {
        let outcome = self.admit_once(via, slot, request).await;
        if let Some(audit) = &self.audit {
            audit_outcome(audit, via, request, &outcome);
        }
        outcome
    }

    async fn admit_once(&self, via: Via, slot: &Slot, request: &PluginRequest) -> Outcome {
        let acquired = match self.admission.acquire(&request.place).await {
            Ok(acquired) => acquired,
            // A file's errors name it already.
            Err(e) if e.message().contains(&request.name) => return Outcome::Refused(None, e),
            Err(e) => return Outcome::Refused(None, e.context(format!("plugin {}", request.name))),
        };
        let _changing = self.changing.lock().await;
        let (old, held) = {
            let slots = self.slots();
            let old = slots
                .get(slot)
                .and_then(|s| s.component.as_ref().map(|c| c.hash()));
            (old, slots.held_except(slot))
        };
        if old == Some(acquired.hash()) {
            return Outcome::Unchanged {
                digest: acquired.digest().map(str::to_string),
                origin: acquired.origin().cloned(),
            };
        }
        let hash = acquired.hash();
        let admitted = match self.admission.admit(request, acquired, &held).await {
            Ok(admitted) => admitted,
            Err((hash, e)) => return Outcome::Refused(hash, e),
        };
        match self.swap(old, Some(&admitted)) {
            Ok(tools) => {
                tracing::info!(plugin = %request.name, from = ?old, to = %hash, "plugin loaded");
                // Recorded under the lock, so the next admission sees the
                // folders this one holds.
                let status = PluginStatus::loaded(via, request, &admitted, tools);
                self.slots().set(slot, status.clone());
                Outcome::Loaded(Box::new(status))
            }
            Err(e) => Outcome::Refused(Some(hash), e.context(format!("plugin {}", request.name))),
        }
    }

    /// Replaces component `old` (if any) by `new` (if any) in one registry
    /// change; returns the new one's tools.
    fn swap(&self, old: Option<ComponentHash>, new: Option<&Admitted>) -> Result<Vec<String>> {
        self.dispatcher()?.update_registry(|registry| {
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

/// An admission's audit lines: the plugin loaded (and each capability it
/// declared that its grant does not give) or refused, and why.
fn audit_outcome(audit: &AuditLog, via: Via, request: &PluginRequest, outcome: &Outcome) {
    let mut line = serde_json::Map::new();
    line.insert("plugin".into(), json!(request.name));
    line.insert("via".into(), json!(via));
    match outcome {
        Outcome::Loaded(status) => {
            line.insert("component".into(), json!(status.hash.map(|h| h.to_string())));
            line.insert("tools".into(), json!(status.tools));
            let not_granted = status
                .component
                .as_ref()
                .map(|c| c.capabilities().not_granted.clone())
                .unwrap_or_default();
            audit.record("plugin_loaded", line.clone());
            for capability in not_granted {
                let mut refused = line.clone();
                refused.remove("tools");
                refused.insert("capability".into(), json!(capability));
                refused.insert(
                    "why".into(),
                    json!("declared by the component, not granted by the config: the plugin runs without it"),
                );
                audit.record("grant_refused", refused);
            }
        }
        Outcome::Refused(hash, e) => {
            line.insert("component".into(), json!(hash.map(|h| h.to_string())));
            line.insert("error_code".into(), json!(e.code().as_str()));
            line.insert("why".into(), json!(e.to_string()));
            audit.record("plugin_refused", line);
        }
        // The same bytes: nothing happened.
        Outcome::Unchanged { .. } => {}
    }
}
