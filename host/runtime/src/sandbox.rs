//! # The sandbox
//!
//! The state every call's fresh `Store` holds ([`SandboxState`]), the limiter
//! that enforces memory, table and instance limits, the capped pipes that
//! capture the guest's stdout and stderr, and the one [`Linker`] that provides
//! WASI preview 2 (deny-by-default), `wasi:http` (filtered by
//! [`crate::http`]) and every served version's `toolhost:plugin` imports
//! (implemented in [`crate::bindings`]).
//!
//! What a guest gets by default: no preopened directories, no environment
//! variables, no arguments, no network (sockets exist but every address is
//! refused, and name lookup is off; outbound HTTP goes only to granted
//! hosts), an empty stdin, and stdout/stderr that
//! go to a capped buffer logged through `tracing` after the call. Clocks and
//! randomness are real.
//!
//! Each call has its own store, instance, linear memory, resource table
//! and random generators (made when the guest first asks for randomness:
//! fresh `wasi:random` streams and a fresh `insecure-seed`, so a guest's
//! hash maps are keyed afresh in every call). The WASI context (the
//! component's environment, the clocks and the capped stdout/stderr sinks:
//! configuration the guest cannot change) is the one thing a call may
//! inherit from an earlier call of the same component ([`WasiKits`]):
//! building one costs about as much as the rest of the store, and a guest
//! can leave nothing in it. A component granted directories gets a fresh
//! context (and opens its directories afresh) on every call.

use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Instant;

use wasmtime::component::{Linker, ResourceTable};
use wasmtime_wasi::cli::{IsTerminal, StdoutStream};
use wasmtime_wasi::p2::{OutputStream, Pollable, StreamResult};
use wasmtime_wasi::random::WasiRandomCtx;
use wasmtime_wasi::{FsPerms, WasiCtx, WasiCtxView, WasiView};
use wasmtime_wasi_http::{WasiHttpCtx, WasiHttpCtxView, WasiHttpView};

use crate::bindings::WorldVersion;
use crate::capabilities::{DirMode, Effective};
use crate::http::{HttpAccess, HttpHooks};
use toolhost_core::error::{Error, ErrorCode, Result};
use toolhost_core::identity::ComponentHash;
use toolhost_core::limits::{Limits, LogBudget};
use toolhost_core::progress::ProgressGate;
use toolhost_core::registry::{BoxFuture, CallContext, ToolOutput};

/// The largest `host.log` message kept, in bytes; longer ones are cut.
pub(crate) const MAX_LOG_MESSAGE: usize = 4096;

/// The data of one call's `Store`.
pub struct SandboxState {
    /// The WASI context and the guest's stdout and stderr (boxed: it moves
    /// between calls and a store's state is moved whole when it is made).
    pub(crate) wasi: Box<WasiKit>,
    /// The call's random generators and `insecure-seed` (see [`linker`]),
    /// made when the guest first asks for randomness.
    random: Option<WasiRandomCtx>,
    table: ResourceTable,
    http_ctx: WasiHttpCtx,
    pub(crate) http: HttpHooks,
    pub(crate) limiter: Limiter,
    pub(crate) hash: ComponentHash,
    pub(crate) tool: Option<Arc<str>>,
    pub(crate) call_id: u64,
    /// The call this instance serves (for nested tool calls and progress).
    pub(crate) ctx: CallOrigin,
    /// The tools it may call: declared and granted.
    pub(crate) callable: Vec<String>,
    /// Whether the caller decides instead (see `ToolCalls::Caller`).
    pub(crate) callable_by_caller: bool,
    pub(crate) call_depth: u32,
    /// How many more nested calls this call may start.
    pub(crate) nested_left: u32,
    /// The call's `nested_calls` limit, for messages.
    pub(crate) nested_limit: u32,
    /// The call's deadline, passed on to nested calls (moved out after a
    /// wait for a person).
    pub(crate) deadline: Instant,
    /// The call's running time, for a call that has a client to ask:
    /// stopped while it waits for a person (a question to the user, a
    /// request to the client's model, an approval of one of its nested
    /// calls), so that such waits do not count against its deadline.
    /// Shared with the timer that ends a call blocked past it. A call
    /// without a client has none (and no such waits): its timer is plain.
    pub(crate) clock: Option<Arc<toolhost_core::dispatch::PausingClock>>,
    /// What it may ask the call's client (declared and granted).
    pub(crate) client: ClientGrants,
    /// How many sampling requests the call has made.
    pub(crate) samples_made: u32,
    /// How many tokens its sampling requests have asked for, in all.
    pub(crate) tokens_asked: u32,
    /// How many questions it has put to its client, in all (numbering the
    /// keys of 0.3.0's single questions: the same on every run of a call).
    pub(crate) questions_asked: u32,
    /// The call's output limit, which also caps a request to the client.
    pub(crate) output_bytes: u64,
    pub(crate) logs_left: u32,
    pub(crate) logs_dropped: u32,
    /// Caps the rate of the call's progress reports.
    pub(crate) progress_gate: ProgressGate,
    /// The component's log budget over time, shared by its calls.
    pub(crate) log_budget: Arc<LogBudget>,
    /// Epoch ticks left before the call's deadline.
    pub(crate) ticks_left: u64,
    /// Set when the epoch callback stopped the call at its deadline.
    pub(crate) timed_out: bool,
    /// Set when the epoch callback stopped the call because its caller
    /// cancelled it.
    pub(crate) stopped: bool,
}

