//! The bounded HTTP side of a pull: every byte a registry sends during
//! [`OciClient::pull`](crate::OciClient::pull) is read here, through one
//! bounded body reader, and the caps are here.
//!
//! A registry is untrusted input like any other: it may send a body far
//! longer than its headers or its manifest say, or drip one byte at a
//! time. So:
//!
//! - no response body is ever read whole: the one reader, `read_bounded`,
//!   takes the body chunk by chunk, refuses a `Content-Length` past the cap
//!   before reading anything, and stops (dropping the connection) as soon
//!   as the bytes pass the cap, having held at most the cap plus one chunk;
//! - each kind of body has its cap: [`MAX_MANIFEST_BYTES`] for manifests
//!   and referrers indexes, the size the manifest declares (itself at most
//!   [`ClientOptions::max_blob_bytes`](crate::ClientOptions::max_blob_bytes))
//!   for the component,
//!   [`MAX_SIGNATURE_BYTES`](crate::signature::MAX_SIGNATURE_BYTES) for a
//!   signature layer, [`MAX_TOKEN_BYTES`] for a token, and
//!   [`MAX_ERROR_BODY_BYTES`] of an error response (read only for its
//!   message; the rest is not read);
//! - the pull runs under one deadline
//!   ([`ClientOptions::pull_timeout`](crate::ClientOptions::pull_timeout)), set
//!   by the caller around everything here: a drip, which never trips a
//!   per-read timeout, cannot outlast it.
//!
//! The protocol is the small part of the OCI distribution spec a pull
//! needs: `GET` of manifests, blobs (following at most [`MAX_REDIRECTS`]
//! redirects, to the storage registries hand blobs off to) and the
//! referrers API; anonymous access, HTTP Basic credentials, and the
//! Docker-style Bearer token challenge (`WWW-Authenticate: Bearer
//! realm=…,service=…`, the token fetched with the Basic credentials when
//! there are any).

use reqwest::header::{ACCEPT, AUTHORIZATION, HeaderValue, WWW_AUTHENTICATE};
use reqwest::{Response, StatusCode};

use oci_client::secrets::RegistryAuth;

use toolhost_core::bounded::chunks_of;
pub(crate) use toolhost_core::bounded::{Body, Excess};

use crate::error::{DistributionError, ErrorKind, Result};
use crate::reference::OciReference;

/// The most bytes of a manifest or a referrers index: 4 MiB, the size the
/// OCI distribution spec says registries must accept for a manifest
/// (a component's manifest is under 1 KiB).
pub const MAX_MANIFEST_BYTES: u64 = 4 << 20;

/// The most bytes of a token response (a JSON object holding one token;
/// registries' tokens are a few KiB).
pub const MAX_TOKEN_BYTES: u64 = 64 << 10;

/// The most bytes read of an error response, for its message; the rest is
/// left unread (the status says what failed).
pub const MAX_ERROR_BODY_BYTES: u64 = 64 << 10;

/// The most redirects followed for one request (registries redirect blob
/// downloads to their storage, once).
pub const MAX_REDIRECTS: usize = 5;

/// The most signatures read for one component: the referrers index may
/// list any number, each a manifest and a blob to fetch. More is refused
/// ([`ErrorKind::TooLarge`]) rather than cut, since cutting could drop
/// the one signature that verifies.
pub const MAX_SIGNATURES: usize = 32;

/// Bearer token fetches in one pull: one per scope, and a pull has one
/// scope; a registry that keeps challenging is refused after this many.
const MAX_TOKEN_FETCHES: usize = 4;

/// The manifest types a pull accepts: OCI image manifests (the CNCF Wasm
/// layout), and the index types only so that a tag naming an index is
/// reported as such rather than as a missing manifest. Docker's v2 schema 2
/// manifest is accepted too: it has the same shape, and the layout check
/// decides.
pub(crate) const MANIFEST_ACCEPT: &str = "application/vnd.oci.image.manifest.v1+json, \
     application/vnd.docker.distribution.manifest.v2+json, \
     application/vnd.oci.image.index.v1+json, \
     application/vnd.docker.distribution.manifest.list.v2+json";

