//! # The engine
//!
//! One [`Engine`] is shared by every component a host loads. It owns the
//! wasmtime engine (component model, fuel, epoch interruption, the pooling
//! allocator), the one linker every component is instantiated against, the
//! on-disk compilation cache, and **one epoch ticker**: a thread that advances
//! the engine's epoch every [`EngineConfig::epoch_tick`]. A call's wall-clock
//! limit is its own deadline counted in those ticks, so one thread serves any
//! number of concurrent calls.
//!
//! ## Stack tiers
//!
//! Wasmtime fixes the WebAssembly stack limit per wasmtime engine, not per
//! store. So that a plugin or a call can still have its own
//! [`Limits::wasm_stack_bytes`], the engine keeps one wasmtime engine per
//! distinct stack size in use: the primary one, for the default stack, and up
//! to [`MAX_STACK_TIERS`] more, built on first use with the same settings
//! otherwise. A component compiled once is shared with a tier by serializing
//! it from the primary engine and deserializing it into the tier (no second
//! compile). The one ticker advances every tier's epoch.
//!
//! ```no_run
//! # async fn demo() -> toolhost_core::Result<()> {
//! use toolhost_runtime::engine::{Engine, EngineConfig};
//!
//! let engine = Engine::new(EngineConfig::default())?;
//! let component = engine.load_file("plugins/hello.wasm".as_ref(), Default::default()).await?;
//! println!("{} offers {} tools", component.hash(), component.tools().len());
//! # Ok(()) }
//! ```

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::thread::JoinHandle;
use std::time::Duration;

use wasmtime::component::Linker;
use wasmtime::{Config, Enabled, InstanceAllocationStrategy, OptLevel, PoolingAllocationConfig};

use crate::cache::CompileCache;
use crate::gate::InstanceGate;
use crate::sandbox::SandboxState;
use toolhost_core::error::{Error, ErrorCode, Result};
use toolhost_core::limits::Limits;

/// How an [`Engine`] is built. The defaults suit a host serving many small
/// tool calls.
#[derive(Debug, Clone)]
pub struct EngineConfig {
    /// Use the pooling allocator (default: yes). Where the pool cannot reserve
    /// its virtual memory (a tight `ulimit -v`, for instance) the engine falls
    /// back to on-demand allocation and logs a warning.
    pub pooling: bool,
    /// How many component instances may be alive at once in the pool, that is,
    /// how many calls can run concurrently (default 128). Calls past it wait
    /// (see [`crate::gate`]).
    pub max_concurrent_instances: u32,
    /// How many calls may wait for an instance when all are in use
    /// (default 1024); past that, a call is refused at once with
    /// `unavailable`.
    pub max_waiting_calls: usize,
    /// The ceiling for any plugin's memory limit, in bytes (default 1 GiB):
    /// the size of one pool slot. A plugin asking for more is refused at load.
    pub max_memory_bytes: u64,
    /// The ceiling for any plugin's or call's WebAssembly stack limit, in
    /// bytes (default 8 MiB). The default stack itself is
    /// [`Limits::wasm_stack_bytes`] in `default_limits`; a plugin or call asking
    /// for more than this ceiling is refused with `config`.
    pub max_wasm_stack: usize,
    /// The period of the epoch ticker (default 10 ms): the resolution of every
    /// wall-clock limit.
    pub epoch_tick: Duration,
    /// Where compiled components are cached (default: none, compile every
    /// load). See [`crate::cache`].
    pub cache_dir: Option<PathBuf>,
    /// The limits calls run under unless a plugin or a call overrides them.
    pub default_limits: Limits,
    /// The most bytes a component may have (default 64 MiB; a Python or
    /// JavaScript plugin is 12 to 18 MB): [`Engine::load`] refuses more with
    /// `too_large`, and every file of a component is refused before it is
    /// read when it is larger (see `toolhost_core::bounded`).
    pub max_component_bytes: u64,
}

/// The default of [`EngineConfig::max_component_bytes`]: 64 MiB.
pub const DEFAULT_MAX_COMPONENT_BYTES: u64 = 64 << 20;

