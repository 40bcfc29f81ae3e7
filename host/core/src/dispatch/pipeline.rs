//! The dispatch pipeline, step by step (see the module documentation of
//! [`crate::dispatch`] for the map and [`Failure`] for the error levels).

use std::borrow::Cow;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Instant;

use serde_json::{Value, json};

use super::GateDecision;
use super::errors::{self, Failure};
use super::events::{CallOutcome, ToolCallEvent};
use super::hooks::{CallInfo, PreDecision};
use super::traced::{self, CallTrace};
use super::{DispatchContext, Dispatcher, Session, ToolResult, is_lazy_search};
use crate::metrics::CallObserver;
use std::collections::BTreeSet;

use crate::error::{Error, ErrorCode, Result};
use crate::registry::lazy::{self, RegistryMode};
use crate::registry::{
    CallContext, CallId, Registry, Standing, Tool, ToolCallerHandle, ToolEntry, ToolOutput, ToolSource,
    Usage, openai_definition,
};

/// What one step of the pipeline produced.
type Step<T> = std::result::Result<T, Failure>;

/// What the pipeline made of a call, for [`Dispatcher::dispatch`] to finish.
struct Ran {
    outcome: Step<ToolOutput>,
    /// The tool's source, once it was found.
    source: Option<ToolSource>,
    /// The call it stands for, once resolved (see [`Tool::stands_for`]).
    stands_for: Option<String>,
}

impl Ran {
    fn of(outcome: Step<ToolOutput>, source: Option<ToolSource>) -> Ran {
        Ran {
            outcome,
            source,
            stands_for: None,
        }
    }

    fn failed(failure: Failure, source: Option<ToolSource>) -> Ran {
        Ran::of(Err(failure), source)
    }
}

impl Dispatcher {
    /// Runs one call through the pipeline: the pre-call hooks; lookup
    /// (host-application tools first); the audience check; the session's toolsets; lazy activation;
    /// availability; argument validation against the tool's JSON Schema;
    /// the approval gate's `require_approval` rules; execution under the context's cancellation
    /// and deadline (async handlers on the runtime, blocking ones on the
    /// blocking pool); the post-call hooks. Publishes a [`ToolCallEvent`].
    ///
    /// Never fails: an error is a JSON error object in the result (see
    /// [`Failure`]).
    pub async fn dispatch(&self, name: &str, arguments: Value, ctx: &DispatchContext) -> ToolResult {
        let started = Instant::now();
        let call_id: CallId = self.inner.next_call_id.fetch_add(1, Ordering::Relaxed);
        let info = CallInfo {
            call_id,
            parent_call_id: ctx.parent_call_id,
            name: name.to_string(),
            session_id: ctx.session.shared_id(),
            audience: ctx.session.audience(),
            trace: ctx.trace.clone(),
        };
        let mut observed = Observed::start(&self.inner.observers, &info, &arguments);
        let traced = self
            .inner
            .tracing
            .as_ref()
            .map(|tracing| CallTrace::start(tracing, &info, ctx));
        let Ran {
            outcome,
            source,
            stands_for,
        } = self.run_pipeline(&info, arguments, ctx, traced.as_ref()).await;
        let (mut result, usage) = to_result(call_id, name, outcome);
        // The post-call hooks see a call that stands for another as that one.
        let as_effective = stands_for.map(|name| CallInfo { name, ..info.clone() });
        for hook in &self.inner.post_hooks {
            hook(as_effective.as_ref().unwrap_or(&info), &mut result);
        }
        result.call_id = call_id;
        if let Some(traced) = traced {
            traced.end(
                &info,
                source.as_ref(),
                as_effective.as_ref().map(|call| call.name.as_str()),
                &result,
            );
        }
        let event = ToolCallEvent {
            call_id,
            parent_call_id: ctx.parent_call_id,
            session_id: info.session_id,
            name: info.name,
            stands_for: as_effective.map(|call| call.name),
            source,
            duration: started.elapsed(),
            outcome: result.error_code.map_or(CallOutcome::Ok, CallOutcome::Error),
            usage,
        };
        observed.end(&event);
        event.trace();
        if self.inner.subscribed.load(Ordering::Acquire) {
            let _ = self.inner.events.send(event);
        }
        result
    }

