//! Detached minisign signatures, compatible with the `minisign` program.
//!
//! A component `FILE` is signed by `FILE.minisig` (what `minisign -Sm FILE`
//! writes, and what [`sign`] writes): Ed25519 over the BLAKE2b-512 hash of
//! the bytes, with a signed trusted comment. A key is named by its 8-byte
//! key ID, printed as `minisign` prints it (upper-case hex).
//!
//! The operator lists the public keys it trusts ([`TrustedKeys`]);
//! [`TrustedKeys::check`] applies the policy:
//!
//! | signatures | required | not required |
//! |---|---|---|
//! | one by a trusted key verifies | loaded, `signed_by` that key | the same |
//! | one by a trusted key fails (tampered bytes or signature) | refused ([`ErrorKind::BadSignature`]) | refused too |
//! | unreadable signature text | refused ([`ErrorKind::BadSignature`]) | refused too |
//! | only unknown keys | refused ([`ErrorKind::UnknownKey`], naming them) | loaded, reported unverified |
//! | none | refused ([`ErrorKind::Unsigned`]) | loaded, reported unsigned |

use std::fmt;
use std::io::Cursor;
use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::error::{DistributionError, ErrorKind, Result};

/// The file name suffix of a detached signature (`FILE.minisig`).
pub const SIGNATURE_SUFFIX: &str = ".minisig";

/// The most bytes of a signature: a `.minisig` file read from disk, or a
/// signature layer pulled from a registry. A minisign signature is about
/// 300 bytes plus its comments; 64 KiB leaves room for long trusted
/// comments and refuses anything else.
pub const MAX_SIGNATURE_BYTES: u64 = 64 << 10;

/// The most bytes of a minisign key file (public or secret; either is
/// under 1 KiB).
pub const MAX_KEY_BYTES: u64 = 64 << 10;

/// Reads the text file `path` (`what` names it in messages) through the
/// bounded reader: [`ErrorKind::TooLarge`] past `max_bytes`, `otherwise`
/// for any other failure.
fn read_text(path: &Path, max_bytes: u64, what: &str, otherwise: ErrorKind) -> Result<String> {
    toolhost_core::bounded::read_to_string(path, max_bytes)
        .map_err(|e| DistributionError::file(what, path, e, otherwise))
}

/// A minisign key ID (8 bytes), shown as the `minisign` program shows it.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct KeyId([u8; 8]);

impl KeyId {
    fn from_slice(bytes: &[u8]) -> KeyId {
        let mut id = [0u8; 8];
        let n = bytes.len().min(8);
        id[..n].copy_from_slice(&bytes[..n]);
        KeyId(id)
    }
}

impl fmt::Display for KeyId {
    /// As the `minisign` program prints it, in its key files' comments and
    /// its messages: the ID read as a little-endian u64, in upper-case hex
    /// without leading zeros (`%PRIX64`).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:X}", u64::from_le_bytes(self.0))
    }
}

impl fmt::Debug for KeyId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "KeyId({self})")
    }
}

impl Serialize for KeyId {
    fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

/// A public key the operator trusts, with where it came from.
#[derive(Clone)]
pub struct PublicKey {
    id: KeyId,
    key: minisign::PublicKey,
    origin: String,
}

impl fmt::Debug for PublicKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PublicKey")
            .field("id", &self.id)
            .field("origin", &self.origin)
            .finish()
    }
}

impl PublicKey {
    /// Reads a public key file, as `minisign -G` writes it (an untrusted
    /// comment line, then the base64 key): a regular file of at most
    /// [`MAX_KEY_BYTES`], never blocking on a pipe.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::TooLarge`] past [`MAX_KEY_BYTES`]; [`ErrorKind::Key`]
    /// when it cannot be read, is not a regular file or is not a minisign
    /// public key.
    pub fn from_file(path: &Path) -> Result<PublicKey> {
        let text = read_text(path, MAX_KEY_BYTES, "the public key", ErrorKind::Key)?;
        PublicKey::parse(&text, &path.display().to_string())
    }

