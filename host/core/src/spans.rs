//! # Spans: what a call did, as OpenTelemetry traces
//!
//! Off unless the host is given a tracer ([`Tracing`]: the operator's
//! `[traces]` config builds one exporting over OTLP, or a host application
//! hands in its own). Then every call the dispatcher runs is a span, and so
//! are the steps it takes, following OpenTelemetry's conventions for MCP
//! and GenAI tool calls:
//!
//! | span | kind | what |
//! |---|---|---|
//! | `{mcp.method.name} {target}` | server | an MCP request (made by the MCP server) |
//! | `execute_tool {gen_ai.tool.name}` | internal | one call through the dispatch pipeline (a client's MCP `tools/call` has none: its server span is the call's, see below) |
//! | `admission` | internal | its hooks, lookup, audience, toolsets, availability, arguments' schema |
//! | `approval` | internal | the time a person was asked whether it may run (only when one was) |
//! | `sandbox {tool}` | internal | a WebAssembly call: fuel, peak memory, the wait for an instance |
//! | `tools/call {tool}` | client | a bridged MCP server's tool |
//! | `run {tool}` | internal | any other tool's handler |
//!
//! The server span of a client's `tools/call` is its call's span (the
//! conventions make that span the tool's `execute_tool` already): the
//! call's attributes go on it and its steps' spans under it, one span a
//! call fewer to make and export. A call run as a task, which outlives
//! its request, keeps a span of its own.
//!
//! A nested call (a plugin or a code-mode script calling a tool) is an
//! `execute_tool` span under the span of the call that made it, and a
//! bridged server gets the W3C context of the span that calls it, so its
//! own spans join the trace.
//!
//! **Never in the way.** A span is recorded in memory and handed to the
//! exporter's queue when it ends; the export runs on a thread of its own,
//! and a full queue (a collector slow or gone) drops spans rather than
//! making a call wait.
//!
//! The context travels as a [`TraceContext`]: its W3C form for what leaves
//! the process, and the local span's OpenTelemetry context for the spans
//! made under it here.

use std::borrow::Cow;
use std::sync::{Arc, LazyLock, PoisonError, RwLock};
use std::time::SystemTime;

use opentelemetry::global::BoxedTracer;
use opentelemetry::trace::{SpanBuilder, SpanContext, SpanKind, Status, TraceContextExt, Tracer};
use opentelemetry::{Context, KeyValue};

use crate::FastMap;
use crate::identity::ComponentHash;
use crate::span_recorder::{RecordedSpan, SpanRecorder, Under};
use crate::trace::TraceContext;

pub use opentelemetry::KeyValue as Attribute;
pub use opentelemetry::trace::SpanKind as Kind;