/// What a component may ask the client of a call: its effective
/// elicitation, sampling and roots capabilities.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct ClientGrants {
    /// It may ask the user questions.
    pub(crate) elicitation: bool,
    /// It may ask the client's model, within this budget per call.
    pub(crate) sampling: Option<crate::capabilities::SamplingGrant>,
    /// It may list the client's roots.
    pub(crate) roots: bool,
}

/// What a call's store keeps of its [`CallContext`]: all but the limit
/// overrides and the deadline, which are worked into the call's limits and
/// [`SandboxState::deadline`] before the store is made. (A store is moved
/// as a whole when it is made, and a call's future holds this until then:
/// the overrides are a quarter of a kilobyte neither needs.)
pub(crate) struct CallOrigin {
    pub(crate) call_id: toolhost_core::registry::CallId,
    pub(crate) session_id: Option<Arc<str>>,
    pub(crate) session_continues: Arc<[String]>,
    pub(crate) cancel: tokio_util::sync::CancellationToken,
    pub(crate) depth: u32,
    pub(crate) caller: Option<toolhost_core::registry::ToolCallerHandle>,
    pub(crate) waiting: toolhost_core::dispatch::Waiting,
    pub(crate) progress: Option<toolhost_core::progress::ProgressSink>,
    pub(crate) log: Option<toolhost_core::logging::LogSink>,
    pub(crate) client: Option<toolhost_core::client::ClientHandle>,
    pub(crate) trace: Option<Arc<toolhost_core::trace::TraceContext>>,
}

impl From<CallContext> for CallOrigin {
    fn from(ctx: CallContext) -> Self {
        let CallContext {
            call_id,
            parent_call_id: _,
            session_id,
            session_continues,
            deadline: _,
            cancel,
            limits: _,
            depth,
            caller,
            waiting,
            progress,
            log,
            client,
            trace,
        } = ctx;
        CallOrigin {
            call_id,
            session_id,
            session_continues,
            cancel,
            depth,
            caller,
            waiting,
            progress,
            log,
            client,
            trace,
        }
    }
}

/// The component a [`SandboxState`] runs a call of: what its calls share.
#[derive(Clone, Copy)]
pub(crate) struct ComponentRef<'a> {
    pub(crate) hash: ComponentHash,
    pub(crate) capabilities: &'a Effective,
    /// Its outbound-HTTP access (the same as `capabilities.http`), shared.
    pub(crate) http: &'a Arc<HttpAccess>,
    pub(crate) log_budget: &'a Arc<LogBudget>,
    /// WASI contexts its earlier calls left.
    pub(crate) kits: &'a WasiKits,
}

impl SandboxState {
    /// Where a nested call reports its waits for a person: to this call's
    /// clock (which passes them on), or, without one, to whoever listens
    /// for this call.
    pub(crate) fn waiting(&self) -> toolhost_core::dispatch::Waiting {
        match &self.clock {
            Some(clock) => clock.waiting(),
            None => self.ctx.waiting.clone(),
        }
    }