/// The media type of a referrers index.
pub(crate) const INDEX_ACCEPT: &str = "application/vnd.oci.image.index.v1+json";

/// The one reader of registry bodies (`toolhost_core::bounded::read_body`):
/// at most `cap` bytes kept and at most one chunk more read; a
/// `Content-Length` past `cap` is refused before any byte is read. Dropping
/// `response` (on [`Body::Over`]) closes the connection, so nothing more is
/// received.
///
/// # Errors
///
/// [`ErrorKind::Unreachable`] when the connection fails mid-body.
pub(crate) async fn read_bounded(reference: &OciReference, response: Response, cap: u64) -> Result<Body> {
    let announced = response.content_length();
    let chunks = chunks_of(response, |r| Box::pin(r.chunk()));
    toolhost_core::bounded::read_body(announced, cap, chunks)
        .await
        .map_err(|e| request_error(reference, &e))
}

/// `read_bounded` for a body that must fit: past `cap`, the error
/// `too_much(how)`.
pub(crate) async fn read_body(
    reference: &OciReference,
    response: Response,
    cap: u64,
    too_much: impl FnOnce(Excess) -> DistributionError,
) -> Result<Vec<u8>> {
    match read_bounded(reference, response, cap).await? {
        Body::Complete(bytes) => Ok(bytes),
        Body::Over { excess, .. } => Err(too_much(excess)),
    }
}

/// The requests of one pull to one registry: its HTTP client, its
/// credentials and the authorization they earned (a Bearer token, or the
/// Basic credentials once the registry asked for them).
pub(crate) struct Session<'a> {
    http: reqwest::Client,
    reference: &'a OciReference,
    base: String,
    credentials: RegistryAuth,
    authorization: Option<HeaderValue>,
    token_fetches: usize,
}

impl<'a> Session<'a> {
    /// A session with `reference`'s registry, in plain HTTP when `plain`
    /// (then redirects may lead to plain HTTP too; otherwise HTTPS only,
    /// redirects included).
    pub(crate) fn new(reference: &'a OciReference, plain: bool, credentials: RegistryAuth) -> Result<Self> {
        // reqwest (without a provider of its own) panics building a client
        // when none is installed.
        install_crypto_provider();
        let http = reqwest::Client::builder()
            .https_only(!plain)
            .redirect(reqwest::redirect::Policy::limited(MAX_REDIRECTS))
            // A registry that does not answer the connection is unreachable
            // (the cache may serve its copy); everything after it is under
            // the pull's deadline, set by the caller.
            .connect_timeout(std::time::Duration::from_secs(10))
            .user_agent(concat!("toolhost/", env!("CARGO_PKG_VERSION")))
            .build()
            .map_err(|e| {
                DistributionError::new(
                    ErrorKind::Registry,
                    format!("cannot make an HTTP client for {reference}: {}", chain(&e)),
                )
            })?;
        let authorization = match &credentials {
            // A token given as is (never from auth::credentials today).
            RegistryAuth::Bearer(token) => Some(sensitive(&format!("Bearer {token}"))?),
            _ => None,
        };
        let scheme = if plain { "http" } else { "https" };
        Ok(Session {
            http,
            reference,
            base: format!("{scheme}://{}", reference.as_oci().resolve_registry()),
            credentials,
            authorization,
            token_fetches: 0,
        })
    }

