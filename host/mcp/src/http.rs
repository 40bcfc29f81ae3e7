//! # The registry served over streamable HTTP
//!
//! [`serve_http`] serves an [`McpServer`] at [`HttpOptions::path`] through
//! rmcp's streamable HTTP service: one MCP session, a dispatch session of
//! its own, per client that sends `initialize` (none kept between requests
//! with [`HttpOptions::stateless`]). A non-loopback address needs a bearer
//! token; the `Host` header must be a loopback name unless a token is set;
//! a request with an `Origin` header is refused unless that origin is
//! allowed (loopback origins and [`HttpOptions::allowed_origins`]); a POST
//! body rmcp would refuse gets the JSON-RPC error the spec names (see
//! [`framing`]). `GET /healthz` answers 200 (503 once
//! shutting down) without a token, for load balancers; `GET /status`
//! answers [`HttpOptions::status`] behind the token (an OAuth token's
//! grant must be of everything, trusted).
//!
//! With [`HttpOptions::auth`] the endpoint is an OAuth 2.1 resource server
//! besides (see [`crate::auth`]): the protected-resource metadata is served
//! without a token, a JWT access token of the issuer is accepted beside
//! the static one, and its scopes' [`Grant`] is what the MCP session it
//! opens sees (an MCP session stays with the grant that opened it: a
//! request of that session with a token of another grant gets HTTP 403).
//!
//! ## What one client can hold
//!
//! Nothing a client sends, or withholds, grows without a bound, so that a
//! hostile or broken client cannot starve the other clients, nor the host's
//! tools of memory and file descriptors:
//!
//! | a client that | is bounded by | default |
//! |---|---|---|
//! | opens many connections | [`HttpOptions::max_connections`] open at once (at most half the process's file-descriptor limit); more wait in the listen backlog | 1,024 |
//! | trickles a request's head, or keeps a connection idle | [`HttpOptions::header_timeout`], then the connection is closed | 30 s |
//! | trickles a POST body | [`HttpOptions::body_timeout`], then HTTP 408 | 30 s |
//! | sends a huge body | [`MAX_LINE_BYTES`](super::framing::MAX_LINE_BYTES), then HTTP 413 | 16 MiB |
//! | opens many sessions | [`HttpOptions::max_sessions`] live at once; an `initialize` past them gets HTTP 503 and a JSON-RPC error | 1,024 |
//! | leaves its sessions open | [`HttpOptions::session_idle`] without a message, then the session ends | 5 min |

use std::net::SocketAddr;
use std::pin::pin;
use std::sync::Arc;
use std::time::Duration;

use axum::body::{Body, to_bytes};
use axum::extract::{Request, State};
use axum::http::StatusCode;
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::service::TowerToHyperService;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use serde_json::Value;
use tokio::sync::{Mutex, MutexGuard, Semaphore};
use tokio_util::sync::CancellationToken;

use super::auth::{Grant, JwtVerifier, Refusal, challenge};
use super::console::Console;
use super::framing;
use super::server::{McpServer, Observed, Transport, finish};
use toolhost_core::audit::AuditLog;
use toolhost_core::error::{Error, ErrorCode, Result};
use toolhost_core::registry::ToolAudience;

/// A JSON report served at `GET /status` (behind the bearer token).
pub type StatusFn = Arc<dyn Fn() -> Value + Send + Sync>;

/// The metrics served at `GET /metrics` (behind the bearer token), in the
/// Prometheus text format (see [`toolhost_core::metrics`]).
pub type MetricsFn = Arc<dyn Fn() -> String + Send + Sync>;

