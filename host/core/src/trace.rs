//! # W3C trace context: one trace across nested and bridged calls
//!
//! An MCP client may put a W3C `traceparent` (and `tracestate`) in a
//! request's `_meta` (MCP 2026-07-28; earlier clients do it too), or an
//! HTTP client in its request's headers. toolhost carries it into every
//! call the request causes — nested calls from plugins and code mode, and
//! requests to bridged MCP servers — so their spans join the caller's
//! trace. Without tracing on, it passes the context on unchanged, as a W3C
//! intermediary that does not participate does; with tracing on (see
//! [`crate::spans`]), each span it makes becomes the parent of what is
//! made under it, here and in the bridged servers.
//!
//! The context is parsed once, where it enters ([`TraceContext::parse`]),
//! and refused when malformed (the W3C rule: an invalid `traceparent` is
//! ignored, as if absent), so no hop passes on what the next one would have
//! to reject.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use crate::spans::LocalSpan;

/// The `_meta` key of the trace parent (W3C `traceparent`).
pub const TRACEPARENT: &str = "traceparent";

/// The `_meta` key of the vendors' trace state (W3C `tracestate`).
pub const TRACESTATE: &str = "tracestate";

/// The longest `tracestate` carried: W3C allows 32 members of at most 256
/// characters; longer ones are dropped rather than truncated mid-member.
pub const MAX_TRACESTATE: usize = 8192;

/// A call's W3C trace context, valid by construction.
#[derive(Debug, Clone)]
pub struct TraceContext {
    /// Made when first asked for, for a local span's context: most never
    /// leave the process (see [`TraceContext::of_span`]).
    traceparent: std::sync::OnceLock<String>,
    tracestate: Option<String>,
    /// The span made here that this context names as parent (none: the
    /// context came from outside).
    local: Option<LocalSpan>,
    /// Set when the local span is offered to the call dispatched under it
    /// as that call's own span ([`TraceContext::offered_to_call`]): true
    /// until a call takes it, shared by the copies.
    offer: Option<Arc<AtomicBool>>,
}

impl PartialEq for TraceContext {
    fn eq(&self, other: &Self) -> bool {
        self.traceparent() == other.traceparent() && self.tracestate == other.tracestate
    }
}

impl Eq for TraceContext {}

