//! `[[plugins]]`: the components a config loads, each on its own, and
//! the status of every plugin a host serves.
//!
//! One bad entry (a missing file, an unreachable registry with no cached
//! copy, an invalid component, a pin or digest mismatch, a refused
//! signature or grant, a duplicate tool name) does not stop the others: it
//! is reported with its reason ([`PluginStatus`], in `toolhost tools
//! --status` and the server's log) and the host serves every other tool.
//! Every entry is admitted as every other plugin is: see
//! [`crate::admission`].

use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use crate::admission::{Admitted, PluginRequest, Via};
use crate::capabilities::{DirGrant, Grants};
use crate::component::LoadedComponent;
use crate::distribution::{Origin, SignatureStatus};
use crate::error::{Error, ErrorCode};
use crate::identity::ComponentHash;
use crate::limits::LimitsOverride;

/// One `[[plugins]]` entry: a `path` or a `source`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PluginConfig {
    /// The component file, relative to the config file's folder.
    pub path: Option<PathBuf>,
    /// Or where to pull it from: `oci://HOST[:PORT]/REPO:TAG` or
    /// `…@sha256:DIGEST` (see [`super::distribution`]).
    pub source: Option<String>,
    /// Or which standard plugin that comes with toolhost: `files`,
    /// `memory`, `time`, `calc` or `http` (see [`crate::standard`]).
    pub bundled: Option<String>,
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
        match (&self.path, &self.source, &self.bundled) {
            (Some(path), _, _) => path.display().to_string(),
            (None, Some(source), _) => source.clone(),
            (None, None, Some(name)) => format!("bundled:{name}"),
            (None, None, None) => "(an entry with neither path, source nor bundled)".into(),
        }
    }

    /// Its file, relative to the config file's folder (none for a source).
    pub fn file(&self) -> Option<&Path> {
        self.path.as_deref()
    }
}

/// What became of one plugin: a `[[plugins]]` entry (at start-up, or at
/// the last reload), a file of the plugins folder, or a component loaded
/// by an admin, the command line or the library.
#[derive(Debug, Clone, Serialize)]
pub struct PluginStatus {
    /// The door it came in by.
    pub via: Via,
    /// The entry's `path`, as written.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub path: Option<PathBuf>,
    /// The entry's `source`, as written.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
    /// The standard plugin's name, for a bundled one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bundled: Option<String>,
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
    /// What the operator should know about a loaded component (grants it
    /// does not declare: see `LoadedComponent::warnings`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
    /// The loaded component.
    #[serde(skip)]
    pub component: Option<Arc<LoadedComponent>>,
    /// The folders it holds (its directory grants, resolved), while loaded.
    #[serde(skip)]
    pub dirs: Vec<DirGrant>,
}

impl PluginStatus {
    /// Whether the entry loaded and registered its tools.
    pub fn is_loaded(&self) -> bool {
        self.component.is_some()
    }

    /// The status of `request`, admitted as `admitted` through `via` and
    /// registered with `tools`.
    pub(crate) fn loaded(via: Via, request: &PluginRequest, admitted: &Admitted, tools: Vec<String>) -> Self {
        PluginStatus {
            via,
            path: request.path(),
            source: request.source(),
            bundled: request.bundled(),
            status: "loaded",
            hash: Some(admitted.component.hash()),
            digest: admitted.digest.clone(),
            origin: admitted.origin.clone(),
            signature: Some(admitted.signature.clone()),
            tools,
            error: None,
            error_code: None,
            warnings: admitted.component.warnings(),
            component: Some(Arc::clone(&admitted.component)),
            dirs: admitted.dirs.clone(),
        }
    }

    /// The status of `request`, refused through `via` with `error` (`hash`:
    /// its bytes', if read). Logged.
    pub(crate) fn failed(
        via: Via,
        request: &PluginRequest,
        hash: Option<ComponentHash>,
        error: &Error,
    ) -> Self {
        tracing::error!(plugin = %request.name, ?via, error_code = %error.code(), "plugin not loaded: {error:#}");
        PluginStatus {
            via,
            path: request.path(),
            source: request.source(),
            bundled: request.bundled(),
            status: "failed",
            hash,
            digest: None,
            origin: None,
            signature: None,
            tools: Vec::new(),
            error: Some(error.with_causes()),
            error_code: Some(error.code()),
            warnings: Vec::new(),
            component: None,
            dirs: Vec::new(),
        }
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
