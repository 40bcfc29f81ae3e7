//! The crate's typed error: a [`ErrorKind`] to match on and a message that
//! says what happened and what to change.

use std::fmt;
use std::sync::Arc;

/// What went wrong, for code that decides what to do next (serve a cached
/// copy when the registry is [`ErrorKind::Unreachable`], say).
#[non_exhaustive]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ErrorKind {
    /// The `oci://` reference is malformed.
    Reference,
    /// Plain HTTP was needed for a registry that is neither on the loopback
    /// nor in the `insecure` list.
    Insecure,
    /// The Docker config or the credential environment is unreadable or
    /// inconsistent.
    Credentials,
    /// The registry could not be reached (connection refused, DNS, timeout).
    Unreachable,
    /// The registry refused the credentials (or gave none).
    Unauthorized,
    /// No such repository, tag or digest in the registry.
    NotFound,
    /// The registry answered something else unexpected.
    Registry,
    /// The artifact is not a component in the CNCF Wasm layout.
    NotWasm,
    /// The bytes do not have the digest the reference or the manifest names.
    DigestMismatch,
    /// The bytes do not have the pinned blake3 identity.
    HashMismatch,
    /// No signature where one is required.
    Unsigned,
    /// Signed, but only by keys the operator does not trust.
    UnknownKey,
    /// A signature does not verify (tampered bytes or signature) or cannot
    /// be read.
    BadSignature,
    /// A key file cannot be read or decrypted.
    Key,
    /// Reading or writing a local file failed.
    Io,
    /// Bytes offered to the host exceed their cap: a registry response
    /// (manifest, token, signature) past its fixed cap, a component whose
    /// manifest declares more than `ClientOptions::max_blob_bytes`, a
    /// cached blob, signature or key file past its cap. Never served from
    /// the pull cache instead: the registry did answer, with too much.
    TooLarge,
    /// A pull did not finish within `ClientOptions::pull_timeout` (the one
    /// deadline over authentication, manifest, blob, referrers, signatures
    /// and redirects); the message names the registry and the deadline.
    /// The pull cache treats it as an unreachable registry and serves its
    /// copy, if it has one.
    Timeout,
}

/// An error of the distribution layer, in the style of every toolhost
/// library error: a `#[non_exhaustive]` [`ErrorKind`], a message of its
/// own that never repeats its cause, and the cause (an I/O error) kept as
/// the [`source`](std::error::Error::source). `{:#}` and
/// [`DistributionError::with_causes`] show the message with its causes.
/// Two errors are equal when their kind and message are.
#[derive(Debug, Clone)]
pub struct DistributionError {
    kind: ErrorKind,
    message: String,
    source: Option<Arc<dyn std::error::Error + Send + Sync>>,
}

impl PartialEq for DistributionError {
    fn eq(&self, other: &Self) -> bool {
        self.kind == other.kind && self.message == other.message
    }
}

impl Eq for DistributionError {}

impl DistributionError {
    /// An error of `kind` with `message`.
    pub fn new(kind: ErrorKind, message: impl Into<String>) -> Self {
        DistributionError {
            kind,
            message: message.into(),
            source: None,
        }
    }

    /// This error, caused by `source`.
    pub fn with_source(mut self, source: impl std::error::Error + Send + Sync + 'static) -> Self {
        self.source = Some(Arc::new(source));
        self
    }

    /// An [`ErrorKind::Io`] error: `what` failed because of `error` (its
    /// source).
    pub fn io(what: impl fmt::Display, error: std::io::Error) -> Self {
        DistributionError::new(ErrorKind::Io, what.to_string()).with_source(error)
    }

    /// An error reading the local file `path` through
    /// [`toolhost_core::bounded::read_file`] (`what` says what it is, e.g.
    /// "the cached blob"): [`ErrorKind::TooLarge`] for a file past its cap,
    /// `otherwise` for any other failure (not a regular file, unreadable).
    pub fn file(what: &str, path: &std::path::Path, error: std::io::Error, otherwise: ErrorKind) -> Self {
        let kind = if error.kind() == std::io::ErrorKind::FileTooLarge {
            ErrorKind::TooLarge
        } else {
            otherwise
        };
        DistributionError::new(kind, format!("cannot read {what} {}", path.display())).with_source(error)
    }

    /// What went wrong.
    pub fn kind(&self) -> ErrorKind {
        self.kind
    }

    /// The message: what failed, without its causes.
    pub fn message(&self) -> &str {
        &self.message
    }

    /// The message with its causes, each said once.
    pub fn with_causes(&self) -> String {
        toolhost_core::error::with_causes(&self.message, std::error::Error::source(self))
    }

    /// The same error with `context` in front of its message.
    pub fn context(mut self, context: impl fmt::Display) -> Self {
        self.message = format!("{context}: {}", self.message);
        self
    }
}

impl fmt::Display for DistributionError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if f.alternate() {
            f.write_str(&self.with_causes())
        } else {
            f.write_str(&self.message)
        }
    }
}

impl std::error::Error for DistributionError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.source
            .as_deref()
            .map(|e| e as &(dyn std::error::Error + 'static))
    }
}

impl From<DistributionError> for toolhost_core::Error {
    /// The core error with the matching code: `hash_mismatch` for digest
    /// and hash mismatches, `untrusted` for signature refusals,
    /// `unavailable` for an unreachable registry, `config` for references,
    /// plain HTTP and credentials, `too_large` for bytes past their cap,
    /// `timeout` for a pull past its deadline, `io` otherwise.
    fn from(e: DistributionError) -> Self {
        use toolhost_core::ErrorCode;
        let code = match e.kind {
            ErrorKind::DigestMismatch | ErrorKind::HashMismatch => ErrorCode::HashMismatch,
            ErrorKind::Unsigned | ErrorKind::UnknownKey | ErrorKind::BadSignature => ErrorCode::Untrusted,
            ErrorKind::Unreachable | ErrorKind::Unauthorized | ErrorKind::NotFound | ErrorKind::Registry => {
                ErrorCode::Unavailable
            }
            ErrorKind::NotWasm => ErrorCode::InvalidComponent,
            ErrorKind::Reference | ErrorKind::Insecure | ErrorKind::Credentials | ErrorKind::Key => {
                ErrorCode::Config
            }
            ErrorKind::Io => ErrorCode::Io,
            ErrorKind::TooLarge => ErrorCode::TooLarge,
            ErrorKind::Timeout => ErrorCode::Timeout,
        };
        let error = toolhost_core::Error::new(code, e.message);
        match e.source {
            Some(source) => error.with_shared_source(source),
            None => error,
        }
    }
}

/// The crate's result type.
pub type Result<T, E = DistributionError> = std::result::Result<T, E>;
