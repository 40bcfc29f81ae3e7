//! The pull cache: what was pulled, kept under the storage folder so that
//! a host restarts without the registry, and a digest-pinned source is
//! pulled only once.
//!
//! ```text
//! DIR/blobs/blake3/HEX                      the component, by its identity
//! DIR/digests/sha256/HEX.json               a manifest digest → {"hash", "signatures"}
//! DIR/tags/REGISTRY/REPOSITORY/TAG.json     a tag → the digest it last pointed to
//! ```
//!
//! Files are written to a temporary name and renamed, so a reader never
//! sees half of one; bytes read back are hashed again and refused if they
//! do not have the identity they are filed under.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use toolhost_core::identity::ComponentHash;

use crate::client::{OciClient, Pulled};
use crate::error::{DistributionError, ErrorKind, Result};
use crate::reference::OciReference;
use crate::signature::Signature;

/// The on-disk cache of pulled components.
#[derive(Debug, Clone)]
pub struct PullCache {
    dir: PathBuf,
}

#[derive(Serialize, Deserialize)]
struct DigestRecord {
    hash: ComponentHash,
    signatures: Vec<String>,
}

#[derive(Serialize, Deserialize)]
struct TagRecord {
    digest: String,
}

/// Where [`PullCache::fetch`] got a component from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "from", rename_all = "snake_case")]
pub enum Origin {
    /// Pulled from the registry now.
    Registry,
    /// Served from the cache: a digest reference already pulled once
    /// (`reason` is `None`), or the registry failed (`reason` says how).
    Cache {
        /// Why the registry was not used, when it failed.
        #[serde(skip_serializing_if = "Option::is_none")]
        reason: Option<String>,
    },
}

/// A component fetched through the cache.
#[derive(Debug, Clone)]
pub struct Fetched {
    /// The bytes, digest and signatures.
    pub pulled: Pulled,
    /// The bytes' identity.
    pub hash: ComponentHash,
    /// Where they came from.
    pub origin: Origin,
}

impl PullCache {
    /// A cache in `dir` (created on first write).
    pub fn new(dir: impl Into<PathBuf>) -> PullCache {
        PullCache { dir: dir.into() }
    }

    /// The folder.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Pulls `reference` through the cache: a digest reference already
    /// cached is served from the cache without asking the registry; any
    /// other is pulled and cached. When the registry cannot be reached (or
    /// fails), a cached copy of the same reference (for a tag: of the digest
    /// it last pointed to) is served, with the reason in [`Origin::Cache`].
    ///
    /// # Errors
    ///
    /// The registry's error, with "no cached copy" when there is none; the
    /// pull's own refusals (a digest mismatch, not a component) are never
    /// papered over by the cache.
    pub async fn fetch(&self, client: &OciClient, reference: &OciReference) -> Result<Fetched> {
        if reference.digest().is_some()
            && let Some(fetched) = self.lookup(reference)?
        {
            return Ok(Fetched {
                origin: Origin::Cache { reason: None },
                ..fetched
            });
        }
        match client.pull(reference).await {
            Ok(pulled) => {
                let hash = self.store(reference, &pulled)?;
                Ok(Fetched {
                    pulled,
                    hash,
                    origin: Origin::Registry,
                })
            }
            Err(e) if matches!(e.kind(), ErrorKind::Unreachable | ErrorKind::Registry) => {
                match self.lookup(reference)? {
                    Some(fetched) => {
                        tracing::warn!(%reference, "registry failed, serving the cached copy: {e}");
                        Ok(Fetched {
                            origin: Origin::Cache {
                                reason: Some(e.message().to_string()),
                            },
                            ..fetched
                        })
                    }
                    None => Err(DistributionError::new(
                        e.kind(),
                        format!(
                            "{}; and there is no cached copy of {reference} in {}",
                            e.message(),
                            self.dir.display()
                        ),
                    )),
                }
            }
            Err(e) => Err(e),
        }
    }

    /// Files `pulled` (pulled from `reference`) and returns its identity.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::Io`] when the cache cannot be written.
    pub fn store(&self, reference: &OciReference, pulled: &Pulled) -> Result<ComponentHash> {
        let hash = ComponentHash::of(&pulled.bytes);
        write_atomic(&self.blob_path(&hash), &pulled.bytes)?;
        let record = DigestRecord {
            hash,
            signatures: pulled.signatures.iter().map(|s| s.text().to_string()).collect(),
        };
        write_json(&self.digest_path(&pulled.digest)?, &record)?;
        if let Some(tag) = reference.tag()
            && reference.digest().is_none()
        {
            let record = TagRecord {
                digest: pulled.digest.clone(),
            };
            write_json(&self.tag_path(reference, tag), &record)?;
        }
        Ok(hash)
    }

