//! A blocking HTTP client over `wasi:http/outgoing-handler`: one request,
//! no redirects, the response body read up to a size cap.

use std::time::Duration;

use url::Url;
use wasip2::http::outgoing_handler;
use wasip2::http::types::{
    ErrorCode, Fields, IncomingBody, Method, OutgoingBody, OutgoingRequest, RequestOptions, Scheme,
};
use wasip2::io::streams::StreamError;

/// What to send.
pub struct Request<'a> {
    pub method: &'a str,
    pub url: &'a Url,
    pub headers: &'a [(String, String)],
    pub body: Option<&'a [u8]>,
    pub timeout: Duration,
    pub max_bytes: u64,
}

/// What came back.
pub struct Response {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
    pub truncated: bool,
}

/// Why a request failed: the `wasi:http` error code, or a local reason.
#[derive(Debug)]
pub struct Failure(pub String);

impl From<ErrorCode> for Failure {
    fn from(code: ErrorCode) -> Self {
        Failure(describe(&code))
    }
}

/// The error code as its WIT name, with its payload when it has one.
fn describe(code: &ErrorCode) -> String {
    match code {
        ErrorCode::HttpRequestDenied => {
            "HTTP-request-denied (the host did not grant this destination)".into()
        }
        ErrorCode::DestinationIpProhibited => {
            "destination-IP-prohibited (the host refuses this address)".into()
        }
        ErrorCode::ConnectionLimitReached => {
            "connection-limit-reached (the call's request budget is used up)".into()
        }
        ErrorCode::HttpResponseBodySize(_) => {
            "HTTP-response-body-size (the call's response byte budget is used up)".into()
        }
        ErrorCode::InternalError(Some(m)) => format!("internal-error: {m}"),
        ErrorCode::DnsError(e) => format!("DNS-error: {}", e.rcode.as_deref().unwrap_or("lookup failed")),
        other => format!("{other:?}"),
    }
}

/// Sends `req` and reads the response.
pub fn send(req: &Request<'_>) -> Result<Response, Failure> {
    let mut fields = Vec::with_capacity(req.headers.len());
    for (name, value) in req.headers {
        fields.push((name.to_ascii_lowercase(), value.clone().into_bytes()));
    }
    let headers =
        Fields::from_list(&fields).map_err(|e| Failure(format!("invalid request header: {e:?}")))?;
    let outgoing = OutgoingRequest::new(headers);
    let method = match req.method {
        "GET" => Method::Get,
        "POST" => Method::Post,
        "PUT" => Method::Put,
        "DELETE" => Method::Delete,
        "PATCH" => Method::Patch,
        "HEAD" => Method::Head,
        "OPTIONS" => Method::Options,
        other => Method::Other(other.to_string()),
    };
    let bad = |what: &str| Failure(format!("the URL's {what} is not accepted"));
    outgoing.set_method(&method).map_err(|()| bad("method"))?;
    let scheme = match req.url.scheme() {
        "http" => Scheme::Http,
        "https" => Scheme::Https,
        other => {
            return Err(Failure(format!(
                "unsupported scheme {other:?}: use http or https"
            )));
        }
    };
    outgoing.set_scheme(Some(&scheme)).map_err(|()| bad("scheme"))?;
    let host = req.url.host_str().ok_or_else(|| bad("host"))?;
    let authority = match req.url.port() {
        Some(port) => format!("{host}:{port}"),
        None => host.to_string(),
    };
    outgoing
        .set_authority(Some(&authority))
        .map_err(|()| bad("host"))?;
    let mut path = req.url.path().to_string();
    if let Some(q) = req.url.query() {
        path.push('?');
        path.push_str(q);
    }
    outgoing
        .set_path_with_query(Some(&path))
        .map_err(|()| bad("path"))?;

    let options = RequestOptions::new();
    let nanos = u64::try_from(req.timeout.as_nanos()).unwrap_or(u64::MAX);
    // A host may not support every timeout; those it refuses are ignored.
    let _ = options.set_connect_timeout(Some(nanos));
    let _ = options.set_first_byte_timeout(Some(nanos));
    let _ = options.set_between_bytes_timeout(Some(nanos));

    let body = outgoing
        .body()
        .map_err(|()| Failure("the request body is unavailable".into()))?;
    let pending = outgoing_handler::handle(outgoing, Some(options))?;
    {
        let stream = body
            .write()
            .map_err(|()| Failure("the request body is unavailable".into()))?;
        for chunk in req.body.unwrap_or_default().chunks(4096) {
            stream
                .blocking_write_and_flush(chunk)
                .map_err(|e| stream_failure("writing the request body", e))?;
        }
    }
    OutgoingBody::finish(body, None)?;

    pending.subscribe().block();
    let incoming = match pending.get() {
        Some(Ok(result)) => result?,
        _ => return Err(Failure("the response never arrived".into())),
    };
    let status = incoming.status();
    let headers = incoming
        .headers()
        .entries()
        .into_iter()
        .map(|(k, v)| (k, String::from_utf8_lossy(&v).into_owned()))
        .collect();
    let body = incoming
        .consume()
        .map_err(|()| Failure("the response body is unavailable".into()))?;
    let (bytes, truncated) = read_body(&body, req.max_bytes)?;
    drop(body);
    Ok(Response {
        status,
        headers,
        body: bytes,
        truncated,
    })
}

fn read_body(body: &IncomingBody, max: u64) -> Result<(Vec<u8>, bool), Failure> {
    let stream = body
        .stream()
        .map_err(|()| Failure("the response body is unavailable".into()))?;
    let mut out = Vec::new();
    loop {
        let room = max.saturating_sub(out.len() as u64);
        if room == 0 {
            return Ok((out, true));
        }
        match stream.blocking_read(room.min(64 * 1024)) {
            Ok(chunk) => out.extend_from_slice(&chunk),
            Err(StreamError::Closed) => return Ok((out, false)),
            Err(e) => return Err(stream_failure("reading the response", e)),
        }
    }
}

fn stream_failure(what: &str, e: StreamError) -> Failure {
    match e {
        StreamError::Closed => Failure(format!("{what}: the stream closed")),
        StreamError::LastOperationFailed(err) => match wasip2::http::types::http_error_code(&err) {
            Some(code) => Failure(format!("{what}: {}", describe(&code))),
            None => Failure(format!("{what}: {}", err.to_debug_string())),
        },
    }
}
