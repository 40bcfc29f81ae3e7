//! Spans (`DispatcherBuilder::tracing`), recorded by OpenTelemetry's SDK:
//! a call and its steps, an approval span only when a person was asked
//! (and how long), the caller's W3C context as the parent, a refused call's
//! `error.type`.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use opentelemetry::trace::{SpanKind, TracerProvider as _};
use opentelemetry_sdk::error::OTelSdkResult;
use opentelemetry_sdk::trace::{SdkTracerProvider, SpanData, SpanProcessor};
use serde_json::{Value, json};
use toolhost_core::ErrorCode;
use toolhost_core::dispatch::{CallGate, DispatchContext, Dispatcher, GateDecision, Waiting};
use toolhost_core::registry::{BoxFuture, Registry, ToolOutput};
use toolhost_core::spans::Tracing;
use toolhost_core::trace::TraceContext;

use crate::fixtures::{echo, trusted};

/// Keeps every finished span.
#[derive(Debug, Default, Clone)]
struct Kept(Arc<Mutex<Vec<SpanData>>>);

impl SpanProcessor for Kept {
    fn on_start(&self, _span: &mut opentelemetry_sdk::trace::Span, _cx: &opentelemetry::Context) {}
    fn on_end(&self, span: SpanData) {
        self.0.lock().unwrap().push(span);
    }
    fn force_flush(&self) -> OTelSdkResult {
        Ok(())
    }
    fn shutdown_with_timeout(&self, _timeout: Duration) -> OTelSdkResult {
        Ok(())
    }
}

impl Kept {
    fn named(&self, name: &str) -> Vec<SpanData> {
        self.0
            .lock()
            .unwrap()
            .iter()
            .filter(|s| s.name == name)
            .cloned()
            .collect()
    }
}

fn attr(span: &SpanData, key: &str) -> Option<String> {
    span.attributes
        .iter()
        .find(|kv| kv.key.as_str() == key)
        .map(|kv| kv.value.to_string())
}

/// A gate that asks "a person" about `ask` (holding the wait for a
/// while) and allows it when `allow`; other tools pass without a question.
#[derive(Debug)]
struct Asking {
    ask: &'static str,
    allow: bool,
}

impl CallGate for Asking {
    fn check_call<'a>(
        &'a self,
        _session: &'a str,
        tool: &'a str,
        _arguments: &'a Value,
        waiting: &'a Waiting,
    ) -> BoxFuture<'a, GateDecision> {
        Box::pin(async move {
            if tool != self.ask {
                return GateDecision::Allow;
            }
            let _asking = waiting.person();
            tokio::time::sleep(Duration::from_millis(30)).await;
            match self.allow {
                true => GateDecision::Allow,
                false => GateDecision::Refuse(ToolOutput::refused(ErrorCode::Blocked, "no")),
            }
        })
    }
}

fn traced(gate: Asking) -> (Dispatcher, Kept) {
    let (dispatcher, kept, _) = traced_by(gate);
    (dispatcher, kept)
}

/// [`traced`], and the tracer its spans are made by.
fn traced_by(gate: Asking) -> (Dispatcher, Kept, Tracing) {
    let kept = Kept::default();
    let provider = SdkTracerProvider::builder()
        .with_span_processor(kept.clone())
        .build();
    let mut registry = Registry::new();
    registry.register(echo("quiet")).unwrap();
    registry.register(echo("asked")).unwrap();
    let tracing = Tracing::new(provider.tracer("test"));
    let dispatcher = Dispatcher::builder(registry)
        .approval(Arc::new(gate))
        .tracing(tracing.clone())
        .build()
        .unwrap();
    (dispatcher, kept, tracing)
}

#[tokio::test]
async fn a_span_offered_to_a_call_is_the_first_calls_own_and_no_one_elses() {
    let (dispatcher, kept, tracing) = traced_by(Asking {
        ask: "asked",
        allow: true,
    });
    // As the MCP server does for a `tools/call`: its server span offered.
    let request = tracing.start("tools/call quiet", SpanKind::Server, None, Vec::new());
    let offered = Arc::new(request.context().expect("a recorded span").offered_to_call());
    let ctx = DispatchContext {
        trace: Some(offered),
        ..trusted()
    };
    let first = dispatcher.dispatch("quiet", json!({}), &ctx).await;
    let second = dispatcher.dispatch("quiet", json!({}), &ctx).await;
    assert_eq!((first.error_code, second.error_code), (None, None));
    request.end();
    let [server] = &kept.named("tools/call quiet")[..] else {
        panic!("one request span")
    };
    assert_eq!(
        attr(server, "gen_ai.tool.call.id"),
        Some(first.call_id.to_string()),
        "the first call took the request's span"
    );
    assert_eq!(attr(server, "toolhost.call.depth").as_deref(), Some("0"));
    assert!(attr(server, "toolhost.tool.source").is_some());
    let [own] = &kept.named("execute_tool quiet")[..] else {
        panic!("the second call's own span, and only it")
    };
    assert_eq!(attr(own, "gen_ai.tool.call.id"), Some(second.call_id.to_string()));
    assert_eq!(own.parent_span_id, server.span_context.span_id());
    let admissions = kept.named("admission");
    assert_eq!(admissions.len(), 2);
    assert!(
        admissions
            .iter()
            .any(|a| a.parent_span_id == server.span_context.span_id()),
        "the first call's steps are under the request's span"
    );
}