    async fn run_pipeline(
        &self,
        info: &CallInfo,
        arguments: Value,
        ctx: &DispatchContext,
        traced: Option<&CallTrace<'_>>,
    ) -> Ran {
        let admission = traced.map(CallTrace::admission);
        let (entry, mut arguments, source) = match self.admit_call(info, arguments, ctx) {
            Ok(admitted) => admitted,
            Err(ran) => {
                if let (Some(span), Err(failure)) = (&admission, &ran.outcome) {
                    traced::step_failed(span, failure);
                }
                return *ran;
            }
        };
        drop(admission);
        let handler = entry.handler().as_ref();
        let waiting = traced.map_or(&ctx.waiting, CallTrace::waiting);
        let (stands_for, allowed) = self.approve(info, handler, &mut arguments, waiting).await;
        if let Some(traced) = traced {
            traced.approvals(None, Some(allowed.is_ok()));
        }
        if let Err(refused) = allowed {
            return Ran {
                outcome: refused,
                source,
                stands_for,
            };
        }
        // A tool that cannot call tools gets no handle for nested calls.
        let caller = handler.calls_tools().then(|| self.nested_caller(ctx));
        let outcome = match (traced, &source) {
            (Some(traced), Some(from)) => {
                let span = match stands_for.as_deref() {
                    Some(name) => traced.run(name, false, from),
                    None => traced.run(&info.name, true, from),
                };
                let carried = Carried {
                    trace: CallTrace::context_of(&span, ctx),
                    waiting: traced.waiting().clone(),
                };
                let outcome = execute(handler, arguments, info, ctx, caller, carried).await;
                // The questions its tool asked while it ran.
                traced.approvals(Some(&span), None);
                traced::ran(&span, &outcome);
                outcome
            }
            _ => {
                let carried = Carried {
                    trace: ctx.trace.clone(),
                    waiting: ctx.waiting.clone(),
                };
                execute(handler, arguments, info, ctx, caller, carried).await
            }
        };
        Ran {
            outcome,
            source,
            stands_for,
        }
    }

    /// The pipeline's checks before the tool runs: the pre-call hooks,
    /// lookup, audience, toolsets, lazy activation, availability and the
    /// arguments' schema. `Err`: the call's end (a failure, or lazy mode's
    /// `tool_search`, answered here).
    fn admit_call(
        &self,
        info: &CallInfo,
        arguments: Value,
        ctx: &DispatchContext,
    ) -> std::result::Result<(Arc<ToolEntry>, Value, Option<ToolSource>), Box<Ran>> {
        let arguments = match self.pre_hooks(info, Cow::Owned(arguments)) {
            Ok(arguments) => arguments.into_owned(),
            Err(failure) => return Err(Box::new(Ran::failed(failure, None))),
        };
        // One read of the shared snapshot: the registry and what the
        // toolset selection picks from it.
        let (registry, selected) = self.snapshot();
        let selected = match (selected, ctx.session.toolsets()) {
            (Ok(_), Some(_)) => self.selected_for(&registry, &ctx.session),
            (selected, _) => selected,
        };
        if is_lazy_search(self.inner.mode, &info.name) {
            return Err(Box::new(Ran::of(
                self.tool_search(&registry, &arguments, ctx),
                Some(ToolSource::Builtin),
            )));
        }
        // A host-application tool answers instead of the registry's tool of
        // its name, behind the same gates (see `DispatcherBuilder::intercept`).
        let intercepted = self.inner.host_tools.get(&info.name);
        let entry = match (intercepted, registry.get(&info.name)) {
            (Some(host), listed) => {
                if let Err(e) = audience_gate(host, ctx) {
                    return Err(Box::new(Ran::failed(e, Some(ToolSource::Builtin))));
                }
                if listed.is_some()
                    && let Err((failure, _)) = self.admit(&registry, &selected, &info.name, ctx)
                {
                    return Err(Box::new(Ran::failed(failure, Some(ToolSource::Builtin))));
                }
                host
            }
            (None, _) => match self.admit(&registry, &selected, &info.name, ctx) {
                Ok(entry) => entry,
                Err((failure, source)) => return Err(Box::new(Ran::failed(failure, source))),
            },
        };
        let source = Some(entry.source().clone());
        if let Err(e) = entry.validate(&arguments) {
            return Err(Box::new(Ran::failed(Failure::Pipeline(e), source)));
        }
        Ok((Arc::clone(entry), arguments, source))
    }

