//! # Signing in to bridged servers with OAuth
//!
//! An HTTP server bridged with `oauth = { ... }` is an OAuth 2.1 protected
//! resource, as MCP's authorization specification describes: its
//! `WWW-Authenticate` challenge and protected-resource metadata name its
//! authorization server, whose metadata the bridge reads; the client is
//! pre-registered (`client_id`), named by a Client ID Metadata Document
//! (`client_metadata_url`) or registered dynamically; codes are exchanged
//! with PKCE (S256) and the `resource` indicator, the authorization
//! response's `iss` checked (RFC 9207). rmcp's authorization manager does
//! the protocol; this module gives it toolhost's pieces:
//!
//! - [`login`]: the authorization-code flow for a person, run once by
//!   `toolhost mcp login NAME`: it prints the authorization URL (and opens
//!   it with `$BROWSER`), waits for the redirect on a loopback listener
//!   that reads one bounded request at a time, and keeps what it got;
//! - [`authorized_client`]: what the bridge connects with: the kept tokens,
//!   refreshed when they expire (a server that rejects one gets one
//!   refresh and a retry), or, for the `client_credentials` grant, tokens
//!   the bridge gets itself with the client's secret;
//! - [`FileCredentials`]: the client's registration and tokens in one
//!   file, written whole (a temporary file renamed over it) and readable by
//!   its owner only.
//!
//! A sign-in is not for ever: the authorization server may move (the
//! server's metadata names another), or a tool may need a scope the
//! tokens lack (a 403 `insufficient_scope` challenge). No person is there
//! when the bridge meets that, so it keeps the server's challenge beside
//! the tokens ([`SignedInClient`]) and says, in the server's error and in
//! the failed call's, to run `toolhost mcp login NAME` again; that sign-in
//! starts from the kept challenge: its authorization server, and the
//! scopes already granted together with those the challenge asks for.
//!
//! Discovery is fail-closed as rmcp does it: metadata that names a
//! loopback or private address is followed only when the server's own URL
//! is one, link-local addresses never, and every response is read within a
//! size and time bound.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use std::collections::HashMap;

use futures_util::stream::BoxStream;
use http::{HeaderName, HeaderValue};
use rmcp::model::ClientJsonRpcMessage;
use rmcp::transport::AuthClient;
use rmcp::transport::auth::{
    AuthError, AuthorizationManager, AuthorizationRequest, ClientCredentialsConfig, CredentialStore,
    OAuthState, StoredCredentials, WWWAuthenticateParams,
};
use rmcp::transport::streamable_http_client::{
    SseError, StreamableHttpClient, StreamableHttpError, StreamableHttpPostResponse,
    StreamableHttpResponseLimits,
};
use sse_stream::Sse;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

use super::config::{McpOAuth, McpServerConfig, McpTransport, OAuthGrant};
use toolhost_core::error::{Error, ErrorCode, Result};

/// The largest credentials file read back, in bytes.
const MAX_CREDENTIALS: u64 = 1 << 20;

/// How long `login` waits for the authorization server's redirect.
pub const LOGIN_TIMEOUT: Duration = Duration::from_secs(600);

/// The most a request to the login listener may send before its request
/// line and headers end, and the time it has to send them.
const MAX_CALLBACK_HEAD: usize = 16 * 1024;
const CALLBACK_HEAD_TIMEOUT: Duration = Duration::from_secs(10);

/// The client registration and tokens of one server, kept in a file.
///
/// rmcp loads them before every request to the server (and the
/// `client_credentials` grant's check of the token's end once more): the
/// file is read and parsed only when it has changed since it was last read
/// or written here. Another process's `toolhost mcp login` replaces it
/// (every write here is a new file renamed over the old), which a look at
/// the file's identity, size and time sees.
#[derive(Debug, Clone)]
pub struct FileCredentials {
    path: Arc<PathBuf>,
    last: Arc<std::sync::Mutex<Option<(FileStamp, StoredCredentials)>>>,
}

/// What tells one version of a file from another without reading it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct FileStamp {
    device: u64,
    inode: u64,
    len: u64,
    modified: Option<std::time::SystemTime>,
}

impl FileStamp {
    fn of(path: &Path) -> std::io::Result<FileStamp> {
        let meta = std::fs::metadata(path)?;
        #[cfg(unix)]
        let (device, inode) = {
            use std::os::unix::fs::MetadataExt;
            (meta.dev(), meta.ino())
        };
        #[cfg(not(unix))]
        let (device, inode) = (0, 0);
        Ok(FileStamp {
            device,
            inode,
            len: meta.len(),
            modified: meta.modified().ok(),
        })
    }
}

impl FileCredentials {
    /// The credentials kept at `path`.
    pub fn new(path: impl Into<PathBuf>) -> Self {
        FileCredentials {
            path: Arc::new(path.into()),
            last: Arc::default(),
        }
    }