impl Default for EngineConfig {
    fn default() -> Self {
        EngineConfig {
            pooling: true,
            max_concurrent_instances: 128,
            max_waiting_calls: 1024,
            max_memory_bytes: 1 << 30,
            max_wasm_stack: 8 << 20,
            epoch_tick: Duration::from_millis(10),
            cache_dir: None,
            default_limits: Limits::DEFAULT,
            max_component_bytes: DEFAULT_MAX_COMPONENT_BYTES,
        }
    }
}

/// The shared engine: see the module documentation. Cheap to clone.
#[derive(Clone)]
pub struct Engine {
    pub(crate) inner: Arc<EngineInner>,
}

/// The smallest WebAssembly stack limit a plugin or call may ask for.
pub const MIN_WASM_STACK: usize = 16 << 10;

/// How many stack sizes besides the default one an engine serves at once
/// (each is a wasmtime engine of its own, with its own instance pool).
pub const MAX_STACK_TIERS: usize = 4;

pub(crate) struct EngineInner {
    /// The primary wasmtime engine, whose stack limit is the default one.
    pub(crate) wasmtime: wasmtime::Engine,
    /// Admission to every instance pool, the stack tiers' too: one count
    /// of the instances alive, whatever their stack size.
    pub(crate) gate: InstanceGate,
    pub(crate) linker: Linker<SandboxState>,
    pub(crate) config: EngineConfig,
    pub(crate) cache: Option<CompileCache>,
    strategy: Strategy,
    tiers: Mutex<Vec<Arc<StackTier>>>,
    ticker: Ticker,
}

/// A wasmtime engine for one non-default stack size; see the module docs.
pub(crate) struct StackTier {
    pub(crate) stack_bytes: usize,
    pub(crate) wasmtime: wasmtime::Engine,
    pub(crate) linker: Linker<SandboxState>,
}

/// How instances are allocated. A tier must use the primary engine's
/// strategy exactly, or the primary's compiled code would not fit it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Strategy {
    Pooling,
    /// On demand, with small reservations: the fallback when the pool could
    /// not reserve its memory.
    OnDemandFallback,
    OnDemand,
}

impl std::fmt::Debug for Engine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Engine")
            .field("strategy", &self.inner.strategy)
            .field("config", &self.inner.config)
            .finish_non_exhaustive()
    }
}

impl Engine {
    /// Builds an engine and starts its epoch ticker.
    ///
    /// # Errors
    ///
    /// `config` when a value is out of range (a zero tick, for instance) or
    /// wasmtime refuses the configuration; `io` when the cache folder cannot
    /// be created.
    pub fn new(config: EngineConfig) -> Result<Engine> {
        if config.epoch_tick.is_zero() {
            return Err(Error::new(
                ErrorCode::Config,
                "epoch_tick must be greater than zero",
            ));
        }
        let stack = config.default_limits.wasm_stack_bytes;
        check_stack(&config, stack, "default_limits.wasm_stack_bytes")?;
        let (wasmtime, strategy) = if config.pooling {
            match build_wasmtime(&config, stack, Strategy::Pooling) {
                Ok(engine) => (engine, Strategy::Pooling),
                Err(e) => {
                    tracing::warn!(
                        error = %e.message(),
                        "the pooling allocator could not reserve its memory; falling back to on-demand allocation"
                    );
                    let strategy = Strategy::OnDemandFallback;
                    (build_wasmtime(&config, stack, strategy)?, strategy)
                }
            }
        } else {
            (
                build_wasmtime(&config, stack, Strategy::OnDemand)?,
                Strategy::OnDemand,
            )
        };
        let linker = crate::sandbox::linker(&wasmtime)?;
        let cache = match &config.cache_dir {
            Some(dir) => Some(CompileCache::open(dir, &wasmtime)?),
            None => None,
        };
        let ticker = Ticker::start(wasmtime.clone(), config.epoch_tick)?;
        let gate = InstanceGate::new(config.max_concurrent_instances as usize, config.max_waiting_calls);
        Ok(Engine {
            inner: Arc::new(EngineInner {
                gate,
                wasmtime,
                linker,
                config,
                cache,
                strategy,
                tiers: Mutex::new(Vec::new()),
                ticker,
            }),
        })
    }

