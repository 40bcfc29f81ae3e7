//! # The bare-wasmtime floor
//!
//! What a call or a load would cost with wasmtime alone, on the same
//! engine (the same pooling settings, fuel and epoch interruption on) and
//! the same compiled code: the floor that `toolhost bench` and the
//! benchmarks put beside every toolhost figure, measured in the same run.
//!
//! A [`BareComponent`] call is a fresh instance from an `InstancePre` in a
//! store holding an empty WASI context and a peak-memory counter, then
//! `call-tool` (looked up by its export index and type-checked alone, as a
//! toolhost call does): no limits but the engine's, no capabilities, no
//! captured output, no output checks, no classification of failures. The
//! `toolhost:plugin` imports (log, nested calls, progress) trap when
//! called, so a tool that uses them has no floor ([`BareCall::Trapped`]).

use wasmtime::component::{Component, InstancePre, Linker, ResourceTable};
use wasmtime::{ResourceLimiter, Store};
use wasmtime_wasi::{WasiCtx, WasiCtxView, WasiView};

use crate::bindings::CallTool;
use crate::component::LoadedComponent;
use toolhost_core::error::{Error, Result};

/// The store of a bare call: an empty WASI context, the linear memory size
/// the instance started with and the peak it reached.
pub struct BareState {
    wasi: WasiCtx,
    table: ResourceTable,
    initial_memory: usize,
    peak_memory: usize,
}

impl std::fmt::Debug for BareState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BareState")
            .field("peak_memory", &self.peak_memory)
            .finish_non_exhaustive()
    }
}

impl WasiView for BareState {
    fn ctx(&mut self) -> WasiCtxView<'_> {
        WasiCtxView {
            ctx: &mut self.wasi,
            table: &mut self.table,
        }
    }
}

impl ResourceLimiter for BareState {
    /// Called with `current` 0 when a memory is created (its initial size),
    /// then on each growth.
    fn memory_growing(
        &mut self,
        current: usize,
        desired: usize,
        _maximum: Option<usize>,
    ) -> wasmtime::Result<bool> {
        if current == 0 {
            self.initial_memory = self.initial_memory.max(desired);
        }
        self.peak_memory = self.peak_memory.max(desired);
        Ok(true)
    }

    fn table_growing(
        &mut self,
        _current: usize,
        _desired: usize,
        _maximum: Option<usize>,
    ) -> wasmtime::Result<bool> {
        Ok(true)
    }
}

/// A loaded component's compiled code, linked for bare calls (see the
/// module documentation).
pub struct BareComponent {
    engine: wasmtime::Engine,
    pre: InstancePre<BareState>,
    call_tool: CallTool,
}

impl std::fmt::Debug for BareComponent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("BareComponent")
    }
}

/// What one bare call did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BareCall {
    /// The tool answered (its JSON, or its error message).
    Answered {
        /// Whether the tool returned a result rather than an error.
        ok: bool,
        /// Fuel consumed, instantiation included.
        fuel: u64,
        /// The largest linear memory size reached, in bytes.
        peak_memory_bytes: u64,
        /// The largest size a linear memory was created with, in bytes:
        /// above it, `peak_memory_bytes` means the call grew its memory.
        initial_memory_bytes: u64,
    },
    /// The guest trapped, or called a `toolhost:plugin` import (which the
    /// floor does not provide): the message.
    Trapped(String),
}

/// The fuel a bare call starts with: all it could want.
const BARE_FUEL: u64 = u64::MAX / 2;

impl BareComponent {
    /// Links `component`'s compiled code, on its engine, for bare calls.
    ///
    /// # Errors
    ///
    /// `internal` when the code cannot be linked (it was linked once
    /// already, with more imports, so this does not happen).
    pub fn new(component: &LoadedComponent) -> Result<BareComponent> {
        let compiled = component.compiled();
        let engine = compiled.engine().clone();
        let mut linker: Linker<BareState> = Linker::new(&engine);
        let link = |e: wasmtime::Error| Error::internal(format!("linking the bare floor: {e:#}"));
        wasmtime_wasi::p2::add_to_linker_async(&mut linker).map_err(link)?;
        linker.define_unknown_imports_as_traps(compiled).map_err(link)?;
        let pre = linker.instantiate_pre(compiled).map_err(link)?;
        let call_tool = CallTool::find(compiled, component.world()).map_err(link)?;
        Ok(BareComponent {
            engine,
            pre,
            call_tool,
        })
    }

    /// Calls `tool` with `arguments` in a fresh bare instance.
    pub async fn call(&self, tool: &str, arguments: &str) -> BareCall {
        let state = BareState {
            wasi: WasiCtx::builder().build(),
            table: ResourceTable::new(),
            initial_memory: 0,
            peak_memory: 0,
        };
        let mut store = Store::new(&self.engine, state);
        store.limiter(|s| s);
        if let Err(e) = store.set_fuel(BARE_FUEL) {
            return BareCall::Trapped(e.to_string());
        }
        store.set_epoch_deadline(u64::MAX / 2);
        let called = self.call_tool.call(&self.pre, &mut store, tool, arguments).await;
        match called.map(|result| result.is_ok()) {
            Ok(ok) => BareCall::Answered {
                ok,
                fuel: BARE_FUEL.saturating_sub(store.get_fuel().unwrap_or(0)),
                peak_memory_bytes: store.data().peak_memory as u64,
                initial_memory_bytes: store.data().initial_memory as u64,
            },
            Err(e) => BareCall::Trapped(format!("{e:#}")),
        }
    }
}

/// Compiles `bytes` with wasmtime alone on `engine` (the cold-load floor).
///
/// # Errors
///
/// `invalid_component` with wasmtime's message.
pub fn compile(engine: &wasmtime::Engine, bytes: &[u8]) -> Result<Component> {
    Component::new(engine, bytes).map_err(|e| {
        Error::new(
            toolhost_core::error::ErrorCode::InvalidComponent,
            format!("{e:#}"),
        )
    })
}

/// A component's compiled code as bytes, made only by [`serialize`] in
/// this process (so [`deserialize`] can trust it).
#[derive(Debug, Clone)]
pub struct Serialized(Vec<u8>);

impl Serialized {
    /// The size of the compiled code, in bytes.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// Whether there are no bytes (never, for real code).
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

/// The compiled code of `component` as bytes.
///
/// # Errors
///
/// `internal` when wasmtime cannot serialize it.
pub fn serialize(component: &Component) -> Result<Serialized> {
    component
        .serialize()
        .map(Serialized)
        .map_err(|e| Error::internal(format!("serializing compiled code: {e:#}")))
}

/// Turns [`serialize`]d code back into a component with wasmtime alone
/// (the warm-load floor).
///
/// # Errors
///
/// `internal` when wasmtime refuses the bytes (an engine of another
/// configuration).
pub fn deserialize(engine: &wasmtime::Engine, code: &Serialized) -> Result<Component> {
    // SAFETY: a `Serialized` is only made by `serialize`, from code
    // wasmtime compiled in this process, and is never modified; wasmtime
    // checks that `engine`'s configuration is compatible with it.
    unsafe { Component::deserialize(engine, &code.0) }
        .map_err(|e| Error::internal(format!("deserializing compiled code: {e:#}")))
}