#[tokio::test]
async fn a_call_is_a_span_with_its_steps_and_an_approval_only_when_a_person_was_asked() {
    let (dispatcher, kept) = traced(Asking {
        ask: "asked",
        allow: true,
    });
    let parent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
    let ctx = DispatchContext {
        trace: TraceContext::parse(parent, None).map(Arc::new),
        ..trusted()
    };
    assert_eq!(
        dispatcher
            .dispatch("quiet", json!({"a": 1}), &ctx)
            .await
            .error_code,
        None
    );
    assert_eq!(
        dispatcher.dispatch("asked", json!({}), &ctx).await.error_code,
        None
    );

    let [quiet] = &kept.named("execute_tool quiet")[..] else {
        panic!()
    };
    assert_eq!(
        quiet.span_context.trace_id().to_string(),
        "4bf92f3577b34da6a3ce929d0e0e4736"
    );
    assert_eq!(quiet.parent_span_id.to_string(), "00f067aa0ba902b7");
    assert_eq!(
        attr(quiet, "gen_ai.operation.name").as_deref(),
        Some("execute_tool")
    );
    assert_eq!(attr(quiet, "toolhost.tool.source").as_deref(), Some("builtin"));
    let approvals = kept.named("approval");
    let [approval] = &approvals[..] else {
        panic!("{approvals:#?}")
    };
    let [asked] = &kept.named("execute_tool asked")[..] else {
        panic!()
    };
    assert_eq!(approval.parent_span_id, asked.span_context.span_id());
    assert_eq!(
        attr(approval, "toolhost.approval.decision").as_deref(),
        Some("allowed")
    );
    let waited = approval.end_time.duration_since(approval.start_time).unwrap();
    assert!(waited >= Duration::from_millis(30), "{waited:?}");
    for call in [quiet, asked] {
        let steps: Vec<_> = kept
            .0
            .lock()
            .unwrap()
            .iter()
            .filter(|s| s.parent_span_id == call.span_context.span_id())
            .map(|s| (s.name.to_string(), s.span_kind.clone()))
            .collect();
        assert!(
            steps.contains(&("admission".to_string(), SpanKind::Internal)),
            "{steps:?}"
        );
        let run = format!("run {}", attr(call, "gen_ai.tool.name").unwrap());
        assert!(steps.contains(&(run, SpanKind::Internal)), "{steps:?}");
    }
}

#[tokio::test]
async fn a_refused_or_unknown_call_says_why_in_its_span() {
    let (dispatcher, kept) = traced(Asking {
        ask: "asked",
        allow: false,
    });
    let refused = dispatcher.dispatch("asked", json!({}), &trusted()).await;
    assert_eq!(refused.error_code, Some(ErrorCode::Blocked));
    let [call] = &kept.named("execute_tool asked")[..] else {
        panic!()
    };
    assert_eq!(attr(call, "error.type").as_deref(), Some("blocked"));
    let [approval] = &kept.named("approval")[..] else {
        panic!()
    };
    assert_eq!(
        attr(approval, "toolhost.approval.decision").as_deref(),
        Some("refused")
    );
    // Refused before it ran: no run span.
    assert!(kept.named("run asked").is_empty());

    dispatcher.dispatch("nope", json!({}), &trusted()).await;
    let [unknown] = &kept.named("execute_tool")[..] else {
        panic!()
    };
    assert_eq!(attr(unknown, "gen_ai.tool.name").as_deref(), Some("nope"));
    assert_eq!(attr(unknown, "error.type").as_deref(), Some("unknown_tool"));
    let [admission] = &kept
        .named("admission")
        .into_iter()
        .filter(|s| s.parent_span_id == unknown.span_context.span_id())
        .collect::<Vec<_>>()[..]
    else {
        panic!()
    };
    assert_eq!(attr(admission, "error.type").as_deref(), Some("unknown_tool"));
}

/// A call whose trace its caller sampled out (flags `00`) makes no span,
/// and runs as a traced one does: the gate still asks, the result is the
/// same.
#[tokio::test]
async fn a_call_sampled_out_makes_no_span() {
    let (dispatcher, kept) = traced(Asking {
        ask: "asked",
        allow: true,
    });
    let parent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00";
    let ctx = DispatchContext {
        trace: TraceContext::parse(parent, None).map(Arc::new),
        ..trusted()
    };
    for tool in ["quiet", "asked"] {
        let result = dispatcher.dispatch(tool, json!({"a": 1}), &ctx).await;
        assert_eq!(result.error_code, None, "{tool}");
    }
    let refused = dispatcher.dispatch("nothing", json!({}), &ctx).await;
    assert_eq!(refused.error_code, Some(ErrorCode::UnknownTool));
    assert!(kept.0.lock().unwrap().is_empty(), "{:?}", kept.0.lock().unwrap());
}
