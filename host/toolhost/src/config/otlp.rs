//! OTLP/HTTP export of spans: each batch written as one protobuf
//! `ExportTraceServiceRequest` straight from the recorder's
//! [`FinishedSpan`]s into a buffer, and POSTed to the collector.
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
use std::time::{Duration, Instant, SystemTime};

use opentelemetry::trace::{SpanKind, Status, TraceState};
use opentelemetry::{Array, KeyValue, Value};
use toolhost_core::span_recorder::FinishedSpan;

/// The most of a collector's answer read (and thrown away) so that its
/// connection can be kept; a longer answer closes the connection.
const MAX_ANSWER: u64 = 64 * 1024;

/// Tries of one batch when the collector says to come back (429, 502, 503,
/// 504) or cannot be reached, all within the export's timeout.
const TRIES: u32 = 3;

/// The instrumentation scope of every span: the host's own.
const SCOPE: &str = "toolhost";

/// Spans to a collector's `/v1/traces` over OTLP/HTTP with protobuf.
pub(super) struct OtlpHttp {
    client: reqwest::blocking::Client,
    url: String,
    headers: reqwest::header::HeaderMap,
    timeout: Duration,
    /// The resource's encoded `Resource` message's fields.
    resource: Vec<u8>,
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
    /// `headers`, each export given at most `timeout`, its spans those of
    /// the resource of `resource` attributes (`service.name`, ...).
    pub(super) fn new(
        client: reqwest::blocking::Client,
        url: String,
        headers: reqwest::header::HeaderMap,
        timeout: Duration,
        resource: &[KeyValue],
    ) -> OtlpHttp {
        OtlpHttp {
            client,
            url,
            headers,
            timeout,
            resource: resource_fields(resource),
        }
    }

    /// Sends the spans of `parts`, each part spans [`encode`]d one after
    /// the other, as one request.
    ///
    /// # Errors
    ///
    /// Why the collector did not take them (its answer, or the connection's
    /// failure), after the tries the timeout allows.
    pub(super) fn export(&self, parts: &[&[u8]]) -> Result<(), String> {
        let len: usize = parts.iter().map(|part| part.len()).sum();
        if len == 0 {
            return Ok(());
        }
        // Made at its size (`request` reserves it), once.
        let mut body = Vec::new();
        request(&mut body, &self.resource, parts, len);
        self.send(body.into())
    }

    /// Sends `body`, trying again while the collector asks to and time is
    /// left.
    fn send(&self, body: bytes::Bytes) -> Result<(), String> {
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
                        return Err(format!("the collector at {} answered {status}", self.url));
                    }
                    status.to_string()
                }
                Err(e) if attempt == TRIES || !(e.is_connect() || e.is_timeout()) => {
                    return Err(format!("sending spans to {}: {e}", self.url));
                }
                Err(e) => e.to_string(),
            };
            if Instant::now() + pause >= deadline {
                return Err(format!(
                    "the collector at {} did not take the spans in time ({again})",
                    self.url
                ));
            }
            std::thread::sleep(pause);
            pause *= 2;
        }
        Ok(())
    }
}

/// A `Resource`'s fields: its `attributes`.
fn resource_fields(attributes: &[KeyValue]) -> Vec<u8> {
    let mut out = Vec::new();
    for attribute in attributes {
        message(&mut out, 1, |out| {
            key_value(out, attribute.key.as_str(), &attribute.value)
        });
    }
    out
}

/// Writes `ExportTraceServiceRequest { resource_spans = 1 }`: one
/// `ResourceSpans` holding one `ScopeSpans`, the host's, its spans those
/// of `parts` (already [`encode`]d, `len` bytes in all). The messages
/// around the spans are written with their lengths first, worked out
/// beforehand, so the spans are copied once (a [`message`] would move a
/// request's half megabyte along twice to fit its length in front).
fn request(out: &mut Vec<u8>, resource: &[u8], parts: &[&[u8]], len: usize) {
    // ScopeSpans { scope = 1, spans = 2, schema_url = 3 }
    let mut scope = Vec::new();
    message(&mut scope, 1, |out| string(out, 1, SCOPE));
    let scope_spans = scope.len() + len;
    // ResourceSpans { resource = 1, scope_spans = 2, schema_url = 3 }
    let resource_spans = field_len(resource.len()) + field_len(scope_spans);
    out.reserve(field_len(resource_spans));
    header(out, 1, resource_spans);
    length_delimited(out, 1, resource);
    header(out, 2, scope_spans);
    out.extend_from_slice(&scope);
    for part in parts {
        out.extend_from_slice(part);
    }
}

