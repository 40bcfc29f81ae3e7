//! # The host's own span recorder: spans as small records, nothing more
//!
//! [`SpanRecorder`] is the tracer the operator's `[traces]` and
//! `[console]` give the host (a host application may hand in any
//! OpenTelemetry tracer instead, see [`crate::spans::Tracing`]). Its span
//! is one plain record (name, kind, ids, times, attributes, status) that
//! [`crate::spans`] holds directly, with none of OpenTelemetry's
//! `Context` around it (a boxed span behind a shared, locked cell, each
//! span) and, when it ends, filed with its call in the console's
//! [`CallLog`] and handed whole to a [`SpanSink`] (the OTLP exporter's
//! queue): no per-span processors, no copy of the span for each, no span
//! limits to enforce on spans whose attributes the host itself bounds.
//! With only the console on, nothing but what the console shows is kept.
//!
//! Its spans are real as far as anyone outside sees: each has a trace id
//! (its parent's, else a new one) and a span id of its own, so the W3C
//! context a bridged server gets names it, and the trace a caller sent
//! goes on through it. Sampling is OpenTelemetry's
//! `ParentBased(TraceIdRatioBased(ratio))`, decision for decision: a span
//! under a parent follows the parent's sampled flag; a new trace is
//! recorded when its trace id's low 63 bits fall under `ratio` of their
//! range, so a collector or another service sampling the same trace by
//! ratio decides alike.

use std::borrow::Cow;
use std::cell::Cell;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::SystemTime;

use opentelemetry::KeyValue;
use opentelemetry::trace::{SpanContext, SpanId, SpanKind, Status, TraceFlags, TraceId, TraceState};

use crate::call_log::{CallLog, EndedSpan, call_id_of};
use crate::registry::CallId;

/// Where ended spans go to be exported: called on the thread that ends the
/// span, so it must not block (a full queue drops the span).
pub trait SpanSink: Send + Sync + 'static {
    /// Takes what it keeps of `span`, which has ended (its attribute list
    /// goes back to the recorder for the next span, see
    /// [`attribute_list`]).
    fn take(&self, span: &FinishedSpan);
}

/// The most emptied attribute lists a thread keeps for the spans it makes
/// next, and the largest one kept.
const SPARE_LISTS: usize = 8;
const SPARE_LIST_ROOM: usize = 32;

thread_local! {
    /// Attribute lists of spans this thread ended, emptied: a span's list
    /// is taken from here and given back, not allocated and freed each
    /// time (and the memory reused is still in the caches).
    static SPARE: std::cell::RefCell<Vec<Vec<KeyValue>>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// An empty attribute list with room for `room`: one a span ended on this
/// thread left, when there is one. What a span's maker builds its
/// attributes in.
pub fn attribute_list(room: usize) -> Vec<KeyValue> {
    let mut list = SPARE
        .try_with(|spare| spare.try_borrow_mut().ok().and_then(|mut spare| spare.pop()))
        .ok()
        .flatten()
        .unwrap_or_default();
    list.reserve(room);
    list
}

/// Gives `list` back for the next span made on this thread, emptied.
fn give_back(mut list: Vec<KeyValue>) {
    if list.capacity() == 0 || list.capacity() > SPARE_LIST_ROOM {
        return;
    }
    list.clear();
    let _ = SPARE.try_with(|spare| {
        if let Ok(mut spare) = spare.try_borrow_mut()
            && spare.len() < SPARE_LISTS
        {
            spare.push(list);
        }
    });
}

/// A span that ended, with everything an exporter sends of it.
#[derive(Debug, Clone)]
pub struct FinishedSpan {
    /// Its trace and span ids, flags and trace state.
    pub context: SpanContext,
    /// Its parent's span id ([`SpanId::INVALID`] for a trace's root).
    pub parent_span_id: SpanId,
    /// Whether the parent came from another process.
    pub parent_is_remote: bool,
    /// Its name.
    pub name: Cow<'static, str>,
    /// Its kind.
    pub kind: SpanKind,
    /// When it began.
    pub start: SystemTime,
    /// When it ended.
    pub end: SystemTime,
    /// Its attributes, in the order they were set (a key set twice appears
    /// twice; the later one stands).
    pub attributes: Vec<KeyValue>,
    /// How it ended.
    pub status: Status,
}

/// A tracer whose spans are filed with their calls in a [`CallLog`] (by
/// their `gen_ai.tool.call.id`, else their parent's) and handed to a
/// [`SpanSink`] when they end. Cheap to clone.
#[derive(Clone)]
pub struct SpanRecorder {
    shared: Arc<Shared>,
}

struct Shared {
    /// New traces whose id's low 63 bits are below this are recorded (all
    /// of them from `ratio` 1.0, whose bound is 2^63).
    ratio_bound: u64,
    calls: Option<Arc<CallLog>>,
    sink: Option<Arc<dyn SpanSink>>,
}

impl std::fmt::Debug for SpanRecorder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SpanRecorder")
            .field("calls", &self.shared.calls.is_some())
            .field("sink", &self.shared.sink.is_some())
            .finish()
    }
}

