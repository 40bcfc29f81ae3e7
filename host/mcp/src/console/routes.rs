//! The console's routes: the static page, and the JSON API behind the
//! listener's authentication (see the [module](super) documentation).

use std::sync::Arc;
use std::time::Duration;

use crate::http::{BodyRefused, read_request_body};
use axum::extract::{Path, Request, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use serde_json::json;

use super::{Access, Console, ConsoleDecision};
use crate::auth::Grant;
use crate::bridge::McpDispatcher;
use crate::http::{StaticToken, json_response};
use crate::origin::OriginPolicy;
use crate::server::McpServer;
use toolhost_core::audit::{AuditQuery, read_tail};

const INDEX: &str = include_str!("assets/index.html");
const SCRIPT: &str = include_str!("assets/console.js");
const STYLE: &str = include_str!("assets/console.css");
/// Its icon: without one, a browser asks for `/favicon.ico`, which the
/// listener refuses without a token (an audited refusal per visit).
const ICON: &str = include_str!("assets/icon.svg");

/// Scripts, styles and requests of this origin only; nothing inline, no
/// plugin, no frame, no form posted anywhere.
const CSP: &str = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; \
                   connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

/// How often the page asks for the state, in milliseconds.
const REFRESH_MS: u64 = 2000;

/// The most audit lines one search answers.
const MAX_AUDIT_LINES: usize = 500;

/// The largest body of a decision (it arrives within the listener's
/// `body_timeout`, as every body does).
const MAX_DECISION_BYTES: usize = 4096;

struct Api {
    console: Arc<Console>,
    server: McpServer,
    body_timeout: Duration,
}

/// The console's two routers: the static page (no token), and the API,
/// which the caller puts behind the listener's authentication. Both answer
/// with the console's security headers; the API refuses a browser request
/// from another origin than its own or `origins`.
pub(crate) fn router(
    console: Arc<Console>,
    server: McpServer,
    origins: Arc<OriginPolicy>,
    body_timeout: Duration,
) -> (axum::Router, axum::Router) {
    let pages = axum::Router::new()
        .route(
            "/console",
            axum::routing::get(|| async { page("text/html; charset=utf-8", INDEX) }),
        )
        .route(
            "/console/",
            axum::routing::get(|| async { page("text/html; charset=utf-8", INDEX) }),
        )
        .route(
            "/console/console.js",
            axum::routing::get(|| async { page("text/javascript; charset=utf-8", SCRIPT) }),
        )
        .route(
            "/console/console.css",
            axum::routing::get(|| async { page("text/css; charset=utf-8", STYLE) }),
        )
        .route(
            "/console/icon.svg",
            axum::routing::get(|| async { page("image/svg+xml", ICON) }),
        )
        .layer(middleware::map_response(secured));
    let api = axum::Router::new()
        .route("/console/api/state", axum::routing::get(state))
        .route("/console/api/audit", axum::routing::get(audit))
        .route("/console/api/approvals/{id}", axum::routing::post(decide))
        .with_state(Arc::new(Api {
            console,
            server,
            body_timeout,
        }))
        .layer(middleware::from_fn_with_state(origins, same_origin))
        .layer(middleware::map_response(secured));
    (pages, api)
}

fn page(content_type: &'static str, body: &'static str) -> Response {
    ([(header::CONTENT_TYPE, content_type)], body).into_response()
}

/// Adds the console's security headers to `response`.
async fn secured(mut response: Response) -> Response {
    let headers = response.headers_mut();
    headers.insert(header::CONTENT_SECURITY_POLICY, HeaderValue::from_static(CSP));
    headers.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    headers.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    headers.insert(header::REFERRER_POLICY, HeaderValue::from_static("no-referrer"));
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    response
}

fn refused(status: StatusCode, why: &str) -> Response {
    json_response(status, &json!({ "error": why }))
}

/// Refuses (403) a browser request whose `Origin` is neither the page's
/// own (the request's `Host`) nor allowed by `policy`.
async fn same_origin(State(policy): State<Arc<OriginPolicy>>, request: Request, next: Next) -> Response {
    if let Some(origin) = request.headers().get(header::ORIGIN) {
        let host = request.headers().get(header::HOST).and_then(|h| h.to_str().ok());
        let allowed = origin.to_str().is_ok_and(|o| {
            policy.allows(o)
                || o.split_once("://")
                    .is_some_and(|(_, rest)| host.is_some_and(|h| rest.eq_ignore_ascii_case(h)))
        });
        if !allowed {
            return refused(StatusCode::FORBIDDEN, "the console answers its own page only");
        }
    }
    next.run(request).await
}

/// What the caller of `request` may do, and who it is; or why it may not
/// (HTTP 403).
fn access(console: &Console, request: &Request) -> Result<(Access, String), &'static str> {
    if request.extensions().get::<StaticToken>().is_some() {
        return Ok((Access::Operate, "static token".into()));
    }
    let Some(grant) = request.extensions().get::<Arc<Grant>>() else {
        return Err("the console needs a bearer token: serve with --token or [auth], not --no-token");
    };
    let holds = |scope: &Option<String>| scope.as_ref().is_some_and(|s| grant.scopes.contains(s));
    let scopes = console.scopes();
    if holds(&scopes.operate) {
        Ok((Access::Operate, grant.subject.clone()))
    } else if holds(&scopes.read) {
        Ok((Access::Read, grant.subject.clone()))
    } else {
        Err(
            "the token holds neither the console's read scope nor its operate scope ([console] read_scope, operate_scope)",
        )
    }
}

