//! # Who may call: OAuth 2.1 access tokens, and what their scopes grant
//!
//! Over HTTP, toolhost is an OAuth 2.1 resource server as the MCP
//! authorization specification (2025-11-25, 2026-07-28) says, when the
//! config has an `[auth]` section ([`AuthConfig`]):
//!
//! - `GET /.well-known/oauth-protected-resource` and its form suffixed by
//!   the resource's path (`/.well-known/oauth-protected-resource/mcp`)
//!   serve the protected-resource metadata of RFC 9728
//!   ([`AuthConfig::metadata`]): `resource`, `authorization_servers`,
//!   `scopes_supported`, `bearer_methods_supported`;
//! - a request without a token, or with one that does not verify, gets
//!   HTTP 401 and `WWW-Authenticate: Bearer resource_metadata="…",
//!   scope="…"` (with `error="invalid_token"` for a bad one, RFC 6750);
//! - a token is a JWT signed by a key of the issuer's JWKS (RS256, RS384,
//!   RS512, PS256, PS384, PS512, ES256, ES384; never `none`, never an HMAC),
//!   its `iss` the issuer, its `aud` holding the resource, within its `exp`
//!   and `nbf` give or take [`AuthConfig::clock_skew_s`] ([`jwt`]); the
//!   keys are fetched, cached and refreshed within bounds ([`jwks`]);
//! - its scopes (`scope`, or `scp`) pick entries of `[[auth.scopes]]`
//!   ([`ScopeConfig`]); together they make its [`Grant`]: an audience and
//!   the toolsets it may see. What no granted scope names is neither listed
//!   nor callable (the MCP session is made for the grant, see
//!   [`Session::granted`](toolhost_core::dispatch::Session::granted)); a
//!   call of a tool another scope would grant is answered HTTP 403 with
//!   `error="insufficient_scope"` and the scopes that grant it.
//!
//! The static bearer token (`--token`) stays beside it, for simple
//! set-ups: it grants what the server serves without `[auth]`.

pub mod jwks;
pub mod jwt;

use std::collections::BTreeSet;
use std::sync::Arc;

use serde::Deserialize;
use serde_json::{Value, json};
use toolhost_core::error::{Error, ErrorCode, Result};
use toolhost_core::registry::ToolAudience;

pub use jwks::JwksCache;
pub use jwt::{JwtVerifier, Refusal};

/// The `[auth]` section: the authorization server whose JWT access tokens
/// the HTTP endpoint accepts, and what each scope grants.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AuthConfig {
    /// The issuer: a token's `iss` must be exactly this.
    pub issuer: String,
    /// Where the issuer's JSON Web Key Set is: `https://…` (plain `http://`
    /// only on a loopback host, for tests).
    pub jwks_url: String,
    /// The resource identifier of this server (its MCP endpoint's URL, e.g.
    /// `https://mcp.example.com/mcp`): a token's `aud` must hold it, and the
    /// metadata names it as `resource`.
    pub audience: String,
    /// The authorization servers the metadata names (default: the issuer).
    #[serde(default)]
    pub authorization_servers: Vec<String>,
    /// How many seconds a token's `exp` and `nbf` may be off by.
    #[serde(default = "default_clock_skew")]
    pub clock_skew_s: u64,
    /// The least time between two fetches of the key set: a token naming a
    /// key (`kid`) the cache does not hold refetches it at most this often.
    #[serde(default = "default_jwks_refresh")]
    pub jwks_refresh_s: u64,
    /// The longest a key-set fetch may take, connection to last byte.
    #[serde(default = "default_jwks_timeout")]
    pub jwks_timeout_ms: u64,
    /// `[[auth.scopes]]`: what each scope grants.
    #[serde(default)]
    pub scopes: Vec<ScopeConfig>,
}

/// One `[[auth.scopes]]` entry: a scope and what a token holding it may
/// see and call.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScopeConfig {
    /// The scope, as the authorization server writes it (`tools:read`).
    pub scope: String,
    /// `trusted` or `public`: the audience of the tools it grants.
    pub audience: ToolAudience,
    /// The toolsets it grants (defined, dynamic or presets); none listed:
    /// every toolset the server serves.
    pub toolsets: Option<Vec<String>>,
}

fn default_clock_skew() -> u64 {
    60
}

fn default_jwks_refresh() -> u64 {
    60
}

fn default_jwks_timeout() -> u64 {
    5_000
}

/// What a caller may see and call: the audience of its session and the
/// toolsets it is granted (`None`: all that are served).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Grant {
    /// Who the caller is: the token's `sub` (or `client_id`), or `static`
    /// for the static token.
    pub subject: String,
    /// The scopes that made the grant (none for the static token).
    pub scopes: BTreeSet<String>,
    /// The audience of its session.
    pub audience: ToolAudience,
    /// The toolsets its session sees; `None`: all that are served.
    pub toolsets: Option<Vec<String>>,
}

