//! The record store: one JSON file per record in [`DIR`], written so that a
//! crash at any moment leaves every record either whole or absent.
//!
//! ## On-disk layout
//!
//! - `<id>.json`: one [`Record`]. Only names of this form are records.
//! - `.tmp-<random>.partial`: a write in progress. Never read as a record; a
//!   leftover one (from a host killed mid-write) is ignored, and removed by
//!   the next write that finds it older than a minute.
//!
//! ## Writing
//!
//! Every write goes to a fresh temp file in the same directory, is flushed
//! with `fsync`, and only then is moved into place: with a hard link for a new
//! record (which fails if the id is taken, so two concurrent creators can never
//! overwrite each other), with a rename for an update (which replaces the old
//! file atomically). A reader thus sees the old record or the new one, never a
//! part of either.

use std::collections::hash_map::RandomState;
use std::fs::{self, File, OpenOptions};
use std::hash::{BuildHasher, Hasher};
use std::io::{self, ErrorKind, Write};
use std::path::PathBuf;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};
use toolhost_sdk::ToolError;

/// The guest path of the directory the plugin declares.
pub(crate) const DIR: &str = "/memory";
/// The most record files a scan reads (bounds a call's work).
pub(crate) const MAX_RECORDS: usize = 10_000;
/// The prefix of temp files.
const TEMP_PREFIX: &str = ".tmp-";
/// A temp file older than this is a leftover of a crashed write.
const STALE_TEMP: Duration = Duration::from_secs(60);

/// One stored memory.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct Record {
    /// Its id (also its file name, less `.json`).
    pub id: String,
    /// A short title.
    pub title: String,
    /// The text.
    pub content: String,
    /// Tags, lowercased, without duplicates.
    #[serde(default)]
    pub tags: Vec<String>,
    /// When it was created, RFC 3339 UTC.
    pub created_at: String,
    /// When it was last changed, RFC 3339 UTC.
    pub updated_at: String,
}

/// The current time, RFC 3339 UTC with milliseconds.
pub(crate) fn now() -> String {
    chrono::DateTime::<chrono::Utc>::from(SystemTime::now())
        .to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
}

/// 64 random bits (from WASI's random seed), mixed with the clock.
fn random() -> u64 {
    let mut hasher = RandomState::new().build_hasher();
    hasher.write_u128(
        SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or_default(),
    );
    hasher.finish()
}

/// A new id: the creation time in milliseconds and 32 random bits, both in
/// hex, so ids sort by creation time. E.g. `19a2b3c4d5e-9f8e7d6c`.
pub(crate) fn new_id() -> String {
    let millis = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis())
        .unwrap_or_default();
    format!("{millis:x}-{:08x}", random() as u32)
}

/// Checks an id given by the model: ids are made of lowercase hex digits and
/// `-`, so one can never name a path outside the store.
///
/// # Errors
///
/// `invalid_arguments` for anything else.
pub(crate) fn check_id(id: &str) -> Result<(), ToolError> {
    let valid = !id.is_empty()
        && id.len() <= 64
        && id
            .bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b) || b == b'-');
    if valid {
        Ok(())
    } else {
        Err(ToolError::invalid_arguments(format!(
            "`{id}` is not a memory id: ids look like `19a2b3c4d5e-9f8e7d6c` (see memory_list_titles)"
        )))
    }
}

/// The file holding record `id`.
fn path_of(id: &str) -> PathBuf {
    PathBuf::from(DIR).join(format!("{id}.json"))
}

/// Turns an I/O error into a `failed` tool error; a missing store directory
/// (not granted) is reported as such.
pub(crate) fn io_error(what: &str, err: io::Error) -> ToolError {
    if fs::metadata(DIR).is_err() {
        return ToolError::failed(format!(
            "the memory directory {DIR} is not available to this plugin"
        ));
    }
    ToolError::failed(format!("{what}: {err}"))
}

/// The error for an id with no record.
pub(crate) fn not_found(id: &str) -> ToolError {
    ToolError::failed(format!("no memory with id `{id}` (it may have been deleted)"))
}

/// Reads record `id`.
///
/// # Errors
///
/// `failed` if there is no such record or it cannot be read.
pub(crate) fn load(id: &str) -> Result<Record, ToolError> {
    check_id(id)?;
    let bytes = match fs::read(path_of(id)) {
        Ok(bytes) => bytes,
        Err(e) if e.kind() == ErrorKind::NotFound && fs::metadata(DIR).is_ok() => {
            return Err(not_found(id));
        }
        Err(e) => return Err(io_error(&format!("reading memory `{id}`"), e)),
    };
    serde_json::from_slice(&bytes)
        .map_err(|e| ToolError::failed(format!("memory `{id}` is not a valid record: {e}")))
}

