//! # The audit log: who did what, what was decided, and why
//!
//! One JSON object per line, appended to a file the operator names (`[audit]
//! path`): every tool call, every approval decision, every plugin loaded,
//! unloaded or refused, every capability a plugin declared and was not
//! granted, and every HTTP client let in or turned away. Each line says
//! when (`time`, RFC 3339 with milliseconds, UTC), what happened (`event`),
//! who (`session`, and for HTTP the caller: a digest of its token, never
//! the token), what (the tool, the component's hash, a BLAKE3 digest of the
//! arguments: never the arguments themselves), the decision and why.
//!
//! **No finished line is lost.** A line is written whole, before the
//! action it records is answered, into the log's ring (see [`ring`]): a
//! file beside the log, `.NAME.ring`, mapped into the process's memory and
//! shared with the kernel, so that a process that crashes afterwards has
//! it kept (the kernel holds it). The log's thread moves lines from the
//! ring into the log file within [`FLUSH_EVERY`], many to a `write(2)`;
//! after a crash, the next process to open the log moves in what is left,
//! before anything else is written, and leaves out lines the log already
//! ends with. A crash in the middle of a line leaves no line damaged. (A
//! machine that loses power may lose what its disk had not stored yet:
//! nothing is synced per line, which would cost a call a disk flush.)
//! Where there is no ring (another process holds it; not Linux; a
//! filesystem that cannot take one, such as Btrfs or ZFS), each line is
//! its own `write(2)` to the log, which keeps the same promise at a system
//! call a line.
//!
//! **Cheap.** A call's line is written by hand into a buffer the thread
//! keeps (no JSON tree, no map), its time formatted without a calendar
//! library, its arguments' digest kept as 32 bytes until the line is
//! written, and copied into the ring: no system call on the call's path.
//! Measured in `BENCHMARKS.md` ("Observability's cost").
//!
//! **Rotated.** When a line would take the file past `max_bytes`, the file
//! is renamed `PATH.1` (an older `PATH.1` becomes `PATH.2`, and so on up
//! to `keep`; the oldest is removed) and a new file is begun.
//!
//! A log that cannot be written (a full disk, a removed folder) does not
//! stop the host: a write cut short is taken back off the file's end (no
//! torn line stays in it), its lines wait in the ring, and a line that finds the
//! ring full (or, with no ring, cannot be written) is logged (`tracing`,
//! warn) and counted in [`AuditLog::lost`].

#[cfg(target_os = "linux")]
mod ring;

use std::cell::{Cell, RefCell};
use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, PoisonError};
use std::thread::JoinHandle;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde_json::{Map, Value};

use crate::FastMap;
use crate::dispatch::{CallInfo, CallOutcome, ToolCallEvent};
use crate::error::{Error, ErrorCode, Result};
use crate::metrics::CallObserver;
use crate::registry::{CallId, ToolSource};

/// Where the log goes and how it turns over.
#[derive(Debug, Clone)]
pub struct AuditOptions {
    /// The file lines are appended to.
    pub path: PathBuf,
    /// The most bytes the file grows to before it is rotated.
    pub max_bytes: u64,
    /// How many rotated files are kept (`PATH.1` ... `PATH.keep`).
    pub keep: usize,
}

/// The longest a line waits in the ring before the log file has it.
pub const FLUSH_EVERY: Duration = Duration::from_millis(10);

/// The ring's room: the lines of 10 ms of a host answering 100,000 calls a
/// second, small enough to stay in a processor's cache (the log's thread
/// is woken when it is half full; a full ring is moved out on the call's
/// own thread, not lost).
const RING_BYTES: u64 = 256 << 10;

/// The log file, as the log's writer holds it.
struct Writer {
    file: File,
    /// Its length: when it is rotated.
    len: u64,
    /// Lines taken out of the ring, on their way to the file.
    batch: Vec<u8>,
    /// Whether the last write failed (a failure is warned about once).
    failing: bool,
}

/// What the log and its thread share.
struct Shared {
    options: AuditOptions,
    /// Where lines wait for the log file; `None`: each line is written to
    /// the file at once.
    #[cfg(target_os = "linux")]
    ring: Option<ring::Ring>,
    /// Held while a line is put in the ring: one writer at a time.
    appending: Mutex<()>,
    writer: Mutex<Writer>,
    lost: AtomicU64,
    /// Whether the log's thread is asleep until a line comes (and must be
    /// woken), and whether it must stop.
    asleep: AtomicBool,
    stop: Mutex<bool>,
    wake: Condvar,
}

/// The audit log; see the [module](self) documentation.
pub struct AuditLog {
    shared: Arc<Shared>,
    /// The arguments' digests (BLAKE3) of the calls running, by call.
    digests: Mutex<FastMap<CallId, [u8; 32]>>,
    /// The thread moving lines from the ring to the log file.
    mover: Option<JoinHandle<()>>,
}

impl std::fmt::Debug for AuditLog {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AuditLog")
            .field("path", &self.shared.options.path)
            .finish_non_exhaustive()
    }
}

