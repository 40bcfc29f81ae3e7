//! `[[plugins]]`: the components a config loads, each on its own.
//!
//! One bad entry (a missing file, an unreachable registry with no cached
//! copy, an invalid component, a pin or digest mismatch, a refused
//! signature or grant, a duplicate tool name) does not stop the others: it
//! is reported with its reason ([`PluginStatus`], in `toolhost tools
//! --status` and the server's log) and the host serves every other tool.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use super::Config;
use super::distribution::{Acquired, Place, Sources};
use super::protected::ProtectedPaths;
use crate::capabilities::Grants;
use crate::component::{LoadOptions, LoadedComponent};
use crate::distribution::{OciReference, Origin, SignatureStatus};
use crate::engine::Engine;
use crate::error::{Error, ErrorCode, Result};
use crate::identity::ComponentHash;
use crate::limits::LimitsOverride;
use crate::registry::{ComponentRegistration, RegisterComponent, Registry};

/// One `[[plugins]]` entry: a `path` or a `source`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PluginConfig {
    /// The component file, relative to the config file's folder.
    pub path: Option<PathBuf>,
    /// Or where to pull it from: `oci://HOST[:PORT]/REPO:TAG` or
    /// `…@sha256:DIGEST` (see [`super::distribution`]).
    pub source: Option<String>,
    /// The hash its bytes must have.
    pub hash: Option<ComponentHash>,
    /// The toolset of its tools (default: the file name without `.wasm`,
    /// or the repository's last part).
    pub toolset: Option<String>,
    /// Whether its tools may override built-ins of the same name.
    #[serde(default)]
    pub allow_tool_override: bool,
    /// Refuse it unless a trusted key signed it (default: `[signatures]
    /// require_signature`).
    pub require_signature: Option<bool>,
    /// Limits for every call of its tools, and for what it may claim at
    /// load (tool count, description and schema sizes).
    #[serde(default)]
    pub limits: LimitsOverride,
    /// What the operator grants it (`[plugins.grants]`): directories
    /// (relative host paths are relative to this file's folder), environment
    /// variables, tools it may call. See [`crate::capabilities`]; a
    /// directory grant may not reach a protected path (see
    /// [`ProtectedPaths`]).
    #[serde(default)]
    pub grants: Grants,
}

impl PluginConfig {
    /// How the entry is named in messages and reports: its `path` or its
    /// `source`.
    pub fn name(&self) -> String {
        match (&self.path, &self.source) {
            (Some(path), _) => path.display().to_string(),
            (None, Some(source)) => source.clone(),
            (None, None) => "(an entry with neither path nor source)".into(),
        }
    }

    /// Its file, relative to the config file's folder (none for a source).
    pub fn file(&self) -> Option<&Path> {
        self.path.as_deref()
    }

    pub(crate) fn place(&self) -> Result<Place> {
        match (&self.path, &self.source) {
            (Some(path), None) => Ok(Place::File(path.clone())),
            (None, Some(source)) => Ok(Place::Oci(OciReference::parse(source)?)),
            _ => Err(Error::new(
                ErrorCode::Config,
                format!(
                    "[[plugins]] {}: give exactly one of `path` (a file) and `source` (oci://…)",
                    self.name()
                ),
            )),
        }
    }
}

/// What became of one `[[plugins]]` entry (at start-up, or at the last
/// reload).
#[derive(Debug, Clone, Serialize)]
pub struct PluginStatus {
    /// The entry's `path`, as written.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub path: Option<PathBuf>,
    /// The entry's `source`, as written.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
    /// `loaded` or `failed`.
    pub status: &'static str,
    /// The component's identity, when its bytes could be read.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hash: Option<ComponentHash>,
    /// The manifest digest of a pulled component.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub digest: Option<String>,
    /// Where a pulled component came from: `{"from": "registry"}` or
    /// `{"from": "cache", "reason": ...}`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub origin: Option<Origin>,
    /// How its signatures were judged.
    #[serde(skip_serializing_if = "Option::is_none", flatten)]
    pub signature: Option<SignatureStatus>,
    /// The tools it registered.
    pub tools: Vec<String>,
    /// Why it failed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// The failure's code.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error_code: Option<ErrorCode>,
    /// The loaded component.
    #[serde(skip)]
    pub component: Option<Arc<LoadedComponent>>,
}

impl PluginStatus {
    /// Whether the entry loaded and registered its tools.
    pub fn is_loaded(&self) -> bool {
        self.component.is_some()
    }

    /// The warning a cached copy served in place of the registry's deserves.
    pub fn cache_warning(&self) -> Option<String> {
        match &self.origin {
            Some(Origin::Cache { reason: Some(reason) }) => Some(format!(
                "plugin {}: the registry failed ({reason}); serving the cached copy {}",
                self.source.as_deref().unwrap_or_default(),
                self.digest.as_deref().unwrap_or_default()
            )),
            _ => None,
        }
    }
}

/// A component ready to register, with what its report needs.
#[derive(Debug)]
pub(crate) struct Prepared {
    pub component: Arc<LoadedComponent>,
    pub registration: ComponentRegistration,
    pub digest: Option<String>,
    pub origin: Option<Origin>,
    pub signature: SignatureStatus,
}

