//! # Admission: the one way in
//!
//! Every plugin that enters a host, whatever door it comes through, passes
//! the same checks in the same order, here and nowhere else:
//!
//! | door ([`Via`]) | what asks |
//! |---|---|
//! | `config` | a `[[plugins]]` entry at start |
//! | `reload` | the same entry again, on `SIGHUP` or an `[oci] poll_interval_s` poll |
//! | `plugins_folder` | a `NAME.wasm` in the watched `[plugins_dir]` |
//! | `admin` | `toolhost__load_component` (`serve --admin`) |
//! | `command_line` | `serve --plugin PATH` |
//! | `library` | an application calling [`LivePlugins::load`](crate::live::LivePlugins::load) |
//!
//! | step | rule | refused with |
//! |---|---|---|
//! | bytes | a file is read only if it is a regular file (not a named pipe, device or folder), off the async workers; an `oci://` source is pulled within one deadline (`[oci] pull_timeout_s`), every response capped, the blob at most its declared size (see `toolhost_distribution::registry`) | `io`, `timeout`, `unavailable`, `hash_mismatch` |
//! | size | at most `[admission] max_component_bytes` (64 MiB), checked before reading a file, and before downloading a blob from its manifest's declared size | `too_large` |
//! | identity | the blake3 hash of the bytes | |
//! | pins | `hash = "blake3:…"`, a grant given by hash, a digest reference | `hash_mismatch` |
//! | signature | `require_signature`, against `[signatures] trusted_keys` (a bundled standard plugin is as trusted as the binary) | `untrusted` |
//! | grants | no directory grant reaches a protected path; a plugin's storage is its own (see [`ProtectedPaths`]) | `config` |
//! | claims, compile | tool count, names, schemas and description sizes; a component of a served world importing only what is granted | `invalid_component`, `unsupported_world`, `missing_imports`, `capability_not_granted` |
//! | register | all its tools or none, in one registry change | `duplicate_tool` |
//!
//! The steps up to the grants are [`Admission`]'s; registering is
//! [`LivePlugins`](crate::live::LivePlugins)'s, which holds the lock that
//! makes "a plugin's storage is its own" hold across doors. Only this module
//! can make the [`Acquired`] bytes that admission takes, so a door cannot
//! skip the bounded read.
//!
//! Beneath admission lie the runtime's own steps, [`Engine::load`] (the
//! claims and the compile, and a size cap of its own) and
//! `RegisterComponent` (registering into a bare
//! [`Registry`](crate::registry::Registry)): a host that calls them directly
//! takes on the signature, grant and storage checks itself.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;

use serde::Serialize;

use crate::capabilities::{DirGrant, Grants};
use crate::component::{LoadOptions, LoadedComponent, read_component_file};
use crate::config::protected::{ProtectedPaths, resolve};
use crate::config::{Config, PluginConfig};
use crate::distribution::{
    ClientOptions, OciClient, OciReference, Origin, PullCache, Signature, SignatureStatus, TrustedKeys,
};
use crate::engine::Engine;
use crate::error::{Error, ErrorCode, Result};
use crate::identity::ComponentHash;
use crate::limits::LimitsOverride;
use crate::registry::ComponentRegistration;

/// The door a plugin came in by (in its status and the log).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum Via {
    /// A `[[plugins]]` entry, at start.
    Config,
    /// A `[[plugins]]` entry fetched again (`SIGHUP`, the OCI poll).
    Reload,
    /// A file of the watched plugins folder.
    PluginsFolder,
    /// The `toolhost__load_component` admin tool.
    Admin,
    /// `toolhost serve --plugin PATH`.
    CommandLine,
    /// An application embedding the library.
    Library,
}

/// Where a plugin's bytes are.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Place {
    /// A component file (relative paths are relative to the config file's
    /// folder), with its signature `FILE.minisig` if there is one.
    File(PathBuf),
    /// An OCI artifact, pulled through the pull cache with its signatures.
    Oci(OciReference),
    /// A standard plugin that comes with toolhost ([`crate::standard`]):
    /// as trusted as the binary, so no signature is asked of it.
    Bundled(String),
    /// Bytes already in memory (the library's door), with the signatures
    /// that come with them.
    Bytes {
        /// The component.
        bytes: Arc<[u8]>,
        /// Its detached signatures.
        signatures: Vec<Signature>,
    },
}