fn open(path: &Path) -> std::io::Result<File> {
    let mut options = OpenOptions::new();
    options.create(true).append(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    options.open(path)
}

/// The BLAKE3 digest of a JSON value's text, as `blake3:HEX`.
pub fn digest(value: &Value) -> String {
    format!("blake3:{}", blake3::Hash::from(digest_bytes(value)).to_hex())
}

/// The most bytes a thread's buffer keeps between lines (a larger line or
/// argument text is written from a buffer of its own size, then dropped).
const KEPT_BUFFER: usize = 16 * 1024;

thread_local! {
    /// Where this thread writes a line, or the text of arguments to digest.
    static BUFFER: RefCell<Vec<u8>> = const { RefCell::new(Vec::new()) };
}

/// Runs `f` on this thread's cleared buffer.
fn with_buffer<T>(f: impl FnOnce(&mut Vec<u8>) -> T) -> T {
    BUFFER.with(|buffer| match buffer.try_borrow_mut() {
        Ok(mut buffer) => {
            buffer.clear();
            let out = f(&mut buffer);
            if buffer.capacity() > KEPT_BUFFER {
                *buffer = Vec::new();
            }
            out
        }
        // Re-entered (cannot happen: nothing here calls back), or torn down.
        Err(_) => f(&mut Vec::new()),
    })
}

/// The BLAKE3 digest of `value`'s JSON text.
fn digest_bytes(value: &Value) -> [u8; 32] {
    with_buffer(|text| {
        // Writing to a Vec cannot fail.
        let _ = serde_json::to_writer(&mut *text, value);
        *blake3::hash(text).as_bytes()
    })
}

/// Appends `at` as RFC 3339 UTC with milliseconds (`2026-12-07T03:40:12.345Z`).
/// The text up to the second is made once a second on each thread (a
/// busy log writes many lines a second) and kept.
fn write_time(out: &mut Vec<u8>, at: SystemTime) {
    thread_local! {
        /// The last second written on this thread, and its text.
        static SECOND: Cell<(u64, [u8; 20])> = const { Cell::new((u64::MAX, [0; 20])) };
    }
    let since = at.duration_since(UNIX_EPOCH).unwrap_or_default();
    let secs = since.as_secs();
    let prefix = match SECOND.try_with(Cell::get) {
        Ok((second, prefix)) if second == secs => prefix,
        _ => {
            let prefix = second_text(secs);
            let _ = SECOND.try_with(|second| second.set((secs, prefix)));
            prefix
        }
    };
    out.extend_from_slice(&prefix);
    let millis = since.subsec_millis();
    out.extend_from_slice(&[
        b'0' + (millis / 100) as u8,
        b'0' + (millis / 10 % 10) as u8,
        b'0' + (millis % 10) as u8,
        b'Z',
    ]);
}

/// `secs` since the epoch as RFC 3339 UTC up to its second, with the dot
/// the milliseconds follow (`2026-12-07T03:40:12.`).
fn second_text(secs: u64) -> [u8; 20] {
    let (days, of_day) = (secs / 86_400, secs % 86_400);
    // Days since 1970-01-01 to a civil date (Howard Hinnant's algorithm).
    let z = days as i64 + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    let fields = [
        (year, 4),
        (month, 2),
        (day, 2),
        ((of_day / 3600) as i64, 2),
        ((of_day / 60 % 60) as i64, 2),
        ((of_day % 60) as i64, 2),
    ];
    let mut text = [0u8; 20];
    let mut at = 0;
    for ((value, width), separator) in fields.into_iter().zip([b'-', b'-', b'T', b':', b':', b'.']) {
        let mut rest = value.clamp(0, 9_999);
        for digit in text[at..at + width].iter_mut().rev() {
            *digit = b'0' + (rest % 10) as u8;
            rest /= 10;
        }
        text[at + width] = separator;
        at += width + 1;
    }
    text
}

/// Each byte's two lowercase hex digits: a digest written a byte a step.
static HEX_PAIRS: [[u8; 2]; 256] = {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let mut pairs = [[0u8; 2]; 256];
    let mut byte = 0;
    while byte < 256 {
        pairs[byte] = [HEX[byte >> 4], HEX[byte & 0xf]];
        byte += 1;
    }
    pairs
};

/// A JSON object written field by field.
struct Fields<'a>(&'a mut Vec<u8>);

impl<'a> Fields<'a> {
    /// Begins a line in `out`: its time (now), then its `event`.
    fn begin(out: &'a mut Vec<u8>, event: &str) -> Fields<'a> {
        let mut line = Fields(out);
        let time = line.key("time");
        time.push(b'"');
        write_time(time, SystemTime::now());
        time.push(b'"');
        line.value("event", event);
        line
    }

    /// A field whose key is not one of the code's own: escaped as JSON.
    fn escaped(&mut self, key: &str, value: &Value) {
        let out = &mut *self.0;
        out.push(b',');
        // Writing to a Vec cannot fail.
        let _ = serde_json::to_writer(&mut *out, key);
        out.push(b':');
        let _ = serde_json::to_writer(out, value);
    }

    fn key(&mut self, key: &str) -> &mut Vec<u8> {
        let out = &mut *self.0;
        out.push(if out.is_empty() { b'{' } else { b',' });
        out.push(b'"');
        out.extend_from_slice(key.as_bytes());
        out.extend_from_slice(b"\":");
        out
    }

    /// A value serde writes: a string (escaped), a number, `null`.
    fn value(&mut self, key: &str, value: impl serde::Serialize) {
        // Writing to a Vec cannot fail.
        let _ = serde_json::to_writer(self.key(key), &value);
    }

    /// A string the code itself names (an event, a source, an outcome):
    /// plain ASCII with nothing to escape, so written as it is.
    fn word(&mut self, key: &str, word: &'static str) {
        debug_assert!(
            word.bytes()
                .all(|b| b.is_ascii_graphic() && b != b'"' && b != b'\\')
        );
        let out = self.key(key);
        out.push(b'"');
        out.extend_from_slice(word.as_bytes());
        out.push(b'"');
    }

    /// A BLAKE3 digest, as `"blake3:HEX"`.
    fn digest(&mut self, key: &str, digest: &[u8; 32]) {
        let mut text = [[0u8; 2]; 32];
        for (pair, byte) in text.iter_mut().zip(digest) {
            *pair = HEX_PAIRS[usize::from(*byte)];
        }
        let out = self.key(key);
        out.extend_from_slice(b"\"blake3:");
        out.extend_from_slice(text.as_flattened());
        out.push(b'"');
    }

    fn end(self) {
        self.0.extend_from_slice(b"}\n");
    }
}

impl AuditLog {
    /// Opens (creating it, readable by its owner only) the log `options`
    /// name, appending to what is there, and its ring; lines a process
    /// before this one left in the ring are moved into the log first.
    ///
    /// # Errors
    ///
    /// `config` when the file cannot be opened, or `max_bytes` is zero.
    pub fn open(options: AuditOptions) -> Result<AuditLog> {
        AuditLog::open_with(options, RING_BYTES)
    }