async fn state(State(api): State<Arc<Api>>, request: Request) -> Response {
    let (access, subject) = match access(&api.console, &request) {
        Ok(who) => who,
        Err(why) => return refused(StatusCode::FORBIDDEN, why),
    };
    let console = &api.console;
    let pending = console.approvals.as_ref().map(|a| a.list()).unwrap_or_default();
    let body = json!({
        "who": { "subject": subject, "access": access },
        "refresh_ms": REFRESH_MS,
        "calls": console.calls.snapshot(),
        "plugins": console.plugins.as_ref().map(|plugins| plugins()).unwrap_or_default(),
        "servers": api.server.dispatcher().mcp_status(),
        "approvals": {
            "enabled": console.approvals.is_some(),
            "max": console.approvals.as_ref().map(|a| a.max()),
            "pending": pending,
        },
        "audit": { "enabled": console.audit.is_some() },
    });
    json_response(StatusCode::OK, &body)
}

async fn audit(State(api): State<Arc<Api>>, request: Request) -> Response {
    if let Err(why) = access(&api.console, &request) {
        return refused(StatusCode::FORBIDDEN, why);
    }
    let Some(log) = &api.console.audit else {
        return json_response(
            StatusCode::OK,
            &json!({ "enabled": false, "lines": [], "note": "there is no audit log: set [audit] path" }),
        );
    };
    let mut query = AuditQuery {
        limit: 100,
        ..AuditQuery::default()
    };
    let pairs = request.uri().query().unwrap_or_default();
    for (key, value) in form_urlencoded::parse(pairs.as_bytes()) {
        let value = Some(value.into_owned()).filter(|v| !v.is_empty());
        match key.as_ref() {
            "text" => query.text = value,
            "event" => query.event = value,
            "limit" => {
                if let Some(n) = value.and_then(|v| v.parse::<usize>().ok()) {
                    query.limit = n.clamp(1, MAX_AUDIT_LINES);
                }
            }
            _ => {}
        }
    }
    let log = Arc::clone(log);
    let read = tokio::task::spawn_blocking(move || {
        // The lines still in the log's ring too (a failure to move them
        // was warned about; the file is read as it is).
        let _ = log.flush();
        read_tail(log.path(), &query)
    })
    .await;
    match read {
        Ok(Ok(tail)) => {
            let mut body = json!(tail);
            body["enabled"] = json!(true);
            json_response(StatusCode::OK, &body)
        }
        Ok(Err(e)) => {
            tracing::warn!("the console could not read the audit log: {e}");
            refused(
                StatusCode::INTERNAL_SERVER_ERROR,
                "the audit log could not be read (the server's log says why)",
            )
        }
        Err(_) => refused(StatusCode::INTERNAL_SERVER_ERROR, "the audit log read failed"),
    }
}

#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct DecisionBody {
    decision: ConsoleDecision,
}

async fn decide(State(api): State<Arc<Api>>, Path(id): Path<u64>, request: Request) -> Response {
    let (access, operator) = match access(&api.console, &request) {
        Ok(who) => who,
        Err(why) => return refused(StatusCode::FORBIDDEN, why),
    };
    if access != Access::Operate {
        return refused(
            StatusCode::FORBIDDEN,
            "this token may read the console, not decide approvals ([console] operate_scope)",
        );
    }
    let Some(approvals) = &api.console.approvals else {
        return refused(StatusCode::NOT_FOUND, "approvals are not decided on this console");
    };
    let json = request
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| {
            v.split(';')
                .next()
                .is_some_and(|t| t.trim().eq_ignore_ascii_case("application/json"))
        });
    if !json {
        return refused(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "a decision is sent as application/json",
        );
    }
    let body = match read_request_body(request.into_body(), MAX_DECISION_BYTES, api.body_timeout).await {
        Ok(bytes) => bytes,
        Err(BodyRefused::TooLarge) => {
            return refused(StatusCode::PAYLOAD_TOO_LARGE, "the decision is too large");
        }
        Err(BodyRefused::Late) => {
            return refused(StatusCode::REQUEST_TIMEOUT, "the decision did not arrive in time");
        }
    };
    let Ok(DecisionBody { decision }) = serde_json::from_slice(&body) else {
        return refused(
            StatusCode::BAD_REQUEST,
            r#"a decision is {"decision": "once"} or {"decision": "deny"}"#,
        );
    };
    match approvals.decide(id, decision) {
        Ok(request) => {
            if let Some(audit) = &api.console.audit {
                let mut line = serde_json::Map::new();
                line.insert("approval".into(), json!(id));
                line.insert("decision".into(), json!(decision));
                line.insert("operator".into(), json!(operator));
                line.insert("session".into(), json!(request.session_id));
                line.insert("summary".into(), json!(request.summary));
                audit.record("console_decision", line);
            }
            json_response(StatusCode::OK, &json!({ "id": id, "decision": decision }))
        }
        Err(e) => refused(StatusCode::NOT_FOUND, &e.to_string()),
    }
}
