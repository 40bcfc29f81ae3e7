//! OTLP/HTTP export of spans: each batch written as one protobuf
//! `ExportTraceServiceRequest` straight from the SDK's [`SpanData`] into a
//! buffer the exporter keeps, and POSTed to the collector.
//!
//! Why not the OpenTelemetry OTLP exporter: it converts every span into
//! the generated protobuf types first, a `String` for each attribute's key
//! and value and a `Vec` for each list, then encodes those; with every
//! call exported that conversion was most of what export cost (see
//! BENCHMARKS.md, "Observability's cost, cut"). The wire format is the
//! same: the tests decode what this writes with the official definitions
//! (`opentelemetry-proto`).
//!
//! Field numbers are those of `opentelemetry/proto/trace/v1/trace.proto`,
//! `common/v1/common.proto` and `resource/v1/resource.proto` (v1.x, stable).

use std::io::Read;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant, SystemTime};

use opentelemetry::trace::{SpanKind, Status};
use opentelemetry::{Array, Value};
use opentelemetry_sdk::Resource;
use opentelemetry_sdk::error::{OTelSdkError, OTelSdkResult};
use opentelemetry_sdk::trace::{SpanData, SpanExporter};

/// The most of a collector's answer read (and thrown away) so that its
/// connection can be kept; a longer answer closes the connection.
const MAX_ANSWER: u64 = 64 * 1024;

/// Tries of one batch when the collector says to come back (429, 502, 503,
/// 504) or cannot be reached, all within the export's timeout.
const TRIES: u32 = 3;

/// Spans to a collector's `/v1/traces` over OTLP/HTTP with protobuf.
pub(super) struct OtlpHttp {
    client: reqwest::blocking::Client,
    url: String,
    headers: reqwest::header::HeaderMap,
    timeout: Duration,
    /// The resource's encoded `Resource` message (set by the provider).
    resource: Vec<u8>,
    /// The resource's schema URL.
    resource_schema: String,
    /// The size of the last request, to make the next one's buffer at once.
    last_size: AtomicUsize,
}

impl std::fmt::Debug for OtlpHttp {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OtlpHttp")
            .field("url", &self.url)
            .finish_non_exhaustive()
    }
}

impl OtlpHttp {
    /// An exporter POSTing to `url` (the whole `…/v1/traces` URL) with
    /// `headers`, each try given at most `timeout`.
    pub(super) fn new(
        client: reqwest::blocking::Client,
        url: String,
        headers: reqwest::header::HeaderMap,
        timeout: Duration,
    ) -> OtlpHttp {
        OtlpHttp {
            client,
            url,
            headers,
            timeout,
            resource: Vec::new(),
            resource_schema: String::new(),
            last_size: AtomicUsize::new(0),
        }
    }

    /// Sends `body`, trying again while the collector asks to and time is
    /// left.
    fn send(&self, body: bytes::Bytes) -> OTelSdkResult {
        let deadline = Instant::now() + self.timeout;
        let mut pause = Duration::from_millis(100);
        for attempt in 1..=TRIES {
            let left = deadline.saturating_duration_since(Instant::now());
            let sent = self
                .client
                .post(&self.url)
                .headers(self.headers.clone())
                .header(reqwest::header::CONTENT_TYPE, "application/x-protobuf")
                .timeout(left.max(Duration::from_millis(1)))
                .body(body.clone())
                .send();
            let again = match sent {
                Ok(mut answer) => {
                    let status = answer.status();
                    // Read to its end (bounded) so the connection is kept.
                    let _ = std::io::copy(&mut (&mut answer).take(MAX_ANSWER), &mut std::io::sink());
                    if status.is_success() {
                        return Ok(());
                    }
                    let retryable = matches!(status.as_u16(), 429 | 502 | 503 | 504);
                    if !retryable || attempt == TRIES {
                        return Err(OTelSdkError::InternalFailure(format!(
                            "the collector at {} answered {status}",
                            self.url
                        )));
                    }
                    status.to_string()
                }
                Err(e) if attempt == TRIES || !(e.is_connect() || e.is_timeout()) => {
                    return Err(OTelSdkError::InternalFailure(format!(
                        "sending spans to {}: {e}",
                        self.url
                    )));
                }
                Err(e) => e.to_string(),
            };
            if Instant::now() + pause >= deadline {
                return Err(OTelSdkError::InternalFailure(format!(
                    "the collector at {} did not take the spans in time ({again})",
                    self.url
                )));
            }
            std::thread::sleep(pause);
            pause *= 2;
        }
        Ok(())
    }
}

