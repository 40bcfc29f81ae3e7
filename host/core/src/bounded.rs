//! # Bounded reads of files
//!
//! Every file toolhost reads on someone else's behalf (a component and its
//! signature, a key, a cached blob, the config file) goes through
//! [`read_file`]: a path in a watched folder or a config entry may name a
//! named pipe, a device or a file that grows while it is read, and a plain
//! `std::fs::read` would block on the first forever and read the others
//! without end. Here:
//!
//! - only a **regular file** is read: the file is opened without blocking
//!   (`O_NONBLOCK`, so opening a pipe with no writer returns at once), then
//!   refused unless `fstat` says it is a regular file;
//! - its **size is checked before reading**, and the read stops one byte
//!   past the cap, so a file that grows meanwhile is refused too;
//! - [`read_file_async`] does the blocking work on tokio's blocking pool,
//!   never on an async worker.
//!
//! Errors are plain [`std::io::Error`]s, so that each layer maps them to
//! its own typed error: [`std::io::ErrorKind::FileTooLarge`] for a file over
//! the cap, [`std::io::ErrorKind::InvalidInput`] for one that is not a
//! regular file; each says what the file is and what the cap was.
//!
//! ```
//! use toolhost_core::bounded::read_file;
//!
//! let dir = tempfile::tempdir().unwrap();
//! let path = dir.path().join("c.wasm");
//! std::fs::write(&path, b"0123456789").unwrap();
//! assert_eq!(read_file(&path, 10).unwrap().len(), 10);
//! let err = read_file(&path, 9).unwrap_err();
//! assert_eq!(err.kind(), std::io::ErrorKind::FileTooLarge);
//! let err = read_file(dir.path(), 100).unwrap_err();
//! assert_eq!(err.kind(), std::io::ErrorKind::InvalidInput);
//! ```

use std::fs::{File, OpenOptions};
use std::io::{self, Read};
use std::path::{Path, PathBuf};

/// Reads the regular file at `path` whole, if it holds at most `max_bytes`
/// bytes. Never blocks on a pipe or device, never reads more than
/// `max_bytes + 1` bytes. Blocking: call it off the async workers (see
/// [`read_file_async`]).
///
/// # Errors
///
/// The open's or read's error; [`io::ErrorKind::InvalidInput`] when the path
/// is not a regular file (a folder, a named pipe, a device, a socket);
/// [`io::ErrorKind::FileTooLarge`] when it holds more than `max_bytes`.
pub fn read_file(path: &Path, max_bytes: u64) -> io::Result<Vec<u8>> {
    let file = open_regular(path)?;
    let size = file.metadata()?.len();
    if size > max_bytes {
        return Err(too_large(size, max_bytes));
    }
    // The file may grow between `fstat` and the read: read one byte past
    // the cap to see it.
    let mut bytes = Vec::with_capacity(usize::try_from(size).unwrap_or(0));
    file.take(max_bytes.saturating_add(1)).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > max_bytes {
        return Err(io::Error::new(
            io::ErrorKind::FileTooLarge,
            format!("it grew past the cap of {max_bytes} bytes while being read"),
        ));
    }
    Ok(bytes)
}

/// [`read_file`] as text: also refuses bytes that are not UTF-8
/// ([`io::ErrorKind::InvalidData`]).
///
/// # Errors
///
/// As [`read_file`].
pub fn read_to_string(path: &Path, max_bytes: u64) -> io::Result<String> {
    String::from_utf8(read_file(path, max_bytes)?)
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidData, "it is not UTF-8 text"))
}

/// [`read_file`] on tokio's blocking pool.
///
/// # Errors
///
/// As [`read_file`]; [`io::ErrorKind::Other`] if the blocking task could
/// not run (the runtime is shutting down).
pub async fn read_file_async(path: PathBuf, max_bytes: u64) -> io::Result<Vec<u8>> {
    tokio::task::spawn_blocking(move || read_file(&path, max_bytes))
        .await
        .map_err(|e| io::Error::other(format!("the read could not run: {e}")))?
}

/// The typed error of reading `what` ("the component file", say) at
/// `path` with the cap `max`: `too_large` for a file over the cap (naming
/// it), `io` for anything else, the cause kept as the source.
pub fn error(what: &str, path: &Path, max: u64, error: io::Error) -> crate::Error {
    use crate::error::{Error, ErrorCode};
    if error.kind() == io::ErrorKind::FileTooLarge {
        return Error::new(
            ErrorCode::TooLarge,
            format!(
                "{what} {} is refused: {error} (max_component_bytes = {max})",
                path.display()
            ),
        )
        .with_source(error);
    }
    Error::io(format!("cannot read {what} {}", path.display()), error)
}

/// What a path is, when it exists: `Some(true)` for a regular file (links
/// followed), without opening it. For a folder's listing, which must not
/// open what it only looks at.
pub fn is_regular_file(path: &Path) -> Option<bool> {
    std::fs::metadata(path).ok().map(|m| m.is_file())
}

/// Opens `path` for reading without blocking, and refuses what is not a
/// regular file.
fn open_regular(path: &Path) -> io::Result<File> {
    let mut options = OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        // Opening a FIFO for reading blocks until a writer comes, unless
        // non-blocking; on a regular file the flag changes nothing.
        options.custom_flags(libc::O_NONBLOCK | libc::O_CLOEXEC);
    }
    let file = options.open(path)?;
    let kind = file.metadata()?.file_type();
    if !kind.is_file() {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("it is {}, not a regular file", describe(kind)),
        ));
    }
    Ok(file)
}

fn too_large(size: u64, max: u64) -> io::Error {
    io::Error::new(
        io::ErrorKind::FileTooLarge,
        format!("it holds {size} bytes, more than the cap of {max}"),
    )
}

fn describe(kind: std::fs::FileType) -> &'static str {
    if kind.is_dir() {
        return "a folder";
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if kind.is_fifo() {
            return "a named pipe";
        }
        if kind.is_char_device() || kind.is_block_device() {
            return "a device";
        }
        if kind.is_socket() {
            return "a socket";
        }
    }
    "not a regular file"
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_named_pipe_without_a_writer_is_refused_at_once() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("x.wasm");
        let c = std::ffi::CString::new(fifo.as_os_str().as_encoded_bytes()).unwrap();
        // SAFETY: `c` is a valid NUL-terminated path for the call's duration.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        let err = read_file(&fifo, 1 << 20).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::InvalidInput);
        assert!(err.to_string().contains("named pipe"), "{err}");
    }

    #[test]
    fn a_device_is_refused() {
        let err = read_file(Path::new("/dev/zero"), 1 << 20).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::InvalidInput);
        assert!(err.to_string().contains("device"), "{err}");
    }

    #[test]
    fn a_link_to_a_regular_file_is_read() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("real"), b"abc").unwrap();
        std::os::unix::fs::symlink(dir.path().join("real"), dir.path().join("link")).unwrap();
        assert_eq!(read_file(&dir.path().join("link"), 3).unwrap(), b"abc");
    }
}
