//! The spans of one call through the pipeline (see [`crate::spans`]): made
//! only when the dispatcher has a tracer.

use std::sync::{Arc, Mutex, PoisonError};
use std::time::SystemTime;

use opentelemetry::KeyValue;

use super::errors::Failure;
use super::hooks::CallInfo;
use super::waiting::{PersonWait, WaitListener, Waiting};
use super::{DispatchContext, ToolResult};
use crate::error::ErrorCode;
use crate::registry::{ToolOutput, ToolSource, Usage};
use crate::span_recorder::attribute_list;
use crate::spans::{ActiveSpan, Kind, Tracing, attr, interned, interned_hash};
use crate::trace::TraceContext;

/// One call's `execute_tool` span, the parent of its steps' spans. A call
/// whose trace is sampled out makes no span of its steps and builds none
/// of their names and attributes.
pub(super) struct CallTrace<'t> {
    tracing: &'t Tracing,
    span: ActiveSpan,
    /// Whether `span` is the client's MCP request's, taken on (see
    /// [`TraceContext::offered_to_call`]) rather than made here.
    taken_on: bool,
    /// Notes when the call waits for a person (the gate's question, or one
    /// its tool asks while it runs), told on to the context's own; `None`
    /// when the span is not recorded (no `approval` span to make).
    watch: Option<Arc<ApprovalWatch>>,
    waiting: Waiting,
}

impl<'t> CallTrace<'t> {
    /// The span of call `info`, under the context's trace (a client's
    /// request, or the call that made this one).
    pub(super) fn start(tracing: &'t Tracing, info: &CallInfo, ctx: &DispatchContext) -> CallTrace<'t> {
        let offered = match (ctx.depth, ctx.trace.as_deref()) {
            (0, Some(trace)) => trace.take_offered_span(),
            _ => None,
        };
        let taken_on = offered.is_some();
        let span = match offered {
            Some(cx) => ActiveSpan::taken_on(cx),
            None => Self::own_span(tracing, info, ctx),
        };
        if !span.is_recording() {
            return CallTrace {
                tracing,
                span,
                taken_on,
                watch: None,
                waiting: ctx.waiting.clone(),
            };
        }
        // The steps' spans under it are filed with the call by it too (the
        // host's recorder takes it from their parent), not sent again.
        span.set(KeyValue::new(attr::GEN_AI_TOOL_CALL_ID, decimal(info.call_id)));
        if taken_on {
            span.set(KeyValue::new(attr::CALL_DEPTH, 0_i64));
        }
        let watch = Arc::new(ApprovalWatch {
            parent: ctx.waiting.clone(),
            state: Mutex::default(),
        });
        let waiting = Waiting::to(Arc::clone(&watch) as Arc<dyn WaitListener>);
        CallTrace {
            tracing,
            span,
            taken_on,
            watch: Some(watch),
            waiting,
        }
    }

    /// The call's own `execute_tool` span, under the context's trace.
    fn own_span(tracing: &Tracing, info: &CallInfo, ctx: &DispatchContext) -> ActiveSpan {
        tracing.start_lazily(Kind::Internal, ctx.trace.as_deref(), || {
            // The caller's name, which may be made up: bounded here, and
            // taken out of the span's name if no tool has it (see `end`).
            let name = crate::call_log::bounded_name(&info.name);
            let span_name = format!("execute_tool {name}");
            // Room for the call's id, source, what it stands for, error.
            let mut attributes = attribute_list(8);
            attributes.extend([
                KeyValue::new(attr::GEN_AI_OPERATION, "execute_tool"),
                KeyValue::new(attr::GEN_AI_TOOL, name),
                KeyValue::new(attr::CALL_DEPTH, i64::from(ctx.depth)),
            ]);
            (span_name.into(), attributes)
        })
    }

    /// The [`Waiting`] the call's gate and tool report to.
    pub(super) fn waiting(&self) -> &Waiting {
        &self.waiting
    }

    /// The span of the pipeline's checks before the tool runs.
    pub(super) fn admission(&self) -> ActiveSpan {
        self.span.child_lazily(self.tracing, Kind::Internal, || {
            // Room for the `error.type` of a call refused.
            ("admission".into(), attribute_list(1))
        })
    }

    /// An `approval` span, under `parent` (the call's own span if none),
    /// for each time a person was asked since the last of these: from the
    /// question to its answer; `allowed` is the gate's decision, when the
    /// gate asked.
    pub(super) fn approvals(&self, parent: Option<&ActiveSpan>, allowed: Option<bool>) {
        let Some(watch) = &self.watch else {
            return;
        };
        let periods = std::mem::take(&mut watch.state.lock().unwrap_or_else(PoisonError::into_inner).periods);
        for (from, to) in periods {
            let mut attributes = Vec::new();
            if let Some(allowed) = allowed {
                attributes.push(KeyValue::new(
                    attr::APPROVAL_DECISION,
                    if allowed { "allowed" } else { "refused" },
                ));
            }
            parent
                .unwrap_or(&self.span)
                .child_at(self.tracing, "approval", Kind::Internal, attributes, Some(from))
                .end_at(to);
        }
    }

    /// The span of the tool's own work: `sandbox` for a component,
    /// `tools/call` (a client span) for a bridged server's tool, `run`
    /// otherwise.
    ///
    /// `registered` says `name` is a tool the registry has (not a name a
    /// call stands for, which its caller may have made up): its span's
    /// name is then made once for the process (see [`interned`]).
    pub(super) fn run(&self, name: &str, registered: bool, source: &ToolSource) -> ActiveSpan {
        self.span.child_lazily(self.tracing, run_kind(source), || {
            let named = |prefix: &'static str| match registered {
                true => interned(prefix, name),
                false => format!("{prefix}{name}").into(),
            };
            let (span_name, attributes) = match source {
                ToolSource::Wasm { component_hash } => {
                    // Room for usage and an error (see `ran`).
                    let mut attributes = attribute_list(6);
                    attributes.push(KeyValue::new(attr::COMPONENT, interned_hash(component_hash)));
                    (named("sandbox "), attributes)
                }
                ToolSource::Mcp { server } => (
                    named("tools/call "),
                    vec![
                        KeyValue::new(attr::MCP_METHOD, "tools/call"),
                        KeyValue::new(attr::GEN_AI_TOOL, named("")),
                        KeyValue::new(attr::MCP_SERVER, interned("", server)),
                    ],
                ),
                ToolSource::Builtin => (named("run "), Vec::new()),
            };
            (span_name, attributes)
        })
    }