/// What a door asks to admit: where the bytes are and on what terms.
#[derive(Debug, Clone)]
pub struct PluginRequest {
    /// How the plugin is named in messages and its status (its path or
    /// source, as written).
    pub name: String,
    /// Where its bytes are.
    pub place: Place,
    /// The hash its bytes must have.
    pub pin: Option<ComponentHash>,
    /// Refuse it unless a trusted key signed it (default: `[signatures]
    /// require_signature`).
    pub require_signature: Option<bool>,
    /// Limits for every call of its tools, and for what it may claim.
    pub limits: LimitsOverride,
    /// What the operator grants it.
    pub grants: Grants,
    /// Grants for exact bytes only: when the bytes hash to a key, its grants
    /// replace [`PluginRequest::grants`] and pin the bytes (the plugins
    /// folder's `[plugins_dir.grants."blake3:…"]`).
    pub grants_by_hash: BTreeMap<ComponentHash, Grants>,
    /// The toolset of its tools (default: the file name without `.wasm`, or
    /// the repository's last part).
    pub toolset: Option<String>,
    /// Whether its tools may override built-ins of the same name.
    pub allow_tool_override: bool,
}

impl PluginRequest {
    /// A request for the component file at `path`, with no grants, default
    /// limits and the config's signature policy.
    pub fn file(path: impl Into<PathBuf>) -> PluginRequest {
        let path = path.into();
        PluginRequest {
            name: path.display().to_string(),
            place: Place::File(path),
            pin: None,
            require_signature: None,
            limits: LimitsOverride::default(),
            grants: Grants::default(),
            grants_by_hash: BTreeMap::new(),
            toolset: None,
            allow_tool_override: false,
        }
    }

    /// A request for `bytes` held in memory, named `name` in messages.
    pub fn bytes(name: impl Into<String>, bytes: impl Into<Arc<[u8]>>) -> PluginRequest {
        PluginRequest {
            name: name.into(),
            place: Place::Bytes {
                bytes: bytes.into(),
                signatures: Vec::new(),
            },
            ..PluginRequest::file("")
        }
    }

    /// The request of a `[[plugins]]` entry.
    ///
    /// # Errors
    ///
    /// `config` for an entry with neither or both of `path` and `source`, or
    /// a malformed `source`.
    pub fn from_entry(entry: &PluginConfig) -> Result<PluginRequest> {
        let place = match (&entry.path, &entry.source, &entry.bundled) {
            (Some(path), None, None) => Place::File(path.clone()),
            (None, Some(source), None) => Place::Oci(OciReference::parse(source)?),
            (None, None, Some(name)) => {
                crate::standard::get(name)?;
                Place::Bundled(name.clone())
            }
            _ => {
                return Err(Error::new(
                    ErrorCode::Config,
                    format!(
                        "[[plugins]] {}: give exactly one of `path` (a file), `source` (oci://…) and `bundled` (a standard plugin: files, memory, time, calc, http)",
                        entry.name()
                    ),
                ));
            }
        };
        Ok(PluginRequest {
            name: entry.name(),
            place,
            pin: entry.hash,
            require_signature: entry.require_signature,
            limits: entry.limits,
            grants: entry.grants.clone(),
            grants_by_hash: BTreeMap::new(),
            toolset: entry.toolset.clone(),
            allow_tool_override: entry.allow_tool_override,
        })
    }

    /// The toolset its tools go in: the one asked for, else the file's name
    /// without `.wasm`, else the repository's last part (none for bytes:
    /// `wasm-HASH12`).
    pub fn toolset(&self) -> Option<String> {
        self.toolset.clone().or_else(|| match &self.place {
            Place::File(path) => path.file_stem().map(|s| s.to_string_lossy().into_owned()),
            Place::Oci(reference) => reference.repository().rsplit('/').next().map(str::to_string),
            Place::Bundled(name) => Some(name.clone()),
            Place::Bytes { .. } => None,
        })
    }

    /// The path its status reports (a file's, as written).
    pub(crate) fn path(&self) -> Option<PathBuf> {
        match &self.place {
            Place::File(path) => Some(path.clone()),
            _ => None,
        }
    }

    /// The standard plugin its status reports, for a bundled one.
    pub(crate) fn bundled(&self) -> Option<String> {
        match &self.place {
            Place::Bundled(name) => Some(name.clone()),
            _ => None,
        }
    }