/// Writes `record` to a fresh, fsynced temp file and returns its path.
fn write_temp(record: &Record) -> Result<PathBuf, ToolError> {
    remove_stale_temps();
    let bytes = serde_json::to_vec_pretty(record)
        .map_err(|e| ToolError::failed(format!("encoding the record: {e}")))?;
    let temp = PathBuf::from(DIR).join(format!("{TEMP_PREFIX}{:016x}.partial", random()));
    let result = (|| {
        let mut file = OpenOptions::new().write(true).create_new(true).open(&temp)?;
        file.write_all(&bytes)?;
        file.sync_all()
    })();
    if let Err(e) = result {
        let _ = fs::remove_file(&temp);
        return Err(io_error("writing the record", e));
    }
    Ok(temp)
}

/// Flushes the directory entry changes, where the platform allows it.
fn sync_dir() {
    if let Ok(dir) = File::open(DIR) {
        let _ = dir.sync_all();
    }
}

/// Stores a new record under its id, unless the id is taken: returns false
/// then, and the caller picks another id.
///
/// # Errors
///
/// `failed` if the write fails.
pub(crate) fn create(record: &Record) -> Result<bool, ToolError> {
    let temp = write_temp(record)?;
    let linked = fs::hard_link(&temp, path_of(&record.id));
    let _ = fs::remove_file(&temp);
    match linked {
        Ok(()) => {
            sync_dir();
            Ok(true)
        }
        Err(e) if e.kind() == ErrorKind::AlreadyExists => Ok(false),
        Err(e) => Err(io_error("storing the record", e)),
    }
}

/// Replaces an existing record atomically.
///
/// # Errors
///
/// `failed` if the write fails.
pub(crate) fn replace(record: &Record) -> Result<(), ToolError> {
    let temp = write_temp(record)?;
    if let Err(e) = fs::rename(&temp, path_of(&record.id)) {
        let _ = fs::remove_file(&temp);
        return Err(io_error("storing the record", e));
    }
    sync_dir();
    Ok(())
}

/// Deletes record `id`.
///
/// # Errors
///
/// `failed` if there is no such record or it cannot be removed.
pub(crate) fn remove(id: &str) -> Result<(), ToolError> {
    check_id(id)?;
    match fs::remove_file(path_of(id)) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == ErrorKind::NotFound && fs::metadata(DIR).is_ok() => Err(not_found(id)),
        Err(e) => Err(io_error(&format!("deleting memory `{id}`"), e)),
    }
}

/// Every record in the store (at most [`MAX_RECORDS`]), and how many files
/// named like records could not be parsed.
///
/// # Errors
///
/// `failed` if the directory cannot be read.
pub(crate) fn scan() -> Result<(Vec<Record>, usize), ToolError> {
    let entries = fs::read_dir(DIR).map_err(|e| io_error("reading the memory directory", e))?;
    let mut records = Vec::new();
    let mut unreadable = 0;
    for entry in entries.flatten() {
        if records.len() >= MAX_RECORDS {
            break;
        }
        let Ok(name) = entry.file_name().into_string() else {
            continue;
        };
        let Some(id) = name.strip_suffix(".json") else {
            continue;
        };
        if check_id(id).is_err() {
            continue;
        }
        match fs::read(entry.path()).map(|b| serde_json::from_slice::<Record>(&b)) {
            Ok(Ok(record)) => records.push(record),
            _ => unreadable += 1,
        }
    }
    Ok((records, unreadable))
}

/// Removes temp files left by writes that crashed, best-effort.
fn remove_stale_temps() {
    let Ok(entries) = fs::read_dir(DIR) else { return };
    for entry in entries.flatten() {
        let is_temp = entry
            .file_name()
            .to_str()
            .is_some_and(|n| n.starts_with(TEMP_PREFIX));
        let stale = entry
            .metadata()
            .and_then(|m| m.modified())
            .ok()
            .and_then(|t| t.elapsed().ok())
            .is_some_and(|age| age > STALE_TEMP);
        if is_temp && stale {
            let _ = fs::remove_file(entry.path());
        }
    }
}
