//! The real cost of a plugin written in Python or JavaScript, beside the Rust
//! `hello` plugin in the same run: component size, cold load (compile), warm
//! load (from the compile cache), and one `greet` call in a fresh sandboxed
//! instance, as wall time and as the CPU time of the thread that ran it.
//!
//! `cargo bench -p toolhost --bench polyglot`
//!
//! A plain report rather than criterion: a cold load of the Python component
//! takes seconds, so it is timed a few times (`POLYGLOT_COLD_RUNS`, default
//! 3), warm loads 20 times and calls `POLYGLOT_CALLS` times (default 300,
//! after 20 unmeasured ones); medians are reported, and CPU time per call is
//! the calling thread's (`CLOCK_THREAD_CPUTIME_ID`; the
//! calls run on a current-thread runtime, so that thread does all of a
//! call's work: instantiation, the call, tearing the instance down), as are
//! the minor page faults per call (`getrusage(RUSAGE_THREAD)`).
//! `POLYGLOT_ONLY=python` measures only the rows whose name contains it; the
//! last column is then relative to the first row measured.

mod common;
use toolhost_test_support as support;

use std::time::{Duration, Instant};

use toolhost::{Engine, EngineConfig, LoadOptions};

/// CPU time the current thread has run (`CLOCK_THREAD_CPUTIME_ID`, exact to
/// the nanosecond, unlike `/proc`'s tick-grained counters).
fn thread_cpu() -> Duration {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid, writable timespec for the duration of the call;
    // CLOCK_THREAD_CPUTIME_ID is supported on every Linux the host runs on.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    assert_eq!(rc, 0, "clock_gettime(CLOCK_THREAD_CPUTIME_ID) failed");
    Duration::new(
        u64::try_from(ts.tv_sec).unwrap(),
        u32::try_from(ts.tv_nsec).unwrap(),
    )
}

/// Minor page faults the current thread has taken so far.
fn thread_faults() -> u64 {
    // SAFETY: an all-zero `rusage` is a valid value of this plain C struct.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: `usage` is valid and writable for the duration of the call.
    let rc = unsafe { libc::getrusage(libc::RUSAGE_THREAD, &mut usage) };
    assert_eq!(rc, 0, "getrusage(RUSAGE_THREAD) failed");
    u64::try_from(usage.ru_minflt).unwrap_or(0)
}

fn median(mut samples: Vec<Duration>) -> Duration {
    samples.sort();
    samples[samples.len() / 2]
}

/// A count from the environment: `default` when it is unset, does not
/// parse, or is 0.
fn env_count(name: &str, default: usize) -> usize {
    match common::env_or(name, default) {
        0 => default,
        n => n,
    }
}

struct Row {
    name: &'static str,
    size: usize,
    cold: Option<Duration>,
    warm: Duration,
    call_wall: Duration,
    call_cpu: Duration,
    call_faults: u64,
}

fn measure(rt: &tokio::runtime::Runtime, name: &'static str, bytes: Vec<u8>) -> Row {
    let cold_runs = std::env::var("POLYGLOT_COLD_RUNS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(3);
    let calls = env_count("POLYGLOT_CALLS", 300);
    let uncached = Engine::new(EngineConfig::default()).unwrap();
    let cold: Vec<Duration> = (0..cold_runs)
        .map(|_| {
            let start = Instant::now();
            rt.block_on(uncached.load(bytes.clone(), LoadOptions::default()))
                .unwrap_or_else(|e| panic!("loading {name}: {e}"));
            start.elapsed()
        })
        .collect();
    let cold = (!cold.is_empty()).then(|| median(cold));
    drop(uncached);

    let cache = tempfile::tempdir().unwrap();
    let cached = Engine::new(EngineConfig {
        cache_dir: Some(cache.path().into()),
        ..Default::default()
    })
    .unwrap();
    rt.block_on(cached.load(bytes.clone(), LoadOptions::default()))
        .unwrap();
    let warm = median(
        (0..20)
            .map(|_| {
                let start = Instant::now();
                rt.block_on(cached.load(bytes.clone(), LoadOptions::default()))
                    .unwrap();
                start.elapsed()
            })
            .collect(),
    );

    let component = rt
        .block_on(cached.load(bytes.clone(), LoadOptions::default()))
        .unwrap();
    let call = || {
        rt.block_on(async {
            let out = component
                .call("greet", r#"{"name":"Ada"}"#, &Default::default(), None, 1)
                .await;
            assert!(out.result.is_ok(), "{name}: greet failed: {:?}", out.result.err());
        })
    };
    for _ in 0..20 {
        call();
    }
    let mut walls = Vec::with_capacity(calls);
    let cpu_before = thread_cpu();
    let faults_before = thread_faults();
    for _ in 0..calls {
        let start = Instant::now();
        call();
        walls.push(start.elapsed());
    }
    let call_cpu = (thread_cpu() - cpu_before) / u32::try_from(calls).unwrap();
    let call_faults = (thread_faults() - faults_before) / calls as u64;
    Row {
        name,
        size: bytes.len(),
        cold,
        warm,
        call_wall: median(walls),
        call_cpu,
        call_faults,
    }
}

fn main() {
    // `cargo bench` passes `--bench`; a filter argument is not supported.
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let only = std::env::var("POLYGLOT_ONLY").unwrap_or_default();
    let plugins: [(&'static str, Vec<u8>); 3] = [
        ("rust (hello)", support::plugin_bytes("hello")),
        (
            "python (examples/python-plugin)",
            std::fs::read(support::polyglot(&support::PYTHON_EXAMPLE)).unwrap(),
        ),
        (
            "javascript (examples/js-plugin)",
            std::fs::read(support::polyglot(&support::JS_EXAMPLE)).unwrap(),
        ),
    ];
    let rows: Vec<Row> = plugins
        .into_iter()
        .filter(|(name, _)| name.contains(&only))
        .map(|(name, bytes)| measure(&rt, name, bytes))
        .collect();
    let base = &rows[0];
    println!(
        "| plugin | size | cold load | warm load | call (wall, median) | call (CPU, mean) | page faults per call | CPU per call vs Rust |"
    );
    println!("|---|---|---|---|---|---|---|---|");
    for row in &rows {
        println!(
            "| {} | {:.2} MB | {} | {:.2} ms | {:.0} µs | {:.1} µs | {} | {:.1}x |",
            row.name,
            row.size as f64 / 1e6,
            row.cold.map_or("not measured".into(), |d| format!(
                "{:.0} ms",
                d.as_secs_f64() * 1e3
            )),
            row.warm.as_secs_f64() * 1e3,
            row.call_wall.as_secs_f64() * 1e6,
            row.call_cpu.as_secs_f64() * 1e6,
            row.call_faults,
            row.call_cpu.as_secs_f64() / base.call_cpu.as_secs_f64(),
        );
    }
}
