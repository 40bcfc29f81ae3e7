//! # Outbound HTTP
//!
//! Plugins reach the network only through `wasi:http/outgoing-handler`, and
//! only where the component **declares** a host (`http HOST` in its
//! `toolhost:capabilities` section) **and** the operator **grants** it
//! (`http` in `[plugins.grants]`). A component that imports the handler but
//! is granted no host is refused at load (`capability_not_granted`).
//!
//! | type | what it is |
//! |---|---|
//! | [`HttpGrant`] | one granted destination: `"https://api.example.com"`, or `{ url, allow_private }` |
//! | [`SecretGrant`] | a secret sent as a header to some hosts, read from the host's environment |
//! | [`HttpAccess`] | what one component gets: declared ∩ granted, with the secrets' values |
//! | [`Rule`], [`HostPattern`], [`Target`] | the pure policy (see [`classify`] for blocked addresses) |
//!
//! Each request is checked in turn, with no state carried between them, so
//! a redirect the guest follows is checked like any other request:
//!
//! 1. scheme, host and port must match a declared host and a granted rule;
//! 2. the host does the DNS lookup itself and drops every loopback, private,
//!    link-local or otherwise non-public address (also in IPv4-mapped,
//!    -compatible, NAT64 and 6to4 forms) unless the rule names that address
//!    or says `allow_private = true`; it then connects to exactly an address
//!    it checked, so there is no window for DNS rebinding;
//! 3. TLS is verified against the URL's host name (webpki roots);
//! 4. granted secrets are set as headers, replacing the guest's own;
//! 5. the response's headers and body have every secret value replaced by
//!    `[REDACTED]`, even when split across body chunks;
//! 6. per call, requests and response bytes are counted against
//!    [`Limits::http_requests`](toolhost_core::limits::Limits::http_requests) and
//!    [`Limits::http_response_bytes`](toolhost_core::limits::Limits::http_response_bytes),
//!    and every request ends by the call's deadline.
//!
//! The guest sees `HTTP-request-denied` (or `destination-IP-prohibited`,
//! `connection-limit-reached`, `HTTP-response-body-size`); the host keeps a
//! note naming the missing grant and adds it to the tool's error message.
//!
//! ```
//! use toolhost_runtime::http::{HttpAccess, HttpGrant, Target};
//!
//! let grants = [HttpGrant::Url("https://api.example.com".into())];
//! let (access, _) = HttpAccess::resolve(&["*".into()], &[], &grants, &[])?;
//! assert!(access.check(&Target::new("https", "api.example.com").unwrap()).is_ok());
//! assert!(access.check(&Target::new("http", "127.0.0.1:80").unwrap()).is_err());
//! # Ok::<(), toolhost_core::Error>(())
//! ```

mod address;
mod grant;
mod policy;
mod secrets;
mod send;

pub use grant::{HttpAccess, HttpGrant, Secret, SecretGrant};
pub use policy::{Host, HostPattern, Rule, Scheme, Target, classify};
pub use toolhost_core::redact::REDACTED;

pub(crate) use send::HttpHooks;

/// The import that makes a component need an `http` grant.
pub const OUTGOING_HANDLER: &str = "wasi:http/outgoing-handler";
