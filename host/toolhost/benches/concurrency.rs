//! Throughput with many calls in flight, beside the bare-wasmtime floor
//! measured in the same run, on a multi-thread tokio runtime using every
//! core.
//!
//! ```text
//! cargo bench -p toolhost --bench concurrency
//! CONCURRENCY_CALLS=8000 CONCURRENCY_ROUNDS=4 CONCURRENCY_LEVELS=64 cargo bench -p toolhost --bench concurrency
//! ```
//!
//! 1. **Trivial calls** (`hello`'s `greet`) with 1, 8, 64 and 512 calls in
//!    flight, on three targets that alternate round by round (floor,
//!    sandboxed, dispatch, floor, ...), so a slow spell of the shared
//!    machine falls on all three:
//!    - `floor`: [`BareComponent::call`], a fresh bare instance from an
//!      `InstancePre` of the same compiled code on the same engine (same
//!      pooling settings), a minimal WASI store. Wasmtime alone fails an
//!      instantiation past the pool's instance limit, so the floor keeps at
//!      most `max_concurrent_instances` calls in flight;
//!    - `sandboxed`: [`LoadedComponent::call`], the instance gate, limits,
//!      captured output, output checks;
//!    - `dispatch`: the whole pipeline ([`Dispatcher::dispatch`]): lookup,
//!      schema validation, the call's task and event, then the sandboxed
//!      call.
//!
//!    Printed: calls/s of each, and the floor's calls/s over dispatch's
//!    (the target at 64 in flight: at most 1.2).
//! 2. **A slow tool** (`sleepy`'s `sleep`, 50 ms) with 512 in flight
//!    through dispatch: throughput against what the pool admits (the
//!    places client calls may hold / the sleep), and every failure by
//!    error code (none expected).
//! 3. **Past the queue**: 512 calls of 300 ms started at once on an engine
//!    queueing at most 256: the calls past the places and the queue are
//!    refused with `unavailable`, and no other call fails.
//!
//! Exits 1 if a trivial or slow call failed, or the queue test saw another
//! failure than `unavailable`.

mod common;
use toolhost_test_support as support;

use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use toolhost::internal::dispatch::{DispatchContext, Dispatcher, Session};
use toolhost::internal::floor::{BareCall, BareComponent};
use toolhost::internal::registry::{RegisterComponent, Registry};
use toolhost::{Engine, EngineConfig, LoadOptions, LoadedComponent};

/// What a measured call goes through.
enum Target {
    Floor(BareComponent),
    Sandboxed(Arc<LoadedComponent>),
    Dispatch(Dispatcher, Box<DispatchContext>),
}

impl Target {
    fn name(&self) -> &'static str {
        match self {
            Target::Floor(_) => "floor",
            Target::Sandboxed(_) => "sandboxed",
            Target::Dispatch(..) => "dispatch",
        }
    }

    /// One call of `tool`: `Ok` or the error code.
    async fn call(&self, tool: &str, arguments: &(String, serde_json::Value)) -> Result<(), String> {
        match self {
            Target::Floor(bare) => match bare.call(tool, &arguments.0).await {
                BareCall::Answered { ok: true, .. } => Ok(()),
                BareCall::Answered { ok: false, .. } => Err("tool_error".into()),
                BareCall::Trapped(message) => Err(format!("trap: {message}")),
            },
            Target::Sandboxed(component) => component
                .call(tool, &arguments.0, &Default::default(), None, 0)
                .await
                .result
                .map(drop)
                .map_err(|e| e.code().to_string()),
            Target::Dispatch(dispatcher, ctx) => {
                let out = dispatcher.dispatch(tool, arguments.1.clone(), ctx).await;
                match out.error_code {
                    None => Ok(()),
                    Some(code) => Err(code.to_string()),
                }
            }
        }
    }
}

/// What a batch of calls did.
#[derive(Default)]
struct Tally {
    calls: usize,
    wall: Duration,
    errors: BTreeMap<String, usize>,
}

impl Tally {
    fn add(&mut self, other: Tally) {
        self.calls += other.calls;
        self.wall += other.wall;
        for (code, n) in other.errors {
            *self.errors.entry(code).or_default() += n;
        }
    }

    fn per_sec(&self) -> f64 {
        self.calls as f64 / self.wall.as_secs_f64().max(f64::MIN_POSITIVE)
    }

    fn failed(&self) -> usize {
        self.errors.values().sum()
    }
}

