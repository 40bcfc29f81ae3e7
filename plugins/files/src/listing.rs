//! Looking at the tree: `list_files`, `file_info` and `glob_files`.

use std::fs;

use globset::{GlobBuilder, GlobMatcher};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use toolhost_sdk::ToolError;

use crate::workspace::{self, Entry, Flow, Kind, WalkLimits, clamp, io_error, resolve, rfc3339};

/// The most entries one `list_files` or `glob_files` call returns.
const MAX_ENTRIES: u64 = 1000;
/// The deepest a recursive listing or a glob descends.
const MAX_DEPTH: u64 = 32;
/// The most entries a walk looks at before it gives up (bounds the call's
/// work on huge trees).
const MAX_VISITED: usize = 50_000;

/// Lists the files and folders in a workspace folder, with each entry's kind
/// (file, dir, symlink), size and modification time. Non-recursive by
/// default; with `recursive`, descends up to `max_depth` levels. Symlinks are
/// listed, never followed. Results are in name order and capped at
/// `max_entries` (`truncated` tells when more exist).
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct ListFiles {
    /// The folder, relative to the workspace root. Default: the root (".").
    path: Option<String>,
    /// Descend into subfolders. Default: false.
    #[serde(default)]
    recursive: bool,
    /// With `recursive`, how many levels to descend (1 = only this folder).
    /// Default 5, at most 32.
    max_depth: Option<u64>,
    /// The most entries to return. Default 200, at most 1000.
    max_entries: Option<u64>,
    /// Include entries whose name starts with a dot. Default: true.
    include_hidden: Option<bool>,
}

/// A listing.
#[derive(Serialize)]
pub(crate) struct Listing {
    /// The folder listed.
    path: String,
    /// Its entries, in name order (depth-first when recursive).
    entries: Vec<Entry>,
    /// True if entries were left out because of `max_entries` (or because the
    /// tree was too large to walk in one call).
    truncated: bool,
}

/// Lists a folder.
pub(crate) fn list_files(args: ListFiles) -> Result<Listing, ToolError> {
    let dir = resolve(args.path.as_deref().unwrap_or("."))?;
    let meta = fs::metadata(&dir.full).map_err(|e| io_error(&dir, e))?;
    if !meta.is_dir() {
        return Err(ToolError::invalid_arguments(format!(
            "{} is a file, not a folder: use file_info or read_file",
            dir.shown()
        )));
    }
    let max_entries = clamp(args.max_entries, 200, MAX_ENTRIES) as usize;
    let max_depth = if args.recursive {
        clamp(args.max_depth, 5, MAX_DEPTH) as usize
    } else {
        1
    };
    let limits = WalkLimits {
        max_depth,
        include_hidden: args.include_hidden.unwrap_or(true),
        max_visited: MAX_VISITED,
    };
    let mut entries = Vec::new();
    let mut truncated = false;
    let report = workspace::walk(&dir, limits, &mut |path, meta, _| {
        if entries.len() >= max_entries {
            truncated = true;
            return Flow::Stop;
        }
        entries.push(Entry::new(path, meta));
        Flow::Continue
    })?;
    Ok(Listing {
        path: dir.shown(),
        entries,
        truncated: truncated || report.hit_visit_cap,
    })
}

/// Returns the metadata of one workspace path: kind, size, MIME type (guessed
/// from the extension) and timestamps. A symlink is described itself, with its
/// target.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct FileInfo {
    /// The path, relative to the workspace root.
    path: String,
}

/// The metadata of one path.
#[derive(Serialize)]
pub(crate) struct Info {
    path: String,
    kind: Kind,
    /// The size in bytes.
    size: u64,
    /// The MIME type guessed from the extension (files only).
    #[serde(skip_serializing_if = "Option::is_none")]
    mime_type: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    modified: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    accessed: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    created: Option<String>,
    readonly: bool,
    /// For a symlink, where it points (as stored in the link).
    #[serde(skip_serializing_if = "Option::is_none")]
    symlink_target: Option<String>,
}

/// Describes one path.
pub(crate) fn file_info(args: FileInfo) -> Result<Info, ToolError> {
    let path = resolve(&args.path)?;
    let meta = fs::symlink_metadata(&path.full).map_err(|e| io_error(&path, e))?;
    let kind = Kind::of(&meta);
    let symlink_target = (kind == Kind::Symlink)
        .then(|| fs::read_link(&path.full).ok())
        .flatten()
        .map(|t| t.to_string_lossy().into_owned());
    Ok(Info {
        mime_type: (kind == Kind::File).then(|| mime_type(&path.rel)),
        path: path.shown(),
        kind,
        size: meta.len(),
        modified: meta.modified().ok().map(rfc3339),
        accessed: meta.accessed().ok().map(rfc3339),
        created: meta.created().ok().map(rfc3339),
        readonly: meta.permissions().readonly(),
        symlink_target,
    })
}