/// How [`serve_http`] listens, and what one client may hold (see the
/// [module](self)'s table).
#[derive(Clone)]
pub struct HttpOptions {
    /// Every request must carry `Authorization: Bearer TOKEN`. Required when
    /// the listener is not on a loopback address (unless [`HttpOptions::auth`]).
    pub bearer_token: Option<String>,
    /// OAuth access tokens of an issuer, accepted beside the static token
    /// (see [`crate::auth`]).
    pub auth: Option<Arc<JwtVerifier>>,
    /// Browser origins allowed besides the loopback ones, e.g.
    /// `https://app.example.com:443` (`:*` for any port).
    pub allowed_origins: Vec<String>,
    /// The HTTP path of the endpoint.
    pub path: String,
    /// Stateless mode: no MCP session is kept between requests (rmcp's
    /// `legacy_session_mode` off, JSON answers), so any replica behind a
    /// load balancer answers any request. Each request is a dispatch
    /// session of its own: lazy-mode activations and session approvals do
    /// not outlive it, and no `list_changed` notification is sent.
    pub stateless: bool,
    /// What `GET /status` answers (behind the bearer token); none: 404.
    pub status: Option<StatusFn>,
    /// What `GET /metrics` answers (behind the bearer token); none: 404.
    pub metrics: Option<MetricsFn>,
    /// Where clients let in (once each) and turned away (every time) are
    /// written (see [`toolhost_core::audit`]).
    pub audit: Option<Arc<AuditLog>>,
    /// The operator's console at `GET /console` (see [`crate::console`]);
    /// none: not served.
    pub console: Option<Arc<Console>>,
    /// Connections served at once; the next is accepted when one closes.
    /// Held to half the process's soft file-descriptor limit, the rest
    /// being the host's own (plugins, the compile cache, bridged servers).
    pub max_connections: usize,
    /// How long a connection may take to send a request's head, counted
    /// from its opening or the end of its previous answer: a connection
    /// idle that long, or trickling its headers, is closed.
    pub header_timeout: Duration,
    /// How long a POST may take to send its body after its head; past it,
    /// HTTP 408.
    pub body_timeout: Duration,
    /// MCP sessions live at once; an `initialize` past them is answered
    /// HTTP 503 with a JSON-RPC error and `Retry-After`.
    pub max_sessions: usize,
    /// A session that gets no message for this long ends (its client must
    /// `initialize` again).
    pub session_idle: Duration,
}

impl std::fmt::Debug for HttpOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HttpOptions")
            .field("bearer_token", &self.bearer_token.as_ref().map(|_| "<redacted>"))
            .field("auth", &self.auth.as_ref().map(|a| a.config().issuer.clone()))
            .field("allowed_origins", &self.allowed_origins)
            .field("path", &self.path)
            .field("stateless", &self.stateless)
            .field("status", &self.status.is_some())
            .field("metrics", &self.metrics.is_some())
            .field("audit", &self.audit.is_some())
            .field("console", &self.console.is_some())
            .field("max_connections", &self.max_connections)
            .field("header_timeout", &self.header_timeout)
            .field("body_timeout", &self.body_timeout)
            .field("max_sessions", &self.max_sessions)
            .field("session_idle", &self.session_idle)
            .finish()
    }
}

impl Default for HttpOptions {
    fn default() -> Self {
        HttpOptions {
            bearer_token: None,
            auth: None,
            allowed_origins: Vec::new(),
            path: "/mcp".into(),
            stateless: false,
            status: None,
            metrics: None,
            audit: None,
            console: None,
            max_connections: 1024,
            header_timeout: Duration::from_secs(30),
            body_timeout: Duration::from_secs(30),
            max_sessions: 1024,
            session_idle: Duration::from_secs(300),
        }
    }
}

