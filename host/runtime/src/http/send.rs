//! Sending a guest's request: the [`WasiHttpHooks`] of a call, which checks
//! the target against the grants, resolves the name itself, connects to
//! exactly the address it checked, injects secrets, and hands the guest a
//! response whose body is counted against the call's budget and redacted.

use std::future::{Future, poll_fn};
use std::net::SocketAddr;
use std::pin::{Pin, pin};
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::task::{Context, Poll, ready};
use std::time::{Duration, Instant};

use bytes::Bytes;
use http::{Request, Response};
use http_body::{Body, Frame};
use http_body_util::BodyExt;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::TcpStream;
use wasmtime_wasi_http::io::TokioIo;
use wasmtime_wasi_http::{Error as HttpError, RequestOptions, WasiBody, WasiHttpHooks};

use super::grant::HttpAccess;
use super::policy::{self, Host, Scheme, Target};
use super::secrets::{self, Redactor};
use toolhost_core::limits::Limits;

/// The future a send resolves to, as wasmtime-wasi-http wants it.
type SendFuture = Box<dyn Future<Output = Result<(Response<WasiBody>, IoFuture), HttpError>> + Send>;
type IoFuture = Box<dyn Future<Output = Result<(), HttpError>> + Send>;

trait Io: AsyncRead + AsyncWrite + Send + Sync + Unpin + 'static {}
impl<T: AsyncRead + AsyncWrite + Send + Sync + Unpin + 'static> Io for T {}

/// The outbound-HTTP state of one call: what it may reach, its budgets, and
/// the notes on each denial (for the call's error message). The shared
/// part is made on the call's first request, so that a call that sends
/// none (most calls) allocates nothing for it.
pub(crate) struct HttpHooks {
    terms: Terms,
    shared: Option<Arc<Shared>>,
}

/// What a call's requests may do: reach what `access` allows, within the
/// call's deadline, timeout and budgets.
#[derive(Clone)]
struct Terms {
    access: Arc<HttpAccess>,
    deadline: Instant,
    request_timeout: Duration,
    max_requests: u32,
    max_bytes: u64,
}

/// A call's terms, what is left of its budgets, and its denials.
struct Shared {
    terms: Terms,
    requests_left: AtomicU32,
    bytes_left: AtomicU64,
    notes: Mutex<Vec<String>>,
}

impl HttpHooks {
    /// Hooks for a call that ends at `deadline`, under `limits`, that may
    /// reach what `access` allows (the component's, shared by its calls).
    pub(crate) fn new(access: &Arc<HttpAccess>, limits: &Limits, deadline: Instant) -> HttpHooks {
        HttpHooks {
            terms: Terms {
                access: Arc::clone(access),
                deadline,
                request_timeout: limits.http_timeout,
                max_requests: limits.http_requests,
                max_bytes: limits.http_response_bytes,
            },
            shared: None,
        }
    }

    /// The call's budgets and notes, made on its first request.
    fn shared(&mut self) -> &Arc<Shared> {
        self.shared.get_or_insert_with(|| {
            Arc::new(Shared {
                terms: self.terms.clone(),
                requests_left: AtomicU32::new(self.terms.max_requests),
                bytes_left: AtomicU64::new(self.terms.max_bytes),
                notes: Mutex::new(Vec::new()),
            })
        })
    }

    /// Why requests of this call were refused, one line each.
    pub(crate) fn notes(&self) -> Vec<String> {
        let Some(shared) = &self.shared else {
            return Vec::new();
        };
        shared.notes.lock().map(|n| n.clone()).unwrap_or_default()
    }
}

impl Shared {
    fn deny(&self, error: HttpError, why: String) -> HttpError {
        tracing::warn!(target: "toolhost::http", "outbound request refused: {why}");
        if let Ok(mut notes) = self.notes.lock()
            && notes.len() < 16
            && !notes.contains(&why)
        {
            notes.push(why);
        }
        error
    }

    fn take_bytes(&self, n: usize) -> bool {
        let n = n as u64;
        self.bytes_left
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |left| left.checked_sub(n))
            .is_ok()
    }
}

impl WasiHttpHooks for HttpHooks {
    fn send_request(
        &mut self,
        request: Request<WasiBody>,
        options: Option<RequestOptions>,
        fut: IoFuture,
    ) -> SendFuture {
        drop(fut);
        let shared = Arc::clone(self.shared());
        Box::new(async move {
            let (response, io) = send(shared, request, options).await?;
            Ok((response, Box::new(io) as IoFuture))
        })
    }
}

async fn send(
    shared: Arc<Shared>,
    mut req: Request<WasiBody>,
    options: Option<RequestOptions>,
) -> Result<
    (
        Response<WasiBody>,
        impl Future<Output = Result<(), HttpError>> + Send,
    ),
    HttpError,
