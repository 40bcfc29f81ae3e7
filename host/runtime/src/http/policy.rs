//! The pure part of the outbound-HTTP policy: host rules, request targets and
//! the address classification that keeps plugins off the loopback, private
//! networks and link-local ranges. No I/O happens here, so every rule is unit
//! tested.

use std::fmt;
use std::net::{IpAddr, Ipv6Addr};

use serde::Serialize;

use super::address::canonical;
pub use super::address::classify;

/// A URL scheme toolhost sends requests over.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Scheme {
    /// Plain-text HTTP.
    Http,
    /// HTTP over TLS.
    Https,
}

impl Scheme {
    /// The port a URL of this scheme uses when it names none.
    pub fn default_port(self) -> u16 {
        match self {
            Scheme::Http => 80,
            Scheme::Https => 443,
        }
    }

    fn parse(s: &str) -> Option<Scheme> {
        match s.to_ascii_lowercase().as_str() {
            "http" => Some(Scheme::Http),
            "https" => Some(Scheme::Https),
            _ => None,
        }
    }
}

impl fmt::Display for Scheme {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Scheme::Http => "http",
            Scheme::Https => "https",
        })
    }
}

/// Which hosts a rule or a declaration covers.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(into = "String")]
pub enum HostPattern {
    /// `*`: every host name and public address.
    Any,
    /// `*.example.com`: every subdomain of `example.com` (not itself).
    Subdomains(String),
    /// `api.example.com`: that name only (lowercase, no trailing dot).
    Name(String),
    /// `127.0.0.1`, `[::1]`: that address only.
    Ip(IpAddr),
}

impl HostPattern {
    /// Parses `*`, `*.example.com`, a host name, or an IP address (IPv6 in
    /// brackets or not). Returns `None` for anything else.
    pub fn parse(text: &str) -> Option<HostPattern> {
        let text = text.trim();
        if text == "*" {
            return Some(HostPattern::Any);
        }
        if let Some(rest) = text.strip_prefix("*.") {
            return valid_name(rest).map(HostPattern::Subdomains);
        }
        let bare = text
            .strip_prefix('[')
            .and_then(|t| t.strip_suffix(']'))
            .unwrap_or(text);
        if let Ok(ip) = bare.parse::<IpAddr>() {
            return Some(HostPattern::Ip(ip));
        }
        valid_name(text).map(HostPattern::Name)
    }

    /// Whether this pattern covers `host`.
    pub fn matches(&self, host: &Host) -> bool {
        match (self, host) {
            (HostPattern::Any, _) => true,
            (HostPattern::Name(n), Host::Name(h)) => n == h,
            (HostPattern::Subdomains(d), Host::Name(h)) => {
                h.len() > d.len() + 1 && h.ends_with(d.as_str()) && h[..h.len() - d.len()].ends_with('.')
            }
            (HostPattern::Ip(p), Host::Ip(ip)) => canonical(*p) == canonical(*ip),
            _ => false,
        }
    }

    /// Whether some host is covered by both this pattern and `other`.
    pub fn overlaps(&self, other: &HostPattern) -> bool {
        use HostPattern::*;
        match (self, other) {
            (Any, _) | (_, Any) => true,
            (Name(n), p) | (p, Name(n)) => p.matches(&Host::Name(n.clone())),
            (Ip(ip), p) | (p, Ip(ip)) => p.matches(&Host::Ip(*ip)),
            (Subdomains(a), Subdomains(b)) => {
                a == b || a.ends_with(&format!(".{b}")) || b.ends_with(&format!(".{a}"))
            }
        }
    }

    /// Whether the pattern names more than one host.
    pub fn is_wildcard(&self) -> bool {
        matches!(self, HostPattern::Any | HostPattern::Subdomains(_))
    }
}

impl fmt::Display for HostPattern {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            HostPattern::Any => f.write_str("*"),
            HostPattern::Subdomains(d) => write!(f, "*.{d}"),
            HostPattern::Name(n) => f.write_str(n),
            HostPattern::Ip(IpAddr::V6(ip)) => write!(f, "[{ip}]"),
            HostPattern::Ip(ip) => write!(f, "{ip}"),
        }
    }
}

impl From<HostPattern> for String {
    fn from(p: HostPattern) -> String {
        p.to_string()
    }
}

fn valid_name(name: &str) -> Option<String> {
    let name = name.strip_suffix('.').unwrap_or(name).to_ascii_lowercase();
    let ok = !name.is_empty()
        && name.len() <= 253
        && name.split('.').all(|label| {
            !label.is_empty()
                && label.len() <= 63
                && label
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
        });
    ok.then_some(name)
}

