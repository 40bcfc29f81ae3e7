//! Paths inside the workspace, the metadata the tools report, and a bounded
//! directory walk shared by `list_files`, `glob_files` and `grep`.
//!
//! Every path a tool receives is relative to [`ROOT`]. [`resolve`] checks it
//! lexically before any file system call: an absolute path, or a `..` that
//! climbs above the root, is refused as `invalid_arguments`. The host enforces
//! the same boundary on its side (the preopen is a cap-std handle, so symlinks
//! cannot leave it either); the check here exists so the model gets a clear
//! message instead of a bare "not permitted".

use std::fs::{self, Metadata};
use std::io;
use std::path::PathBuf;
use std::time::SystemTime;

use serde::Serialize;
use toolhost_sdk::ToolError;

/// The guest path of the workspace directory the plugin declares.
pub(crate) const ROOT: &str = "/workspace";

/// A path checked to lie inside the workspace.
#[derive(Debug, Clone)]
pub(crate) struct WsPath {
    /// The normalized path relative to the root, `/`-separated; empty for the
    /// root itself.
    pub rel: String,
    /// The guest path to open.
    pub full: PathBuf,
}

impl WsPath {
    /// The relative path as shown to the model: `.` for the root.
    pub fn shown(&self) -> String {
        shown(&self.rel)
    }

    /// The path of `name` inside this directory.
    pub fn join(&self, name: &str) -> WsPath {
        let rel = if self.rel.is_empty() {
            name.to_string()
        } else {
            format!("{}/{name}", self.rel)
        };
        WsPath {
            full: self.full.join(name),
            rel,
        }
    }
}

/// `.` for the root, the path itself otherwise.
pub(crate) fn shown(rel: &str) -> String {
    if rel.is_empty() { ".".into() } else { rel.into() }
}

/// Checks `path` (relative to the workspace) and resolves it.
///
/// # Errors
///
/// `invalid_arguments` if the path is absolute, contains a NUL byte, or uses
/// `..` to climb above the workspace root.
pub(crate) fn resolve(path: &str) -> Result<WsPath, ToolError> {
    if path.contains('\0') {
        return Err(ToolError::invalid_arguments(
            "the path must not contain a NUL byte",
        ));
    }
    if path.starts_with('/') || path.starts_with('\\') {
        return Err(ToolError::invalid_arguments(format!(
            "`{path}` is absolute: paths are relative to the workspace root (use e.g. `src/main.rs`, or `.` for the root)"
        )));
    }
    let mut parts: Vec<&str> = Vec::new();
    for part in path.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                if parts.pop().is_none() {
                    return Err(ToolError::invalid_arguments(format!(
                        "`{path}` leaves the workspace: `..` may not climb above the workspace root"
                    )));
                }
            }
            name => parts.push(name),
        }
    }
    let rel = parts.join("/");
    let full = if rel.is_empty() {
        PathBuf::from(ROOT)
    } else {
        PathBuf::from(ROOT).join(&rel)
    };
    Ok(WsPath { rel, full })
}

/// The most symbolic links [`follow_links`] follows in one path.
const MAX_LINK_HOPS: usize = 40;