    /// Parses a public key: a key file's text, or its base64 line alone
    /// (what `minisign -P` takes). `origin` names it in messages.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::Key`] when it is not a minisign public key.
    pub fn parse(text: &str, origin: &str) -> Result<PublicKey> {
        let text = text.trim();
        let key = if text.lines().count() >= 2 {
            minisign::PublicKey::from_box(
                minisign::PublicKeyBox::from_string(text).map_err(key_error(origin))?,
            )
        } else {
            minisign::PublicKey::from_base64(text)
        }
        .map_err(key_error(origin))?;
        Ok(PublicKey {
            id: KeyId::from_slice(key.keynum()),
            key,
            origin: origin.to_string(),
        })
    }

    /// The key's ID.
    pub fn id(&self) -> KeyId {
        self.id
    }

    /// Where it was read from.
    pub fn origin(&self) -> &str {
        &self.origin
    }

    /// Checks `signature` over `bytes` with this key alone.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::UnknownKey`] when another key made the signature (naming
    /// both); [`ErrorKind::BadSignature`] when it does not verify.
    pub fn verify(&self, bytes: &[u8], signature: &Signature) -> Result<()> {
        if signature.key_id != self.id {
            return Err(DistributionError::new(
                ErrorKind::UnknownKey,
                format!(
                    "the signature was made by key {}, not by key {} ({})",
                    signature.key_id, self.id, self.origin
                ),
            ));
        }
        let signature_box = minisign::SignatureBox::from_string(&signature.text).map_err(|e| {
            DistributionError::new(
                ErrorKind::BadSignature,
                format!("the signature cannot be read: {e}"),
            )
        })?;
        minisign::verify(&self.key, &signature_box, Cursor::new(bytes), true, false, false).map_err(|e| {
            DistributionError::new(
                ErrorKind::BadSignature,
                format!(
                    "the signature by key {} does not verify ({e}): the bytes or the signature were changed after signing",
                    self.id
                ),
            )
        })
    }
}

fn key_error(origin: &str) -> impl Fn(minisign::PError) -> DistributionError + '_ {
    move |e| {
        DistributionError::new(
            ErrorKind::Key,
            format!("{origin} is not a minisign public key: {e}"),
        )
    }
}

/// A detached signature: the text of a `.minisig` file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Signature {
    text: String,
    key_id: KeyId,
    trusted_comment: String,
}

impl Signature {
    /// Parses the text of a `.minisig` file.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::BadSignature`] when it is not a minisign signature.
    pub fn parse(text: &str) -> Result<Signature> {
        let signature_box = minisign::SignatureBox::from_string(text).map_err(|e| {
            DistributionError::new(ErrorKind::BadSignature, format!("not a minisign signature: {e}"))
        })?;
        Ok(Signature {
            key_id: KeyId::from_slice(signature_box.keynum()),
            trusted_comment: signature_box.trusted_comment().unwrap_or_default(),
            text: text.to_string(),
        })
    }

    /// Reads `path`: a regular file of at most [`MAX_SIGNATURE_BYTES`],
    /// never blocking on a pipe.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::TooLarge`] past [`MAX_SIGNATURE_BYTES`];
    /// [`ErrorKind::Io`] when it cannot be read or is not a regular file,
    /// then as [`Signature::parse`].
    pub fn from_file(path: &Path) -> Result<Signature> {
        let text = read_text(path, MAX_SIGNATURE_BYTES, "the signature", ErrorKind::Io)?;
        Signature::parse(&text).map_err(|e| e.context(path.display()))
    }

    /// The signature file of `component`: `COMPONENT.minisig`, if there is one.
    ///
    /// # Errors
    ///
    /// As [`Signature::from_file`], for a file that exists.
    pub fn next_to(component: &Path) -> Result<Option<Signature>> {
        let path = signature_path(component);
        if !path.exists() {
            return Ok(None);
        }
        Signature::from_file(&path).map(Some)
    }

    /// The ID of the key that made it.
    pub fn key_id(&self) -> KeyId {
        self.key_id
    }

    /// Its trusted (signed) comment.
    pub fn trusted_comment(&self) -> &str {
        &self.trusted_comment
    }

    /// The `.minisig` text.
    pub fn text(&self) -> &str {
        &self.text
    }
}

/// `COMPONENT.minisig`.
pub fn signature_path(component: &Path) -> PathBuf {
    let mut name = component.as_os_str().to_os_string();
    name.push(SIGNATURE_SUFFIX);
    PathBuf::from(name)
}