impl SpanRecorder {
    /// Spans filed in `calls` and handed to `sink` (each when given), new
    /// traces recorded at `ratio` (0.0 to 1.0; see the module's doc).
    pub fn new(ratio: f64, calls: Option<Arc<CallLog>>, sink: Option<Arc<dyn SpanSink>>) -> SpanRecorder {
        // OpenTelemetry's `TraceIdRatioBased`, to the bit.
        let ratio_bound = (ratio.max(0.0) * (1u64 << 63) as f64) as u64;
        SpanRecorder {
            shared: Arc::new(Shared {
                ratio_bound,
                calls,
                sink,
            }),
        }
    }

    /// Spans filed in `calls` only, every one recorded: the console's.
    pub fn filing(calls: Arc<CallLog>) -> SpanRecorder {
        SpanRecorder::new(1.0, Some(calls), None)
    }

    /// The trace a span under `parent` belongs to, and whether it is
    /// recorded: the parent's, when valid, as it decided; else a new trace,
    /// as the ratio decides. What a span's maker asks before it describes
    /// the span, which it need not do when it is not recorded (then
    /// [`SpanRecorder::start`] takes the decision).
    pub fn decide(&self, parent: &SpanContext) -> (TraceId, bool) {
        if parent.is_valid() {
            return (parent.trace_id(), parent.is_sampled());
        }
        let trace_id = TraceId::from_bytes(random_bytes());
        (trace_id, self.samples(trace_id))
    }

    /// Whether a new trace of id `trace_id` is recorded.
    fn samples(&self, trace_id: TraceId) -> bool {
        let bytes = trace_id.to_bytes();
        let mut low = [0u8; 8];
        low.copy_from_slice(&bytes[8..]);
        (u64::from_be_bytes(low) >> 1) < self.shared.ratio_bound
    }

    /// Starts span `name` of `kind` under `parent` (an invalid context: the
    /// root of a new trace) at `start`, in the trace and with the sampling
    /// decision [`SpanRecorder::decide`] gave, if it was asked. A span not
    /// recorded keeps only its context, for what is made under it.
    ///
    /// It is filed with the call its `gen_ai.tool.call.id` names, else
    /// with its parent's (a step of a call is filed with its call without
    /// carrying the attribute itself: see [`RecordedSpan::call_id`]).
    pub fn start(
        &self,
        name: Cow<'static, str>,
        kind: SpanKind,
        attributes: Vec<KeyValue>,
        under: Under<'_>,
        start: Option<SystemTime>,
        decided: Option<(TraceId, bool)>,
    ) -> RecordedSpan {
        let Under {
            context: parent,
            call: parent_call,
        } = under;
        let (trace_id, sampled) = decided.unwrap_or_else(|| self.decide(parent));
        let (state, parent_span_id) = match parent.is_valid() {
            true => (parent.trace_state().clone(), parent.span_id()),
            false => (TraceState::default(), SpanId::INVALID),
        };
        let flags = if sampled {
            TraceFlags::SAMPLED
        } else {
            TraceFlags::default()
        };
        let context = SpanContext::new(trace_id, SpanId::from_bytes(random_bytes()), flags, false, state);
        let live = sampled.then(|| {
            let mut live = Live {
                parent_span_id,
                parent_is_remote: parent.is_remote(),
                name,
                kind,
                start: start.unwrap_or_else(SystemTime::now),
                attributes: Vec::new(),
                status: Status::Unset,
                call_id: None,
            };
            if self.shared.calls.is_some() {
                live.call_id = attributes.iter().find_map(call_id_of).or(parent_call);
            }
            if self.shared.sink.is_some() {
                // Taken whole (its maker leaves room for what it sets later).
                live.attributes = attributes;
            }
            live
        });
        RecordedSpan {
            shared: Arc::clone(&self.shared),
            context,
            live: Mutex::new(live),
        }
    }
}

/// What a span is started under.
#[derive(Debug, Clone, Copy)]
pub struct Under<'a> {
    /// The parent's span context (an invalid one: the span starts a
    /// trace).
    pub context: &'a SpanContext,
    /// The call the parent is filed with, if any.
    pub call: Option<CallId>,
}

