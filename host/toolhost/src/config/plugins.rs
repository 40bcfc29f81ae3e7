//! `[[plugins]]`: the components a config loads, each on its own.
//!
//! One bad entry (a missing file, an invalid component, a pin mismatch, a
//! refused grant, a duplicate tool name) does not stop the others: it is
//! reported with its reason ([`PluginStatus`], in `toolhost tools --status`
//! and the server's log) and the host serves every other tool.

use std::path::PathBuf;
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use super::Config;
use super::protected::ProtectedPaths;
use crate::capabilities::Grants;
use crate::component::{LoadOptions, LoadedComponent};
use crate::engine::Engine;
use crate::error::{ErrorCode, Result};
use crate::identity::ComponentHash;
use crate::limits::LimitsOverride;
use crate::registry::{ComponentRegistration, RegisterComponent, Registry};

/// One `[[plugins]]` entry.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PluginConfig {
    /// The component file, relative to the config file's folder.
    pub path: PathBuf,
    /// The hash its bytes must have.
    pub hash: Option<ComponentHash>,
    /// The toolset of its tools (default: the file name without `.wasm`).
    pub toolset: Option<String>,
    /// Whether its tools may override built-ins of the same name.
    #[serde(default)]
    pub allow_tool_override: bool,
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

/// What became of one `[[plugins]]` entry at start-up.
#[derive(Debug, Clone, Serialize)]
pub struct PluginStatus {
    /// The entry's `path`, as written.
    pub path: PathBuf,
    /// `loaded` or `failed`.
    pub status: &'static str,
    /// The component's identity, when its bytes could be read.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hash: Option<ComponentHash>,
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
}

impl Config {
    /// Loads every plugin into `engine` and registers its tools, each entry
    /// on its own: one that fails (its grants refused, its file missing or
    /// invalid, a pin mismatch, a duplicate name) registers nothing, is
    /// logged and reported, and the others load. Never fails as a whole.
    pub async fn load_plugins(&self, engine: &Engine, registry: &mut Registry) -> Vec<PluginStatus> {
        let protected = ProtectedPaths::of(self);
        let checks = protected.check_plugins(self);
        let mut statuses = Vec::with_capacity(self.plugins.len());
        for (plugin, check) in self.plugins.iter().zip(checks) {
            let outcome = match check {
                Ok(()) => self.load_plugin(plugin, engine, registry).await,
                Err(e) => Err(e),
            };
            let status = match outcome {
                Ok((component, tools)) => PluginStatus {
                    path: plugin.path.clone(),
                    status: "loaded",
                    hash: Some(component.hash()),
                    tools,
                    error: None,
                    error_code: None,
                    component: Some(component),
                },
                Err(e) => {
                    tracing::error!(plugin = %plugin.path.display(), error_code = %e.code(), "plugin not loaded: {e}");
                    PluginStatus {
                        path: plugin.path.clone(),
                        status: "failed",
                        hash: std::fs::read(self.base_dir.join(&plugin.path))
                            .ok()
                            .map(|b| ComponentHash::of(&b)),
                        tools: Vec::new(),
                        error: Some(e.message().to_string()),
                        error_code: Some(e.code()),
                        component: None,
                    }
                }
            };
            statuses.push(status);
        }
        statuses
    }

    async fn load_plugin(
        &self,
        plugin: &PluginConfig,
        engine: &Engine,
        registry: &mut Registry,
    ) -> Result<(Arc<LoadedComponent>, Vec<String>)> {
        let path = self.base_dir.join(&plugin.path);
        let context = format!("plugin {}", path.display());
        let mut grants = plugin.grants.clone();
        for dir in &mut grants.dirs {
            dir.host = self.base_dir.join(&dir.host);
        }
        grants.http = grants
            .http
            .into_iter()
            .map(|g| g.resolved_against(&self.base_dir))
            .collect();
        let load = LoadOptions {
            expected_hash: plugin.hash,
            limits: plugin.limits,
            grants,
            ..LoadOptions::default()
        };
        let component = engine
            .load_file(&path, load)
            .await
            .map_err(|e| e.context(&context))?;
        let options = ComponentRegistration {
            allow_tool_override: plugin.allow_tool_override,
            ..ComponentRegistration::for_file(&plugin.path, plugin.toolset.clone())
        };
        let tools = registry
            .register_component(&component, &options)
            .map_err(|e| e.context(&context))?;
        Ok((component, tools))
    }
}
