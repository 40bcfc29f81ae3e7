//! `[traces]`: OpenTelemetry spans of requests and calls (see
//! [`toolhost_core::spans`] for which), exported over OTLP/HTTP to a
//! collector.
//!
//! ```toml
//! [traces]
//! endpoint = "http://127.0.0.1:4318"   # none (the default): no spans
//! ```
//!
//! Spans are made by the host's own recorder
//! ([`toolhost_core::span_recorder`]) and sent in batches from a thread
//! of their own (a blocking HTTP client), never from a call's task: a
//! collector that is slow, refuses, or is gone makes the queue fill, and
//! spans past `max_queue` are dropped (and counted in a warning), while
//! calls go on as fast as without traces.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex, PoisonError};
use std::time::{Duration, Instant};

use serde::Deserialize;

use super::otlp::{self, OtlpHttp};
use crate::error::{Error, ErrorCode, Result};
use toolhost_core::call_log::CallLog;
use toolhost_core::span_recorder::{FinishedSpan, SpanRecorder, SpanSink};
use toolhost_core::spans::Tracing;

/// The most spans in one export request, and as many taken as the
/// exporter sends at once before its delay is up. OpenTelemetry's batch
/// processor sends 512; a request costs the exporter's threads about as
/// much again as the bytes it carries, so the host sends four times as
/// many (about 0.5 MiB; see BENCHMARKS.md, "Fewer, larger export
/// requests").
const BATCH: usize = 2048;

/// Spans waiting in the queue that wake the exporter to take them (and
/// give the queue an empty buffer): what a call's thread writes its spans
/// into stays this small (some 128 KiB), in the processor's caches.
const TAKE: usize = 512;

/// The `[traces]` section.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TracesConfig {
    /// The collector's OTLP/HTTP base URL (`http://collector:4318`):
    /// spans are POSTed to `{endpoint}/v1/traces` as protobuf. None: no
    /// spans are made.
    #[serde(default)]
    pub endpoint: Option<String>,
    /// Headers sent with every export (a collector's API key).
    #[serde(default)]
    pub headers: BTreeMap<String, String>,
    /// The `service.name` of the spans' resource.
    #[serde(default = "default_service_name")]
    pub service_name: String,
    /// The share of new traces recorded, from 0.0 to 1.0; a request that
    /// comes with a trace context follows its caller's decision.
    #[serde(default = "default_sample_ratio")]
    pub sample_ratio: f64,
    /// The longest one export may take before it is abandoned.
    #[serde(default = "default_timeout_ms")]
    pub timeout_ms: u64,
    /// The most finished spans waiting for the exporter's thread to take
    /// them; more are dropped. (The thread holds what it took until it has
    /// a request's worth or the delay is up.)
    #[serde(default = "default_max_queue")]
    pub max_queue: usize,
    /// How long finished spans wait before they are sent (2,048 of them,
    /// or `max_queue` when fewer, go at once).
    #[serde(default = "default_delay_ms")]
    pub delay_ms: u64,
}

fn default_service_name() -> String {
    "toolhost".to_string()
}

fn default_sample_ratio() -> f64 {
    1.0
}

fn default_timeout_ms() -> u64 {
    10_000
}

fn default_max_queue() -> usize {
    2048
}

fn default_delay_ms() -> u64 {
    1000
}

impl Default for TracesConfig {
    fn default() -> Self {
        TracesConfig {
            endpoint: None,
            headers: BTreeMap::new(),
            service_name: default_service_name(),
            sample_ratio: default_sample_ratio(),
            timeout_ms: default_timeout_ms(),
            max_queue: default_max_queue(),
            delay_ms: default_delay_ms(),
        }
    }
}

/// The spans' exporter, running: where the dispatcher and the MCP server
/// send spans ([`Traces::tracing`]), and what to flush before the process
/// ends ([`Traces::shutdown`]).
pub struct Traces {
    /// The export queue; none for the console alone.
    queue: Option<Arc<Queue>>,
    tracing: Tracing,
}

