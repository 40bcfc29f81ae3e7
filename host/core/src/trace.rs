//! # W3C trace context: one trace across nested and bridged calls
//!
//! An MCP client may put a W3C `traceparent` (and `tracestate`) in a
//! request's `_meta` (MCP 2026-07-28; earlier clients do it too). toolhost
//! does not trace on its own yet: it carries the context it received, as a
//! W3C intermediary that does not participate forwards it unchanged, into
//! every call the request causes — nested calls from plugins and code mode,
//! and requests to bridged MCP servers — so their spans join the caller's
//! trace.
//!
//! The context is parsed once, where it enters ([`TraceContext::parse`]),
//! and refused when malformed (the W3C rule: an invalid `traceparent` is
//! ignored, as if absent), so no hop passes on what the next one would have
//! to reject.

/// The `_meta` key of the trace parent (W3C `traceparent`).
pub const TRACEPARENT: &str = "traceparent";

/// The `_meta` key of the vendors' trace state (W3C `tracestate`).
pub const TRACESTATE: &str = "tracestate";

/// The longest `tracestate` carried: W3C allows 32 members of at most 256
/// characters; longer ones are dropped rather than truncated mid-member.
pub const MAX_TRACESTATE: usize = 8192;

/// A call's W3C trace context, valid by construction.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TraceContext {
    traceparent: String,
    tracestate: Option<String>,
}

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
            traceparent: traceparent[..55].to_string(),
            tracestate,
        })
    }

    /// The `traceparent` value (its version-00 form).
    pub fn traceparent(&self) -> &str {
        &self.traceparent
    }

    /// The `tracestate` value, if one came with it.
    pub fn tracestate(&self) -> Option<&str> {
        self.tracestate.as_deref()
    }

    /// The 32 hex digits of the trace id.
    pub fn trace_id(&self) -> &str {
        &self.traceparent[3..35]
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