    /// The file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    fn read(path: &Path) -> std::result::Result<Option<StoredCredentials>, String> {
        // The one bounded reader of files: a named pipe or a device named
        // as the token file is refused, never waited on.
        let bytes = match toolhost_core::bounded::read_file(path, MAX_CREDENTIALS) {
            Ok(bytes) => bytes,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(e.to_string()),
        };
        serde_json::from_slice(&bytes)
            .map(Some)
            .map_err(|e| format!("it is not credentials toolhost wrote: {e}"))
    }

    fn write(path: &Path, credentials: &StoredCredentials) -> std::io::Result<()> {
        let dir = path
            .parent()
            .filter(|d| !d.as_os_str().is_empty())
            .unwrap_or(Path::new("."));
        std::fs::create_dir_all(dir)?;
        let bytes = serde_json::to_vec_pretty(credentials).map_err(std::io::Error::other)?;
        let mut temp = tempfile::NamedTempFile::new_in(dir)?;
        // NamedTempFile is made readable by its owner only (0600).
        temp.write_all(&bytes)?;
        temp.as_file().sync_all()?;
        temp.persist(path).map_err(|e| e.error)?;
        Ok(())
    }

    fn failed(&self, what: &str, why: impl std::fmt::Display) -> AuthError {
        AuthError::CredentialStoreError(format!("{what} {}: {why}", self.path.display()))
    }
}

#[async_trait::async_trait]
impl CredentialStore for FileCredentials {
    async fn load(&self) -> std::result::Result<Option<StoredCredentials>, AuthError> {
        let (path, last) = (Arc::clone(&self.path), Arc::clone(&self.last));
        tokio::task::spawn_blocking(move || {
            let mut last = last.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
            let stamp = match FileStamp::of(&path) {
                Ok(stamp) => stamp,
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                    *last = None;
                    return Ok(None);
                }
                Err(e) => return Err(e.to_string()),
            };
            if let Some((kept, credentials)) = last.as_ref()
                && *kept == stamp
            {
                return Ok(Some(credentials.clone()));
            }
            // Stamped before it is read: a file replaced in between is read
            // again next time.
            let credentials = FileCredentials::read(&path)?;
            *last = credentials.clone().map(|credentials| (stamp, credentials));
            Ok(credentials)
        })
        .await
        .map_err(|e| self.failed("cannot read", e))?
        .map_err(|e| self.failed("cannot read", e))
    }

    async fn save(&self, credentials: StoredCredentials) -> std::result::Result<(), AuthError> {
        let (path, last) = (Arc::clone(&self.path), Arc::clone(&self.last));
        tokio::task::spawn_blocking(move || {
            let mut last = last.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
            FileCredentials::write(&path, &credentials)?;
            *last = FileStamp::of(&path).ok().map(|stamp| (stamp, credentials));
            Ok::<_, std::io::Error>(())
        })
        .await
        .map_err(|e| self.failed("cannot write", e))?
        .map_err(|e| self.failed("cannot write", e))
    }

    async fn clear(&self) -> std::result::Result<(), AuthError> {
        *self
            .last
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = None;
        match std::fs::remove_file(&*self.path) {
            Ok(()) => Ok(()),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
            Err(e) => Err(self.failed("cannot remove", e)),
        }
    }
}

/// The server's URL, OAuth settings and credentials file.
fn oauth_of(config: &McpServerConfig) -> Result<(&str, &McpOAuth, FileCredentials)> {
    let McpTransport::Http {
        url,
        oauth: Some(oauth),
        ..
    } = &config.transport
    else {
        return Err(Error::new(
            ErrorCode::Config,
            format!(
                "[[mcp.servers]] {:?} has no `oauth` table: it does not sign in with OAuth",
                config.name
            ),
        ));
    };
    let file = config.token_file().ok_or_else(|| {
        Error::new(
            ErrorCode::Config,
            format!(
                "[[mcp.servers]] {:?}: no folder for its OAuth tokens (set oauth.token_file, TOOLHOST_STATE_DIR or HOME)",
                config.name
            ),
        )
    })?;
    Ok((url, oauth, FileCredentials::new(file)))
}

fn auth_failed(config: &McpServerConfig, what: &str, e: AuthError) -> Error {
    Error::new(
        ErrorCode::Unavailable,
        format!("MCP server {:?}: {what}: {e}", config.name),
    )
}

/// An rmcp authorization manager for `url` that keeps its credentials in
/// `store`.
async fn manager(
    config: &McpServerConfig,
    url: &str,
    store: FileCredentials,
) -> Result<AuthorizationManager> {
    super::client::ensure_crypto_provider();
    let mut manager = AuthorizationManager::new(url)
        .await
        .map_err(|e| auth_failed(config, "cannot start OAuth", e))?;
    manager.set_credential_store(store);
    Ok(manager)
}