/// The attribute names toolhost's spans use: OpenTelemetry's (MCP, GenAI,
/// JSON-RPC, errors) and toolhost's own (`toolhost.*`).
pub mod attr {
    /// The MCP method of a request (`tools/call`).
    pub const MCP_METHOD: &str = "mcp.method.name";
    /// The MCP revision the client speaks.
    pub const MCP_PROTOCOL_VERSION: &str = "mcp.protocol.version";
    /// The MCP session's id.
    pub const MCP_SESSION: &str = "mcp.session.id";
    /// A resource's URI (`resources/read`).
    pub const MCP_RESOURCE_URI: &str = "mcp.resource.uri";
    /// The JSON-RPC id of a request, as a string.
    pub const JSONRPC_REQUEST_ID: &str = "jsonrpc.request.id";
    /// The JSON-RPC error code of a request that failed, as a string.
    pub const RPC_STATUS_CODE: &str = "rpc.response.status_code";
    /// `pipe` (stdio) or `tcp` (HTTP).
    pub const NETWORK_TRANSPORT: &str = "network.transport";
    /// `execute_tool`, for a tool's call.
    pub const GEN_AI_OPERATION: &str = "gen_ai.operation.name";
    /// The tool's name.
    pub const GEN_AI_TOOL: &str = "gen_ai.tool.name";
    /// The tool call's id.
    pub const GEN_AI_TOOL_CALL_ID: &str = "gen_ai.tool.call.id";
    /// A prompt's name (`prompts/get`).
    pub const GEN_AI_PROMPT: &str = "gen_ai.prompt.name";
    /// Why it failed: `tool_error` for a tool's result with `isError`, a
    /// JSON-RPC code, or toolhost's error code.
    pub const ERROR_TYPE: &str = "error.type";
    /// Where the tool comes from: `builtin`, `mcp` or `wasm`.
    pub const TOOL_SOURCE: &str = "toolhost.tool.source";
    /// A WebAssembly tool's component (its BLAKE3 hash).
    pub const COMPONENT: &str = "toolhost.component.hash";
    /// A bridged tool's MCP server, as configured.
    pub const MCP_SERVER: &str = "toolhost.mcp.server";
    /// How deep the call is nested (0: a client's call).
    pub const CALL_DEPTH: &str = "toolhost.call.depth";
    /// The call a call stands for (a lazy server's `call_tool`).
    pub const STANDS_FOR: &str = "toolhost.call.stands_for";
    /// Fuel a sandboxed call used.
    pub const FUEL: &str = "toolhost.sandbox.fuel_consumed";
    /// The most linear memory a sandboxed call's instance held, in bytes.
    pub const PEAK_MEMORY: &str = "toolhost.sandbox.peak_memory_bytes";
    /// How long a sandboxed call waited for a free instance, in
    /// microseconds.
    pub const INSTANCE_WAIT: &str = "toolhost.sandbox.instance_wait_us";
    /// toolhost's error code of a call whose span is the MCP request's
    /// (whose `error.type` is the MCP conventions' own).
    pub const ERROR_CODE: &str = "toolhost.error.code";
    /// What the person asked decided: `allowed` or `refused`.
    pub const APPROVAL_DECISION: &str = "toolhost.approval.decision";
}

/// The most names [`interned`] keeps (past it, a name is made each time,
/// as it was before any was kept).
const MAX_INTERNED: usize = 4096;

/// The names of a host's spans and tools, each made once, by what it is
/// made of: span names are few by design (a tool's name, a fixed word
/// before it), and a call's spans would otherwise format and free the
/// same few strings each time.
#[derive(Default)]
struct Interned {
    /// By the text before the name (`"sandbox "`, or none: a handful, so
    /// looked through in turn), then the name.
    names: Vec<(&'static str, FastMap<Box<str>, &'static str>)>,
    /// A component's hash, written out.
    hashes: FastMap<ComponentHash, &'static str>,
    count: usize,
}

impl Interned {
    /// The names kept after `prefix`, if any.
    fn after(&self, prefix: &str) -> Option<&FastMap<Box<str>, &'static str>> {
        self.names
            .iter()
            .find(|(p, _)| *p == prefix)
            .map(|(_, names)| names)
    }
}

static INTERNED: LazyLock<RwLock<Interned>> = LazyLock::new(RwLock::default);