/// `path` with every symbolic link in it followed, as far as the path
/// exists: where a write through it lands. A link whose target is absolute
/// or climbs out of the workspace is refused: the host refuses any access
/// through it anyway (a bare "permission denied", or worse, an answer that
/// reads like success), and the model learns here which link and why.
///
/// # Errors
///
/// `invalid_arguments` naming the link and its target when it leaves the
/// workspace, or when links loop.
pub(crate) fn follow_links(path: &WsPath) -> Result<WsPath, ToolError> {
    let mut pending: std::collections::VecDeque<String> = path
        .rel
        .split('/')
        .filter(|p| !p.is_empty())
        .map(String::from)
        .collect();
    let mut done: Vec<String> = Vec::new();
    let mut hops = 0;
    while let Some(part) = pending.pop_front() {
        match part.as_str() {
            "." => continue,
            ".." => {
                if done.pop().is_none() {
                    return Err(ToolError::invalid_arguments(format!(
                        "`{}` goes through a symbolic link that leaves the workspace; reading or writing through it is refused",
                        path.shown()
                    )));
                }
                continue;
            }
            _ => {}
        }
        done.push(part);
        let here = PathBuf::from(ROOT).join(done.join("/"));
        let is_link = fs::symlink_metadata(&here).is_ok_and(|m| m.file_type().is_symlink());
        if !is_link {
            continue;
        }
        hops += 1;
        let link = done.join("/");
        if hops > MAX_LINK_HOPS {
            return Err(ToolError::invalid_arguments(format!(
                "`{}`: more than {MAX_LINK_HOPS} symbolic links (a loop?) at `{link}`",
                path.shown()
            )));
        }
        // The host does not show an absolute target to the guest: a link
        // whose target cannot be read leads out of the workspace.
        let target = fs::read_link(&here).map_err(|_| {
            ToolError::invalid_arguments(format!(
                "`{link}` is a symbolic link to a place outside the workspace: reading or writing `{}` through it is refused",
                path.shown()
            ))
        })?;
        let target_text = target.to_string_lossy().into_owned();
        let leaves = || {
            ToolError::invalid_arguments(format!(
                "`{link}` is a symbolic link to `{target_text}`, outside the workspace: reading or writing `{}` through it is refused",
                path.shown()
            ))
        };
        if target.is_absolute() {
            return Err(leaves());
        }
        // The link's target replaces it, relative to the link's folder.
        done.pop();
        let mut depth = done.len();
        for part in target_text.split('/') {
            match part {
                "" | "." => {}
                ".." if depth == 0 => return Err(leaves()),
                ".." => depth -= 1,
                _ => depth += 1,
            }
        }
        for part in target_text.split('/').rev().filter(|p| !p.is_empty()) {
            pending.push_front(part.to_string());
        }
    }
    let rel = done.join("/");
    Ok(WsPath {
        full: if rel.is_empty() {
            PathBuf::from(ROOT)
        } else {
            PathBuf::from(ROOT).join(&rel)
        },
        rel,
    })
}

/// Turns an I/O error on `path` into a `failed` tool error that names it.
/// A missing workspace (the directory was not granted) is reported as such.
pub(crate) fn io_error(path: &WsPath, err: io::Error) -> ToolError {
    if err.kind() == io::ErrorKind::NotFound && fs::metadata(ROOT).is_err() {
        return ToolError::failed(format!(
            "the workspace directory {ROOT} is not available to this plugin"
        ));
    }
    let what = match err.kind() {
        io::ErrorKind::NotFound => "no such file or directory".to_string(),
        io::ErrorKind::PermissionDenied => "permission denied".to_string(),
        io::ErrorKind::AlreadyExists => "already exists".to_string(),
        _ => err.to_string(),
    };
    ToolError::failed(format!("{}: {what}", path.shown()))
}

/// What a directory entry is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum Kind {
    /// A regular file.
    File,
    /// A directory.
    Dir,
    /// A symbolic link (not followed).
    Symlink,
    /// Anything else (a socket, a device, ...).
    Other,
}

impl Kind {
    /// The kind of `meta` (taken without following symlinks).
    pub fn of(meta: &Metadata) -> Kind {
        let ty = meta.file_type();
        if ty.is_symlink() {
            Kind::Symlink
        } else if ty.is_dir() {
            Kind::Dir
        } else if ty.is_file() {
            Kind::File
        } else {
            Kind::Other
        }
    }
}

/// One entry of a listing.
#[derive(Debug, Serialize)]
pub(crate) struct Entry {
    /// The path relative to the workspace root.
    pub path: String,
    /// What it is.
    pub kind: Kind,
    /// The size in bytes (files only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub size: Option<u64>,
    /// The last modification time, RFC 3339 in UTC.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub modified: Option<String>,
}

impl Entry {
    /// The entry for `path`, described by `meta`.
    pub fn new(path: &WsPath, meta: &Metadata) -> Entry {
        let kind = Kind::of(meta);
        Entry {
            path: path.shown(),
            kind,
            size: (kind == Kind::File).then_some(meta.len()),
            modified: meta.modified().ok().map(rfc3339),
        }
    }
}