    /// A fresh state with deny-by-default WASI for a call under `limits`
    /// that must end by `deadline`.
    pub(crate) fn new(
        limits: &Limits,
        component: ComponentRef<'_>,
        tool: Option<Arc<str>>,
        ctx: CallOrigin,
        deadline: Instant,
        clock: Option<Arc<toolhost_core::dispatch::PausingClock>>,
    ) -> Result<Self> {
        let ComponentRef {
            hash,
            capabilities,
            http,
            log_budget,
            kits,
        } = component;
        let cap = usize::try_from(limits.stderr_bytes).unwrap_or(usize::MAX);
        let wasi = match kits.take() {
            Some(kit) => kit.with_cap(cap),
            None => Box::new(WasiKit::new(capabilities, cap)?),
        };
        Ok(SandboxState {
            wasi,
            random: None,
            table: ResourceTable::new(),
            http_ctx: WasiHttpCtx::new(),
            http: HttpHooks::new(http, limits, deadline),
            limiter: Limiter::new(limits),
            hash,
            tool,
            call_id: ctx.call_id,
            ctx,
            callable: capabilities.tools.clone(),
            callable_by_caller: capabilities.tools_from_caller,
            call_depth: limits.call_depth,
            nested_left: limits.nested_calls,
            nested_limit: limits.nested_calls,
            deadline,
            clock,
            client: ClientGrants {
                elicitation: capabilities.elicitation,
                sampling: capabilities.sampling,
                roots: capabilities.roots,
            },
            samples_made: 0,
            tokens_asked: 0,
            questions_asked: 0,
            output_bytes: limits.output_bytes,
            logs_left: limits.log_records,
            logs_dropped: 0,
            progress_gate: ProgressGate::default(),
            log_budget: Arc::clone(log_budget),
            ticks_left: 0,
            timed_out: false,
            stopped: false,
        })
    }

    /// The call's random context, made on first use: fresh generators and
    /// a fresh `insecure-seed`, as a fresh WASI context would have.
    fn random(&mut self) -> &mut WasiRandomCtx {
        self.random.get_or_insert_with(WasiRandomCtx::default)
    }

    /// The call's WASI context and sinks, for [`WasiKits::put`]: the rest of
    /// the state, the resource table first (with any stream of the guest's
    /// stdout or stderr still open in it), is dropped before this returns.
    pub(crate) fn into_wasi(self) -> Box<WasiKit> {
        let SandboxState { wasi, table, .. } = self;
        drop(table);
        wasi
    }
}

impl std::fmt::Debug for SandboxState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SandboxState")
            .field("component", &self.hash)
            .field("tool", &self.tool)
            .field("call_id", &self.call_id)
            .finish_non_exhaustive()
    }
}

impl WasiView for SandboxState {
    fn ctx(&mut self) -> WasiCtxView<'_> {
        WasiCtxView {
            ctx: &mut self.wasi.ctx,
            table: &mut self.table,
        }
    }
}

/// A component's deny-by-default WASI context, with the capped sinks its
/// guest's stdout and stderr write to.
pub(crate) struct WasiKit {
    ctx: WasiCtx,
    pub(crate) stdout: CappedPipe,
    pub(crate) stderr: CappedPipe,
}

impl WasiKit {
    /// A new context for a component with `capabilities` (its granted
    /// environment and directories, the directories opened now), whose
    /// sinks keep `cap` bytes each.
    fn new(capabilities: &Effective, cap: usize) -> Result<WasiKit> {
        let stdout = CappedPipe::new(cap);
        let stderr = CappedPipe::new(cap);
        let mut wasi = WasiCtx::builder();
        wasi.stdout(stdout.clone())
            .stderr(stderr.clone())
            .allow_tcp(false)
            .allow_udp(false)
            .allow_ip_name_lookup(false);
        for (name, value) in &capabilities.env {
            wasi.env(name, value);
        }
        for dir in &capabilities.dirs {
            let perms = match dir.mode {
                DirMode::Ro => FsPerms::ReadOnly,
                DirMode::Rw => FsPerms::ReadWrite,
            };
            wasi.preopened_dir(&dir.host, &dir.guest, perms).map_err(|e| {
                Error::new(
                    ErrorCode::Io,
                    format!(
                        "cannot open the directory granted as {} ({}): {e:#}",
                        dir.guest,
                        dir.host.display()
                    ),
                )
            })?;
        }
        Ok(WasiKit {
            ctx: wasi.build(),
            stdout,
            stderr,
        })
    }

