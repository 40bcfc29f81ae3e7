//! Where plugins come from besides a file: OCI registries (`source =
//! "oci://…"`, `[oci]`), and who must have signed them (`[signatures]`).
//!
//! ```toml
//! [signatures]
//! trusted_keys = ["keys/release.pub"]  # minisign public key files (relative to this file) or base64 keys
//! require_signature = true             # every plugin (or per plugin: require_signature = true)
//!
//! [oci]
//! insecure = ["registry.lan:5000"]     # plain HTTP besides loopback registries
//! poll_interval_s = 300                # re-pull tags every 5 minutes (also on SIGHUP)
//! pull_timeout_s = 300                 # the most one whole pull may take
//!
//! [[plugins]]
//! source = "oci://registry.example.com/tools/hello:1.2"
//! hash = "blake3:..."                  # optional pin, as for a file
//! ```
//!
//! A `source` is pulled at start and on every reload, through the pull
//! cache under the storage folder (`STORAGE/oci`, by manifest digest and by
//! blake3 identity): a digest reference already cached is not pulled again,
//! and when the registry cannot be reached a cached copy is served and the
//! status says so. A file plugin's signature is `FILE.minisig`; a pulled
//! one's travels with it in the registry. Credentials come from the
//! environment or the Docker config file (see
//! [`crate::distribution::auth`]), never from this file.

use serde::Deserialize;

use super::Config;
use crate::distribution::{PublicKey, TrustedKeys};
use crate::error::{Error, ErrorCode, Result};

/// The `[signatures]` section.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SignaturesConfig {
    /// The minisign public keys trusted to sign plugins: key files
    /// (relative to the config file) or base64 keys (`RW…`).
    #[serde(default)]
    pub trusted_keys: Vec<String>,
    /// Refuse every plugin that no trusted key signed.
    #[serde(default)]
    pub require_signature: bool,
}

/// The `[oci]` section.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OciConfig {
    /// Registries (`HOST[:PORT]`) spoken to in plain HTTP besides the
    /// loopback ones.
    #[serde(default)]
    pub insecure: Vec<String>,
    /// While serving, reload the plugins (re-pull every `source`) this often,
    /// in seconds; default: only on SIGHUP.
    pub poll_interval_s: Option<u64>,
    /// The most one pull may take, everything included (authentication,
    /// manifest, component, signatures), in seconds (default 300): a
    /// registry that sends slowly or not at all is given up on then, and
    /// a cached copy served if there is one.
    #[serde(default = "default_pull_timeout_s")]
    pub pull_timeout_s: u64,
}

impl Default for OciConfig {
    fn default() -> Self {
        OciConfig {
            insecure: Vec::new(),
            poll_interval_s: None,
            pull_timeout_s: default_pull_timeout_s(),
        }
    }
}

fn default_pull_timeout_s() -> u64 {
    crate::distribution::client::DEFAULT_PULL_TIMEOUT.as_secs()
}

impl Config {
    /// The trusted keys of `[signatures]`.
    ///
    /// # Errors
    ///
    /// `config` when an entry is neither a readable key file nor a key.
    pub fn trusted_keys(&self) -> Result<TrustedKeys> {
        let keys = self
            .signatures
            .trusted_keys
            .iter()
            .map(|entry| {
                let path = self.base_dir.join(entry);
                if path.exists() {
                    PublicKey::from_file(&path)
                } else {
                    PublicKey::parse(entry, "a key in [signatures] trusted_keys")
                        .map_err(|e| e.context(format!("{} is not a file and", path.display())))
                }
            })
            .collect::<std::result::Result<Vec<_>, _>>()
            .map_err(|e| Error::new(ErrorCode::Config, format!("[signatures] trusted_keys: {e}")))?;
        Ok(TrustedKeys::from_keys(keys))
    }
}
