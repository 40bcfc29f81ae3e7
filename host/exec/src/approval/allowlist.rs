//! # The permanent allowlist
//!
//! "Always" approvals are stored in the `command_allowlist` array of a TOML
//! configuration file, one pattern per string:
//!
//! | pattern | allows |
//! | --- | --- |
//! | `recursive_delete:rm -rf node_modules/` | exactly that command segment, flagged for that category |
//! | `git_destructive:git push --force *` | that segment followed by any arguments (written by operators) |
//! | `process_kill` | every match of the category |
//! | `tool:deploy` | the tool `deploy` (tool-level approval) |
//!
//! The segment is the match's `matched` text with runs of whitespace
//! folded. Writes keep the rest of the file as it was (comments included),
//! go to a temporary file in the same folder, are flushed to disk and then
//! renamed over the original, so a crash never leaves a half-written file.

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use toml_edit::{Array, DocumentMut, Item, Value};

use crate::approval::{Category, Match, Verdict};

/// The key of the allowlist array in the configuration file.
pub const ALLOWLIST_KEY: &str = "command_allowlist";

/// Errors reading or writing the allowlist file.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum AllowlistError {
    /// The file could not be read or written.
    #[error("allowlist file {path}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
    /// The file is not valid TOML.
    #[error("allowlist file {path} is not valid TOML")]
    Parse {
        /// The file.
        path: PathBuf,
        /// The parse error.
        #[source]
        source: toml_edit::TomlError,
    },
    /// `command_allowlist` exists but is not an array of strings.
    #[error("`{ALLOWLIST_KEY}` in {path} must be an array of strings")]
    NotAnArray {
        /// The file.
        path: PathBuf,
    },
}

/// The allowlist backed by a TOML file.
#[derive(Debug)]
pub struct Allowlist {
    path: PathBuf,
    patterns: Mutex<Vec<String>>,
}