/// Serves `server` over streamable HTTP on `listener` until `shutdown` is
/// cancelled (then calls in flight get `grace` to finish, and the open
/// connections close once their answers are out).
///
/// # Errors
///
/// [`ErrorCode::Config`] if the listener is not on a loopback address and no
/// bearer token nor [`HttpOptions::auth`] is set; [`ErrorCode::Io`] if its address cannot be read.
pub async fn serve_http(
    server: McpServer,
    listener: tokio::net::TcpListener,
    options: HttpOptions,
    shutdown: CancellationToken,
    grace: Duration,
) -> Result<()> {
    let addr: SocketAddr = listener
        .local_addr()
        .map_err(|e| Error::io("reading the listener's address", e))?;
    let token = options.bearer_token.clone().filter(|t| !t.is_empty());
    if !addr.ip().is_loopback() && token.is_none() && options.auth.is_none() {
        return Err(Error::new(
            ErrorCode::Config,
            format!(
                "serving MCP on {addr}, which is not a loopback address, needs a bearer token (--token or TOOLHOST_MCP_TOKEN)"
            ),
        ));
    }
    let mut origins: Vec<String> = ["http://localhost:*", "http://127.0.0.1:*", "http://[::1]:*"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    origins.extend(options.allowed_origins.iter().cloned());
    let origins_for_policy = origins.clone();
    let rmcp_ct = CancellationToken::new();
    let mut config = StreamableHttpServerConfig::default()
        .with_allowed_origins(origins)
        .enforce_origin_validation()
        .with_cancellation_token(rmcp_ct.clone());
    if token.is_some() || options.auth.is_some() {
        // The token, not the Host name, is what protects a public listener.
        config = config.disable_allowed_hosts();
    }
    if options.stateless {
        config = config.with_legacy_session_mode(false).with_json_response(true);
    }
    let mut sessions = LocalSessionManager::default();
    sessions.session_config.keep_alive = Some(options.session_idle);
    let sessions = Arc::new(sessions);
    let factory_server = server.clone();
    let rmcp = StreamableHttpService::new(
        // The grant of the request that opens the session, if it came with
        // an OAuth token (rmcp calls this within `Endpoint::rmcp`).
        move || {
            let session = match GRANT.try_with(Option::clone).ok().flatten() {
                Some(grant) => factory_server.new_session_granted(grant.audience, grant.toolsets.clone()),
                None => factory_server.new_session(),
            };
            Ok(Observed::new(session, Transport::Http))
        },
        Arc::clone(&sessions),
        config,
    );
    let endpoint = Endpoint {
        rmcp,
        limit: (!options.stateless).then(|| SessionLimit {
            sessions,
            max: options.max_sessions,
            opening: Mutex::new(()),
        }),
        body_timeout: options.body_timeout,
        auth: options.auth.clone(),
        server: server.clone(),
        bound: std::sync::Mutex::default(),
    };
    let origin_policy = Arc::new(super::origin::OriginPolicy::new(&origins_for_policy));
    let mut router = axum::Router::new()
        .route(&options.path, axum::routing::any(Endpoint::serve))
        .with_state(Arc::new(endpoint));
    if let Some(status) = options.status.clone() {
        router = router.route(
            "/status",
            axum::routing::get(move |request: Request| {
                // The host's whole state: for the static token, or an
                // OAuth grant of everything, trusted.
                let whole = request
                    .extensions()
                    .get::<Arc<Grant>>()
                    .is_none_or(|g| g.audience == ToolAudience::Trusted && g.toolsets.is_none());
                let answer = whole.then(|| status().to_string());
                async move {
                    match answer {
                        Some(body) => {
                            ([(http::header::CONTENT_TYPE, "application/json")], body).into_response()
                        }
                        None => (StatusCode::FORBIDDEN, "/status needs a token granting everything")
                            .into_response(),
                    }
                }
            }),
        );
    }
    if let Some(metrics) = options.metrics.clone() {
        router = router.route(
            "/metrics",
            axum::routing::get(move || {
                let body = metrics();
                async move {
                    (
                        [(
                            http::header::CONTENT_TYPE,
                            toolhost_core::metrics::Metrics::CONTENT_TYPE,
                        )],
                        body,
                    )
                }
            }),
        );
    }
    let health = server.clone();
    let callers = Arc::new(Callers {
        token,
        auth: options.auth.clone(),
        audit: options.audit.clone(),
        seen: std::sync::Mutex::default(),
    });
    let mut router = router
        .layer(middleware::from_fn_with_state(Arc::clone(&callers), authenticate))
        .layer(middleware::from_fn_with_state(
            Arc::clone(&origin_policy),
            require_origin,
        ))
        // Readiness for load balancers and orchestrators, without the token:
        // 200 while serving, 503 once shutting down (so traffic moves away
        // during the grace period).
        .route(
            "/healthz",
            axum::routing::get(move || {
                let draining = health.is_draining();
                async move {
                    if draining {
                        (StatusCode::SERVICE_UNAVAILABLE, "shutting down")
                    } else {
                        (StatusCode::OK, "ok")
                    }
                }
            }),
        );
    if let Some(console) = options.console.clone() {
        // The page needs no token; its API the same as `/mcp`, and its own
        // origin check (the page's origin, whatever the listener's name).
        let (pages, api) =
            super::console::router(console, server.clone(), origin_policy, options.body_timeout);
        let api = api.layer(middleware::from_fn_with_state(callers, authenticate));
        router = router.merge(pages).merge(api);
    }
    if let Some(auth) = &options.auth {
        // RFC 9728: at the root, and with the resource's path appended.
        let document = auth.config().metadata().to_string();
        let mut paths = vec!["/.well-known/oauth-protected-resource".to_string()];
        let suffixed = format!("{}{}", paths[0], auth.config().resource_path());
        if suffixed != paths[0] {
            paths.push(suffixed);
        }
        for path in paths {
            let document = document.clone();
            router = router.route(
                &path,
                axum::routing::get(move || async move {
                    ([(http::header::CONTENT_TYPE, "application/json")], document)
                }),
            );
        }
    }
    // New connections are accepted through the grace period (so that
    // `/healthz` can say 503), and stop once the calls have drained.
    let drained = CancellationToken::new();
    let graceful = async {
        shutdown.cancelled().await;
        finish(&server, grace).await;
        rmcp_ct.cancel();
        drained.cancel();
    };
    let connections = Connections {
        max: connection_limit(options.max_connections),
        header_timeout: options.header_timeout,
    };
    tokio::join!(graceful, connections.serve(listener, router, &drained));
    Ok(())
}

/// The most connections served at once: `wanted`, held to half the soft
/// limit on open files (`RLIMIT_NOFILE`), at least one, and within what a
/// semaphore can count.
fn connection_limit(wanted: usize) -> usize {
    #[cfg(target_os = "linux")]
    let wanted = match rustix::process::getrlimit(rustix::process::Resource::Nofile).current {
        Some(files) if (files / 2) < wanted as u64 => {
            let held = usize::try_from(files / 2).unwrap_or(wanted);
            tracing::info!(
                "serving at most {held} HTTP connections at once, not {wanted}: half of this process's open-file limit ({files}; raise it with `ulimit -n`)"
            );
            held
        }
        _ => wanted,
    };
    wanted.clamp(1, Semaphore::MAX_PERMITS)
}

/// The listener's side of [`HttpOptions`]: how many connections, and how
/// long a request's head may take.
///
/// Written here rather than with `axum::serve`, which sets no timer on its
/// connections (so hyper's header timeout never runs, and a client that
/// trickles its headers holds its connection, a file descriptor, forever)
/// and accepts every connection it is offered.
struct Connections {
    max: usize,
    header_timeout: Duration,
}

impl Connections {
    /// Accepts and serves connections until `stop` is cancelled, then asks
    /// each open connection to close after its request in progress, and
    /// returns when all have.
    async fn serve(&self, listener: tokio::net::TcpListener, router: axum::Router, stop: &CancellationToken) {
        let slots = Arc::new(Semaphore::new(self.max));
        let mut http1 = hyper::server::conn::http1::Builder::new();
        http1
            .timer(TokioTimer::new())
            .header_read_timeout(self.header_timeout);
        // Each connection's task holds a receiver; `closed` resolves when
        // the last has ended.
        let (open, open_rx) = tokio::sync::watch::channel(());
        loop {
            let slot = tokio::select! {
                slot = Arc::clone(&slots).acquire_owned() => slot,
                () = stop.cancelled() => break,
            };
            // The semaphore is never closed.
            let Ok(slot) = slot else { break };
            let tcp = tokio::select! {
                accepted = listener.accept() => match accepted {
                    Ok((tcp, _)) => tcp,
                    Err(e) => {
                        accept_failed(&e).await;
                        continue;
                    }
                },
                () = stop.cancelled() => break,
            };
            // Answers go out as several small writes (headers, then
            // event-stream chunks): with Nagle's algorithm on, the second
            // waits for the client's delayed ACK, 40 ms per call.
            if let Err(e) = tcp.set_nodelay(true) {
                tracing::debug!("could not set TCP_NODELAY on an MCP connection: {e}");
            }
            let connection =
                http1.serve_connection(TokioIo::new(tcp), TowerToHyperService::new(router.clone()));
            let (stop, open_rx) = (stop.clone(), open_rx.clone());
            tokio::spawn(async move {
                let mut connection = pin!(connection);
                let served = tokio::select! {
                    served = connection.as_mut() => served,
                    () = stop.cancelled() => {
                        connection.as_mut().graceful_shutdown();
                        connection.await
                    }
                };
                if let Err(e) = served {
                    tracing::debug!("MCP connection ended: {e}");
                }
                drop((slot, open_rx));
            });
        }
        drop(open_rx);
        open.closed().await;
    }
}

/// After a failed `accept`: a connection the client dropped before it was
/// accepted is nothing; anything else (out of file descriptors, say) is
/// logged and waited out for a moment rather than retried in a busy loop.
async fn accept_failed(e: &std::io::Error) {
    use std::io::ErrorKind;
    if matches!(
        e.kind(),
        ErrorKind::ConnectionAborted | ErrorKind::ConnectionReset | ErrorKind::ConnectionRefused
    ) {
        return;
    }
    tracing::warn!("accepting an MCP connection failed: {e}; retrying in a second");
    tokio::time::sleep(Duration::from_secs(1)).await;
}

/// Why a request's body was not read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum BodyRefused {
    /// It holds more than the route's bound (HTTP 413).
    TooLarge,
    /// It did not arrive whole within the listener's `body_timeout` (HTTP
    /// 408).
    Late,
}