/// `prefix` followed by `name`, made once for the life of the process and
/// then shared: for span names and attribute values made of a **name the
/// host has** (a tool's, a prompt's), never of one a client made up, so
/// what is kept is bounded by what the host serves (and by
/// [`MAX_INTERNED`] in all: past it, each is made anew).
pub fn interned(prefix: &'static str, name: &str) -> Cow<'static, str> {
    let found = INTERNED
        .read()
        .unwrap_or_else(PoisonError::into_inner)
        .after(prefix)
        .and_then(|names| names.get(name).copied());
    if let Some(found) = found {
        return Cow::Borrowed(found);
    }
    keep(|kept| {
        let at = match kept.names.iter().position(|(p, _)| *p == prefix) {
            Some(at) => at,
            None => {
                kept.names.push((prefix, FastMap::default()));
                kept.names.len() - 1
            }
        };
        let names = &mut kept.names[at].1;
        if let Some(found) = names.get(name) {
            return (*found, false);
        }
        let made: &'static str = Box::leak(format!("{prefix}{name}").into_boxed_str());
        names.insert(name.into(), made);
        (made, true)
    })
    .map_or_else(|| Cow::Owned(format!("{prefix}{name}")), Cow::Borrowed)
}

/// `hash` written out (its `Display` form), made once as [`interned`]
/// names are: a host has few components.
pub fn interned_hash(hash: &ComponentHash) -> Cow<'static, str> {
    let found = INTERNED
        .read()
        .unwrap_or_else(PoisonError::into_inner)
        .hashes
        .get(hash)
        .copied();
    if let Some(found) = found {
        return Cow::Borrowed(found);
    }
    keep(|kept| match kept.hashes.get(hash) {
        Some(found) => (*found, false),
        None => {
            let made: &'static str = Box::leak(hash.to_string().into_boxed_str());
            kept.hashes.insert(*hash, made);
            (made, true)
        }
    })
    .map_or_else(|| Cow::Owned(hash.to_string()), Cow::Borrowed)
}