impl Prepared {
    /// The status of `entry` once registered with `tools`.
    pub(crate) fn status(&self, entry: &PluginConfig, tools: Vec<String>) -> PluginStatus {
        PluginStatus {
            path: entry.path.clone(),
            source: entry.source.clone(),
            status: "loaded",
            hash: Some(self.component.hash()),
            digest: self.digest.clone(),
            origin: self.origin.clone(),
            signature: Some(self.signature.clone()),
            tools,
            error: None,
            error_code: None,
            component: Some(Arc::clone(&self.component)),
        }
    }
}

/// The status of `entry`, failed with `error` (`hash`: its bytes', if read).
pub(crate) fn failed(entry: &PluginConfig, hash: Option<ComponentHash>, error: &Error) -> PluginStatus {
    tracing::error!(plugin = %entry.name(), error_code = %error.code(), "plugin not loaded: {error}");
    PluginStatus {
        path: entry.path.clone(),
        source: entry.source.clone(),
        status: "failed",
        hash,
        digest: None,
        origin: None,
        signature: None,
        tools: Vec::new(),
        error: Some(error.message().to_string()),
        error_code: Some(error.code()),
        component: None,
    }
}

impl Config {
    /// Loads every plugin into `engine` and registers its tools, each entry
    /// on its own: one that fails (its grants refused, its file missing or
    /// invalid, its registry unreachable with nothing cached, a pin or
    /// digest mismatch, a refused signature, a duplicate name) registers
    /// nothing, is logged and reported, and the others load. Never fails as
    /// a whole.
    pub async fn load_plugins(&self, engine: &Engine, registry: &mut Registry) -> Vec<PluginStatus> {
        let sources = match self.sources() {
            Ok(sources) => sources,
            Err(e) => return self.plugins.iter().map(|p| failed(p, None, &e)).collect(),
        };
        let checks = ProtectedPaths::of(self).check_plugins(self);
        let mut statuses = Vec::with_capacity(self.plugins.len());
        for (plugin, check) in self.plugins.iter().zip(checks) {
            let prepared = match check {
                Ok(()) => self.prepare_plugin(plugin, engine, &sources).await,
                Err(e) => Err((None, e)),
            };
            let status = match prepared {
                Ok(prepared) => {
                    let context = format!("plugin {}", plugin.name());
                    match registry.register_component(&prepared.component, &prepared.registration) {
                        Ok(tools) => prepared.status(plugin, tools),
                        Err(e) => failed(plugin, Some(prepared.component.hash()), &e.context(&context)),
                    }
                }
                Err((hash, e)) => failed(plugin, hash, &e),
            };
            statuses.push(status);
        }
        statuses
    }

    /// Fetches, checks and loads the component of `plugin` (not yet
    /// registered). On failure, the hash of its bytes if they were read.
    pub(crate) async fn prepare_plugin(
        &self,
        plugin: &PluginConfig,
        engine: &Engine,
        sources: &Sources,
    ) -> std::result::Result<Prepared, (Option<ComponentHash>, Error)> {
        let context = format!("plugin {}", plugin.name());
        let place = plugin.place().map_err(|e| (None, e.context(&context)))?;
        let (acquired, toolset) = match &place {
            Place::File(path) => (
                sources.file(&self.base_dir.join(path)).await,
                plugin.toolset.clone().or_else(|| stem(path)),
            ),
            Place::Oci(reference) => (
                sources.oci(reference).await,
                plugin
                    .toolset
                    .clone()
                    .or_else(|| reference.repository().rsplit('/').next().map(str::to_string)),
            ),
        };
        let acquired: Acquired = acquired.map_err(|e| (None, e.context(&context)))?;
        let hash = ComponentHash::of(&acquired.bytes);
        let required = plugin
            .require_signature
            .unwrap_or(self.signatures.require_signature);
        let signature = sources
            .check(&context, &acquired, required)
            .map_err(|e| (Some(hash), e))?;
        let component = engine
            .load(
                acquired.bytes,
                self.load_options(plugin.hash, plugin.limits, &plugin.grants),
            )
            .await
            .map_err(|e| (Some(hash), e.context(&context)))?;
        Ok(Prepared {
            component,
            registration: ComponentRegistration {
                toolset,
                allow_tool_override: plugin.allow_tool_override,
            },
            digest: acquired.digest,
            origin: acquired.origin,
            signature,
        })
    }

    /// The load options of a plugin: its pin, limits and grants (relative
    /// folders resolved against the config file's folder).
    pub(crate) fn load_options(
        &self,
        expected_hash: Option<ComponentHash>,
        limits: LimitsOverride,
        grants: &Grants,
    ) -> LoadOptions {
        let mut grants = grants.clone();
        for dir in &mut grants.dirs {
            dir.host = self.base_dir.join(&dir.host);
        }
        grants.http = grants
            .http
            .into_iter()
            .map(|g| g.resolved_against(&self.base_dir))
            .collect();
        LoadOptions {
            expected_hash,
            limits,
            grants,
            ..LoadOptions::default()
        }
    }
}

/// A file's name without `.wasm`.
pub(crate) fn stem(path: &Path) -> Option<String> {
    path.file_stem().map(|s| s.to_string_lossy().into_owned())
}
