//! # The sandbox
//!
//! The state every call's fresh `Store` holds ([`SandboxState`]), the limiter
//! that enforces memory, table and instance limits, the capped pipes that
//! capture the guest's stdout and stderr, and the one [`Linker`] that provides
//! WASI preview 2 (deny-by-default), `wasi:http` (filtered by
//! [`crate::http`]) and the `toolhost:plugin/host` interface.
//!
//! What a guest gets by default: no preopened directories, no environment
//! variables, no arguments, no network (sockets exist but every address is
//! refused, and name lookup is off; outbound HTTP goes only to granted
//! hosts), an empty stdin, and stdout/stderr that
//! go to a capped buffer logged through `tracing` after the call. Clocks and
//! randomness are real.

use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Instant;

use wasmtime::component::{HasSelf, Linker, ResourceTable};
use wasmtime_wasi::cli::{IsTerminal, StdoutStream};
use wasmtime_wasi::{FsPerms, WasiCtx, WasiCtxView, WasiView};
use wasmtime_wasi_http::{WasiHttpCtx, WasiHttpCtxView, WasiHttpView};

use crate::bindings::v0_1_0;
use crate::bindings::v0_1_0::toolhost::plugin::types::ToolError as WitToolError;
use crate::capabilities::{DirMode, Effective};
use crate::http::HttpHooks;
use toolhost_core::error::{Error, ErrorCode, Result};
use toolhost_core::identity::ComponentHash;
use toolhost_core::limits::Limits;
use toolhost_core::registry::CallContext;
use toolhost_core::text::truncate_utf8;

/// The largest `host.log` message kept, in bytes; longer ones are cut.
const MAX_LOG_MESSAGE: usize = 4096;

/// The data of one call's `Store`.
pub struct SandboxState {
    wasi: WasiCtx,
    table: ResourceTable,
    http_ctx: WasiHttpCtx,
    pub(crate) http: HttpHooks,
    pub(crate) limiter: Limiter,
    pub(crate) stdout: CappedPipe,
    pub(crate) stderr: CappedPipe,
    pub(crate) hash: ComponentHash,
    pub(crate) tool: Option<String>,
    pub(crate) call_id: u64,
    /// The call this instance serves (for nested tool calls).
    ctx: CallContext,
    /// The tools it may call: declared and granted.
    callable: Vec<String>,
    call_depth: u32,
    /// The call's deadline, passed on to nested calls.
    pub(crate) deadline: Instant,
    logs_left: u32,
    pub(crate) logs_dropped: u32,
    /// The component's log budget over time, shared by its calls.
    pub(crate) log_budget: std::sync::Arc<toolhost_core::limits::LogBudget>,
    /// Epoch ticks left before the call's deadline.
    pub(crate) ticks_left: u64,
    /// Set when the epoch callback stopped the call at its deadline.
    pub(crate) timed_out: bool,
}