    /// Runs the pre-call hooks on call `info` with `arguments`: the
    /// arguments to go on with (borrowed while no hook rewrote them).
    fn pre_hooks<'a>(&self, info: &CallInfo, mut arguments: Cow<'a, Value>) -> Step<Cow<'a, Value>> {
        for hook in &self.inner.pre_hooks {
            match hook(info, &arguments) {
                PreDecision::Continue => {}
                PreDecision::Rewrite(new) => arguments = Cow::Owned(new),
                PreDecision::Block(message) => {
                    return Err(Failure::Pipeline(Error::new(ErrorCode::Blocked, message)));
                }
            }
        }
        Ok(arguments)
    }

    /// The approval gate's `require_approval` check, on the arguments exactly
    /// as the tool will get them (after the pre-call hooks and validation).
    /// For a tool that stands for another call ([`Tool::stands_for`]), the
    /// pre-call hooks run again on that call (a rewrite of its arguments
    /// reaches the tool through [`Tool::stand_in_arguments`]) and the gate
    /// judges that call instead. Returns the name of the call it stands
    /// for, if any, and whether it may run: `Err` is what to return
    /// instead, the seed's `BLOCKED: …` result, a hook's block, or the
    /// tool's refusal of the call it would stand for.
    async fn approve(
        &self,
        info: &CallInfo,
        tool: &dyn Tool,
        arguments: &mut Value,
        waiting: &super::Waiting,
    ) -> (Option<String>, std::result::Result<(), Step<ToolOutput>>) {
        let (name, rewritten) = match tool.stands_for(arguments) {
            Standing::Itself => return (None, self.gate(info, &info.name, arguments, waiting).await),
            Standing::Refused(refusal) => return (None, Err(Ok(*refusal))),
            Standing::For {
                name,
                arguments: effective,
            } => {
                let as_effective = CallInfo { name, ..info.clone() };
                match self.pre_hooks(&as_effective, effective) {
                    Err(blocked) => return (Some(as_effective.name), Err(Err(blocked))),
                    Ok(Cow::Borrowed(effective)) => {
                        let allowed = self.gate(info, &as_effective.name, effective, waiting).await;
                        return (Some(as_effective.name), allowed);
                    }
                    Ok(Cow::Owned(rewritten)) => (as_effective.name, rewritten),
                }
            }
        };
        *arguments = tool.stand_in_arguments(std::mem::take(arguments), rewritten);
        let allowed = match tool.stands_for(arguments) {
            Standing::For { name: now, arguments } if now == name => {
                self.gate(info, &name, &arguments, waiting).await
            }
            Standing::Refused(refusal) => Err(Ok(*refusal)),
            _ => Err(Err(Failure::Pipeline(Error::internal(format!(
                "tool `{}` no longer stands for `{name}` once a pre-call hook rewrote that call's arguments",
                info.name
            ))))),
        };
        (Some(name), allowed)
    }

    /// The gate's check of a call of tool `name` with `arguments`, made as
    /// call `info`.
    async fn gate(
        &self,
        info: &CallInfo,
        name: &str,
        arguments: &Value,
        waiting: &super::Waiting,
    ) -> std::result::Result<(), Step<ToolOutput>> {
        let Some(gate) = &self.inner.gate else {
            return Ok(());
        };
        match gate.check_call(&info.session_id, name, arguments, waiting).await {
            GateDecision::Allow => Ok(()),
            GateDecision::Refuse(output) => Err(Ok(output)),
        }
    }

    /// Lookup, audience, toolsets, lazy activation and availability.
    fn admit<'r>(
        &self,
        registry: &'r Registry,
        selected: &Result<Arc<BTreeSet<String>>>,
        name: &str,
        ctx: &DispatchContext,
    ) -> std::result::Result<&'r Arc<ToolEntry>, (Failure, Option<ToolSource>)> {
        let session = &ctx.session;
        let lazy = self.inner.mode == RegistryMode::Lazy;
        let Some(entry) = registry.get(name) else {
            return Err((self.unknown(registry, name, session), None));
        };
        let source = Some(entry.source().clone());
        if let Err(failure) = audience_gate(entry, ctx) {
            return Err((failure, source));
        }
        let selected = selected
            .as_ref()
            .map_err(|e| (Failure::Pipeline(e.clone()), source.clone()))?;
        if !selected.contains(name) {
            return Err((self.unknown(registry, name, session), source));
        }
        // Lazy mode keeps tools out of the model's context until it
        // activates them; a tool's nested calls do not enter that context.
        if lazy && ctx.depth == 0 && !session.is_active(name) {
            return Err((errors::not_active(name), source));
        }
        if let Some(check) = entry.check()
            && !check.run()
        {
            let e = Error::new(
                ErrorCode::Unavailable,
                format!(
                    "tool `{name}` is unavailable right now (its availability check `{}` failed)",
                    check.label()
                ),
            );
            return Err((Failure::Pipeline(e), source));
        }
        Ok(entry)
    }

    fn unknown(&self, registry: &Registry, name: &str, session: &Session) -> Failure {
        let visible = self.searchable(registry, session);
        let suggestions = lazy::suggest(visible.iter().map(|e| e.name()), name, 3);
        Failure::Unknown {
            suggestions: suggestions.into_iter().map(String::from).collect(),
            lazy: self.inner.mode == RegistryMode::Lazy,
        }
    }

    /// The tools a session could use: visible, selected, available.
    pub(super) fn searchable<'r>(
        &self,
        registry: &'r Registry,
        session: &Session,
    ) -> Vec<&'r Arc<ToolEntry>> {
        match self.selected_for(registry, session) {
            Ok(selected) => registry.available_entries(session.audience(), Some(&selected)),
            Err(_) => Vec::new(),
        }
    }

    /// `tool_search(query=...)` or `tool_search(name=...)` (lazy mode).
    fn tool_search(&self, registry: &Registry, arguments: &Value, ctx: &DispatchContext) -> Step<ToolOutput> {
        let candidates = self.searchable(registry, &ctx.session);
        if let Some(name) = arguments.get("name").and_then(Value::as_str) {
            let Some(entry) = candidates.iter().find(|e| e.name() == name) else {
                let suggestions = lazy::suggest(candidates.iter().map(|e| e.name()), name, 3);
                let hint = if suggestions.is_empty() {
                    String::new()
                } else {
                    format!("; did you mean {}?", suggestions.join(", "))
                };
                return Err(Failure::Pipeline(Error::new(
                    ErrorCode::UnknownTool,
                    format!(
                        "no tool named `{name}` can be activated{hint} Search with tool_search(query=\"...\")"
                    ),
                )));
            };
            ctx.session.activate(name);
            let visible: Vec<&crate::registry::ToolSpec> = candidates.iter().map(|e| e.spec()).collect();
            let schema = openai_definition(&entry.patched_spec(&visible));
            return Ok(ToolOutput::json(&json!({ "activated": name, "schema": schema })));
        }
        let Some(query) = arguments.get("query").and_then(Value::as_str) else {
            return Err(Failure::Pipeline(Error::new(
                ErrorCode::InvalidArguments,
                "tool_search needs `query` (to search) or `name` (to activate a tool)",
            )));
        };
        if lazy::query_too_long(query) {
            return Err(Failure::Pipeline(Error::new(
                ErrorCode::InvalidArguments,
                format!(
                    "tool_search's `query` is {} characters; it may be at most {} (a few words)",
                    query.chars().count(),
                    lazy::MAX_QUERY_CHARS
                ),
            )));
        }
        let pairs: Vec<(&str, &str)> = candidates
            .iter()
            .map(|e| (e.name(), e.spec().description.as_str()))
            .collect();
        let hits = lazy::rank(pairs.iter().copied(), query);
        let found: Vec<(&str, &str)> = hits
            .iter()
            .filter_map(|h| pairs.iter().find(|(n, _)| n == h).copied())
            .collect();
        Ok(ToolOutput::json(&lazy::search_result(&found)))
    }
}

