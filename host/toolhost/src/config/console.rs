//! `[console]`: the operator's console at `GET /console` on the HTTP
//! listener (see [`toolhost_mcp::console`] for what it shows and how it is
//! protected).
//!
//! ```toml
//! [console]
//! enabled = true               # off by default: nothing is kept then
//! read_scope = "console:read"  # OAuth tokens with it see the console
//! operate_scope = "console:operate"  # and with this, decide approvals
//! ```

use std::sync::Arc;

use serde::Deserialize;
use serde_json::{Value, json};

use crate::error::{Error, ErrorCode, Result};
use crate::live::LivePlugins;
use toolhost_core::call_log::CallLog;
use toolhost_mcp::console::{ConsoleScopes, DEFAULT_MAX_PENDING, PluginsFn};

/// The `[console]` section.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ConsoleConfig {
    /// Serve the console at `/console` on `serve --http`'s listener, and
    /// keep what it shows (the calls' ring). Off: nothing is kept.
    #[serde(default)]
    pub enabled: bool,
    /// The OAuth scope that lets a token see the console; none: no OAuth
    /// token sees it (the static token always does).
    #[serde(default)]
    pub read_scope: Option<String>,
    /// The OAuth scope that lets a token see the console and decide
    /// approvals on it; none: only the static token decides.
    #[serde(default)]
    pub operate_scope: Option<String>,
    /// How many finished calls it keeps and shows.
    #[serde(default = "default_recent_calls")]
    pub recent_calls: usize,
    /// How many approvals may wait for the operator at once; past them a
    /// call needing approval is refused unasked.
    #[serde(default = "default_max_pending")]
    pub max_pending: usize,
}

fn default_recent_calls() -> usize {
    200
}

fn default_max_pending() -> usize {
    DEFAULT_MAX_PENDING
}

impl Default for ConsoleConfig {
    fn default() -> Self {
        ConsoleConfig {
            enabled: false,
            read_scope: None,
            operate_scope: None,
            recent_calls: default_recent_calls(),
            max_pending: default_max_pending(),
        }
    }
}

impl ConsoleConfig {
    /// Checks the section.
    ///
    /// # Errors
    ///
    /// `config` for a count out of its range or an empty scope.
    pub fn validate(&self) -> Result<()> {
        let bad = |key: &str, why: &str| Error::new(ErrorCode::Config, format!("[console] {key}: {why}"));
        if !(1..=toolhost_core::call_log::MAX_CAPACITY).contains(&self.recent_calls) {
            return Err(bad("recent_calls", "must be from 1 to 10000"));
        }
        if !(1..=4096).contains(&self.max_pending) {
            return Err(bad("max_pending", "must be from 1 to 4096"));
        }
        for (key, scope) in [
            ("read_scope", &self.read_scope),
            ("operate_scope", &self.operate_scope),
        ] {
            if scope
                .as_ref()
                .is_some_and(|s| s.trim().is_empty() || s.contains(char::is_whitespace))
            {
                return Err(bad(key, "a scope is one word, not empty"));
            }
        }
        Ok(())
    }

    /// The scopes that open the console.
    pub fn scopes(&self) -> ConsoleScopes {
        ConsoleScopes {
            read: self.read_scope.clone(),
            operate: self.operate_scope.clone(),
        }
    }
}

/// What the console shows of the plugins of `live`: each, whatever its
/// door, with its status, hash, WIT version, tools, granted capabilities,
/// limits, and the calls of its tools `calls` counted (calls, errors,
/// fuel, peak memory).
pub fn plugins_view(live: Arc<LivePlugins>, calls: Arc<CallLog>) -> PluginsFn {
    Arc::new(move || {
        let usage = calls.components();
        let all = [live.entries(), live.folder(), live.loaded()].concat();
        all.into_iter()
            .map(|status| {
                let name = status
                    .bundled
                    .clone()
                    .or_else(|| status.source.clone())
                    .or_else(|| status.path.as_ref().map(|p| p.display().to_string()))
                    .unwrap_or_default();
                let counted = status
                    .hash
                    .and_then(|h| usage.get(&h).copied())
                    .unwrap_or_default();
                let component = status.component.as_ref();
                json!({
                    "name": name,
                    "via": status.via,
                    "status": status.status,
                    "hash": status.hash,
                    "version": component.map(|c| c.world().version()),
                    "tools": status.tools,
                    "grants": component.map(|c| json!(c.capabilities())),
                    "limits": component.map(|c| json!(c.limits())),
                    "calls": counted.calls,
                    "errors": counted.errors,
                    "fuel": counted.fuel,
                    "peak_memory_bytes": counted.peak_memory_bytes,
                    "error": status.error,
                    "warnings": status.warnings,
                })
            })
            .collect::<Vec<Value>>()
    })
}