impl Grant {
    /// The grant of the static token: `audience`, every toolset.
    pub fn everything(audience: ToolAudience) -> Grant {
        Grant {
            subject: "static".into(),
            scopes: BTreeSet::new(),
            audience,
            toolsets: None,
        }
    }
}

impl AuthConfig {
    /// Checks the section: URLs that parse, a key set fetched over HTTPS
    /// (or HTTP on loopback), scopes named once.
    ///
    /// # Errors
    ///
    /// [`ErrorCode::Config`] naming the key at fault.
    pub fn validate(&self) -> Result<()> {
        let bad = |key: &str, why: String| Error::new(ErrorCode::Config, format!("[auth] {key}: {why}"));
        if self.issuer.trim().is_empty() {
            return Err(bad("issuer", "is empty".into()));
        }
        jwks::check_url(&self.jwks_url).map_err(|why| bad("jwks_url", why))?;
        let resource = reqwest::Url::parse(&self.audience)
            .map_err(|e| bad("audience", format!("`{}` is not a URL: {e}", self.audience)))?;
        if !matches!(resource.scheme(), "https" | "http") || resource.fragment().is_some() {
            return Err(bad(
                "audience",
                "must be the http(s) URL of the MCP endpoint, without a fragment".into(),
            ));
        }
        let mut seen = BTreeSet::new();
        for entry in &self.scopes {
            let valid = !entry.scope.is_empty()
                && entry
                    .scope
                    .bytes()
                    .all(|b| b.is_ascii_graphic() && b != b'"' && b != b'\\');
            if !valid {
                return Err(bad(
                    "scopes.scope",
                    format!(
                        "`{}` is not a scope (printable ASCII, no space, quote or backslash)",
                        entry.scope
                    ),
                ));
            }
            if !seen.insert(entry.scope.as_str()) {
                return Err(bad("scopes.scope", format!("`{}` is listed twice", entry.scope)));
            }
        }
        Ok(())
    }

    /// The scopes the metadata lists and a challenge asks for.
    pub fn scopes_supported(&self) -> Vec<&str> {
        self.scopes.iter().map(|s| s.scope.as_str()).collect()
    }

    /// The path of the resource (`/mcp` for `https://host/mcp`), empty for
    /// a resource at the root.
    pub fn resource_path(&self) -> String {
        reqwest::Url::parse(&self.audience)
            .map(|u| u.path().trim_end_matches('/').to_string())
            .unwrap_or_default()
    }

    /// The URL of the protected-resource metadata: the well-known path
    /// inserted between the resource's origin and its path (RFC 9728 §3.1).
    pub fn metadata_url(&self) -> String {
        match reqwest::Url::parse(&self.audience) {
            Ok(url) => format!(
                "{}/.well-known/oauth-protected-resource{}",
                url.origin().ascii_serialization(),
                self.resource_path()
            ),
            Err(_) => String::new(),
        }
    }

    /// The protected-resource metadata document (RFC 9728 §2).
    pub fn metadata(&self) -> Value {
        let servers = if self.authorization_servers.is_empty() {
            vec![self.issuer.clone()]
        } else {
            self.authorization_servers.clone()
        };
        json!({
            "resource": self.audience,
            "authorization_servers": servers,
            "scopes_supported": self.scopes_supported(),
            "bearer_methods_supported": ["header"],
        })
    }

    /// The grant of a token holding `scopes` (by `subject`): the entries
    /// of `[[auth.scopes]]` it holds, together; `None` when it holds none.
    /// Its audience is trusted if one of them is; its toolsets the union of
    /// theirs (all, if one of them grants all).
    pub fn grant(&self, subject: &str, scopes: &BTreeSet<String>) -> Option<Grant> {
        let held: Vec<&ScopeConfig> = self.scopes.iter().filter(|s| scopes.contains(&s.scope)).collect();
        if held.is_empty() {
            return None;
        }
        let audience = if held.iter().any(|s| s.audience == ToolAudience::Trusted) {
            ToolAudience::Trusted
        } else {
            ToolAudience::Public
        };
        let mut toolsets: Option<BTreeSet<String>> = Some(BTreeSet::new());
        for entry in &held {
            match (&mut toolsets, &entry.toolsets) {
                (Some(all), Some(these)) => all.extend(these.iter().cloned()),
                _ => toolsets = None,
            }
        }
        Some(Grant {
            subject: subject.to_string(),
            scopes: held.iter().map(|s| s.scope.clone()).collect(),
            audience,
            toolsets: toolsets.map(|t| t.into_iter().collect()),
        })
    }