    /// The wasmtime engine for calls with a stack limit of `stack_bytes`:
    /// `None` for the default stack (the primary engine), else the tier for
    /// that size, built on first use.
    ///
    /// # Errors
    ///
    /// `config` when `stack_bytes` is outside
    /// [`MIN_WASM_STACK`]..=[`EngineConfig::max_wasm_stack`], when
    /// [`MAX_STACK_TIERS`] other sizes are in use already, or when wasmtime
    /// cannot build the tier's engine (its instance pool cannot be reserved,
    /// for instance).
    pub(crate) fn stack_tier(&self, stack_bytes: usize) -> Result<Option<Arc<StackTier>>> {
        let inner = &self.inner;
        if stack_bytes == inner.config.default_limits.wasm_stack_bytes {
            return Ok(None);
        }
        check_stack(&inner.config, stack_bytes, "wasm_stack_kb")?;
        let mut tiers = inner.tiers.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(tier) = tiers.iter().find(|t| t.stack_bytes == stack_bytes) {
            return Ok(Some(Arc::clone(tier)));
        }
        if tiers.len() >= MAX_STACK_TIERS {
            let sizes: Vec<String> = tiers
                .iter()
                .map(|t| format!("{} KiB", t.stack_bytes >> 10))
                .collect();
            return Err(Error::new(
                ErrorCode::Config,
                format!(
                    "a stack limit of {} KiB would be this engine's {}th stack size besides the default; at most {MAX_STACK_TIERS} are served at once (in use: {}): use one of those, or the default {} KiB",
                    stack_bytes >> 10,
                    MAX_STACK_TIERS + 1,
                    sizes.join(", "),
                    inner.config.default_limits.wasm_stack_bytes >> 10,
                ),
            ));
        }
        let wasmtime = build_wasmtime(&inner.config, stack_bytes, inner.strategy)?;
        if crate::cache::compatibility_key(&wasmtime) != crate::cache::compatibility_key(&inner.wasmtime) {
            // Cannot happen while wasmtime keeps the stack limit out of its
            // compatibility hash; checked so that a change there is an error,
            // not a refused deserialization later.
            return Err(Error::internal(
                "a stack tier's engine is not compatible with the primary engine's compiled code",
            ));
        }
        let tier = Arc::new(StackTier {
            stack_bytes,
            linker: crate::sandbox::linker(&wasmtime)?,
            wasmtime: wasmtime.clone(),
        });
        inner.ticker.add(wasmtime);
        tiers.push(Arc::clone(&tier));
        tracing::info!(
            stack_kib = stack_bytes >> 10,
            tiers = tiers.len(),
            "built a stack tier"
        );
        Ok(Some(tier))
    }

    /// The one gate of every instance pool (see [`crate::gate`]): a tier's
    /// pool is as large as the primary's, and this gate keeps the instances
    /// of all of them together within `max_concurrent_instances`.
    pub(crate) fn gate(&self) -> &InstanceGate {
        &self.inner.gate
    }

    /// The stack sizes served besides the default one, in bytes, in the
    /// order they were first used.
    pub fn stack_tiers(&self) -> Vec<usize> {
        let tiers = self.inner.tiers.lock().unwrap_or_else(PoisonError::into_inner);
        tiers.iter().map(|t| t.stack_bytes).collect()
    }

    /// The configuration the engine was built with.
    pub fn config(&self) -> &EngineConfig {
        &self.inner.config
    }

    /// Whether the pooling allocator is in use (false after a fallback).
    pub fn is_pooling(&self) -> bool {
        self.inner.strategy == Strategy::Pooling
    }

    /// The underlying wasmtime engine (for benchmarks and advanced embedding).
    pub fn wasmtime(&self) -> &wasmtime::Engine {
        &self.inner.wasmtime
    }