impl std::fmt::Debug for Traces {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Traces")
    }
}

impl Traces {
    /// Where spans go.
    pub fn tracing(&self) -> &Tracing {
        &self.tracing
    }

    /// Sends the spans still queued, waiting at most `timeout`, and stops
    /// the exporter. Blocks: call it off the async runtime's workers.
    pub fn shutdown(&self, timeout: Duration) {
        let Some(queue) = &self.queue else {
            return;
        };
        if !queue.stop_and_wait(timeout) {
            tracing::warn!(
                "traces: the last spans were not all sent within {} ms",
                timeout.as_millis()
            );
        }
    }
}

impl Drop for Traces {
    fn drop(&mut self) {
        // The exporter sends what it holds and ends; no one waits for it.
        if let Some(queue) = &self.queue {
            queue.stop();
        }
    }
}

impl TracesConfig {
    /// The spans' tracer, when an endpoint is set (spans exported) or
    /// `calls` is given (the console's call log: each call's spans filed
    /// with it, exported or not).
    ///
    /// # Errors
    ///
    /// `config` for an endpoint that is not an `http://` or `https://` URL,
    /// a header that HTTP does not allow, a ratio outside 0..=1, or a zero
    /// queue or timeout.
    pub fn start(&self, calls: Option<Arc<CallLog>>) -> Result<Option<Traces>> {
        let Some(endpoint) = &self.endpoint else {
            // The console alone: spans filed with their calls, never
            // exported (the recorder keeps only what the console shows).
            return Ok(calls.map(|calls| Traces {
                tracing: Tracing::recorded(SpanRecorder::filing(calls)),
                queue: None,
            }));
        };
        let bad = |message: String| Error::new(ErrorCode::Config, format!("[traces] {message}"));
        let base = endpoint.trim_end_matches('/');
        let url = format!("{base}/v1/traces");
        let parsed = url
            .parse::<http::Uri>()
            .map_err(|e| bad(format!("endpoint {endpoint:?} is not a URL: {e}")))?;
        if !matches!(parsed.scheme_str(), Some("http" | "https")) || parsed.host().is_none() {
            return Err(bad(format!(
                "endpoint {endpoint:?} must be an http:// or https:// URL with a host (a collector's OTLP/HTTP port, usually 4318)"
            )));
        }
        let mut headers = http::HeaderMap::new();
        for (name, value) in &self.headers {
            let name = http::HeaderName::try_from(name.as_str())
                .map_err(|_| bad(format!("headers: {name:?} is not an HTTP header name")))?;
            let value = http::HeaderValue::try_from(value.as_str())
                .map_err(|_| bad(format!("headers: the value of {name:?} is not allowed in HTTP")))?;
            headers.insert(name, value);
        }
        if !(0.0..=1.0).contains(&self.sample_ratio) {
            return Err(bad(format!(
                "sample_ratio = {} must be from 0.0 to 1.0",
                self.sample_ratio
            )));
        }
        if self.max_queue == 0 || self.timeout_ms == 0 {
            return Err(bad("max_queue and timeout_ms must be at least 1".to_string()));
        }
        let timeout = Duration::from_millis(self.timeout_ms);
        let config = self.clone();
        // The blocking client runs a runtime of its own: it is built (and
        // later dropped, with the exporter) off the async runtime's
        // threads, where making or dropping a runtime is not allowed.
        let exporter = std::thread::spawn(move || config.exporter(url, headers, timeout))
            .join()
            .map_err(|_| Error::internal("[traces]: building the exporter panicked"))??;
        let queue = Arc::new(Queue::new(self.max_queue, Duration::from_millis(self.delay_ms)));
        let running = Arc::clone(&queue);
        std::thread::Builder::new()
            .name("toolhost-traces".into())
            .spawn(move || running.export(exporter))
            .map_err(|e| Error::internal(format!("[traces]: starting the exporter: {e}")))?;
        let recorder = SpanRecorder::new(
            self.sample_ratio,
            calls,
            Some(Arc::clone(&queue) as Arc<dyn SpanSink>),
        );
        Ok(Some(Traces {
            tracing: Tracing::recorded(recorder),
            queue: Some(queue),
        }))
    }

