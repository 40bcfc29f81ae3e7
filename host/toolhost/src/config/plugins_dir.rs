//! `[plugins_dir]`: a folder of components watched while serving (see
//! [`crate::live`]).
//!
//! ```toml
//! [plugins_dir]
//! path = "plugins.d"          # relative to this file; `toolhost serve --plugins DIR` sets it too
//! settle_ms = 300             # a file must be unchanged this long before it is loaded
//! require_signature = true    # default: [signatures] require_signature
//!
//! [plugins_dir.grants.probe]  # by file name (probe.wasm): carries over when the file is replaced
//! env = ["PROBE_VISIBLE"]
//!
//! [plugins_dir.grants."blake3:9f2c…"]  # by hash: only these exact bytes
//! dirs = [{ host = "data", guest = "/data" }]
//! ```
//!
//! A component `NAME.wasm` in the folder registers its tools in toolset
//! `NAME`; its signature is `NAME.wasm.minisig`. Files whose name starts
//! with a dot are ignored (write under a hidden name, then rename, for an
//! atomic swap). Grants are looked up by hash first, then by name: a grant
//! given by hash does not carry over to a new version, one given by name
//! does. Every file is admitted as every other plugin is (see
//! [`crate::admission`]): a grant that reaches a protected path is refused
//! here as in `[[plugins]]`.

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde::Deserialize;

use crate::capabilities::Grants;
use crate::limits::LimitsOverride;

/// The `[plugins_dir]` section.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PluginsDirConfig {
    /// The folder, relative to the config file.
    pub path: PathBuf,
    /// How long a file must stay unchanged (size and modification time)
    /// before it is loaded, in milliseconds.
    #[serde(default = "default_settle_ms")]
    pub settle_ms: u64,
    /// Refuse components no trusted key signed (default: `[signatures]
    /// require_signature`).
    pub require_signature: Option<bool>,
    /// Limits for every call of the folder's tools.
    #[serde(default)]
    pub limits: LimitsOverride,
    /// Grants by file name (`NAME` for `NAME.wasm`) or by hash
    /// (`blake3:…`).
    #[serde(default)]
    pub grants: BTreeMap<String, Grants>,
}

fn default_settle_ms() -> u64 {
    300
}

impl PluginsDirConfig {
    /// A folder with the defaults and no grants.
    pub fn new(path: impl Into<PathBuf>) -> Self {
        PluginsDirConfig {
            path: path.into(),
            settle_ms: default_settle_ms(),
            require_signature: None,
            limits: LimitsOverride::default(),
            grants: BTreeMap::new(),
        }
    }
}