    /// The context the tool's nested and bridged calls carry.
    pub(super) fn context_of(span: &ActiveSpan, ctx: &DispatchContext) -> Option<Arc<TraceContext>> {
        span.context().or_else(|| ctx.trace.clone())
    }

    /// Ends call `info`'s span with its result.
    pub(super) fn end(
        self,
        info: &CallInfo,
        source: Option<&ToolSource>,
        stands_for: Option<&str>,
        result: &ToolResult,
    ) {
        let span = self.span;
        if !span.is_recording() {
            return;
        }
        if let Some(source) = source {
            span.set(KeyValue::new(attr::TOOL_SOURCE, source.kind()));
        }
        if let Some(name) = stands_for {
            span.set(KeyValue::new(attr::STANDS_FOR, name.to_string()));
        }
        if self.taken_on {
            // The request's span: its name and `error.type` are the MCP
            // server's (a made-up tool's name is not in its name).
            if result.error_code == Some(ErrorCode::UnknownTool) {
                let name = crate::call_log::bounded_name(&info.name);
                span.set(KeyValue::new(attr::GEN_AI_TOOL, name));
            }
            if let Some(code) = result.error_code {
                span.set(KeyValue::new(attr::ERROR_CODE, code.as_str()));
            }
            return;
        }
        if result.error_code == Some(ErrorCode::UnknownTool) {
            // Span names stay few: a made-up name is not one of them.
            span.rename("execute_tool");
        }
        if let Some(code) = result.error_code {
            let message = result
                .error
                .as_ref()
                .map_or_else(|| code.as_str().to_string(), |e| e.message().to_string());
            span.fail(code.as_str(), message);
        }
    }
}