    /// The OTLP exporter: its blocking HTTP client runs a runtime of its
    /// own, so it is made (and dropped, with the exporter's thread) off
    /// the async runtime's threads.
    fn exporter(&self, url: String, headers: http::HeaderMap, timeout: Duration) -> Result<OtlpHttp> {
        let _ = rustls::crypto::ring::default_provider().install_default();
        let client = reqwest::blocking::Client::builder()
            .timeout(timeout)
            .connect_timeout(timeout)
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .map_err(|e| Error::new(ErrorCode::Config, format!("[traces]: the HTTP client: {e}")))?;
        let resource = [
            opentelemetry::KeyValue::new("service.name", self.service_name.clone()),
            opentelemetry::KeyValue::new("service.version", env!("CARGO_PKG_VERSION")),
        ];
        Ok(OtlpHttp::new(client, url, headers, timeout, &resource))
    }
}

/// Finished spans waiting for the exporter's thread, already encoded: a
/// call's thread encodes the span it ended (see [`otlp::encode`]) and
/// appends it here (or drops it when `max` wait already), and wakes the
/// exporter once a batch is full.
struct Queue {
    state: Mutex<Waiting>,
    /// Set while `max` spans wait (or the exporter has stopped): a span
    /// ended then is dropped before it is encoded.
    full: AtomicBool,
    /// Wakes the exporter: a full batch, or the end.
    wake: Condvar,
    /// Tells [`Queue::stop_and_wait`] the exporter has finished.
    finished: Condvar,
    max: usize,
    /// Spans waiting that wake the exporter to take them ([`TAKE`]), and
    /// spans taken that it sends before its delay is up ([`BATCH`]): each
    /// `max` when that is fewer (a queue that fills first would drop
    /// spans until the delay is up).
    take_at: usize,
    send_at: usize,
    delay: Duration,
}

#[derive(Default)]
struct Waiting {
    /// The spans, encoded one after the other.
    spans: Vec<u8>,
    /// Where each span ends in `spans`.
    ends: Vec<usize>,
    /// Spans dropped since the last warning.
    dropped: u64,
    stopping: bool,
    finished: bool,
}

thread_local! {
    /// Where a thread encodes the span it ended, before taking the lock
    /// (taken out while in use, so no borrow can clash).
    static ENCODED: std::cell::Cell<Vec<u8>> = const { std::cell::Cell::new(Vec::new()) };
}

impl SpanSink for Queue {
    fn take(&self, span: &FinishedSpan) {
        if self.full.load(Ordering::Relaxed) {
            self.lock().dropped += 1;
            return;
        }
        let mut encoded = ENCODED.take();
        encoded.clear();
        otlp::encode(&mut encoded, span);
        self.append(&encoded);
        ENCODED.set(encoded);
    }
}