/// The HTTP client the bridge connects to `config`'s server with: its
/// kept tokens (refreshed as they expire), or for the
/// `client_credentials` grant, tokens got with the client's secret when
/// none are kept or they can no longer be refreshed.
///
/// # Errors
///
/// `config` (no `oauth`, an unset secret variable); `unavailable` when no
/// one has signed in (`toolhost mcp login NAME`), the kept tokens were
/// refused, or the authorization server failed.
pub async fn authorized_client(config: &McpServerConfig) -> Result<SignedInClient> {
    let (url, oauth, store) = oauth_of(config)?;
    let path = store.path().to_path_buf();
    let mut manager = manager(config, url, store.clone()).await?;
    let signed_in = manager
        .initialize_from_store()
        .await
        .map_err(|e| auth_failed(config, "cannot read its OAuth tokens", e))?;
    let usable = signed_in
        && match manager.get_access_token().await {
            Ok(_) => true,
            Err(AuthError::AuthorizationRequired) => false,
            Err(e) => return Err(auth_failed(config, "cannot refresh its OAuth token", e)),
        };
    let credentials = client_credentials(oauth, url)?;
    if !usable {
        let Some(credentials) = &credentials else {
            return Err(Error::new(
                ErrorCode::Unavailable,
                format!(
                    "MCP server {:?} wants OAuth and no one has signed in (or the sign-in has expired): run `toolhost mcp login {}` (tokens are kept in {})",
                    config.name,
                    config.name,
                    path.display()
                ),
            ));
        };
        let mut state = OAuthState::Unauthorized(manager);
        state
            .authenticate_client_credentials(credentials.clone())
            .await
            .map_err(|e| auth_failed(config, "the client_credentials grant failed", e))?;
        manager = state
            .into_authorization_manager()
            .ok_or_else(|| Error::internal("the client_credentials grant ended in no authorization"))?;
    }
    Ok(SignedInClient {
        inner: AuthClient::new(reqwest::Client::default(), manager),
        challenge_file: Arc::new(challenge_file(&path)),
        credentials: credentials.map(Arc::new),
    })
}

/// The credentials the bridge signs in with under the `client_credentials`
/// grant; `None` under another grant.
fn client_credentials(oauth: &McpOAuth, url: &str) -> Result<Option<ClientCredentialsConfig>> {
    if oauth.grant != OAuthGrant::ClientCredentials {
        return Ok(None);
    }
    Ok(Some(ClientCredentialsConfig::ClientSecret {
        client_id: oauth.client_id.clone().unwrap_or_default(),
        client_secret: oauth.client_secret()?.unwrap_or_default(),
        scopes: oauth.scopes.clone(),
        // The resource indicator (RFC 8707): the server's URL, its
        // canonical identifier in MCP.
        resource: Some(url.to_string()),
    }))
}

/// The file the server's last refusal of the bridge's tokens is kept in,
/// beside the tokens.
fn challenge_file(token_file: &Path) -> PathBuf {
    let mut name = token_file.as_os_str().to_owned();
    name.push(".challenge");
    PathBuf::from(name)
}

/// The longest challenge kept, in bytes (a header; a hostile server's
/// longer one is cut).
const MAX_CHALLENGE: usize = 8 * 1024;

/// If server `name`, whose tokens are kept in `token_file`, refused the
/// bridge's tokens since `since` (see [`SignedInClient`]), what to tell
/// the operator.
pub(crate) fn refused(name: &str, token_file: &Path, since: std::time::SystemTime) -> Option<String> {
    let (at, challenge) = read_challenge(&challenge_file(token_file))?;
    if at < since {
        return None;
    }
    let scope = challenge_scope(&challenge)
        .map(|s| format!(" (it asks for scope {s:?})"))
        .unwrap_or_default();
    Some(format!(
        "the server refused the bridge's sign-in{scope}: run `toolhost mcp login {name}` again"
    ))
}

/// The scope a `WWW-Authenticate` challenge asks for, if it names one.
fn challenge_scope(challenge: &str) -> Option<String> {
    // The base only resolves a relative `resource_metadata`, not read here.
    let base = url::Url::parse("http://localhost/").ok()?;
    WWWAuthenticateParams::parse(challenge, &base).scope
}

/// A kept refusal: when it came (the clock of the process that kept it,
/// not the file's coarser one) and the challenge.
#[derive(serde::Serialize, serde::Deserialize)]
struct Refusal {
    at_ms: u64,
    challenge: String,
}

fn read_challenge(file: &Path) -> Option<(std::time::SystemTime, String)> {
    let text = toolhost_core::bounded::read_file(file, 2 * MAX_CHALLENGE as u64).ok()?;
    let kept: Refusal = serde_json::from_slice(&text).ok()?;
    Some((
        std::time::UNIX_EPOCH + Duration::from_millis(kept.at_ms),
        kept.challenge,
    ))
}