impl SpanExporter for OtlpHttp {
    async fn export(&self, batch: Vec<SpanData>) -> OTelSdkResult {
        if batch.is_empty() {
            return Ok(());
        }
        let mut body = Vec::with_capacity(self.last_size.load(Ordering::Relaxed));
        request(&mut body, &self.resource, &self.resource_schema, &batch);
        drop(batch);
        self.last_size.store(body.len(), Ordering::Relaxed);
        self.send(body.into())
    }

    fn set_resource(&mut self, resource: &Resource) {
        self.resource = resource_fields(resource);
        self.resource_schema = resource.schema_url().unwrap_or_default().to_string();
    }
}

/// A `Resource`'s fields (its attributes).
fn resource_fields(resource: &Resource) -> Vec<u8> {
    let mut out = Vec::new();
    for (key, value) in resource.iter() {
        message(&mut out, 1, |out| key_value(out, key.as_str(), value));
    }
    out
}

/// Writes `ExportTraceServiceRequest { resource_spans = 1 }`: one
/// `ResourceSpans` (the provider has one resource), a `ScopeSpans` for each
/// instrumentation scope, in the order they first appear.
fn request(out: &mut Vec<u8>, resource: &[u8], resource_schema: &str, spans: &[SpanData]) {
    message(out, 1, |out| {
        // ResourceSpans { resource = 1, scope_spans = 2, schema_url = 3 }
        message(out, 1, |out| out.extend_from_slice(resource));
        let mut done = vec![false; spans.len()];
        for first in 0..spans.len() {
            if done[first] {
                continue;
            }
            let scope = &spans[first].instrumentation_scope;
            message(out, 2, |out| {
                // ScopeSpans { scope = 1, spans = 2, schema_url = 3 }
                message(out, 1, |out| {
                    string(out, 1, scope.name());
                    string(out, 2, scope.version().unwrap_or_default());
                    for attribute in scope.attributes() {
                        message(out, 3, |out| {
                            key_value(out, attribute.key.as_str(), &attribute.value)
                        });
                    }
                });
                for (i, span) in spans.iter().enumerate().skip(first) {
                    if !done[i] && span.instrumentation_scope == *scope {
                        done[i] = true;
                        message(out, 2, |out| self::span(out, span));
                    }
                }
                string(out, 3, scope.schema_url().unwrap_or_default());
            });
        }
        string(out, 3, resource_schema);
    });
}

