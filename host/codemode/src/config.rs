//! `[tools.codemode]`: whether `run_tools_script` is offered, and its limits.
//!
//! ```toml
//! [tools.codemode]
//! enabled = true
//! timeout_seconds = 60        # wall clock for the whole script, nested calls included (not approvals)
//! max_tool_calls = 50         # tool calls one script may make
//! max_memory_mb = 64          # heap of the script itself
//! max_output_chars = 20000    # cap on the printed output and on the returned value, each
//! exclude = ["mcp_mail__*"]   # tool names scripts can never call (globs)
//! plugin = "target/plugins/wasm32-wasip2/plugin/codemode.wasm"  # the interpreter component
//! ```

use std::path::PathBuf;

use serde::Deserialize;
use toolhost_core::error::{Error, ErrorCode, Result};
use toolhost_core::identity::ComponentHash;
use toolhost_core::registry::names::is_name_byte;

/// Where the interpreter component is, relative to the config file, unless
/// `plugin` says otherwise (where `plugins/build` puts it).
pub const DEFAULT_PLUGIN: &str = "target/plugins/wasm32-wasip2/plugin/codemode.wasm";

/// The `[tools.codemode]` section. Unknown keys are refused.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct CodemodeConfig {
    /// Whether `run_tools_script` is registered (default: no).
    pub enabled: bool,
    /// Wall-clock seconds for a whole script, nested calls included; the
    /// clock stops while a nested call waits for an approval (default 60).
    pub timeout_seconds: u64,
    /// Tool calls one script may make; the call past it raises a
    /// `ValueError` starting `codemode:tool_call_limit` (default 50).
    pub max_tool_calls: u32,
    /// MiB of heap the script itself may use (default 64).
    pub max_memory_mb: u64,
    /// Characters kept of the printed output and, separately, of the
    /// returned value, start and end, with a marker (default 20 000).
    pub max_output_chars: usize,
    /// Glob patterns (`*`, `?`) of tool names scripts can never call.
    pub exclude: Vec<String>,
    /// The interpreter component (default [`DEFAULT_PLUGIN`], relative to
    /// the config file's folder).
    pub plugin: PathBuf,
    /// The hash the component must have (a pin), if any.
    pub hash: Option<ComponentHash>,
}

impl Default for CodemodeConfig {
    fn default() -> Self {
        CodemodeConfig {
            enabled: false,
            timeout_seconds: 60,
            max_tool_calls: 50,
            max_memory_mb: 64,
            max_output_chars: 20_000,
            exclude: Vec::new(),
            plugin: PathBuf::from(DEFAULT_PLUGIN),
            hash: None,
        }
    }
}

impl CodemodeConfig {
    /// Checks the values.
    ///
    /// # Errors
    ///
    /// `config` for a zero limit, a memory budget past 1 GiB, or an
    /// `exclude` pattern with a character no tool name can have (it could
    /// never match: a typo).
    pub fn validate(&self) -> Result<()> {
        let bad = |what: &str| Err(Error::new(ErrorCode::Config, format!("[tools.codemode] {what}")));
        if self.timeout_seconds == 0 {
            return bad("timeout_seconds must be at least 1");
        }
        if self.max_output_chars == 0 {
            return bad("max_output_chars must be at least 1");
        }
        if self.max_memory_mb == 0 || self.max_memory_mb > 1024 {
            return bad("max_memory_mb must be between 1 and 1024");
        }
        for pattern in &self.exclude {
            if pattern.is_empty() || !pattern.bytes().all(|b| is_name_byte(b) || b == b'*' || b == b'?') {
                return bad(&format!(
                    "exclude pattern {pattern:?} can never match a tool name (names use A-Z a-z 0-9 _ -; patterns add * and ?)"
                ));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn limits_and_patterns_are_checked() {
        assert!(CodemodeConfig::default().validate().is_ok());
        for bad in [
            CodemodeConfig {
                timeout_seconds: 0,
                ..Default::default()
            },
            CodemodeConfig {
                max_memory_mb: 4096,
                ..Default::default()
            },
            CodemodeConfig {
                exclude: vec!["mcp.mail.*".into()],
                ..Default::default()
            },
        ] {
            assert_eq!(bad.validate().unwrap_err().code(), ErrorCode::Config);
        }
    }
}
