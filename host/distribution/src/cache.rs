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
//!
//! Every file is read through [`toolhost_core::bounded::read_file`]: a
//! regular file only (a named pipe or a device put in place of an entry is
//! refused at once, never waited on), of at most the cache's
//! `max_blob_bytes` for a blob and [`MAX_RECORD_BYTES`] for a record; past
//! its cap, [`ErrorKind::TooLarge`]. [`PullCache::fetch`] does its file
//! I/O on tokio's blocking pool; [`PullCache::lookup`] and
//! [`PullCache::store`] are blocking.
//!
//! When the registry fails, [`PullCache::fetch`] serves the cached copy for
//! [`ErrorKind::Unreachable`], [`ErrorKind::Registry`] and
//! [`ErrorKind::Timeout`] (a registry that hangs past the pull's deadline
//! is, for this purpose, one that cannot be reached), and never for a
//! refusal of what the registry sent ([`ErrorKind::DigestMismatch`],
//! [`ErrorKind::TooLarge`], [`ErrorKind::NotWasm`], …) nor for
//! [`ErrorKind::NotFound`] or [`ErrorKind::Unauthorized`]: those are
//! answers, and the operator must see them.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use toolhost_core::bounded::read_file;
use toolhost_core::identity::ComponentHash;

use crate::client::{OciClient, Pulled};
use crate::error::{DistributionError, ErrorKind, Result};
use crate::reference::OciReference;
use crate::signature::Signature;

/// The most bytes of a cache record (a tag's or a digest's `.json`): a
/// digest record holds the signatures' text, at most
/// [`MAX_SIGNATURES`](crate::registry::MAX_SIGNATURES) (32) of
/// [`MAX_SIGNATURE_BYTES`](crate::signature::MAX_SIGNATURE_BYTES) (64 KiB)
/// each, every byte at most 6 once escaped in JSON: 12 MiB at worst.
pub const MAX_RECORD_BYTES: u64 = 16 << 20;

/// The on-disk cache of pulled components; cheap to clone.
#[derive(Debug, Clone)]
pub struct PullCache {
    dir: PathBuf,
    max_blob_bytes: u64,
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
    /// A cache in `dir` (created on first write) whose cached blobs are
    /// read only up to `max_blob_bytes`: give it the client's
    /// [`ClientOptions::max_blob_bytes`](crate::ClientOptions::max_blob_bytes),
    /// so that what was pulled can be read back, and nothing larger.
    pub fn new(dir: impl Into<PathBuf>, max_blob_bytes: u64) -> PullCache {
        PullCache {
            dir: dir.into(),
            max_blob_bytes,
        }
    }

    /// The cap of a cached blob, in bytes.
    pub fn max_blob_bytes(&self) -> u64 {
        self.max_blob_bytes
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
    /// The registry failures that fall back to the cache are
    /// [`ErrorKind::Unreachable`], [`ErrorKind::Registry`] and
    /// [`ErrorKind::Timeout`] (see the [module docs](self)). Reading and
    /// writing the cache runs on tokio's blocking pool.
    ///
    /// # Errors
    ///
    /// The registry's error, with "no cached copy" when there is none; the
    /// pull's own refusals (a digest mismatch, bytes past a cap, not a
    /// component) are never papered over by the cache; the cache's own
    /// errors, as [`PullCache::lookup`] and [`PullCache::store`].
    pub async fn fetch(&self, client: &OciClient, reference: &OciReference) -> Result<Fetched> {
        if reference.digest().is_some()
            && let Some(fetched) = self.lookup_async(reference).await?
        {
            return Ok(Fetched {
                origin: Origin::Cache { reason: None },
                ..fetched
            });
        }
        match client.pull(reference).await {
            Ok(pulled) => {
                let cache = self.clone();
                let at = reference.clone();
                let (pulled, hash) = blocking(move || {
                    let hash = cache.store(&at, &pulled)?;
                    Ok((pulled, hash))
                })
                .await?;
                Ok(Fetched {
                    pulled,
                    hash,
                    origin: Origin::Registry,
                })
            }
            Err(e)
                if matches!(
                    e.kind(),
                    ErrorKind::Unreachable | ErrorKind::Registry | ErrorKind::Timeout
                ) =>
            {
                match self.lookup_async(reference).await? {
                    Some(fetched) => {
                        tracing::warn!(%reference, "registry failed, serving the cached copy: {e}");
                        Ok(Fetched {
                            origin: Origin::Cache {
                                reason: Some(e.with_causes()),
                            },
                            ..fetched
                        })
                    }
                    None => Err(DistributionError::new(
                        e.kind(),
                        format!(
                            "{}; and there is no cached copy of {reference} in {}",
                            e.with_causes(),
                            self.dir.display()
                        ),
                    )),
                }
            }
            Err(e) => Err(e),
        }
    }

    /// [`PullCache::lookup`] on tokio's blocking pool.
    async fn lookup_async(&self, reference: &OciReference) -> Result<Option<Fetched>> {
        let cache = self.clone();
        let reference = reference.clone();
        blocking(move || cache.lookup(&reference)).await
    }

    /// Files `pulled` (pulled from `reference`) and returns its identity.
    /// Blocking.
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

    /// The cached copy of `reference`, if any. Blocking; reads only
    /// regular files, each within its cap (see the [module docs](self)).
    ///
    /// # Errors
    ///
    /// [`ErrorKind::Io`] for an unreadable cache entry or one that is not a
    /// regular file; [`ErrorKind::TooLarge`] for a blob past the cache's
    /// `max_blob_bytes` or a record past [`MAX_RECORD_BYTES`];
    /// [`ErrorKind::HashMismatch`] when cached bytes do not have the
    /// identity they are filed under.
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
        let bytes = match read_file(&path, self.max_blob_bytes) {
            Ok(bytes) => bytes,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => {
                return Err(cache_read_error("the cached blob", &path, e));
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
    match read_file(path, MAX_RECORD_BYTES) {
        Ok(bytes) => serde_json::from_slice(&bytes).map(Some).map_err(|e| {
            DistributionError::new(
                ErrorKind::Io,
                format!("the cache entry {} is damaged: {e}", path.display()),
            )
        }),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(cache_read_error("the cache entry", path, e)),
    }
}

/// The error for a cache file that cannot be read (a pipe, a device, past
/// its cap, unreadable), with what to do about it.
fn cache_read_error(what: &str, path: &Path, error: std::io::Error) -> DistributionError {
    DistributionError::file(what, path, error, ErrorKind::Io)
        .context("the pull cache (delete the file to pull again)")
}

/// Runs the cache's file I/O `work` on tokio's blocking pool.
async fn blocking<T: Send + 'static>(work: impl FnOnce() -> Result<T> + Send + 'static) -> Result<T> {
    tokio::task::spawn_blocking(work).await.map_err(|e| {
        DistributionError::new(
            ErrorKind::Io,
            format!("the pull cache's file work could not run: {e}"),
        )
    })?
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