/// The one reader of request bodies on the listener: at most `max` bytes,
/// whole within `timeout` (a client trickling a body holds no task longer).
pub(crate) async fn read_request_body(
    body: Body,
    max: usize,
    timeout: Duration,
) -> std::result::Result<axum::body::Bytes, BodyRefused> {
    match tokio::time::timeout(timeout, to_bytes(body, max)).await {
        Ok(Ok(bytes)) => Ok(bytes),
        Ok(Err(_)) => Err(BodyRefused::TooLarge),
        Err(_) => Err(BodyRefused::Late),
    }
}

/// The MCP endpoint: rmcp's streamable HTTP service, and what it does not
/// do itself. A POST's body is read whole first (within
/// [`HttpOptions::body_timeout`], else HTTP 408; at most
/// [`framing::MAX_LINE_BYTES`], else 413); a malformed message gets the
/// JSON-RPC error the spec names (HTTP 400, its id echoed; see
/// [`framing`]) where rmcp would answer a bare 415; an `initialize` past
/// [`HttpOptions::max_sessions`] gets HTTP 503.
struct Endpoint {
    rmcp: StreamableHttpService<Observed, LocalSessionManager>,
    /// `None` when stateless (no session is kept).
    limit: Option<SessionLimit>,
    body_timeout: Duration,
    /// OAuth tokens' verifier, when configured.
    auth: Option<Arc<JwtVerifier>>,
    /// The server, for what a grant lets a caller call.
    server: McpServer,
    /// With `auth`: the grant that opened each MCP session (`None`: the
    /// static token's), which every later request of it must carry.
    bound: std::sync::Mutex<std::collections::HashMap<String, Option<Arc<Grant>>>>,
}