/// The host of a request: a name to resolve, or an address.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Host {
    /// A DNS name, lowercase, without a trailing dot.
    Name(String),
    /// An IP address literal.
    Ip(IpAddr),
}

impl fmt::Display for Host {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Host::Name(n) => f.write_str(n),
            Host::Ip(IpAddr::V6(ip)) => write!(f, "[{ip}]"),
            Host::Ip(ip) => write!(f, "{ip}"),
        }
    }
}

/// Where a request goes: scheme, host and port (the default port filled in).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target {
    /// The scheme.
    pub scheme: Scheme,
    /// The host.
    pub host: Host,
    /// The port.
    pub port: u16,
}

impl Target {
    /// Builds a target from a scheme and an authority (`host`, `host:port`,
    /// `[v6]:port`; user info is refused). `None` when either is invalid.
    pub fn new(scheme: &str, authority: &str) -> Option<Target> {
        let scheme = Scheme::parse(scheme)?;
        if authority.contains('@') {
            return None;
        }
        let (host, port) = split_host_port(authority)?;
        let port = port.unwrap_or(scheme.default_port());
        let host = match HostPattern::parse(host)? {
            HostPattern::Name(n) => Host::Name(n),
            HostPattern::Ip(ip) => Host::Ip(ip),
            HostPattern::Any | HostPattern::Subdomains(_) => return None,
        };
        Some(Target { scheme, host, port })
    }
}

impl fmt::Display for Target {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}://{}:{}", self.scheme, self.host, self.port)
    }
}

/// Splits `host[:port]`, where an IPv6 host is in brackets.
fn split_host_port(authority: &str) -> Option<(&str, Option<u16>)> {
    if authority.starts_with('[') {
        let end = authority.find(']')?;
        let host = &authority[..=end];
        return match &authority[end + 1..] {
            "" => Some((host, None)),
            rest => Some((host, Some(rest.strip_prefix(':')?.parse().ok()?))),
        };
    }
    match authority.rsplit_once(':') {
        Some((host, port)) if !host.contains(':') => Some((host, Some(port.parse().ok()?))),
        Some(_) => Some((authority, None)).filter(|(h, _)| h.parse::<Ipv6Addr>().is_ok()),
        None => Some((authority, None)),
    }
}

/// One granted destination: `https://api.example.com`, `*.example.com`,
/// `http://127.0.0.1:8080`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Rule {
    /// The scheme; a grant without one allows `https` only.
    pub scheme: Scheme,
    /// The hosts.
    pub host: HostPattern,
    /// The port; a grant without one allows the scheme's default port only.
    pub port: Option<u16>,
    /// Whether the host may resolve to a loopback, private or link-local
    /// address. An IP-literal rule always allows its own address.
    pub allow_private: bool,
    /// Certificate authorities (DER) that alone are trusted for this
    /// destination's TLS, instead of the public webpki roots: an internal
    /// service's private CA. Empty: the public roots.
    #[serde(skip)]
    pub trusted_cas: Vec<Vec<u8>>,
}

impl Rule {
    /// Parses `[scheme://]host[:port]` (a trailing `/` is allowed).
    ///
    /// # Errors
    ///
    /// A message saying what is wrong: an unknown scheme, a path, a bad
    /// host or port, or `allow_private` on a wildcard.
    pub fn parse(text: &str, allow_private: bool) -> Result<Rule, String> {
        let (scheme, rest) = match text.split_once("://") {
            Some((s, rest)) => (
                Scheme::parse(s).ok_or_else(|| format!("unknown scheme {s:?} (use http or https)"))?,
                rest,
            ),
            None => (Scheme::Https, text),
        };
        let rest = rest.strip_suffix('/').unwrap_or(rest);
        if rest.contains('/') || rest.contains('@') || rest.contains('?') {
            return Err("a grant names a scheme, a host and a port, not a path".into());
        }
        let (host, port) = split_host_port(rest).ok_or("the port is not a number")?;
        let host =
            HostPattern::parse(host).ok_or_else(|| format!("{host:?} is not a host name or address"))?;
        if allow_private && host.is_wildcard() {
            return Err("allow_private needs an explicit host, not a wildcard".into());
        }
        Ok(Rule {
            scheme,
            host,
            port,
            allow_private,
            trusted_cas: Vec::new(),
        })
    }

