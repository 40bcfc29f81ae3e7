//! # Protected paths: what no grant may reach
//!
//! A model drives the tools, so a tool must never be able to widen its own
//! powers or read what belongs to someone else. The paths that would let it
//! do so are **protected**, and a `[[plugins]]` directory grant that reaches
//! one is refused before the plugin loads:
//!
//! | path | why | refused |
//! |---|---|---|
//! | the config file (it holds the grants and the `command_allowlist`) | rewriting it grants anything on the next start, or allowlists a command | a read-write grant containing it |
//! | every file the config makes the host run or trust: plugin components and their signatures, the live plugins folder, a stdio MCP server's program, the ssh identity and known-hosts files | replacing one runs another program with the first one's grants | a read-write grant containing it |
//! | the managed storage folder itself (`[storage] dir`) | it holds every session's receipts and every plugin's storage | any grant containing it |
//! | the receipts folder (`STORAGE/receipts`) | other sessions' command output | any grant containing it or inside it |
//! | the pull cache (`STORAGE/oci`) | the components pulled from registries, served when the registry is down | any grant containing it or inside it |
//! | a plugin's storage (a grant inside the storage folder) | it is that plugin's alone | another plugin's grant overlapping it, when either is read-write |
//!
//! Paths are compared after resolving symbolic links (and `..`), so a grant
//! of a link to the config's folder is refused like the folder itself. Inside
//! a granted folder, cap-std refuses every path (absolute, `..`, a symbolic
//! link) that would leave it, so what is outside a grant stays out of reach.
//!
//! The `exec` sandbox backend hides the same paths (see
//! [`ProtectedPaths::hidden_dirs`], [`ProtectedPaths::read_only_files`]), and
//! the dangerous-command detector flags commands that write them.

use std::path::{Component, Path, PathBuf};

use serde::Serialize;

use super::Config;
use crate::capabilities::{DirGrant, DirMode};
use crate::error::{Error, ErrorCode, Result};
use crate::mcp::McpTransport;

/// One protected path and what it is, for messages.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Protected {
    /// The path, resolved (absolute, symbolic links followed as far as it
    /// exists).
    pub path: PathBuf,
    /// What it is ("the config file", "the receipts folder", …).
    pub what: String,
}

/// The protected paths of one configuration (see the module documentation).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct ProtectedPaths {
    /// Files no read-write grant may contain.
    pub files: Vec<Protected>,
    /// The managed storage folder: no grant may contain it.
    pub storage: Option<PathBuf>,
    /// Folders no grant may contain or lie inside (the receipts).
    pub sealed: Vec<Protected>,
}

impl ProtectedPaths {
    /// The protected paths of `config`: its file, the files it makes the
    /// host run or trust, its storage and receipts folders.
    pub fn of(config: &Config) -> ProtectedPaths {
        let mut files = Vec::new();
        let mut file = |path: PathBuf, what: String| {
            files.push(Protected {
                path: resolve(&path),
                what,
            });
        };
        if let Some(origin) = &config.origin {
            file(
                origin.clone(),
                "the config file (its grants and command_allowlist)".into(),
            );
        }
        for plugin in &config.plugins {
            // A pulled component lives in the storage folder, protected below.
            if let Some(path) = plugin.file() {
                for path in [
                    config.base_dir.join(path),
                    crate::distribution::signature::signature_path(&config.base_dir.join(path)),
                ] {
                    file(
                        path,
                        format!("the component of plugin {} (or its signature)", plugin.name()),
                    );
                }
            }
        }
        for server in &config.mcp_config().servers {
            if let McpTransport::Stdio { command, .. } = &server.transport
                && command.contains('/')
            {
                file(
                    PathBuf::from(command),
                    format!("the program of MCP server {:?}", server.name),
                );
            }
        }
        if let Some(ssh) = config.exec.as_ref().and_then(|e| e.ssh.as_ref()) {
            file(
                config.base_dir.join(&ssh.identity_file),
                "the exec ssh identity file".into(),
            );
            file(
                config.base_dir.join(&ssh.known_hosts),
                "the exec ssh known_hosts file".into(),
            );
        }
        if let Some(dir) = &config.plugins_dir {
            file(
                config.base_dir.join(&dir.path),
                "the live plugins folder ([plugins_dir])".into(),
            );
        }
        let storage = resolve(&config.storage_dir());
        ProtectedPaths {
            files,
            sealed: vec![
                Protected {
                    path: storage.join("receipts"),
                    what: "the process receipts folder".into(),
                },
                Protected {
                    path: storage.join("oci"),
                    what: "the pull cache of OCI plugins".into(),
                },
            ],
            storage: Some(storage),
        }
    }