    /// The kit with sinks that keep `cap` bytes each (a call's own
    /// `stderr_bytes` limit).
    fn with_cap(self: Box<Self>, cap: usize) -> Box<WasiKit> {
        self.stdout.set_cap(cap);
        self.stderr.set_cap(cap);
        self
    }
}

/// The WASI contexts a component's calls left, for its next calls (see the
/// module documentation). A context goes back only if nothing of its call
/// holds its sinks any more (the call's store is gone, and its sinks were
/// emptied by [`CappedPipe::take`]); at most [`WasiKits::KEPT`] are kept.
pub(crate) struct WasiKits {
    #[expect(
        clippy::vec_box,
        reason = "a kit moves between this list and a call's state as a pointer, not as its ~300 bytes"
    )]
    free: Mutex<Vec<Box<WasiKit>>>,
    /// Whether contexts are kept at all: not for a component granted
    /// directories, whose calls each open them afresh.
    keep: bool,
}

impl WasiKits {
    /// How many contexts a component keeps. Calls hold one only while they
    /// run (not while they wait for a place in the pool), so a few serve a
    /// busy component; more are built when more run at once.
    const KEPT: usize = 16;

    /// Kits for a component with `capabilities`.
    pub(crate) fn new(capabilities: &Effective) -> WasiKits {
        WasiKits {
            free: Mutex::new(Vec::new()),
            keep: capabilities.dirs.is_empty(),
        }
    }

    /// A kept kit, if there is one.
    fn take(&self) -> Option<Box<WasiKit>> {
        if !self.keep {
            return None;
        }
        self.free.lock().unwrap_or_else(|p| p.into_inner()).pop()
    }

    /// Keeps `kit` for a later call, if its sinks are empty and no one else
    /// holds them (else, or past [`WasiKits::KEPT`], drops it).
    pub(crate) fn put(&self, kit: Box<WasiKit>) {
        if !self.keep || !kit.stdout.is_idle() || !kit.stderr.is_idle() {
            return;
        }
        let mut free = self.free.lock().unwrap_or_else(|p| p.into_inner());
        if free.len() < Self::KEPT {
            free.push(kit);
        }
    }
}

impl WasiHttpView for SandboxState {
    fn http(&mut self) -> WasiHttpCtxView<'_> {
        WasiHttpCtxView {
            ctx: &mut self.http_ctx,
            table: &mut self.table,
            hooks: &mut self.http,
        }
    }
}

/// Builds the linker every component is instantiated against.
pub(crate) fn linker(engine: &wasmtime::Engine) -> Result<Linker<SandboxState>> {
    let mut linker = Linker::new(engine);
    let err = |e: wasmtime::Error| Error::internal(format!("cannot build the linker: {e:#}"));
    wasmtime_wasi::p2::add_to_linker_async(&mut linker).map_err(err)?;
    // Randomness is the call's own, not its WASI context's (which an
    // earlier call may have used): the three `wasi:random` interfaces read
    // a random context made for the call when the guest first asks.
    {
        use wasmtime_wasi::p2::bindings::random::{insecure, insecure_seed, random};
        use wasmtime_wasi::random::WasiRandom;
        linker.allow_shadowing(true);
        random::add_to_linker::<SandboxState, WasiRandom>(&mut linker, SandboxState::random).map_err(err)?;
        insecure::add_to_linker::<SandboxState, WasiRandom>(&mut linker, SandboxState::random)
            .map_err(err)?;
        insecure_seed::add_to_linker::<SandboxState, WasiRandom>(&mut linker, SandboxState::random)
            .map_err(err)?;
        linker.allow_shadowing(false);
    }
    wasmtime_wasi_http::p2::add_only_http_to_linker_async(&mut linker).map_err(err)?;
    crate::bindings::add_to_linker(&mut linker).map_err(err)?;
    Ok(linker)
}