    fn open_with(options: AuditOptions, ring_bytes: u64) -> Result<AuditLog> {
        if options.max_bytes == 0 {
            return Err(Error::new(
                ErrorCode::Config,
                "[audit] max_bytes must be at least 1",
            ));
        }
        let file = open(&options.path).map_err(|e| {
            Error::new(
                ErrorCode::Config,
                format!("[audit] path {}: {e}", options.path.display()),
            )
        })?;
        let len = file.metadata().map(|m| m.len()).unwrap_or(0);
        #[cfg(target_os = "linux")]
        let ring = match ring::Ring::open(&ring::path_for(&options.path), ring_bytes) {
            Ok(ring) => Some(ring),
            Err(ring::RingError::Held) => {
                tracing::warn!(path = %options.path.display(), "another process is writing this audit log: each line is written to it at once");
                None
            }
            Err(ring::RingError::NotOwn) => {
                tracing::warn!(path = %options.path.display(), "the audit log's ring is not a file of this user's alone: each line is written to the log at once");
                None
            }
            Err(ring::RingError::Filesystem(kind)) => {
                tracing::warn!(path = %options.path.display(), "the audit log's filesystem (statfs type {kind:#x}) may need new blocks to write in place, which a mapped file cannot be refused: each line is written to the log at once");
                None
            }
            Err(ring::RingError::Io(e)) => {
                tracing::warn!(path = %options.path.display(), "the audit log's ring could not be made ({e}): each line is written to the log at once");
                None
            }
        };
        #[cfg(not(target_os = "linux"))]
        let _ = ring_bytes;
        let shared = Arc::new(Shared {
            options,
            #[cfg(target_os = "linux")]
            ring,
            appending: Mutex::new(()),
            writer: Mutex::new(Writer {
                file,
                len,
                batch: Vec::new(),
                failing: false,
            }),
            lost: AtomicU64::new(0),
            asleep: AtomicBool::new(false),
            stop: Mutex::new(false),
            wake: Condvar::new(),
        });
        if !shared.has_ring() {
            return Ok(AuditLog {
                shared,
                digests: Mutex::default(),
                mover: None,
            });
        }
        // What a process killed before this one left: into the log before
        // any line of this one's.
        shared.move_out(true).map_err(|e| {
            Error::new(
                ErrorCode::Config,
                format!(
                    "[audit] path {}: moving in the lines a process left: {e}",
                    shared.options.path.display()
                ),
            )
        })?;
        let mover = std::thread::Builder::new()
            .name("toolhost-audit".into())
            .spawn({
                let shared = Arc::clone(&shared);
                move || shared.move_lines()
            })
            .map_err(|e| Error::new(ErrorCode::Internal, format!("[audit] its thread: {e}")))?;
        Ok(AuditLog {
            shared,
            digests: Mutex::default(),
            mover: Some(mover),
        })
    }

    /// The file it appends to.
    pub fn path(&self) -> &Path {
        &self.shared.options.path
    }

    /// Lines that could not be written.
    pub fn lost(&self) -> u64 {
        self.shared.lost.load(Ordering::Relaxed)
    }

    /// Moves every line written so far into the log file (the log's thread
    /// does within [`FLUSH_EVERY`]): what reads the file next sees them.
    ///
    /// # Errors
    ///
    /// When the file cannot be written (the lines stay in the ring).
    pub fn flush(&self) -> std::io::Result<()> {
        self.shared.move_out(false)
    }

    /// Stops the log's thread.
    fn stop_mover(&mut self) {
        if let Some(mover) = self.mover.take() {
            *self.shared.stop.lock().unwrap_or_else(PoisonError::into_inner) = true;
            self.shared.wake.notify_one();
            let _ = mover.join();
        }
    }

    /// Appends one `event` line with `fields`: `time` first, then
    /// `event`, then the fields in their map's order (a field named
    /// `time` or `event` is left out: the line's own come first, once).
    pub fn record(&self, event: &str, fields: Map<String, Value>) {
        with_buffer(|out| {
            let mut line = Fields::begin(out, event);
            for (key, value) in &fields {
                if key != "time" && key != "event" {
                    line.escaped(key, value);
                }
            }
            line.end();
            self.shared.append(out);
        });
    }
}

impl Drop for AuditLog {
    fn drop(&mut self) {
        self.stop_mover();
        // What the thread had not moved yet (a failure was warned about:
        // the ring is kept for the next process then).
        let moved = self.shared.move_out(false);
        #[cfg(target_os = "linux")]
        if moved.is_ok()
            && !self.shared.pending()
            && let Some(shared) = Arc::get_mut(&mut self.shared)
            && let Some(ring) = shared.ring.take()
        {
            ring.remove();
        }
        let _ = moved;
    }
}

impl Shared {
    fn has_ring(&self) -> bool {
        #[cfg(target_os = "linux")]
        return self.ring.is_some();
        #[cfg(not(target_os = "linux"))]
        false
    }

    /// Writes one whole line: into the ring, or with no ring, to the file.
    fn append(&self, line: &[u8]) {
        let written = self.put(line);
        if let Err(e) = written {
            self.lost.fetch_add(1, Ordering::Relaxed);
            tracing::warn!(path = %self.options.path.display(), "an audit line could not be written: {e}");
        }
    }

