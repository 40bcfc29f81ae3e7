//! `[traces]`: OpenTelemetry spans of requests and calls (see
//! [`toolhost_core::spans`] for which), exported over OTLP/HTTP to a
//! collector.
//!
//! ```toml
//! [traces]
//! endpoint = "http://127.0.0.1:4318"   # none (the default): no spans
//! ```
//!
//! Spans are sent in batches from a thread of their own (OpenTelemetry's
//! batch processor and a blocking HTTP client), never from a call's task:
//! a collector that is slow, refuses, or is gone makes the queue fill, and
//! spans past `max_queue` are dropped, while calls go on as fast as
//! without traces.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use opentelemetry::trace::{Status, TracerProvider as _};
use opentelemetry_sdk::Resource;
use opentelemetry_sdk::error::OTelSdkResult;
use opentelemetry_sdk::trace::{
    BatchConfigBuilder, BatchSpanProcessor, Sampler, SdkTracerProvider, SpanData, SpanProcessor,
};
use serde::Deserialize;

use super::otlp::OtlpHttp;
use crate::error::{Error, ErrorCode, Result};
use toolhost_core::call_log::{CallLog, EndedSpan, call_id_of};
use toolhost_core::filed_spans::FilingTracer;
use toolhost_core::spans::Tracing;

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
    /// The most finished spans waiting to be exported; more are dropped.
    #[serde(default = "default_max_queue")]
    pub max_queue: usize,
    /// How long finished spans wait before they are sent (a full batch of
    /// 512 goes at once).
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
    /// The SDK's provider, exporting; none for the console alone.
    provider: Option<SdkTracerProvider>,
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
        let Some(provider) = &self.provider else {
            return;
        };
        if let Err(e) = provider.shutdown_with_timeout(timeout) {
            tracing::warn!("traces: the last spans were not all sent: {e}");
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
            // exported, so none of the SDK's span machinery is needed.
            return Ok(calls.map(|calls| Traces {
                tracing: Tracing::new(FilingTracer::new(calls)),
                provider: None,
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
        let built = std::thread::spawn(move || config.provider(url, headers, timeout, calls))
            .join()
            .map_err(|_| Error::internal("[traces]: building the exporter panicked"))??;
        Ok(Some(built))
    }

    fn provider(
        &self,
        url: String,
        headers: http::HeaderMap,
        timeout: Duration,
        calls: Option<Arc<CallLog>>,
    ) -> Result<Traces> {
        let _ = rustls::crypto::ring::default_provider().install_default();
        let client = reqwest::blocking::Client::builder()
            .timeout(timeout)
            .connect_timeout(timeout)
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .map_err(|e| Error::new(ErrorCode::Config, format!("[traces]: the HTTP client: {e}")))?;
        let exporter = OtlpHttp::new(client, url, headers, timeout);
        let batches = BatchConfigBuilder::default()
            .with_max_queue_size(self.max_queue)
            .with_max_export_batch_size(512.min(self.max_queue))
            .with_scheduled_delay(Duration::from_millis(self.delay_ms))
            .build();
        let batch = BatchSpanProcessor::builder(exporter)
            .with_batch_config(batches)
            .build();
        // One processor for both: the SDK gives each processor but the
        // last a copy of every span, and the console needs only a look.
        let provider = SdkTracerProvider::builder().with_span_processor(Exported {
            batch,
            calls: calls.map(CallSpans),
        });
        let provider = provider
            .with_sampler(Sampler::ParentBased(Box::new(Sampler::TraceIdRatioBased(
                self.sample_ratio,
            ))))
            .with_resource(
                Resource::builder()
                    .with_service_name(self.service_name.clone())
                    .with_attribute(opentelemetry::KeyValue::new(
                        "service.version",
                        env!("CARGO_PKG_VERSION"),
                    ))
                    .build(),
            )
            .build();
        let tracing = Tracing::new(provider.tracer("toolhost"));
        Ok(Traces {
            provider: Some(provider),
            tracing,
        })
    }
}

/// Files the dispatcher's spans with their calls in the console's call log
/// (by their `gen_ai.tool.call.id`), as each ends.
#[derive(Debug)]
struct CallSpans(Arc<CallLog>);

impl CallSpans {
    /// Files `span` with its call, if it is one of a call's.
    fn file(&self, span: &SpanData) {
        let Some(call_id) = span.attributes.iter().find_map(call_id_of) else {
            return;
        };
        let error = match &span.status {
            Status::Error { description } => Some(description.to_string()),
            _ => None,
        };
        self.0.record_span(
            call_id,
            EndedSpan {
                name: span.name.to_string(),
                span_id: Some(span.span_context.span_id().to_string()),
                start: span.start_time,
                end: span.end_time,
                error,
            },
        );
    }
}

/// The exporter's batches, and the console's call log when it is on: each
/// span looked at for the console, then handed to the batch (not copied).
#[derive(Debug)]
struct Exported {
    batch: BatchSpanProcessor,
    calls: Option<CallSpans>,
}

impl SpanProcessor for Exported {
    fn on_start(&self, span: &mut opentelemetry_sdk::trace::Span, cx: &opentelemetry::Context) {
        self.batch.on_start(span, cx);
    }

    fn on_end(&self, span: SpanData) {
        if let Some(calls) = &self.calls {
            calls.file(&span);
        }
        self.batch.on_end(span);
    }

    fn force_flush(&self) -> OTelSdkResult {
        self.batch.force_flush()
    }

    fn shutdown_with_timeout(&self, timeout: Duration) -> OTelSdkResult {
        self.batch.shutdown_with_timeout(timeout)
    }

    fn set_resource(&mut self, resource: &Resource) {
        self.batch.set_resource(resource);
    }
}
