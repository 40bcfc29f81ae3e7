//! Result receipts of background processes: one JSON file per finished
//! process, written atomically (temporary file, flush, rename), readable
//! only by the session that started the process, and pruned by age and by a
//! count **per session** (so that one session's processes never evict
//! another's receipts). A receipt is **always redacted** ([`toolhost_core::redact`]:
//! credential shapes and the store's known secret values) before it is
//! written, whatever the live-output settings. As a second line of defence,
//! on Unix the folders are created `0700` and each receipt `0600`.
//!
//! Layout: `DIR/<session key>/<handle>.json`, the session key being the
//! first 16 hex digits of the blake3 hash of the session id.

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use serde::{Deserialize, Serialize};

use crate::request::ExecError;
use toolhost_core::redact::Redactor;

/// Who asks for a process or its receipt: a session's id and the sessions
/// it continues (see `toolhost_core::dispatch::Session::continuing`). It owns
/// what any of them started.
#[derive(Debug, Clone, Copy)]
pub struct Caller<'a> {
    /// The session's own id.
    pub session: &'a str,
    /// The sessions it continues.
    pub continues: &'a [String],
}

impl<'a> Caller<'a> {
    /// Whether a process started by session `owner` is this caller's.
    pub fn owns(&self, owner: &str) -> bool {
        self.session == owner || self.continues.iter().any(|c| c == owner)
    }

    fn ids(&self) -> impl Iterator<Item = &'a str> + '_ {
        std::iter::once(self.session).chain(self.continues.iter().map(String::as_str))
    }
}

impl<'a> From<&'a str> for Caller<'a> {
    fn from(session: &'a str) -> Self {
        Caller {
            session,
            continues: &[],
        }
    }
}

impl<'a> From<&'a String> for Caller<'a> {
    fn from(session: &'a String) -> Self {
        Caller::from(session.as_str())
    }
}

/// The stored result of one background process.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Receipt {
    /// The process handle.
    pub handle: String,
    /// The session that started it (the only one allowed to read this).
    pub owner_session: String,
    /// The command (redacted).
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
    /// The end of its combined output (capped, head and tail kept;
    /// redacted).
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
    redactor: Redactor,
}

/// Whether a handle is safe as a file name (letters, digits, `-`).
pub(crate) fn valid_handle(h: &str) -> bool {
    !h.is_empty() && h.len() <= 64 && h.chars().all(|c| c.is_ascii_alphanumeric() || c == '-')
}

impl ReceiptStore {
    /// Receipts in `dir`, each kept at most `max_age`, at most `max_count`
    /// per session; redacted with the credential shapes only (see
    /// [`ReceiptStore::with_redactor`]).
    pub fn new(dir: impl Into<PathBuf>, max_age: Duration, max_count: usize) -> ReceiptStore {
        ReceiptStore {
            dir: dir.into(),
            max_age,
            max_count,
            redactor: Redactor::default(),
        }
    }

    /// Redacts receipts with `redactor` (for example one that knows the
    /// secret values commands are given).
    pub fn with_redactor(mut self, redactor: Redactor) -> ReceiptStore {
        self.redactor = redactor;
        self
    }

    /// The folder.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The folder of `session`'s receipts.
    fn session_dir(&self, session: &str) -> PathBuf {
        let key = blake3::hash(session.as_bytes()).to_hex();
        self.dir.join(&key.as_str()[..16])
    }

    fn path_of(&self, session: &str, handle: &str) -> PathBuf {
        self.session_dir(session).join(format!("{handle}.json"))
    }

    /// Writes `r`, redacted, atomically; then prunes.
    ///
    /// # Errors
    /// When the folder or file cannot be written.
    pub fn write(&self, r: &Receipt) -> Result<(), ExecError> {
        let path = self.path_of(&r.owner_session, &r.handle);
        let err = |source| ExecError::Receipt {
            path: path.clone(),
            source,
        };
        if !valid_handle(&r.handle) {
            return Err(err(std::io::Error::other("invalid handle")));
        }
        let redacted = Receipt {
            command: self.redactor.redact(&r.command),
            output: self.redactor.redact(&r.output),
            ..r.clone()
        };
        let dir = self.session_dir(&r.owner_session);
        private_dir(&self.dir).map_err(err)?;
        private_dir(&dir).map_err(err)?;
        let tmp = dir.join(format!(".{}.tmp", r.handle));
        let bytes = serde_json::to_vec_pretty(&redacted).map_err(|e| err(std::io::Error::other(e)))?;
        let write = || -> std::io::Result<()> {
            let mut f = private_file(&tmp)?;
            f.write_all(&bytes)?;
            f.sync_all()?;
            fs::rename(&tmp, &path)?;
            fs::File::open(&dir)?.sync_all()
        };
        if let Err(e) = write() {
            let _ = fs::remove_file(&tmp);
            return Err(err(e));
        }
        self.prune();
        Ok(())
    }

    /// Reads the receipt of `handle` for `caller`: one its session, or a
    /// session it continues, started.
    ///
    /// # Errors
    /// [`ExecError::UnknownHandle`] when there is none, it is past the age
    /// limit, or it belongs to another session (the cases are
    /// indistinguishable on purpose).
    pub fn read<'c>(&self, caller: impl Into<Caller<'c>>, handle: &str) -> Result<Receipt, ExecError> {
        let caller = caller.into();
        let unknown = || ExecError::UnknownHandle(handle.to_string());
        if !valid_handle(handle) {
            return Err(unknown());
        }
        caller
            .ids()
            .find_map(|session| self.read_one(session, handle))
            .ok_or_else(unknown)
    }

    fn read_one(&self, session: &str, handle: &str) -> Option<Receipt> {
        let path = self.path_of(session, handle);
        let expired = fs::metadata(&path)
            .and_then(|m| m.modified())
            .map_or(true, |t| self.is_expired(t));
        if expired {
            let _ = fs::remove_file(&path);
            return None;
        }
        let bytes = fs::read(&path).ok()?;
        let r: Receipt = serde_json::from_slice(&bytes).ok()?;
        (r.owner_session == session && r.handle == handle).then_some(r)
    }

    fn is_expired(&self, modified: SystemTime) -> bool {
        SystemTime::now()
            .duration_since(modified)
            .is_ok_and(|age| age > self.max_age)
    }

    /// Deletes receipts older than the age limit, then, in each session's
    /// folder, the oldest beyond the count limit. Errors are ignored (best
    /// effort).
    pub fn prune(&self) {
        let Ok(sessions) = fs::read_dir(&self.dir) else {
            return;
        };
        for session in sessions.filter_map(Result::ok).map(|e| e.path()) {
            let Ok(entries) = fs::read_dir(&session) else {
                continue;
            };
            let mut files: Vec<(SystemTime, PathBuf)> = entries
                .filter_map(Result::ok)
                .map(|e| e.path())
                .filter(|p| p.extension().is_some_and(|x| x == "json"))
                .filter_map(|p| fs::metadata(&p).and_then(|m| m.modified()).ok().map(|t| (t, p)))
                .collect();
            files.retain(|(t, p)| {
                let old = self.is_expired(*t);
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
