//! One call: a fresh `Store` and instance from the cached `InstancePre`,
//! under the call's limits, with every failure classified.

use std::sync::Arc;
use std::time::{Duration, Instant};

use wasmtime::Store;
use wasmtime::UpdateDeadline;

use super::LoadedComponent;
use crate::bindings::{PluginPre, latest};
use crate::sandbox::{self, CallOrigin, SandboxState};
use toolhost_core::dispatch::PausingClock;
use toolhost_core::error::{Error, ErrorCode, Result};
use toolhost_core::limits::{Limits, LimitsOverride};
use toolhost_core::registry::{CallContext, ToolOutput, Usage};

/// How long past its deadline a call blocked in a host function (a WASI
/// sleep, say) may take to be dropped. Calls running guest code are stopped
/// by the epoch ticker at the deadline itself.
const HOST_BLOCK_GRACE: Duration = Duration::from_millis(20);

/// The start of the `tool_failed` message for a tool whose result is not
/// JSON (the message goes on with the parser's error).
pub const NOT_JSON: &str = "the tool returned text that is not JSON";

/// The start of the `tool_failed` message for a tool whose result does not
/// fit its output schema (the message goes on with where and why).
pub const OUTPUT_MISFIT: &str = "the tool's result does not fit its output schema";

/// The `tool_failed` message for a tool that states an output schema but
/// gave no structured result.
pub const NO_STRUCTURED: &str = "the tool states an output schema but gave no structured result (MCP's structuredContent): give one that fits the schema";

/// The `tool_failed` message for a 0.3.0 tool whose structured result is
/// JSON but not an object (MCP's `structuredContent` must be one).
pub const NOT_AN_OBJECT: &str = "the tool's structured result is not a JSON object (MCP's structuredContent must be one; give other values as text)";

/// What running guest code once, in a fresh sandbox, gave and used.
#[derive(Debug)]
pub struct Sandboxed<T> {
    /// The value, or why there is none.
    pub result: Result<T>,
    /// Fuel consumed and peak memory.
    pub usage: Usage,
    /// How many bytes the guest wrote to its stdout (captured, never shown to
    /// a caller; counted past the capture cap too). A plugin should write
    /// nothing there.
    pub stdout_bytes: u64,
    /// What the guest wrote to its stdout (up to the `stderr_bytes` limit),
    /// for a component loaded with
    /// [`keep_stdout`](super::LoadOptions::keep_stdout); empty otherwise.
    /// Kept whatever the call's outcome: a trap, an exhausted limit, a stop.
    pub stdout: String,
}

/// The result of one sandboxed call: the tool's result (its JSON, checked to
/// be JSON within the output limit and to fit its output schema, and its
/// text for the model, if any; with its usage), or why there is none.
pub type SandboxedCall = Sandboxed<ToolOutput>;

/// What [`LoadedComponent::run`] gives: the value, what it used, what it
/// wrote on stdout, and why the host refused the call's outbound HTTP
/// requests (one line each).
pub(super) struct Ran<R> {
    pub(super) result: Result<R>,
    pub(super) usage: Usage,
    pub(super) stdout_bytes: u64,
    pub(super) stdout: String,
    pub(super) http_notes: Vec<String>,
}

impl<R> Ran<R> {
    fn failed(error: Error) -> Self {
        Ran {
            result: Err(error),
            usage: Usage::default(),
            stdout_bytes: 0,
            stdout: String::new(),
            http_notes: Vec::new(),
        }
    }
}