/// Signs `bytes` with the minisign secret key in `secret_key_path`, as
/// `minisign -Sm FILE` does (pre-hashed, with the trusted comment
/// `timestamp:SECONDS\tfile:NAME\thashed`). An encrypted key is opened with
/// `password`.
///
/// # Errors
///
/// [`ErrorKind::Key`] when the key cannot be read (it must be a regular
/// file), is encrypted and no password was given, or the password is
/// wrong; [`ErrorKind::TooLarge`] when the key file holds more than
/// [`MAX_KEY_BYTES`].
pub fn sign(
    bytes: &[u8],
    secret_key_path: &Path,
    password: Option<String>,
    file_name: &str,
) -> Result<Signature> {
    let text = read_text(secret_key_path, MAX_KEY_BYTES, "the secret key", ErrorKind::Key)?;
    let key_error = |e: minisign::PError| {
        DistributionError::new(
            ErrorKind::Key,
            format!("{} cannot be used to sign: {e}", secret_key_path.display()),
        )
    };
    let secret = open_secret_key(&text, password).map_err(|e| match e {
        OpenError::NeedsPassword(e) => DistributionError::new(
            ErrorKind::Key,
            format!(
                "{} cannot be opened without a password ({e}): give its password in the environment variable {PASSWORD_ENV}",
                secret_key_path.display()
            ),
        ),
        OpenError::Bad(e) => key_error(e),
    })?;
    let seconds = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    let trusted = format!("timestamp:{seconds}\tfile:{file_name}\thashed");
    let signature_box =
        minisign::sign(None, &secret, Cursor::new(bytes), Some(&trusted), None).map_err(key_error)?;
    Signature::parse(&signature_box.into_string())
}

enum OpenError {
    NeedsPassword(minisign::PError),
    Bad(minisign::PError),
}

/// Opens a secret key's text: an unencrypted key (`minisign -G -W`) as it
/// is, an encrypted one with `password` (from the environment, never an
/// argument).
fn open_secret_key(
    text: &str,
    password: Option<String>,
) -> std::result::Result<minisign::SecretKey, OpenError> {
    let text = repair_checksum(text).unwrap_or_else(|| text.to_string());
    let sk_box = minisign::SecretKeyBox::from_string(&text).map_err(OpenError::Bad)?;
    match (sk_box.clone().into_unencrypted_secret_key(), password) {
        (Ok(secret), _) => Ok(secret),
        (Err(_), Some(password)) => sk_box.into_secret_key(Some(password)).map_err(OpenError::Bad),
        (Err(e), None) => Err(OpenError::NeedsPassword(e)),
    }
}

/// minisign 0.11 (Debian 12's) writes an unencrypted secret key with an
/// all-zero checksum; the checksum is BLAKE2b-256 over the signature
/// algorithm, the key ID and the secret key. Returns the key text with the
/// checksum filled in, for an unencrypted key whose checksum is zero, and
/// `None` for any other key (left to the minisign crate to judge).
fn repair_checksum(text: &str) -> Option<String> {
    use base64::Engine as _;
    use blake2::Digest as _;
    // sig_alg 2, kdf_alg 2, chk_alg 2, salt 32, opslimit 8, memlimit 8,
    // keynum 8, secret key 64, checksum 32.
    const KEYNUM: usize = 54;
    const SK: usize = KEYNUM + 8;
    const CHK: usize = SK + 64;
    let mut lines = text.lines();
    let comment = lines.next()?;
    let engine = base64::engine::general_purpose::STANDARD;
    let mut bytes = engine.decode(lines.next()?.trim()).ok()?;
    if bytes.len() != CHK + 32 || bytes[2..4] != [0, 0] || bytes[CHK..].iter().any(|b| *b != 0) {
        return None;
    }
    let mut hasher = blake2::Blake2b::<blake2::digest::consts::U32>::new();
    hasher.update(&bytes[..2]);
    hasher.update(&bytes[KEYNUM..CHK]);
    bytes[CHK..].copy_from_slice(&hasher.finalize());
    Some(format!("{comment}\n{}\n", engine.encode(&bytes)))
}

/// The environment variable holding the password of an encrypted secret key.
pub const PASSWORD_ENV: &str = "TOOLHOST_MINISIGN_PASSWORD";