impl Queue {
    fn new(max: usize, delay: Duration) -> Queue {
        Queue {
            state: Mutex::new(Waiting::default()),
            full: AtomicBool::new(false),
            wake: Condvar::new(),
            finished: Condvar::new(),
            max,
            take_at: TAKE.min(max).max(1),
            send_at: BATCH.min(max).max(1),
            delay,
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Waiting> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Appends one encoded span, or drops it when `max` wait already (or
    /// the exporter has stopped); wakes the exporter once a batch is full.
    fn append(&self, encoded: &[u8]) {
        let mut state = self.lock();
        if state.ends.len() >= self.max || state.stopping {
            self.full.store(true, Ordering::Relaxed);
            state.dropped += 1;
            return;
        }
        state.spans.extend_from_slice(encoded);
        let end = state.spans.len();
        state.ends.push(end);
        if state.ends.len() == self.take_at {
            self.wake.notify_one();
        }
    }

    /// The exporter's thread: takes the spans waiting whenever `take_at`
    /// of them wait, and sends what it has taken every `delay`, or at once
    /// when it holds `send_at`, a request at most [`BATCH`] spans; when
    /// stopped, sends what is left and ends. So the buffer a call's thread
    /// writes its spans into stays small while the requests are large.
    fn export(&self, exporter: OtlpHttp) {
        // Taken and not yet sent: each buffer's spans and where each ends.
        let mut taken: Vec<(Vec<u8>, Vec<usize>)> = Vec::new();
        let mut taken_spans = 0;
        let mut spares: Vec<(Vec<u8>, Vec<usize>)> = Vec::new();
        let mut due = Instant::now() + self.delay;
        // Export failures are told at most once a minute, with a count.
        let mut failed = 0u64;
        let mut told: Option<Instant> = None;
        loop {
            let (dropped, stopping) = {
                let mut state = self.lock();
                while !state.stopping && state.ends.len() < self.take_at {
                    let left = due.saturating_duration_since(Instant::now());
                    if left.is_zero() {
                        break;
                    }
                    state = self
                        .wake
                        .wait_timeout(state, left)
                        .unwrap_or_else(PoisonError::into_inner)
                        .0;
                }
                if !state.ends.is_empty() {
                    let (spans, ends) = spares.pop().unwrap_or_default();
                    taken_spans += state.ends.len();
                    taken.push((
                        std::mem::replace(&mut state.spans, spans),
                        std::mem::replace(&mut state.ends, ends),
                    ));
                }
                // Room again (none once stopping: nothing takes spans then).
                self.full.store(state.stopping, Ordering::Relaxed);
                (std::mem::take(&mut state.dropped), state.stopping)
            };
            if dropped > 0 {
                tracing::warn!(
                    "traces: {dropped} spans dropped: the export queue (max_queue) was full, the collector slower than the spans made"
                );
            }
            if taken_spans < self.send_at && !stopping && Instant::now() < due {
                continue;
            }
            for request in requests(&taken, BATCH) {
                if let Err(e) = exporter.export(&request.parts) {
                    failed += request.spans as u64;
                    if told.is_none_or(|at| at.elapsed() >= Duration::from_secs(60)) {
                        tracing::warn!("traces: {failed} spans not exported: {e}");
                        failed = 0;
                        told = Some(Instant::now());
                    }
                }
            }
            for (mut spans, mut ends) in taken.drain(..) {
                spans.clear();
                ends.clear();
                spares.push((spans, ends));
            }
            taken_spans = 0;
            due = Instant::now() + self.delay;
            if stopping {
                break;
            }
        }
        // The exporter (its client's runtime) is dropped on this thread.
        drop(exporter);
        self.lock().finished = true;
        self.finished.notify_all();
    }

    /// Tells the exporter to send what it holds and end.
    fn stop(&self) {
        self.lock().stopping = true;
        self.wake.notify_one();
    }

    /// Stops the exporter and waits at most `timeout` for it to finish:
    /// whether it did.
    fn stop_and_wait(&self, timeout: Duration) -> bool {
        self.stop();
        let state = self.lock();
        let (state, _) = self
            .finished
            .wait_timeout_while(state, timeout, |state| !state.finished)
            .unwrap_or_else(PoisonError::into_inner);
        state.finished
    }
}

/// One export request: the encoded spans it carries, in parts (slices of
/// the buffers they were taken in), and how many.
struct Request<'a> {
    parts: Vec<&'a [u8]>,
    spans: usize,
}

/// The spans of `taken` (buffers of encoded spans, each with where each
/// span ends) in requests of at most `most` spans each, in order.
fn requests(taken: &[(Vec<u8>, Vec<usize>)], most: usize) -> Vec<Request<'_>> {
    let mut requests = Vec::new();
    let mut request = Request {
        parts: Vec::new(),
        spans: 0,
    };
    for (spans, ends) in taken {
        let mut from = 0;
        let mut at = 0;
        while at < ends.len() {
            let take = (most - request.spans).min(ends.len() - at);
            let to = ends[at + take - 1];
            request.parts.push(&spans[from..to]);
            request.spans += take;
            (from, at) = (to, at + take);
            if request.spans == most {
                requests.push(std::mem::replace(
                    &mut request,
                    Request {
                        parts: Vec::new(),
                        spans: 0,
                    },
                ));
            }
        }
    }
    if request.spans > 0 {
        requests.push(request);
    }
    requests
}

#[cfg(test)]
mod tests {
    use super::*;
    use opentelemetry::trace::{SpanContext, SpanId, SpanKind, Status};
    use std::time::SystemTime;