    /// The URL of `path` (`/v2/…`) on the registry.
    pub(crate) fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base)
    }

    /// `GET url` with `accept`, answering one authentication challenge
    /// (then retrying once). Returns the response whatever its status; its
    /// body unread.
    ///
    /// # Errors
    ///
    /// The request's failure ([`ErrorKind::Unreachable`], …); the token
    /// request's ([`ErrorKind::Unauthorized`], [`ErrorKind::TooLarge`]).
    pub(crate) async fn get(&mut self, url: &str, accept: Option<&str>) -> Result<Response> {
        let mut answered = false;
        loop {
            let mut request = self.http.get(url);
            if let Some(accept) = accept {
                request = request.header(ACCEPT, accept);
            }
            if let Some(authorization) = &self.authorization {
                // reqwest drops it on a redirect to another host (a blob's
                // storage), so credentials stay with the registry.
                request = request.header(AUTHORIZATION, authorization.clone());
            }
            let response = request
                .send()
                .await
                .map_err(|e| request_error(self.reference, &e))?;
            if response.status() != StatusCode::UNAUTHORIZED || answered {
                return Ok(response);
            }
            answered = true;
            match self.answer(&response).await? {
                Some(authorization) => self.authorization = Some(authorization),
                None => return Ok(response),
            }
            // The 401's body is dropped unread with the response.
        }
    }

    /// `get`, then anything but `200 OK` is the typed error for `what`.
    pub(crate) async fn get_ok(&mut self, url: &str, accept: Option<&str>, what: &str) -> Result<Response> {
        let response = self.get(url, accept).await?;
        if response.status() == StatusCode::OK {
            return Ok(response);
        }
        Err(self.status_error(response, what).await)
    }

    /// The typed error for a response that is not `200 OK`, from its status
    /// and at most [`MAX_ERROR_BODY_BYTES`] of its body.
    pub(crate) async fn status_error(&self, response: Response, what: &str) -> DistributionError {
        let status = response.status();
        let body = read_error_body(self.reference, response).await;
        status_error(self.reference, status, &body, what)
    }

    /// The authorization answering a `401`'s challenge, or `None` when there
    /// is none to give (the `401` then stands).
    async fn answer(&mut self, response: &Response) -> Result<Option<HeaderValue>> {
        let challenges: Vec<String> = response
            .headers()
            .get_all(WWW_AUTHENTICATE)
            .iter()
            .filter_map(|v| v.to_str().ok().map(str::to_string))
            .collect();
        let mut basic = false;
        for header in &challenges {
            for challenge in http_auth::ChallengeParser::new(header).flatten() {
                if challenge.scheme.eq_ignore_ascii_case("bearer") {
                    let param = |name: &str| {
                        challenge
                            .params
                            .iter()
                            .find(|(k, _)| k.eq_ignore_ascii_case(name))
                            .map(|(_, v)| v.to_unescaped())
                    };
                    if let Some(realm) = param("realm") {
                        return self.token(&realm, param("service")).await.map(Some);
                    }
                } else if challenge.scheme.eq_ignore_ascii_case("basic") {
                    basic = true;
                }
            }
        }
        match &self.credentials {
            RegistryAuth::Basic(user, password) if basic => Ok(Some(basic_header(user, password)?)),
            _ => Ok(None),
        }
    }

    /// A Bearer token for pulling the repository, from `realm` (with the
    /// Basic credentials, when there are any), read within
    /// [`MAX_TOKEN_BYTES`].
    async fn token(&mut self, realm: &str, service: Option<String>) -> Result<HeaderValue> {
        let reference = self.reference;
        let registry = reference.registry();
        self.token_fetches += 1;
        if self.token_fetches > MAX_TOKEN_FETCHES {
            return Err(DistributionError::new(
                ErrorKind::Unauthorized,
                unauthorized(
                    registry,
                    &format!("it asked for a new token {MAX_TOKEN_FETCHES} times in one pull"),
                ),
            ));
        }
        let mut url = reqwest::Url::parse(realm).map_err(|e| {
            DistributionError::new(
                ErrorKind::Registry,
                format!("the registry {registry} names the token service {realm:?}, which is not a URL: {e}"),
            )
        })?;
        // The credentials go there: never in plain HTTP from an HTTPS
        // registry (the client would refuse it too, less clearly).
        if !self.base.starts_with("http://") && url.scheme() != "https" {
            return Err(DistributionError::new(
                ErrorKind::Registry,
                format!(
                    "the registry {registry} names the token service {realm}, which is not HTTPS; refusing to ask it"
                ),
            ));
        }
        {
            let mut query = url.query_pairs_mut();
            query.append_pair("scope", &format!("repository:{}:pull", reference.repository()));
            if let Some(service) = &service {
                query.append_pair("service", service);
            }
        }
        let mut request = self.http.get(url);
        if let RegistryAuth::Basic(user, password) = &self.credentials {
            request = request.header(AUTHORIZATION, basic_header(user, password)?);
        }
        let response = request.send().await.map_err(|e| request_error(reference, &e))?;
        let status = response.status();
        if status != StatusCode::OK {
            let body = read_error_body(reference, response).await;
            return Err(DistributionError::new(
                ErrorKind::Unauthorized,
                unauthorized(
                    registry,
                    &format!("its token service {realm} answered {status}{}", excerpt(&body)),
                ),
            ));
        }
        let body = read_body(reference, response, MAX_TOKEN_BYTES, |excess| {
            DistributionError::new(
                ErrorKind::TooLarge,
                format!(
                    "the token service {realm} of {registry} sent more than {MAX_TOKEN_BYTES} bytes ({excess}); a token is a few KiB, refusing it"
                ),
            )
        })
        .await?;
        #[derive(serde::Deserialize)]
        struct Token {
            token: Option<String>,
            access_token: Option<String>,
        }
        let token: Token = serde_json::from_slice(&body).map_err(|e| {
            DistributionError::new(
                ErrorKind::Registry,
                format!("the token service {realm} of {registry} answered something else than a token: {e}"),
            )
        })?;
        let token = token
            .token
            .or(token.access_token)
            .filter(|t| !t.is_empty())
            .ok_or_else(|| {
                DistributionError::new(
                    ErrorKind::Registry,
                    format!("the token service {realm} of {registry} answered without a token"),
                )
            })?;
        sensitive(&format!("Bearer {token}"))
    }
}

