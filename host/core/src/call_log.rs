//! # The call log: calls in flight and the last ones finished, for an operator
//!
//! [`CallLog`] is a [`CallObserver`] that keeps what an operator's console
//! shows of the calls (see `toolhost_mcp::console`): every call running
//! now, the last [`CallLog::capacity`] finished (a ring: the oldest goes
//! when a new one ends), the count of failed calls by error code, and each
//! component's calls, errors, fuel and peak memory. [`CallLog::snapshot`]
//! copies it out as plain, serializable [`CallView`]s.
//!
//! **Off the call path.** A call costs its record (the tool's name, cut to
//! [`MAX_NAME_CHARS`]; the session id is shared, not copied, and of the
//! trace only its id is kept) and two short holds of one mutex, never
//! across an `.await`; the ring is allocated once. A caller's made-up tool names cannot grow it:
//! the ring is bounded, and errors are counted by code (a closed set).
//!
//! ## Spans
//!
//! Each record has a list of [`SpanRecord`]s, empty unless a span recorder
//! fills it: a tracer that finishes a span of call `call_id` (the
//! [`CallInfo::call_id`] the dispatcher gave it, which a call's span
//! carries as `gen_ai.tool.call.id` and the spans of its steps take from
//! their parent: see [`crate::spans`]) hands it to
//! [`CallLog::record_span`], which keeps it with the call while the call is
//! in flight or still in the ring (at most [`MAX_SPANS`] a call), and the
//! console shows it under the call. toolhost's config plugs one in when the
//! console is on: the host's [`crate::span_recorder::SpanRecorder`]
//! files each span as it ends, and with `[traces]` exports it too.
//!
//! ```
//! use std::sync::Arc;
//! use toolhost_core::call_log::CallLog;
//! use toolhost_core::dispatch::Dispatcher;
//! use toolhost_core::metrics::CallObserver;
//! use toolhost_core::registry::Registry;
//!
//! let calls = Arc::new(CallLog::new(100));
//! let dispatcher = Dispatcher::builder(Registry::new())
//!     .observer(Arc::clone(&calls) as Arc<dyn CallObserver>)
//!     .build()
//!     .unwrap();
//! # drop(dispatcher);
//! assert!(calls.snapshot().finished.is_empty());
//! ```

use std::borrow::Cow;
use std::collections::{BTreeMap, HashMap, VecDeque};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant, SystemTime};

use opentelemetry::trace::SpanId;
use serde::Serialize;

use crate::dispatch::{CallInfo, CallOutcome, ToolCallEvent};
use crate::identity::ComponentHash;
use crate::metrics::CallObserver;
use crate::registry::{CallId, ToolAudience, ToolSource, Usage};
use crate::trace::TraceContext;

/// The most characters of a tool's name kept (a caller may ask for any
/// name, of any length).
pub const MAX_NAME_CHARS: usize = 200;

/// The most spans kept with one call.
pub const MAX_SPANS: usize = 64;

/// The most finished calls a log may keep.
pub const MAX_CAPACITY: usize = 10_000;

/// The most components whose usage is counted (one per distinct hash ever
/// called; a host that loads more stops counting the new ones).
const MAX_COMPONENTS: usize = 4096;

/// A span of a call that ended, as a span recorder hands it in.
#[derive(Debug, Clone)]
pub struct EndedSpan {
    /// The span's name.
    pub name: Cow<'static, str>,
    /// Its span id, when it has one.
    pub span_id: Option<SpanId>,
    /// When it began.
    pub start: SystemTime,
    /// When it ended.
    pub end: SystemTime,
    /// Its error, when it ended in one.
    pub error: Option<String>,
}

/// One span of a call, as the console shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SpanRecord {
    /// The span's name (`dispatch`, `instantiate`, `mcp tools/call`, ...).
    pub name: Cow<'static, str>,
    /// Its span id (shown as 16 hex digits), when it has one.
    #[serde(skip_serializing_if = "Option::is_none", serialize_with = "hex_span_id")]
    pub span_id: Option<SpanId>,
    /// When it began, from the call's start.
    #[serde(serialize_with = "micros")]
    pub start_offset: Duration,
    /// How long it took.
    #[serde(serialize_with = "micros")]
    pub duration: Duration,
    /// Its error, when it ended in one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// A span id as W3C writes it (16 hex digits), made only when shown.
fn hex_span_id<S: serde::Serializer>(id: &Option<SpanId>, s: S) -> Result<S::Ok, S::Error> {
    match id {
        Some(id) => s.collect_str(id),
        None => s.serialize_none(),
    }
}

fn micros<S: serde::Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_u64(u64::try_from(d.as_micros()).unwrap_or(u64::MAX))
}

