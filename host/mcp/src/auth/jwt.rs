//! # JWT access tokens, verified
//!
//! [`JwtVerifier::verify`] takes a bearer token to a [`Grant`] or a
//! [`Refusal`]. The checks, in order: the header names an asymmetric
//! algorithm toolhost accepts ([`ACCEPTED`]; `none` and the HMAC family
//! never, whatever the key set holds); a key of the issuer's set of that
//! `kid` and of that algorithm's family verifies the signature; `iss` is
//! the issuer; `aud` holds the resource; `exp` is not past and `nbf` not
//! ahead, each give or take the clock skew; then the scopes make the grant.

use std::collections::BTreeSet;
use std::time::Duration;

use jsonwebtoken::{Algorithm, Validation};
use serde::Deserialize;

use super::jwks::{JwksCache, KeyFamily};
use super::{AuthConfig, Grant};
use toolhost_core::error::{Error, ErrorCode, Result};

/// The algorithms a token may be signed with.
pub const ACCEPTED: &[Algorithm] = &[
    Algorithm::RS256,
    Algorithm::RS384,
    Algorithm::RS512,
    Algorithm::PS256,
    Algorithm::PS384,
    Algorithm::PS512,
    Algorithm::ES256,
    Algorithm::ES384,
];

/// The most bytes of a token looked at: larger ones are refused unread.
pub const MAX_TOKEN_BYTES: usize = 16 << 10;

/// Why a token was not accepted.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum Refusal {
    /// The token is not valid here (HTTP 401, `invalid_token`): malformed,
    /// badly signed, expired, not yet valid, of another issuer or audience.
    #[error("{0}")]
    Invalid(String),
    /// The token is valid but holds none of the configured scopes (HTTP
    /// 403, `insufficient_scope`).
    #[error("the token holds none of the scopes this server grants")]
    NoScope,
}

/// The claims read besides those `jsonwebtoken` validates.
#[derive(Debug, Deserialize)]
struct Claims {
    sub: Option<String>,
    client_id: Option<String>,
    /// RFC 9068 / RFC 8693: space-separated.
    scope: Option<String>,
    /// Some issuers (Azure AD, Okta): an array, or a string.
    scp: Option<Scp>,
}

#[derive(Debug, Deserialize)]
#[serde(untagged)]
enum Scp {
    List(Vec<String>),
    Text(String),
}

/// Verifies the issuer's JWT access tokens and maps their scopes to
/// grants (see the [module](self)).
#[derive(Debug)]
pub struct JwtVerifier {
    config: AuthConfig,
    jwks: JwksCache,
    /// Scopes that grant no tools but let a token in (see
    /// [`JwtVerifier::recognizing`]).
    others: BTreeSet<String>,
}

impl JwtVerifier {
    /// A verifier for `config` (checked first).
    ///
    /// # Errors
    ///
    /// [`ErrorCode::Config`] for a section [`AuthConfig::validate`]
    /// refuses, or a key-set URL no client can fetch.
    pub fn new(config: AuthConfig) -> Result<JwtVerifier> {
        config.validate()?;
        let jwks = JwksCache::new(
            &config.jwks_url,
            Duration::from_millis(config.jwks_timeout_ms.max(1)),
            Duration::from_secs(config.jwks_refresh_s),
        )
        .map_err(|why| Error::new(ErrorCode::Config, format!("[auth] jwks_url: {why}")))?;
        Ok(JwtVerifier {
            config,
            jwks,
            others: BTreeSet::new(),
        })
    }

    /// Also lets in a token holding one of `scopes`, which grant no tool
    /// (the console's: see [`crate::console::ConsoleScopes`]): its grant
    /// holds those of them it has, and, unless it also holds a scope of
    /// `[[auth.scopes]]`, no toolset (its MCP session lists nothing). A
    /// token holding none of these nor of `[[auth.scopes]]` is refused as
    /// before ([`Refusal::NoScope`]).
    pub fn recognizing(mut self, scopes: impl IntoIterator<Item = String>) -> JwtVerifier {
        self.others.extend(scopes);
        self
    }

    /// The section it verifies for.
    pub fn config(&self) -> &AuthConfig {
        &self.config
    }