fn keep_challenge(file: &Path, challenge: &str) -> std::io::Result<()> {
    let mut challenge = challenge.to_string();
    toolhost_core::text::truncate_utf8(&mut challenge, MAX_CHALLENGE);
    let at_ms = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64);
    let refusal = serde_json::to_vec(&Refusal { at_ms, challenge }).map_err(std::io::Error::other)?;
    std::fs::write(file, refusal)
}

/// The bridge's HTTP client for a server with `oauth`: rmcp's
/// [`AuthClient`] (the kept tokens, refreshed, one refresh and retry when
/// the server rejects one), which keeps the server's challenge when it
/// still refuses (401, or 403 for a scope the tokens lack) for the next
/// `toolhost mcp login`. Every method forwards to rmcp's reqwest client,
/// its response bounds included.
#[derive(Clone)]
pub struct SignedInClient {
    inner: AuthClient<reqwest::Client>,
    challenge_file: Arc<PathBuf>,
    /// The client's credentials, for the `client_credentials` grant: a
    /// token about to expire is replaced before a request goes out.
    credentials: Option<Arc<ClientCredentialsConfig>>,
}

impl std::fmt::Debug for SignedInClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SignedInClient")
            .field("challenge_file", &self.challenge_file)
            .finish_non_exhaustive()
    }
}

impl SignedInClient {
    /// Under the `client_credentials` grant, gets a new token when the kept
    /// one is about to expire (rmcp says so within 30 s of its end, having
    /// no refresh token to use): the request then goes out with a token
    /// the server takes, rather than being refused first.
    async fn renew(&self) {
        let Some(credentials) = &self.credentials else {
            return;
        };
        let manager = self.inner.auth_manager.lock().await;
        if let Err(AuthError::AuthorizationRequired) = manager.get_access_token().await
            && let Err(e) = manager.exchange_client_credentials(credentials).await
        {
            tracing::warn!("renewing the client_credentials token failed: {e}");
        }
    }

    fn keep<T>(
        &self,
        result: std::result::Result<T, StreamableHttpError<reqwest::Error>>,
    ) -> std::result::Result<T, StreamableHttpError<reqwest::Error>> {
        if let Err(e) = &result
            && let Some(challenge) = e.auth_challenge()
            && let Err(e) = keep_challenge(&self.challenge_file, challenge)
        {
            tracing::warn!(
                "cannot keep the server's challenge in {}: {e}",
                self.challenge_file.display()
            );
        }
        result
    }
}

impl StreamableHttpClient for SignedInClient {
    type Error = reqwest::Error;