> {
    let uri = req.uri();
    let target = uri
        .scheme_str()
        .zip(uri.authority())
        .and_then(|(scheme, authority)| Target::new(scheme, authority.as_str()))
        .ok_or_else(|| {
            shared.deny(
                HttpError::HttpRequestDenied,
                format!("{uri} is not an http or https URL with a host toolhost can check"),
            )
        })?;
    let rule = match shared.terms.access.check(&target) {
        Ok(rule) => rule.clone(),
        Err(why) => return Err(shared.deny(HttpError::HttpRequestDenied, why)),
    };
    if shared
        .requests_left
        .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| n.checked_sub(1))
        .is_err()
    {
        let why = format!(
            "the call has used its budget of {} HTTP requests; raise `http_requests` for this plugin",
            shared.terms.max_requests
        );
        return Err(shared.deny(HttpError::ConnectionLimitReached, why));
    }
    let now = Instant::now();
    let end = now
        + shared
            .terms
            .deadline
            .saturating_duration_since(now)
            .min(shared.terms.request_timeout);
    if end <= now {
        return Err(HttpError::ConnectionTimeout);
    }
    let capped = |t: Option<Duration>| t.map_or(end, |t| end.min(now + t));
    let options = options.unwrap_or_default();

    let addrs: Vec<SocketAddr> = match &target.host {
        Host::Ip(ip) => vec![SocketAddr::new(*ip, target.port)],
        Host::Name(name) => {
            tokio::time::timeout_at(end.into(), tokio::net::lookup_host((name.as_str(), target.port)))
                .await
                .map_err(|_| HttpError::DnsTimeout)?
                .map_err(|e| HttpError::DnsError {
                    rcode: Some(e.to_string()),
                    info_code: None,
                })?
                .collect()
        }
    };
    let (allowed, blocked): (Vec<SocketAddr>, Vec<SocketAddr>) =
        addrs.into_iter().partition(|a| rule.allows_address(a.ip()));
    if allowed.is_empty() {
        let why = match blocked.first() {
            Some(addr) => format!(
                "{target} resolves to {}, a {} address, which outbound HTTP may not reach; only a grant naming that address, or `allow_private = true` on a grant for this host, allows it",
                addr.ip(),
                policy::classify(addr.ip()).unwrap_or("blocked")
            ),
            None => format!("{target} resolves to no address"),
        };
        return Err(shared.deny(HttpError::DestinationIpProhibited, why));
    }
    let sent = secrets::inject(req.headers_mut(), &target, &shared.terms.access.secrets);
    tracing::debug!(target: "toolhost::http", %target, addr = %allowed[0], secrets = ?sent, "sending");

    let stream = connect(&allowed, capped(options.connect_timeout)).await?;
    let stream: Box<dyn Io> = match target.scheme {
        Scheme::Http => Box::new(stream),
        Scheme::Https => Box::new(
            tls(
                stream,
                &target.host,
                &rule.trusted_cas,
                capped(options.connect_timeout),
            )
            .await?,
        ),
    };
    let (mut sender, conn) = hyper::client::conn::http1::Builder::new()
        .handshake(TokioIo::new(stream))
        .await?;
    // The request line carries the path only; the authority is in `Host`.
    let path = req.uri().path_and_query().map_or("/", |p| p.as_str());
    *req.uri_mut() = http::Uri::try_from(path).map_err(|_| HttpError::HttpRequestUriInvalid)?;

    let first_byte = capped(options.first_byte_timeout);
    let mut send = pin!(tokio::time::timeout_at(
        first_byte.into(),
        sender.send_request(req)
    ));
    let mut conn = Some(conn);
    // Wait for the response while driving the connection's I/O.
    let response = poll_fn(|cx: &mut Context<'_>| {
        if let Poll::Ready(sent) = send.as_mut().poll(cx) {
            return Poll::Ready(match sent {
                Ok(result) => result.map_err(HttpError::from),
                Err(_elapsed) => Err(HttpError::ConnectionReadTimeout),
            });
        }
        let Some(c) = conn.as_mut() else {
            return Poll::Pending;
        };
        let done = ready!(Pin::new(c).poll(cx));
        conn = None;
        match done {
            // The connection closed cleanly: the response is there now.
            Ok(()) => send.as_mut().poll(cx).map(|sent| match sent {
                Ok(result) => result.map_err(HttpError::from),
                Err(_elapsed) => Err(HttpError::ConnectionReadTimeout),
            }),
            Err(e) => Poll::Ready(Err(HttpError::from(e))),
        }
    })
    .await?;

    let redactor = super::secrets::redactor(&shared.terms.access.secrets);
    let (mut parts, incoming) = response.into_parts();
    secrets::redact_headers(&mut parts.headers, &redactor);
    let body = GuardedBody {
        inner: incoming,
        redactor,
        deadline: Box::pin(tokio::time::sleep_until(end.into())),
        shared,
        done: false,
    };
    let io = async move {
        match conn {
            Some(conn) => conn.await.map_err(HttpError::from),
            None => Ok(()),
        }
    };
    Ok((Response::from_parts(parts, body.boxed_unsync()), io))
}

