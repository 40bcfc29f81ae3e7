//! # Secret redaction
//!
//! Text the host keeps or hands back from shell commands (a command line,
//! its output, a process receipt) can carry credentials. A [`Redactor`]
//! replaces them with `[REDACTED]`:
//!
//! - the **values** it is told are secret (for example the values of
//!   passed-through environment variables whose names look secret, see
//!   [`is_secret_name`]);
//! - well-known credential **shapes**: private-key blocks, AWS access key
//!   ids, GitHub, GitLab, Slack, OpenAI/Anthropic-style and Google API
//!   tokens, JSON Web Tokens, `Bearer` and `Basic` credentials, passwords in
//!   URLs, and `NAME=value` / `--flag value` pairs whose name says password,
//!   secret, token or key.
//!
//! A [`StreamRedactor`] replaces known values in a byte stream, across
//! chunk boundaries (outbound HTTP responses, where the values are the
//! secrets the host injected).
//!
//! Redaction is best effort by nature (a secret of no known shape, printed
//! by a program, cannot be recognised); it errs on the side of redacting.
//! Process receipts are always redacted; `exec` results are by default.
//!
//! ```
//! use toolhost_core::redact::Redactor;
//!
//! let r = Redactor::new(["hunter2-very-secret".to_string()]);
//! assert_eq!(
//!     r.redact("login hunter2-very-secret; export API_TOKEN=abc123; curl https://bob:pw@example.com"),
//!     "login [REDACTED]; export API_TOKEN=[REDACTED]; curl https://bob:[REDACTED]@example.com"
//! );
//! assert_eq!(r.redact("echo hello"), "echo hello");
//! ```

use std::borrow::Cow;
use std::sync::OnceLock;

use regex::Regex;

/// What a redacted secret is replaced with.
pub const REDACTED: &str = "[REDACTED]";

/// The shortest secret value replaced wherever it appears (shorter ones
/// would redact ordinary words).
pub const MIN_SECRET_LEN: usize = 6;

/// Whether an environment variable or option named `name` holds a secret
/// by its name: it contains `PASSWORD`, `PASSWD`, `SECRET`, `TOKEN`,
/// `API_KEY`/`APIKEY`, `ACCESS_KEY`, `PRIVATE_KEY`, `CREDENTIAL` or
/// `AUTH` (case-insensitive).
pub fn is_secret_name(name: &str) -> bool {
    let upper = name.to_ascii_uppercase().replace('-', "_");
    [
        "PASSWORD",
        "PASSWD",
        "SECRET",
        "TOKEN",
        "API_KEY",
        "APIKEY",
        "ACCESS_KEY",
        "PRIVATE_KEY",
        "CREDENTIAL",
        "AUTH",
    ]
    .iter()
    .any(|word| upper.contains(word))
}

/// Replaces secrets in text; see the module documentation.
#[derive(Debug, Clone, Default)]
pub struct Redactor {
    /// Known secret values, longest first (so that a value containing
    /// another is replaced whole).
    values: Vec<String>,
}

/// A credential shape and how to replace a match of it.
struct Shape {
    regex: Regex,
    /// The replacement, with `$name` groups kept (the part that names the
    /// secret stays readable).
    replacement: &'static str,
}