/// At most [`MAX_ERROR_BODY_BYTES`] of an error response's body, for its
/// message (nothing if the connection fails meanwhile).
pub(crate) async fn read_error_body(reference: &OciReference, response: Response) -> Vec<u8> {
    match read_bounded(reference, response, MAX_ERROR_BODY_BYTES).await {
        Ok(Body::Complete(bytes) | Body::Over { prefix: bytes, .. }) => bytes,
        Err(_) => Vec::new(),
    }
}

/// The typed error for `status` (not `200 OK`) and the start of its
/// `body`, answering a request for `what`: `401` and `403` (or an error
/// envelope saying `UNAUTHORIZED` or `DENIED`) are
/// [`ErrorKind::Unauthorized`], `404` (or an envelope saying a name,
/// manifest or blob is unknown) [`ErrorKind::NotFound`], anything else
/// [`ErrorKind::Registry`].
pub(crate) fn status_error(
    reference: &OciReference,
    status: StatusCode,
    body: &[u8],
    what: &str,
) -> DistributionError {
    let registry = reference.registry();
    let codes = error_codes(body);
    let has = |names: &[&str]| codes.iter().any(|c| names.contains(&c.as_str()));
    let said = excerpt(body);
    let unauthorized_ = || {
        DistributionError::new(
            ErrorKind::Unauthorized,
            unauthorized(registry, &format!("{status} for {what}{said}")),
        )
    };
    let not_found = || {
        DistributionError::new(
            ErrorKind::NotFound,
            format!("{reference}: {what} is not in the registry{said}"),
        )
    };
    match status {
        StatusCode::UNAUTHORIZED | StatusCode::FORBIDDEN => unauthorized_(),
        StatusCode::NOT_FOUND => not_found(),
        s if s.is_client_error()
            && has(&["MANIFEST_UNKNOWN", "NAME_UNKNOWN", "BLOB_UNKNOWN", "NOT_FOUND"]) =>
        {
            not_found()
        }
        s if s.is_client_error() && has(&["UNAUTHORIZED", "DENIED"]) => unauthorized_(),
        _ => DistributionError::new(
            ErrorKind::Registry,
            format!("{reference}: the registry {registry} answered {status} for {what}{said}"),
        ),
    }
}

/// The workspace's one crypto provider (ring), for both HTTP clients, the
/// pull's and oci-client's; a no-op when one is installed.
pub(crate) fn install_crypto_provider() {
    let _ = rustls::crypto::ring::default_provider().install_default();
}

/// A header value holding credentials (kept out of debug output).
fn sensitive(text: &str) -> Result<HeaderValue> {
    let mut value = HeaderValue::from_str(text).map_err(|_| {
        DistributionError::new(
            ErrorKind::Credentials,
            "the registry credentials or token hold characters an HTTP header cannot",
        )
    })?;
    value.set_sensitive(true);
    Ok(value)
}