tokio::task_local! {
    /// The grant of the request being handed to rmcp, for the session
    /// factory.
    static GRANT: Option<Arc<Grant>>;
}

/// The live sessions' bound ([`HttpOptions::max_sessions`]).
struct SessionLimit {
    sessions: Arc<LocalSessionManager>,
    max: usize,
    /// Held while an `initialize` is counted and answered, so that two at
    /// once cannot both take the last place.
    opening: Mutex<()>,
}

impl Endpoint {
    /// Answers one request. rmcp is called through a shared reference
    /// (`handle`), not as a tower service, which would clone it (and its
    /// configuration) for every request.
    async fn serve(State(endpoint): State<Arc<Endpoint>>, request: Request) -> Response {
        let grant = request.extensions().get::<Arc<Grant>>().cloned();
        if let Some(refused) = endpoint.other_grant(&request, grant.as_ref()) {
            return refused;
        }
        GRANT
            .scope(grant.clone(), endpoint.serve_granted(request, grant))
            .await
    }

    /// [`Endpoint::serve`] for a caller whose grant is known.
    async fn serve_granted(&self, request: Request, grant: Option<Arc<Grant>>) -> Response {
        let endpoint = self;
        if request.method() == http::Method::DELETE {
            // A session ended: rmcp answers 202, which the official SDKs
            // take for a failure ("Session termination failed: 202"); the
            // request is done, so 204.
            let mut response = endpoint.rmcp(request).await;
            if response.status() == StatusCode::ACCEPTED {
                *response.status_mut() = StatusCode::NO_CONTENT;
                *response.body_mut() = Body::empty();
            }
            return response;
        }
        if request.method() != http::Method::POST {
            return endpoint.rmcp(request).await;
        }
        let (parts, body) = request.into_parts();
        let bytes = match read_request_body(body, framing::MAX_LINE_BYTES, endpoint.body_timeout).await {
            Ok(bytes) => bytes,
            Err(BodyRefused::TooLarge) => {
                return json_response(StatusCode::PAYLOAD_TOO_LARGE, &framing::too_long());
            }
            Err(BodyRefused::Late) => {
                let message = format!(
                    "Invalid Request: the body did not arrive within {} s",
                    endpoint.body_timeout.as_secs_f64()
                );
                return json_response(
                    StatusCode::REQUEST_TIMEOUT,
                    &framing::error_object(None, framing::INVALID_REQUEST, &message),
                );
            }
        };
        // A well-formed envelope (the common case) is all that is read
        // here: rmcp reads the message whole, and only if rmcp refuses it
        // does `classify` read it again to say why.
        let Some(envelope) = framing::well_formed_envelope(&bytes) else {
            return match malformed(&bytes) {
                Some(answer) => answer,
                None => endpoint.rmcp(Request::from_parts(parts, Body::from(bytes))).await,
            };
        };
        if let Some(grant) = &grant
            && envelope.is("tools/call")
            && let Some(refused) = endpoint.outside_grant(grant, &bytes)
        {
            return refused;
        }
        let opening = !parts.headers.contains_key("mcp-session-id") && envelope.is("initialize");
        let _opening = match (&endpoint.limit, opening) {
            (Some(limit), true) => match limit.admit(envelope.id).await {
                Ok(guard) => Some(guard),
                Err(refused) => return refused,
            },
            _ => None,
        };
        let response = endpoint
            .rmcp(Request::from_parts(parts, Body::from(bytes.clone())))
            .await;
        if response.status() == StatusCode::UNSUPPORTED_MEDIA_TYPE
            && let Some(answer) = malformed(&bytes)
        {
            return answer;
        }
        let opened = response
            .headers()
            .get("mcp-session-id")
            .and_then(|v| v.to_str().ok())
            .map(String::from);
        if let (true, Some(id)) = (opening, opened) {
            endpoint.bind(id, grant).await;
        }
        response
    }