    fn put(&self, line: &[u8]) -> std::io::Result<()> {
        // Held to the end: one writer at a time, and a line too long for
        // the ring goes to the file before any line after it.
        let _one = self.appending.lock().unwrap_or_else(PoisonError::into_inner);
        #[cfg(target_os = "linux")]
        if let Some(ring) = &self.ring {
            if !ring.has_room(line.len()) {
                // Moved out here (rare: the thread moves them every few
                // milliseconds).
                self.move_out(false)?;
            }
            if ring.has_room(line.len()) {
                ring.put(line);
                self.wake_mover(ring, line.len());
                return Ok(());
            }
        }
        let mut writer = self.writer.lock().unwrap_or_else(PoisonError::into_inner);
        self.write_lines(&mut writer, line, |_| {})
    }

    /// Wakes the log's thread after a line of `len` bytes was put in: when
    /// it sleeps (the ring was empty: it looks at the ring after saying it
    /// sleeps, this after the line was counted, so one of the two sees the
    /// other), or when the line took the ring past half full (the ring
    /// stays small enough to stay in the processor's cache).
    #[cfg(target_os = "linux")]
    fn wake_mover(&self, ring: &ring::Ring, len: usize) {
        let half = ring.capacity() / 2;
        let pending = ring.pending();
        let past_half = pending > half && pending - len as u64 <= half;
        if (self.asleep.load(Ordering::SeqCst) && self.asleep.swap(false, Ordering::SeqCst)) || past_half {
            let _stop = self.stop.lock().unwrap_or_else(PoisonError::into_inner);
            self.wake.notify_one();
        }
    }

    /// The log's thread: moves the ring's lines to the file every
    /// [`FLUSH_EVERY`] while there are some, and sleeps while there are none.
    fn move_lines(&self) {
        let mut stop = self.stop.lock().unwrap_or_else(PoisonError::into_inner);
        loop {
            if *stop {
                return;
            }
            if self.pending() {
                // Lines come in bunches: a few milliseconds' worth to a write.
                stop = self
                    .wake
                    .wait_timeout(stop, FLUSH_EVERY)
                    .unwrap_or_else(PoisonError::into_inner)
                    .0;
                drop(stop);
                let _ = self.move_out(false);
                stop = self.stop.lock().unwrap_or_else(PoisonError::into_inner);
            } else {
                self.asleep.store(true, Ordering::SeqCst);
                if self.pending() {
                    self.asleep.store(false, Ordering::SeqCst);
                    continue;
                }
                stop = self
                    .wake
                    .wait_while(stop, |stop| !*stop && self.asleep.load(Ordering::SeqCst))
                    .unwrap_or_else(PoisonError::into_inner);
            }
        }
    }

    /// Whether the ring holds lines the file does not have.
    fn pending(&self) -> bool {
        #[cfg(target_os = "linux")]
        return self.ring.as_ref().is_some_and(|ring| ring.pending() > 0);
        #[cfg(not(target_os = "linux"))]
        false
    }

    /// Moves the ring's lines to the file; `recovering`: they may be ones a
    /// killed process had written to the file already (its last write done
    /// and not yet counted), which are left out.
    fn move_out(&self, recovering: bool) -> std::io::Result<()> {
        #[cfg(target_os = "linux")]
        if let Some(ring) = &self.ring {
            let mut writer = self.writer.lock().unwrap_or_else(PoisonError::into_inner);
            let (parts, to) = ring.unmoved();
            let len = (parts[0].len() + parts[1].len()) as u64;
            let written = if len == 0 {
                Ok(())
            } else if !recovering && writer.len.saturating_add(len) <= self.options.max_bytes {
                // The common case: straight from the ring, in one write.
                append_whole(&mut writer.file, parts).map(|()| {
                    writer.len += len;
                    ring.flushed_to(to);
                })
            } else {
                // Line by line: a rotation on the way, or lines to leave out.
                let mut batch = std::mem::take(&mut writer.batch);
                batch.clear();
                batch.extend_from_slice(parts[0]);
                batch.extend_from_slice(parts[1]);
                let mut lines = &batch[..];
                let mut at = to - len;
                if recovering {
                    let skip = ring::already_logged(&tail(&self.options.path, lines.len())?, lines);
                    lines = &lines[skip..];
                    at += skip as u64;
                    ring.flushed_to(at);
                }
                let written = self.write_lines(&mut writer, lines, |len| {
                    at += len as u64;
                    ring.flushed_to(at);
                });
                if batch.capacity() <= KEPT_BUFFER * 16 {
                    writer.batch = batch;
                }
                written
            };
            match (&written, writer.failing) {
                (Err(e), false) => {
                    tracing::warn!(path = %self.options.path.display(), "the audit log cannot be written ({e}): its lines wait in its ring");
                }
                (Ok(()), true) => {
                    tracing::info!(path = %self.options.path.display(), "the audit log is written again")
                }
                _ => {}
            }
            writer.failing = written.is_err();
            return written;
        }
        let _ = recovering;
        Ok(())
    }

    /// Writes `lines` (whole lines) to the file, rotating it before a line
    /// that would take it past `max_bytes`; `done(n)` after each write of
    /// `n` bytes.
    fn write_lines(
        &self,
        writer: &mut Writer,
        mut lines: &[u8],
        mut done: impl FnMut(usize),
    ) -> std::io::Result<()> {
        while !lines.is_empty() {
            let room = self.options.max_bytes.saturating_sub(writer.len);
            let mut take = whole_lines_within(lines, room);
            if take == 0 {
                if writer.len > 0 {
                    self.rotate()?;
                    writer.file = open(&self.options.path)?;
                    writer.len = 0;
                    continue;
                }
                // A line larger than a whole file: a file of its own.
                take = lines
                    .iter()
                    .position(|b| *b == b'\n')
                    .map_or(lines.len(), |i| i + 1);
            }
            // One write of whole lines, appended at once or not at all.
            append_whole(&mut writer.file, [&lines[..take], &[]])?;
            writer.len = writer.len.saturating_add(take as u64);
            done(take);
            lines = &lines[take..];
        }
        Ok(())
    }