/// Runs `calls` at once (each a task of its own, so they also run in
/// parallel on a multi-threaded runtime) and returns their results in
/// order. Dropping the returned future aborts the calls still running.
pub(crate) async fn run_all(calls: Vec<BoxFuture<'static, Result<ToolOutput>>>) -> Vec<Result<ToolOutput>> {
    let mut set = tokio::task::JoinSet::new();
    let count = calls.len();
    for (index, call) in calls.into_iter().enumerate() {
        set.spawn(async move { (index, call.await) });
    }
    let mut results: Vec<Option<Result<ToolOutput>>> = std::iter::repeat_with(|| None).take(count).collect();
    while let Some(joined) = set.join_next().await {
        match joined {
            Ok((index, result)) => results[index] = Some(result),
            Err(e) => tracing::error!(error = %e, "a concurrent nested call's task failed"),
        }
    }
    results
        .into_iter()
        .map(|r| r.unwrap_or_else(|| Err(Error::internal("the nested call's task failed"))))
        .collect()
}

/// The WASI interfaces (without version) the linker provides, for the
/// import check at load. Kept beside [`linker`], which defines them.
pub(crate) const PROVIDED_WASI: &[&str] = &[
    "wasi:io/error",
    "wasi:io/poll",
    "wasi:io/streams",
    "wasi:clocks/monotonic-clock",
    "wasi:clocks/wall-clock",
    "wasi:random/random",
    "wasi:random/insecure",
    "wasi:random/insecure-seed",
    "wasi:cli/environment",
    "wasi:cli/exit",
    "wasi:cli/stdin",
    "wasi:cli/stdout",
    "wasi:cli/stderr",
    "wasi:cli/terminal-input",
    "wasi:cli/terminal-output",
    "wasi:cli/terminal-stdin",
    "wasi:cli/terminal-stdout",
    "wasi:cli/terminal-stderr",
    "wasi:filesystem/types",
    "wasi:filesystem/preopens",
    "wasi:sockets/network",
    "wasi:sockets/instance-network",
    "wasi:sockets/udp",
    "wasi:sockets/udp-create-socket",
    "wasi:sockets/tcp",
    "wasi:sockets/tcp-create-socket",
    "wasi:sockets/ip-name-lookup",
    "wasi:http/types",
    "wasi:http/outgoing-handler",
];

/// Whether the import `name` (`ns:pkg/iface@version`) is one the linker
/// provides to a component of world `world`: a WASI interface in a
/// version semver-compatible with what wasmtime serves (`0.2.x`), or one of
/// `world`'s own `toolhost:plugin` imports in exactly its version. A
/// component importing anything else is refused at load (`missing_imports`).
pub fn is_provided(name: &str, world: WorldVersion) -> bool {
    let (iface, version) = name.split_once('@').unwrap_or((name, ""));
    if let Some(own) = iface.strip_prefix("toolhost:plugin/") {
        return version == world.version() && world.imports().contains(&own);
    }
    PROVIDED_WASI.contains(&iface) && version.starts_with("0.2.")
}

/// Enforces a call's memory, table and instance limits, and records whether
/// one was hit and the peak memory reached.
pub(crate) struct Limiter {
    memory_bytes: usize,
    table_elements: usize,
    instances: usize,
    pub(crate) hit: Option<&'static str>,
    pub(crate) peak_memory: usize,
}

impl Limiter {
    fn new(limits: &Limits) -> Self {
        Limiter {
            memory_bytes: usize::try_from(limits.memory_bytes).unwrap_or(usize::MAX),
            table_elements: usize::try_from(limits.table_elements).unwrap_or(usize::MAX),
            instances: limits.instances as usize,
            hit: None,
            peak_memory: 0,
        }
    }
}

impl wasmtime::ResourceLimiter for Limiter {
    fn memory_growing(
        &mut self,
        _current: usize,
        desired: usize,
        _maximum: Option<usize>,
    ) -> wasmtime::Result<bool> {
        if desired > self.memory_bytes {
            self.hit = Some("memory");
            return Ok(false);
        }
        self.peak_memory = self.peak_memory.max(desired);
        Ok(true)
    }

    fn table_growing(
        &mut self,
        _current: usize,
        desired: usize,
        _maximum: Option<usize>,
    ) -> wasmtime::Result<bool> {
        if desired > self.table_elements {
            self.hit = Some("table");
            return Ok(false);
        }
        Ok(true)
    }

    fn instances(&self) -> usize {
        self.instances
    }