impl LoadedComponent {
    /// Calls tool `name` with `arguments` (JSON text) in a fresh instance.
    ///
    /// `overrides` are applied on top of the component's own limits;
    /// `deadline`, when earlier than the timeout, ends the call sooner.
    /// Never panics; every failure is a typed error in
    /// [`SandboxedCall::result`].
    pub fn call<'a>(
        &'a self,
        name: &'a str,
        arguments: &'a str,
        overrides: &LimitsOverride,
        deadline: Option<Instant>,
        call_id: u64,
    ) -> impl Future<Output = SandboxedCall> + use<'a> {
        let ctx = CallContext {
            call_id,
            deadline,
            limits: *overrides,
            ..CallContext::default()
        };
        self.checked(name, arguments, ctx)
    }

    /// Calls tool `name` with `arguments` (JSON text) in a fresh instance, as
    /// the call `ctx` describes: its limit overrides, deadline, and the
    /// caller that nested tool calls go to. The arguments are checked
    /// against the tool's parameter schema first, as dispatch checks them
    /// (an `invalid_arguments` error with the same message).
    pub fn call_with<'a>(
        &'a self,
        name: &'a str,
        arguments: &'a str,
        ctx: &CallContext,
    ) -> impl Future<Output = SandboxedCall> + use<'a> {
        self.checked(name, arguments, ctx.clone())
    }

    /// The call of tool `name` if `arguments` fit its schema, else the
    /// refusal.
    fn checked<'a>(
        &'a self,
        name: &'a str,
        arguments: &'a str,
        ctx: CallContext,
    ) -> impl Future<Output = SandboxedCall> + use<'a> {
        use futures_util::future::Either;
        match self.check_arguments(name, arguments) {
            Ok(()) => Either::Left(self.call_in(name, arguments, ctx)),
            Err(e) => Either::Right(std::future::ready(SandboxedCall::refused(e))),
        }
    }

    /// Whether `arguments` are JSON that fits tool `name`'s parameter
    /// schema (a tool it does not have is left to the call to report).
    fn check_arguments(&self, name: &str, arguments: &str) -> Result<()> {
        let Some(index) = self.tools.iter().position(|t| t.name == name) else {
            return Ok(());
        };
        let value = toolhost_json::from_str::<serde_json::Value>(arguments).map_err(|e| {
            Error::new(
                ErrorCode::InvalidArguments,
                format!("the arguments are not JSON: {e}"),
            )
        })?;
        self.checks[index].arguments.validate(&value)
    }

    /// As [`LoadedComponent::call_with`], without checking the arguments
    /// against the tool's schema: for a caller that checked them already
    /// (dispatch, which calls a component's tools through
    /// [`WasmTool`](super::WasmTool)), or that wants to see how the
    /// component itself answers arguments its schema forbids (the
    /// conformance suite). Every other check and limit applies.
    pub fn call_unchecked<'a>(
        &'a self,
        name: &'a str,
        arguments: &'a str,
        ctx: &CallContext,
    ) -> impl Future<Output = SandboxedCall> + use<'a> {
        self.call_in(name, arguments, ctx.clone())
    }

    /// As [`LoadedComponent::call_unchecked`], taking the call's context
    /// (which the call's store keeps) and its arguments: for
    /// [`WasmTool`](super::WasmTool), which owns both, so that a call
    /// copies neither.
    ///
    /// Everything up to the first wait (the tool's lookup, its limits, the
    /// call's store, which takes `ctx`) is done here, before the future is
    /// made: the future holds the store, not the context it was made from,
    /// and is the smaller for it (a call's future is moved, and for dispatch
    /// boxed, whole).
    pub(super) fn call_in<'a>(
        &'a self,
        name: &'a str,
        arguments: impl AsRef<str> + Send + 'a,
        ctx: CallContext,
    ) -> impl Future<Output = SandboxedCall> + 'a {
        use futures_util::FutureExt;
        use futures_util::future::Either;
        let Some(index) = self.tools.iter().position(|t| t.name == name) else {
            let known: Vec<&str> = self.tools.iter().map(|t| t.name.as_str()).collect();
            return Either::Left(std::future::ready(SandboxedCall::refused(Error::new(
                ErrorCode::UnknownTool,
                format!(
                    "component {} has no tool `{name}`; it offers: {}",
                    self.hash.short(),
                    known.join(", ")
                ),
            ))));
        };
        let limits = self.effective_limits(&ctx.limits);
        let tool = Some(Arc::clone(&self.tool_names[index]));
        let run = self.run(limits, tool, ctx, async move |store, pre| {
            pre.call_tool(store, name, arguments.as_ref()).await
        });
        // `map`, not an async block: the future is the run's and no more.
        Either::Right(run.map(move |ran| self.tool_result(index, &limits, ran)))
    }

    /// A tool call's result from what its run gave: the output checked
    /// (see [`LoadedComponent::check_output`]), the tool's own errors
    /// typed, and the usage on either.
    fn tool_result(
        &self,
        index: usize,
        limits: &Limits,
        ran: Ran<std::result::Result<latest::ToolOutput, latest::ToolError>>,
    ) -> SandboxedCall {
        let Ran {
            result,
            usage,
            stdout_bytes,
            stdout,
            http_notes,
        } = ran;
        let result = match result {
            Ok(Ok(output)) => self.check_output(index, output, limits),
            Ok(Err(latest::ToolError::InvalidArguments(message))) => {
                Err(Error::new(ErrorCode::InvalidArguments, message))
            }
            Ok(Err(latest::ToolError::Failed(message))) => Err(Error::new(
                ErrorCode::ToolFailed,
                self.with_grant_hint(message, &http_notes),
            )),
            Err(e) => Err(e),
        };
        SandboxedCall {
            result: match result {
                Ok(output) => Ok(ToolOutput {
                    usage: Some(usage),
                    ..output
                }),
                Err(e) if e.usage().is_none() => Err(e.with_usage(usage)),
                Err(e) => Err(e),
            },
            usage,
            stdout_bytes,
            stdout,
        }
    }

    /// Checks what tool `index` returned: within the output limit (its
    /// structured JSON and content blocks together), its structured result
    /// JSON (from 0.3.0 on, a JSON object), fitting the tool's output
    /// schema if it states one. A result that breaks any of these is the
    /// tool's failure, and so is a result without structured JSON from a
    /// tool that states an output schema (MCP: such a tool must give one).
    fn check_output(&self, index: usize, output: latest::ToolOutput, limits: &Limits) -> Result<ToolOutput> {
        let size = output.size();
        if size as u64 > limits.output_bytes {
            return Err(Error::new(
                ErrorCode::OutputTooLarge,
                format!(
                    "the tool returned {size} bytes, more than the {} byte output limit; ask for less (a smaller range, a page) or raise `output_bytes`",
                    limits.output_bytes
                ),
            ));
        }
        let not_json = |e: serde_json::Error| Error::new(ErrorCode::ToolFailed, format!("{NOT_JSON}: {e}"));
        let schema = self.checks.get(index).and_then(|c| c.output.as_ref());
        let Some(json) = output.structured.as_deref() else {
            if schema.is_some() {
                return Err(Error::new(ErrorCode::ToolFailed, NO_STRUCTURED));
            }
            return Ok(output.into_core(None));
        };
        if self.world >= crate::bindings::WorldVersion::V0_3_0 {
            if !json.trim_start().starts_with('{') {
                // Not an object (if JSON at all): say which.
                toolhost_json::from_str::<serde::de::IgnoredAny>(json).map_err(not_json)?;
                return Err(Error::new(ErrorCode::ToolFailed, NOT_AN_OBJECT));
            }
            // A 0.3.0 tool's structured result is read once, here, into the
            // value that travels on to the MCP client's `structuredContent`.
            let value: serde_json::Value = toolhost_json::from_str(json).map_err(not_json)?;
            if let Some(validator) = schema {
                check_fit(validator, &value)?;
            }
            return Ok(output.into_core(Some(value)));
        }
        match schema {
            // A text result (one JSON string) is checked 64 bytes a step
            // (`toolhost_json::is_plain_string`); the rest is read as
            // serde_json reads it (`toolhost_json::from_str`).
            None if toolhost_json::is_plain_string(json) => {}
            None => {
                toolhost_json::from_str::<serde::de::IgnoredAny>(json).map_err(not_json)?;
            }
            Some(validator) => {
                let value: serde_json::Value = toolhost_json::from_str(json).map_err(not_json)?;
                check_fit(validator, &value)?;
            }
        }
        Ok(output.into_core(None))
    }

    /// A failure may come from a capability the plugin asked for but was not
    /// granted (the guest only sees "no such file" or `HTTP-request-denied`):
    /// say so, naming them and every outbound request the host refused.
    fn with_grant_hint(&self, mut message: String, http_notes: &[String]) -> String {
        if !http_notes.is_empty() {
            message = format!(
                "{message} (note: the host refused outbound HTTP: {})",
                http_notes.join("; ")
            );
        }
        let missing = &self.capabilities.not_granted;
        if missing.is_empty() {
            return message;
        }
        format!(
            "{message} (note: this plugin declares capabilities that are not granted to it: {}; grant them in its [plugins.grants] if it needs them)",
            missing.join(", ")
        )
    }

    /// Runs `list-tools`, then `declare` (for a version that has it), then
    /// `list-prompts`, `list-resources` and `list-templates` (for a
    /// component that exports them), in one fresh instance with the
    /// component's limits and no capabilities.
    pub(super) async fn list_and_declare(&self) -> Sandboxed<Listed> {
        let limits = self.effective_limits(&LimitsOverride::default());
        let ran = self
            .run(limits, None, CallContext::default(), async |store, pre| {
                let plugin = pre.instantiate_async(store).await?;
                let specs = plugin.list_tools(store).await?;
                let declared = plugin.declare(store).await?;
                let catalog = plugin.list_catalog(store).await?;
                Ok(Listed {
                    specs,
                    declared,
                    catalog,
                })
            })
            .await;
        Sandboxed {
            result: ran.result,
            usage: ran.usage,
            stdout_bytes: ran.stdout_bytes,
            stdout: ran.stdout,
        }
    }

    /// The limits a call with `overrides` runs under: the engine's
    /// defaults, under the component's own limits, under `overrides`.
    pub fn effective_limits(&self, overrides: &LimitsOverride) -> Limits {
        self.base_limits.apply(overrides)
    }

    /// Runs `f` (which instantiates `pre` afresh in the store it is given)
    /// under `limits`, classifying failures.
    /// Cancelling `ctx.cancel` stops the guest at its next epoch tick (its
    /// nested calls are cancelled too, so it cannot stay blocked in one for
    /// long), keeping what it wrote; one that does not come back within
    /// [`HOST_BLOCK_GRACE`] is dropped.
    ///
    /// The future is made here, not by an `async fn`, so that it holds
    /// `ctx` once (an `async fn` keeps its arguments twice). The call's
    /// store, which takes `ctx` and opens the component's granted
    /// directories, is made once the call has a place in the pool: a call
    /// waiting for one holds no descriptor. A call that finds a free place
    /// and finishes without waiting (most calls of a small tool) sets up no
    /// timer and no cancellation waiter: those are made only when the call
    /// first waits.
    pub(super) fn run<'a, R: 'a>(
        &'a self,
        limits: Limits,
        tool: Option<Arc<str>>,
        ctx: CallContext,
        f: impl AsyncFnOnce(&mut Store<SandboxState>, &PluginPre) -> wasmtime::Result<R> + 'a,
    ) -> impl Future<Output = Ran<R>> + 'a {
        let started = Instant::now();
        let mut deadline_at = started + limits.timeout;
        if let Some(d) = ctx.deadline {
            deadline_at = deadline_at.min(d);
        }
        // The running time of a call that can wait for a person (it has a
        // client to ask), which such waits do not count (see
        // `SandboxState::clock`); it reports them on to the calls around it.
        let clock = ctx
            .client
            .is_some()
            .then(|| PausingClock::new(deadline_at.saturating_duration_since(started), &ctx.waiting));
        let ctx = CallOrigin::from(ctx);
        async move {
            // A call that finds a place and finishes at once touches no
            // tokio resource: spend a unit of the task's cooperative
            // budget, so that a loop of calls yields to the runtime in turn.
            tokio::task::coop::consume_budget().await;
            // A place in the pool first (waiting, if need be, until the
            // deadline); it outlives the store, declared after it.
            let tier = match self.engine.stack_tier(limits.wasm_stack_bytes) {
                Ok(tier) => tier,
                Err(e) => return Ran::failed(e),
            };
            let gate = self.engine.gate();
            let mut waited = Duration::ZERO;
            let _place = match gate.try_enter(ctx.depth) {
                Some(place) => place,
                None => match tokio::time::timeout_at(deadline_at.into(), gate.enter(ctx.depth)).await {
                    Ok(Ok(place)) => {
                        waited = started.elapsed();
                        place
                    }
                    Ok(Err(e)) => return Ran::failed(e),
                    Err(_elapsed) => {
                        let e = Error::new(
                            ErrorCode::Timeout,
                            format!(
                                "the call waited for a free instance until its deadline ({} ms): all {} were in use; raise max_concurrent_instances, or send fewer calls at once",
                                limits.timeout.as_millis(),
                                self.engine.config().max_concurrent_instances
                            ),
                        );
                        return Ran::failed(e);
                    }
                },
            };
            let pre = match self.pre_for(tier.as_deref()) {
                Ok(pre) => pre,
                Err(e) => return Ran::failed(e),
            };
            let mut store =
                match self.new_store(&pre, &limits, tool, ctx, started, deadline_at, clock.clone()) {
                    Ok(store) => store,
                    Err(e) => return Ran::failed(e),
                };
            // The wait below for a call blocked in a host function keeps a
            // handle on its cancellation.
            let cancel = store.data().ctx.cancel.clone();
            let work = f(&mut store, &pre);
            // Guest code is stopped by the epoch callback; these two end a
            // call blocked in a host function. `biased` polls the work
            // first, and each of these makes its timer or waiter only when
            // first polled.
            let late = async {
                match &clock {
                    Some(clock) => {
                        clock.expired().await;
                        tokio::time::sleep(HOST_BLOCK_GRACE).await;
                    }
                    None => tokio::time::sleep_until((deadline_at + HOST_BLOCK_GRACE).into()).await,
                }
            };
            let stopped = async {
                cancel.cancelled().await;
                tokio::time::sleep(HOST_BLOCK_GRACE).await;
            };
            let outcome = tokio::select! {
                biased;
                outcome = work => Ok(outcome),
                () = late => Err(None),
                () = stopped => Err(Some(())),
            };
            self.finish(store, outcome, &limits, started, waited)
        }
    }

    /// A call's store, holding `ctx` and the call's `clock`, with its
    /// limiter, fuel and epoch deadline set.
    #[allow(
        clippy::too_many_arguments,
        reason = "the parts of one call, each made once in `run`"
    )]
    fn new_store(
        &self,
        pre: &PluginPre,
        limits: &Limits,
        tool: Option<Arc<str>>,
        ctx: CallOrigin,
        started: Instant,
        deadline_at: Instant,
        clock: Option<Arc<PausingClock>>,
    ) -> Result<Store<SandboxState>> {
        let state = SandboxState::new(limits, self.for_call(), tool, ctx, deadline_at, clock)?;
        let mut store = Store::new(pre.instance_pre().engine(), state);
        store.limiter(|s| &mut s.limiter);
        store
            .set_fuel(limits.fuel)
            .map_err(|e| Error::internal(format!("cannot set fuel: {e:#}")))?;
        // The deadline in epoch ticks. Each tick the callback yields to tokio
        // (so a spinning guest never monopolizes a worker thread) and counts
        // down; at zero it records the timeout and interrupts the guest.
        let tick = self.engine.config().epoch_tick;
        let remaining = deadline_at.saturating_duration_since(started);
        store.data_mut().ticks_left = (remaining.as_nanos() / tick.as_nanos().max(1)).max(1) as u64;
        store.set_epoch_deadline(1);
        store.epoch_deadline_callback(|mut ctx| {
            let state = ctx.data_mut();
            if state.ctx.cancel.is_cancelled() {
                state.stopped = true;
                return Ok(UpdateDeadline::Interrupt);
            }
            state.ticks_left = state.ticks_left.saturating_sub(1);
            if state.ticks_left == 0 {
                state.timed_out = true;
                Ok(UpdateDeadline::Interrupt)
            } else {
                Ok(UpdateDeadline::Yield(1))
            }
        });
        Ok(store)
    }

    /// What a call gave and used, from its store: logs what it wrote
    /// (redacted, within the component's log rate) and classifies a
    /// failure. `outcome` is the work's, or why it was dropped (`None`: its
    /// deadline; `Some`: its caller cancelled it).
    fn finish<R>(
        &self,
        mut store: Store<SandboxState>,
        outcome: std::result::Result<wasmtime::Result<R>, Option<()>>,
        limits: &Limits,
        started: Instant,
        waited: Duration,
    ) -> Ran<R> {
        let fuel_left = store.get_fuel().unwrap_or(0);
        // Read in place: moving the state out of the store would copy
        // all of it (about a kilobyte) for the few fields read here.
        let state = store.data_mut();
        let call_id = state.call_id;
        let usage = Usage {
            fuel_consumed: limits.fuel.saturating_sub(fuel_left),
            peak_memory_bytes: state.limiter.peak_memory as u64,
            wall_time_ms: u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX),
            instance_wait_us: u64::try_from(waited.as_micros()).unwrap_or(u64::MAX),
        };
        let stderr = state.wasi.stderr.take();
        let stdout = state.wasi.stdout.take();
        let stdout_bytes = stdout.written;
        let redactor =
            (!stderr.text.is_empty() || !stdout.text.is_empty()).then(|| self.capabilities.redactor());
        let (stderr_text, stdout_text) = match &redactor {
            Some(r) => (r.redact(&stderr.text), r.redact(&stdout.text)),
            None => (stderr.text, stdout.text),
        };
        for (stream, text, dropped) in [
            ("stderr", &stderr_text, stderr.dropped),
            ("stdout", &stdout_text, stdout.dropped),
        ] {
            if (text.is_empty() && dropped == 0) || (stream == "stdout" && self.keep_stdout) {
                continue;
            }
            let component = self.hash.short();
            if state.log_budget.take(text.len()) {
                tracing::info!(target: "toolhost::plugin", component, call_id, stream, dropped_bytes = dropped, "{}", text.trim_end());
            } else {
                let dropped = dropped.saturating_add(text.len() as u64);
                tracing::debug!(target: "toolhost::plugin", component, call_id, stream, dropped_bytes = dropped, "output over the component's log rate was dropped");
            }
        }
        if state.logs_dropped > 0 {
            let component = self.hash.short();
            tracing::warn!(target: "toolhost::plugin", component, call_id, dropped = state.logs_dropped, "log records over the per-call cap were dropped");
        }
        let result = match outcome {
            Err(Some(())) => Err(Error::new(
                ErrorCode::Cancelled,
                "the call was stopped: its caller cancelled it, and it did not come back in time",
            )
            .with_usage(usage)),
            Err(None) => Err(sandbox::timeout_error(limits).with_usage(usage)),
            Ok(Ok(value)) => Ok(value),
            Ok(Err(err)) => Err(sandbox::classify(&err, state, limits, &stderr_text).with_usage(usage)),
        };
        let http_notes = state.http.notes();
        // The store is done with: its WASI context serves a later call.
        self.wasi_kits.put(store.into_data().into_wasi());
        Ran {
            result,
            usage,
            stdout_bytes,
            stdout: if self.keep_stdout {
                stdout_text
            } else {
                String::new()
            },
            http_notes,
        }
    }
}

