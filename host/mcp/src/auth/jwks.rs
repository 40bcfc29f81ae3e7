//! # The issuer's keys, fetched within bounds
//!
//! [`JwksCache`] holds the public keys of the issuer's JSON Web Key Set
//! (RFC 7517). The key-set endpoint is a peer like any other, so a hostile
//! or broken one cannot stall or exhaust the process:
//!
//! | it | is bounded by |
//! |---|---|
//! | answers slowly, or drips its body | one deadline for the whole fetch ([`AuthConfig::jwks_timeout_ms`](super::AuthConfig::jwks_timeout_ms)); the cached keys keep serving |
//! | sends a huge body | [`MAX_JWKS_BYTES`], read chunk by chunk and cut past it (a `Content-Length` past it is refused before reading) |
//! | lists many keys | [`MAX_KEYS`] kept; the rest ignored |
//! | is asked again and again (tokens naming unknown `kid`s) | one fetch at a time, and at most one per [`AuthConfig::jwks_refresh_s`](super::AuthConfig::jwks_refresh_s) |
//! | redirects | not followed |
//!
//! Only `RSA` and `EC` (P-256, P-384) keys are kept: a symmetric (`oct`)
//! key in a key set would let anyone who read the set sign tokens.

use std::sync::{Arc, RwLock};
use std::time::{Duration, Instant};

use jsonwebtoken::DecodingKey;
use jsonwebtoken::jwk::{AlgorithmParameters, EllipticCurve, JwkSet};

/// The most bytes of a key set read (real ones are a few KiB).
pub const MAX_JWKS_BYTES: u64 = 256 << 10;

/// The most keys of a key set kept.
pub const MAX_KEYS: usize = 64;

/// The family of a key, which decides the algorithms a token signed with
/// it may name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KeyFamily {
    /// RSA: RS256, RS384, RS512, PS256, PS384, PS512.
    Rsa,
    /// EC on P-256: ES256.
    P256,
    /// EC on P-384: ES384.
    P384,
}

/// One verification key of the set.
#[derive(Clone)]
pub struct Key {
    /// Its `kid`, if it has one.
    pub kid: Option<String>,
    /// Its family.
    pub family: KeyFamily,
    /// The key, for `jsonwebtoken`.
    pub key: DecodingKey,
}

impl std::fmt::Debug for Key {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Key")
            .field("kid", &self.kid)
            .field("family", &self.family)
            .finish_non_exhaustive()
    }
}

/// Checks that `url` is one a key set may be fetched from: HTTPS, or HTTP
/// on a loopback host. The error says why not.
pub(crate) fn check_url(url: &str) -> std::result::Result<reqwest::Url, String> {
    let parsed = reqwest::Url::parse(url).map_err(|e| format!("`{url}` is not a URL: {e}"))?;
    let host = parsed.host_str().unwrap_or_default();
    let loopback = host == "localhost"
        || host
            .trim_start_matches('[')
            .trim_end_matches(']')
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback());
    match parsed.scheme() {
        "https" => Ok(parsed),
        "http" if loopback => Ok(parsed),
        _ => Err(format!(
            "`{url}` must be an https:// URL (http:// only on a loopback host)"
        )),
    }
}

/// The issuer's keys: fetched on first use, refetched when a token names a
/// key not held (at most once per refresh interval). Cheap to share.
pub struct JwksCache {
    url: reqwest::Url,
    http: reqwest::Client,
    timeout: Duration,
    refresh: Duration,
    keys: RwLock<Arc<Vec<Key>>>,
    /// Held while fetching (one fetch at a time); the time of the last
    /// fetch, whatever its outcome.
    fetching: tokio::sync::Mutex<Option<Instant>>,
}

impl std::fmt::Debug for JwksCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("JwksCache")
            .field("url", &self.url.as_str())
            .field("keys", &self.keys().len())
            .finish_non_exhaustive()
    }
}

impl JwksCache {
    /// A cache of the key set at `url` (see `check_url`), each fetch
    /// within `timeout`, refetched at most once per `refresh`.
    ///
    /// # Errors
    ///
    /// A message when the URL may not be used or no HTTP client can be
    /// made.
    pub fn new(url: &str, timeout: Duration, refresh: Duration) -> std::result::Result<JwksCache, String> {
        let url = check_url(url)?;
        // reqwest (without a provider of its own) panics building a client
        // when none is installed; a no-op once one is.
        let _ = rustls::crypto::ring::default_provider().install_default();
        let http = reqwest::Client::builder()
            .https_only(url.scheme() == "https")
            .redirect(reqwest::redirect::Policy::none())
            .timeout(timeout)
            .connect_timeout(timeout)
            .user_agent(concat!("toolhost/", env!("CARGO_PKG_VERSION")))
            .build()
            .map_err(|e| format!("cannot make an HTTP client for the key set: {e}"))?;
        Ok(JwksCache {
            url,
            http,
            timeout,
            refresh,
            keys: RwLock::new(Arc::new(Vec::new())),
            fetching: tokio::sync::Mutex::new(None),
        })
    }