    /// The source its status reports (an `oci://` reference, as written).
    pub(crate) fn source(&self) -> Option<String> {
        match &self.place {
            Place::Oci(reference) => Some(reference.to_string()),
            _ => None,
        }
    }
}

/// A component's bytes and what came with them, read within the bounds.
/// Only [`Admission::acquire`] makes one.
#[derive(Debug, Clone)]
pub struct Acquired {
    bytes: Vec<u8>,
    hash: ComponentHash,
    /// Whether the bytes came with the binary.
    bundled: bool,
    signatures: Vec<Signature>,
    digest: Option<String>,
    origin: Option<Origin>,
}

impl Acquired {
    /// The bytes' identity.
    pub fn hash(&self) -> ComponentHash {
        self.hash
    }

    /// The manifest digest of a pulled component.
    pub fn digest(&self) -> Option<&str> {
        self.digest.as_deref()
    }

    /// Where a pulled component came from (the registry or the cache).
    pub fn origin(&self) -> Option<&Origin> {
        self.origin.as_ref()
    }
}

/// A component that passed every check up to registering.
#[derive(Debug)]
pub struct Admitted {
    /// The loaded component.
    pub component: Arc<LoadedComponent>,
    /// How its tools are registered.
    pub registration: ComponentRegistration,
    /// The manifest digest of a pulled component.
    pub digest: Option<String>,
    /// Where a pulled component came from.
    pub origin: Option<Origin>,
    /// How its signatures were judged.
    pub signature: SignatureStatus,
    /// Its directory grants, resolved: the folders it holds.
    pub dirs: Vec<DirGrant>,
}

/// The directory grants another admitted plugin holds: a plugin's storage
/// is its own.
#[derive(Debug, Clone)]
pub struct Held {
    /// The plugin, as named in messages.
    pub owner: String,
    /// Its directory grants, resolved.
    pub dirs: Vec<DirGrant>,
}

/// A refusal: the error, and the bytes' identity if they were read.
pub type Refusal = (Option<ComponentHash>, Error);

/// The checks every plugin passes (see the [module docs](self)), made once
/// from a config and shared by every door.
#[derive(Debug, Clone)]
pub struct Admission {
    engine: Engine,
    max_component_bytes: u64,
    base_dir: PathBuf,
    protected: ProtectedPaths,
    trusted: TrustedKeys,
    require_signature: bool,
    client: OciClient,
    cache: PullCache,
}

impl Admission {
    /// The admission of `config`'s host: its size cap, protected paths,
    /// trusted keys, signature policy, registries and pull cache, loading
    /// into `engine`.
    ///
    /// # Errors
    ///
    /// `config` when a trusted key cannot be read.
    pub fn new(engine: Engine, config: &Config) -> Result<Admission> {
        Ok(Admission {
            max_component_bytes: config.admission.max_component_bytes,
            protected: ProtectedPaths::of(config),
            trusted: config.trusted_keys()?,
            require_signature: config.signatures.require_signature,
            client: OciClient::new(ClientOptions {
                insecure: config.oci.insecure.clone(),
                max_blob_bytes: config.admission.max_component_bytes,
                pull_timeout: std::time::Duration::from_secs(config.oci.pull_timeout_s),
            }),
            cache: PullCache::new(
                config.storage_dir().join("oci"),
                config.admission.max_component_bytes,
            ),
            base_dir: config.base_dir.clone(),
            engine,
        })
    }

    /// The engine components are loaded into.
    pub fn engine(&self) -> &Engine {
        &self.engine
    }

    /// The paths no grant may reach.
    pub fn protected(&self) -> &ProtectedPaths {
        &self.protected
    }

    /// The most bytes a component may have (`[admission]
    /// max_component_bytes`).
    pub fn max_component_bytes(&self) -> u64 {
        self.max_component_bytes
    }