impl TraceContext {
    /// The context of `traceparent` and `tracestate`, or `None` when the
    /// `traceparent` is not a valid W3C one (version `00`: `00-` 32 hex
    /// trace id `-` 16 hex parent id `-` 2 hex flags; all-zero ids
    /// invalid; a later version's longer form is accepted by its first 55
    /// characters, as the W3C asks). A `tracestate` that is not printable
    /// ASCII or is over [`MAX_TRACESTATE`] is dropped, the parent kept.
    pub fn parse(traceparent: &str, tracestate: Option<&str>) -> Option<TraceContext> {
        let traceparent = traceparent.trim();
        let bytes = traceparent.as_bytes();
        if bytes.len() < 55 {
            return None;
        }
        let hex = |range: std::ops::Range<usize>| {
            bytes[range.clone()]
                .iter()
                .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(b))
                .then(|| &traceparent[range])
        };
        let version = hex(0..2)?;
        let trace_id = hex(3..35)?;
        let parent_id = hex(36..52)?;
        hex(53..55)?;
        let dashes = bytes[2] == b'-' && bytes[35] == b'-' && bytes[52] == b'-';
        let length_ok = match version {
            "00" => bytes.len() == 55,
            "ff" => false,
            _ => bytes.len() == 55 || bytes[55] == b'-',
        };
        let zero = |id: &str| id.bytes().all(|b| b == b'0');
        if !dashes || !length_ok || zero(trace_id) || zero(parent_id) {
            return None;
        }
        let tracestate = tracestate
            .map(str::trim)
            .filter(|s| !s.is_empty() && s.len() <= MAX_TRACESTATE)
            .filter(|s| s.bytes().all(|b| (b' '..=b'~').contains(&b)))
            .map(str::to_string);
        Some(TraceContext {
            traceparent: traceparent[..55].to_string().into(),
            tracestate,
            local: None,
            offer: None,
        })
    }

    /// The context naming `span` as parent, or `None` when `span` holds
    /// no valid span context. Its W3C form is written only when a call
    /// sends it out of the process (a bridged server's request): the spans
    /// made here under it take `span` itself.
    pub(crate) fn of_span(span: &LocalSpan) -> Option<TraceContext> {
        let sc = span.span_context();
        if !sc.is_valid() {
            return None;
        }
        let state = sc.trace_state();
        let tracestate = (*state != opentelemetry::trace::TraceState::NONE)
            .then(|| state.header())
            .filter(|state| !state.is_empty());
        Some(TraceContext {
            traceparent: std::sync::OnceLock::new(),
            tracestate,
            local: Some(span.clone()),
            offer: None,
        })
    }

    /// This context, its span offered to the one call dispatched under it
    /// as that call's own: an MCP `tools/call`'s server span, which the
    /// OpenTelemetry conventions make the tool's `execute_tool` span, so
    /// the client's call is one span, not a server span with a call span
    /// under it. The first call at depth 0 to see it takes it; a context
    /// from outside the process has no span to offer.
    pub fn offered_to_call(&self) -> TraceContext {
        TraceContext {
            offer: self.local.as_ref().map(|_| Arc::new(AtomicBool::new(true))),
            ..self.clone()
        }
    }

    /// The offered span, to the first caller only.
    pub(crate) fn take_offered_span(&self) -> Option<LocalSpan> {
        let offer = self.offer.as_ref()?;
        offer
            .swap(false, Ordering::AcqRel)
            .then(|| self.local.clone())
            .flatten()
    }

    /// The span made here this context names, if it was made here.
    pub(crate) fn local(&self) -> Option<&LocalSpan> {
        self.local.as_ref()
    }

    /// The span context spans made under this one take as parent: the
    /// local span's own, or the remote parent this context names.
    pub(crate) fn span_context(&self) -> opentelemetry::trace::SpanContext {
        use opentelemetry::trace::{SpanContext, SpanId, TraceFlags, TraceId, TraceState};
        if let Some(local) = &self.local {
            return local.span_context();
        }
        let p = self.traceparent();
        // Valid by construction: lowercase hex at these places.
        let (Ok(trace_id), Ok(span_id), Ok(flags)) = (
            TraceId::from_hex(&p[3..35]),
            SpanId::from_hex(&p[36..52]),
            u8::from_str_radix(&p[53..55], 16),
        ) else {
            return SpanContext::empty_context();
        };
        let state = self
            .tracestate
            .as_deref()
            .and_then(|s| s.parse::<TraceState>().ok())
            .unwrap_or_default();
        SpanContext::new(trace_id, span_id, TraceFlags::new(flags), true, state)
    }

    /// The OpenTelemetry context another tracer's spans made under this
    /// one take as parent.
    pub(crate) fn otel_context(&self) -> opentelemetry::Context {
        use opentelemetry::trace::TraceContextExt;
        match &self.local {
            Some(local) => local.otel_context(),
            None => opentelemetry::Context::new().with_remote_span_context(self.span_context()),
        }
    }

    /// The `traceparent` value (its version-00 form).
    pub fn traceparent(&self) -> &str {
        self.traceparent.get_or_init(|| {
            // Only a local span's context is made without one, and it was
            // valid when made.
            let Some(local) = &self.local else {
                return String::new();
            };
            let sc = local.span_context();
            format!(
                "00-{}-{}-{:02x}",
                sc.trace_id(),
                sc.span_id(),
                sc.trace_flags().to_u8()
            )
        })
    }

    /// The `tracestate` value, if one came with it.
    pub fn tracestate(&self) -> Option<&str> {
        self.tracestate.as_deref()
    }

    /// The trace id, as a number (its 32 hex digits read big-endian).
    pub fn trace_id_number(&self) -> u128 {
        match &self.local {
            Some(local) => u128::from_be_bytes(local.span_context().trace_id().to_bytes()),
            // Valid by construction: 32 lowercase hex digits.
            None => u128::from_str_radix(self.trace_id(), 16).unwrap_or_default(),
        }
    }

    /// The 32 hex digits of the trace id.
    pub fn trace_id(&self) -> &str {
        &self.traceparent()[3..35]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const VALID: &str = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";

    #[test]
    fn a_valid_parent_is_kept_with_its_state() {
        let ctx = TraceContext::parse(VALID, Some("rojo=00f067aa0ba902b7")).unwrap();
        assert_eq!(ctx.traceparent(), VALID);
        assert_eq!(ctx.tracestate(), Some("rojo=00f067aa0ba902b7"));
        assert_eq!(ctx.trace_id(), "4bf92f3577b34da6a3ce929d0e0e4736");
    }

    #[test]
    fn malformed_parents_are_refused() {
        for bad in [
            "",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7",
            "00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01",
            "00-00000000000000000000000000000000-00f067aa0ba902b7-01",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01",
            "ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-extra",
            "00_4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
            "00-4bf92f3577b34da6a3ce929d0e0e473é-00f067aa0ba902b7-01",
        ] {
            assert_eq!(TraceContext::parse(bad, None), None, "{bad:?}");
        }
    }

    #[test]
    fn a_later_version_is_read_by_its_first_fields() {
        let later = "01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-more";
        let ctx = TraceContext::parse(later, None).unwrap();
        assert_eq!(ctx.traceparent(), &later[..55]);
    }

    #[test]
    fn a_bad_state_is_dropped_and_the_parent_kept() {
        let long = "a=".to_string() + &"b".repeat(MAX_TRACESTATE);
        for state in ["", "x=\u{7}", long.as_str()] {
            let ctx = TraceContext::parse(VALID, Some(state)).unwrap();
            assert_eq!(ctx.tracestate(), None);
        }
    }
}
