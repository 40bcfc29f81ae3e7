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
//! ```no_run
//! # async fn demo() -> toolhost::Result<()> {
//! use toolhost::engine::{Engine, EngineConfig};
//!
//! let engine = Engine::new(EngineConfig::default())?;
//! let component = engine.load_file("plugins/hello.wasm".as_ref(), Default::default()).await?;
//! println!("{} offers {} tools", component.hash(), component.tools().len());
//! # Ok(()) }
//! ```

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;
use std::time::Duration;

use wasmtime::component::Linker;
use wasmtime::{Config, InstanceAllocationStrategy, OptLevel, PoolingAllocationConfig};

use crate::cache::CompileCache;
use crate::error::{Error, ErrorCode, Result};
use crate::limits::Limits;
use crate::sandbox::SandboxState;

/// How an [`Engine`] is built. The defaults suit a host serving many small
/// tool calls.
#[derive(Debug, Clone)]
pub struct EngineConfig {
    /// Use the pooling allocator (default: yes). Where the pool cannot reserve
    /// its virtual memory (a tight `ulimit -v`, for instance) the engine falls
    /// back to on-demand allocation and logs a warning.
    pub pooling: bool,
    /// How many component instances may be alive at once in the pool, that is,
    /// how many calls can run concurrently (default 128).
    pub max_concurrent_instances: u32,
    /// The ceiling for any plugin's memory limit, in bytes (default 1 GiB):
    /// the size of one pool slot. A plugin asking for more is refused at load.
    pub max_memory_bytes: u64,
    /// The WebAssembly stack limit, in bytes (default 1 MiB). Wasmtime fixes it
    /// per engine; exceeding it is `stack_overflow`.
    pub max_wasm_stack: usize,
    /// The period of the epoch ticker (default 10 ms): the resolution of every
    /// wall-clock limit.
    pub epoch_tick: Duration,
    /// Where compiled components are cached (default: none, compile every
    /// load). See [`crate::cache`].
    pub cache_dir: Option<PathBuf>,
    /// The limits calls run under unless a plugin or a call overrides them.
    pub default_limits: Limits,
}

impl Default for EngineConfig {
    fn default() -> Self {
        EngineConfig {
            pooling: true,
            max_concurrent_instances: 128,
            max_memory_bytes: 1 << 30,
            max_wasm_stack: 1 << 20,
            epoch_tick: Duration::from_millis(10),
            cache_dir: None,
            default_limits: Limits::DEFAULT,
        }
    }
}

/// The shared engine: see the module documentation. Cheap to clone.
#[derive(Clone)]
pub struct Engine {
    pub(crate) inner: Arc<EngineInner>,
}

pub(crate) struct EngineInner {
    pub(crate) wasmtime: wasmtime::Engine,
    pub(crate) linker: Linker<SandboxState>,
    pub(crate) config: EngineConfig,
    pub(crate) cache: Option<CompileCache>,
    pooling: bool,
    ticker: Ticker,
}

impl std::fmt::Debug for Engine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Engine")
            .field("pooling", &self.inner.pooling)
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
        let (wasmtime, pooling) = build_wasmtime(&config)?;
        let linker = crate::sandbox::linker(&wasmtime)?;
        let cache = match &config.cache_dir {
            Some(dir) => Some(CompileCache::open(dir, &wasmtime)?),
            None => None,
        };
        let ticker = Ticker::start(wasmtime.clone(), config.epoch_tick)?;
        Ok(Engine {
            inner: Arc::new(EngineInner {
                wasmtime,
                linker,
                config,
                cache,
                pooling,
                ticker,
            }),
        })
    }

    /// The configuration the engine was built with.
    pub fn config(&self) -> &EngineConfig {
        &self.inner.config
    }

    /// Whether the pooling allocator is in use (false after a fallback).
    pub fn is_pooling(&self) -> bool {
        self.inner.pooling
    }

    /// The underlying wasmtime engine (for benchmarks and advanced embedding).
    pub fn wasmtime(&self) -> &wasmtime::Engine {
        &self.inner.wasmtime
    }

    /// The number of ticks the ticker has produced so far.
    pub fn ticks(&self) -> u64 {
        self.inner.ticker.ticks()
    }
}

fn build_wasmtime(config: &EngineConfig) -> Result<(wasmtime::Engine, bool)> {
    let base = |strategy: InstanceAllocationStrategy| {
        let mut c = Config::new();
        c.wasm_component_model(true)
            .consume_fuel(true)
            .epoch_interruption(true)
            .max_wasm_stack(config.max_wasm_stack)
            .cranelift_opt_level(OptLevel::Speed)
            .allocation_strategy(strategy);
        c
    };
    let wasmtime_err = |e: wasmtime::Error| {
        Error::new(
            ErrorCode::Config,
            format!("wasmtime refused the engine configuration: {e:#}"),
        )
    };
    if config.pooling {
        let n = config.max_concurrent_instances.max(1);
        let mut pool = PoolingAllocationConfig::default();
        // One call instantiates one component; a component holds a handful of
        // core instances (a Rust guest: 2-4; an interpreter-based one: ~10).
        pool.total_component_instances(n)
            .total_core_instances(n.saturating_mul(16))
            .total_memories(n.saturating_mul(4))
            .total_tables(n.saturating_mul(8))
            .total_stacks(n)
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
            .linear_memory_keep_resident(1 << 20)
            .table_keep_resident(64 << 10);
        match wasmtime::Engine::new(&base(InstanceAllocationStrategy::Pooling(pool))) {
            Ok(engine) => return Ok((engine, true)),
            Err(e) => tracing::warn!(
                error = %format!("{e:#}"),
                "the pooling allocator could not reserve its memory; falling back to on-demand allocation"
            ),
        }
    }
    // Where the pool could not reserve its address space, large per-memory
    // reservations would fail the same way: use explicit bounds checks and
    // grow memories by moving them instead.
    let mut on_demand = base(InstanceAllocationStrategy::OnDemand);
    if config.pooling {
        on_demand
            .memory_reservation(0)
            .memory_guard_size(0)
            .memory_reservation_for_growth(1 << 20);
    }
    let engine = wasmtime::Engine::new(&on_demand).map_err(wasmtime_err)?;
    Ok((engine, false))
}

/// The engine's one epoch ticker thread. It stops when the engine is dropped.
struct Ticker {
    stop: Arc<AtomicBool>,
    ticks: Arc<std::sync::atomic::AtomicU64>,
    thread: Option<JoinHandle<()>>,
}

impl Ticker {
    fn start(engine: wasmtime::Engine, period: Duration) -> Result<Ticker> {
        let stop = Arc::new(AtomicBool::new(false));
        let ticks = Arc::new(std::sync::atomic::AtomicU64::new(0));
        let thread = std::thread::Builder::new()
            .name("toolhost-epoch".into())
            .spawn({
                let stop = Arc::clone(&stop);
                let ticks = Arc::clone(&ticks);
                move || {
                    while !stop.load(Ordering::Relaxed) {
                        std::thread::park_timeout(period);
                        engine.increment_epoch();
                        ticks.fetch_add(1, Ordering::Relaxed);
                    }
                }
            })
            .map_err(|e| Error::io("could not start the epoch ticker thread", e))?;
        Ok(Ticker {
            stop,
            ticks,
            thread: Some(thread),
        })
    }

    fn ticks(&self) -> u64 {
        self.ticks.load(Ordering::Relaxed)
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
