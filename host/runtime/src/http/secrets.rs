//! Secrets on the wire: injected into requests host-side, redacted out of
//! responses before the guest sees them.

use http::{HeaderMap, HeaderName, HeaderValue};

use super::grant::Secret;
use super::policy::Target;

pub use toolhost_core::redact::StreamRedactor as Redactor;

/// The redactor for the raw values of `secrets` (see
/// [`StreamRedactor`](toolhost_core::redact::StreamRedactor)).
pub(crate) fn redactor(secrets: &[Secret]) -> Redactor {
    Redactor::new(secrets.iter().map(|s| s.raw.as_bytes().to_vec()))
}

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
    if redactor.is_empty() {
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
        let mut r = redactor(&[secret("s3cr3t-value")]);
        assert_eq!(run(&mut r, &["token=s3cr3t-value;"]), "token=[REDACTED];");
        let mut r = redactor(&[secret("s3cr3t-value")]);
        assert_eq!(run(&mut r, &["a s3c", "r3t-v", "alue b s3"]), "a [REDACTED] b s3");
        let mut r = redactor(&[secret("s3cr3t-value")]);
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
        redact_headers(&mut response, &redactor(&secrets));
        assert_eq!(response["x-echo"], "Bearer [REDACTED]");
    }
}