/// What `make` finds or makes in what is kept (and whether it made it),
/// under the write lock; `None` once [`MAX_INTERNED`] are kept.
fn keep(make: impl FnOnce(&mut Interned) -> (&'static str, bool)) -> Option<&'static str> {
    let mut kept = INTERNED.write().unwrap_or_else(PoisonError::into_inner);
    if kept.count >= MAX_INTERNED {
        return None;
    }
    let (found, made) = make(&mut kept);
    kept.count += usize::from(made);
    Some(found)
}

/// Where the host's spans go: an OpenTelemetry tracer, shared by every
/// call. Cheap to clone.
#[derive(Clone)]
pub struct Tracing {
    tracer: Backend,
}

/// The tracer behind a [`Tracing`].
#[derive(Clone)]
enum Backend {
    /// The host's own recorder: asked whether a span is recorded before
    /// the span is described, its spans kept as they are, not boxed.
    Recorder(SpanRecorder),
    /// Any other tracer (a host application's).
    Other(Arc<BoxedTracer>),
}

impl std::fmt::Debug for Tracing {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Tracing")
    }
}

impl Tracing {
    /// Spans go to `tracer` (any OpenTelemetry tracer: the SDK's, or a host
    /// application's own).
    pub fn new<T>(tracer: T) -> Tracing
    where
        T: Tracer + Send + Sync + 'static,
        T::Span: Send + Sync + 'static,
    {
        Tracing {
            tracer: Backend::Other(Arc::new(BoxedTracer::new(Box::new(tracer)))),
        }
    }

    /// Spans go to the host's own `recorder`.
    pub fn recorded(recorder: SpanRecorder) -> Tracing {
        Tracing {
            tracer: Backend::Recorder(recorder),
        }
    }

    /// Starts span `name` of `kind` now, under `parent` (none: the root of
    /// a new trace), with `attributes`.
    pub fn start(
        &self,
        name: impl Into<Cow<'static, str>>,
        kind: SpanKind,
        parent: Option<&TraceContext>,
        attributes: Vec<KeyValue>,
    ) -> ActiveSpan {
        self.build(name.into(), kind, attributes, None, Parent::Trace(parent))
    }

    /// Like [`Tracing::start`], its name and attributes made by `describe`
    /// only when the span is recorded: a request sampled out costs its
    /// sampling decision and no more. The sampler decides before the span
    /// has them (OpenTelemetry's ratio and parent-based samplers, the ones
    /// `[traces]` uses, look at neither); under a parent sampled out, no
    /// span is made at all, whatever the sampler.
    pub fn start_lazily(
        &self,
        kind: SpanKind,
        parent: Option<&TraceContext>,
        describe: impl FnOnce() -> (Cow<'static, str>, Vec<KeyValue>),
    ) -> ActiveSpan {
        // A caller that sampled its trace out decided for the spans under
        // it too (as parent-based samplers do): nothing is made, and the
        // caller's context stands for this span.
        let context = parent.map_or_else(SpanContext::empty_context, TraceContext::span_context);
        if let Some(parent) = parent
            && context.is_valid()
            && !context.is_sampled()
        {
            return ActiveSpan {
                held: match parent.local() {
                    Some(local) => Held::Span(local.clone()),
                    None => Held::Outside(Arc::new(parent.clone())),
                },
                owned: false,
            };
        }
        match &self.tracer {
            Backend::Recorder(recorder) => {
                // The recorder says first whether the span is recorded: a
                // span that is gets its name and attributes as it is built.
                let decided = recorder.decide(&context);
                let (name, attributes) = match decided.1 {
                    true => describe(),
                    false => (Cow::Borrowed(""), Vec::new()),
                };
                let span = recorder.start(
                    name,
                    kind,
                    attributes,
                    Under::context(&context),
                    None,
                    Some(decided),
                );
                ActiveSpan::owning(LocalSpan::Recorded(Arc::new(span)))
            }
            Backend::Other(_) => {
                let span = self.build(Cow::Borrowed(""), kind, Vec::new(), None, Parent::Trace(parent));
                if span.is_recording() {
                    let (name, attributes) = describe();
                    span.rename(name);
                    for attribute in attributes {
                        span.set(attribute);
                    }
                }
                span
            }
        }
    }

    /// A span under `parent`, starting at `at` (now if `None`).
    fn build(
        &self,
        name: Cow<'static, str>,
        kind: SpanKind,
        attributes: Vec<KeyValue>,
        at: Option<SystemTime>,
        parent: Parent<'_>,
    ) -> ActiveSpan {
        let local = match &self.tracer {
            Backend::Recorder(recorder) => {
                // A step is filed with the call of the span it is made under.
                let parent_call = match parent {
                    Parent::Span(LocalSpan::Recorded(span)) => span.call_id(),
                    _ => None,
                };
                let parent = parent.span_context();
                let under = Under {
                    context: &parent,
                    call: parent_call,
                };
                LocalSpan::Recorded(Arc::new(recorder.start(name, kind, attributes, under, at, None)))
            }
            Backend::Other(tracer) => {
                let mut builder = SpanBuilder::from_name(name)
                    .with_kind(kind)
                    .with_attributes(attributes);
                if let Some(at) = at {
                    builder = builder.with_start_time(at);
                }
                let parent = parent.otel_context();
                LocalSpan::Other(parent.with_span(tracer.build_with_context(builder, &parent)))
            }
        };
        ActiveSpan::owning(local)
    }
}

/// What a span is made under.
#[derive(Clone, Copy)]
enum Parent<'a> {
    /// A span made here.
    Span(&'a LocalSpan),
    /// A call's context (none: the span is a trace's root).
    Trace(Option<&'a TraceContext>),
}

impl Parent<'_> {
    /// The parent's span context (an invalid one for none).
    fn span_context(self) -> SpanContext {
        match self {
            Parent::Span(local) => local.span_context(),
            Parent::Trace(trace) => trace.map_or_else(SpanContext::empty_context, TraceContext::span_context),
        }
    }

    /// The parent as an OpenTelemetry context, for another tracer.
    fn otel_context(self) -> Context {
        match self {
            Parent::Span(local) => local.otel_context(),
            Parent::Trace(trace) => trace.map_or_else(Context::new, TraceContext::otel_context),
        }
    }
}

/// A span made in this process.
#[derive(Clone)]
pub(crate) enum LocalSpan {
    /// The host's recorder's, shared by what holds it.
    Recorded(Arc<RecordedSpan>),
    /// Another tracer's, in its OpenTelemetry context.
    Other(Context),
}

impl std::fmt::Debug for LocalSpan {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("LocalSpan").field(&self.span_context()).finish()
    }
}

impl LocalSpan {
    /// Its trace and span ids, flags and trace state.
    pub(crate) fn span_context(&self) -> SpanContext {
        match self {
            LocalSpan::Recorded(span) => span.span_context().clone(),
            LocalSpan::Other(cx) => cx.span().span_context().clone(),
        }
    }

    /// It as an OpenTelemetry context, for another tracer's spans under
    /// it: its own, or one naming the recorded span as a (remote) parent.
    pub(crate) fn otel_context(&self) -> Context {
        match self {
            LocalSpan::Other(cx) => cx.clone(),
            LocalSpan::Recorded(span) => Context::new().with_remote_span_context(span.span_context().clone()),
        }
    }

    /// Whether it is recorded.
    fn is_recording(&self) -> bool {
        match self {
            LocalSpan::Recorded(span) => span.is_recording(),
            LocalSpan::Other(cx) => cx.span().is_recording(),
        }
    }

    fn set(&self, attribute: KeyValue) {
        match self {
            LocalSpan::Recorded(span) => span.set_attribute(attribute),
            LocalSpan::Other(cx) => cx.span().set_attribute(attribute),
        }
    }

    fn set_status(&self, status: Status) {
        match self {
            LocalSpan::Recorded(span) => span.set_status(status),
            LocalSpan::Other(cx) => cx.span().set_status(status),
        }
    }

    fn rename(&self, name: Cow<'static, str>) {
        match self {
            LocalSpan::Recorded(span) => span.update_name(name),
            LocalSpan::Other(cx) => cx.span().update_name(name),
        }
    }

    fn end(&self, at: SystemTime) {
        match self {
            LocalSpan::Recorded(span) => span.end(at),
            LocalSpan::Other(cx) => cx.span().end_with_timestamp(at),
        }
    }
}

/// A span that was started: it ends when [`ActiveSpan::end`] is called or
/// when it is dropped (a call abandoned mid-way still ends its spans).
#[derive(Debug)]
pub struct ActiveSpan {
    held: Held,
    /// Whether the span is this value's to end: not for the stand-in of a
    /// child never made under a span sampled out (see
    /// [`ActiveSpan::child_lazily`]), nor for a span taken on from its
    /// maker ([`ActiveSpan::taken_on`]).
    owned: bool,
}

/// What an [`ActiveSpan`] holds.
#[derive(Debug, Clone)]
enum Held {
    /// A span made here: its own, or the one it stands for.
    Span(LocalSpan),
    /// No span: it stands for the context of a caller outside the process
    /// that sampled its trace out (boxed: rare, and every span's future
    /// would otherwise carry its room).
    Outside(Arc<TraceContext>),
}

impl ActiveSpan {
    /// `span`, to be ended by this value.
    fn owning(span: LocalSpan) -> ActiveSpan {
        ActiveSpan {
            held: Held::Span(span),
            owned: true,
        }
    }

    /// `span`, made and ended by someone else: what is set on this value
    /// goes on that span.
    pub(crate) fn taken_on(span: LocalSpan) -> ActiveSpan {
        ActiveSpan {
            held: Held::Span(span),
            owned: false,
        }
    }

    /// The span held, if any.
    fn span(&self) -> Option<&LocalSpan> {
        match &self.held {
            Held::Span(span) => Some(span),
            Held::Outside(_) => None,
        }
    }

    /// The context calls made under this span carry: its W3C form names
    /// this span as their parent. `None` when the tracer makes no real
    /// spans (a no-op tracer).
    pub fn context(&self) -> Option<Arc<TraceContext>> {
        match &self.held {
            Held::Span(span) => TraceContext::of_span(span).map(Arc::new),
            Held::Outside(trace) => Some(Arc::clone(trace)),
        }
    }

    /// Whether the span is recorded (not sampled out): attributes that cost
    /// something to make can be skipped when it is not.
    pub fn is_recording(&self) -> bool {
        self.span().is_some_and(LocalSpan::is_recording)
    }

    /// Sets `attribute` on the span.
    pub fn set(&self, attribute: KeyValue) {
        if let Some(span) = self.span() {
            span.set(attribute);
        }
    }

    /// Renames the span.
    pub fn rename(&self, name: impl Into<Cow<'static, str>>) {
        if let Some(span) = self.span() {
            span.rename(name.into());
        }
    }

    /// Marks the span failed: `error.type` is `error_type`, its status an
    /// error saying `message`.
    pub fn fail(&self, error_type: impl Into<opentelemetry::Value>, message: impl Into<Cow<'static, str>>) {
        if let Some(span) = self.span() {
            span.set(KeyValue::new(attr::ERROR_TYPE, error_type));
            span.set_status(Status::error(message));
        }
    }

    /// A child span of `kind`, made only when this span is recorded,
    /// its name and attributes by `describe`: under a span sampled out,
    /// nothing is made, and what is returned stands for this span's
    /// context (a call under it carries it) without ending it.
    pub fn child_lazily(
        &self,
        tracing: &Tracing,
        kind: SpanKind,
        describe: impl FnOnce() -> (Cow<'static, str>, Vec<KeyValue>),
    ) -> ActiveSpan {
        match self.span() {
            Some(span) if span.is_recording() => {
                let (name, attributes) = describe();
                tracing.build(name, kind, attributes, None, Parent::Span(span))
            }
            _ => ActiveSpan {
                held: self.held.clone(),
                owned: false,
            },
        }
    }

    /// Starts a child span of `kind` at `at` (now if `None`).
    pub fn child_at(
        &self,
        tracing: &Tracing,
        name: impl Into<Cow<'static, str>>,
        kind: SpanKind,
        attributes: Vec<KeyValue>,
        at: Option<SystemTime>,
    ) -> ActiveSpan {
        let parent = match &self.held {
            Held::Span(span) => Parent::Span(span),
            Held::Outside(trace) => Parent::Trace(Some(trace)),
        };
        tracing.build(name.into(), kind, attributes, at, parent)
    }

    /// Ends the span now.
    pub fn end(self) {
        // Dropped: see `Drop`.
    }

    /// Ends the span at `at`.
    pub fn end_at(self, at: SystemTime) {
        if self.owned
            && let Some(span) = self.span()
        {
            span.end(at);
        }
    }
}

impl Drop for ActiveSpan {
    fn drop(&mut self) {
        // Ending an ended span does nothing.
        if self.owned
            && let Some(span) = self.span()
        {
            span.end(SystemTime::now());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use opentelemetry::trace::noop::NoopTracer;

    #[test]
    fn a_name_is_made_once_and_shared() {
        let first = interned("sandbox ", "interned_test_tool");
        let again = interned("sandbox ", "interned_test_tool");
        assert_eq!(first, "sandbox interned_test_tool");
        let (Cow::Borrowed(first), Cow::Borrowed(again)) = (first, again) else {
            panic!("kept, not made each time");
        };
        assert!(std::ptr::eq(first, again));
        assert_eq!(interned("", "interned_test_tool"), "interned_test_tool");
        let hash = ComponentHash::of(b"interned");
        assert_eq!(interned_hash(&hash), hash.to_string());
        assert!(matches!(interned_hash(&hash), Cow::Borrowed(_)));
    }

    #[test]
    fn a_noop_tracer_gives_no_context_to_pass_on() {
        let tracing = Tracing::new(NoopTracer::new());
        let span = tracing.start("x", SpanKind::Internal, None, Vec::new());
        assert!(span.context().is_none());
        assert!(!span.is_recording());
    }
}
