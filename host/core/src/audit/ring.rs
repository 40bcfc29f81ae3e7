//! The audit log's ring: where a line is kept from the moment it is
//! written until the log file has it.
//!
//! A file beside the log (`.NAME.ring`, created `0600`), mapped into the
//! process's memory and shared with the kernel's page cache: a line copied
//! into it is in the kernel's hands the moment the copy ends, so a process
//! killed afterwards (SIGKILL, a crash, the OOM killer) loses nothing. A
//! line costs a copy into memory and no system call; the log's own thread
//! moves what the ring holds into the log file every few milliseconds,
//! many lines to a `write(2)`, and the next process to open the log moves
//! in what a killed one left behind. Beside the log, it lives where the
//! log lives: a container's volume keeps both through a restart.
//!
//! A write into a mapped file that needs a new disk block the system
//! cannot give ends the process (`SIGBUS`). So every block of the ring is
//! written when it is made, and a ring is made only on filesystems that
//! write a block in place once it exists (ext4, XFS, tmpfs, overlayfs
//! over them); elsewhere
//! (copy-on-write filesystems such as Btrfs and ZFS, network filesystems)
//! there is none. A log closed cleanly removes its ring.
//!
//! The file: a 64-byte header (a magic number, the capacity, and two
//! counters: how many bytes were ever put in, `committed`, and how many of
//! them the log file has, `flushed`), then `capacity` bytes used round.
//! Only whole lines are committed: a line is copied first, then counted.
//! The ring is one process's at a time (an exclusive `flock`).

use std::fs::{File, OpenOptions};
use std::io;
use std::os::fd::AsRawFd;
use std::path::{Path, PathBuf};
use std::ptr::NonNull;
use std::sync::atomic::{AtomicU64, Ordering};

/// The header's size: the data begin at this offset (a multiple of the
/// counters' alignment).
const HEADER: usize = 64;
/// What a ring file begins with (and the layout's version).
const MAGIC: [u8; 8] = *b"THAUDIT1";
const CAPACITY_AT: usize = 8;
const COMMITTED_AT: usize = 16;
const FLUSHED_AT: usize = 24;
/// The largest ring a file may describe: a damaged or planted header must
/// not make the host map, copy and compare more than this at start (the
/// host makes its rings of 256 KiB).
const MAX_CAPACITY: u64 = 16 << 20;

/// The ring, mapped; see the [module](self) documentation.
pub(super) struct Ring {
    /// Held open: its lock says the ring is this process's.
    _file: File,
    path: PathBuf,
    /// The mapping: `HEADER + capacity` bytes.
    map: NonNull<u8>,
    capacity: u64,
}

// SAFETY: the mapping is plain shared memory; who writes where is ordered
// by the counters (see `put` and `unmoved`) and by the audit log's locks.
unsafe impl Send for Ring {}
// SAFETY: as for `Send`.
unsafe impl Sync for Ring {}

impl std::fmt::Debug for Ring {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Ring")
            .field("capacity", &self.capacity)
            .field("committed", &self.committed())
            .field("flushed", &self.flushed())
            .finish()
    }
}

/// Why a ring could not be had.
#[derive(Debug)]
pub(super) enum RingError {
    /// Another process holds it (another toolhost writing the same log).
    Held,
    /// The file there is not a file of this user's alone.
    NotOwn,
    /// Its filesystem may need new blocks to write in place (its magic
    /// number, as `statfs` gives it).
    Filesystem(i64),
    /// The file could not be made, read, locked or mapped.
    Io(io::Error),
}

impl From<io::Error> for RingError {
    fn from(e: io::Error) -> Self {
        RingError::Io(e)
    }
}