fn shapes() -> &'static [Shape] {
    static SHAPES: OnceLock<Vec<Shape>> = OnceLock::new();
    SHAPES.get_or_init(|| {
        let secret_word = r"[A-Za-z0-9_.-]*(?i:password|passwd|secret|token|api[_-]?key|access[_-]?key|private[_-]?key)[A-Za-z0-9_.-]*";
        let table: Vec<(String, &'static str)> = vec![
            (
                r"-----BEGIN[A-Z ]*PRIVATE KEY-----[\s\S]*?(?:-----END[A-Z ]*PRIVATE KEY-----|\z)".into(),
                "[REDACTED]",
            ),
            (r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b".into(), "[REDACTED]"),
            (r"\bgh[pousr]_[A-Za-z0-9]{30,}\b".into(), "[REDACTED]"),
            (r"\bgithub_pat_[A-Za-z0-9_]{20,}\b".into(), "[REDACTED]"),
            (r"\bglpat-[A-Za-z0-9_-]{20,}\b".into(), "[REDACTED]"),
            (r"\bxox[abprs]-[A-Za-z0-9-]{10,}\b".into(), "[REDACTED]"),
            (r"\bsk-[A-Za-z0-9_-]{20,}\b".into(), "[REDACTED]"),
            (r"\bAIza[0-9A-Za-z_-]{35}\b".into(), "[REDACTED]"),
            (
                r"\beyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\b".into(),
                "[REDACTED]",
            ),
            (
                r"(?P<scheme>\b(?:[Bb]earer|[Bb]asic|[Tt]oken)\s+)[A-Za-z0-9._~+/=-]{8,}".into(),
                "${scheme}[REDACTED]",
            ),
            (
                r"(?P<userinfo>[A-Za-z][A-Za-z0-9+.-]*://[^\s:/@]+:)[^\s@/]+@".into(),
                "${userinfo}[REDACTED]@",
            ),
            (
                format!(
                    r#"(?P<name>\b{secret_word}["']?\s*[=:]\s*)(?:"[^"\n]*"|'[^'\n]*'|[^\s"'&;|]+)"#
                ),
                "${name}[REDACTED]",
            ),
            (
                format!(r#"(?P<flag>--{secret_word}(?:=|\s+))(?:"[^"\n]*"|'[^'\n]*'|[^\s"'&;|-][^\s"'&;|]*)"#),
                "${flag}[REDACTED]",
            ),
        ];
        table
            .into_iter()
            .filter_map(|(pattern, replacement)| match Regex::new(&pattern) {
                Ok(regex) => Some(Shape { regex, replacement }),
                Err(e) => {
                    // The patterns are constants; a unit test compiles each.
                    tracing::error!(%pattern, "a redaction pattern does not compile: {e}");
                    None
                }
            })
            .collect()
    })
}

impl Redactor {
    /// A redactor for the shapes and these secret `values` (values shorter
    /// than [`MIN_SECRET_LEN`] are ignored).
    pub fn new(values: impl IntoIterator<Item = String>) -> Redactor {
        let mut values: Vec<String> = values.into_iter().filter(|v| v.len() >= MIN_SECRET_LEN).collect();
        values.sort_by_key(|v| std::cmp::Reverse(v.len()));
        values.dedup();
        Redactor { values }
    }

    /// A redactor that also knows the values of those variables of
    /// `names` that are set in this process's environment and whose names
    /// look secret ([`is_secret_name`]).
    pub fn with_env_secrets<'a>(names: impl IntoIterator<Item = &'a String>) -> Redactor {
        Redactor::new(
            names
                .into_iter()
                .filter(|n| is_secret_name(n))
                .filter_map(|n| std::env::var(n).ok()),
        )
    }

    /// `text` with every secret replaced by [`REDACTED`].
    pub fn redact(&self, text: &str) -> String {
        let mut out: Cow<'_, str> = Cow::Borrowed(text);
        for value in &self.values {
            if out.contains(value.as_str()) {
                out = Cow::Owned(out.replace(value.as_str(), REDACTED));
            }
        }
        for shape in shapes() {
            if let Cow::Owned(replaced) = shape.regex.replace_all(&out, shape.replacement) {
                out = Cow::Owned(replaced);
            }
        }
        out.into_owned()
    }
}

/// Replaces known secret values in a byte stream (an HTTP response body,
/// header values) with `[REDACTED]`, holding back just enough at the end
/// of each chunk to catch a value split across chunks. Values only: the
/// stream may be binary, so credential shapes are left to [`Redactor`].
#[derive(Debug, Clone, Default)]
pub struct StreamRedactor {
    needles: Vec<Vec<u8>>,
    pending: Vec<u8>,
}

