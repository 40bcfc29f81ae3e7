//! # `toolhost bench`: a plugin measured the way the host runs it
//!
//! [`run`] loads a component and calls one of its tools many times, at
//! each level of concurrency asked for, and measures the same work on the
//! bare-wasmtime floor ([`crate::floor`]) in the same run, with the same
//! engine settings and the same compiled code:
//!
//! | figure | toolhost | floor |
//! |---|---|---|
//! | cold load | [`Engine::load`] with no cache: checks, compile, `InstancePre`, `list-tools` | `Component::new` |
//! | warm load | [`Engine::load`] from the compile cache | `Component::deserialize` from memory |
//! | per call (p50, p99, mean, calls/s) | [`LoadedComponent::call`]: a fresh sandboxed instance | a fresh bare instance and `call-tool` |
//! | fuel, peak memory per call | the call's [`Usage`](crate::limits::Usage) | the same, counted on the bare store |
//!
//! Every figure is a ratio to its floor: the machine may be busy, but both
//! sides of a ratio see the same machine. The toolhost and floor runs of a
//! level alternate (floor, toolhost, floor, toolhost, each half the calls),
//! so a slow spell on the machine is shared between them. Calls at a
//! level run as that many tokio tasks on the runtime's threads (all cores).

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use serde::Serialize;

use super::floor::{self, BareCall, BareComponent};
use crate::LoadedComponent;
use crate::component::LoadOptions;
use crate::engine::{Engine, EngineConfig};
use crate::error::{Error, ErrorCode, Result};
use crate::limits::LimitsOverride;

/// What to measure.
#[derive(Debug, Clone)]
pub struct BenchOptions {
    /// Calls per concurrency level (each side: toolhost and the floor).
    pub calls: usize,
    /// The levels of concurrency, in order.
    pub concurrency: Vec<usize>,
    /// How many cold loads (compiles) to time; the median is reported.
    pub cold_loads: usize,
    /// How many warm loads (from the cache) to time.
    pub warm_loads: usize,
    /// The engine: its settings apply to toolhost and the floor alike; its
    /// `cache_dir` is replaced by a fresh folder of the run's own.
    pub engine: EngineConfig,
    /// How the component is loaded (limits, grants, a pin).
    pub load: LoadOptions,
}

impl Default for BenchOptions {
    fn default() -> Self {
        BenchOptions {
            calls: 2000,
            concurrency: vec![1, 8, 64],
            cold_loads: 3,
            warm_loads: 20,
            engine: EngineConfig::default(),
            load: LoadOptions::default(),
        }
    }
}

/// One toolhost figure beside its floor.
#[derive(Debug, Clone, Copy, Serialize, PartialEq)]
pub struct Beside {
    /// toolhost's figure.
    pub toolhost: f64,
    /// The floor's.
    pub floor: f64,
    /// `toolhost / floor`.
    pub ratio: f64,
}

impl Beside {
    fn new(toolhost: f64, floor: f64) -> Beside {
        Beside {
            toolhost,
            floor,
            ratio: if floor > 0.0 { toolhost / floor } else { f64::NAN },
        }
    }
}

/// Load times, in milliseconds (medians).
#[derive(Debug, Clone, Serialize)]
pub struct LoadReport {
    /// Without a cache: toolhost's load vs wasmtime's compile.
    pub cold_ms: Beside,
    /// From the cache: toolhost's load vs wasmtime's deserialize.
    pub warm_ms: Beside,
    /// How much faster a warm load is than a cold one.
    pub warm_speedup: f64,
}

/// What the calls at one level of concurrency did, on one side.
#[derive(Debug, Clone, Default, Serialize)]
pub struct CallStats {
    /// Calls made.
    pub calls: usize,
    /// Calls that failed (a typed error, or a trap on the floor).
    pub errors: usize,
    /// The failures by error code.
    pub errors_by_code: std::collections::BTreeMap<String, usize>,
    /// Latency percentiles and mean, in microseconds.
    pub p50_us: f64,
    /// 99th percentile.
    pub p99_us: f64,
    /// Mean.
    pub mean_us: f64,
    /// Calls completed per second of wall time.
    pub calls_per_sec: f64,
    /// Fuel per successful call (instantiation included), on average.
    pub fuel_per_call: u64,
    /// The largest linear memory a call reached, in bytes.
    pub peak_memory_bytes: u64,
    /// The largest size a call's linear memory started with, in bytes:
    /// when `peak_memory_bytes` is above it, the calls grow their memory
    /// (each growth costs the host page-table work). Counted on the
    /// floor's side only (`None` on toolhost's).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub initial_memory_bytes: Option<u64>,
}