/// Writes a `Span`'s fields.
fn span(out: &mut Vec<u8>, span: &SpanData) {
    let context = &span.span_context;
    bytes(out, 1, &context.trace_id().to_bytes());
    bytes(out, 2, &context.span_id().to_bytes());
    let state = context.trace_state().header();
    string(out, 3, &state);
    if span.parent_span_id != opentelemetry::trace::SpanId::INVALID {
        bytes(out, 4, &span.parent_span_id.to_bytes());
    }
    string(out, 5, &span.name);
    uint(out, 6, kind(&span.span_kind));
    fixed64(out, 7, nanos(span.start_time));
    fixed64(out, 8, nanos(span.end_time));
    for attribute in &span.attributes {
        message(out, 9, |out| {
            key_value(out, attribute.key.as_str(), &attribute.value)
        });
    }
    uint(out, 10, u64::from(span.dropped_attributes_count));
    for event in span.events.iter() {
        message(out, 11, |out| {
            fixed64(out, 1, nanos(event.timestamp));
            string(out, 2, &event.name);
            for attribute in &event.attributes {
                message(out, 3, |out| {
                    key_value(out, attribute.key.as_str(), &attribute.value)
                });
            }
            uint(out, 4, u64::from(event.dropped_attributes_count));
        });
    }
    uint(out, 12, u64::from(span.events.dropped_count));
    for link in span.links.iter() {
        message(out, 13, |out| {
            let linked = &link.span_context;
            bytes(out, 1, &linked.trace_id().to_bytes());
            bytes(out, 2, &linked.span_id().to_bytes());
            string(out, 3, &linked.trace_state().header());
            for attribute in &link.attributes {
                message(out, 4, |out| {
                    key_value(out, attribute.key.as_str(), &attribute.value)
                });
            }
            uint(out, 5, u64::from(link.dropped_attributes_count));
            fixed32(out, 6, flags(linked.trace_flags().to_u8(), linked.is_remote()));
        });
    }
    uint(out, 14, u64::from(span.links.dropped_count));
    match &span.status {
        Status::Unset => {}
        // Status { message = 2, code = 3 }: 1 ok, 2 error.
        Status::Ok => message(out, 15, |out| uint(out, 3, 1)),
        Status::Error { description } => message(out, 15, |out| {
            string(out, 2, description);
            uint(out, 3, 2);
        }),
    }
    fixed32(
        out,
        16,
        flags(context.trace_flags().to_u8(), span.parent_span_is_remote),
    );
}

/// A span's `flags`: the W3C trace flags, and whether its parent is remote
/// (`SPAN_FLAGS_CONTEXT_HAS_IS_REMOTE_MASK`, `..._IS_REMOTE_MASK`).
fn flags(trace_flags: u8, remote: bool) -> u32 {
    u32::from(trace_flags) | 0x100 | if remote { 0x200 } else { 0 }
}

/// `Span.SpanKind`'s number.
fn kind(kind: &SpanKind) -> u64 {
    match kind {
        SpanKind::Internal => 1,
        SpanKind::Server => 2,
        SpanKind::Client => 3,
        SpanKind::Producer => 4,
        SpanKind::Consumer => 5,
    }
}

fn nanos(at: SystemTime) -> u64 {
    at.duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_nanos()).unwrap_or(u64::MAX))
}

/// Writes a `KeyValue { key = 1, value = 2 }`'s fields.
fn key_value(out: &mut Vec<u8>, key: &str, value: &Value) {
    string(out, 1, key);
    message(out, 2, |out| any_value(out, value));
}

/// Writes an `AnyValue`'s one field (written even when zero or empty: it
/// says which of the `oneof` is set).
fn any_value(out: &mut Vec<u8>, value: &Value) {
    match value {
        Value::String(s) => length_delimited(out, 1, s.as_str().as_bytes()),
        Value::Bool(b) => {
            tag(out, 2, 0);
            varint(out, u64::from(*b));
        }
        // int64 is written as its two's complement, as protobuf does.
        Value::I64(n) => {
            tag(out, 3, 0);
            varint(out, *n as u64);
        }
        Value::F64(f) => double(out, 4, *f),
        // ArrayValue { values = 1 }
        Value::Array(array) => message(out, 5, |out| match array {
            Array::Bool(values) => {
                for b in values {
                    message(out, 1, |out| any_value(out, &Value::Bool(*b)));
                }
            }
            Array::I64(values) => {
                for n in values {
                    message(out, 1, |out| any_value(out, &Value::I64(*n)));
                }
            }
            Array::F64(values) => {
                for f in values {
                    message(out, 1, |out| double(out, 4, *f));
                }
            }
            Array::String(values) => {
                for s in values {
                    message(out, 1, |out| length_delimited(out, 1, s.as_str().as_bytes()));
                }
            }
            other => {
                let text = other.to_string();
                message(out, 1, |out| length_delimited(out, 1, text.as_bytes()));
            }
        }),
        other => length_delimited(out, 1, other.as_str().as_bytes()),
    }
}