    /// `PATH.(n-1)` to `PATH.n`, ..., `PATH` to `PATH.1`.
    fn rotate(&self) -> std::io::Result<()> {
        let numbered = |n: usize| {
            let mut name = self.options.path.clone().into_os_string();
            name.push(format!(".{n}"));
            PathBuf::from(name)
        };
        if self.options.keep == 0 {
            return std::fs::remove_file(&self.options.path);
        }
        let _ = std::fs::remove_file(numbered(self.options.keep));
        for n in (1..self.options.keep).rev() {
            let from = numbered(n);
            if from.exists() {
                std::fs::rename(&from, numbered(n + 1))?;
            }
        }
        std::fs::rename(&self.options.path, numbered(1))
    }
}

/// Appends all of `parts` (whole lines), in as few writes as the kernel
/// takes, or none of them: a write that fails part way (a disk that fills
/// up takes what fits, then refuses the rest) is taken back off the end
/// of the file, so that no torn line stays in it (the lines are written
/// again later, whole).
fn append_whole(file: &mut File, parts: [&[u8]; 2]) -> std::io::Result<()> {
    let mut slices = parts.map(std::io::IoSlice::new);
    let mut slices = &mut slices[..];
    let mut written = 0u64;
    while !slices.is_empty() {
        let failed = match file.write_vectored(slices) {
            Ok(0) => std::io::ErrorKind::WriteZero.into(),
            Ok(n) => {
                written += n as u64;
                std::io::IoSlice::advance_slices(&mut slices, n);
                continue;
            }
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => e,
        };
        if written > 0 {
            let len = file.metadata()?.len();
            file.set_len(len.saturating_sub(written))?;
        }
        return Err(failed);
    }
    Ok(())
}

/// How many bytes at the start of `lines` are whole lines within `room`.
fn whole_lines_within(lines: &[u8], room: u64) -> usize {
    if lines.len() as u64 <= room {
        return lines.len();
    }
    let room = usize::try_from(room).unwrap_or(usize::MAX).min(lines.len());
    lines[..room]
        .iter()
        .rposition(|b| *b == b'\n')
        .map_or(0, |i| i + 1)
}

/// The last `len` bytes (or fewer) of the file at `path`; none when it is
/// missing.
#[cfg(target_os = "linux")]
fn tail(path: &Path, len: usize) -> std::io::Result<Vec<u8>> {
    match File::open(path) {
        Ok(file) => Ok(last_bytes(file, len as u64)?.0),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Vec::new()),
        Err(e) => Err(e),
    }
}

/// The last `max` bytes (or fewer) of `file`, and where in it they begin.
fn last_bytes(mut file: File, max: u64) -> std::io::Result<(Vec<u8>, u64)> {
    use std::io::{Read, Seek, SeekFrom};
    let len = file.metadata()?.len();
    let start = len.saturating_sub(max);
    file.seek(SeekFrom::Start(start))?;
    let mut bytes = Vec::with_capacity(usize::try_from(len - start).unwrap_or(0));
    file.take(len - start).read_to_end(&mut bytes)?;
    Ok((bytes, start))
}

/// What [`read_tail`] looks for: lines containing `text` (ASCII case
/// ignored), of the event `event`, at most `limit` of them.
#[derive(Debug, Clone, Default)]
pub struct AuditQuery {
    /// Text every line returned contains (none: any).
    pub text: Option<String>,
    /// The `event` every line returned has (none: any).
    pub event: Option<String>,
    /// The most lines returned.
    pub limit: usize,
}

/// The newest lines of an audit log, as [`read_tail`] found them.
#[derive(Debug, Clone, Default, serde::Serialize)]
pub struct AuditTail {
    /// The lines that match, newest first.
    pub lines: Vec<Value>,
    /// How many bytes were read.
    pub scanned_bytes: u64,
    /// Whether older lines were left unread (the read's budget ran out,
    /// or `limit` lines were found first).
    pub more: bool,
}

/// The most bytes [`read_tail`] reads, over the file and its newest
/// rotated one.
pub const MAX_TAIL_BYTES: u64 = 8 << 20;

/// Reads the newest lines of the audit log at `path` (then of `PATH.1`,
/// when the file holds less than [`MAX_TAIL_BYTES`]) that match `query`,
/// newest first: a bounded read of the files' ends, whatever their size.
/// A line cut by the budget or not JSON is skipped. Blocking: call it off
/// the async workers.
///
/// # Errors
///
/// When `path` cannot be read (a missing rotated file is no error).
pub fn read_tail(path: &Path, query: &AuditQuery) -> std::io::Result<AuditTail> {
    let needle = query
        .text
        .as_deref()
        .filter(|t| !t.is_empty())
        .map(str::to_ascii_lowercase);
    let mut tail = AuditTail::default();
    let mut budget = MAX_TAIL_BYTES;
    let mut rotated = path.as_os_str().to_owned();
    rotated.push(".1");
    for (i, file) in [path.to_path_buf(), PathBuf::from(rotated)].iter().enumerate() {
        let f = match File::open(file) {
            Ok(f) => f,
            Err(e) if i > 0 && e.kind() == std::io::ErrorKind::NotFound => break,
            Err(e) => return Err(e),
        };
        let (bytes, start) = last_bytes(f, budget)?;
        budget -= bytes.len() as u64;
        tail.scanned_bytes += bytes.len() as u64;
        let mut lines: Vec<&[u8]> = bytes.split(|b| *b == b'\n').collect();
        if start > 0 {
            // The first line began before the read: cut, skipped.
            lines.remove(0);
            tail.more = true;
        }
        for line in lines.into_iter().rev().filter(|l| !l.is_empty()) {
            if tail.lines.len() >= query.limit {
                tail.more = true;
                return Ok(tail);
            }
            if let Some(needle) = &needle
                && !line
                    .to_ascii_lowercase()
                    .windows(needle.len().max(1))
                    .any(|w| w == needle.as_bytes())
            {
                continue;
            }
            let Ok(value) = serde_json::from_slice::<Value>(line) else {
                continue;
            };
            if let Some(event) = &query.event
                && value.get("event").and_then(Value::as_str) != Some(event)
            {
                continue;
            }
            tail.lines.push(value);
        }
        if budget == 0 {
            break;
        }
    }
    Ok(tail)
}