/// The audience gate: a public session calls public tools only.
fn audience_gate(entry: &ToolEntry, ctx: &DispatchContext) -> Step<()> {
    let audience = ctx.session.audience();
    if audience.may_use(entry.audience()) {
        return Ok(());
    }
    Err(Failure::Pipeline(Error::new(
        ErrorCode::AudienceDenied,
        format!(
            "tool `{}` is trusted-only and this session is {}; only tools registered public may be called",
            entry.name(),
            audience.as_str()
        ),
    )))
}

/// What a tool's call carries of its own beside the dispatch context: the
/// trace its spans (and nested and bridged calls) go under, and where its
/// waits for a person are reported.
struct Carried {
    trace: Option<Arc<crate::trace::TraceContext>>,
    waiting: super::Waiting,
}

/// Runs `tool` under the context's cancellation and deadline, polled in
/// place (no task of its own: a hop to another worker thread would cost
/// more than a small tool's whole call). A panic in the handler is a
/// handler failure (`internal`).
async fn execute(
    tool: &dyn Tool,
    arguments: Value,
    info: &CallInfo,
    ctx: &DispatchContext,
    caller: Option<ToolCallerHandle>,
    carried: Carried,
) -> Step<ToolOutput> {
    use futures_util::FutureExt;
    // The call's own token, not a child of the context's: the select below
    // cancels it when the context is cancelled or the deadline passes, and
    // the tool runs only inside that select, so it sees the same thing; a
    // child token would lock the context's token (shared by every call of a
    // session) when made and again when dropped.
    let cancel = tokio_util::sync::CancellationToken::new();
    let call_ctx = CallContext {
        call_id: info.call_id,
        parent_call_id: info.parent_call_id,
        session_id: Some(Arc::clone(&info.session_id)),
        session_continues: Arc::clone(ctx.session.continues()),
        deadline: ctx.deadline,
        cancel: cancel.clone(),
        limits: ctx.limits,
        depth: ctx.depth,
        caller,
        waiting: carried.waiting,
        progress: ctx.progress.clone(),
        log: ctx.log.clone(),
        // Fail-closed: a public turn's tools may not ask the client.
        client: match ctx.session.audience() {
            crate::registry::ToolAudience::Trusted => ctx.client.clone(),
            crate::registry::ToolAudience::Public => None,
        },
        trace: carried.trace,
    };
    let call = std::panic::AssertUnwindSafe(tool.call(arguments, call_ctx)).catch_unwind();
    let mut call = std::pin::pin!(call);
    let cancelled = || {
        Err(Failure::Pipeline(Error::new(
            ErrorCode::Cancelled,
            "the call was cancelled",
        )))
    };
    let late = || {
        Err(Failure::Handler(Error::new(
            ErrorCode::Timeout,
            "the call did not finish before its deadline",
        )))
    };
    // Most calls of a small tool finish in their first poll. Make that poll
    // after the checks the select below starts with, so that such a call
    // sets up no cancellation waiter and no timer. It still spends a unit
    // of the task's cooperative budget, as a call through a timer would:
    // a loop of such calls yields to the runtime in turn, instead of
    // keeping its worker thread from every other task.
    tokio::task::coop::consume_budget().await;
    if ctx.cancel.is_cancelled() {
        return cancelled();
    }
    if ctx.deadline.is_some_and(|at| Instant::now() >= at) {
        return late();
    }
    let first = std::future::poll_fn(|cx| std::task::Poll::Ready(call.as_mut().poll(cx))).await;
    if let std::task::Poll::Ready(outcome) = first {
        return finished(outcome);
    }
    let deadline = async {
        match ctx.deadline {
            Some(at) => tokio::time::sleep_until(at.into()).await,
            None => std::future::pending().await,
        }
    };
    // Cancellation and the deadline win over a tool that notices them
    // itself: the caller learns why the call ended, in the pipeline's words.
    tokio::select! {
        biased;
        _ = ctx.cancel.cancelled() => {
            cancel.cancel();
            cancelled()
        }
        _ = deadline => {
            cancel.cancel();
            late()
        }
        outcome = call => finished(outcome),
    }
}