    async fn post_message(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> std::result::Result<StreamableHttpPostResponse, StreamableHttpError<Self::Error>> {
        self.renew().await;
        let answer = self
            .inner
            .post_message(uri, message, session_id, auth_header, custom_headers)
            .await;
        self.keep(answer)
    }

    async fn post_message_with_max_sse_event_size(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        max_sse_event_size: usize,
    ) -> std::result::Result<StreamableHttpPostResponse, StreamableHttpError<Self::Error>> {
        self.renew().await;
        let answer = self
            .inner
            .post_message_with_max_sse_event_size(
                uri,
                message,
                session_id,
                auth_header,
                custom_headers,
                max_sse_event_size,
            )
            .await;
        self.keep(answer)
    }

    async fn post_message_with_response_limits(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        limits: StreamableHttpResponseLimits,
    ) -> std::result::Result<StreamableHttpPostResponse, StreamableHttpError<Self::Error>> {
        self.renew().await;
        let answer = self
            .inner
            .post_message_with_response_limits(uri, message, session_id, auth_header, custom_headers, limits)
            .await;
        self.keep(answer)
    }

    async fn delete_session(
        &self,
        uri: Arc<str>,
        session_id: Arc<str>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> std::result::Result<(), StreamableHttpError<Self::Error>> {
        self.renew().await;
        let answer = self
            .inner
            .delete_session(uri, session_id, auth_header, custom_headers)
            .await;
        self.keep(answer)
    }

    async fn get_stream(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> std::result::Result<
        BoxStream<'static, std::result::Result<Sse, SseError>>,
        StreamableHttpError<Self::Error>,
    > {
        self.renew().await;
        let answer = self
            .inner
            .get_stream(uri, session_id, last_event_id, auth_header, custom_headers)
            .await;
        self.keep(answer)
    }

    async fn get_stream_with_max_sse_event_size(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        max_sse_event_size: usize,
    ) -> std::result::Result<
        BoxStream<'static, std::result::Result<Sse, SseError>>,
        StreamableHttpError<Self::Error>,
    > {
        self.renew().await;
        let answer = self
            .inner
            .get_stream_with_max_sse_event_size(
                uri,
                session_id,
                last_event_id,
                auth_header,
                custom_headers,
                max_sse_event_size,
            )
            .await;
        self.keep(answer)
    }
}

/// What a sign-in did.
#[derive(Debug, Clone)]
pub struct LoggedIn {
    /// Where the tokens are kept.
    pub token_file: PathBuf,
    /// The scopes the authorization server granted.
    pub scopes: Vec<String>,
}

/// Signs in to `config`'s server: the authorization-code flow with PKCE,
/// the authorization URL handed to `open` (which shows it to a person, or
/// opens a browser) and the redirect awaited on a loopback listener for at
/// most [`LOGIN_TIMEOUT`]; the tokens are kept in the server's
/// [`token_file`](McpServerConfig::token_file) for the bridge.
///
/// # Errors
///
/// `config` for a server without `oauth` or with the
/// `client_credentials` grant (which needs no sign-in); `unavailable` when
/// discovery, registration or the token exchange fails, naming why;
/// `timeout` when no redirect came.
///
/// With `paste`, the redirect may also come as a line on standard input:
/// the address the browser was sent to, pasted by the person signing in
/// when the browser runs on another machine (over SSH) and cannot reach
/// this one's loopback port. Lines that are not that address are skipped
/// with a warning; rmcp checks the pasted `state` as it does the
/// listener's.
pub async fn login(config: &McpServerConfig, open: impl FnOnce(&str), paste: bool) -> Result<LoggedIn> {
    let (url, oauth, store) = oauth_of(config)?;
    if oauth.grant == OAuthGrant::ClientCredentials {
        return Err(Error::new(
            ErrorCode::Config,
            format!(
                "[[mcp.servers]] {:?} uses the client_credentials grant: the bridge signs in by itself, no login is needed",
                config.name
            ),
        ));
    }
    let token_file = store.path().to_path_buf();
    let kept = challenge_file(&token_file);
    // A refusal the bridge kept says where to sign in and what for;
    // otherwise the server is asked without a token.
    let refused = read_challenge(&kept).map(|(_, challenge)| challenge);
    let mut scopes = oauth.scopes.clone();
    if let Some(refusal) = &refused {
        // The scopes granted before stay asked for, beside the new ones.
        if let Ok(Some(before)) = store.load().await {
            scopes.extend(before.granted_scopes);
        }
        if let Some(wanted) = challenge_scope(refusal) {
            scopes.extend(wanted.split_whitespace().map(str::to_string));
        }
        let mut seen = std::collections::HashSet::new();
        scopes.retain(|s| seen.insert(s.clone()));
    }
    let challenge = match refused {
        Some(refusal) => Some(refusal),
        None => challenge(url).await,
    };
    let listener = TcpListener::bind(("127.0.0.1", oauth.redirect_port.unwrap_or(0)))
        .await
        .map_err(|e| {
            Error::new(
                ErrorCode::Unavailable,
                format!("cannot listen for the sign-in's redirect: {e}"),
            )
        })?;
    let port = listener
        .local_addr()
        .map_err(|e| Error::internal(format!("the listener has no address: {e}")))?
        .port();
    let redirect_uri = format!("http://127.0.0.1:{port}/callback");

    let mut state = OAuthState::Unauthorized(manager(config, url, store).await?);
    let mut request = AuthorizationRequest::new(&redirect_uri)
        .with_client_name("toolhost")
        .with_application_type("native");
    if !scopes.is_empty() {
        request = request.with_scopes(scopes);
    }
    if let Some(id) = &oauth.client_id {
        request = request.with_preregistered_client(id);
    }
    if let Some(secret) = oauth.client_secret()? {
        request = request.with_client_secret(secret);
    }
    if let Some(document) = &oauth.client_metadata_url {
        request = request.with_client_metadata_url(document);
    }
    if let Some(challenge) = challenge {
        request = request.with_challenge(challenge);
    }
    state
        .start_authorization(request)
        .await
        .map_err(|e| auth_failed(config, "cannot start signing in", e))?;
    let authorization_url = state
        .get_authorization_url()
        .await
        .map_err(|e| auth_failed(config, "no authorization URL", e))?;
    open(&authorization_url);
    let came_back = async {
        if !paste {
            return redirect(&listener, port).await;
        }
        tokio::select! {
            url = redirect(&listener, port) => url,
            url = pasted(tokio::io::stdin(), port) => url,
        }
    };
    let callback = tokio::time::timeout(LOGIN_TIMEOUT, came_back)
        .await
        .map_err(|_| {
            Error::new(
                ErrorCode::Timeout,
                format!("no sign-in came back within {} s", LOGIN_TIMEOUT.as_secs()),
            )
        })?;
    state
        .handle_callback_url(&callback)
        .await
        .map_err(|e| auth_failed(config, "signing in failed", e))?;
    let manager = state
        .into_authorization_manager()
        .ok_or_else(|| Error::internal("signing in ended in no authorization"))?;
    let scopes = manager.get_current_scopes().await;
    // The refusal is answered.
    let _ = std::fs::remove_file(&kept);
    Ok(LoggedIn { token_file, scopes })
}

/// The server's `WWW-Authenticate` challenge to the bridge's first
/// request made without a token, which names its protected-resource
/// metadata (and may name the scopes it wants): `server/discover` as MCP
/// 2026-07-28 opens, then `initialize` for a server that answered that
/// without a challenge; `None` when neither got one (discovery then tries
/// the metadata's well-known locations).
async fn challenge(url: &str) -> Option<String> {
    super::client::ensure_crypto_provider();
    let client = reqwest::Client::builder()
        .timeout(Duration::from_secs(30))
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .ok()?;
    let client_info = serde_json::json!({"name": "toolhost", "version": env!("CARGO_PKG_VERSION")});
    let discover = serde_json::json!({
        "jsonrpc": "2.0", "id": 0, "method": "server/discover",
        "params": {"_meta": {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientInfo": client_info,
            "io.modelcontextprotocol/clientCapabilities": {},
        }}
    });
    let initialize = serde_json::json!({
        "jsonrpc": "2.0", "id": 0, "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": client_info}
    });
    for (probe, revision) in [(discover, "2026-07-28"), (initialize, "2025-11-25")] {
        let Ok(answer) = client
            .post(url)
            .header("Accept", "application/json, text/event-stream")
            .header("MCP-Protocol-Version", revision)
            .json(&probe)
            .send()
            .await
        else {
            continue;
        };
        // Only the head is read: the body is dropped unread.
        if let Some(challenge) = answer
            .headers()
            .get(http::header::WWW_AUTHENTICATE)
            .and_then(|v| v.to_str().ok())
        {
            return Some(challenge.to_string());
        }
    }
    None
}

/// Waits on `listener` for the authorization server's redirect to
/// `/callback` and answers it: the whole redirect URL. Every connection is
/// read within [`MAX_CALLBACK_HEAD`] bytes and [`CALLBACK_HEAD_TIMEOUT`];
/// other paths (a browser's `favicon.ico`) are answered 404 and waited
/// past.
async fn redirect(listener: &TcpListener, port: u16) -> String {
    loop {
        let mut stream = match listener.accept().await {
            Ok((stream, _)) => stream,
            Err(e) => {
                // Out of descriptors, say: wait rather than spin.
                tracing::warn!("the sign-in's listener could not accept a connection: {e}");
                tokio::time::sleep(Duration::from_millis(100)).await;
                continue;
            }
        };
        let head = tokio::time::timeout(CALLBACK_HEAD_TIMEOUT, read_head(&mut stream)).await;
        let target = head
            .ok()
            .flatten()
            .and_then(|head| request_target(&head).map(str::to_string));
        match target.and_then(|target| callback_url(port, &target)) {
            Some(url) => {
                let page = "Signed in: toolhost has the authorization. You can close this window.\n";
                let _ = stream
                    .write_all(
                        format!(
                            "HTTP/1.1 200 OK\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{page}",
                            page.len()
                        )
                        .as_bytes(),
                    )
                    .await;
                let _ = stream.shutdown().await;
                return url;
            }
            _ => {
                let _ = stream
                    .write_all(b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
                    .await;
            }
        }
    }
}

/// The first line of `input` that is the sign-in's redirect address
/// (`http://127.0.0.1:PORT/callback?...`, or `localhost`), as the listener
/// would have seen it; lines are read by the one bounded reader of
/// line-framed peers ([`LineReader`](crate::framing::LineReader)), within
/// [`MAX_CALLBACK_HEAD`] bytes (a longer one is skipped). At the input's
/// end it waits for ever (the listener, or the login's timeout, ends the
/// wait).
async fn pasted(input: impl tokio::io::AsyncRead + Unpin, port: u16) -> String {
    use crate::framing::{LineReader, RawLine};
    let mut lines = LineReader::new(tokio::io::BufReader::new(input), MAX_CALLBACK_HEAD);
    loop {
        let line = lines
            .next(|line| match line {
                RawLine::Whole(bytes) => Some(String::from_utf8_lossy(bytes).trim().to_string()),
                RawLine::Cut { .. } => None,
            })
            .await;
        let text = match line {
            Ok(Some(Some(text))) => text,
            Ok(Some(None)) => continue,
            Ok(None) | Err(_) => return std::future::pending().await,
        };
        match pasted_callback(&text, port) {
            Some(url) => return url,
            None if text.is_empty() => {}
            None => tracing::warn!(
                "that is not the address the sign-in was sent to (http://127.0.0.1:{port}/callback?...): paste it whole"
            ),
        }
    }
}

/// `line` as the redirect URL the listener would have got, when it is
/// one to this login's loopback port and `/callback` with a query.
fn pasted_callback(line: &str, port: u16) -> Option<String> {
    let rest = line.strip_prefix("http://")?;
    let (authority, target) = rest.split_at(rest.find('/')?);
    let (host, given) = authority.rsplit_once(':')?;
    if !matches!(host, "127.0.0.1" | "localhost") || given.parse::<u16>().ok()? != port {
        return None;
    }
    let query = target.strip_prefix("/callback?")?;
    if query.is_empty() || query.contains(char::is_whitespace) {
        return None;
    }
    callback_url(port, target)
}

/// The redirect URL the sign-in came back with, from the target it was
/// sent to on this login's loopback `port`; `None` unless it is
/// `/callback` with a query.
fn callback_url(port: u16, target: &str) -> Option<String> {
    target
        .starts_with("/callback?")
        .then(|| format!("http://127.0.0.1:{port}{target}"))
}

/// A request's head (request line and headers), or `None` when it ends,
/// fails or passes [`MAX_CALLBACK_HEAD`] before its blank line.
async fn read_head(stream: &mut tokio::net::TcpStream) -> Option<String> {
    let mut head = Vec::with_capacity(1024);
    let mut chunk = [0u8; 1024];
    while !head.windows(4).any(|w| w == b"\r\n\r\n") {
        let n = stream.read(&mut chunk).await.ok()?;
        if n == 0 || head.len() + n > MAX_CALLBACK_HEAD {
            return None;
        }
        head.extend_from_slice(&chunk[..n]);
    }
    String::from_utf8(head).ok()
}

/// The target of a `GET` request line.
fn request_target(head: &str) -> Option<&str> {
    let line = head.lines().next()?;
    let mut parts = line.split(' ');
    (parts.next()? == "GET").then_some(())?;
    parts.next()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_this_logins_callback_address_is_taken_when_pasted() {
        let port = 43111;
        assert_eq!(
            pasted_callback("http://127.0.0.1:43111/callback?code=a&state=b", port).as_deref(),
            Some("http://127.0.0.1:43111/callback?code=a&state=b")
        );
        assert_eq!(
            pasted_callback("http://localhost:43111/callback?code=a&state=b", port).as_deref(),
            Some("http://127.0.0.1:43111/callback?code=a&state=b")
        );
        for other in [
            "http://127.0.0.1:43112/callback?code=a&state=b",
            "https://127.0.0.1:43111/callback?code=a",
            "http://evil.example:43111/callback?code=a",
            "http://127.0.0.1:43111/favicon.ico",
            "http://127.0.0.1:43111/callback?",
            "http://127.0.0.1:43111/callback?code=a b",
            "code=a&state=b",
        ] {
            assert_eq!(pasted_callback(other, port), None, "{other}");
        }
    }

    #[tokio::test]
    async fn a_pasted_line_is_read_past_others_and_within_its_bound() {
        let long = "x".repeat(MAX_CALLBACK_HEAD * 2);
        let input = format!("\nnot it\n{long}\nhttp://127.0.0.1:9/callback?code=c&state=s\n");
        let url = pasted(input.as_bytes(), 9).await;
        assert_eq!(url, "http://127.0.0.1:9/callback?code=c&state=s");
    }

    #[test]
    fn only_a_get_names_its_target() {
        assert_eq!(
            request_target("GET /callback?code=a&state=b HTTP/1.1\r\nHost: x\r\n\r\n"),
            Some("/callback?code=a&state=b")
        );
        assert_eq!(request_target("POST /callback HTTP/1.1\r\n\r\n"), None);
    }

    #[tokio::test]
    async fn credentials_are_kept_whole_and_for_their_owner() {
        let dir = tempfile::tempdir().unwrap();
        let store = FileCredentials::new(dir.path().join("deep/er/s.json"));
        assert!(store.load().await.unwrap().is_none());
        store
            .save(StoredCredentials::new(
                "client-1".into(),
                None,
                vec!["read".into()],
                Some(7),
            ))
            .await
            .unwrap();
        let back = store.load().await.unwrap().unwrap();
        assert_eq!(back.client_id, "client-1");
        assert_eq!(back.granted_scopes, ["read"]);
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(store.path()).unwrap().permissions().mode();
            assert_eq!(mode & 0o077, 0, "{mode:o}");
        }
        std::fs::write(store.path(), "not json").unwrap();
        let err = store.load().await.unwrap_err().to_string();
        assert!(err.contains("not credentials toolhost wrote"), "{err}");
        store.clear().await.unwrap();
        assert!(store.load().await.unwrap().is_none());
        // A named pipe named as the token file is refused, not waited on.
        #[cfg(unix)]
        {
            let fifo = dir.path().join("fifo.json");
            let made = std::process::Command::new("mkfifo").arg(&fifo).status().unwrap();
            assert!(made.success());
            let err = FileCredentials::new(&fifo).load().await.unwrap_err().to_string();
            assert!(err.contains("cannot read"), "{err}");
        }
    }

    #[tokio::test]
    async fn credentials_are_read_again_only_when_their_file_has_changed() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.json");
        let store = FileCredentials::new(&path);
        let kept = |id: &str| StoredCredentials::new(id.into(), None, Vec::new(), Some(7));
        store.save(kept("client-1")).await.unwrap();
        assert_eq!(store.load().await.unwrap().unwrap().client_id, "client-1");
        // The same file, its bytes changed in place with its size and time
        // kept: not read again (what every request saves).
        let modified = std::fs::metadata(&path).unwrap().modified().unwrap();
        let text = std::fs::read_to_string(&path)
            .unwrap()
            .replace("client-1", "client-2");
        let mut file = std::fs::OpenOptions::new().write(true).open(&path).unwrap();
        std::io::Write::write_all(&mut file, text.as_bytes()).unwrap();
        file.set_modified(modified).unwrap();
        drop(file);
        assert_eq!(store.load().await.unwrap().unwrap().client_id, "client-1");
        // Another process's login replaces the file: read again.
        FileCredentials::new(&path).save(kept("client-3")).await.unwrap();
        assert_eq!(store.load().await.unwrap().unwrap().client_id, "client-3");
        // Removed: none.
        std::fs::remove_file(&path).unwrap();
        assert!(store.load().await.unwrap().is_none());
    }

    /// An authorization server on a local port: its metadata, and a token
    /// endpoint giving `t1`, `t2`, ... for 6 s each; how many it gave.
    fn authorization_server() -> (String, Arc<std::sync::atomic::AtomicUsize>) {
        use std::io::{BufRead, BufReader, Read, Write};
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let base = format!("http://{}", listener.local_addr().unwrap());
        let given = Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let (origin, counted) = (base.clone(), Arc::clone(&given));
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                let mut reader = BufReader::new(stream.try_clone().unwrap());
                let mut writer = stream;
                let (mut head, mut length) = (String::new(), 0usize);
                let mut line = String::new();
                while reader.read_line(&mut line).unwrap_or(0) > 0 && line != "\r\n" {
                    if let Some(n) = line.to_ascii_lowercase().strip_prefix("content-length:") {
                        length = n.trim().parse().unwrap_or(0);
                    }
                    if head.is_empty() {
                        head = line.clone();
                    }
                    line.clear();
                }
                let mut body = vec![0; length];
                let _ = reader.read_exact(&mut body);
                let (status, answer) = if head.starts_with("POST /token") {
                    let n = counted.fetch_add(1, std::sync::atomic::Ordering::SeqCst) + 1;
                    let token = serde_json::json!({"access_token": format!("t{n}"), "token_type": "Bearer", "expires_in": 6});
                    ("200 OK", token.to_string())
                } else if head.contains("oauth-protected-resource") {
                    let resource = serde_json::json!({"resource": format!("{origin}/mcp"), "authorization_servers": [origin]});
                    ("200 OK", resource.to_string())
                } else if head.contains("oauth-authorization-server") || head.contains("openid-configuration")
                {
                    let metadata = serde_json::json!({
                        "issuer": origin,
                        "authorization_endpoint": format!("{origin}/authorize"),
                        "token_endpoint": format!("{origin}/token"),
                        "grant_types_supported": ["client_credentials"],
                        "token_endpoint_auth_methods_supported": ["client_secret_post", "client_secret_basic"],
                        "response_types_supported": ["code"],
                    });
                    ("200 OK", metadata.to_string())
                } else {
                    ("404 Not Found", String::new())
                };
                let _ = write!(
                    writer,
                    "HTTP/1.1 {status}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{answer}",
                    answer.len()
                );
            }
        });
        (base, given)
    }

    #[tokio::test]
    async fn a_client_credentials_token_about_to_expire_is_renewed_before_a_request() {
        let _ = rustls::crypto::ring::default_provider().install_default();
        let (base, given) = authorization_server();
        let dir = tempfile::tempdir().unwrap();
        let secret_env = "TOOLHOST_TEST_OAUTH_RENEW_SECRET";
        // SAFETY: set once, before any thread reads it, by this test alone
        // (its name is this test's own).
        unsafe { std::env::set_var(secret_env, "s3cret") };
        let config: crate::McpConfig = toml::from_str(&format!(
            r#"
            [[servers]]
            name = "cc"
            transport = "http"
            url = "{base}/mcp"
            oauth = {{ grant = "client_credentials", client_id = "bridge", client_secret_env = "{secret_env}", token_file = {:?} }}
            "#,
            dir.path().join("tokens.json")
        ))
        .unwrap();
        let client = authorized_client(&config.servers[0]).await.expect("signed in");
        let count = || given.load(std::sync::atomic::Ordering::SeqCst);
        assert_eq!(count(), 1, "signed in with the grant");
        let token = || async { client.inner.auth_manager.lock().await.get_access_token().await };
        client.renew().await;
        assert_eq!(count(), 1, "a fresh token is kept");
        assert_eq!(token().await.unwrap(), "t1");
        // Near its end (rmcp: within 30 s, or half its life when shorter;
        // it counts whole seconds), it is replaced while still valid.
        tokio::time::sleep(std::time::Duration::from_millis(4100)).await;
        client.renew().await;
        assert_eq!(count(), 2, "renewed before the request");
        assert_eq!(token().await.unwrap(), "t2");
    }
}