impl<'a> Under<'a> {
    /// Under `context`, no call.
    pub fn context(context: &'a SpanContext) -> Under<'a> {
        Under { context, call: None }
    }
}

/// A span of a [`SpanRecorder`]: recording until it ends, unless its trace
/// was sampled out (then it is only a context for what is made under it).
/// Its methods take `&self`: a request's span is shared with the call that
/// takes it on as its own (see [`crate::trace::TraceContext::offered_to_call`]).
pub struct RecordedSpan {
    shared: Arc<Shared>,
    context: SpanContext,
    /// `None` once ended, or from the start when not recorded.
    live: Mutex<Option<Live>>,
}

impl std::fmt::Debug for RecordedSpan {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RecordedSpan")
            .field("context", &self.context)
            .field("recording", &self.is_recording())
            .finish()
    }
}

/// What a recording span has gathered so far.
struct Live {
    parent_span_id: SpanId,
    parent_is_remote: bool,
    name: Cow<'static, str>,
    kind: SpanKind,
    start: SystemTime,
    /// Kept only when there is a sink to send them to.
    attributes: Vec<KeyValue>,
    status: Status,
    /// The call the console files the span under.
    call_id: Option<CallId>,
}

impl RecordedSpan {
    /// Its trace and span ids, flags and trace state.
    pub fn span_context(&self) -> &SpanContext {
        &self.context
    }

    /// The call it is filed with, while it records (none without a
    /// console to file it in): what the spans made under it are filed
    /// with too, unless they name another.
    pub fn call_id(&self) -> Option<CallId> {
        if self.shared.calls.is_none() || !self.is_recording() {
            return None;
        }
        let live = self.live.lock().unwrap_or_else(PoisonError::into_inner);
        live.as_ref().and_then(|live| live.call_id)
    }

    /// Whether it is recorded: its trace was sampled (whether or not it
    /// has ended).
    pub fn is_recording(&self) -> bool {
        self.context.is_sampled()
    }

    /// Runs `change` on what it has gathered, while it records.
    fn change(&self, change: impl FnOnce(&mut Live)) {
        if !self.is_recording() {
            return;
        }
        let mut live = self.live.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(live) = live.as_mut() {
            change(live);
        }
    }

    /// Sets `attribute` (a key set twice is kept twice; the later stands).
    pub fn set_attribute(&self, attribute: KeyValue) {
        self.change(|live| {
            if self.shared.calls.is_some()
                && let Some(call_id) = call_id_of(&attribute)
            {
                live.call_id = Some(call_id);
            }
            if self.shared.sink.is_some() {
                live.attributes.push(attribute);
            }
        });
    }

    /// Sets its status, as OpenTelemetry says: `Ok` is final, `Unset`
    /// changes nothing.
    pub fn set_status(&self, status: Status) {
        self.change(|live| match (&live.status, &status) {
            (Status::Ok, _) | (_, Status::Unset) => {}
            _ => live.status = status,
        });
    }

    /// Renames it.
    pub fn update_name(&self, name: Cow<'static, str>) {
        self.change(|live| live.name = name);
    }

    /// Ends it at `end`: filed with its call and handed to the sink, once
    /// (ending it again does nothing).
    pub fn end(&self, end: SystemTime) {
        if !self.is_recording() {
            return;
        }
        let Some(mut live) = self.live.lock().unwrap_or_else(PoisonError::into_inner).take() else {
            return;
        };
        if let (Some(calls), Some(call_id)) = (&self.shared.calls, live.call_id) {
            let error = match &live.status {
                Status::Error { description } => Some(description.to_string()),
                _ => None,
            };
            // The name is the console's alone when nothing is exported.
            let name = match self.shared.sink {
                Some(_) => live.name.clone(),
                None => std::mem::take(&mut live.name),
            };
            calls.record_span(
                call_id,
                EndedSpan {
                    name,
                    span_id: Some(self.context.span_id()),
                    start: live.start,
                    end,
                    error,
                },
            );
        }
        if let Some(sink) = &self.shared.sink {
            let finished = FinishedSpan {
                context: self.context.clone(),
                parent_span_id: live.parent_span_id,
                parent_is_remote: live.parent_is_remote,
                name: live.name,
                kind: live.kind,
                start: live.start,
                end,
                attributes: live.attributes,
                status: live.status,
            };
            sink.take(&finished);
            give_back(finished.attributes);
        }
    }
}