    /// The most memory the primary engine's instance pool keeps resident
    /// between calls, in bytes, once every slot has been used: each linear
    /// memory slot keeps up to [`POOL_MEMORY_KEEP_RESIDENT`] bytes, each
    /// table slot [`POOL_TABLE_KEEP_RESIDENT`], and each async stack the
    /// pages a call touched (up to its whole size; stacks are not zeroed).
    /// A host's resident memory grows towards this as more slots get used:
    /// that is the pool warming up, not a leak. `None` without pooling.
    pub fn pool_resident_ceiling(&self) -> Option<u64> {
        let pool = PoolShape::of(&self.inner.config);
        self.is_pooling().then(|| {
            let stack = async_stack_size(self.inner.config.default_limits.wasm_stack_bytes) as u64;
            u64::from(pool.memories) * POOL_MEMORY_KEEP_RESIDENT as u64
                + u64::from(pool.tables) * POOL_TABLE_KEEP_RESIDENT as u64
                + u64::from(pool.stacks) * stack
        })
    }

    /// How many calls wait for an instance now (every stack size), and how
    /// many instances are in use.
    pub fn instance_queue(&self) -> (usize, usize) {
        (self.inner.gate.waiting(), self.inner.gate.in_use())
    }

    /// Counts in `metrics` how long each call that found the instance pool
    /// full waited for a place (`toolhost_call_wait_duration_seconds`).
    /// An engine counts in the first metrics it is given: `false` when it
    /// had some already.
    pub fn count_waits(&self, metrics: Arc<toolhost_core::metrics::Metrics>) -> bool {
        self.inner.gate.count_waits(metrics)
    }

    /// The number of ticks the ticker has produced so far.
    pub fn ticks(&self) -> u64 {
        self.inner.ticker.ticks()
    }
}

/// Checks that `stack` is a stack limit this engine may serve.
fn check_stack(config: &EngineConfig, stack: usize, what: &str) -> Result<()> {
    if (MIN_WASM_STACK..=config.max_wasm_stack).contains(&stack) {
        return Ok(());
    }
    Err(Error::new(
        ErrorCode::Config,
        format!(
            "{what}: a stack limit of {} KiB is outside {}..={} KiB (the engine's max_wasm_stack)",
            stack >> 10,
            MIN_WASM_STACK >> 10,
            config.max_wasm_stack >> 10
        ),
    ))
}

/// Head room on a call's fiber stack for the host code wasm calls into.
const HOST_STACK_HEADROOM: usize = 1 << 20;

/// How much of a linear memory slot the pool keeps resident (and resets)
/// between calls.
pub const POOL_MEMORY_KEEP_RESIDENT: usize = 1 << 20;

/// How much of a table slot the pool keeps resident between calls.
pub const POOL_TABLE_KEEP_RESIDENT: usize = 64 << 10;

/// The async (fiber) stack of a call whose WebAssembly stack limit is
/// `wasm_stack` bytes.
fn async_stack_size(wasm_stack: usize) -> usize {
    wasm_stack.saturating_add(HOST_STACK_HEADROOM).max(2 << 20)
}

/// How many of each thing the instance pool holds.
struct PoolShape {
    instances: u32,
    memories: u32,
    tables: u32,
    stacks: u32,
}

impl PoolShape {
    // One call instantiates one component; a component holds a handful of
    // core instances (a Rust guest: 2-4; an interpreter-based one: ~10).
    fn of(config: &EngineConfig) -> PoolShape {
        let n = config.max_concurrent_instances.max(1);
        PoolShape {
            instances: n,
            memories: n.saturating_mul(4),
            tables: n.saturating_mul(8),
            stacks: n,
        }
    }
}

