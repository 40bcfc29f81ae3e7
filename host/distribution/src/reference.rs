//! `oci://HOST[:PORT]/REPO[:TAG|@sha256:DIGEST]` references, and which
//! registries may be spoken to in plain HTTP.

use std::fmt;
use std::net::IpAddr;

use oci_client::Reference;

use crate::error::{DistributionError, ErrorKind, Result};

/// The scheme every reference starts with.
pub const SCHEME: &str = "oci://";

/// A parsed `oci://` reference: the registry host is always explicit (no
/// Docker Hub default), and it names a tag or a digest (a bare repository
/// means the tag `latest`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OciReference {
    inner: Reference,
}

impl OciReference {
    /// Parses `text`.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::Reference`] when it does not start with `oci://`, names
    /// no registry host, or is not a valid OCI reference (naming what is
    /// wrong).
    pub fn parse(text: &str) -> Result<OciReference> {
        let bad = |why: &str| {
            DistributionError::new(
                ErrorKind::Reference,
                format!(
                    "{text:?} is not an OCI reference: {why}; write oci://HOST[:PORT]/REPOSITORY:TAG or oci://HOST[:PORT]/REPOSITORY@sha256:DIGEST"
                ),
            )
        };
        let rest = text
            .strip_prefix(SCHEME)
            .ok_or_else(|| bad("it must start with oci://"))?;
        let (host, path) = rest
            .split_once('/')
            .ok_or_else(|| bad("it names no repository"))?;
        if host.is_empty() || path.is_empty() {
            return Err(bad("it names no registry host or no repository"));
        }
        let inner: Reference = rest.parse().map_err(|e| bad(&format!("{e}")))?;
        // The OCI reference grammar takes a first segment without a dot, a
        // port or `localhost` for a path segment on Docker Hub: refuse that
        // rather than talk to a registry the operator did not name.
        if inner.registry() != host {
            return Err(bad(&format!(
                "{host:?} is not a registry host (a host name with a dot, a port, or localhost)"
            )));
        }
        Ok(OciReference { inner })
    }

    /// The registry, as `HOST[:PORT]`.
    pub fn registry(&self) -> &str {
        self.inner.registry()
    }

    /// The repository path.
    pub fn repository(&self) -> &str {
        self.inner.repository()
    }

    /// The tag, if the reference names one.
    pub fn tag(&self) -> Option<&str> {
        self.inner.tag()
    }

    /// The digest (`sha256:HEX`), if the reference names one.
    pub fn digest(&self) -> Option<&str> {
        self.inner.digest()
    }

    /// The same repository at `digest`.
    pub fn with_digest(&self, digest: &str) -> OciReference {
        OciReference {
            inner: Reference::with_digest(
                self.registry().to_string(),
                self.repository().to_string(),
                digest.to_string(),
            ),
        }
    }

    /// The same repository at `tag`.
    pub fn with_tag(&self, tag: &str) -> OciReference {
        OciReference {
            inner: Reference::with_tag(
                self.registry().to_string(),
                self.repository().to_string(),
                tag.to_string(),
            ),
        }
    }

    /// The oci-client reference.
    pub(crate) fn as_oci(&self) -> &Reference {
        &self.inner
    }

    /// The registry's host name or address, without the port.
    pub fn host(&self) -> &str {
        let registry = self.registry();
        if let Some(rest) = registry.strip_prefix('[') {
            return rest.split(']').next().unwrap_or(rest);
        }
        registry.rsplit_once(':').map_or(registry, |(host, _)| host)
    }

    /// Whether the registry is on the loopback (`localhost`, 127.0.0.0/8,
    /// `::1`), where plain HTTP is allowed without an `insecure` entry.
    pub fn is_loopback(&self) -> bool {
        let host = self.host();
        host.eq_ignore_ascii_case("localhost") || host.parse::<IpAddr>().is_ok_and(|ip| ip.is_loopback())
    }
}

impl fmt::Display for OciReference {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{SCHEME}{}/{}", self.registry(), self.repository())?;
        if let Some(tag) = self.tag() {
            write!(f, ":{tag}")?;
        }
        if let Some(digest) = self.digest() {
            write!(f, "@{digest}")?;
        }
        Ok(())
    }
}

impl std::str::FromStr for OciReference {
    type Err = DistributionError;

    fn from_str(s: &str) -> Result<Self> {
        OciReference::parse(s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_tags_and_digests() {
        let r = OciReference::parse("oci://127.0.0.1:5000/tools/hello:v1").unwrap();
        assert_eq!(r.registry(), "127.0.0.1:5000");
        assert_eq!(r.repository(), "tools/hello");
        assert_eq!(r.tag(), Some("v1"));
        assert!(r.is_loopback());
        assert_eq!(r.to_string(), "oci://127.0.0.1:5000/tools/hello:v1");
        let d = format!("oci://registry.example.com/hello@sha256:{}", "a".repeat(64));
        let r = OciReference::parse(&d).unwrap();
        assert_eq!(r.digest().map(|d| d.len()), Some(71));
        assert!(!r.is_loopback());
        assert!(
            OciReference::parse("oci://localhost:5000/hello:v1")
                .unwrap()
                .is_loopback()
        );
    }

    #[test]
    fn refuses_references_without_a_registry() {
        for bad in [
            "hello:v1",
            "oci://hello",
            "oci://tools/hello:v1",
            "oci:///hello",
            "oci://h.example/UPPER",
        ] {
            let e = OciReference::parse(bad).unwrap_err();
            assert_eq!(e.kind(), ErrorKind::Reference, "{bad}");
            assert!(e.with_causes().contains("oci://HOST"), "{e}");
        }
    }
}