/// How a call ended, for the log.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Ended {
    Outcome(CallOutcome),
    /// Its future was dropped unfinished (the request went away).
    Abandoned,
}

#[derive(Debug, Clone)]
struct Record {
    call_id: CallId,
    parent_call_id: Option<CallId>,
    tool: String,
    session: Arc<str>,
    audience: ToolAudience,
    started: SystemTime,
    clock: Instant,
    /// The trace it is part of (its id, not its context: a context of a
    /// span made here would keep the span's memory for as long as the
    /// record is kept).
    trace_id: Option<u128>,
    end: Option<End>,
    spans: Vec<SpanRecord>,
}

#[derive(Debug, Clone)]
struct End {
    duration: Duration,
    ended: Ended,
    source: Option<ToolSource>,
    usage: Option<Usage>,
}

/// One call as the console shows it: running (no `outcome` yet) or
/// finished.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CallView {
    /// The call's id.
    pub call_id: CallId,
    /// The calling call, for a nested one.
    pub parent_call_id: Option<CallId>,
    /// The tool, as the caller named it (or the tool it stood for), cut to
    /// [`MAX_NAME_CHARS`].
    pub tool: String,
    /// `builtin`, `wasm` or `mcp` (none for an unknown tool, or while running).
    pub source: Option<&'static str>,
    /// The component's hash (`wasm`) or the server's name (`mcp`).
    pub origin: Option<String>,
    /// The session that called.
    pub session: String,
    /// `trusted` or `public`.
    pub audience: ToolAudience,
    /// When it began (RFC 3339, milliseconds, UTC).
    pub started: String,
    /// How long it took, or has been running, in milliseconds.
    pub duration_ms: f64,
    /// `running`, `ok`, `error` or `abandoned`.
    pub outcome: &'static str,
    /// The error's code, for a failed call.
    pub error_code: Option<&'static str>,
    /// Fuel a sandboxed call used.
    pub fuel: Option<u64>,
    /// The most memory a sandboxed call's instance held, in bytes.
    pub peak_memory_bytes: Option<u64>,
    /// The caller's trace id (32 hex digits), when its request carried a
    /// W3C `traceparent`.
    pub trace_id: Option<String>,
    /// Its spans, as a span recorder reported them (see the
    /// [module](self)).
    pub spans: Vec<SpanRecord>,
}

/// A component's calls, as counted.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct ComponentUsage {
    /// Calls of its tools that ended.
    pub calls: u64,
    /// Those that failed.
    pub errors: u64,
    /// Fuel they used, in all.
    pub fuel: u64,
    /// The most memory one of its calls held, in bytes.
    pub peak_memory_bytes: u64,
}

/// What [`CallLog::snapshot`] copies out.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct CallsSnapshot {
    /// The calls running now, oldest first.
    pub running: Vec<CallView>,
    /// The last calls finished, newest first.
    pub finished: Vec<CallView>,
    /// Failed calls by error code, since the start.
    pub errors: BTreeMap<&'static str, u64>,
    /// Calls that ended since the start.
    pub total: u64,
}

struct Inner {
    running: HashMap<CallId, Record>,
    finished: VecDeque<Record>,
    errors: BTreeMap<&'static str, u64>,
    components: HashMap<ComponentHash, ComponentUsage>,
    total: u64,
}

/// The calls of a host, for its operator; see the [module](self).
pub struct CallLog {
    capacity: usize,
    inner: Mutex<Inner>,
}

impl std::fmt::Debug for CallLog {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CallLog")
            .field("capacity", &self.capacity)
            .finish_non_exhaustive()
    }
}

impl CallLog {
    /// A log keeping the last `capacity` finished calls (held to 1 ..=
    /// [`MAX_CAPACITY`]).
    pub fn new(capacity: usize) -> CallLog {
        let capacity = capacity.clamp(1, MAX_CAPACITY);
        CallLog {
            capacity,
            inner: Mutex::new(Inner {
                running: HashMap::new(),
                finished: VecDeque::with_capacity(capacity),
                errors: BTreeMap::new(),
                components: HashMap::new(),
                total: 0,
            }),
        }
    }

    /// How many finished calls it keeps.
    pub fn capacity(&self) -> usize {
        self.capacity
    }

    fn inner(&self) -> std::sync::MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Keeps `span` with the call `call_id`, while that call is running or
    /// among the finished ones kept; otherwise (or past [`MAX_SPANS`]) it
    /// is dropped. Returns whether it was kept.
    pub fn record_span(&self, call_id: CallId, span: EndedSpan) -> bool {
        let mut inner = self.inner();
        let record = match inner.running.get_mut(&call_id) {
            Some(record) => Some(record),
            None => inner.finished.iter_mut().rev().find(|r| r.call_id == call_id),
        };
        match record {
            Some(record) if record.spans.len() < MAX_SPANS => {
                record.spans.push(SpanRecord {
                    start_offset: span.start.duration_since(record.started).unwrap_or_default(),
                    duration: span.end.duration_since(span.start).unwrap_or_default(),
                    name: span.name,
                    span_id: span.span_id,
                    error: span.error,
                });
                true
            }
            _ => false,
        }
    }