    /// The keys held now.
    pub fn keys(&self) -> Arc<Vec<Key>> {
        Arc::clone(
            &self
                .keys
                .read()
                .unwrap_or_else(std::sync::PoisonError::into_inner),
        )
    }

    /// The keys that may have signed a token naming `kid`: the one of that
    /// `kid` (every key, for a token naming none). When none is held, the
    /// set is fetched again first, unless it was fetched less than the
    /// refresh interval ago.
    pub async fn candidates(&self, kid: Option<&str>) -> Vec<Key> {
        let matching = |keys: &[Key]| -> Vec<Key> {
            keys.iter()
                .filter(|k| kid.is_none() || k.kid.as_deref() == kid)
                .cloned()
                .collect()
        };
        let found = matching(&self.keys());
        if !found.is_empty() {
            return found;
        }
        let mut last = self.fetching.lock().await;
        // Another request may have fetched while this one waited.
        let found = matching(&self.keys());
        if !found.is_empty() {
            return found;
        }
        if last.is_some_and(|at| at.elapsed() < self.refresh) {
            return Vec::new();
        }
        *last = Some(Instant::now());
        match tokio::time::timeout(self.timeout, self.fetch()).await {
            Ok(Ok(keys)) => {
                tracing::info!("fetched {} keys from {}", keys.len(), self.url);
                *self
                    .keys
                    .write()
                    .unwrap_or_else(std::sync::PoisonError::into_inner) = Arc::new(keys);
            }
            Ok(Err(why)) => tracing::warn!("the key set at {} could not be read: {why}", self.url),
            Err(_) => tracing::warn!(
                "the key set at {} did not arrive within {} ms",
                self.url,
                self.timeout.as_millis()
            ),
        }
        drop(last);
        matching(&self.keys())
    }

    /// One fetch of the key set: its usable keys.
    async fn fetch(&self) -> std::result::Result<Vec<Key>, String> {
        let response = self
            .http
            .get(self.url.clone())
            .header(
                reqwest::header::ACCEPT,
                "application/jwk-set+json, application/json",
            )
            .send()
            .await
            .map_err(|e| e.to_string())?;
        if !response.status().is_success() {
            return Err(format!("HTTP {}", response.status()));
        }
        let announced = response.content_length();
        let chunks = toolhost_core::bounded::chunks_of(response, |r| Box::pin(r.chunk()));
        let body = match toolhost_core::bounded::read_body(announced, MAX_JWKS_BYTES, chunks).await {
            Ok(toolhost_core::bounded::Body::Complete(body)) => body,
            Ok(toolhost_core::bounded::Body::Over { excess, .. }) => {
                return Err(format!(
                    "its body is longer than the {MAX_JWKS_BYTES} bytes allowed: {excess}"
                ));
            }
            Err(e) => return Err(e.to_string()),
        };
        let set: JwkSet = serde_json::from_slice(&body).map_err(|e| format!("not a JWK set: {e}"))?;
        Ok(set.keys.iter().filter_map(usable).take(MAX_KEYS).collect())
    }
}

/// A key of the set as a verification key, if it is an RSA or EC (P-256,
/// P-384) public key meant for signatures.
fn usable(jwk: &jsonwebtoken::jwk::Jwk) -> Option<Key> {
    use jsonwebtoken::jwk::PublicKeyUse;
    if matches!(&jwk.common.public_key_use, Some(u) if *u != PublicKeyUse::Signature) {
        return None;
    }
    let family = match &jwk.algorithm {
        AlgorithmParameters::RSA(_) => KeyFamily::Rsa,
        AlgorithmParameters::EllipticCurve(ec) => match ec.curve {
            EllipticCurve::P256 => KeyFamily::P256,
            EllipticCurve::P384 => KeyFamily::P384,
            _ => return None,
        },
        // `oct` (a shared secret) and OKP keys are not accepted.
        _ => return None,
    };
    let key = DecodingKey::from_jwk(jwk).ok()?;
    Some(Key {
        kid: jwk.common.key_id.clone(),
        family,
        key,
    })
}