/// A handler's outcome as a pipeline step: a panic is an `internal` failure.
fn finished(outcome: std::thread::Result<Result<ToolOutput>>) -> Step<ToolOutput> {
    match outcome {
        Ok(Ok(output)) => Ok(output),
        Ok(Err(e)) => Err(Failure::Handler(e)),
        Err(payload) => {
            let message = errors::panic_message(&*payload);
            Err(Failure::Handler(Error::new(
                ErrorCode::Internal,
                format!("the handler panicked: {message}"),
            )))
        }
    }
}

fn to_result(call_id: CallId, name: &str, outcome: Step<ToolOutput>) -> (ToolResult, Option<Usage>) {
    match outcome {
        Ok(output) => (
            ToolResult {
                call_id,
                error: output.error_code.map(|code| {
                    Error::new(
                        code,
                        output.reason.clone().unwrap_or_else(|| output.content.clone()),
                    )
                }),
                text: output.text.filter(|_| output.error_code.is_none()),
                blocks: if output.error_code.is_none() {
                    output.blocks
                } else {
                    Vec::new()
                },
                structured: output.structured.filter(|_| output.error_code.is_none()),
                content: output.content,
                error_code: output.error_code,
            },
            output.usage,
        ),
        Err(failure) => {
            let usage = match &failure {
                Failure::Handler(e) | Failure::Pipeline(e) => e.usage().copied(),
                Failure::Unknown { .. } => None,
            };
            let content = failure.to_json(name).to_string();
            let code = failure.code();
            let mut error = failure.into_error(name);
            if let Some(usage) = usage {
                error = error.with_usage(usage);
            }
            (
                ToolResult {
                    call_id,
                    content,
                    text: None,
                    error_code: Some(code),
                    error: Some(error),
                    blocks: Vec::new(),
                    structured: None,
                },
                usage,
            )
        }
    }
}

/// The observers' view of one call: told of its start, and of its end when
/// it ends or when it is dropped unfinished (a cancelled request's call).
struct Observed<'a> {
    observers: &'a [Arc<dyn CallObserver>],
    info: Option<CallInfo>,
}

impl<'a> Observed<'a> {
    fn start(observers: &'a [Arc<dyn CallObserver>], info: &CallInfo, arguments: &Value) -> Observed<'a> {
        if observers.is_empty() {
            return Observed {
                observers,
                info: None,
            };
        }
        for observer in observers {
            observer.started(info, arguments);
        }
        Observed {
            observers,
            info: Some(info.clone()),
        }
    }

    fn end(&mut self, event: &ToolCallEvent) {
        if let Some(info) = self.info.take() {
            for observer in self.observers {
                observer.ended(&info, Some(event));
            }
        }
    }
}

impl Drop for Observed<'_> {
    fn drop(&mut self) {
        if let Some(info) = self.info.take() {
            for observer in self.observers {
                observer.ended(&info, None);
            }
        }
    }
}