/// What one instance listed at load: its tools, its declaration (from
/// 0.2.0 on) and its prompts and resources (from 0.3.0 on; empty lists
/// otherwise), as it gave them.
#[derive(Debug)]
pub(crate) struct Listed {
    pub(crate) specs: Vec<latest::ToolSpec>,
    pub(crate) declared: Option<latest::Capabilities>,
    pub(crate) catalog: latest::CatalogListing,
}

impl<T> Sandboxed<T> {
    /// A call refused before it ran: nothing used, nothing written.
    pub(super) fn refused(error: Error) -> Self {
        Sandboxed {
            result: Err(error),
            usage: Usage::default(),
            stdout_bytes: 0,
            stdout: String::new(),
        }
    }
}

/// Whether a structured result fits the tool's output schema; the first
/// misfit, with where it is, otherwise.
fn check_fit(validator: &jsonschema::Validator, value: &serde_json::Value) -> Result<()> {
    match validator.iter_errors(value).next() {
        None => Ok(()),
        Some(error) => {
            let path = error.instance_path().as_str();
            let at = if path.is_empty() {
                String::new()
            } else {
                format!(" at `{path}`")
            };
            Err(Error::new(
                ErrorCode::ToolFailed,
                format!("{OUTPUT_MISFIT}{at}: {error}"),
            ))
        }
    }
}