    /// The scopes whose grant alone would let a caller use a tool, by
    /// `grants(audience, toolsets)`: what an `insufficient_scope` challenge
    /// names.
    pub fn scopes_granting(&self, grants: impl Fn(ToolAudience, Option<&[String]>) -> bool) -> Vec<&str> {
        self.scopes
            .iter()
            .filter(|s| grants(s.audience, s.toolsets.as_deref()))
            .map(|s| s.scope.as_str())
            .collect()
    }
}

/// The `WWW-Authenticate` value of a challenge: `Bearer` with the
/// metadata's URL, `error` and its description when there is one, and the
/// scopes asked for (RFC 6750 §3, RFC 9728 §5.1).
pub fn challenge(metadata_url: &str, error: Option<(&str, &str)>, scopes: &[&str]) -> String {
    let mut value = format!("Bearer resource_metadata=\"{}\"", quoted(metadata_url));
    if let Some((code, description)) = error {
        value.push_str(&format!(
            ", error=\"{code}\", error_description=\"{}\"",
            quoted(description)
        ));
    }
    if !scopes.is_empty() {
        value.push_str(&format!(", scope=\"{}\"", quoted(&scopes.join(" "))));
    }
    value
}

/// `text` fit for a quoted-string of a header: printable ASCII without
/// `"` and `\` (RFC 6750 §3 allows no more in `error_description`).
fn quoted(text: &str) -> String {
    text.chars()
        .map(|c| {
            if c.is_ascii_graphic() && c != '"' && c != '\\' || c == ' ' {
                c
            } else {
                '?'
            }
        })
        .take(300)
        .collect()
}

/// How the HTTP endpoint knows its callers: the static token, the issuer's
/// JWTs, or both. Cheap to clone.
#[derive(Debug, Clone, Default)]
pub struct Authenticator {
    /// The static bearer token and the grant it carries.
    pub static_token: Option<(String, Arc<Grant>)>,
    /// The issuer's JWTs, when `[auth]` is configured.
    pub jwt: Option<Arc<JwtVerifier>>,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config() -> AuthConfig {
        toml::from_str(
            r#"
issuer = "https://as.example"
jwks_url = "https://as.example/jwks"
audience = "https://mcp.example/mcp"
[[scopes]]
scope = "read"
audience = "public"
toolsets = ["time"]
[[scopes]]
scope = "files"
audience = "trusted"
toolsets = ["files"]
[[scopes]]
scope = "admin"
audience = "trusted"
"#,
        )
        .unwrap()
    }

    fn scopes(list: &[&str]) -> BTreeSet<String> {
        list.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn scopes_make_one_grant() {
        let c = config();
        assert_eq!(c.grant("a", &scopes(&["other"])), None);
        let read = c.grant("a", &scopes(&["read", "other"])).unwrap();
        assert_eq!(read.audience, ToolAudience::Public);
        assert_eq!(read.toolsets, Some(vec!["time".to_string()]));
        let both = c.grant("a", &scopes(&["read", "files"])).unwrap();
        assert_eq!(both.audience, ToolAudience::Trusted);
        assert_eq!(both.toolsets, Some(vec!["files".to_string(), "time".to_string()]));
        assert_eq!(c.grant("a", &scopes(&["read", "admin"])).unwrap().toolsets, None);
    }

    #[test]
    fn metadata_and_challenges() {
        let c = config();
        c.validate().unwrap();
        assert_eq!(
            c.metadata_url(),
            "https://mcp.example/.well-known/oauth-protected-resource/mcp"
        );
        assert_eq!(
            c.metadata()["scopes_supported"],
            json!(["read", "files", "admin"])
        );
        assert_eq!(
            c.metadata()["authorization_servers"],
            json!(["https://as.example"])
        );
        assert_eq!(
            challenge(
                "https://m/x",
                Some(("invalid_token", "a \"quoted\"\n thing")),
                &["a", "b"]
            ),
            r#"Bearer resource_metadata="https://m/x", error="invalid_token", error_description="a ?quoted?? thing", scope="a b""#
        );
    }

    #[test]
    fn plain_http_key_sets_only_on_loopback() {
        let mut c = config();
        for (url, ok) in [
            ("http://127.0.0.1:9/jwks", true),
            ("http://localhost:9/jwks", true),
            ("http://[::1]:9/jwks", true),
            ("http://as.example/jwks", false),
            ("http://10.0.0.1/jwks", false),
            ("ftp://as.example/jwks", false),
        ] {
            c.jwks_url = url.into();
            assert_eq!(c.validate().is_ok(), ok, "{url}");
        }
    }
}