impl Ring {
    /// Opens the ring at `path`, creating it with room for `capacity`
    /// bytes. A ring a process left behind is kept as it is, lines and all
    /// (its own capacity with it): what it holds is what the log has not
    /// got yet. A file that is no ring (or a damaged one) is begun anew.
    pub(super) fn open(path: &Path, capacity: u64) -> Result<Ring, RingError> {
        use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
        let mut options = OpenOptions::new();
        options
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .mode(0o600)
            .custom_flags(libc::O_NOFOLLOW);
        let file = options.open(path)?;
        // Only a file of this user's own, readable by none other, holds
        // the log's lines.
        let meta = file.metadata()?;
        // SAFETY: `geteuid` has no preconditions.
        let me = unsafe { libc::geteuid() };
        if !meta.file_type().is_file() || meta.uid() != me || meta.mode() & 0o077 != 0 {
            return Err(RingError::NotOwn);
        }
        let kind = filesystem(&file)?;
        if !WRITES_IN_PLACE.contains(&kind) {
            if meta.len() == 0 {
                // Made just now, by this.
                let _ = std::fs::remove_file(path);
            }
            return Err(RingError::Filesystem(kind));
        }
        // SAFETY: `flock` on a descriptor this function owns.
        if unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) } != 0 {
            let e = io::Error::last_os_error();
            return Err(match e.raw_os_error() {
                Some(libc::EWOULDBLOCK) => RingError::Held,
                _ => RingError::Io(e),
            });
        }
        let capacity = match kept_capacity(&file)? {
            Some(kept) => kept,
            None => {
                // Begun anew, every page written (zeros, then the header:
                // the counters are zero) so that the mapping never needs
                // one the system cannot give.
                file.set_len(0)?;
                let mut page = vec![0u8; 64 << 10];
                let mut left = HEADER as u64 + capacity;
                let mut writer = &file;
                while left > 0 {
                    let n = left.min(page.len() as u64) as usize;
                    io::Write::write_all(&mut writer, &page[..n])?;
                    left -= n as u64;
                }
                page.truncate(16);
                page[..8].copy_from_slice(&MAGIC);
                page[CAPACITY_AT..CAPACITY_AT + 8].copy_from_slice(&capacity.to_ne_bytes());
                std::os::unix::fs::FileExt::write_all_at(&file, &page, 0)?;
                capacity
            }
        };
        let len = HEADER + usize::try_from(capacity).map_err(io::Error::other)?;
        // SAFETY: a new shared mapping of `len` bytes of `file`, which is
        // that long; nothing else in this process maps it.
        let map = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED,
                file.as_raw_fd(),
                0,
            )
        };
        if map == libc::MAP_FAILED {
            return Err(io::Error::last_os_error().into());
        }
        let map = NonNull::new(map.cast::<u8>()).ok_or_else(|| io::Error::other("mmap gave null"))?;
        Ok(Ring {
            _file: file,
            path: path.to_path_buf(),
            map,
            capacity,
        })
    }

    /// The counter at `offset` of the header.
    fn counter(&self, offset: usize) -> &AtomicU64 {
        // SAFETY: `offset` is 16 or 24, inside the header and 8-aligned
        // (the mapping is page-aligned); the mapping lives as long as
        // `self`, and the counter is only ever touched atomically.
        unsafe { AtomicU64::from_ptr(self.map.as_ptr().add(offset).cast::<u64>()) }
    }

    /// How many bytes were ever put in.
    pub(super) fn committed(&self) -> u64 {
        self.counter(COMMITTED_AT).load(Ordering::SeqCst)
    }

    /// How many bytes of those the log file has.
    pub(super) fn flushed(&self) -> u64 {
        self.counter(FLUSHED_AT).load(Ordering::Acquire)
    }

    /// The bytes put in that the log file does not have yet.
    pub(super) fn pending(&self) -> u64 {
        self.committed().saturating_sub(self.flushed())
    }

    /// Whether `line` fits beside what is pending.
    pub(super) fn has_room(&self, line: usize) -> bool {
        self.pending().saturating_add(line as u64) <= self.capacity
    }

    /// Puts `line` in after what was committed, then counts it committed.
    /// The caller is the only one putting (the log's append lock) and has
    /// seen [`Ring::has_room`] say it fits: the bytes written are ones the
    /// log's thread has moved out already, or never used.
    pub(super) fn put(&self, line: &[u8]) {
        let at = self.counter(COMMITTED_AT).load(Ordering::Relaxed);
        self.write_at(at, line);
        // Counted after the copy: a process killed mid-copy leaves the line
        // uncounted. Sequentially consistent: the log's thread, deciding to
        // sleep, sees it or is woken (see `Shared::wake_mover`).
        self.counter(COMMITTED_AT)
            .store(at + line.len() as u64, Ordering::SeqCst);
    }

    /// Copies `bytes` where the next line goes without counting them: what
    /// a process killed mid-copy leaves.
    #[cfg(test)]
    pub(super) fn put_uncounted(&self, bytes: &[u8]) {
        self.write_at(self.committed(), bytes);
    }

    /// Copies `bytes` into the data at count `at`.
    fn write_at(&self, at: u64, bytes: &[u8]) {
        self.copy(at, bytes.len(), |data, offset, from, len| {
            // SAFETY: `offset + len` is within the data (see `copy`), a
            // span nobody reads until `committed` counts it (see `put`).
            unsafe { std::ptr::copy_nonoverlapping(bytes[from..].as_ptr(), data.add(offset), len) }
        });
    }

    /// The bytes committed but not flushed, in the one or two stretches of
    /// the ring they occupy, and the count they end at (to give
    /// [`Ring::flushed_to`]).
    pub(super) fn unmoved(&self) -> ([&[u8]; 2], u64) {
        let (from, to) = (self.flushed(), self.committed());
        let len = usize::try_from(to - from).unwrap_or(0);
        let mut parts: [&[u8]; 2] = [&[], &[]];
        let mut part = 0;
        self.copy(from, len, |data, offset, _, len| {
            // SAFETY: `offset + len` is within the data (see `copy`): bytes
            // committed (the load of `committed` above ordered their copy
            // before this read), not overwritten while `flushed` is short
            // of them, which only this reader's caller moves (the log's
            // writer lock, held while the slices live: see `move_out`).
            parts[part] = unsafe { std::slice::from_raw_parts(data.add(offset), len) };
            part += 1;
        });
        (parts, to)
    }

    /// Where it is.
    #[cfg(test)]
    pub(super) fn path(&self) -> &Path {
        &self.path
    }

    /// Removes the ring, the log file having every line it held.
    pub(super) fn remove(self) {
        // Removed while still locked: a process opening it now either has
        // this file (and finds it locked) or makes a new one.
        let _ = std::fs::remove_file(&self.path);
    }

    /// The room lines have.
    pub(super) fn capacity(&self) -> u64 {
        self.capacity
    }

    /// Counts the bytes up to `to` as the log file's: their room may be
    /// used again.
    pub(super) fn flushed_to(&self, to: u64) {
        self.counter(FLUSHED_AT).store(to, Ordering::Release);
    }

    /// Calls `f(data, offset, from, len)` for the one or two stretches of
    /// the data that `len` bytes at count `at` occupy (`from`: how far into
    /// those bytes the stretch begins).
    fn copy(&self, at: u64, len: usize, mut f: impl FnMut(*mut u8, usize, usize, usize)) {
        // SAFETY: the data begin `HEADER` bytes into the mapping.
        let data = unsafe { self.map.as_ptr().add(HEADER) };
        let capacity = self.capacity as usize;
        let len = len.min(capacity);
        let offset = (at % self.capacity) as usize;
        let first = len.min(capacity - offset);
        f(data, offset, 0, first);
        if first < len {
            f(data, 0, first, len - first);
        }
    }
}