    /// Whether the rule covers `target` (scheme, host and port).
    pub fn matches(&self, target: &Target) -> bool {
        self.scheme == target.scheme
            && self.port.unwrap_or(self.scheme.default_port()) == target.port
            && self.host.matches(&target.host)
    }

    /// Whether a request under this rule may connect to `ip`: any public
    /// address; a non-public one only when the rule opts in or names it.
    pub fn allows_address(&self, ip: IpAddr) -> bool {
        if classify(ip).is_none() || self.allow_private {
            return true;
        }
        matches!(self.host, HostPattern::Ip(p) if canonical(p) == canonical(ip))
    }
}

impl fmt::Display for Rule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}://{}", self.scheme, self.host)?;
        if let Some(port) = self.port {
            write!(f, ":{port}")?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn patterns_overlap_when_some_host_is_in_both() {
        let p = |s: &str| HostPattern::parse(s).unwrap();
        for (a, b) in [
            ("*", "api.example.com"),
            ("api.example.com", "api.example.com"),
            ("*.example.com", "api.example.com"),
            ("*.example.com", "*.api.example.com"),
            ("127.0.0.1", "*"),
        ] {
            assert!(p(a).overlaps(&p(b)) && p(b).overlaps(&p(a)), "{a} {b}");
        }
        for (a, b) in [
            ("api.example.com", "web.example.com"),
            ("*.example.com", "example.com"),
            ("*.example.com", "*.example.org"),
            ("127.0.0.1", "api.example.com"),
        ] {
            assert!(!p(a).overlaps(&p(b)) && !p(b).overlaps(&p(a)), "{a} {b}");
        }
    }

    fn ip(s: &str) -> IpAddr {
        s.parse().unwrap()
    }

    fn target(url: &str) -> Target {
        let (scheme, authority) = url.split_once("://").unwrap();
        Target::new(scheme, authority).unwrap()
    }

    #[test]
    fn rules_match_scheme_host_and_port() {
        let rule = Rule::parse("https://api.example.com", false).unwrap();
        assert!(rule.matches(&target("https://api.example.com")));
        assert!(rule.matches(&target("https://API.example.com.:443")));
        assert!(!rule.matches(&target("http://api.example.com")));
        assert!(!rule.matches(&target("https://api.example.com:8443")));
        assert!(!rule.matches(&target("https://evil.example.com")));

        let bare = Rule::parse("example.org", false).unwrap();
        assert_eq!(bare.scheme, Scheme::Https);
        assert!(!bare.matches(&target("http://example.org")));

        let sub = Rule::parse("*.example.com", false).unwrap();
        assert!(sub.matches(&target("https://a.b.example.com")));
        assert!(!sub.matches(&target("https://example.com")));
        assert!(!sub.matches(&target("https://badexample.com")));

        let local = Rule::parse("http://127.0.0.1:8080", false).unwrap();
        assert!(local.matches(&target("http://127.0.0.1:8080")));
        assert!(!local.matches(&target("http://127.0.0.1:8081")));
        assert!(local.allows_address(ip("127.0.0.1")));
        assert!(local.allows_address(ip("::ffff:127.0.0.1")));
        assert!(!local.allows_address(ip("127.0.0.2")));

        let v6 = Rule::parse("http://[::1]:9000", false).unwrap();
        assert!(v6.matches(&target("http://[::1]:9000")));
    }

    #[test]
    fn names_never_reach_private_addresses_without_opting_in() {
        let any = Rule::parse("*", false).unwrap();
        assert!(any.allows_address(ip("93.184.216.34")));
        assert!(!any.allows_address(ip("10.0.0.1")));
        assert!(!any.allows_address(ip("::ffff:192.168.0.1")));
        let named = Rule::parse("http://intranet.local", true).unwrap();
        assert!(named.allows_address(ip("10.0.0.1")));
        assert!(Rule::parse("*", true).is_err());
    }

    #[test]
    fn bad_grants_and_targets_are_refused() {
        for bad in [
            "ftp://x.com",
            "https://x.com/path",
            "https://u@x.com",
            "x.com:port",
            "bad host",
            "",
        ] {
            assert!(Rule::parse(bad, false).is_err(), "{bad}");
        }
        assert_eq!(Target::new("ftp", "x.com"), None);
        assert_eq!(Target::new("http", "user@x.com"), None);
        assert_eq!(Target::new("http", "*.x.com"), None);
        assert_eq!(target("http://[::1]").port, 80);
    }
}