    /// With OAuth on, records the grant that opened the session `id`,
    /// forgetting the sessions that have ended.
    async fn bind(&self, id: String, grant: Option<Arc<Grant>>) {
        let (Some(_), Some(limit)) = (&self.auth, &self.limit) else {
            return;
        };
        let live: std::collections::HashSet<String> = limit
            .sessions
            .sessions
            .read()
            .await
            .keys()
            .map(|k| k.to_string())
            .collect();
        let mut bound = self
            .bound
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        bound.retain(|k, _| live.contains(k));
        bound.insert(id, grant);
    }

    /// HTTP 403 for a request of an MCP session opened with another grant
    /// than this request's (another token's scopes or subject).
    fn other_grant(&self, request: &Request, grant: Option<&Arc<Grant>>) -> Option<Response> {
        let auth = self.auth.as_ref()?;
        let id = request.headers().get("mcp-session-id")?.to_str().ok()?;
        let bound = self
            .bound
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let opened = bound.get(id)?;
        let same = match (opened, grant) {
            (None, None) => true,
            (Some(a), Some(b)) => a.subject == b.subject && a.scopes == b.scopes,
            _ => false,
        };
        if same {
            return None;
        }
        let scopes: Vec<&str> = opened
            .as_ref()
            .map(|g| g.scopes.iter().map(String::as_str).collect())
            .unwrap_or_default();
        Some(refuse(
            StatusCode::FORBIDDEN,
            &challenge(
                &auth.config().metadata_url(),
                Some((
                    "insufficient_scope",
                    "this MCP session was opened with another grant; open a new session with this token",
                )),
                &scopes,
            ),
        ))
    }

    /// HTTP 403 `insufficient_scope` for a `tools/call` (its body
    /// `bytes`) of a tool `grant` does not hold but another configured
    /// scope would; `None` otherwise (a tool no scope grants is unknown, as
    /// it would be to a caller without the token).
    fn outside_grant(&self, grant: &Grant, bytes: &[u8]) -> Option<Response> {
        let auth = self.auth.as_ref()?;
        #[derive(serde::Deserialize)]
        struct Call<'a> {
            #[serde(borrow)]
            params: Params<'a>,
        }
        #[derive(serde::Deserialize)]
        struct Params<'a> {
            name: std::borrow::Cow<'a, str>,
        }
        let call: Call<'_> = serde_json::from_slice(bytes).ok()?;
        let name = call.params.name.as_ref();
        let dispatcher = self.server.dispatcher();
        if dispatcher.grants(grant.audience, grant.toolsets.as_deref(), name) {
            return None;
        }
        let needed = auth
            .config()
            .scopes_granting(|audience, toolsets| dispatcher.grants(audience, toolsets, name));
        if needed.is_empty() {
            return None;
        }
        let description = format!("calling `{name}` needs one of the scopes: {}", needed.join(" "));
        Some(refuse(
            StatusCode::FORBIDDEN,
            &challenge(
                &auth.config().metadata_url(),
                Some(("insufficient_scope", &description)),
                &needed,
            ),
        ))
    }

    async fn rmcp(&self, request: Request) -> Response {
        // `GRANT` is set by `serve` around this, for the session factory.
        self.rmcp.handle(request).await.map(Body::new)
    }
}