fn build_wasmtime(config: &EngineConfig, stack: usize, strategy: Strategy) -> Result<wasmtime::Engine> {
    let allocation = match strategy {
        Strategy::Pooling => {
            let shape = PoolShape::of(config);
            let mut pool = PoolingAllocationConfig::default();
            pool.total_component_instances(shape.instances)
                .total_core_instances(shape.instances.saturating_mul(16))
                .total_memories(shape.memories)
                .total_tables(shape.tables)
                .total_stacks(shape.stacks)
                .max_core_instances_per_component(64)
                .max_memories_per_component(8)
                .max_tables_per_component(16)
                .max_memories_per_module(2)
                .max_tables_per_module(8)
                .table_elements(
                    usize::try_from(Limits::DEFAULT.table_elements.max(100_000)).unwrap_or(usize::MAX),
                )
                .max_component_instance_size(4 << 20)
                .max_core_instance_size(4 << 20)
                .max_memory_size(usize::try_from(config.max_memory_bytes).unwrap_or(usize::MAX))
                // Keep recently used slots warm: a fresh instance per call is the
                // common case, and re-faulting its pages costs more than keeping them.
                .linear_memory_keep_resident(POOL_MEMORY_KEEP_RESIDENT)
                .table_keep_resident(POOL_TABLE_KEEP_RESIDENT)
                // Where the kernel can say which pages a call dirtied (Linux
                // 6.7+, PAGEMAP_SCAN), reset only those instead of memsetting
                // the whole kept-resident region after every call.
                .pagemap_scan(Enabled::Auto);
            InstanceAllocationStrategy::Pooling(pool)
        }
        Strategy::OnDemandFallback | Strategy::OnDemand => InstanceAllocationStrategy::OnDemand,
    };
    let mut c = Config::new();
    c.wasm_component_model(true)
        .consume_fuel(true)
        .epoch_interruption(true)
        .max_wasm_stack(stack)
        .async_stack_size(async_stack_size(stack))
        .cranelift_opt_level(OptLevel::Speed)
        .allocation_strategy(allocation);
    if strategy == Strategy::OnDemandFallback {
        // Where the pool could not reserve its address space, large
        // per-memory reservations would fail the same way: use explicit
        // bounds checks and grow memories by moving them instead.
        c.memory_reservation(0)
            .memory_guard_size(0)
            .memory_reservation_for_growth(1 << 20);
    }
    wasmtime::Engine::new(&c).map_err(|e| {
        Error::new(
            ErrorCode::Config,
            format!("wasmtime refused the engine configuration: {e:#}"),
        )
    })
}

/// The engine's one epoch ticker thread, advancing the primary engine and
/// every stack tier. It stops when the engine is dropped.
struct Ticker {
    engines: Arc<Mutex<Vec<wasmtime::Engine>>>,
    stop: Arc<AtomicBool>,
    ticks: Arc<std::sync::atomic::AtomicU64>,
    thread: Option<JoinHandle<()>>,
}

impl Ticker {
    fn start(engine: wasmtime::Engine, period: Duration) -> Result<Ticker> {
        let engines = Arc::new(Mutex::new(vec![engine]));
        let stop = Arc::new(AtomicBool::new(false));
        let ticks = Arc::new(std::sync::atomic::AtomicU64::new(0));
        let thread = std::thread::Builder::new()
            .name("toolhost-epoch".into())
            .spawn({
                let engines = Arc::clone(&engines);
                let stop = Arc::clone(&stop);
                let ticks = Arc::clone(&ticks);
                move || {
                    while !stop.load(Ordering::Relaxed) {
                        std::thread::park_timeout(period);
                        for engine in engines.lock().unwrap_or_else(PoisonError::into_inner).iter() {
                            engine.increment_epoch();
                        }
                        ticks.fetch_add(1, Ordering::Relaxed);
                    }
                }
            })
            .map_err(|e| Error::io("could not start the epoch ticker thread", e))?;
        Ok(Ticker {
            engines,
            stop,
            ticks,
            thread: Some(thread),
        })
    }

    fn ticks(&self) -> u64 {
        self.ticks.load(Ordering::Relaxed)
    }

    fn add(&self, engine: wasmtime::Engine) {
        self.engines
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(engine);
    }
}

impl Drop for Ticker {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(thread) = self.thread.take() {
            thread.thread().unpark();
            let _ = thread.join();
        }
    }
}