fn basic_header(user: &str, password: &str) -> Result<HeaderValue> {
    use base64::Engine as _;
    let encoded = base64::engine::general_purpose::STANDARD.encode(format!("{user}:{password}"));
    sensitive(&format!("Basic {encoded}"))
}

/// The `code`s of an OCI error envelope (`{"errors": [{"code": …}]}`), if
/// the body is one.
fn error_codes(body: &[u8]) -> Vec<String> {
    #[derive(serde::Deserialize)]
    struct Envelope {
        errors: Vec<Entry>,
    }
    #[derive(serde::Deserialize)]
    struct Entry {
        code: String,
    }
    serde_json::from_slice::<Envelope>(body)
        .map(|e| e.errors.into_iter().map(|e| e.code).collect())
        .unwrap_or_default()
}

/// Whether a body is an OCI error envelope.
pub(crate) fn is_error_envelope(body: &[u8]) -> bool {
    !error_codes(body).is_empty()
}

/// `: TEXT` for the start of a registry's error body, printable characters
/// only (it ends up in a terminal), or nothing for an empty one.
fn excerpt(body: &[u8]) -> String {
    const MAX_CHARS: usize = 300;
    let text: String = String::from_utf8_lossy(body)
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    let text = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if text.is_empty() {
        return String::new();
    }
    let mut cut: String = text.chars().take(MAX_CHARS).collect();
    if cut.len() < text.len() {
        cut.push('…');
    }
    format!(": {cut}")
}

/// The typed error for a failed request or body read.
pub(crate) fn request_error(reference: &OciReference, error: &reqwest::Error) -> DistributionError {
    let registry = reference.registry();
    if error.is_connect() {
        let hint = if reference.is_loopback() {
            String::new()
        } else {
            " (a registry serving plain HTTP must be listed in `insecure`)".to_string()
        };
        return DistributionError::new(
            ErrorKind::Unreachable,
            format!(
                "the registry {registry} cannot be reached: {}{hint}",
                chain(error)
            ),
        );
    }
    if error.is_builder() {
        return DistributionError::new(
            ErrorKind::Registry,
            format!(
                "a request to the registry {registry} could not be made: {}",
                chain(error)
            ),
        );
    }
    if error.is_redirect() {
        return DistributionError::new(
            ErrorKind::Registry,
            format!(
                "the registry {registry} redirected badly (more than {MAX_REDIRECTS} redirects, or from HTTPS to plain HTTP): {}",
                chain(error)
            ),
        );
    }
    DistributionError::new(
        ErrorKind::Unreachable,
        format!("the registry {registry} failed: {}", chain(error)),
    )
}

/// The message of a refusal by the registry, with how to give credentials.
pub(crate) fn unauthorized(registry: &str, what: &str) -> String {
    format!(
        "the registry {registry} refused access ({what}); give credentials with `docker login {registry}` (the Docker config file, or DOCKER_CONFIG) or {} and {}",
        crate::auth::USERNAME_ENV,
        crate::auth::PASSWORD_ENV
    )
}

