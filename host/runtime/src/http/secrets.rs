//! Secrets on the wire: injected into requests host-side, redacted out of
//! responses before the guest sees them.

use http::{HeaderMap, HeaderName, HeaderValue};

use super::grant::Secret;
use super::policy::Target;

/// What replaces a secret's value in a response.
pub const REDACTED: &[u8] = b"[REDACTED]";

/// Sets the header of every secret granted for `target`, replacing any value
/// the guest gave that header. Returns the names of the secrets sent.
pub(crate) fn inject(headers: &mut HeaderMap, target: &Target, secrets: &[Secret]) -> Vec<String> {
    let mut sent = Vec::new();
    for secret in secrets {
        if !secret.hosts.iter().any(|r| r.matches(target)) {
            continue;
        }
        let (Ok(name), Ok(mut value)) = (
            HeaderName::from_bytes(secret.header.as_bytes()),
            HeaderValue::from_str(&secret.header_value),
        ) else {
            continue;
        };
        value.set_sensitive(true);
        headers.remove(&name);
        headers.insert(name, value);
        sent.push(secret.name.clone());
    }
    sent
}

/// Replaces every secret's value in the header values of `headers`.
pub(crate) fn redact_headers(headers: &mut HeaderMap, redactor: &Redactor) {
    if redactor.needles.is_empty() {
        return;
    }
    for value in headers.values_mut() {
        let mut r = redactor.clone();
        let mut out = r.push(value.as_bytes());
        out.extend(r.finish());
        if out != value.as_bytes() {
            *value = HeaderValue::from_bytes(&out).unwrap_or_else(|_| HeaderValue::from_static("[REDACTED]"));
        }
    }
}

/// Replaces secret values in a byte stream with `[REDACTED]`, holding back
/// just enough at the end of each chunk to catch a value split across
/// chunks.
#[derive(Debug, Clone, Default)]
pub(crate) struct Redactor {
    needles: Vec<Vec<u8>>,
    pending: Vec<u8>,
}

impl Redactor {
    /// A redactor for the raw values of `secrets` (empty values are ignored).
    pub(crate) fn new(secrets: &[Secret]) -> Redactor {
        let mut needles: Vec<Vec<u8>> = secrets
            .iter()
            .filter(|s| !s.raw.is_empty())
            .map(|s| s.raw.as_bytes().to_vec())
            .collect();
        // Longest first, so a secret containing another is redacted whole.
        needles.sort_by_key(|n| std::cmp::Reverse(n.len()));
        Redactor {
            needles,
            pending: Vec::new(),
        }
    }

    /// Whether there is nothing to redact.
    pub(crate) fn is_empty(&self) -> bool {
        self.needles.is_empty()
    }

    /// Feeds `chunk`; returns the bytes that are safe to pass on.
    pub(crate) fn push(&mut self, chunk: &[u8]) -> Vec<u8> {
        self.pending.extend_from_slice(chunk);
        self.drain(false)
    }

    /// Ends the stream; returns what was held back, redacted.
    pub(crate) fn finish(&mut self) -> Vec<u8> {
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
                    out.extend_from_slice(REDACTED);
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
    use crate::http::policy::Rule;

    fn secret(raw: &str) -> Secret {
        Secret {
            name: "t".into(),
            header: "authorization".into(),
            raw: raw.into(),
            header_value: format!("Bearer {raw}"),
            hosts: vec![Rule::parse("http://127.0.0.1:1", false).unwrap()],
        }
    }

    fn run(r: &mut Redactor, chunks: &[&str]) -> String {
        let mut out = Vec::new();
        for c in chunks {
            out.extend(r.push(c.as_bytes()));
        }
        out.extend(r.finish());
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn a_secret_is_redacted_even_across_chunks() {
        let mut r = Redactor::new(&[secret("s3cr3t-value")]);
        assert_eq!(run(&mut r, &["token=s3cr3t-value;"]), "token=[REDACTED];");
        let mut r = Redactor::new(&[secret("s3cr3t-value")]);
        assert_eq!(run(&mut r, &["a s3c", "r3t-v", "alue b s3"]), "a [REDACTED] b s3");
        let mut r = Redactor::new(&[secret("s3cr3t-value")]);
        assert_eq!(
            run(&mut r, &["s", "3", "cr3t-valu", "e", "s3cr3t-value"]),
            "[REDACTED][REDACTED]"
        );
    }

    #[test]
    fn injection_replaces_the_guest_header_and_only_for_granted_hosts() {
        let secrets = [secret("abc")];
        let mut headers = HeaderMap::new();
        headers.insert("authorization", HeaderValue::from_static("Bearer guest"));
        headers.append("authorization", HeaderValue::from_static("Bearer guest2"));
        let granted = Target::new("http", "127.0.0.1:1").unwrap();
        assert_eq!(inject(&mut headers, &granted, &secrets), ["t"]);
        let all: Vec<_> = headers.get_all("authorization").iter().collect();
        assert_eq!(all, ["Bearer abc"]);
        let mut other = HeaderMap::new();
        assert!(inject(&mut other, &Target::new("http", "127.0.0.1:2").unwrap(), &secrets).is_empty());
        assert!(other.is_empty());

        let mut response = HeaderMap::new();
        response.insert("x-echo", HeaderValue::from_static("Bearer abc"));
        redact_headers(&mut response, &Redactor::new(&secrets));
        assert_eq!(response["x-echo"], "Bearer [REDACTED]");
    }
}
