//! # The compilation cache
//!
//! Compiling a component is the slow part of loading it (seconds for an
//! interpreter-sized one); loading its precompiled form takes milliseconds.
//! The cache keeps one artifact per component hash, in a folder per engine
//! compatibility hash, so an artifact is only ever offered to an engine that
//! can run it:
//!
//! ```text
//! CACHE_DIR/<engine compatibility hash>/<component hash hex>.cwasm
//! ```
//!
//! Each file starts with a header holding a magic string, the component hash
//! and the blake3 hash of the artifact. The header is checked before wasmtime
//! sees the bytes: a truncated, corrupt or misplaced entry (or one written by
//! another engine version) is logged, recompiled and rewritten, never
//! deserialized. Entries are written to a temporary file and renamed into
//! place, so a crash mid-write leaves no partial entry.
//!
//! The folder must be as trusted as the toolhost binary: whoever can write a
//! well-formed entry there chooses the machine code that runs.

use std::hash::{Hash, Hasher};
use std::io::Write;
use std::path::{Path, PathBuf};

use wasmtime::component::Component;

use toolhost_core::error::{Error, Result};
use toolhost_core::identity::ComponentHash;

const MAGIC: &[u8; 16] = b"toolhost-cwasm\x00\x01";
const HEADER_LEN: usize = MAGIC.len() + 32 + 32;

/// Where a component came from when it was loaded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CacheOutcome {
    /// There was no cache, or no entry: the component was compiled.
    Compiled,
    /// A valid cache entry was deserialized.
    Hit,
    /// An entry existed but failed its integrity check or was refused by the
    /// engine; the component was recompiled and the entry rewritten.
    Recompiled,
}

/// An on-disk cache of compiled components for one engine.
#[derive(Debug)]
pub struct CompileCache {
    dir: PathBuf,
}

impl CompileCache {
    /// Opens (creating it if needed) the cache under `root` for `engine`.
    ///
    /// # Errors
    ///
    /// `io` when the folder cannot be created.
    pub fn open(root: &Path, engine: &wasmtime::Engine) -> Result<CompileCache> {
        let dir = root.join(format!("{:016x}", compatibility_key(engine)));
        std::fs::create_dir_all(&dir)
            .map_err(|e| Error::io(format!("cannot create the compile cache {}", dir.display()), e))?;
        Ok(CompileCache { dir })
    }

    /// The folder holding this engine's entries.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The path of the entry for `hash`.
    pub fn entry_path(&self, hash: &ComponentHash) -> PathBuf {
        self.dir.join(format!("{}.cwasm", hash.hex()))
    }

    /// Returns the compiled component for `bytes` (whose hash is `hash`),
    /// from the cache when a valid entry exists, compiling and storing it
    /// otherwise. `compile` does the compiling.
    pub(crate) fn get_or_compile(
        &self,
        engine: &wasmtime::Engine,
        hash: &ComponentHash,
        compile: impl FnOnce() -> Result<Component>,
    ) -> Result<(Component, CacheOutcome)> {
        let path = self.entry_path(hash);
        let mut outcome = CacheOutcome::Compiled;
        match std::fs::read(&path) {
            Ok(bytes) => match Self::check(&bytes, hash) {
                Ok(artifact) => {
                    // SAFETY: `Component::deserialize` requires bytes produced by
                    // `Engine::precompile_component` of a compatible engine. The
                    // entry lives in this engine's compatibility folder, is
                    // written only by `store` below (atomically), and its blake3
                    // checksum and component hash were just verified, so these
                    // are the bytes wasmtime produced for this component. The
                    // folder's trust requirement is documented at module level.
                    match unsafe { Component::deserialize(engine, artifact) } {
                        Ok(component) => return Ok((component, CacheOutcome::Hit)),
                        Err(e) => {
                            tracing::warn!(path = %path.display(), error = %format!("{e:#}"), "cache entry refused by the engine; recompiling");
                            outcome = CacheOutcome::Recompiled;
                        }
                    }
                }
                Err(why) => {
                    tracing::warn!(path = %path.display(), why, "corrupt cache entry; recompiling");
                    outcome = CacheOutcome::Recompiled;
                }
            },
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => {
                tracing::warn!(path = %path.display(), error = %e, "cannot read cache entry; recompiling");
                outcome = CacheOutcome::Recompiled;
            }
        }
        let component = compile()?;
        if let Err(e) = self.store(&path, hash, &component) {
            tracing::warn!(path = %path.display(), error = %e, "cannot write cache entry");
        }
        Ok((component, outcome))
    }

    /// Verifies an entry's header and returns its artifact.
    fn check<'a>(bytes: &'a [u8], hash: &ComponentHash) -> std::result::Result<&'a [u8], &'static str> {
        if bytes.len() < HEADER_LEN || &bytes[..MAGIC.len()] != MAGIC {
            return Err("bad header");
        }
        let (header, artifact) = bytes.split_at(HEADER_LEN);
        if &header[MAGIC.len()..MAGIC.len() + 32] != hash.as_bytes() {
            return Err("entry belongs to another component");
        }
        if &header[MAGIC.len() + 32..] != blake3::hash(artifact).as_bytes() {
            return Err("checksum mismatch");
        }
        Ok(artifact)
    }

    fn store(&self, path: &Path, hash: &ComponentHash, component: &Component) -> Result<()> {
        let artifact = component
            .serialize()
            .map_err(|e| Error::internal(format!("cannot serialize a compiled component: {e:#}")))?;
        let tmp = path.with_extension(format!("tmp{}", std::process::id()));
        let write = || -> std::io::Result<()> {
            let mut file = std::fs::File::create(&tmp)?;
            file.write_all(MAGIC)?;
            file.write_all(hash.as_bytes())?;
            file.write_all(blake3::hash(&artifact).as_bytes())?;
            file.write_all(&artifact)?;
            file.sync_all()?;
            std::fs::rename(&tmp, path)
        };
        write().map_err(|e| {
            let _ = std::fs::remove_file(&tmp);
            Error::io(format!("cannot write {}", path.display()), e)
        })
    }
}

/// A digest of `engine`'s compatibility hash: engines with equal keys can run
/// each other's compiled code.
pub(crate) fn compatibility_key(engine: &wasmtime::Engine) -> u64 {
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    engine.precompile_compatibility_hash().hash(&mut hasher);
    hasher.finish()
}