/// How a component's signatures were judged (for reports: `toolhost tools
/// --status`, the load log).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "signature", rename_all = "snake_case")]
pub enum SignatureStatus {
    /// A trusted key's signature verified.
    Verified {
        /// The key.
        signed_by: KeyId,
    },
    /// Signed only by keys that are not trusted (allowed: not required).
    UnknownKeys {
        /// The keys that signed.
        keys: Vec<KeyId>,
    },
    /// No signature (allowed: not required).
    Unsigned,
    /// Came with the toolhost binary (a standard plugin): as trusted as
    /// the binary, its identity fixed when it was built; no signature is
    /// asked of it.
    Bundled,
}

/// The public keys the operator trusts.
#[derive(Debug, Clone, Default)]
pub struct TrustedKeys {
    keys: Vec<PublicKey>,
}

impl TrustedKeys {
    /// No trusted key.
    pub fn new() -> Self {
        TrustedKeys::default()
    }

    /// These keys.
    pub fn from_keys(keys: Vec<PublicKey>) -> Self {
        TrustedKeys { keys }
    }

    /// The keys.
    pub fn keys(&self) -> &[PublicKey] {
        &self.keys
    }

    /// Judges `signatures` over `bytes` (of the component named `what` in
    /// messages) by the table in the [module docs](self).
    ///
    /// # Errors
    ///
    /// [`ErrorKind::BadSignature`], [`ErrorKind::Unsigned`] or
    /// [`ErrorKind::UnknownKey`], each naming the component and the keys.
    pub fn check(
        &self,
        what: &str,
        bytes: &[u8],
        signatures: &[Signature],
        required: bool,
    ) -> Result<SignatureStatus> {
        let mut unknown = Vec::new();
        let mut verified = None;
        for signature in signatures {
            match self.keys.iter().find(|k| k.id == signature.key_id) {
                Some(key) => {
                    key.verify(bytes, signature).map_err(|e| e.context(what))?;
                    verified.get_or_insert(key.id);
                }
                None => unknown.push(signature.key_id),
            }
        }
        if let Some(signed_by) = verified {
            return Ok(SignatureStatus::Verified { signed_by });
        }
        let trusted = if self.keys.is_empty() {
            "no key is trusted (add public keys to [signatures] trusted_keys)".to_string()
        } else {
            format!(
                "the trusted keys are {}",
                self.keys
                    .iter()
                    .map(|k| format!("{} ({})", k.id, k.origin))
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        };
        match (unknown.is_empty(), required) {
            (true, false) => Ok(SignatureStatus::Unsigned),
            (false, false) => Ok(SignatureStatus::UnknownKeys { keys: unknown }),
            (true, true) => Err(DistributionError::new(
                ErrorKind::Unsigned,
                format!(
                    "{what} is unsigned, and require_signature is set: sign it (toolhost sign FILE --key SECRET, or minisign -Sm FILE) with a trusted key; {trusted}"
                ),
            )),
            (false, true) => Err(DistributionError::new(
                ErrorKind::UnknownKey,
                format!(
                    "{what} is signed only by key {}, which is not trusted, and require_signature is set; {trusted}",
                    unknown
                        .iter()
                        .map(ToString::to_string)
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mkfifo(path: &Path) {
        let status = std::process::Command::new("mkfifo").arg(path).status().unwrap();
        assert!(status.success());
    }

    #[test]
    fn signature_and_key_files_are_read_bounded() {
        let dir = tempfile::tempdir().unwrap();
        let big = dir.path().join("big");
        std::fs::write(&big, vec![b'a'; (MAX_SIGNATURE_BYTES + 1) as usize]).unwrap();
        let e = Signature::from_file(&big).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::TooLarge, "{e}");
        assert!(e.with_causes().contains("big"), "{e}");
        let e = PublicKey::from_file(&big).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::TooLarge, "{e}");
        let e = sign(b"x", &big, None, "x").unwrap_err();
        assert_eq!(e.kind(), ErrorKind::TooLarge, "{e}");

        // A named pipe with no writer: refused at once, never waited on.
        let fifo = dir.path().join("c.wasm.minisig");
        mkfifo(&fifo);
        let e = Signature::next_to(&dir.path().join("c.wasm")).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Io, "{e}");
        assert!(e.with_causes().contains("named pipe"), "{e:#}");
        let e = PublicKey::from_file(&fifo).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Key, "{e}");
        let e = sign(b"x", &fifo, None, "x").unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Key, "{e}");
    }
}