/// Makes `calls` calls of `tool` on `target`, `in_flight` at a time (as
/// that many tasks taking the next call as they finish one).
async fn run(
    target: &Arc<Target>,
    tool: &'static str,
    arguments: &Arc<(String, serde_json::Value)>,
    calls: usize,
    in_flight: usize,
) -> Tally {
    let next = Arc::new(AtomicUsize::new(0));
    let start = Instant::now();
    let mut tasks = tokio::task::JoinSet::new();
    for _ in 0..in_flight.min(calls) {
        let (next, target, arguments) = (Arc::clone(&next), Arc::clone(target), Arc::clone(arguments));
        tasks.spawn(async move {
            let mut errors = BTreeMap::<String, usize>::new();
            while next.fetch_add(1, Ordering::Relaxed) < calls {
                if let Err(code) = target.call(tool, &arguments).await {
                    *errors.entry(code).or_default() += 1;
                }
            }
            errors
        });
    }
    let mut tally = Tally {
        calls,
        ..Tally::default()
    };
    while let Some(errors) = tasks.join_next().await {
        for (code, n) in errors.expect("a call task panicked") {
            *tally.errors.entry(code).or_default() += n;
        }
    }
    tally.wall = start.elapsed();
    tally
}

fn dispatcher_of(components: &[&Arc<LoadedComponent>]) -> Dispatcher {
    let mut registry = Registry::new();
    for component in components {
        registry
            .register_component(component, &Default::default())
            .expect("registered");
    }
    Dispatcher::builder(registry).build().expect("a dispatcher")
}

fn context() -> DispatchContext {
    DispatchContext::new(Session::trusted("bench"))
}

async fn trivial_calls(engine: &Engine, problems: &mut Vec<String>) {
    let calls = common::env_or("CONCURRENCY_CALLS", 6000);
    let rounds = common::env_or("CONCURRENCY_ROUNDS", 3);
    let hello = engine
        .load(support::plugin_bytes("hello"), LoadOptions::default())
        .await
        .expect("hello loads");
    let floor = Arc::new(Target::Floor(BareComponent::new(&hello).expect("a floor")));
    let sandboxed = Arc::new(Target::Sandboxed(Arc::clone(&hello)));
    let dispatch = Arc::new(Target::Dispatch(dispatcher_of(&[&hello]), Box::new(context())));
    let arguments = Arc::new((
        r#"{"name":"Ada"}"#.to_string(),
        serde_json::json!({"name": "Ada"}),
    ));
    let pool = engine.config().max_concurrent_instances as usize;
    println!(
        "## trivial calls (hello greet): {calls} calls per round, {rounds} rounds per target, alternating"
    );
    println!(
        "| in flight | floor calls/s | sandboxed calls/s | dispatch calls/s | floor / sandboxed | floor / dispatch |"
    );
    println!("|---:|---:|---:|---:|---:|---:|");
    let levels: Vec<usize> = common::env_list("CONCURRENCY_LEVELS", &[1, 8, 64, 512]);
    for in_flight in levels {
        let targets = [&floor, &sandboxed, &dispatch];
        // A warm-up round each (the pool's slots, the allocator).
        for target in targets {
            run(target, "greet", &arguments, calls / 4, in_flight).await;
        }
        let mut tallies: [Tally; 3] = Default::default();
        for _ in 0..rounds {
            for (target, tally) in targets.iter().zip(&mut tallies) {
                let limit = if matches!(***target, Target::Floor(_)) {
                    in_flight.min(pool)
                } else {
                    in_flight
                };
                tally.add(run(target, "greet", &arguments, calls, limit).await);
            }
        }
        for (target, tally) in targets.iter().zip(&tallies) {
            if tally.failed() > 0 {
                problems.push(format!(
                    "{} at {in_flight} in flight: {} of {} calls failed: {:?}",
                    target.name(),
                    tally.failed(),
                    tally.calls,
                    tally.errors
                ));
            }
        }
        let [f, s, d] = tallies.map(|t| t.per_sec());
        println!(
            "| {in_flight} | {f:.0} | {s:.0} | {d:.0} | {:.2} | {:.2} |",
            f / s,
            f / d
        );
    }
}