    /// Checks one directory grant of plugin `plugin` (the grant's `host`
    /// already resolved against the config's folder).
    ///
    /// # Errors
    ///
    /// `config`, naming the grant, the protected path it reaches and what
    /// to do instead.
    pub fn check_grant(&self, plugin: &str, grant: &DirGrant) -> Result<()> {
        let host = resolve(&grant.host);
        let refuse = |what: &str, path: &Path, fix: &str| {
            Err(Error::new(
                ErrorCode::Config,
                format!(
                    "plugin {plugin}: the {mode} grant of {} (as {}) reaches {what} ({}): a tool could {fix}. Grant a folder that does not hold it",
                    grant.host.display(),
                    grant.guest,
                    path.display(),
                    mode = mode_name(grant.mode),
                ),
            ))
        };
        if let Some(storage) = &self.storage
            && storage.starts_with(&host)
        {
            return refuse(
                "the managed storage folder",
                storage,
                "read every session's receipts and rewrite other plugins' storage",
            );
        }
        for sealed in &self.sealed {
            if sealed.path.starts_with(&host) || host.starts_with(&sealed.path) {
                return refuse(&sealed.what, &sealed.path, "read what belongs to other sessions");
            }
        }
        if grant.mode == DirMode::Rw {
            for file in &self.files {
                if file.path.starts_with(&host) {
                    return refuse(&file.what, &file.path, "widen its own powers by rewriting it");
                }
            }
        }
        Ok(())
    }

    /// Refuses `grant` of `plugin` when it overlaps `other`, a grant of
    /// another plugin, one of the two lies in the storage folder (a plugin's
    /// storage) and either is read-write.
    pub(crate) fn check_storage_overlap(
        &self,
        plugin: &str,
        grant: &DirGrant,
        owner: &str,
        other: &DirGrant,
    ) -> Result<()> {
        let Some(storage) = &self.storage else {
            return Ok(());
        };
        let overlap = grant.host.starts_with(&other.host) || other.host.starts_with(&grant.host);
        let in_storage = grant.host.starts_with(storage) || other.host.starts_with(storage);
        let writes = grant.mode == DirMode::Rw || other.mode == DirMode::Rw;
        if overlap && in_storage && writes {
            return Err(Error::new(
                ErrorCode::Config,
                format!(
                    "plugin {plugin}: the {} grant of {} overlaps {}, the storage of plugin {} ({} grant); a plugin's storage is its own: give each plugin its own folder under the storage folder",
                    mode_name(grant.mode),
                    grant.host.display(),
                    other.host.display(),
                    owner,
                    mode_name(other.mode),
                ),
            ));
        }
        Ok(())
    }

    /// Folders the `exec` sandbox hides (an empty tmpfs over each): the
    /// storage folder (the workspace inside it stays visible) and the
    /// receipts.
    pub fn hidden_dirs(&self) -> Vec<PathBuf> {
        self.storage
            .iter()
            .cloned()
            .chain(self.sealed.iter().map(|s| s.path.clone()))
            .collect()
    }

    /// Files the `exec` sandbox keeps read-only even inside its writable
    /// workspace.
    pub fn read_only_files(&self) -> Vec<PathBuf> {
        self.files.iter().map(|f| f.path.clone()).collect()
    }

    /// Every protected path, as text (for the dangerous-command detector,
    /// which flags commands writing them).
    pub fn all(&self) -> Vec<String> {
        self.files
            .iter()
            .map(|f| f.path.clone())
            .chain(self.storage.clone())
            .chain(self.sealed.iter().map(|s| s.path.clone()))
            .map(|p| p.display().to_string())
            .collect()
    }
}

fn mode_name(mode: DirMode) -> &'static str {
    match mode {
        DirMode::Ro => "read-only",
        DirMode::Rw => "read-write",
    }
}

/// `path` made absolute and resolved: symbolic links followed as far as
/// the path exists, `.` and `..` removed lexically past that point.
pub fn resolve(path: &Path) -> PathBuf {
    let absolute = if path.is_absolute() {
        path.to_path_buf()
    } else {
        std::env::current_dir().unwrap_or_default().join(path)
    };
    // Each existing prefix is canonicalized as it is reached, so `..`
    // after it climbs from the real folder, not from a link's name.
    let mut out = PathBuf::new();
    for c in absolute.components() {
        match c {
            Component::Prefix(_) | Component::RootDir => out.push(c.as_os_str()),
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            Component::Normal(name) => {
                out.push(name);
                if let Ok(canonical) = out.canonicalize() {
                    out = canonical;
                }
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resolve_follows_links_and_climbs() {
        let dir = tempfile::tempdir().unwrap();
        let real = dir.path().join("real");
        std::fs::create_dir(&real).unwrap();
        std::os::unix::fs::symlink(&real, dir.path().join("link")).unwrap();
        let canonical = real.canonicalize().unwrap();
        assert_eq!(resolve(&dir.path().join("link")), canonical);
        assert_eq!(
            resolve(&dir.path().join("link/missing/x")),
            canonical.join("missing/x")
        );
        assert_eq!(
            resolve(&dir.path().join("link/missing/../y")),
            canonical.join("y")
        );
    }
}
