//! A request's trace: the W3C context it came with, and its server span
//! when the server traces (see [`toolhost_core::spans`]).

use std::sync::Arc;

use rmcp::RoleServer;
use rmcp::model::{MetaObject, ProtocolVersion};
use rmcp::service::{NotificationContext, RequestContext};
use toolhost_core::span_recorder::attribute_list;
use toolhost_core::spans::{ActiveSpan, Attribute, Kind, Tracing, attr, interned};
use toolhost_core::trace::{TRACEPARENT, TRACESTATE, TraceContext};

/// The context of a request's server span, put in its extensions by the
/// handler that made the span ([`super::Observed`]): what the request's
/// calls are made under.
#[derive(Debug, Clone)]
pub(super) struct RequestTrace(pub Arc<TraceContext>);

/// The W3C trace context of a request: its server span's, when one was
/// made; else its `_meta`'s (MCP's own place for it), else its HTTP
/// request's `traceparent` header; `None` when none holds a valid one.
pub(super) fn trace_of(context: &RequestContext<RoleServer>) -> Option<Arc<TraceContext>> {
    if let Some(RequestTrace(trace)) = context.extensions.get::<RequestTrace>() {
        return Some(Arc::clone(trace));
    }
    caller_trace(context)
}

/// The trace context the caller sent: in `_meta`, else in the HTTP
/// request's `traceparent` header.
fn caller_trace(context: &RequestContext<RoleServer>) -> Option<Arc<TraceContext>> {
    sent_trace(&context.meta, context.extensions.get::<http::request::Parts>())
}

/// The trace context in a message's `_meta`, else in its HTTP request's
/// `traceparent` header.
fn sent_trace(meta: &MetaObject, parts: Option<&http::request::Parts>) -> Option<Arc<TraceContext>> {
    if let Some(parent) = meta.get_traceparent() {
        return TraceContext::parse(parent, meta.get_tracestate()).map(Arc::new);
    }
    let parts = parts?;
    let header = |name: &str| parts.headers.get(name).and_then(|v| v.to_str().ok());
    TraceContext::parse(header(TRACEPARENT)?, header(TRACESTATE)).map(Arc::new)
}

/// What every server span says of the message it stands for: its method,
/// the transport, the revision and the HTTP session, when known.
fn message_attributes(
    method: &'static str,
    parts: Option<&http::request::Parts>,
    version: Option<&ProtocolVersion>,
) -> Vec<Attribute> {
    // Room for what a request's span adds: its id, tool and operation,
    // and as the call's own span, the call's id, depth, source and error.
    let mut attributes = attribute_list(14);
    attributes.extend([
        Attribute::new(attr::MCP_METHOD, method),
        Attribute::new(
            attr::NETWORK_TRANSPORT,
            if parts.is_some() { "tcp" } else { "pipe" },
        ),
    ]);
    if let Some(version) = version {
        // A revision rmcp knows is a constant; another is the client's.
        let version: std::borrow::Cow<'static, str> = match super::observe::revision(Some(version)) {
            Some(known) => known.into(),
            None => version.to_string().into(),
        };
        attributes.push(Attribute::new(attr::MCP_PROTOCOL_VERSION, version));
    }
    if let Some(session) = parts
        .and_then(|p| p.headers.get("mcp-session-id"))
        .and_then(|v| v.to_str().ok())
    {
        attributes.push(Attribute::new(attr::MCP_SESSION, session.to_string()));
    }
    attributes
}

/// The server span of notification `method` (`notifications/cancelled`),
/// under the trace context it carries. (rmcp 3.11 hands a handler no
/// notification's `_meta`: the context comes from the HTTP request's
/// `traceparent` header, where there is one, else the span starts a trace.)
pub(super) fn notification_span(
    tracing: &Tracing,
    method: &'static str,
    context: &NotificationContext<RoleServer>,
    version: Option<&ProtocolVersion>,
) -> ActiveSpan {
    let parts = context.extensions.get::<http::request::Parts>();
    tracing.start_lazily(Kind::Server, sent_trace(&context.meta, parts).as_deref(), || {
        (method.into(), message_attributes(method, parts, version))
    })
}

/// The server span of request `method` (`tools/call`) about `target` (a
/// tool's or prompt's name), under the request's own trace context, named
/// `{method} {target}` as OpenTelemetry's MCP conventions say.
pub(super) fn request_span(
    tracing: &Tracing,
    method: &'static str,
    target: Option<&str>,
    context: &RequestContext<RoleServer>,
) -> ActiveSpan {
    tracing.start_lazily(Kind::Server, caller_trace(context).as_deref(), || {
        let parts = context.extensions.get::<http::request::Parts>();
        let mut attributes = message_attributes(method, parts, context.protocol_version().as_ref());
        attributes.push(Attribute::new(attr::JSONRPC_REQUEST_ID, request_id(&context.id)));
        // A target is a name the host has (see `Observed::span`): its span
        // name is made once (see `interned`).
        let name = match (method, target) {
            ("tools/call", Some(tool)) => {
                attributes.push(Attribute::new(attr::GEN_AI_TOOL, interned("", tool)));
                attributes.push(Attribute::new(attr::GEN_AI_OPERATION, "execute_tool"));
                interned("tools/call ", tool)
            }
            ("prompts/get", Some(prompt)) => {
                attributes.push(Attribute::new(attr::GEN_AI_PROMPT, interned("", prompt)));
                interned("prompts/get ", prompt)
            }
            _ => method.into(),
        };
        (name, attributes)
    })
}

/// Marks a request's span failed: `error_type` is `tool_error` for a
/// tool's result with `isError`, or the JSON-RPC error's code (also its
/// `rpc.response.status_code`).
pub(super) fn failed(span: &ActiveSpan, error_type: &str, message: &str) {
    if !span.is_recording() {
        return;
    }
    if error_type != "tool_error" {
        span.set(Attribute::new(attr::RPC_STATUS_CODE, error_type.to_string()));
    }
    span.fail(error_type.to_string(), message.to_string());
}

fn request_id(id: &rmcp::model::RequestId) -> String {
    match id {
        rmcp::model::NumberOrString::Number(n) => n.to_string(),
        rmcp::model::NumberOrString::String(s) => s.to_string(),
    }
}