/// `time` as RFC 3339 in UTC, to the second.
pub(crate) fn rfc3339(time: SystemTime) -> String {
    chrono::DateTime::<chrono::Utc>::from(time).to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
}

/// True if a path component is hidden (starts with a dot).
pub(crate) fn is_hidden(name: &str) -> bool {
    name.starts_with('.')
}

/// What a [`walk`] visitor wants next.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Flow {
    /// Keep walking.
    Continue,
    /// Stop the walk now.
    Stop,
}

/// Bounds of a [`walk`].
#[derive(Debug, Clone, Copy)]
pub(crate) struct WalkLimits {
    /// How deep to descend: 1 lists only the start directory's entries.
    pub max_depth: usize,
    /// Whether to enter and report entries whose name starts with a dot.
    pub include_hidden: bool,
    /// How many entries to look at in all before giving up, so that a huge
    /// tree cannot exhaust the call's fuel.
    pub max_visited: usize,
}

/// What a [`walk`] ended with.
#[derive(Debug, Default)]
pub(crate) struct WalkReport {
    /// Entries looked at.
    pub visited: usize,
    /// True if the walk stopped at [`WalkLimits::max_visited`].
    pub hit_visit_cap: bool,
    /// Directories below the start that could not be read.
    pub unreadable_dirs: usize,
}

/// Walks the directory `start` depth-first, in name order, calling `visit`
/// with each entry, its metadata (symlinks are reported, never followed) and
/// its depth (1 for the start's own entries).
///
/// # Errors
///
/// Only if `start` itself cannot be read; unreadable subdirectories are
/// counted in the report and skipped.
pub(crate) fn walk(
    start: &WsPath,
    limits: WalkLimits,
    visit: &mut dyn FnMut(&WsPath, &Metadata, usize) -> Flow,
) -> Result<WalkReport, ToolError> {
    let mut report = WalkReport::default();
    // A stack of (directory, its depth, its entries still to visit, reversed).
    let mut stack = vec![(1usize, read_sorted(start).map_err(|e| io_error(start, e))?)];
    let mut dirs = vec![start.clone()];
    while let Some((depth, entries)) = stack.last_mut() {
        let depth = *depth;
        let Some((name, meta)) = entries.pop() else {
            stack.pop();
            dirs.pop();
            continue;
        };
        if !limits.include_hidden && is_hidden(&name) {
            continue;
        }
        if report.visited >= limits.max_visited {
            report.hit_visit_cap = true;
            break;
        }
        report.visited += 1;
        let Some(parent) = dirs.last() else { break };
        let path = parent.join(&name);
        if visit(&path, &meta, depth) == Flow::Stop {
            break;
        }
        if meta.is_dir() && depth < limits.max_depth {
            match read_sorted(&path) {
                Ok(children) => {
                    stack.push((depth + 1, children));
                    dirs.push(path);
                }
                Err(_) => report.unreadable_dirs += 1,
            }
        }
    }
    Ok(report)
}

/// The entries of `dir` with their metadata (not following symlinks), sorted
/// by name in reverse so that popping yields name order. Entries whose names
/// are not UTF-8 or whose metadata cannot be read are skipped.
fn read_sorted(dir: &WsPath) -> io::Result<Vec<(String, Metadata)>> {
    let mut entries = Vec::new();
    for entry in fs::read_dir(&dir.full)? {
        let Ok(entry) = entry else { continue };
        let Ok(name) = entry.file_name().into_string() else {
            continue;
        };
        let Ok(meta) = fs::symlink_metadata(entry.path()) else {
            continue;
        };
        entries.push((name, meta));
    }
    entries.sort_by(|a, b| b.0.cmp(&a.0));
    Ok(entries)
}

/// Clamps an optional requested value to `1..=max`, with `default` if unset.
pub(crate) fn clamp(requested: Option<u64>, default: u64, max: u64) -> u64 {
    requested.unwrap_or(default).clamp(1, max)
}
