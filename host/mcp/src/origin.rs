//! # Browser origins
//!
//! A request to the HTTP endpoint that carries an `Origin` header comes
//! from a web page; it is refused (403) unless that origin is allowed
//! ([`OriginPolicy`]), so a page the user happens to open cannot drive the
//! tools (DNS rebinding, cross-site requests). An allowed origin is
//! `scheme://host` with an optional `:port`, or `:*` for **any port
//! number**: `:*` matches digits only, never more host
//! (`http://127.0.0.1:1.evil.example` is not `http://127.0.0.1:*`).
//!
//! ```
//! use toolhost_mcp::origin::OriginPolicy;
//!
//! let policy = OriginPolicy::new(["http://127.0.0.1:*", "https://app.example.com"]);
//! assert!(policy.allows("http://127.0.0.1:5173"));
//! assert!(!policy.allows("http://127.0.0.1:1.evil.example"));
//! assert!(policy.allows("https://app.example.com"));
//! assert!(!policy.allows("https://app.example.com.evil.example"));
//! ```

/// The origins allowed to call the endpoint.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct OriginPolicy {
    allowed: Vec<Pattern>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
struct Pattern {
    scheme: String,
    host: String,
    /// `None`: the scheme's default port only; `Some(None)`: any port;
    /// `Some(Some(p))`: port `p`.
    port: Option<Option<u16>>,
}

/// An origin split into its parts: `scheme`, `host` (lower case, brackets
/// kept for IPv6) and the port if written. `None` if it is not of the
/// form `scheme://host[:port]`.
fn parse(origin: &str, wildcard: bool) -> Option<(String, String, Option<Option<u16>>)> {
    let (scheme, rest) = origin.split_once("://")?;
    if scheme.is_empty()
        || !scheme
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'+' || b == b'-' || b == b'.')
    {
        return None;
    }
    let (host, port): (String, &str) = if let Some(v6) = rest.strip_prefix('[') {
        let (inside, after) = v6.split_once(']')?;
        if inside.is_empty()
            || !inside
                .bytes()
                .all(|b| b.is_ascii_hexdigit() || b == b':' || b == b'.')
        {
            return None;
        }
        (format!("[{inside}]"), after)
    } else {
        let (host, port) = rest.find(':').map_or((rest, ""), |i| (&rest[..i], &rest[i..]));
        if host.is_empty()
            || !host
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'.' || b == b'-')
        {
            return None;
        }
        (host.to_string(), port)
    };
    let port = match port {
        "" => None,
        ":*" if wildcard => Some(None),
        p => {
            let digits = p.strip_prefix(':')?;
            if digits.is_empty() || digits.len() > 5 || !digits.bytes().all(|b| b.is_ascii_digit()) {
                return None;
            }
            Some(Some(digits.parse::<u16>().ok()?))
        }
    };
    Some((scheme.to_ascii_lowercase(), host.to_ascii_lowercase(), port))
}

fn default_port(scheme: &str) -> Option<u16> {
    match scheme {
        "http" | "ws" => Some(80),
        "https" | "wss" => Some(443),
        _ => None,
    }
}

impl OriginPolicy {
    /// A policy allowing `origins` (`scheme://host`, `scheme://host:port`
    /// or `scheme://host:*`). Entries that are not of that form are ignored
    /// with a warning (they could never match).
    pub fn new<I, S>(origins: I) -> OriginPolicy
    where
        I: IntoIterator<Item = S>,
        S: AsRef<str>,
    {
        let allowed = origins
            .into_iter()
            .filter_map(|o| {
                let o = o.as_ref();
                let parsed = parse(o.trim_end_matches('/'), true);
                if parsed.is_none() {
                    tracing::warn!(
                        origin = o,
                        "an allowed origin is not scheme://host[:port|:*]; ignored"
                    );
                }
                parsed
            })
            .map(|(scheme, host, port)| Pattern { scheme, host, port })
            .collect();
        OriginPolicy { allowed }
    }

    /// Whether a request with `Origin: origin` may call the endpoint.
    pub fn allows(&self, origin: &str) -> bool {
        let Some((scheme, host, port)) = parse(origin, false) else {
            return false;
        };
        let port = port.flatten().or_else(|| default_port(&scheme));
        self.allowed.iter().any(|p| {
            p.scheme == scheme
                && p.host == host
                && match p.port {
                    Some(None) => true,
                    Some(Some(want)) => port == Some(want),
                    None => port == default_port(&p.scheme),
                }
        })
    }
}