    fn tables(&self) -> usize {
        self.instances
    }

    fn memories(&self) -> usize {
        self.instances
    }
}

/// A stdout/stderr sink that keeps the first `cap` bytes and counts the rest.
/// Unlike a pipe that errors when full, it never makes a chatty guest fail.
#[derive(Clone)]
pub(crate) struct CappedPipe {
    inner: Arc<Mutex<CappedBuf>>,
}

struct CappedBuf {
    cap: usize,
    data: Vec<u8>,
    dropped: u64,
}

impl CappedPipe {
    fn new(cap: usize) -> Self {
        CappedPipe {
            inner: Arc::new(Mutex::new(CappedBuf {
                cap,
                data: Vec::new(),
                dropped: 0,
            })),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, CappedBuf> {
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Keeps the first `cap` bytes written from now on.
    fn set_cap(&self, cap: usize) {
        self.lock().cap = cap;
    }

    /// Keeps what fits of `bytes` and counts the rest.
    fn append(&self, bytes: &[u8]) {
        let mut buf = self.lock();
        let room = buf.cap.saturating_sub(buf.data.len());
        let kept = room.min(bytes.len());
        buf.data.extend_from_slice(&bytes[..kept]);
        buf.dropped = buf.dropped.saturating_add((bytes.len() - kept) as u64);
    }

    /// What the guest wrote: the captured text (lossily decoded), how many
    /// bytes were dropped past the cap, and how many were written in all.
    /// The pipe is empty afterwards.
    pub(crate) fn take(&self) -> Captured {
        let mut buf = self.lock();
        let dropped = std::mem::take(&mut buf.dropped);
        let data = std::mem::take(&mut buf.data);
        let written = (data.len() as u64).saturating_add(dropped);
        let text =
            String::from_utf8(data).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned());
        Captured {
            text,
            dropped,
            written,
        }
    }

    /// Whether the pipe is empty and held only by its kit (its handle and
    /// the WASI context's): no stream of a finished call can still write.
    fn is_idle(&self) -> bool {
        Arc::strong_count(&self.inner) == 2 && {
            let buf = self.lock();
            buf.data.is_empty() && buf.dropped == 0
        }
    }
}

/// What a [`CappedPipe`] captured (see [`CappedPipe::take`]).
pub(crate) struct Captured {
    pub(crate) text: String,
    pub(crate) dropped: u64,
    pub(crate) written: u64,
}

impl IsTerminal for CappedPipe {
    fn is_terminal(&self) -> bool {
        false
    }
}

/// How many bytes a guest may write to its stdout or stderr at once (the
/// pipe takes them all, keeping what fits under its cap).
const PIPE_PERMIT: usize = 64 << 10;

impl StdoutStream for CappedPipe {
    /// The pipe itself: a write lands in the buffer while the guest makes
    /// it (wasmtime's default stream would hand it to a task of its own,
    /// which could still be writing after the call).
    fn p2_stream(&self) -> Box<dyn OutputStream> {
        Box::new(self.clone())
    }

    fn async_stream(&self) -> Box<dyn tokio::io::AsyncWrite + Send + Sync> {
        Box::new(self.clone())
    }
}

#[wasmtime_wasi::async_trait]
impl Pollable for CappedPipe {
    /// Always ready: a write never waits.
    async fn ready(&mut self) {}
}

impl OutputStream for CappedPipe {
    fn write(&mut self, bytes: bytes::Bytes) -> StreamResult<()> {
        self.append(&bytes);
        Ok(())
    }

    fn flush(&mut self) -> StreamResult<()> {
        Ok(())
    }

    fn check_write(&mut self) -> StreamResult<usize> {
        Ok(PIPE_PERMIT)
    }
}

impl tokio::io::AsyncWrite for CappedPipe {
    fn poll_write(self: Pin<&mut Self>, _cx: &mut Context<'_>, bytes: &[u8]) -> Poll<std::io::Result<usize>> {
        self.append(bytes);
        Poll::Ready(Ok(bytes.len()))
    }

    fn poll_flush(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Poll::Ready(Ok(()))
    }

    fn poll_shutdown(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Poll::Ready(Ok(()))
    }
}

/// Maps an instantiation or call failure to a typed error: the limiter's and
/// the epoch callback's records first, then wasmtime's trap codes.
pub(crate) fn classify(err: &wasmtime::Error, state: &SandboxState, limits: &Limits, stderr: &str) -> Error {
    use wasmtime::Trap;
    if state.stopped {
        return Error::new(
            ErrorCode::Cancelled,
            "the call was stopped: its caller cancelled it",
        );
    }
    // A host function ended the call on purpose, naming why (a round of
    // questions its client ended as a whole): that reason, unchanged.
    if let Some(cause) = err.downcast_ref::<Error>() {
        return cause.clone();
    }
    if state.timed_out || matches!(err.downcast_ref::<Trap>(), Some(Trap::Interrupt)) {
        return timeout_error(limits);
    }
    if let Some(what) = state.limiter.hit {
        let message = match what {
            "memory" => format!(
                "the plugin tried to grow its memory past the {} MiB limit; raise `memory_mb` for this plugin if it really needs more",
                limits.memory_bytes >> 20
            ),
            _ => format!(
                "the plugin tried to grow a table past {} elements; raise `table_elements` for this plugin if it really needs more",
                limits.table_elements
            ),
        };
        return Error::new(ErrorCode::MemoryLimit, message);
    }
    match err.downcast_ref::<Trap>() {
        Some(Trap::OutOfFuel) => Error::new(
            ErrorCode::OutOfFuel,
            format!(
                "the plugin used up its fuel ({} units) before finishing; raise `fuel` for this plugin or give it less work",
                limits.fuel
            ),
        ),
        Some(Trap::StackOverflow) => Error::new(
            ErrorCode::StackOverflow,
            format!(
                "the plugin exhausted its WebAssembly stack ({} KiB; unbounded recursion?); make the recursion bounded or raise `wasm_stack_kb` for this plugin",
                limits.wasm_stack_bytes >> 10
            ),
        ),
        Some(trap) => Error::new(
            ErrorCode::Trap,
            with_guest_output(format!("the plugin trapped: {trap}"), stderr),
        ),
        None => {
            let text = format!("{err:#}");
            if text.contains("resource limit exceeded") || text.contains("instance count too high") {
                return Error::new(
                    ErrorCode::MemoryLimit,
                    format!(
                        "the plugin needs more instances, memories or tables than its limits allow: {text}"
                    ),
                );
            }
            Error::new(
                ErrorCode::Trap,
                with_guest_output(format!("the plugin failed: {text}"), stderr),
            )
        }
    }
}

/// How much of the end of a guest's stderr a `trap` error quotes, in bytes.
pub const STDERR_EXCERPT: usize = 2048;

/// A trap's message, `what` happened, made to name the guest's own words:
/// a Rust panic's message, and the end of what the guest wrote to stderr
/// before it (a Python traceback, a JavaScript error and its stack), at
/// most [`STDERR_EXCERPT`] bytes, cut on a character boundary. `stderr` is
/// already redacted.
pub(crate) fn with_guest_output(what: String, stderr: &str) -> String {
    let (mut message, before) = match panic_message(stderr) {
        // A Rust runtime (the guest's own, or an interpreter's) panicked:
        // its message leads; what the guest wrote before it follows.
        Some(panic) => (
            format!("the plugin panicked: {panic}"),
            &stderr[..stderr
                .find("panicked at ")
                .map_or(0, |at| stderr[..at].rfind('\n').map_or(0, |line| line + 1))],
        ),
        None => (what, stderr),
    };
    let before = before.trim_end();
    if before.trim().is_empty() {
        return message;
    }
    let excerpt = toolhost_core::text::tail_utf8(before, STDERR_EXCERPT);
    let cut = if excerpt.len() < before.len() { "…" } else { "" };
    message.push_str(&format!("; the plugin's stderr ends with:\n{cut}{excerpt}"));
    message
}

/// The error for a call stopped at its wall-clock limit.
pub(crate) fn timeout_error(limits: &Limits) -> Error {
    Error::new(
        ErrorCode::Timeout,
        format!(
            "the call ran past its {} ms wall-clock limit and was stopped; raise `timeout_ms` or give it less work",
            limits.timeout.as_millis()
        ),
    )
}

/// Extracts a Rust panic's message from captured stderr: the lines after
/// `panicked at FILE:LINE:COL:` up to the `note:` line.
pub(crate) fn panic_message(stderr: &str) -> Option<String> {
    let start = stderr.find("panicked at ")?;
    let rest = &stderr[start..];
    let (location_line, after) = rest.split_once('\n').unwrap_or((rest, ""));
    let location = location_line
        .trim_start_matches("panicked at ")
        .trim_end_matches(':');
    let message: Vec<&str> = after.lines().take_while(|l| !l.starts_with("note:")).collect();
    let message = message.join("\n").trim().to_string();
    Some(if message.is_empty() {
        location.to_string()
    } else {
        format!("{message} (at {location})")
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn trap_messages_quote_the_end_of_the_guests_stderr() {
        // JavaScript: the error, then a bare `unreachable`.
        let js = with_guest_output(
            "the plugin trapped: unreachable".into(),
            "Error: boom\n  at f (x.js:3)\n",
        );
        assert_eq!(
            js,
            "the plugin trapped: unreachable; the plugin's stderr ends with:\nError: boom\n  at f (x.js:3)"
        );
        // componentize-py: the traceback, then its Rust runtime's panic.
        let py = "Traceback (most recent call last):\n  File \"app.py\", line 9\nZeroDivisionError: division by zero\nthread '<unnamed>' panicked at runtime/src/lib.rs:1293:29:\npython exception\nnote: run with `RUST_BACKTRACE=1`\n";
        let py = with_guest_output("the plugin trapped: unreachable".into(), py);
        assert!(py.starts_with("the plugin panicked: python exception (at runtime/src/lib.rs:1293:29); the plugin's stderr ends with:\nTraceback"), "{py}");
        assert!(py.ends_with("ZeroDivisionError: division by zero"), "{py}");
        // A Rust guest: the panic alone, no repetition.
        let rust = "\nthread '<unnamed>' panicked at src/lib.rs:10:5:\nthe answer was 41\nnote: run with `RUST_BACKTRACE=1`\n";
        assert_eq!(
            with_guest_output(String::new(), rust),
            "the plugin panicked: the answer was 41 (at src/lib.rs:10:5)"
        );
        // Long output: the last STDERR_EXCERPT bytes, on a character boundary.
        let long = format!("{}tail", "é".repeat(STDERR_EXCERPT));
        let quoted = with_guest_output("trapped".into(), &long);
        let excerpt = quoted.split_once(":\n").unwrap().1;
        assert!(excerpt.starts_with('…') && excerpt.ends_with("tail"), "{excerpt}");
        assert!(
            excerpt.len() <= STDERR_EXCERPT + '…'.len_utf8(),
            "{}",
            excerpt.len()
        );
        assert_eq!(with_guest_output("trapped".into(), "  \n"), "trapped");
    }

    #[test]
    fn panic_messages_are_extracted() {
        let stderr = "\nthread '<unnamed>' panicked at src/lib.rs:10:5:\nthe answer was 41\nnote: run with `RUST_BACKTRACE=1`\n";
        assert_eq!(
            panic_message(stderr).unwrap(),
            "the answer was 41 (at src/lib.rs:10:5)"
        );
        assert_eq!(panic_message("nothing here"), None);
    }

    #[test]
    fn provided_imports_match_by_semver_and_world() {
        let (v1, v2) = (WorldVersion::V0_1_0, WorldVersion::V0_2_0);
        assert!(is_provided("wasi:io/streams@0.2.9", v1));
        assert!(is_provided("wasi:io/streams@0.2.12", v2));
        assert!(is_provided("toolhost:plugin/host@0.1.0", v1));
        assert!(
            !is_provided("toolhost:plugin/host@0.1.0", v2),
            "one world version per component"
        );
        assert!(!is_provided("toolhost:plugin/host@0.1.1", v1));
        assert!(is_provided("toolhost:plugin/progress@0.2.0", v2));
        assert!(
            !is_provided("toolhost:plugin/progress@0.1.0", v1),
            "0.1.0 has no progress"
        );
        assert!(!is_provided("wasi:io/streams@0.3.0", v1));
        assert!(is_provided("wasi:http/outgoing-handler@0.2.3", v1));
        assert!(!is_provided("wasi:http/incoming-handler@0.2.3", v1));
        assert!(!is_provided("example:missing/thing@1.0.0", v2));
    }
}