fn varint(out: &mut Vec<u8>, mut n: u64) {
    while n >= 0x80 {
        out.push((n as u8) | 0x80);
        n >>= 7;
    }
    out.push(n as u8);
}

fn tag(out: &mut Vec<u8>, field: u32, wire_type: u8) {
    varint(out, u64::from(field << 3 | u32::from(wire_type)));
}

/// A varint field, left out when zero (proto3's default).
fn uint(out: &mut Vec<u8>, field: u32, n: u64) {
    if n != 0 {
        tag(out, field, 0);
        varint(out, n);
    }
}

fn fixed64(out: &mut Vec<u8>, field: u32, n: u64) {
    tag(out, field, 1);
    out.extend_from_slice(&n.to_le_bytes());
}

fn fixed32(out: &mut Vec<u8>, field: u32, n: u32) {
    tag(out, field, 5);
    out.extend_from_slice(&n.to_le_bytes());
}

fn double(out: &mut Vec<u8>, field: u32, f: f64) {
    tag(out, field, 1);
    out.extend_from_slice(&f.to_bits().to_le_bytes());
}

fn length_delimited(out: &mut Vec<u8>, field: u32, data: &[u8]) {
    tag(out, field, 2);
    varint(out, data.len() as u64);
    out.extend_from_slice(data);
}

/// A string or bytes field, left out when empty (proto3's default).
fn string(out: &mut Vec<u8>, field: u32, s: &str) {
    bytes(out, field, s.as_bytes());
}

fn bytes(out: &mut Vec<u8>, field: u32, data: &[u8]) {
    if !data.is_empty() {
        length_delimited(out, field, data);
    }
}

/// Writes field `field` holding the message `write` writes, in place: the
/// length is known only after, so one byte is kept for it and the message
/// moved along in the rare case its length needs more.
fn message(out: &mut Vec<u8>, field: u32, write: impl FnOnce(&mut Vec<u8>)) {
    tag(out, field, 2);
    let at = out.len();
    out.push(0);
    write(out);
    let len = out.len() - at - 1;
    if len < 0x80 {
        out[at] = len as u8;
        return;
    }
    let mut prefix = Vec::with_capacity(10);
    varint(&mut prefix, len as u64);
    let extra = prefix.len() - 1;
    out.resize(out.len() + extra, 0);
    out.copy_within(at + 1..at + 1 + len, at + 1 + extra);
    out[at..at + prefix.len()].copy_from_slice(&prefix);
}

#[cfg(test)]
mod tests {
    use super::*;
    use opentelemetry::KeyValue;
    use opentelemetry::trace::{SpanContext, SpanId, TraceFlags, TraceId, TraceState};
    use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
    use opentelemetry_proto::tonic::common::v1::any_value;
    use prost::Message;
    use std::sync::Arc;

    fn sample(name: &'static str, scope: &str) -> SpanData {
        let at = SystemTime::UNIX_EPOCH + Duration::from_nanos(1_700_000_000_123_456_789);
        let context = SpanContext::new(
            TraceId::from_hex("4bf92f3577b34da6a3ce929d0e0e4736").unwrap(),
            SpanId::from_hex("00f067aa0ba902b7").unwrap(),
            TraceFlags::SAMPLED,
            false,
            "rojo=1".parse::<TraceState>().unwrap(),
        );
        let mut events = opentelemetry_sdk::trace::SpanEvents::default();
        events.events.push(opentelemetry::trace::Event::new(
            "retried",
            at,
            vec![KeyValue::new("attempt", 2)],
            0,
        ));
        let mut links = opentelemetry_sdk::trace::SpanLinks::default();
        links
            .links
            .push(opentelemetry::trace::Link::with_context(context.clone()));
        SpanData {
            span_context: context,
            parent_span_id: SpanId::from_hex("1111111111111111").unwrap(),
            parent_span_is_remote: true,
            span_kind: SpanKind::Server,
            name: name.into(),
            start_time: at,
            end_time: at + Duration::from_micros(42),
            attributes: vec![
                KeyValue::new("s", "text"),
                KeyValue::new("empty", ""),
                KeyValue::new("b", false),
                KeyValue::new("i", -7_i64),
                KeyValue::new("f", 0.5),
                KeyValue::new("a", Value::Array(Array::String(vec!["x".into(), "y".into()]))),
                KeyValue::new("long", "é".repeat(100)),
            ],
            dropped_attributes_count: 3,
            events,
            links,
            status: Status::error("it broke"),
            instrumentation_scope: opentelemetry::InstrumentationScope::builder(scope.to_string())
                .with_version("1.2")
                .build(),
        }
    }