impl StreamRedactor {
    /// A redactor for these secret `values` (empty ones are ignored).
    pub fn new(values: impl IntoIterator<Item = Vec<u8>>) -> StreamRedactor {
        let mut needles: Vec<Vec<u8>> = values.into_iter().filter(|v| !v.is_empty()).collect();
        // Longest first, so a secret containing another is redacted whole.
        needles.sort_by_key(|n| std::cmp::Reverse(n.len()));
        StreamRedactor {
            needles,
            pending: Vec::new(),
        }
    }

    /// Whether there is nothing to redact.
    pub fn is_empty(&self) -> bool {
        self.needles.is_empty()
    }

    /// Feeds `chunk`; returns the bytes that are safe to pass on.
    pub fn push(&mut self, chunk: &[u8]) -> Vec<u8> {
        self.pending.extend_from_slice(chunk);
        self.drain(false)
    }

    /// Ends the stream; returns what was held back, redacted.
    pub fn finish(&mut self) -> Vec<u8> {
        self.drain(true)
    }

    fn drain(&mut self, last: bool) -> Vec<u8> {
        let buf = &self.pending;
        let mut out = Vec::with_capacity(buf.len());
        let mut i = 0;
        'scan: while i < buf.len() {
            let rest = &buf[i..];
            for needle in &self.needles {
                if rest.starts_with(needle) {
                    out.extend_from_slice(REDACTED.as_bytes());
                    i += needle.len();
                    continue 'scan;
                }
            }
            if !last
                && self
                    .needles
                    .iter()
                    .any(|n| n.len() > rest.len() && n.starts_with(rest))
            {
                break;
            }
            out.push(buf[i]);
            i += 1;
        }
        self.pending.drain(..i);
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_shape_compiles() {
        assert_eq!(shapes().len(), 13);
    }

    #[test]
    fn credential_shapes_are_redacted() {
        let r = Redactor::default();
        for (input, expected) in [
            ("key AKIAIOSFODNN7EXAMPLE here", "key [REDACTED] here"),
            (
                "token ghp_0123456789abcdefghijklmnopqrstuvwxyzAB",
                "token [REDACTED]",
            ),
            (
                "Authorization: Bearer abcdef123456",
                "Authorization: Bearer [REDACTED]",
            ),
            (
                "mysql --password=hunter22 -u root",
                "mysql --password=[REDACTED] -u root",
            ),
            ("tool --api-key s3cr3tv4lue", "tool --api-key [REDACTED]"),
            ("DB_PASSWORD=\"a b c\" ./run", "DB_PASSWORD=[REDACTED] ./run"),
            ("\"client_secret\": \"xyz123\"", "\"client_secret\": [REDACTED]"),
            (
                "-----BEGIN OPENSSH PRIVATE KEY-----\nAAAA\n-----END OPENSSH PRIVATE KEY-----\nok",
                "[REDACTED]\nok",
            ),
            (
                "git clone https://user:p4ss@host/repo",
                "git clone https://user:[REDACTED]@host/repo",
            ),
        ] {
            assert_eq!(r.redact(input), expected, "{input}");
        }
    }

    #[test]
    fn ordinary_text_is_left_alone() {
        let r = Redactor::new(["short".to_string()]);
        for text in [
            "ls -la /tmp && echo done",
            "the tokenizer splits words",
            "cargo build --release",
            "short words stay",
            "https://example.com/path",
        ] {
            assert_eq!(r.redact(text), text);
        }
    }

    #[test]
    fn known_values_are_redacted_longest_first() {
        let r = Redactor::new(["abcdef".to_string(), "abcdefgh".to_string()]);
        assert_eq!(r.redact("x abcdefgh y abcdef"), "x [REDACTED] y [REDACTED]");
    }

    #[test]
    fn secret_names() {
        assert!(is_secret_name("GITHUB_TOKEN"));
        assert!(is_secret_name("db-password"));
        assert!(is_secret_name("AWS_SECRET_ACCESS_KEY"));
        assert!(!is_secret_name("PATH"));
        assert!(!is_secret_name("HOME"));
    }
}