impl SandboxState {
    /// A fresh state with deny-by-default WASI for a call under `limits`
    /// that must end by `deadline`.
    pub(crate) fn new(
        limits: &Limits,
        capabilities: &Effective,
        hash: ComponentHash,
        tool: Option<String>,
        ctx: &CallContext,
        deadline: Instant,
        log_budget: std::sync::Arc<toolhost_core::limits::LogBudget>,
    ) -> Result<Self> {
        let cap = usize::try_from(limits.stderr_bytes).unwrap_or(usize::MAX);
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
        let wasi = wasi.build();
        Ok(SandboxState {
            wasi,
            table: ResourceTable::new(),
            http_ctx: WasiHttpCtx::new(),
            http: HttpHooks::new(&capabilities.http, limits, deadline),
            limiter: Limiter::new(limits),
            stdout,
            stderr,
            hash,
            tool,
            call_id: ctx.call_id,
            ctx: ctx.clone(),
            callable: capabilities.tools.clone(),
            call_depth: limits.call_depth,
            deadline,
            logs_left: limits.log_records,
            logs_dropped: 0,
            log_budget,
            ticks_left: 0,
            timed_out: false,
        })
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
            ctx: &mut self.wasi,
            table: &mut self.table,
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

impl v0_1_0::toolhost::plugin::host::Host for SandboxState {
    async fn log(
        &mut self,
        level: v0_1_0::toolhost::plugin::host::Level,
        mut message: String,
        fields: Vec<(String, String)>,
    ) {
        use v0_1_0::toolhost::plugin::host::Level;
        if self.logs_left == 0 {
            self.logs_dropped = self.logs_dropped.saturating_add(1);
            return;
        }
        self.logs_left -= 1;
        truncate_utf8(&mut message, MAX_LOG_MESSAGE);
        let mut fields_text = String::new();
        for (k, v) in fields.iter().take(32) {
            fields_text.push_str(&format!(" {k}={v:?}"));
        }
        truncate_utf8(&mut fields_text, MAX_LOG_MESSAGE);
        if !self.log_budget.take(message.len() + fields_text.len() + 16) {
            self.logs_dropped = self.logs_dropped.saturating_add(1);
            return;
        }
        let component = self.hash.short();
        let tool = self.tool.as_deref().unwrap_or("-");
        let call_id = self.call_id;
        macro_rules! emit {
            ($lvl:ident) => {
                tracing::$lvl!(target: "toolhost::plugin", component, tool, call_id, fields = %fields_text, "{message}")
            };
        }
        match level {
            Level::Trace => emit!(trace),
            Level::Debug => emit!(debug),
            Level::Info => emit!(info),
            Level::Warn => emit!(warn),
            Level::Error => emit!(error),
        }
    }
}

impl v0_1_0::toolhost::plugin::types::Host for SandboxState {}

impl v0_1_0::toolhost::plugin::tools::Host for SandboxState {
    async fn call(&mut self, name: String, arguments: String) -> std::result::Result<String, WitToolError> {
        let refuse = |code: ErrorCode, message: String| {
            Err(WitToolError::Failed(
                Error::new(code, message).to_json().to_string(),
            ))
        };
        if !self.callable.contains(&name) {
            return refuse(
                ErrorCode::CapabilityNotGranted,
                format!(
                    "this plugin may not call the tool `{name}`: it must declare it (capabilities! {{ tools: [\"{name}\"] }}) and be granted it (tools = [\"{name}\"] in its [plugins.grants])"
                ),
            );
        }
        let Some(caller) = self.ctx.caller.clone() else {
            return refuse(
                ErrorCode::CapabilityNotGranted,
                "nested tool calls are only available to calls made through the dispatch pipeline".into(),
            );
        };
        if self.ctx.depth >= self.call_depth {
            return refuse(
                ErrorCode::Blocked,
                format!(
                    "tool calls may nest at most {} deep; `{name}` would be deeper",
                    self.call_depth
                ),
            );
        }
        let arguments: serde_json::Value = match serde_json::from_str(&arguments) {
            Ok(v) => v,
            Err(e) => {
                return Err(WitToolError::InvalidArguments(format!(
                    "the arguments for `{name}` are not JSON: {e}"
                )));
            }
        };
        let nested = CallContext {
            call_id: 0,
            parent_call_id: Some(self.ctx.call_id),
            session_id: self.ctx.session_id.clone(),
            session_continues: std::sync::Arc::clone(&self.ctx.session_continues),
            deadline: Some(self.deadline),
            cancel: self.ctx.cancel.child_token(),
            limits: Default::default(),
            depth: self.ctx.depth + 1,
            caller: Some(caller.clone()),
        };
        match caller.0.call_tool(&name, arguments, nested).await {
            Ok(output) => Ok(output.content),
            Err(e) => Err(WitToolError::Failed(e.to_json().to_string())),
        }
    }
}

/// Builds the linker every component is instantiated against.
pub(crate) fn linker(engine: &wasmtime::Engine) -> Result<Linker<SandboxState>> {
    let mut linker = Linker::new(engine);
    let err = |e: wasmtime::Error| Error::internal(format!("cannot build the linker: {e:#}"));
    wasmtime_wasi::p2::add_to_linker_async(&mut linker).map_err(err)?;
    wasmtime_wasi_http::p2::add_only_http_to_linker_async(&mut linker).map_err(err)?;
    v0_1_0::Plugin::add_to_linker::<SandboxState, HasSelf<SandboxState>>(&mut linker, |s| s).map_err(err)?;
    Ok(linker)
}

/// The interfaces (without version) the linker provides, for the
/// missing-import check at load. Kept beside [`linker`], which defines them.
pub(crate) const PROVIDED_INTERFACES: &[&str] = &[
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
    "toolhost:plugin/host",
    "toolhost:plugin/tools",
    "toolhost:plugin/types",
];

/// Whether the import `name` (`ns:pkg/iface@version`) is one the linker
/// provides: the interface is known and the version is semver-compatible
/// with what wasmtime serves (`0.2.x` for WASI, `0.1.x` for toolhost). A
/// component importing anything else is refused at load (`missing_imports`).
pub fn is_provided(name: &str) -> bool {
    let (iface, version) = name.split_once('@').unwrap_or((name, ""));
    if !PROVIDED_INTERFACES.contains(&iface) {
        return false;
    }
    let wanted = if iface.starts_with("wasi:") {
        "0.2."
    } else {
        "0.1."
    };
    version.starts_with(wanted)
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

    /// How many bytes were written, kept or dropped.
    pub(crate) fn written(&self) -> u64 {
        let buf = self.inner.lock().unwrap_or_else(|p| p.into_inner());
        (buf.data.len() as u64).saturating_add(buf.dropped)
    }

    /// The captured text (lossily decoded) and how many bytes were dropped.
    pub(crate) fn take(&self) -> (String, u64) {
        let mut buf = self.inner.lock().unwrap_or_else(|p| p.into_inner());
        let text = String::from_utf8_lossy(&buf.data).into_owned();
        buf.data.clear();
        (text, std::mem::take(&mut buf.dropped))
    }
}

impl IsTerminal for CappedPipe {
    fn is_terminal(&self) -> bool {
        false
    }
}

impl StdoutStream for CappedPipe {
    fn async_stream(&self) -> Box<dyn tokio::io::AsyncWrite + Send + Sync> {
        Box::new(self.clone())
    }
}

impl tokio::io::AsyncWrite for CappedPipe {
    fn poll_write(self: Pin<&mut Self>, _cx: &mut Context<'_>, bytes: &[u8]) -> Poll<std::io::Result<usize>> {
        let mut buf = self.inner.lock().unwrap_or_else(|p| p.into_inner());
        let room = buf.cap.saturating_sub(buf.data.len());
        let kept = room.min(bytes.len());
        buf.data.extend_from_slice(&bytes[..kept]);
        buf.dropped += (bytes.len() - kept) as u64;
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
        Some(trap) => {
            let mut message = format!("the plugin trapped: {trap}");
            if let Some(panic) = panic_message(stderr) {
                message = format!("the plugin panicked: {panic}");
            }
            Error::new(ErrorCode::Trap, message)
        }
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
            Error::new(ErrorCode::Trap, format!("the plugin failed: {text}"))
        }
    }
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
    fn panic_messages_are_extracted() {
        let stderr = "\nthread '<unnamed>' panicked at src/lib.rs:10:5:\nthe answer was 41\nnote: run with `RUST_BACKTRACE=1`\n";
        assert_eq!(
            panic_message(stderr).unwrap(),
            "the answer was 41 (at src/lib.rs:10:5)"
        );
        assert_eq!(panic_message("nothing here"), None);
    }

    #[test]
    fn provided_imports_match_by_semver() {
        assert!(is_provided("wasi:io/streams@0.2.9"));
        assert!(is_provided("toolhost:plugin/host@0.1.0"));
        assert!(!is_provided("wasi:io/streams@0.3.0"));
        assert!(is_provided("wasi:http/outgoing-handler@0.2.3"));
        assert!(!is_provided("wasi:http/incoming-handler@0.2.3"));
        assert!(!is_provided("example:missing/thing@1.0.0"));
    }
}