impl CallObserver for AuditLog {
    fn started(&self, info: &CallInfo, arguments: &Value) {
        let digest = digest_bytes(arguments);
        self.digests
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(info.call_id, digest);
    }

    fn ended(&self, info: &CallInfo, event: Option<&ToolCallEvent>) {
        let arguments = self
            .digests
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(&info.call_id);
        with_buffer(|out| {
            call_line(out, info, event, arguments.as_ref());
            self.shared.append(out);
        });
    }
}

/// Writes the `call` line of `info`, ended with `event` (`None`:
/// abandoned), its arguments' digest `arguments`.
fn call_line(
    out: &mut Vec<u8>,
    info: &CallInfo,
    event: Option<&ToolCallEvent>,
    arguments: Option<&[u8; 32]>,
) {
    let mut line = Fields::begin(out, "call");
    line.value("session", info.session_id.as_ref());
    line.value("call_id", info.call_id);
    if let Some(parent) = info.parent_call_id {
        line.value("parent_call_id", parent);
    }
    let name = event.and_then(|e| e.stands_for.as_deref()).unwrap_or(&info.name);
    line.value("tool", name);
    match arguments {
        Some(digest) => line.digest("arguments", digest),
        None => line.value("arguments", ()),
    }
    let Some(event) = event else {
        line.word("outcome", "abandoned");
        return line.end();
    };
    match &event.source {
        Some(ToolSource::Wasm { component_hash }) => {
            line.word("source", "wasm");
            line.digest("component", component_hash.as_bytes());
        }
        Some(ToolSource::Mcp { server }) => {
            line.word("source", "mcp");
            line.value("server", server);
        }
        Some(ToolSource::Builtin) => line.word("source", "builtin"),
        None => line.value("source", ()),
    }
    match event.outcome {
        CallOutcome::Ok => {
            line.word("outcome", "ok");
            line.value("error_code", ());
        }
        CallOutcome::Error(code) => {
            line.word("outcome", "error");
            line.word("error_code", code.as_str());
        }
    }
    line.value("duration_ms", event.duration.as_secs_f64() * 1e3);
    line.end();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_turn_over_into_numbered_files_and_none_is_lost_or_torn() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("audit.jsonl");
        let log = AuditLog::open(AuditOptions {
            path: path.clone(),
            max_bytes: 1000,
            keep: 3,
        })
        .unwrap();
        for i in 0..100 {
            let mut line = Map::new();
            line.insert("n".into(), Value::from(i));
            log.record("test", line);
        }
        log.flush().unwrap();
        let numbered = |n: usize| dir.path().join(format!("audit.jsonl.{n}"));
        // Every line begins with its time, then its event.
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(
            text.lines()
                .all(|l| l.starts_with("{\"time\":\"") && l[34..].starts_with(",\"event\":\"test\",\"n\":")),
            "{text}"
        );
        assert!(numbered(1).exists() && numbered(3).exists() && !numbered(4).exists());
        let mut seen = Vec::new();
        for file in [numbered(3), numbered(2), numbered(1), path.clone()] {
            let text = std::fs::read_to_string(&file).unwrap();
            assert!(text.len() <= 1000, "{} is {} bytes", file.display(), text.len());
            for line in text.lines() {
                let value: Value = serde_json::from_str(line).unwrap();
                assert_eq!(value["event"], "test");
                seen.push(value["n"].as_u64().unwrap());
            }
        }
        // The newest lines, in order, none missing; the oldest files gone.
        let first = seen[0];
        assert_eq!(seen, (first..100).collect::<Vec<_>>());
        assert!(first > 0, "the oldest file is gone");
        assert_eq!(log.lost(), 0);
        #[cfg(target_os = "linux")]
        {
            use std::os::unix::fs::PermissionsExt;
            for file in [&path, log.shared.ring.as_ref().unwrap().path()] {
                let mode = std::fs::metadata(file).unwrap().permissions().mode();
                assert_eq!(mode & 0o777, 0o600, "{}", file.display());
            }
        }
    }

    #[test]
    fn the_tail_is_read_newest_first_across_a_rotation_and_filtered() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("audit.jsonl");
        let log = AuditLog::open(AuditOptions {
            path: path.clone(),
            max_bytes: 300,
            keep: 2,
        })
        .unwrap();
        for i in 0..12 {
            let mut line = Map::new();
            line.insert("n".into(), Value::from(i));
            line.insert("who".into(), Value::from(if i % 3 == 0 { "Ada" } else { "bob" }));
            log.record(if i % 2 == 0 { "even" } else { "odd" }, line);
        }
        log.flush().unwrap();
        let all = read_tail(
            &path,
            &AuditQuery {
                limit: 100,
                ..AuditQuery::default()
            },
        )
        .unwrap();
        let ns: Vec<u64> = all.lines.iter().map(|l| l["n"].as_u64().unwrap()).collect();
        assert!(ns.len() > 3 && ns.windows(2).all(|w| w[0] == w[1] + 1), "{ns:?}");
        assert_eq!(ns[0], 11);
        let query = AuditQuery {
            text: Some("ADA".into()),
            event: Some("odd".into()),
            limit: 100,
        };
        let found = read_tail(&path, &query).unwrap();
        assert!(
            found
                .lines
                .iter()
                .all(|l| l["who"] == "Ada" && l["event"] == "odd")
        );
        assert_eq!(found.lines[0]["n"], 9);
        let two = read_tail(
            &path,
            &AuditQuery {
                limit: 2,
                ..AuditQuery::default()
            },
        )
        .unwrap();
        assert_eq!(two.lines.len(), 2);
        assert!(two.more);
    }

    #[test]
    fn times_are_rfc3339_utc_with_milliseconds_as_chrono_writes_them() {
        let mut at = UNIX_EPOCH;
        // Every day from 1970 to past 2100 (leap years and centuries), at
        // an odd second and millisecond.
        for _ in 0..50_000 {
            at += std::time::Duration::from_millis(86_400_000 + 3_723_457);
            let mut ours = Vec::new();
            write_time(&mut ours, at);
            let chrono: chrono::DateTime<chrono::Utc> = at.into();
            let theirs = chrono.to_rfc3339_opts(chrono::SecondsFormat::Millis, true);
            assert_eq!(String::from_utf8(ours).unwrap(), theirs);
        }
        // Times within one second and across the next, as a busy log
        // writes them (the second's text is kept between lines).
        let mut at = UNIX_EPOCH + std::time::Duration::from_millis(1_796_691_206_000);
        for _ in 0..3_000 {
            at += std::time::Duration::from_micros(1_337);
            let mut ours = Vec::new();
            write_time(&mut ours, at);
            let chrono: chrono::DateTime<chrono::Utc> = at.into();
            let theirs = chrono.to_rfc3339_opts(chrono::SecondsFormat::Millis, true);
            assert_eq!(String::from_utf8(ours).unwrap(), theirs);
        }
    }

    #[test]
    fn a_call_line_is_one_json_object_with_every_field() {
        use crate::dispatch::{CallInfo, CallOutcome, ToolCallEvent};
        let info = CallInfo {
            call_id: 7,
            parent_call_id: Some(3),
            name: "gr\"eet".into(),
            session_id: "s-1".into(),
            audience: crate::registry::ToolAudience::Trusted,
            trace: None,
        };
        let mut out = Vec::new();
        // Every byte value in some digest: each written as blake3 does.
        for first in (0..=255u8).step_by(32) {
            let digest: [u8; 32] = std::array::from_fn(|i| first.wrapping_add(i as u8));
            out.clear();
            call_line(&mut out, &info, None, Some(&digest));
            let line: Value = serde_json::from_slice(&out).unwrap();
            assert_eq!(
                line["arguments"],
                format!("blake3:{}", blake3::Hash::from(digest).to_hex())
            );
        }
        out.clear();
        call_line(&mut out, &info, None, Some(&[0xab; 32]));
        let line: Value = serde_json::from_slice(&out).unwrap();
        assert_eq!(line["event"], "call");
        assert_eq!(line["tool"], "gr\"eet");
        assert_eq!(line["parent_call_id"], 3);
        assert_eq!(line["arguments"], format!("blake3:{}", "ab".repeat(32)));
        assert_eq!(line["outcome"], "abandoned");
        assert!(out.ends_with(b"}\n") && out.iter().filter(|&&b| b == b'\n').count() == 1);
        let event = ToolCallEvent {
            call_id: 7,
            parent_call_id: None,
            session_id: "s-1".into(),
            name: "greet".into(),
            stands_for: None,
            source: Some(ToolSource::Builtin),
            duration: std::time::Duration::from_micros(1500),
            outcome: CallOutcome::Error(ErrorCode::Timeout),
            usage: None,
        };
        out.clear();
        call_line(&mut out, &info, Some(&event), None);
        let line: Value = serde_json::from_slice(&out).unwrap();
        assert_eq!(line["source"], "builtin");
        assert_eq!(
            (line["outcome"].as_str(), line["error_code"].as_str()),
            (Some("error"), Some("timeout"))
        );
        assert_eq!(line["duration_ms"], 1.5);
        assert_eq!(line["arguments"], Value::Null);
    }

    #[test]
    fn a_log_that_cannot_be_written_keeps_its_lines_in_the_ring_then_counts_those_it_loses() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("audit.jsonl");
        let options = AuditOptions {
            path: path.clone(),
            max_bytes: 10,
            keep: 1,
        };
        let log = AuditLog::open_with(options.clone(), 4096).unwrap();
        log.record("first", Map::new());
        log.flush().unwrap();
        // The folder goes away: rotation cannot rename into it.
        drop(dir);
        log.record("second", Map::new());
        assert!(log.flush().is_err());
        assert_eq!(log.lost(), 0, "kept in the ring");
        // The ring fills: lines that find no room are counted lost.
        for _ in 0..100 {
            log.record("more", Map::new());
        }
        assert!(log.lost() > 0);
        // With no ring, a line that cannot be written is lost at once.
        let dir = tempfile::tempdir().unwrap();
        let options = AuditOptions {
            path: dir.path().join("audit.jsonl"),
            ..options
        };
        let log = AuditLog::open(options.clone()).unwrap();
        let beside = AuditLog::open(options).unwrap();
        assert!(!beside.shared.has_ring(), "the ring is the first log's");
        beside.record("first", Map::new());
        drop(dir);
        beside.record("second", Map::new());
        assert_eq!(beside.lost(), 1);
        drop(log);
    }

    /// The lines of `path`'s file, as `n`s.
    fn ns(path: &Path) -> Vec<u64> {
        std::fs::read_to_string(path)
            .unwrap()
            .lines()
            .map(|line| {
                serde_json::from_str::<Value>(line).unwrap()["n"]
                    .as_u64()
                    .unwrap()
            })
            .collect()
    }

    fn numbered(n: u64) -> Map<String, Value> {
        let mut line = Map::new();
        line.insert("n".into(), Value::from(n));
        line
    }

    #[test]
    #[cfg(target_os = "linux")]
    fn lines_a_killed_process_left_in_the_ring_are_moved_in_once_by_the_next() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("audit.jsonl");
        let options = AuditOptions {
            path: path.clone(),
            max_bytes: 1 << 20,
            keep: 1,
        };
        let mut log = AuditLog::open(options.clone()).unwrap();
        for n in 0..5 {
            log.record("test", numbered(n));
        }
        log.flush().unwrap();
        // Killed: its thread moves nothing more; lines 5 and 6 reached the
        // file (the last write done, not yet counted), 7 to 9 did not.
        log.stop_mover();
        let ring = log.shared.ring.as_ref().unwrap();
        for n in 5..10 {
            let mut line = Vec::new();
            let mut fields = Fields(&mut line);
            fields.value("event", "test");
            fields.value("n", n);
            fields.end();
            ring.put(&line);
            if n < 7 {
                OpenOptions::new()
                    .append(true)
                    .open(&path)
                    .unwrap()
                    .write_all(&line)
                    .unwrap();
            }
        }
        // Half a line copied and not counted: not a line.
        ring.put_uncounted(b"{\"event\":\"te");
        Arc::get_mut(&mut log.shared).unwrap().ring = None;
        drop(log);
        assert_eq!(ns(&path), (0..7).collect::<Vec<_>>());
        let ring_at = ring::path_for(&path);
        assert!(ring_at.exists(), "a killed process leaves its ring");

        let log = AuditLog::open(options).unwrap();
        assert_eq!(
            ns(&path),
            (0..10).collect::<Vec<_>>(),
            "moved in at open, none twice"
        );
        log.record("test", numbered(10));
        drop(log);
        assert_eq!(ns(&path), (0..11).collect::<Vec<_>>());
        assert!(!ring_at.exists());
    }

    #[test]
    #[cfg(target_os = "linux")]
    fn a_ring_file_that_is_no_ring_is_begun_anew() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("audit.jsonl");
        let ring = ring::path_for(&path);
        let options = AuditOptions {
            path: path.clone(),
            max_bytes: 1 << 20,
            keep: 1,
        };
        for junk in [vec![0xff; 100], vec![], b"THAUDIT1".repeat(20)] {
            std::fs::write(&ring, &junk).unwrap();
            std::fs::set_permissions(&ring, std::os::unix::fs::PermissionsExt::from_mode(0o600)).unwrap();
            let log = AuditLog::open(options.clone()).unwrap();
            assert!(log.shared.has_ring());
            log.record("test", numbered(1));
            drop(log);
            assert!(!ring.exists(), "a log closed cleanly removes its ring");
        }
        assert_eq!(ns(&path), vec![1, 1, 1]);
        // A ring others may read is not used: the lines go to the log.
        std::fs::write(&ring, "").unwrap();
        std::fs::set_permissions(&ring, std::os::unix::fs::PermissionsExt::from_mode(0o644)).unwrap();
        let log = AuditLog::open(options).unwrap();
        assert!(!log.shared.has_ring());
        log.record("test", numbered(2));
        assert_eq!(ns(&path), vec![1, 1, 1, 2]);
        drop(log);
        std::fs::remove_file(&ring).unwrap();
    }

    /// Run in a process of its own (see the test below): the file size
    /// limit stands for a disk that fills up part way through a write.
    #[cfg(target_os = "linux")]
    fn write_into_a_disk_that_fills_up(dir: &Path) {
        // SAFETY: plain calls; this process runs only this test.
        unsafe {
            libc::signal(libc::SIGXFSZ, libc::SIG_IGN);
            let limit = libc::rlimit {
                rlim_cur: 10_000,
                rlim_max: libc::RLIM_INFINITY,
            };
            assert_eq!(libc::setrlimit(libc::RLIMIT_FSIZE, &limit), 0);
        }
        let path = dir.join("audit.jsonl");
        let log = AuditLog::open_with(
            AuditOptions {
                path: path.clone(),
                max_bytes: 1 << 20,
                keep: 1,
            },
            4096,
        )
        .unwrap();
        assert!(log.shared.has_ring());
        let mut n = 0;
        while log.flush().is_ok() {
            for _ in 0..7 {
                log.record("test", numbered(n));
                n += 1;
            }
        }
        // The file holds whole lines only, in order, up to where it filled.
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(text.ends_with('\n') && text.len() <= 10_000, "{}", text.len());
        assert_eq!(ns(&path), (0..ns(&path).len() as u64).collect::<Vec<_>>());
        drop(log);
    }

    #[test]
    #[cfg(target_os = "linux")]
    fn a_write_the_disk_cuts_short_leaves_no_torn_line() {
        const CHILD: &str = "TOOLHOST_AUDIT_TEST_DIR";
        if let Some(dir) = std::env::var_os(CHILD) {
            return write_into_a_disk_that_fills_up(Path::new(&dir));
        }
        let dir = tempfile::tempdir().unwrap();
        // Its output piped, not inherited: under the size limit, writing
        // to a large file (this run's output sent to one) would fail.
        let child = std::process::Command::new(std::env::current_exe().unwrap())
            .args([
                "--exact",
                "audit::tests::a_write_the_disk_cuts_short_leaves_no_torn_line",
            ])
            .env(CHILD, dir.path())
            .output()
            .unwrap();
        assert!(
            child.status.success(),
            "{}\n{}",
            String::from_utf8_lossy(&child.stdout),
            String::from_utf8_lossy(&child.stderr)
        );
        assert!(ns(&dir.path().join("audit.jsonl")).len() > 10);
    }

    #[test]
    fn lines_written_from_many_threads_are_all_there_whole() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("audit.jsonl");
        let log = AuditLog::open_with(
            AuditOptions {
                path: path.clone(),
                max_bytes: 1 << 30,
                keep: 1,
            },
            4096,
        )
        .unwrap();
        std::thread::scope(|scope| {
            for t in 0..4 {
                let log = &log;
                scope.spawn(move || {
                    for i in 0..500 {
                        log.record("test", numbered(t * 1000 + i));
                    }
                });
            }
        });
        drop(log);
        let mut seen = ns(&path);
        seen.sort_unstable();
        let mut expected: Vec<u64> = (0..4).flat_map(|t| (0..500).map(move |i| t * 1000 + i)).collect();
        expected.sort_unstable();
        assert_eq!(seen, expected);
    }
}