/// One level of concurrency.
#[derive(Debug, Clone, Serialize)]
pub struct LevelReport {
    /// Calls in flight at once.
    pub concurrency: usize,
    /// toolhost's calls.
    pub toolhost: CallStats,
    /// The floor's calls (`None` when the tool has no floor).
    pub floor: Option<CallStats>,
    /// p50 latency, toolhost over the floor.
    pub p50_ratio: Option<f64>,
    /// Throughput, the floor over toolhost (above 1: toolhost is slower).
    pub throughput_ratio: Option<f64>,
}

/// Everything [`run`] measured.
#[derive(Debug, Clone, Serialize)]
pub struct BenchReport {
    /// The component's hash.
    pub component: String,
    /// Its world version.
    pub world: String,
    /// The tool called.
    pub tool: String,
    /// The arguments, as sent.
    pub arguments: String,
    /// The threads the calls ran on.
    pub threads: usize,
    /// Load times.
    pub load: LoadReport,
    /// One entry per concurrency level.
    pub levels: Vec<LevelReport>,
    /// Why the tool has no floor, if it has none (it calls the host).
    pub floor_unavailable: Option<String>,
}

/// Where [`run`] is: `stage` (`load`, `calls c=8`, ...) and how many of its
/// steps are done, out of how many.
#[derive(Debug, Clone)]
pub struct Progress {
    /// What is being measured.
    pub stage: String,
    /// Steps done in this run, in all.
    pub done: u64,
    /// Steps in this run, in all.
    pub total: u64,
}

/// Measures `tool` of the component in `bytes` as the module
/// documentation describes, calling `progress` as it goes. Runs on the
/// current tokio runtime (multi-threaded, for concurrency to use the
/// cores).
///
/// # Errors
///
/// The load's error; `config` for options that measure nothing (no calls,
/// a concurrency of 0); the tool's own error when its first call fails (a
/// failing call is not worth timing).
pub async fn run(
    bytes: Vec<u8>,
    tool: &str,
    arguments: &str,
    options: &BenchOptions,
    progress: &(dyn Fn(Progress) + Sync),
) -> Result<BenchReport> {
    if options.calls == 0 || options.concurrency.is_empty() || options.concurrency.contains(&0) {
        return Err(Error::new(
            ErrorCode::Config,
            "bench needs at least one call and concurrency levels of at least 1",
        ));
    }
    let cache = TempDir::new()?;
    let total = (options.cold_loads * 2 + 1 + options.warm_loads * 2) as u64
        + (options.calls * 2 * options.concurrency.len()) as u64;
    let done = AtomicUsize::new(0);
    let step = |stage: &str, n: usize| {
        let d = done.fetch_add(n, Ordering::Relaxed) + n;
        progress(Progress {
            stage: stage.to_string(),
            done: d as u64,
            total,
        });
    };

    // Loads. The cold engine has no cache; the warm one a fresh cache.
    let cold_engine = Engine::new(EngineConfig {
        cache_dir: None,
        ..options.engine.clone()
    })?;
    let engine = Engine::new(EngineConfig {
        cache_dir: Some(cache.0.clone()),
        ..options.engine.clone()
    })?;
    // The first call must succeed (a failing call is not worth timing).
    let component = engine.load(bytes.clone(), options.load.clone()).await?;
    step("load", 1);
    let first = component
        .call(tool, arguments, &LimitsOverride::default(), None, 0)
        .await;
    first.result?;
    let cold_ms = time_loads(
        options.cold_loads,
        || floor::compile(cold_engine.wasmtime(), &bytes).map(drop),
        async || {
            cold_engine
                .load(bytes.clone(), options.load.clone())
                .await
                .map(drop)
        },
        &|| step("load (cold)", 2),
    )
    .await?;
    let code = floor::serialize(component.compiled())?;
    let warm_ms = time_loads(
        options.warm_loads,
        || floor::deserialize(engine.wasmtime(), &code).map(drop),
        async || engine.load(bytes.clone(), options.load.clone()).await.map(drop),
        &|| step("load (warm)", 2),
    )
    .await?;
    let load = LoadReport {
        cold_ms,
        warm_ms,
        warm_speedup: cold_ms.toolhost / warm_ms.toolhost,
    };

    // The floor's first call tells whether the tool has one.
    let bare = BareComponent::new(&component)?;
    let floor_unavailable = match bare.call(tool, arguments).await {
        BareCall::Answered { .. } => None,
        BareCall::Trapped(message) => Some(format!(
            "the tool does not run on bare wasmtime (it calls toolhost's imports, which the floor does not provide): {message}"
        )),
    };
    let bare = floor_unavailable.is_none().then_some(bare);

    let call = Arc::new(Call {
        tool: tool.into(),
        arguments: arguments.into(),
    });
    let on_toolhost = Arc::new(Target::Toolhost(Arc::clone(&component)));
    let bare = bare.map(|bare| Arc::new(Target::Floor(bare)));
    let mut levels = Vec::new();
    for &concurrency in &options.concurrency {
        let stage = format!("calls c={concurrency}");
        let step = |n| step(&stage, n);
        let half = options.calls.div_ceil(2);
        let mut toolhost = Samples::default();
        let mut on_floor = Samples::default();
        for _ in 0..2 {
            match &bare {
                Some(bare) => on_floor.extend(measure(bare, &call, half, concurrency, &step).await),
                None => step(half),
            }
            toolhost.extend(measure(&on_toolhost, &call, half, concurrency, &step).await);
        }
        let toolhost = toolhost.stats();
        let floor = bare.is_some().then(|| on_floor.stats());
        levels.push(LevelReport {
            concurrency,
            p50_ratio: floor.as_ref().map(|f| toolhost.p50_us / f.p50_us),
            throughput_ratio: floor.as_ref().map(|f| f.calls_per_sec / toolhost.calls_per_sec),
            toolhost,
            floor,
        });
    }
    Ok(BenchReport {
        component: component.hash().to_string(),
        world: component.world().version().to_string(),
        tool: tool.to_string(),
        arguments: arguments.to_string(),
        threads: std::thread::available_parallelism().map_or(1, usize::from),
        load,
        levels,
        floor_unavailable,
    })
}