impl SessionLimit {
    /// Lets an `initialize` (request `id`) open a session, holding the
    /// count until it is answered; or answers it HTTP 503 with
    /// `Retry-After` and a JSON-RPC error if the sessions are at the limit.
    async fn admit(&self, id: Option<Value>) -> std::result::Result<MutexGuard<'_, ()>, Response> {
        let opening = self.opening.lock().await;
        let live = self.sessions.sessions.read().await.len();
        if live < self.max {
            return Ok(opening);
        }
        let message = format!(
            "the server has {live} MCP sessions open, its limit (--max-sessions); retry later, or end an unused session (HTTP DELETE with its Mcp-Session-Id)"
        );
        let mut answer = json_response(
            StatusCode::SERVICE_UNAVAILABLE,
            &framing::error_object(id, framing::SERVER_BUSY, &message),
        );
        answer
            .headers_mut()
            .insert(http::header::RETRY_AFTER, http::HeaderValue::from_static("10"));
        Err(answer)
    }
}

/// HTTP 400 with the JSON-RPC error [`framing::classify`] answers `body`
/// with, if it answers one (the body is malformed).
fn malformed(body: &[u8]) -> Option<Response> {
    match framing::classify(body) {
        framing::Line::Answer(answer) => Some(json_response(StatusCode::BAD_REQUEST, &answer)),
        _ => None,
    }
}

/// `body` as a JSON answer with `status`.
pub(crate) fn json_response(status: StatusCode, body: &Value) -> Response {
    (
        status,
        [(http::header::CONTENT_TYPE, "application/json")],
        body.to_string(),
    )
        .into_response()
}

/// Refuses (403) a request whose `Origin` the policy does not allow (see
/// [`super::origin`]); requests without one (not from a browser) pass.
async fn require_origin(
    State(policy): State<Arc<super::origin::OriginPolicy>>,
    request: Request,
    next: Next,
) -> Response {
    if let Some(origin) = request.headers().get(http::header::ORIGIN) {
        let allowed = origin.to_str().is_ok_and(|o| policy.allows(o));
        if !allowed {
            return (StatusCode::FORBIDDEN, "this origin may not call the MCP endpoint").into_response();
        }
    }
    next.run(request).await
}

/// Put into a request's extensions when it carried the static bearer
/// token: the proof, for the routes that need one, that the caller is the
/// operator (a listener without any token lets requests through without
/// it).
#[derive(Debug, Clone, Copy)]
pub(crate) struct StaticToken;

/// Who may call: the static token, and the issuer's tokens; and where
/// clients are audited.
struct Callers {
    token: Option<String>,
    auth: Option<Arc<JwtVerifier>>,
    audit: Option<Arc<AuditLog>>,
    /// The clients (token digest and user agent) already written as let
    /// in, so that each is written once, not once per request; bounded.
    seen: std::sync::Mutex<std::collections::HashSet<(String, String)>>,
}

/// The most clients remembered as let in; past it the memory starts over
/// (a client is written once more).
const MAX_SEEN_CLIENTS: usize = 4096;

impl Callers {
    /// Writes `decision` about the client of `request` to the audit log
    /// (a let-in client once): a digest of the token it presented (never
    /// the token), its user agent, the token's subject when it is a JWT.
    fn audit(&self, request: &Request, decision: &str, why: &str, subject: Option<&str>) {
        let Some(audit) = &self.audit else { return };
        let headers = request.headers();
        let client = headers
            .get(http::header::AUTHORIZATION)
            .map(|v| format!("blake3:{}", blake3::hash(v.as_bytes()).to_hex()));
        let agent = headers
            .get(http::header::USER_AGENT)
            .and_then(|v| v.to_str().ok())
            .map(|v| v.chars().take(200).collect::<String>());
        if decision == "allowed" {
            let key = (
                client.clone().unwrap_or_default(),
                agent.clone().unwrap_or_default(),
            );
            let mut seen = self
                .seen
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            if seen.len() >= MAX_SEEN_CLIENTS {
                seen.clear();
            }
            if !seen.insert(key) {
                return;
            }
        }
        let mut line = serde_json::Map::new();
        line.insert("decision".into(), Value::from(decision));
        line.insert("why".into(), Value::from(why));
        line.insert("client".into(), client.map_or(Value::Null, Value::from));
        line.insert("subject".into(), subject.map_or(Value::Null, Value::from));
        line.insert("user_agent".into(), agent.map_or(Value::Null, Value::from));
        audit.record("client", line);
    }
}