/// An error and its sources, `a: b: c`.
pub(crate) fn chain(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(e) = source {
        let s = e.to_string();
        if !text.contains(&s) {
            text.push_str(": ");
            text.push_str(&s);
        }
        source = e.source();
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn excerpts_are_short_and_printable() {
        assert_eq!(excerpt(b""), "");
        assert_eq!(excerpt(b"  not\x1b[31m found\n"), ": not [31m found");
        let long = excerpt(&[b'a'; 1000]);
        assert!(long.chars().count() < 310, "{long}");
        assert!(long.ends_with('…'));
    }

    /// A one-route registry on the loopback answering each request (one
    /// per connection) with `answer(request head)`: (status line and
    /// headers, body).
    async fn tiny_registry(answer: fn(&str) -> String) -> std::net::SocketAddr {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        tokio::spawn(async move {
            while let Ok((mut stream, _)) = listener.accept().await {
                tokio::spawn(async move {
                    let mut head = Vec::new();
                    let mut buf = [0u8; 1024];
                    while !head.windows(4).any(|w| w == b"\r\n\r\n") {
                        match stream.read(&mut buf).await {
                            Ok(0) | Err(_) => return,
                            Ok(n) => head.extend_from_slice(&buf[..n]),
                        }
                    }
                    let reply = answer(&String::from_utf8_lossy(&head));
                    let _ = stream.write_all(reply.as_bytes()).await;
                    let _ = stream.shutdown().await;
                });
            }
        });
        addr
    }

    fn reply(status: &str, headers: &str, body: &str) -> String {
        format!(
            "HTTP/1.1 {status}\r\nConnection: close\r\nContent-Length: {}\r\n{headers}\r\n{body}",
            body.len()
        )
    }

    // "ada:s3cret" in base64.
    const ADA: &str = "authorization: Basic YWRhOnMzY3JldA==";

    async fn get_text(addr: std::net::SocketAddr, credentials: RegistryAuth) -> Result<String> {
        let reference = OciReference::parse(&format!("oci://{addr}/r:v1")).unwrap();
        let mut session = Session::new(&reference, true, credentials).unwrap();
        let url = session.url("/v2/r/manifests/v1");
        let response = session.get_ok(&url, None, "the manifest").await?;
        let body = read_body(&reference, response, 100, |_| unreachable!()).await?;
        Ok(String::from_utf8(body).unwrap())
    }

    fn ada() -> RegistryAuth {
        RegistryAuth::Basic("ada".into(), "s3cret".into())
    }

    #[tokio::test]
    async fn basic_credentials_answer_a_basic_challenge() {
        let addr = tiny_registry(|head| {
            if head.to_ascii_lowercase().contains(&ADA.to_ascii_lowercase()) {
                reply("200 OK", "", "manifest")
            } else {
                reply("401 Unauthorized", "WWW-Authenticate: Basic realm=\"r\"\r\n", "")
            }
        })
        .await;
        assert_eq!(get_text(addr, ada()).await.unwrap(), "manifest");
        let e = get_text(addr, RegistryAuth::Anonymous).await.unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Unauthorized, "{e}");
        assert!(e.with_causes().contains("docker login"), "{e}");
    }

    #[tokio::test]
    async fn a_bearer_token_is_fetched_with_the_basic_credentials() {
        let addr = tiny_registry(|head| {
            let head = head.to_ascii_lowercase();
            if head.starts_with("get /token?") {
                if head.contains(&ADA.to_ascii_lowercase()) && head.contains("scope=repository%3ar%3apull") {
                    reply("200 OK", "", r#"{"access_token":"t0k"}"#)
                } else {
                    reply("401 Unauthorized", "", "bad credentials")
                }
            } else if head.contains("authorization: bearer t0k") {
                reply("200 OK", "", "manifest")
            } else {
                // The realm on the same host: its address is in the request.
                let host = head
                    .lines()
                    .find_map(|l| l.strip_prefix("host: "))
                    .unwrap_or_default()
                    .trim()
                    .to_string();
                reply(
                    "401 Unauthorized",
                    &format!("WWW-Authenticate: Bearer realm=\"http://{host}/token\",service=\"tiny\"\r\n"),
                    "",
                )
            }
        })
        .await;
        assert_eq!(get_text(addr, ada()).await.unwrap(), "manifest");
        let e = get_text(addr, RegistryAuth::Anonymous).await.unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Unauthorized, "{e}");
        assert!(e.with_causes().contains("bad credentials"), "{e}");
    }

    #[tokio::test]
    async fn an_https_registry_never_sends_credentials_to_a_plain_http_token_service() {
        let reference = OciReference::parse("oci://registry.example.com/r:v1").unwrap();
        let mut session = Session::new(&reference, false, ada()).unwrap();
        let e = session.token("http://127.0.0.1:9/token", None).await.unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Registry, "{e}");
        assert!(e.with_causes().contains("not HTTPS"), "{e}");
    }

    #[test]
    fn error_envelopes_are_recognised() {
        assert!(is_error_envelope(
            br#"{"errors":[{"code":"MANIFEST_UNKNOWN","message":"x"}]}"#
        ));
        assert!(!is_error_envelope(b"404 page not found"));
        assert_eq!(error_codes(br#"{"errors":[{"code":"DENIED"}]}"#), ["DENIED"]);
    }
}