/// One call's outcome, as [`measure`] records it.
struct Outcome {
    latency: Duration,
    /// `Err(code)` for a failure.
    result: std::result::Result<(), String>,
    fuel: u64,
    peak_memory: u64,
    /// The memory the call started with, where it is known (the floor).
    initial_memory: Option<u64>,
}

/// What is called: toolhost's sandboxed call, or the floor's.
enum Target {
    Toolhost(Arc<LoadedComponent>),
    Floor(BareComponent),
}

/// The call every measured call makes.
struct Call {
    tool: Box<str>,
    arguments: Box<str>,
}

impl Target {
    async fn call(&self, call: &Call) -> Outcome {
        let start = Instant::now();
        match self {
            Target::Toolhost(component) => {
                let outcome = component
                    .call(&call.tool, &call.arguments, &LimitsOverride::default(), None, 0)
                    .await;
                Outcome {
                    latency: start.elapsed(),
                    result: outcome.result.map(drop).map_err(|e| e.code().to_string()),
                    fuel: outcome.usage.fuel_consumed,
                    peak_memory: outcome.usage.peak_memory_bytes,
                    initial_memory: None,
                }
            }
            Target::Floor(bare) => {
                let outcome = bare.call(&call.tool, &call.arguments).await;
                let latency = start.elapsed();
                match outcome {
                    BareCall::Answered {
                        ok,
                        fuel,
                        peak_memory_bytes,
                        initial_memory_bytes,
                    } => Outcome {
                        latency,
                        result: if ok { Ok(()) } else { Err("tool_error".into()) },
                        fuel,
                        peak_memory: peak_memory_bytes,
                        initial_memory: Some(initial_memory_bytes),
                    },
                    BareCall::Trapped(_) => Outcome {
                        latency,
                        result: Err("trap".into()),
                        fuel: 0,
                        peak_memory: 0,
                        initial_memory: None,
                    },
                }
            }
        }
    }
}