    /// The token's grant, if it verifies and holds a configured scope.
    ///
    /// # Errors
    ///
    /// A [`Refusal`] saying why not.
    pub async fn verify(&self, token: &str) -> std::result::Result<Grant, Refusal> {
        let invalid = |why: &str| Refusal::Invalid(why.to_string());
        if token.len() > MAX_TOKEN_BYTES {
            return Err(invalid("the token is too long"));
        }
        let header = jsonwebtoken::decode_header(token).map_err(|e| {
            Refusal::Invalid(format!("the token is not a signed JWT this server accepts ({e})"))
        })?;
        if !ACCEPTED.contains(&header.alg) {
            return Err(Refusal::Invalid(format!(
                "tokens signed with {:?} are not accepted",
                header.alg
            )));
        }
        let family = family_of(header.alg);
        let mut validation = Validation::new(header.alg);
        validation.algorithms = vec![header.alg];
        validation.set_issuer(&[&self.config.issuer]);
        validation.set_audience(&[&self.config.audience]);
        validation.set_required_spec_claims(&["exp", "iss", "aud"]);
        validation.leeway = self.config.clock_skew_s;
        validation.validate_nbf = true;
        let keys = self.jwks.candidates(header.kid.as_deref()).await;
        let mut last = None;
        for key in keys.iter().filter(|k| Some(k.family) == family) {
            match jsonwebtoken::decode::<Claims>(token, &key.key, &validation) {
                Ok(data) => return self.grant_of(data.claims),
                Err(e) => last = Some(e),
            }
        }
        Err(match last {
            Some(e) => Refusal::Invalid(describe(&e)),
            None => invalid(
                "no key of the issuer's key set can verify the token (unknown kid, or wrong key type)",
            ),
        })
    }

    fn grant_of(&self, claims: Claims) -> std::result::Result<Grant, Refusal> {
        let mut scopes = BTreeSet::new();
        let words = |text: &str| {
            text.split_ascii_whitespace()
                .map(String::from)
                .collect::<Vec<_>>()
        };
        if let Some(scope) = &claims.scope {
            scopes.extend(words(scope));
        }
        match &claims.scp {
            Some(Scp::List(list)) => scopes.extend(list.iter().cloned()),
            Some(Scp::Text(text)) => scopes.extend(words(text)),
            None => {}
        }
        let subject = claims.sub.or(claims.client_id).unwrap_or_default();
        let others: BTreeSet<String> = self.others.intersection(&scopes).cloned().collect();
        match self.config.grant(&subject, &scopes) {
            Some(mut grant) => {
                grant.scopes.extend(others);
                Ok(grant)
            }
            None if !others.is_empty() => Ok(Grant {
                subject,
                scopes: others,
                audience: toolhost_core::registry::ToolAudience::Public,
                toolsets: Some(Vec::new()),
            }),
            None => Err(Refusal::NoScope),
        }
    }
}

/// The key family that may sign with `alg`.
fn family_of(alg: Algorithm) -> Option<KeyFamily> {
    match alg {
        Algorithm::RS256
        | Algorithm::RS384
        | Algorithm::RS512
        | Algorithm::PS256
        | Algorithm::PS384
        | Algorithm::PS512 => Some(KeyFamily::Rsa),
        Algorithm::ES256 => Some(KeyFamily::P256),
        Algorithm::ES384 => Some(KeyFamily::P384),
        _ => None,
    }
}

/// What a client is told of a token refused.
fn describe(e: &jsonwebtoken::errors::Error) -> String {
    use jsonwebtoken::errors::ErrorKind;
    match e.kind() {
        ErrorKind::ExpiredSignature => "the token has expired".into(),
        ErrorKind::ImmatureSignature => "the token is not valid yet (nbf)".into(),
        ErrorKind::InvalidIssuer => "the token was issued by another issuer".into(),
        ErrorKind::InvalidAudience => "the token was issued for another resource (aud)".into(),
        ErrorKind::InvalidSignature => "the token's signature does not verify".into(),
        ErrorKind::MissingRequiredClaim(c) => format!("the token has no `{c}` claim"),
        _ => format!("the token is not valid: {e}"),
    }
}
