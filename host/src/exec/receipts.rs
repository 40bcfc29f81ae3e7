//! Result receipts of background processes: one JSON file per finished
//! process, written atomically (temporary file, flush, rename), readable
//! only by the session that started the process, pruned by age and count.
//! A receipt holds the command's output, which may be sensitive: on Unix the
//! folder is created `0700` and each receipt `0600`, so other local users
//! cannot read them either.

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use serde::{Deserialize, Serialize};

use crate::exec::request::ExecError;

/// The stored result of one background process.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Receipt {
    /// The process handle.
    pub handle: String,
    /// The session that started it (the only one allowed to read this).
    pub owner_session: String,
    /// The command.
    pub command: String,
    /// The exit code (`None` when killed by a signal).
    pub exit_code: Option<i32>,
    /// Whether its timeout ended it.
    pub timed_out: bool,
    /// Whether it was killed on request.
    pub killed: bool,
    /// Start and end, in milliseconds since the Unix epoch.
    pub started_ms: u64,
    /// See `started_ms`.
    pub finished_ms: u64,
    /// The end of its combined output (capped, head and tail kept).
    pub output: String,
    /// Whether the output was cut.
    pub truncated: bool,
}

/// The receipts folder and its retention limits.
#[derive(Debug, Clone)]
pub struct ReceiptStore {
    dir: PathBuf,
    max_age: Duration,
    max_count: usize,
}

/// Whether a handle is safe as a file name (letters, digits, `-`).
pub(crate) fn valid_handle(h: &str) -> bool {
    !h.is_empty() && h.len() <= 64 && h.chars().all(|c| c.is_ascii_alphanumeric() || c == '-')
}

impl ReceiptStore {
    /// Receipts in `dir`, kept at most `max_age` and at most `max_count`.
    pub fn new(dir: impl Into<PathBuf>, max_age: Duration, max_count: usize) -> ReceiptStore {
        ReceiptStore {
            dir: dir.into(),
            max_age,
            max_count,
        }
    }

    /// The folder.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    fn path_of(&self, handle: &str) -> PathBuf {
        self.dir.join(format!("{handle}.json"))
    }

    /// Writes `r` atomically, then prunes.
    ///
    /// # Errors
    /// When the folder or file cannot be written.
    pub fn write(&self, r: &Receipt) -> Result<(), ExecError> {
        let path = self.path_of(&r.handle);
        let err = |source| ExecError::Receipt {
            path: path.clone(),
            source,
        };
        if !valid_handle(&r.handle) {
            return Err(err(std::io::Error::other("invalid handle")));
        }
        private_dir(&self.dir).map_err(err)?;
        let tmp = self.dir.join(format!(".{}.tmp", r.handle));
        let bytes = serde_json::to_vec_pretty(r).map_err(|e| err(std::io::Error::other(e)))?;
        let write = || -> std::io::Result<()> {
            let mut f = private_file(&tmp)?;
            f.write_all(&bytes)?;
            f.sync_all()?;
            fs::rename(&tmp, &path)?;
            fs::File::open(&self.dir)?.sync_all()
        };
        if let Err(e) = write() {
            let _ = fs::remove_file(&tmp);
            return Err(err(e));
        }
        self.prune();
        Ok(())
    }

    /// Reads the receipt of `handle` for `session`.
    ///
    /// # Errors
    /// [`ExecError::UnknownHandle`] when there is none, or it belongs to
    /// another session (the two are indistinguishable on purpose).
    pub fn read(&self, session: &str, handle: &str) -> Result<Receipt, ExecError> {
        let unknown = || ExecError::UnknownHandle(handle.to_string());
        if !valid_handle(handle) {
            return Err(unknown());
        }
        let bytes = fs::read(self.path_of(handle)).map_err(|_| unknown())?;
        let r: Receipt = serde_json::from_slice(&bytes).map_err(|_| unknown())?;
        if r.owner_session != session || r.handle != handle {
            return Err(unknown());
        }
        Ok(r)
    }

    /// Deletes receipts older than the age limit, then the oldest beyond
    /// the count limit. Errors are ignored (best effort).
    pub fn prune(&self) {
        let Ok(entries) = fs::read_dir(&self.dir) else {
            return;
        };
        let now = SystemTime::now();
        let mut files: Vec<(SystemTime, PathBuf)> = entries
            .filter_map(Result::ok)
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|x| x == "json"))
            .filter_map(|p| fs::metadata(&p).and_then(|m| m.modified()).ok().map(|t| (t, p)))
            .collect();
        files.retain(|(t, p)| {
            let old = now.duration_since(*t).is_ok_and(|age| age > self.max_age);
            if old {
                let _ = fs::remove_file(p);
            }
            !old
        });
        files.sort_by(|a, b| b.0.cmp(&a.0).then_with(|| b.1.cmp(&a.1)));
        for (_, p) in files.iter().skip(self.max_count) {
            let _ = fs::remove_file(p);
        }
    }
}

/// Creates `dir` (and its parents) if missing, and makes `dir` itself
/// private to its owner on Unix (even if it existed already).
fn private_dir(dir: &Path) -> std::io::Result<()> {
    fs::create_dir_all(dir)?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = fs::metadata(dir)?.permissions().mode() & 0o777;
        if mode != 0o700 {
            fs::set_permissions(dir, fs::Permissions::from_mode(0o700))?;
        }
    }
    Ok(())
}

/// Creates (or truncates) `path`, readable and writable by the owner only on
/// Unix.
fn private_file(path: &Path) -> std::io::Result<fs::File> {
    let mut options = fs::OpenOptions::new();
    options.write(true).create(true).truncate(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    options.open(path)
}