/// Makes `calls` calls of `call` on `target`, `concurrency` at a time, as
/// tasks on the current runtime; `step` hears of every 64 done.
async fn measure(
    target: &Arc<Target>,
    call: &Arc<Call>,
    calls: usize,
    concurrency: usize,
    step: &(dyn Fn(usize) + Sync),
) -> Samples {
    const REPORT_EVERY: usize = 64;
    let next = Arc::new(AtomicUsize::new(0));
    let finished = Arc::new(AtomicUsize::new(0));
    let start = Instant::now();
    let mut tasks = tokio::task::JoinSet::new();
    for _ in 0..concurrency.min(calls) {
        let (next, finished) = (Arc::clone(&next), Arc::clone(&finished));
        let (target, call) = (Arc::clone(target), Arc::clone(call));
        tasks.spawn(async move {
            let mut outcomes = Vec::new();
            while next.fetch_add(1, Ordering::Relaxed) < calls {
                outcomes.push(target.call(&call).await);
                finished.fetch_add(1, Ordering::Relaxed);
            }
            outcomes
        });
    }
    let mut outcomes = Vec::with_capacity(calls);
    let mut reported = 0;
    loop {
        tokio::select! {
            joined = tasks.join_next() => match joined {
                Some(Ok(mut done)) => outcomes.append(&mut done),
                Some(Err(e)) => std::panic::resume_unwind(e.into_panic()),
                None => break,
            },
            () = tokio::time::sleep(Duration::from_millis(50)) => {}
        }
        let now = finished.load(Ordering::Relaxed);
        if now - reported >= REPORT_EVERY {
            step(now - reported);
            reported = now;
        }
    }
    step(calls - reported);
    Samples {
        wall: start.elapsed(),
        outcomes,
    }
}

/// The outcomes of some calls and the wall time they took.
#[derive(Default)]
struct Samples {
    wall: Duration,
    outcomes: Vec<Outcome>,
}

impl Samples {
    fn extend(&mut self, other: Samples) {
        self.wall += other.wall;
        self.outcomes.extend(other.outcomes);
    }

    fn stats(&self) -> CallStats {
        let mut latencies: Vec<Duration> = self.outcomes.iter().map(|o| o.latency).collect();
        latencies.sort();
        let us = |d: Duration| d.as_secs_f64() * 1e6;
        let percentile = |p: f64| {
            latencies
                .get(((latencies.len().saturating_sub(1)) as f64 * p).round() as usize)
                .map_or(0.0, |d| us(*d))
        };
        let ok: Vec<&Outcome> = self.outcomes.iter().filter(|o| o.result.is_ok()).collect();
        let mut errors_by_code = std::collections::BTreeMap::new();
        for o in &self.outcomes {
            if let Err(code) = &o.result {
                *errors_by_code.entry(code.clone()).or_insert(0) += 1;
            }
        }
        let calls = self.outcomes.len();
        CallStats {
            calls,
            errors: calls - ok.len(),
            errors_by_code,
            p50_us: percentile(0.5),
            p99_us: percentile(0.99),
            mean_us: if calls == 0 {
                0.0
            } else {
                latencies.iter().map(|d| us(*d)).sum::<f64>() / calls as f64
            },
            calls_per_sec: calls as f64 / self.wall.as_secs_f64().max(f64::MIN_POSITIVE),
            fuel_per_call: if ok.is_empty() {
                0
            } else {
                ok.iter().map(|o| o.fuel).sum::<u64>() / ok.len() as u64
            },
            peak_memory_bytes: self.outcomes.iter().map(|o| o.peak_memory).max().unwrap_or(0),
            initial_memory_bytes: self.outcomes.iter().filter_map(|o| o.initial_memory).max(),
        }
    }
}

/// Times `n` loads on the floor and by toolhost, alternately; the medians
/// in milliseconds.
async fn time_loads(
    n: usize,
    floor: impl Fn() -> Result<()>,
    toolhost: impl AsyncFn() -> Result<()>,
    step: &dyn Fn(),
) -> Result<Beside> {
    let (mut on_floor, mut by_toolhost) = (Vec::new(), Vec::new());
    for _ in 0..n {
        let start = Instant::now();
        floor()?;
        on_floor.push(start.elapsed());
        let start = Instant::now();
        toolhost().await?;
        by_toolhost.push(start.elapsed());
        step();
    }
    Ok(Beside::new(median_ms(&mut by_toolhost), median_ms(&mut on_floor)))
}

fn median_ms(times: &mut [Duration]) -> f64 {
    times.sort();
    times.get(times.len() / 2).map_or(0.0, |d| d.as_secs_f64() * 1e3)
}

/// A folder of the run's own, removed at the end.
struct TempDir(PathBuf);

impl TempDir {
    fn new() -> Result<TempDir> {
        let dir = std::env::temp_dir().join(format!(
            "toolhost-bench-{}-{}",
            std::process::id(),
            crate::dispatch::new_session_id("")
        ));
        std::fs::create_dir_all(&dir).map_err(|e| Error::io(format!("creating {}", dir.display()), e))?;
        Ok(TempDir(dir))
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}