impl Drop for RecordedSpan {
    fn drop(&mut self) {
        // A span dropped unended (a call abandoned) ends now, as the SDK's do.
        self.end(SystemTime::now());
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

    /// Starts span `name` under `parent` (none: a new trace).
    fn start(tracer: &SpanRecorder, name: &'static str, parent: Option<&SpanContext>) -> RecordedSpan {
        let root = SpanContext::empty_context();
        tracer.start(
            name.into(),
            SpanKind::Internal,
            Vec::new(),
            Under::context(parent.unwrap_or(&root)),
            None,
            None,
        )
    }

    #[derive(Default)]
    struct Kept(Mutex<Vec<FinishedSpan>>);

    impl SpanSink for Kept {
        fn take(&self, span: &FinishedSpan) {
            self.0
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .push(span.clone());
        }
    }

    #[test]
    fn a_span_goes_on_in_its_parents_trace_with_an_id_of_its_own() {
        let tracer = SpanRecorder::filing(Arc::new(CallLog::new(8)));
        let root = start(&tracer, "root", None);
        assert!(root.span_context().is_valid() && root.span_context().is_sampled());
        let child = start(&tracer, "child", Some(root.span_context()));
        assert_eq!(child.span_context().trace_id(), root.span_context().trace_id());
        assert_ne!(child.span_context().span_id(), root.span_context().span_id());
        assert!(child.is_recording());
    }

    #[test]
    fn an_ended_span_reaches_the_sink_whole_and_once() {
        let kept = Arc::new(Kept::default());
        let tracer = SpanRecorder::new(1.0, None, Some(kept.clone() as Arc<dyn SpanSink>));
        let root = start(&tracer, "root", None);
        let remote = root.span_context();
        let remote = SpanContext::new(
            remote.trace_id(),
            remote.span_id(),
            TraceFlags::SAMPLED,
            true,
            TraceState::NONE,
        );
        let child = tracer.start(
            "child".into(),
            SpanKind::Client,
            vec![KeyValue::new("a", 1_i64)],
            Under::context(&remote),
            None,
            None,
        );
        child.set_attribute(KeyValue::new("b", "two"));
        child.update_name("renamed".into());
        child.set_status(Status::error("broke"));
        child.set_status(Status::Unset);
        child.end(SystemTime::now());
        child.end(SystemTime::now());
        drop(child);
        let spans = kept.0.lock().unwrap();
        assert_eq!(spans.len(), 1, "ended once");
        let span = &spans[0];
        assert_eq!(span.name, "renamed");
        assert_eq!(span.kind, SpanKind::Client);
        assert_eq!(span.parent_span_id, root.span_context().span_id());
        assert!(span.parent_is_remote);
        assert_eq!(
            span.attributes,
            [KeyValue::new("a", 1_i64), KeyValue::new("b", "two")]
        );
        assert_eq!(span.status, Status::error("broke"));
        assert!(span.end >= span.start);
    }

    /// A recorder filing in a console's call log, where call `call_id` is
    /// running, and exporting to a sink that keeps what it gets.
    fn console_and_sink(call_id: CallId) -> (Arc<CallLog>, Arc<Kept>, SpanRecorder) {
        use crate::dispatch::CallInfo;
        use crate::metrics::CallObserver as _;
        use crate::registry::ToolAudience;
        let log = Arc::new(CallLog::new(8));
        let kept = Arc::new(Kept::default());
        let recorder = SpanRecorder::new(
            1.0,
            Some(Arc::clone(&log)),
            Some(kept.clone() as Arc<dyn SpanSink>),
        );
        let call = CallInfo {
            call_id,
            parent_call_id: None,
            name: "greet".into(),
            session_id: Arc::from("s"),
            audience: ToolAudience::Trusted,
            trace: None,
        };
        log.started(&call, &serde_json::Value::Null);
        (log, kept, recorder)
    }

    #[test]
    fn with_the_console_and_an_exporter_a_span_is_filed_with_its_call_and_exported_whole() {
        let (log, kept, tracer) = console_and_sink(7);
        let call_id = KeyValue::new(crate::spans::attr::GEN_AI_TOOL_CALL_ID, "7");
        let span = tracer.start(
            "sandbox greet".into(),
            SpanKind::Internal,
            vec![call_id.clone()],
            Under::context(&SpanContext::empty_context()),
            None,
            None,
        );
        span.set_attribute(KeyValue::new("toolhost.sandbox.fuel_consumed", 42_i64));
        let span_id = span.span_context().span_id();
        span.end(SystemTime::now());
        let filed = &log.snapshot().running[0].spans;
        assert_eq!(filed.len(), 1);
        assert_eq!(filed[0].name, "sandbox greet");
        assert_eq!(filed[0].span_id, Some(span_id));
        let exported = kept.0.lock().unwrap();
        assert_eq!(exported[0].name, "sandbox greet");
        assert_eq!(
            exported[0].attributes,
            [call_id, KeyValue::new("toolhost.sandbox.fuel_consumed", 42_i64)]
        );
    }

    #[test]
    fn a_steps_span_is_filed_with_its_calls_without_carrying_its_id() {
        use crate::spans::{Kind, Tracing};
        let (log, kept, recorder) = console_and_sink(9);
        let tracing = Tracing::recorded(recorder);
        let call_id = KeyValue::new(crate::spans::attr::GEN_AI_TOOL_CALL_ID, "9");
        let span = tracing.start("tools/call greet", Kind::Server, None, vec![call_id.clone()]);
        let step = span.child_lazily(&tracing, Kind::Internal, || ("admission".into(), Vec::new()));
        // A call made under it names its own: filed under that one.
        let nested = span.child_lazily(&tracing, Kind::Internal, || {
            (
                "execute_tool other".into(),
                vec![KeyValue::new(crate::spans::attr::GEN_AI_TOOL_CALL_ID, "10")],
            )
        });
        drop((step, nested));
        let filed: Vec<_> = log.snapshot().running[0]
            .spans
            .iter()
            .map(|s| s.name.clone())
            .collect();
        assert_eq!(filed, ["admission"]);
        drop(span);
        let exported = kept.0.lock().unwrap();
        let admission = exported.iter().find(|s| s.name == "admission").unwrap();
        assert!(admission.attributes.is_empty(), "{:?}", admission.attributes);
    }

    #[test]
    fn sampling_is_opentelemetrys_parent_based_trace_id_ratio() {
        use opentelemetry_sdk::trace::{Sampler, ShouldSample};
        let kept = Arc::new(Kept::default());
        for ratio in [0.0, 0.1, 0.5, 0.9] {
            let tracer = SpanRecorder::new(ratio, None, Some(kept.clone() as Arc<dyn SpanSink>));
            let sdk = Sampler::ParentBased(Box::new(Sampler::TraceIdRatioBased(ratio)));
            let mut recorded = 0;
            for _ in 0..2000 {
                let span = start(&tracer, "x", None);
                let trace_id = span.span_context().trace_id();
                let theirs = sdk.should_sample(None, trace_id, "x", &SpanKind::Internal, &[], &[]);
                let sampled = theirs.decision == opentelemetry_sdk::trace::SamplingDecision::RecordAndSample;
                assert_eq!(span.is_recording(), sampled, "ratio {ratio}, trace {trace_id}");
                assert_eq!(span.span_context().is_sampled(), sampled);
                recorded += usize::from(sampled);
                // Under it, the parent decides, whatever the ratio.
                let child = start(&tracer, "y", Some(span.span_context()));
                assert_eq!(child.is_recording(), sampled);
            }
            let expected = ratio * 2000.0;
            assert!(
                (recorded as f64 - expected).abs() <= 120.0,
                "ratio {ratio}: {recorded} of 2000"
            );
        }
    }

    #[test]
    fn an_ended_spans_attribute_list_is_taken_by_the_next_span_made_on_its_thread() {
        let kept = Arc::new(Kept::default());
        let tracer = SpanRecorder::new(1.0, None, Some(kept.clone() as Arc<dyn SpanSink>));
        let mut list = attribute_list(4);
        list.push(KeyValue::new("a", 1_i64));
        let at = list.as_ptr();
        let span = tracer.start(
            "x".into(),
            SpanKind::Internal,
            list,
            Under::context(&SpanContext::empty_context()),
            None,
            None,
        );
        span.end(SystemTime::now());
        let again = attribute_list(4);
        assert!(again.is_empty());
        assert_eq!(again.as_ptr(), at, "the same list, emptied");
        assert_eq!(kept.0.lock().unwrap()[0].attributes, [KeyValue::new("a", 1_i64)]);
        // A list too large to keep is not kept.
        let span = tracer.start(
            "y".into(),
            SpanKind::Internal,
            Vec::with_capacity(SPARE_LIST_ROOM + 1),
            Under::context(&SpanContext::empty_context()),
            None,
            None,
        );
        span.end(SystemTime::now());
        assert_eq!(attribute_list(0).capacity(), 0);
    }

    #[test]
    fn ids_differ_and_are_never_zero() {
        let a: [u8; 16] = random_bytes();
        let b: [u8; 16] = random_bytes();
        assert_ne!(a, b);
        assert!(a.iter().any(|&x| x != 0));
    }
}