async fn connect(addrs: &[SocketAddr], until: Instant) -> Result<TcpStream, HttpError> {
    let mut last = HttpError::ConnectionRefused;
    for addr in addrs {
        match tokio::time::timeout_at(until.into(), TcpStream::connect(addr)).await {
            Ok(Ok(stream)) => return Ok(stream),
            Ok(Err(e)) => last = HttpError::Connect(e),
            Err(_) => return Err(HttpError::ConnectionTimeout),
        }
    }
    Err(last)
}

/// TLS to the checked address, verifying the certificate for the URL's host
/// against the public webpki roots, or against `trusted_cas` alone (DER) when
/// the grant names its own certificate authorities.
async fn tls(
    stream: TcpStream,
    host: &Host,
    trusted_cas: &[Vec<u8>],
    until: Instant,
) -> Result<tokio_rustls::client::TlsStream<TcpStream>, HttpError> {
    use rustls::pki_types::ServerName;
    fn client_config(roots: rustls::RootCertStore) -> Result<Arc<rustls::ClientConfig>, String> {
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        rustls::ClientConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .map(|b| Arc::new(b.with_root_certificates(roots).with_no_client_auth()))
            .map_err(|e| e.to_string())
    }
    static PUBLIC: OnceLock<Result<Arc<rustls::ClientConfig>, String>> = OnceLock::new();
    let config = if trusted_cas.is_empty() {
        PUBLIC
            .get_or_init(|| {
                client_config(rustls::RootCertStore {
                    roots: webpki_roots::TLS_SERVER_ROOTS.into(),
                })
            })
            .clone()
    } else {
        // A private CA is rare and per grant: build its config per request
        // rather than keep a cache keyed by certificates.
        let mut roots = rustls::RootCertStore::empty();
        let (_, ignored) = roots.add_parsable_certificates(trusted_cas.iter().map(|c| c.clone().into()));
        if roots.is_empty() {
            Err(format!("none of the grant's {ignored} CA certificates is usable"))
        } else {
            client_config(roots)
        }
    }
    .map_err(|e| HttpError::InternalError(Some(format!("TLS configuration: {e}"))))?;
    let name = match host {
        Host::Ip(ip) => ServerName::IpAddress((*ip).into()),
        Host::Name(n) => ServerName::try_from(n.clone())?,
    };
    let connector = tokio_rustls::TlsConnector::from(config);
    tokio::time::timeout_at(until.into(), connector.connect(name, stream))
        .await
        .map_err(|_| HttpError::ConnectionTimeout)?
        .map_err(HttpError::Tls)
}

/// A response body counted against the call's byte budget, cut at the
/// deadline, and with secrets redacted.
struct GuardedBody {
    inner: hyper::body::Incoming,
    redactor: Redactor,
    deadline: Pin<Box<tokio::time::Sleep>>,
    shared: Arc<Shared>,
    done: bool,
}

impl Body for GuardedBody {
    type Data = Bytes;
    type Error = HttpError;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, HttpError>>> {
        let this = self.get_mut();
        loop {
            if this.done {
                return Poll::Ready(None);
            }
            match Pin::new(&mut this.inner).poll_frame(cx) {
                Poll::Ready(Some(Ok(frame))) => {
                    let data = match frame.into_data() {
                        Ok(data) => data,
                        Err(_trailers) => continue,
                    };
                    if !this.shared.take_bytes(data.len()) {
                        this.done = true;
                        let why = format!(
                            "responses in this call passed the budget of {} bytes; raise `http_response_bytes` for this plugin",
                            this.shared.terms.max_bytes
                        );
                        let err = this.shared.deny(HttpError::HttpResponseBodySize(None), why);
                        return Poll::Ready(Some(Err(err)));
                    }
                    let data = if this.redactor.is_empty() {
                        data
                    } else {
                        Bytes::from(this.redactor.push(&data))
                    };
                    if !data.is_empty() {
                        return Poll::Ready(Some(Ok(Frame::data(data))));
                    }
                }
                Poll::Ready(Some(Err(e))) => return Poll::Ready(Some(Err(HttpError::from(e)))),
                Poll::Ready(None) => {
                    this.done = true;
                    let tail = this.redactor.finish();
                    return Poll::Ready((!tail.is_empty()).then(|| Ok(Frame::data(Bytes::from(tail)))));
                }
                Poll::Pending => {
                    if this.deadline.as_mut().poll(cx).is_ready() {
                        this.done = true;
                        return Poll::Ready(Some(Err(HttpError::ConnectionReadTimeout)));
                    }
                    return Poll::Pending;
                }
            }
        }
    }
}