    /// The cached copy of `reference`, if any.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::Io`] for an unreadable cache entry; [`ErrorKind::HashMismatch`]
    /// when cached bytes do not have the identity they are filed under.
    pub fn lookup(&self, reference: &OciReference) -> Result<Option<Fetched>> {
        let digest = match (reference.digest(), reference.tag()) {
            (Some(digest), _) => digest.to_string(),
            (None, Some(tag)) => match read_json::<TagRecord>(&self.tag_path(reference, tag))? {
                Some(record) => record.digest,
                None => return Ok(None),
            },
            (None, None) => return Ok(None),
        };
        let Some(record) = read_json::<DigestRecord>(&self.digest_path(&digest)?)? else {
            return Ok(None);
        };
        let path = self.blob_path(&record.hash);
        let bytes = match std::fs::read(&path) {
            Ok(bytes) => bytes,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => {
                return Err(DistributionError::io(
                    format!("cannot read {}", path.display()),
                    e,
                ));
            }
        };
        let hash = ComponentHash::of(&bytes);
        if hash != record.hash {
            return Err(DistributionError::new(
                ErrorKind::HashMismatch,
                format!(
                    "the cached copy {} hashes to {hash}, not {}; delete it to pull again",
                    path.display(),
                    record.hash
                ),
            ));
        }
        let signatures = record
            .signatures
            .iter()
            .map(|s| Signature::parse(s))
            .collect::<Result<Vec<_>>>()?;
        Ok(Some(Fetched {
            pulled: Pulled {
                bytes,
                digest,
                signatures,
            },
            hash,
            origin: Origin::Cache { reason: None },
        }))
    }

    fn blob_path(&self, hash: &ComponentHash) -> PathBuf {
        let text = hash.to_string();
        let hex = text.strip_prefix("blake3:").unwrap_or(&text);
        self.dir.join("blobs").join("blake3").join(hex)
    }

    fn digest_path(&self, digest: &str) -> Result<PathBuf> {
        let hex = digest
            .strip_prefix("sha256:")
            .filter(|h| h.len() == 64 && h.bytes().all(|b| b.is_ascii_hexdigit()))
            .ok_or_else(|| {
                DistributionError::new(ErrorKind::Reference, format!("{digest:?} is not a sha256 digest"))
            })?;
        Ok(self
            .dir
            .join("digests")
            .join("sha256")
            .join(format!("{hex}.json")))
    }

    fn tag_path(&self, reference: &OciReference, tag: &str) -> PathBuf {
        // Registry, repository and tag are restricted by the reference
        // grammar (no `..`, no leading `/`), so they are safe path parts.
        let mut path = self.dir.join("tags").join(reference.registry().replace(':', "_"));
        for part in reference.repository().split('/') {
            path.push(part);
        }
        path.join(format!("{tag}.json"))
    }
}

fn write_json<T: Serialize>(path: &Path, value: &T) -> Result<()> {
    let text =
        serde_json::to_vec_pretty(value).map_err(|e| DistributionError::new(ErrorKind::Io, e.to_string()))?;
    write_atomic(path, &text)
}

fn read_json<T: for<'de> Deserialize<'de>>(path: &Path) -> Result<Option<T>> {
    match std::fs::read(path) {
        Ok(bytes) => serde_json::from_slice(&bytes).map(Some).map_err(|e| {
            DistributionError::new(
                ErrorKind::Io,
                format!("the cache entry {} is damaged: {e}", path.display()),
            )
        }),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(DistributionError::io(
            format!("cannot read {}", path.display()),
            e,
        )),
    }
}

/// Writes `bytes` to a temporary file next to `path`, then renames it.
pub(crate) fn write_atomic(path: &Path, bytes: &[u8]) -> Result<()> {
    let dir = path.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir)
        .map_err(|e| DistributionError::io(format!("cannot create {}", dir.display()), e))?;
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let tmp = path.with_extension(format!("tmp{}-{n}", std::process::id()));
    std::fs::write(&tmp, bytes)
        .map_err(|e| DistributionError::io(format!("cannot write {}", tmp.display()), e))?;
    std::fs::rename(&tmp, path)
        .map_err(|e| DistributionError::io(format!("cannot write {}", path.display()), e))
}