/// The bytes a length-delimited field of `len` bytes takes, its tag (of
/// a field number under 16) and length included.
fn field_len(len: usize) -> usize {
    1 + varint_bytes(len as u64).1 + len
}

/// A length-delimited field's tag and length, its `len` bytes to follow.
fn header(out: &mut Vec<u8>, field: u32, len: usize) {
    tag(out, field, 2);
    varint(out, len as u64);
}

/// Appends `span` to `out` as a `ScopeSpans`' `spans` field: what
/// [`OtlpHttp::export`] sends, a batch's spans one after the other. Done
/// as a span ends, on its thread, so that the span's memory is given back
/// where it was taken, while it is still in the caches, and what waits
/// for the exporter is a few hundred bytes a span.
pub(super) fn encode(out: &mut Vec<u8>, span: &FinishedSpan) {
    message(out, 2, |out| self::span(out, span));
}

/// Writes a `Span`'s fields.
fn span(out: &mut Vec<u8>, span: &FinishedSpan) {
    let context = &span.context;
    bytes(out, 1, &context.trace_id().to_bytes());
    bytes(out, 2, &context.span_id().to_bytes());
    if *context.trace_state() != TraceState::NONE {
        string(out, 3, &context.trace_state().header());
    }
    if span.parent_span_id != opentelemetry::trace::SpanId::INVALID {
        bytes(out, 4, &span.parent_span_id.to_bytes());
    }
    string(out, 5, &span.name);
    uint(out, 6, kind(&span.kind));
    fixed64(out, 7, nanos(span.start));
    fixed64(out, 8, nanos(span.end));
    for attribute in &span.attributes {
        attribute_field(out, attribute.key.as_str(), &attribute.value);
    }
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
        flags(context.trace_flags().to_u8(), span.parent_is_remote),
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

/// Writes a `Span`'s `attributes` field (9) holding `key` and `value`.
///
/// The spans' attributes are nearly all a short string or an integer: then
/// every length in the field is known before it is written and fits one
/// byte, and the field is written straight out, a few stores and two
/// copies, where the general path below nests three length-prefixed
/// messages (an attribute was a third of a span's encoding).
fn attribute_field(out: &mut Vec<u8>, name: &str, value: &Value) {
    let key = name.as_bytes();
    match value {
        // KeyValue { key = 1, value = 2: AnyValue { string_value = 1 } }
        Value::String(s) if key.len() + s.as_str().len() + 6 < 0x80 => {
            let s = s.as_str().as_bytes();
            let key_value = 6 + key.len() + s.len();
            out.reserve(2 + key_value);
            out.extend_from_slice(&[0x4a, key_value as u8, 0x0a, key.len() as u8]);
            out.extend_from_slice(key);
            out.extend_from_slice(&[0x12, 2 + s.len() as u8, 0x0a, s.len() as u8]);
            out.extend_from_slice(s);
        }
        // ... AnyValue { int_value = 3 }: a varint of at most 10 bytes.
        Value::I64(n) if key.len() + 15 < 0x80 => {
            let (number, used) = varint_bytes(*n as u64);
            let key_value = 5 + key.len() + used;
            out.reserve(2 + key_value);
            out.extend_from_slice(&[0x4a, key_value as u8, 0x0a, key.len() as u8]);
            out.extend_from_slice(key);
            out.extend_from_slice(&[0x12, 1 + used as u8, 0x18]);
            out.extend_from_slice(&number[..used]);
        }
        _ => message(out, 9, |out| key_value(out, name, value)),
    }
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

fn varint(out: &mut Vec<u8>, n: u64) {
    // Tags and most lengths are one byte.
    if n < 0x80 {
        out.push(n as u8);
        return;
    }
    let (bytes, used) = varint_bytes(n);
    out.extend_from_slice(&bytes[..used]);
}

/// `n` as a protobuf varint: its bytes, and how many of them it takes.
fn varint_bytes(mut n: u64) -> ([u8; 10], usize) {
    let mut bytes = [0u8; 10];
    let mut used = 0;
    while n >= 0x80 {
        bytes[used] = (n as u8) | 0x80;
        used += 1;
        n >>= 7;
    }
    bytes[used] = n as u8;
    (bytes, used + 1)
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
    header(out, field, data.len());
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
    let (prefix, used) = varint_bytes(len as u64);
    let extra = used - 1;
    out.resize(out.len() + extra, 0);
    out.copy_within(at + 1..at + 1 + len, at + 1 + extra);
    out[at..at + used].copy_from_slice(&prefix[..used]);
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;
    use opentelemetry::trace::{SpanContext, SpanId, TraceFlags, TraceId};
    use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
    use opentelemetry_proto::tonic::common::v1::any_value;
    use prost::Message;
    use std::sync::Arc;
    use std::sync::atomic::Ordering;

    fn sample(name: &'static str) -> FinishedSpan {
        let at = SystemTime::UNIX_EPOCH + Duration::from_nanos(1_700_000_000_123_456_789);
        let context = SpanContext::new(
            TraceId::from_hex("4bf92f3577b34da6a3ce929d0e0e4736").unwrap(),
            SpanId::from_hex("00f067aa0ba902b7").unwrap(),
            TraceFlags::SAMPLED,
            false,
            "rojo=1".parse::<TraceState>().unwrap(),
        );
        FinishedSpan {
            context,
            parent_span_id: SpanId::from_hex("1111111111111111").unwrap(),
            parent_is_remote: true,
            kind: SpanKind::Server,
            name: name.into(),
            start: at,
            end: at + Duration::from_micros(42),
            attributes: vec![
                KeyValue::new("s", "text"),
                KeyValue::new("empty", ""),
                KeyValue::new("b", false),
                KeyValue::new("i", -7_i64),
                KeyValue::new("f", 0.5),
                KeyValue::new("a", Value::Array(Array::String(vec!["x".into(), "y".into()]))),
                KeyValue::new("long", "é".repeat(100)),
                // Written straight out up to a field of 127 bytes, nested
                // past it: both sides of the edge, and the widest integers.
                KeyValue::new("edge", "x".repeat(117)),
                KeyValue::new("edge2", "x".repeat(117)),
                KeyValue::new("max", i64::MAX),
                KeyValue::new("min", i64::MIN),
                KeyValue::new("k".repeat(113), 1_i64),
            ],
            status: Status::error("it broke"),
        }
    }

    #[test]
    fn a_large_request_in_parts_is_the_nested_messages_and_decodes_whole() {
        let resource = resource_fields(&[KeyValue::new("service.name", "svc")]);
        // Lengths of one, two and three varint bytes around the spans.
        for count in [1, 40, 600] {
            let mut spans = Vec::new();
            for _ in 0..count {
                encode(&mut spans, &sample("one"));
            }
            let cut = spans.len() / 3;
            let mut out = Vec::new();
            request(
                &mut out,
                &resource,
                &[&spans[..cut], &[], &spans[cut..]],
                spans.len(),
            );
            // The same written as nested messages, each length after.
            let mut nested = Vec::new();
            message(&mut nested, 1, |out| {
                message(out, 1, |out| out.extend_from_slice(&resource));
                message(out, 2, |out| {
                    message(out, 1, |out| string(out, 1, SCOPE));
                    out.extend_from_slice(&spans);
                });
            });
            assert_eq!(out, nested, "{count} spans");
            let decoded = ExportTraceServiceRequest::decode(out.as_slice()).expect("a valid request");
            assert_eq!(decoded.resource_spans[0].scope_spans[0].spans.len(), count);
        }
    }

    #[test]
    fn a_batch_decodes_with_the_official_definitions_field_by_field() {
        let resource = resource_fields(&[KeyValue::new("service.name", "svc")]);
        let mut root = sample("three");
        root.parent_span_id = SpanId::INVALID;
        root.parent_is_remote = false;
        root.context = SpanContext::new(
            root.context.trace_id(),
            root.context.span_id(),
            TraceFlags::SAMPLED,
            false,
            TraceState::NONE,
        );
        root.status = Status::Unset;
        let mut spans = Vec::new();
        for span in [sample("one"), sample("two"), root] {
            encode(&mut spans, &span);
        }
        let mut out = Vec::new();
        request(&mut out, &resource, &[&spans[..7], &spans[7..]], spans.len());
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
                (
                    scope.name.as_str(),
                    s.spans.iter().map(|span| span.name.as_str()).collect(),
                )
            })
            .collect();
        assert_eq!(scopes, [("toolhost", vec!["one", "two", "three"])]);
        let span = &resource_spans.scope_spans[0].spans[0];
        assert_eq!(hex(&span.trace_id), "4bf92f3577b34da6a3ce929d0e0e4736");
        assert_eq!(hex(&span.span_id), "00f067aa0ba902b7");
        assert_eq!(hex(&span.parent_span_id), "1111111111111111");
        assert_eq!(span.trace_state, "rojo=1");
        assert_eq!(span.kind, 2);
        assert_eq!(span.start_time_unix_nano, 1_700_000_000_123_456_789);
        assert_eq!(span.end_time_unix_nano - span.start_time_unix_nano, 42_000);
        assert_eq!(span.flags, 0x301);
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
        for (key, n) in [("edge", 117), ("edge2", 117)] {
            assert_eq!(value(key), Some(any_value::Value::StringValue("x".repeat(n))));
        }
        assert_eq!(value("max"), Some(any_value::Value::IntValue(i64::MAX)));
        assert_eq!(value("min"), Some(any_value::Value::IntValue(i64::MIN)));
        assert_eq!(value(&"k".repeat(113)), Some(any_value::Value::IntValue(1)));
        assert_eq!(span.attributes.len(), 12);
        let Some(any_value::Value::ArrayValue(array)) = value("a") else {
            panic!("an array")
        };
        assert_eq!(array.values.len(), 2);
        let status = span.status.as_ref().unwrap();
        assert_eq!((status.code, status.message.as_str()), (2, "it broke"));
        let root = &resource_spans.scope_spans[0].spans[2];
        assert!(root.parent_span_id.is_empty() && root.trace_state.is_empty());
        assert_eq!(root.flags, 0x101);
        assert!(root.status.is_none());
    }

    /// A collector on a local port answering each request with the next
    /// of `statuses`; the requests it got (each a valid
    /// `ExportTraceServiceRequest`), counted.
    pub(in crate::config) fn collector(statuses: Vec<u16>) -> (String, Arc<std::sync::atomic::AtomicUsize>) {
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

    pub(in crate::config) fn exporter_to(url: String) -> OtlpHttp {
        let _ = rustls::crypto::ring::default_provider().install_default();
        let client = reqwest::blocking::Client::builder().build().unwrap();
        OtlpHttp::new(client, url, Default::default(), Duration::from_secs(5), &[])
    }

    #[test]
    fn a_collector_that_says_come_back_is_tried_again_and_one_that_refuses_is_not() {
        let (url, seen) = collector(vec![503, 429]);
        let exporter = exporter_to(url);
        let mut one = Vec::new();
        encode(&mut one, &sample("one"));
        let sent = exporter.export(&[&one]);
        assert!(sent.is_ok(), "{sent:?}");
        assert_eq!(seen.load(Ordering::SeqCst), 3, "two refusals, then taken");

        let (url, seen) = collector(vec![400]);
        let exporter = exporter_to(url);
        let error = exporter.export(&[&one]).expect_err("a 400 is an error");
        assert!(error.contains("400"), "{error}");
        assert_eq!(seen.load(Ordering::SeqCst), 1, "not tried again");
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
        let mut out = Vec::new();
        message(&mut out, 2, |out| out.extend(std::iter::repeat_n(1u8, 20_000)));
        assert_eq!(&out[..4], &[0x12, 0xa0, 0x9c, 0x01]);
        assert_eq!(out.len(), 20_004);
    }
}