/// `sleepy`'s `sleep` through dispatch on an engine made from `config`
/// (with the shared compile cache), its arguments for a sleep of
/// `sleep_ms`, and the engine's pool size.
async fn sleepy_target(
    cache: &std::path::Path,
    config: EngineConfig,
    sleep_ms: u64,
) -> (Arc<Target>, Arc<(String, serde_json::Value)>, usize) {
    let engine = Engine::new(EngineConfig {
        cache_dir: Some(cache.into()),
        ..config
    })
    .expect("an engine");
    let sleepy = engine
        .load(support::plugin_bytes("sleepy"), LoadOptions::default())
        .await
        .expect("sleepy loads");
    let dispatch = Arc::new(Target::Dispatch(dispatcher_of(&[&sleepy]), Box::new(context())));
    let arguments = Arc::new((
        format!(r#"{{"ms":{sleep_ms}}}"#),
        serde_json::json!({ "ms": sleep_ms }),
    ));
    (
        dispatch,
        arguments,
        engine.config().max_concurrent_instances as usize,
    )
}

async fn slow_calls(cache: &std::path::Path, problems: &mut Vec<String>) {
    const SLEEP_MS: u64 = 50;
    const IN_FLIGHT: usize = 512;
    let (dispatch, arguments, pool) = sleepy_target(cache, EngineConfig::default(), SLEEP_MS).await;
    // Client calls hold at most three quarters of the places (the rest are
    // kept for nested calls: see toolhost_runtime::gate).
    let places = pool - pool / 4;
    let calls = IN_FLIGHT * 4;
    let tally = run(&dispatch, "sleep", &arguments, calls, IN_FLIGHT).await;
    let ceiling = places as f64 / (SLEEP_MS as f64 / 1e3);
    println!();
    println!(
        "## slow tool (sleepy sleep {SLEEP_MS} ms), {IN_FLIGHT} in flight, {calls} calls through dispatch"
    );
    println!(
        "| places for client calls | ceiling (places / sleep) calls/s | measured calls/s | measured / ceiling | failed |"
    );
    println!("|---:|---:|---:|---:|---:|");
    println!(
        "| {places} of {pool} | {ceiling:.0} | {:.0} | {:.2} | {} {:?} |",
        tally.per_sec(),
        tally.per_sec() / ceiling,
        tally.failed(),
        tally.errors
    );
    if tally.failed() > 0 {
        problems.push(format!("slow tool: calls failed: {:?}", tally.errors));
    }
}

async fn past_the_queue(cache: &std::path::Path, problems: &mut Vec<String>) {
    const SLEEP_MS: u64 = 300;
    const STARTED: usize = 512;
    const MAX_WAITING: usize = 256;
    let config = EngineConfig {
        max_waiting_calls: MAX_WAITING,
        ..EngineConfig::default()
    };
    let (dispatch, arguments, pool) = sleepy_target(cache, config, SLEEP_MS).await;
    let places = pool - pool / 4;
    // One call per task: all started at once.
    let tally = run(&dispatch, "sleep", &arguments, STARTED, STARTED).await;
    let refused = tally.errors.get("unavailable").copied().unwrap_or(0);
    let others = tally.failed() - refused;
    println!();
    println!(
        "## past the queue: {STARTED} sleeps of {SLEEP_MS} ms at once, {places} places, max_waiting_calls {MAX_WAITING}"
    );
    println!("| ran | refused (`unavailable`) | expected refused | other failures | wall ms |");
    println!("|---:|---:|---:|---:|---:|");
    println!(
        "| {} | {refused} | {} | {others} | {:.0} |",
        STARTED - tally.failed(),
        STARTED - places - MAX_WAITING,
        tally.wall.as_secs_f64() * 1e3
    );
    if others > 0 {
        problems.push(format!(
            "past the queue: failures other than unavailable: {:?}",
            tally.errors
        ));
    }
}

fn main() {
    // `cargo bench` passes `--bench`; `cargo test --benches` too: run only
    // for a real benchmark run.
    if !std::env::args().any(|a| a == "--bench") {
        return;
    }
    let threads = std::thread::available_parallelism().map_or(1, usize::from);
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(threads)
        .enable_all()
        .build()
        .expect("a runtime");
    let cache = tempfile::tempdir().expect("a cache folder");
    let mut problems = Vec::new();
    rt.block_on(async {
        let engine = Engine::new(EngineConfig {
            cache_dir: Some(cache.path().into()),
            ..EngineConfig::default()
        })
        .expect("an engine");
        println!(
            "{threads} worker threads; pool of {} instances",
            engine.config().max_concurrent_instances
        );
        println!();
        trivial_calls(&engine, &mut problems).await;
        drop(engine);
        slow_calls(cache.path(), &mut problems).await;
        past_the_queue(cache.path(), &mut problems).await;
    });
    if !problems.is_empty() {
        for problem in &problems {
            eprintln!("concurrency: {problem}");
        }
        std::process::exit(1);
    }
}
