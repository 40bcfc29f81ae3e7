//! # Bounded reads of files and bodies
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
//! Every body a peer sends that toolhost reads itself (a registry's
//! manifest or blob, an issuer's key set) goes through [`read_body`]: a
//! `Content-Length` past the cap is refused before any byte is read, and
//! the body is read chunk by chunk, at most one chunk past the cap, then
//! dropped (with it, the connection).
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

/// A body read by [`read_body`]: whole, or cut past its cap.
#[derive(Debug)]
pub enum Body {
    /// The whole body, at most the cap.
    Complete(Vec<u8>),
    /// More than the cap: the bytes kept (at most the cap; the rest was not
    /// read) and how the excess showed.
    Over {
        /// The first bytes, at most the cap (only a message's worth of
        /// an error body is ever wanted).
        prefix: Vec<u8>,
        /// How the body showed it was past the cap.
        excess: Excess,
    },
}

/// How a body showed it was past its cap.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Excess {
    /// Its `Content-Length` said so; nothing was read.
    Announced(u64),
    /// This many bytes had arrived when the reading stopped.
    Received(u64),
}

impl std::fmt::Display for Excess {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Excess::Announced(n) => write!(f, "it announced {n} bytes, so none was read"),
            Excess::Received(n) => write!(f, "{n} had arrived when toolhost stopped reading"),
        }
    }
}

/// Reads a body of at most `cap` bytes from `chunks` (its chunks as they
/// arrive), `announced` its `Content-Length` if it gave one: refused
/// unread when that is past the cap, else read until it ends or passes
/// the cap, at most one chunk more than the cap ever held. Dropping
/// `chunks` (here, on [`Body::Over`]) is what stops the transfer: a
/// response's stream closes its connection.
///
/// # Errors
///
/// The first error `chunks` yields (the connection failed mid-body).
///
/// ```
/// use toolhost_core::bounded::{Body, Excess, read_body};
///
/// # futures_util::FutureExt::now_or_never(async {
/// let chunks = futures_util::stream::iter([Ok::<_, ()>(&b"abc"[..]), Ok(&b"def"[..])]);
/// let Ok(Body::Over { prefix, excess }) = read_body(None, 4, chunks).await else { panic!() };
/// assert_eq!((prefix.as_slice(), excess), (&b"abcd"[..], Excess::Received(6)));
/// let none = futures_util::stream::iter([Ok::<&[u8], ()>(&b"never read"[..])]);
/// assert!(matches!(read_body(Some(10), 4, none).await, Ok(Body::Over { excess: Excess::Announced(10), .. })));
/// # }).unwrap();
/// ```
pub async fn read_body<S, B, E>(announced: Option<u64>, cap: u64, chunks: S) -> Result<Body, E>
where
    S: futures_util::Stream<Item = Result<B, E>>,
    B: AsRef<[u8]>,
{
    use futures_util::StreamExt;
    if let Some(length) = announced
        && length > cap
    {
        return Ok(Body::Over {
            prefix: Vec::new(),
            excess: Excess::Announced(length),
        });
    }
    futures_util::pin_mut!(chunks);
    let mut bytes = Vec::new();
    let mut seen = 0u64;
    while let Some(chunk) = chunks.next().await {
        let chunk = chunk?;
        let chunk = chunk.as_ref();
        seen = seen.saturating_add(chunk.len() as u64);
        if seen > cap {
            let room = usize::try_from(cap)
                .unwrap_or(usize::MAX)
                .saturating_sub(bytes.len());
            bytes.extend_from_slice(&chunk[..room.min(chunk.len())]);
            return Ok(Body::Over {
                prefix: bytes,
                excess: Excess::Received(seen),
            });
        }
        bytes.extend_from_slice(chunk);
    }
    Ok(Body::Complete(bytes))
}

/// The chunks `pull` reads from `source` one after the other, as a stream
/// for [`read_body`]: for bodies read by a `&mut self` method, such as
/// reqwest's `Response::chunk` (`chunks_of(response, |r| Box::pin(r.chunk()))`).
/// Ends at the first `Ok(None)`; yields an error once, then ends.
pub fn chunks_of<T, B, E>(
    source: T,
    pull: impl for<'a> FnMut(&'a mut T) -> futures_util::future::BoxFuture<'a, Result<Option<B>, E>> + Send,
) -> impl futures_util::Stream<Item = Result<B, E>>
where
    T: Send,
{
    futures_util::stream::unfold(Some((source, pull)), |state| async move {
        let (mut source, mut pull) = state?;
        match pull(&mut source).await {
            Ok(Some(chunk)) => Some((Ok(chunk), Some((source, pull)))),
            Ok(None) => None,
            Err(e) => Some((Err(e), None)),
        }
    })
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