    #[test]
    fn a_batch_decodes_with_the_official_definitions_field_by_field() {
        let resource = resource_fields(&Resource::builder().with_service_name("svc").build());
        let spans = vec![
            sample("one", "toolhost"),
            sample("two", "other"),
            sample("three", "toolhost"),
        ];
        let mut out = Vec::new();
        request(&mut out, &resource, "", &spans);
        let decoded = ExportTraceServiceRequest::decode(out.as_slice()).expect("a valid request");
        let resource_spans = &decoded.resource_spans[0];
        let service = resource_spans
            .resource
            .as_ref()
            .unwrap()
            .attributes
            .iter()
            .find(|kv| kv.key == "service.name");
        assert_eq!(
            service.unwrap().value.as_ref().unwrap().value,
            Some(any_value::Value::StringValue("svc".into()))
        );
        let scopes: Vec<(&str, Vec<&str>)> = resource_spans
            .scope_spans
            .iter()
            .map(|s| {
                let scope = s.scope.as_ref().unwrap();
                assert_eq!(scope.version, "1.2");
                (
                    scope.name.as_str(),
                    s.spans.iter().map(|span| span.name.as_str()).collect(),
                )
            })
            .collect();
        assert_eq!(
            scopes,
            [("toolhost", vec!["one", "three"]), ("other", vec!["two"])]
        );
        let span = &resource_spans.scope_spans[0].spans[0];
        assert_eq!(hex(&span.trace_id), "4bf92f3577b34da6a3ce929d0e0e4736");
        assert_eq!(hex(&span.span_id), "00f067aa0ba902b7");
        assert_eq!(hex(&span.parent_span_id), "1111111111111111");
        assert_eq!(span.trace_state, "rojo=1");
        assert_eq!(span.kind, 2);
        assert_eq!(span.start_time_unix_nano, 1_700_000_000_123_456_789);
        assert_eq!(span.end_time_unix_nano - span.start_time_unix_nano, 42_000);
        assert_eq!(span.flags, 0x301);
        assert_eq!(span.dropped_attributes_count, 3);
        let value = |key: &str| {
            span.attributes
                .iter()
                .find(|kv| kv.key == key)
                .and_then(|kv| kv.value.clone())
                .and_then(|v| v.value)
        };
        assert_eq!(value("s"), Some(any_value::Value::StringValue("text".into())));
        assert_eq!(value("empty"), Some(any_value::Value::StringValue(String::new())));
        assert_eq!(value("b"), Some(any_value::Value::BoolValue(false)));
        assert_eq!(value("i"), Some(any_value::Value::IntValue(-7)));
        assert_eq!(value("f"), Some(any_value::Value::DoubleValue(0.5)));
        assert_eq!(
            value("long"),
            Some(any_value::Value::StringValue("é".repeat(100)))
        );
        let Some(any_value::Value::ArrayValue(array)) = value("a") else {
            panic!("an array")
        };
        assert_eq!(array.values.len(), 2);
        let status = span.status.as_ref().unwrap();
        assert_eq!((status.code, status.message.as_str()), (2, "it broke"));
        assert_eq!(span.events[0].name, "retried");
        assert_eq!(span.events[0].attributes[0].key, "attempt");
        assert_eq!(hex(&span.links[0].span_id), "00f067aa0ba902b7");
        assert_eq!(span.links[0].flags, 0x101);
    }