    /// Reads or pulls the bytes at `place` within the bounds (the first two
    /// steps): a regular file of at most the cap, read off the async
    /// workers with its signature; or a pull.
    ///
    /// # Errors
    ///
    /// `too_large`, `io` (unreadable, or not a regular file), the pull's
    /// errors, a signature file that cannot be read.
    pub async fn acquire(&self, place: &Place) -> Result<Acquired> {
        let max = self.max_component_bytes();
        let (bytes, signatures, digest, origin) = match place {
            Place::File(path) => {
                let path = self.base_dir.join(path);
                let bytes = read_component_file(&path, max).await?;
                let signature = tokio::task::spawn_blocking(move || Signature::next_to(&path))
                    .await
                    .map_err(|e| Error::internal(format!("reading a signature failed: {e}")))??;
                (bytes, signature.into_iter().collect(), None, None)
            }
            Place::Oci(reference) => {
                let fetched = self.cache.fetch(&self.client, reference).await?;
                (
                    fetched.pulled.bytes,
                    fetched.pulled.signatures,
                    Some(fetched.pulled.digest),
                    Some(fetched.origin),
                )
            }
            Place::Bundled(name) => (crate::standard::get(name)?.bytes.to_vec(), Vec::new(), None, None),
            Place::Bytes { bytes, signatures } => (bytes.to_vec(), signatures.clone(), None, None),
        };
        if bytes.len() as u64 > max {
            return Err(Error::new(
                ErrorCode::TooLarge,
                format!(
                    "the component is {} bytes, more than the cap of {max} bytes (max_component_bytes); refusing it",
                    bytes.len()
                ),
            ));
        }
        Ok(Acquired {
            hash: ComponentHash::of(&bytes),
            bundled: matches!(place, Place::Bundled(_)),
            bytes,
            signatures,
            digest,
            origin,
        })
    }

    /// The steps after the bytes: pins, signature, grants (against the
    /// protected paths and the folders `held` by other plugins), claims
    /// and compile. Registering is the caller's
    /// ([`LivePlugins`](crate::live::LivePlugins)).
    ///
    /// # Errors
    ///
    /// The step that refused it, with the bytes' identity.
    pub async fn admit(
        &self,
        request: &PluginRequest,
        acquired: Acquired,
        held: &[Held],
    ) -> std::result::Result<Admitted, Refusal> {
        let hash = acquired.hash;
        let refuse = |e: Error| (Some(hash), e.context(format!("plugin {}", request.name)));
        let (grants, pin) = match request.grants_by_hash.get(&hash) {
            // Grants given by hash hold for these bytes only.
            Some(grants) => (grants.clone(), Some(hash)),
            None => (request.grants.clone(), request.pin),
        };
        if let Some(pin) = pin
            && pin != hash
        {
            return Err(refuse(Error::new(
                ErrorCode::HashMismatch,
                format!(
                    "the component's bytes hash to {hash}, but the pin expects {pin}; refusing to load it (update the pin only if you trust the new bytes)"
                ),
            )));
        }
        let required = request.require_signature.unwrap_or(self.require_signature);
        let signature = if acquired.bundled {
            SignatureStatus::Bundled
        } else {
            self.trusted
                .check(
                    &format!("plugin {}", request.name),
                    &acquired.bytes,
                    &acquired.signatures,
                    required,
                )
                .map_err(|e| (Some(hash), Error::from(e)))?
        };
        let grants = self.resolved(grants);
        let dirs: Vec<DirGrant> = grants
            .dirs
            .iter()
            .map(|g| DirGrant {
                host: resolve(&g.host),
                ..g.clone()
            })
            .collect();
        for grant in &dirs {
            self.protected
                .check_grant(&request.name, grant)
                .map_err(|e| (Some(hash), e))?;
            for other in held {
                for theirs in &other.dirs {
                    self.protected
                        .check_storage_overlap(&request.name, grant, &other.owner, theirs)
                        .map_err(|e| (Some(hash), e))?;
                }
            }
        }
        let options = LoadOptions {
            expected_hash: Some(hash),
            limits: request.limits,
            grants,
            ..LoadOptions::default()
        };
        let component = self.engine.load(acquired.bytes, options).await.map_err(refuse)?;
        Ok(Admitted {
            component,
            registration: ComponentRegistration {
                toolset: request.toolset(),
                allow_tool_override: request.allow_tool_override,
            },
            digest: acquired.digest,
            origin: acquired.origin,
            signature,
            dirs,
        })
    }

    /// `grants` with relative folders resolved against the config file's
    /// folder.
    fn resolved(&self, mut grants: Grants) -> Grants {
        for dir in &mut grants.dirs {
            dir.host = self.base_dir.join(&dir.host);
        }
        grants.http = grants
            .http
            .into_iter()
            .map(|g| g.resolved_against(&self.base_dir))
            .collect();
        grants
    }
}