    /// Each component's calls so far.
    pub fn components(&self) -> HashMap<ComponentHash, ComponentUsage> {
        self.inner().components.clone()
    }

    /// Everything, copied out: the running calls (at most
    /// [`CallLog::capacity`] of them, the oldest), the finished ones, the
    /// errors by code.
    pub fn snapshot(&self) -> CallsSnapshot {
        let inner = self.inner();
        let now = Instant::now();
        let mut running: Vec<&Record> = inner.running.values().collect();
        running.sort_unstable_by_key(|r| r.call_id);
        CallsSnapshot {
            running: running
                .into_iter()
                .take(self.capacity)
                .map(|r| r.view(now))
                .collect(),
            finished: inner.finished.iter().rev().map(|r| r.view(now)).collect(),
            errors: inner.errors.clone(),
            total: inner.total,
        }
    }
}

impl Record {
    fn view(&self, now: Instant) -> CallView {
        let end = self.end.as_ref();
        let (outcome, error_code) = match end.map(|e| e.ended) {
            None => ("running", None),
            Some(Ended::Outcome(CallOutcome::Ok)) => ("ok", None),
            Some(Ended::Outcome(CallOutcome::Error(code))) => ("error", Some(code.as_str())),
            Some(Ended::Abandoned) => ("abandoned", None),
        };
        let source = end.and_then(|e| e.source.as_ref());
        let origin = match source {
            Some(ToolSource::Wasm { component_hash }) => Some(component_hash.to_string()),
            Some(ToolSource::Mcp { server }) => Some(server.clone()),
            _ => None,
        };
        let duration = end.map_or_else(|| now.saturating_duration_since(self.clock), |e| e.duration);
        let usage = end.and_then(|e| e.usage);
        CallView {
            call_id: self.call_id,
            parent_call_id: self.parent_call_id,
            tool: self.tool.clone(),
            source: source.map(ToolSource::kind),
            origin,
            session: self.session.to_string(),
            audience: self.audience,
            started: crate::text::rfc3339_millis(self.started),
            duration_ms: duration.as_secs_f64() * 1e3,
            outcome,
            error_code,
            fuel: usage.map(|u| u.fuel_consumed),
            peak_memory_bytes: usage.map(|u| u.peak_memory_bytes),
            trace_id: self.trace_id.map(|id| format!("{id:032x}")),
            spans: self.spans.clone(),
        }
    }
}

/// The call a span is filed under, when `attribute` names it: its
/// `gen_ai.tool.call.id` (see [`crate::spans::attr::GEN_AI_TOOL_CALL_ID`]),
/// which the dispatcher's spans carry as a string.
pub fn call_id_of(attribute: &opentelemetry::KeyValue) -> Option<CallId> {
    if attribute.key.as_str() != crate::spans::attr::GEN_AI_TOOL_CALL_ID {
        return None;
    }
    match &attribute.value {
        opentelemetry::Value::String(id) => id.as_str().parse().ok(),
        _ => None,
    }
}

/// `name`, cut to [`MAX_NAME_CHARS`] characters: a name a caller made up
/// stays a bounded size wherever it is kept or sent.
pub(crate) fn bounded_name(name: &str) -> String {
    match name.char_indices().nth(MAX_NAME_CHARS) {
        Some((at, _)) => format!("{}…", &name[..at]),
        None => name.to_string(),
    }
}

impl CallObserver for CallLog {
    fn started(&self, info: &CallInfo, _arguments: &serde_json::Value) {
        let record = Record {
            call_id: info.call_id,
            parent_call_id: info.parent_call_id,
            tool: bounded_name(&info.name),
            session: Arc::clone(&info.session_id),
            audience: info.audience,
            started: SystemTime::now(),
            clock: Instant::now(),
            trace_id: info.trace.as_deref().map(TraceContext::trace_id_number),
            end: None,
            spans: Vec::new(),
        };
        self.inner().running.insert(info.call_id, record);
    }