/// Lets a request through when it carries the static token (no grant: the
/// server's own audience and toolsets) or a JWT of the issuer that
/// verifies (its [`Grant`] put into the request's extensions); otherwise
/// HTTP 401 (or 403 for a valid token holding no configured scope), with
/// the challenge of [`crate::auth`]. Without either, every request passes.
/// Each client let in is audited once, each refusal every time.
async fn authenticate(State(callers): State<Arc<Callers>>, mut request: Request, next: Next) -> Response {
    if callers.token.is_none() && callers.auth.is_none() {
        callers.audit(
            &request,
            "allowed",
            "no token is required (a loopback listener served without one)",
            None,
        );
        return next.run(request).await;
    }
    let given = request
        .headers()
        .get(http::header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer ").or_else(|| v.strip_prefix("bearer ")))
        .map(str::trim);
    if let (Some(given), Some(token)) = (given, callers.token.as_deref())
        && constant_time_eq(given.as_bytes(), token.as_bytes())
    {
        callers.audit(&request, "allowed", "the static bearer token", None);
        request.extensions_mut().insert(StaticToken);
        return next.run(request).await;
    }
    let Some(auth) = &callers.auth else {
        let why = match given {
            None => "no bearer token",
            Some(_) => "the bearer token does not match",
        };
        callers.audit(&request, "refused", why, None);
        return (
            StatusCode::UNAUTHORIZED,
            [(http::header::WWW_AUTHENTICATE, "Bearer")],
            "a valid bearer token is required",
        )
            .into_response();
    };
    let config = auth.config();
    let url = config.metadata_url();
    let scopes = config.scopes_supported();
    let Some(given) = given.filter(|g| !g.is_empty()) else {
        callers.audit(&request, "refused", "no bearer token", None);
        return refuse(StatusCode::UNAUTHORIZED, &challenge(&url, None, &scopes));
    };
    match auth.verify(given).await {
        Ok(grant) => {
            tracing::debug!(subject = %grant.subject, scopes = ?grant.scopes, "an OAuth token was accepted");
            callers.audit(
                &request,
                "allowed",
                "an access token of the issuer",
                Some(&grant.subject),
            );
            request.extensions_mut().insert(Arc::new(grant));
            next.run(request).await
        }
        Err(Refusal::NoScope) => {
            callers.audit(
                &request,
                "refused",
                "the token holds none of the scopes this server grants",
                None,
            );
            refuse(
                StatusCode::FORBIDDEN,
                &challenge(
                    &url,
                    Some((
                        "insufficient_scope",
                        "the token holds none of the scopes this server grants",
                    )),
                    &scopes,
                ),
            )
        }
        Err(refusal) => {
            tracing::info!("an OAuth token was refused: {refusal}");
            callers.audit(&request, "refused", &refusal.to_string(), None);
            refuse(
                StatusCode::UNAUTHORIZED,
                &challenge(&url, Some(("invalid_token", &refusal.to_string())), &scopes),
            )
        }
    }
}

fn refuse(status: StatusCode, www_authenticate: &str) -> Response {
    let value = http::HeaderValue::from_str(www_authenticate)
        .unwrap_or_else(|_| http::HeaderValue::from_static("Bearer"));
    let body = if status == StatusCode::FORBIDDEN {
        "the token's scopes do not allow this"
    } else {
        "a valid bearer token is required"
    };
    (status, [(http::header::WWW_AUTHENTICATE, value)], body).into_response()
}

fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn any_connection_limit_is_one_a_semaphore_can_count() {
        for wanted in [0, 1, 2, 1024, usize::MAX] {
            let max = connection_limit(wanted);
            assert!((1..=Semaphore::MAX_PERMITS).contains(&max), "{wanted} -> {max}");
            assert!(max <= wanted.max(1));
            let _ = Semaphore::new(max);
        }
    }
}