/// `n` in decimal, made straight into its shared string.
fn decimal(n: u64) -> Arc<str> {
    let mut digits = [0u8; 20];
    let mut at = digits.len();
    let mut rest = n;
    loop {
        at -= 1;
        digits[at] = b'0' + (rest % 10) as u8;
        rest /= 10;
        if rest == 0 {
            break;
        }
    }
    // ASCII digits only.
    Arc::from(std::str::from_utf8(&digits[at..]).unwrap_or_default())
}

/// The kind of the span of a tool's own work: a client span for a
/// bridged server's tool.
fn run_kind(source: &ToolSource) -> Kind {
    match source {
        ToolSource::Mcp { .. } => Kind::Client,
        _ => Kind::Internal,
    }
}

/// Ends the span of a step with how it went: a failure's code and message.
pub(super) fn step_failed(span: &ActiveSpan, failure: &Failure) {
    if !span.is_recording() {
        return;
    }
    let code = failure.code();
    let message = match failure {
        Failure::Handler(e) | Failure::Pipeline(e) => e.message().to_string(),
        Failure::Unknown { .. } => "no such tool".to_string(),
    };
    span.fail(code.as_str(), message);
}

/// Ends the span of the tool's work with what it used and how it ended.
pub(super) fn ran(span: &ActiveSpan, outcome: &std::result::Result<ToolOutput, Failure>) {
    if !span.is_recording() {
        return;
    }
    let usage = match outcome {
        Ok(output) => output.usage,
        Err(Failure::Handler(e) | Failure::Pipeline(e)) => e.usage().copied(),
        Err(Failure::Unknown { .. }) => None,
    };
    if let Some(Usage {
        fuel_consumed,
        peak_memory_bytes,
        instance_wait_us,
        ..
    }) = usage
    {
        let int = |n: u64| i64::try_from(n).unwrap_or(i64::MAX);
        span.set(KeyValue::new(attr::FUEL, int(fuel_consumed)));
        span.set(KeyValue::new(attr::PEAK_MEMORY, int(peak_memory_bytes)));
        span.set(KeyValue::new(attr::INSTANCE_WAIT, int(instance_wait_us)));
    }
    match outcome {
        Ok(output) => {
            if let Some(code) = output.error_code {
                let reason = output.reason.clone().unwrap_or_else(|| code.as_str().to_string());
                span.fail(code.as_str(), reason);
            }
        }
        Err(failure) => step_failed(span, failure),
    }
}

/// The most waits for a person one call's spans show.
const MAX_WAITS: usize = 16;

/// When a call waited for a person, told on to the call's own [`Waiting`].
pub(super) struct ApprovalWatch {
    parent: Waiting,
    state: Mutex<WatchState>,
}

#[derive(Default)]
struct WatchState {
    /// The waits that ended, not yet made spans.
    periods: Vec<(SystemTime, SystemTime)>,
    /// How many waits are open, and since when the first of them.
    open: usize,
    since: Option<SystemTime>,
    /// The parent's wait, held while a person is asked.
    held: Option<PersonWait>,
}

impl WaitListener for ApprovalWatch {
    fn person_waiting(&self, waiting: bool) {
        let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        if waiting {
            state.open += 1;
            if state.open == 1 {
                state.since = Some(SystemTime::now());
                state.held = Some(self.parent.person());
            }
        } else {
            state.open = state.open.saturating_sub(1);
            if state.open == 0 {
                state.held = None;
                if let Some(since) = state.since.take()
                    && state.periods.len() < MAX_WAITS
                {
                    state.periods.push((since, SystemTime::now()));
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_call_id_is_written_in_decimal() {
        for n in [0, 7, 10, 1234567890, u64::MAX] {
            assert_eq!(&*super::decimal(n), n.to_string());
        }
    }
}