/// Folds whitespace runs to single spaces and trims.
pub(crate) fn fold(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The pattern "always" writes for one match.
pub fn pattern_for(m: &Match) -> String {
    format!("{}:{}", m.category, fold(&m.matched))
}

/// Whether `pattern` allows the match `m`.
pub fn pattern_allows(pattern: &str, m: &Match) -> bool {
    let (cat, segment) = match pattern.split_once(':') {
        Some((c, s)) => (c.trim(), Some(fold(s))),
        None => (pattern.trim(), None),
    };
    if cat.parse::<Category>() != Ok(m.category) {
        return false;
    }
    let matched = fold(&m.matched);
    match segment {
        None => true,
        Some(s) => match s.strip_suffix(" *") {
            Some(prefix) => matched == prefix || matched.starts_with(&format!("{prefix} ")),
            None => matched == s,
        },
    }
}

impl Allowlist {
    /// Loads the allowlist from `path`; a missing file is an empty list.
    ///
    /// # Errors
    /// When the file cannot be read, is not TOML, or the key is not an
    /// array of strings.
    pub fn load(path: impl Into<PathBuf>) -> Result<Allowlist, AllowlistError> {
        let path = path.into();
        let doc = read_doc(&path)?;
        let patterns = patterns_of(&doc, &path)?;
        Ok(Allowlist {
            path,
            patterns: Mutex::new(patterns),
        })
    }

    /// The file backing the list.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The current patterns.
    pub fn patterns(&self) -> Vec<String> {
        self.patterns.lock().map(|p| p.clone()).unwrap_or_default()
    }

    /// Whether every match of a dangerous `verdict` is allowed. A verdict
    /// with reasons left out ([`Verdict::truncated`]) never is, nor one of a
    /// category that cannot be allowlisted ([`Category::allowlistable`]: an
    /// opaque command, a write to toolhost's own files).
    pub fn allows(&self, verdict: &Verdict) -> bool {
        let patterns = self.patterns();
        verdict.dangerous
            && !verdict.truncated
            && verdict.categories.iter().all(|c| c.allowlistable())
            && verdict
                .matches
                .iter()
                .all(|m| patterns.iter().any(|p| pattern_allows(p, m)))
    }

    /// Whether the tool `name` is allowlisted (`tool:NAME`).
    pub fn allows_tool(&self, name: &str) -> bool {
        let want = format!("tool:{name}");
        self.patterns().iter().any(|p| p.trim() == want)
    }

    /// Adds patterns (those not yet present) and writes the file atomically,
    /// preserving everything else in it. The file is re-read first, so
    /// entries written by others meanwhile are kept.
    ///
    /// # Errors
    /// When the file cannot be read, parsed or written.
    pub fn add(&self, new: &[String]) -> Result<(), AllowlistError> {
        let mut guard = self.patterns.lock().unwrap_or_else(|e| e.into_inner());
        let mut doc = read_doc(&self.path)?;
        let mut current = patterns_of(&doc, &self.path)?;
        let fresh: Vec<&String> = new.iter().filter(|p| !current.contains(p)).collect();
        if fresh.is_empty() {
            *guard = current;
            return Ok(());
        }
        let array = match doc.get_mut(ALLOWLIST_KEY) {
            Some(item) => item.as_array_mut().ok_or_else(|| AllowlistError::NotAnArray {
                path: self.path.clone(),
            })?,
            None => {
                doc.insert(ALLOWLIST_KEY, Item::Value(Value::Array(Array::new())));
                doc.get_mut(ALLOWLIST_KEY)
                    .and_then(Item::as_array_mut)
                    .ok_or_else(|| AllowlistError::NotAnArray {
                        path: self.path.clone(),
                    })?
            }
        };
        for p in fresh {
            array.push(p.as_str());
            current.push(p.clone());
        }
        write_atomic(&self.path, doc.to_string().as_bytes())?;
        *guard = current;
        Ok(())
    }
}

fn read_doc(path: &Path) -> Result<DocumentMut, AllowlistError> {
    // The config file, read within the bounds every file read by toolhost
    // keeps (a named pipe there would otherwise stall the approval).
    let text = match toolhost_core::bounded::read_to_string(path, 16 << 20) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
        Err(source) => {
            return Err(AllowlistError::Io {
                path: path.to_path_buf(),
                source,
            });
        }
    };
    text.parse::<DocumentMut>()
        .map_err(|source| AllowlistError::Parse {
            path: path.to_path_buf(),
            source,
        })
}

fn patterns_of(doc: &DocumentMut, path: &Path) -> Result<Vec<String>, AllowlistError> {
    let Some(item) = doc.get(ALLOWLIST_KEY) else {
        return Ok(Vec::new());
    };
    let not_array = || AllowlistError::NotAnArray {
        path: path.to_path_buf(),
    };
    let array = item.as_array().ok_or_else(not_array)?;
    array
        .iter()
        .map(|v| v.as_str().map(str::to_string).ok_or_else(not_array))
        .collect()
}

/// Writes `bytes` to `path` atomically: a temporary file in the same
/// folder, flushed to disk, renamed over `path`, then the folder flushed.
///
/// # Errors
/// Any I/O error; the original file is then unchanged.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), AllowlistError> {
    let io = |source| AllowlistError::Io {
        path: path.to_path_buf(),
        source,
    };
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().to_string())
        .unwrap_or_default();
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or_default();
    let tmp = dir.join(format!(".{name}.tmp-{}-{nanos}", std::process::id()));
    let result = (|| {
        let mut f = fs::File::create(&tmp)?;
        f.write_all(bytes)?;
        f.sync_all()?;
        if let Ok(meta) = fs::metadata(path) {
            fs::set_permissions(&tmp, meta.permissions())?;
        }
        fs::rename(&tmp, path)?;
        fs::File::open(&dir)?.sync_all()
    })();
    if result.is_err() {
        let _ = fs::remove_file(&tmp);
    }
    result.map_err(io)
}