/// The MIME type for a file name's extension, `application/octet-stream`
/// when unknown.
fn mime_type(name: &str) -> &'static str {
    let ext = name.rsplit_once('.').map(|(_, e)| e.to_ascii_lowercase());
    match ext.as_deref() {
        Some("txt" | "log") => "text/plain",
        Some("md" | "markdown") => "text/markdown",
        Some("html" | "htm") => "text/html",
        Some("css") => "text/css",
        Some("csv") => "text/csv",
        Some("js" | "mjs") => "text/javascript",
        Some("json") => "application/json",
        Some("toml") => "application/toml",
        Some("yaml" | "yml") => "application/yaml",
        Some("xml") => "application/xml",
        Some("rs") => "text/x-rust",
        Some("py") => "text/x-python",
        Some("sh") => "application/x-sh",
        Some("c" | "h") => "text/x-c",
        Some("png") => "image/png",
        Some("jpg" | "jpeg") => "image/jpeg",
        Some("gif") => "image/gif",
        Some("svg") => "image/svg+xml",
        Some("webp") => "image/webp",
        Some("pdf") => "application/pdf",
        Some("zip") => "application/zip",
        Some("gz") => "application/gzip",
        Some("wasm") => "application/wasm",
        Some("mp3") => "audio/mpeg",
        Some("wav") => "audio/wav",
        Some("ogg") => "audio/ogg",
        _ => "application/octet-stream",
    }
}

/// Finds workspace files whose path matches a glob pattern, such as
/// `**/*.rs` or `src/*.{toml,md}`. The pattern is matched against paths
/// relative to `path` (default: the root); `*` and `?` stay within one folder,
/// `**` crosses folders. Returns files only (and folders with
/// `include_dirs`), in name order, capped at `max_results`.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct GlobFiles {
    /// The glob pattern, relative to `path`, e.g. `**/*.rs`.
    pattern: String,
    /// The folder to search from, relative to the workspace root. Default ".".
    path: Option<String>,
    /// The most matches to return. Default 200, at most 1000.
    max_results: Option<u64>,
    /// Also match folders. Default: false.
    #[serde(default)]
    include_dirs: bool,
    /// Look into and match entries whose name starts with a dot. Default: false.
    #[serde(default)]
    include_hidden: bool,
}

/// Glob results.
#[derive(Serialize)]
pub(crate) struct GlobMatches {
    pattern: String,
    /// The folder searched from.
    path: String,
    /// The matching entries, paths relative to the workspace root.
    matches: Vec<Entry>,
    /// True if matches were left out because of `max_results` (or the tree
    /// was too large to walk in one call).
    truncated: bool,
}

/// Compiles a glob pattern the way `glob_files` and `grep` use it.
///
/// # Errors
///
/// `invalid_arguments` if the pattern is absolute, climbs with `..`, or does
/// not parse.
pub(crate) fn compile_glob(pattern: &str) -> Result<GlobMatcher, ToolError> {
    if pattern.starts_with('/') {
        return Err(ToolError::invalid_arguments(format!(
            "the glob `{pattern}` is absolute: patterns are relative to the search folder"
        )));
    }
    if pattern.split('/').any(|part| part == "..") {
        return Err(ToolError::invalid_arguments(format!(
            "the glob `{pattern}` uses `..`: patterns may not leave the search folder"
        )));
    }
    GlobBuilder::new(pattern)
        .literal_separator(true)
        .build()
        .map(|g| g.compile_matcher())
        .map_err(|e| ToolError::invalid_arguments(format!("the glob `{pattern}` is not valid: {e}")))
}

/// Finds paths matching a glob.
pub(crate) fn glob_files(args: GlobFiles) -> Result<GlobMatches, ToolError> {
    let matcher = compile_glob(&args.pattern)?;
    let base = resolve(args.path.as_deref().unwrap_or("."))?;
    let meta = fs::metadata(&base.full).map_err(|e| io_error(&base, e))?;
    if !meta.is_dir() {
        return Err(ToolError::invalid_arguments(format!(
            "{} is not a folder",
            base.shown()
        )));
    }
    let max_results = clamp(args.max_results, 200, MAX_ENTRIES) as usize;
    // A pattern without `**` cannot match deeper than its own folder count.
    let depth = if args.pattern.contains("**") {
        MAX_DEPTH as usize
    } else {
        args.pattern.split('/').count()
    };
    let limits = WalkLimits {
        max_depth: depth,
        include_hidden: args.include_hidden,
        max_visited: MAX_VISITED,
    };
    let prefix = if base.rel.is_empty() {
        0
    } else {
        base.rel.len() + 1
    };
    let mut matches = Vec::new();
    let mut truncated = false;
    let report = workspace::walk(&base, limits, &mut |path, meta, _| {
        let kind = Kind::of(meta);
        let wanted = kind == Kind::File || (args.include_dirs && kind == Kind::Dir);
        let relative = path.rel.get(prefix..).unwrap_or_default();
        if wanted && matcher.is_match(relative) {
            if matches.len() >= max_results {
                truncated = true;
                return Flow::Stop;
            }
            matches.push(Entry::new(path, meta));
        }
        Flow::Continue
    })?;
    Ok(GlobMatches {
        pattern: args.pattern,
        path: base.shown(),
        matches,
        truncated: truncated || report.hit_visit_cap,
    })
}