    fn ended(&self, info: &CallInfo, event: Option<&ToolCallEvent>) {
        let mut inner = self.inner();
        let Some(mut record) = inner.running.remove(&info.call_id) else {
            return;
        };
        let end = match event {
            Some(event) => {
                if let Some(name) = &event.stands_for {
                    record.tool = bounded_name(name);
                }
                End {
                    duration: event.duration,
                    ended: Ended::Outcome(event.outcome),
                    source: event.source.clone(),
                    usage: event.usage,
                }
            }
            None => End {
                duration: record.clock.elapsed(),
                ended: Ended::Abandoned,
                source: None,
                usage: None,
            },
        };
        inner.total = inner.total.saturating_add(1);
        let failed = match end.ended {
            Ended::Outcome(CallOutcome::Error(code)) => {
                *inner.errors.entry(code.as_str()).or_default() += 1;
                true
            }
            _ => false,
        };
        if let Some(ToolSource::Wasm { component_hash }) = &end.source {
            let known = inner.components.contains_key(component_hash);
            if known || inner.components.len() < MAX_COMPONENTS {
                let usage = inner.components.entry(*component_hash).or_default();
                usage.calls = usage.calls.saturating_add(1);
                usage.errors = usage.errors.saturating_add(u64::from(failed));
                if let Some(u) = end.usage {
                    usage.fuel = usage.fuel.saturating_add(u.fuel_consumed);
                    usage.peak_memory_bytes = usage.peak_memory_bytes.max(u.peak_memory_bytes);
                }
            }
        }
        record.end = Some(end);
        if inner.finished.len() >= self.capacity {
            inner.finished.pop_front();
        }
        inner.finished.push_back(record);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::ErrorCode;

    fn info(call_id: CallId, name: &str) -> CallInfo {
        CallInfo {
            call_id,
            parent_call_id: None,
            name: name.into(),
            session_id: Arc::from("s"),
            audience: ToolAudience::Trusted,
            trace: TraceContext::parse("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", None)
                .map(Arc::new),
        }
    }

    fn event(call_id: CallId, outcome: CallOutcome) -> ToolCallEvent {
        ToolCallEvent {
            call_id,
            parent_call_id: None,
            session_id: Arc::from("s"),
            name: "t".into(),
            stands_for: None,
            source: Some(ToolSource::Builtin),
            duration: Duration::from_millis(3),
            outcome,
            usage: None,
        }
    }

    #[test]
    fn the_ring_keeps_the_last_calls_and_counts_every_error_by_code() {
        let log = CallLog::new(3);
        for id in 0..10 {
            let call = info(id, "t");
            log.started(&call, &serde_json::Value::Null);
            let outcome = if id % 2 == 0 {
                CallOutcome::Ok
            } else {
                CallOutcome::Error(ErrorCode::Timeout)
            };
            log.ended(&call, Some(&event(id, outcome)));
        }
        let running = info(10, &"<b>".repeat(1000));
        log.started(&running, &serde_json::Value::Null);
        let span = |start: SystemTime| EndedSpan {
            name: "admission".into(),
            span_id: None,
            start,
            end: start + Duration::from_micros(5),
            error: None,
        };
        assert!(log.record_span(10, span(SystemTime::now())));
        let snapshot = log.snapshot();
        let ids: Vec<CallId> = snapshot.finished.iter().map(|c| c.call_id).collect();
        assert_eq!(ids, [9, 8, 7]);
        assert_eq!(snapshot.errors.get("timeout"), Some(&5));
        assert_eq!(snapshot.total, 10);
        assert_eq!(snapshot.running.len(), 1);
        let call = &snapshot.running[0];
        assert_eq!(call.outcome, "running");
        assert_eq!(call.tool.chars().count(), MAX_NAME_CHARS + 1);
        assert_eq!(call.trace_id.as_deref(), Some("4bf92f3577b34da6a3ce929d0e0e4736"));
        assert_eq!(call.spans.len(), 1);
        // An abandoned call ends too, with no outcome of its own.
        log.ended(&running, None);
        assert_eq!(log.snapshot().finished[0].outcome, "abandoned");
        let kept = &log.snapshot().finished[0].spans[0];
        assert_eq!(
            (kept.name.as_ref(), kept.duration),
            ("admission", Duration::from_micros(5))
        );
        assert!(!log.record_span(99, span(SystemTime::now())));
    }

    #[test]
    fn a_span_id_is_shown_as_w3c_writes_it() {
        let record = SpanRecord {
            name: "sandbox greet".into(),
            span_id: Some(SpanId::from_hex("00f067aa0ba902b7").unwrap()),
            start_offset: Duration::from_micros(3),
            duration: Duration::from_micros(40),
            error: None,
        };
        let shown = serde_json::to_value(&record).unwrap();
        assert_eq!(shown["span_id"], "00f067aa0ba902b7");
        assert_eq!(shown["name"], "sandbox greet");
        let none = SpanRecord {
            span_id: None,
            ..record
        };
        assert!(serde_json::to_value(&none).unwrap().get("span_id").is_none());
    }
}