impl Drop for Ring {
    fn drop(&mut self) {
        // SAFETY: the mapping made in `open`, of that length, unmapped once.
        unsafe {
            libc::munmap(self.map.as_ptr().cast(), HEADER + self.capacity as usize);
        }
    }
}

/// The ring of the log at `path`: `.NAME.ring` beside it.
pub(super) fn path_for(path: &Path) -> PathBuf {
    let mut name = std::ffi::OsString::from(".");
    name.push(path.file_name().unwrap_or_default());
    name.push(".ring");
    path.with_file_name(name)
}

/// The filesystems (`statfs` magic numbers) that write an existing block
/// in place: ext2/3/4, XFS, tmpfs, and overlayfs (a container's own
/// files, whose upper layer is ext4 or XFS under Docker's `overlay2`).
const WRITES_IN_PLACE: [i64; 4] = [0xEF53, 0x5846_5342, 0x0102_1994, 0x794C_7630];

/// The magic number of the filesystem `file` is on.
fn filesystem(file: &File) -> io::Result<i64> {
    // SAFETY: `statfs` is plain data, all zeros a valid value.
    let mut stat: libc::statfs = unsafe { std::mem::zeroed() };
    // SAFETY: `fstatfs` on a descriptor `file` owns, into `stat`.
    if unsafe { libc::fstatfs(file.as_raw_fd(), &mut stat) } != 0 {
        return Err(io::Error::last_os_error());
    }
    #[allow(clippy::unnecessary_cast)] // `f_type`'s type differs by target
    Ok(stat.f_type as i64)
}

/// The capacity of the ring `file` holds, when it holds a sound one: its
/// magic, a size that matches its capacity, counters that make sense.
fn kept_capacity(file: &File) -> io::Result<Option<u64>> {
    let len = file.metadata()?.len();
    if len < HEADER as u64 {
        return Ok(None);
    }
    let mut header = [0u8; 32];
    std::os::unix::fs::FileExt::read_exact_at(file, &mut header, 0)?;
    let word = |at: usize| u64::from_ne_bytes(header[at..at + 8].try_into().unwrap_or_default());
    let (capacity, committed, flushed) = (word(CAPACITY_AT), word(COMMITTED_AT), word(FLUSHED_AT));
    let sound = header[..8] == MAGIC
        && (4096..=MAX_CAPACITY).contains(&capacity)
        && len == HEADER as u64 + capacity
        && flushed <= committed
        && committed - flushed <= capacity;
    if !sound {
        tracing::warn!("the audit log's ring was not sound: begun anew");
    }
    Ok(sound.then_some(capacity))
}

/// How many bytes at the start of `pending` the log already ends with
/// (`tail`: the log file's last bytes): whole lines a process wrote to the
/// log before it could count them moved out. The longest such run.
pub(super) fn already_logged(tail: &[u8], pending: &[u8]) -> usize {
    pending
        .iter()
        .enumerate()
        .rev()
        .filter(|(i, b)| **b == b'\n' && *i < tail.len())
        .map(|(i, _)| i + 1)
        .find(|&end| tail.ends_with(&pending[..end]))
        .unwrap_or(0)
}