    fn span() -> FinishedSpan {
        FinishedSpan {
            context: SpanContext::empty_context(),
            parent_span_id: SpanId::INVALID,
            parent_is_remote: false,
            name: "x".into(),
            kind: SpanKind::Internal,
            start: SystemTime::now(),
            end: SystemTime::now(),
            attributes: Vec::new(),
            status: Status::Unset,
        }
    }

    #[test]
    fn a_full_queue_drops_spans_and_counts_them_until_the_exporter_takes_some() {
        let queue = Queue::new(2, Duration::from_secs(60));
        for _ in 0..4 {
            queue.take(&span());
        }
        {
            let state = queue.lock();
            assert_eq!(state.ends.len(), 2, "at most max_queue wait");
            assert_eq!(state.dropped, 2);
            assert_eq!(*state.ends.last().unwrap(), state.spans.len());
        }
        // The exporter takes them (stopped, it sends what it holds and ends).
        let _ = rustls::crypto::ring::default_provider().install_default();
        let exporter = OtlpHttp::new(
            reqwest::blocking::Client::builder().build().unwrap(),
            "http://127.0.0.1:9/v1/traces".into(),
            Default::default(),
            Duration::from_millis(50),
            &[],
        );
        queue.stop();
        queue.export(exporter);
        let state = queue.lock();
        assert!(state.finished && state.ends.is_empty() && state.dropped == 0);
        drop(state);
        // Stopped, nothing more is taken.
        queue.take(&span());
        assert_eq!(queue.lock().ends.len(), 0);
    }

    #[test]
    fn spans_taken_in_several_buffers_go_in_order_in_requests_of_at_most_a_batch() {
        // Spans of one byte each, named by their order: 2 in one buffer,
        // 4 in the next, 1 in the last.
        let buffer = |bytes: &[u8]| (bytes.to_vec(), (1..=bytes.len()).collect::<Vec<_>>());
        let taken = [buffer(b"ab"), buffer(b"cdef"), buffer(b"g")];
        let sent: Vec<(Vec<u8>, usize)> = requests(&taken, 3)
            .into_iter()
            .map(|request| (request.parts.concat(), request.spans))
            .collect();
        assert_eq!(
            sent,
            [(b"abc".to_vec(), 3), (b"def".to_vec(), 3), (b"g".to_vec(), 1)]
        );
        assert!(requests(&[], 3).is_empty());
        assert_eq!(requests(&taken, 7).len(), 1);
    }

    #[test]
    fn a_queue_smaller_than_a_batch_is_sent_when_full_not_when_its_delay_is_up() {
        let (url, seen) = otlp::tests::collector(Vec::new());
        let exporter = otlp::tests::exporter_to(url);
        // An hour's delay: only a full queue sends its spans.
        let queue = Arc::new(Queue::new(3, Duration::from_secs(3600)));
        let exporting = Arc::clone(&queue);
        let exporter = std::thread::spawn(move || exporting.export(exporter));
        for _ in 0..3 {
            queue.take(&span());
        }
        // Three spans, max_queue = 3: sent without waiting for the delay.
        let waiting = Instant::now();
        while seen.load(Ordering::SeqCst) == 0 {
            assert!(waiting.elapsed() < Duration::from_secs(60), "not sent");
            std::thread::sleep(Duration::from_millis(10));
        }
        assert_eq!(queue.lock().dropped, 0);
        queue.stop();
        exporter.join().unwrap();
    }
}
