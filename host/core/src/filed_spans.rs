//! # Spans for the console alone: filed with their calls, nothing else
//!
//! With the console on and no `[traces]`, the spans of a call are only
//! ever shown beside it in the console's [`CallLog`]: their name, when
//! they ran, whether they failed. [`FilingTracer`] is an OpenTelemetry
//! tracer that keeps just that, so the dispatcher and the MCP server make
//! their spans as always (through [`crate::spans::Tracing`]) without an
//! SDK's span objects, attribute lists, sampler and processors behind
//! them: each span is a small record, handed to the call log when it ends.
//!
//! Its spans are real as far as anyone outside sees: each has a trace id
//! (its parent's, else a new one) and a span id of its own, so the W3C
//! context a bridged server gets names it, and the trace a caller sent
//! goes on through it.

use std::borrow::Cow;
use std::cell::Cell;
use std::sync::Arc;
use std::time::SystemTime;

use opentelemetry::trace::{
    SpanBuilder, SpanContext, SpanId, Status, TraceContextExt, TraceFlags, TraceId, TraceState, Tracer,
};
use opentelemetry::{Context, KeyValue};

use crate::call_log::{CallLog, EndedSpan, call_id_of};
use crate::registry::CallId;

/// A tracer whose spans are filed with their calls in a [`CallLog`] (by
/// their `gen_ai.tool.call.id`) when they end, and kept nowhere else.
#[derive(Debug, Clone)]
pub struct FilingTracer {
    log: Arc<CallLog>,
}

impl FilingTracer {
    /// Spans filed in `log`.
    pub fn new(log: Arc<CallLog>) -> FilingTracer {
        FilingTracer { log }
    }
}

impl Tracer for FilingTracer {
    type Span = FiledSpan;

    fn build_with_context(&self, builder: SpanBuilder, parent_cx: &Context) -> FiledSpan {
        let parent = parent_cx.span();
        let parent = parent.span_context();
        let (trace_id, state) = match parent.is_valid() {
            true => (parent.trace_id(), parent.trace_state().clone()),
            false => (TraceId::from_bytes(random_bytes()), TraceState::default()),
        };
        let span_id = SpanId::from_bytes(random_bytes());
        let mut span = FiledSpan {
            log: Arc::clone(&self.log),
            context: SpanContext::new(trace_id, span_id, TraceFlags::SAMPLED, false, state),
            name: builder.name,
            start: builder.start_time.unwrap_or_else(SystemTime::now),
            call_id: None,
            error: None,
            ended: false,
        };
        for attribute in builder.attributes.into_iter().flatten() {
            span.keep(&attribute);
        }
        span
    }
}

/// A span of a [`FilingTracer`]: what the console shows of it.
#[derive(Debug)]
pub struct FiledSpan {
    log: Arc<CallLog>,
    context: SpanContext,
    name: Cow<'static, str>,
    start: SystemTime,
    call_id: Option<CallId>,
    error: Option<String>,
    ended: bool,
}

impl FiledSpan {
    /// Keeps what the console files the span by: its call's id.
    fn keep(&mut self, attribute: &KeyValue) {
        if let Some(call_id) = call_id_of(attribute) {
            self.call_id = Some(call_id);
        }
    }
}

impl opentelemetry::trace::Span for FiledSpan {
    fn add_event_with_timestamp<T>(&mut self, _name: T, _timestamp: SystemTime, _attributes: Vec<KeyValue>)
    where
        T: Into<Cow<'static, str>>,
    {
    }

    fn span_context(&self) -> &SpanContext {
        &self.context
    }

    fn is_recording(&self) -> bool {
        !self.ended
    }

    fn set_attribute(&mut self, attribute: KeyValue) {
        self.keep(&attribute);
    }

    fn set_status(&mut self, status: Status) {
        if let Status::Error { description } = status {
            self.error = Some(description.into_owned());
        }
    }

    fn update_name<T>(&mut self, new_name: T)
    where
        T: Into<Cow<'static, str>>,
    {
        self.name = new_name.into();
    }

    fn add_link(&mut self, _span_context: SpanContext, _attributes: Vec<KeyValue>) {}

    fn end_with_timestamp(&mut self, timestamp: SystemTime) {
        if std::mem::replace(&mut self.ended, true) {
            return;
        }
        let Some(call_id) = self.call_id else {
            return;
        };
        self.log.record_span(
            call_id,
            EndedSpan {
                name: std::mem::take(&mut self.name).into_owned(),
                span_id: Some(self.context.span_id().to_string()),
                start: self.start,
                end: timestamp,
                error: self.error.take(),
            },
        );
    }
}

impl Drop for FiledSpan {
    fn drop(&mut self) {
        // A span dropped unended (a call abandoned) ends now, as the SDK's do.
        opentelemetry::trace::Span::end_with_timestamp(self, SystemTime::now());
    }
}

/// `N` random bytes, never all zero (an all-zero id is invalid): from a
/// generator per thread, seeded once from the system's randomness.
fn random_bytes<const N: usize>() -> [u8; N] {
    thread_local! {
        static STATE: Cell<u64> = Cell::new({
            let mut seed = [0u8; 8];
            let _ = getrandom::fill(&mut seed);
            u64::from_le_bytes(seed) | 1
        });
    }
    let mut out = [0u8; N];
    STATE.with(|state| {
        for chunk in out.chunks_mut(8) {
            // xorshift64*: fast and well spread, which is all an id needs.
            let mut x = state.get();
            x ^= x >> 12;
            x ^= x << 25;
            x ^= x >> 27;
            state.set(x);
            let n = x.wrapping_mul(0x2545_f491_4f6c_dd1d);
            chunk.copy_from_slice(&n.to_le_bytes()[..chunk.len()]);
        }
    });
    if out.iter().all(|&b| b == 0) {
        out[N - 1] = 1;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_span_goes_on_in_its_parents_trace_with_an_id_of_its_own() {
        use opentelemetry::trace::Span as _;
        let tracer = FilingTracer::new(Arc::new(CallLog::new(8)));
        let root = tracer.build_with_context(SpanBuilder::from_name("root"), &Context::new());
        assert!(root.span_context().is_valid() && root.span_context().is_sampled());
        let parent = Context::new().with_remote_span_context(root.span_context().clone());
        let child = tracer.build_with_context(SpanBuilder::from_name("child"), &parent);
        assert_eq!(child.span_context().trace_id(), root.span_context().trace_id());
        assert_ne!(child.span_context().span_id(), root.span_context().span_id());
        assert!(child.is_recording());
    }

    #[test]
    fn ids_differ_and_are_never_zero() {
        let a: [u8; 16] = random_bytes();
        let b: [u8; 16] = random_bytes();
        assert_ne!(a, b);
        assert!(a.iter().any(|&x| x != 0));
    }
}