    /// A collector on a local port answering each request with the next
    /// of `statuses`; the requests it got, counted.
    fn collector(statuses: Vec<u16>) -> (String, Arc<std::sync::atomic::AtomicUsize>) {
        use std::io::{BufRead, BufReader, Write};
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}/v1/traces", listener.local_addr().unwrap());
        let seen = Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let counted = Arc::clone(&seen);
        std::thread::spawn(move || {
            let mut statuses = statuses.into_iter();
            for stream in listener.incoming().flatten() {
                let mut reader = BufReader::new(stream.try_clone().unwrap());
                let mut writer = stream;
                loop {
                    let mut length = 0;
                    let mut line = String::new();
                    while reader.read_line(&mut line).unwrap_or(0) > 0 && line != "\r\n" {
                        if let Some(n) = line.to_ascii_lowercase().strip_prefix("content-length:") {
                            length = n.trim().parse().unwrap();
                        }
                        line.clear();
                    }
                    if line.is_empty() {
                        break;
                    }
                    let mut body = vec![0; length];
                    std::io::Read::read_exact(&mut reader, &mut body).unwrap();
                    assert!(ExportTraceServiceRequest::decode(body.as_slice()).is_ok());
                    counted.fetch_add(1, Ordering::SeqCst);
                    let status = statuses.next().unwrap_or(200);
                    let answer = format!("HTTP/1.1 {status} X\r\nContent-Length: 2\r\n\r\nok");
                    if writer.write_all(answer.as_bytes()).is_err() {
                        break;
                    }
                }
            }
        });
        (url, seen)
    }

    fn exporter_to(url: String) -> OtlpHttp {
        let _ = rustls::crypto::ring::default_provider().install_default();
        let client = reqwest::blocking::Client::builder().build().unwrap();
        OtlpHttp::new(client, url, Default::default(), Duration::from_secs(5))
    }

    #[test]
    fn a_collector_that_says_come_back_is_tried_again_and_one_that_refuses_is_not() {
        let (url, seen) = collector(vec![503, 429]);
        let exporter = exporter_to(url);
        let sent = futures_executor(exporter.export(vec![sample("one", "toolhost")]));
        assert!(sent.is_ok(), "{sent:?}");
        assert_eq!(seen.load(Ordering::SeqCst), 3, "two refusals, then taken");

        let (url, seen) = collector(vec![400]);
        let exporter = exporter_to(url);
        let sent = futures_executor(exporter.export(vec![sample("one", "toolhost")]));
        let error = sent.expect_err("a 400 is an error").to_string();
        assert!(error.contains("400"), "{error}");
        assert_eq!(seen.load(Ordering::SeqCst), 1, "not tried again");
    }

    /// Runs the exporter's future as the batch processor does (it never
    /// waits on anything but the blocking client).
    fn futures_executor<T>(future: impl std::future::Future<Output = T>) -> T {
        let mut future = std::pin::pin!(future);
        let waker = std::task::Waker::noop();
        let mut cx = std::task::Context::from_waker(waker);
        match future.as_mut().poll(&mut cx) {
            std::task::Poll::Ready(value) => value,
            std::task::Poll::Pending => panic!("the export waited on something"),
        }
    }

    fn hex(bytes: &[u8]) -> String {
        bytes.iter().map(|b| format!("{b:02x}")).collect()
    }

    #[test]
    fn varints_and_long_messages_are_written_as_protobuf_does() {
        let mut out = Vec::new();
        varint(&mut out, 300);
        assert_eq!(out, [0xac, 0x02]);
        let mut out = Vec::new();
        message(&mut out, 1, |out| out.extend(std::iter::repeat_n(7u8, 200)));
        assert_eq!(&out[..3], &[0x0a, 0xc8, 0x01]);
        assert_eq!(out.len(), 203);
        assert!(out[3..].iter().all(|&b| b == 7));
    }
}
