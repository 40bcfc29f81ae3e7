//! Codemode's costs, each beside a baseline measured in the same run.
//!
//! `cargo bench -p toolhost --bench codemode`
//!
//! - `startup/script`: `run_tools_script` with the script `1` through the
//!   dispatch pipeline (a fresh instance of the Monty component, parsing,
//!   the first statement, the report) vs `startup/trivial_wasm_call`: one
//!   `greet` call of `hello` through the same pipeline;
//! - `gather/*`: a script making one call of a tool that sleeps 50 ms
//!   (`one_call`), ten such calls with `asyncio.gather` (`ten_gathered`),
//!   and ten one after the other (`ten_sequential`).
//!
//! After criterion's groups, a summary measures the same pairs again,
//! interleaved, and prints the medians and their ratios (the figures
//! BENCHMARKS.md quotes): gathered vs one call (target ≤ 1.5x), and start-up vs
//! the trivial call (target ≤ 100x).

use toolhost_test_support as support;

use std::time::{Duration, Instant};

use criterion::{Criterion, criterion_group, criterion_main};
use serde_json::{Value, json};
use toolhost::internal::codemode::{CodemodeConfig, RunToolsScript};
use toolhost::internal::dispatch::{DispatchContext, Dispatcher, Session};
use toolhost::internal::registry::{FnTool, RegisterComponent, Registry, ToolOutput, ToolSpec};
use toolhost::{Engine, EngineConfig, LoadOptions};

const ONE: &str = "await tools.nap()";
const GATHERED: &str = "import asyncio\nawait asyncio.gather(*[tools.nap() for _ in range(10)])";
const SEQUENTIAL: &str = "for _ in range(10):\n    await tools.nap()";

fn served(rt: &tokio::runtime::Runtime) -> Dispatcher {
    let engine = Engine::new(EngineConfig {
        cache_dir: Some(support::cache_dir()),
        ..EngineConfig::default()
    })
    .unwrap();
    rt.block_on(async {
        let mut registry = Registry::new();
        let hello = engine
            .load_file(&support::plugin_path("hello"), LoadOptions::default())
            .await
            .unwrap();
        registry.register_component(&hello, &Default::default()).unwrap();
        registry
            .register(FnTool::new(
                ToolSpec::new("nap", "Sleeps 50 ms.", json!({"type": "object"})),
                |_, _| async {
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    Ok(ToolOutput::json(&json!("rested")))
                },
            ))
            .unwrap();
        let config = CodemodeConfig {
            enabled: true,
            ..CodemodeConfig::default()
        };
        let tool = RunToolsScript::load(&engine, &support::plugin_path("codemode"), config)
            .await
            .unwrap();
        registry.register(tool.registration()).unwrap();
        Dispatcher::builder(registry).build().unwrap()
    })
}

fn script(dispatcher: &Dispatcher, ctx: &DispatchContext, rt: &tokio::runtime::Runtime, code: &str) {
    let out = rt.block_on(dispatcher.dispatch("run_tools_script", json!({"code": code}), ctx));
    assert!(
        !out.is_error() && out.json()["ok"] == Value::Bool(true),
        "{}",
        out.content
    );
}

fn greet(dispatcher: &Dispatcher, ctx: &DispatchContext, rt: &tokio::runtime::Runtime) {
    let out = rt.block_on(dispatcher.dispatch("greet", json!({"name": "Ada"}), ctx));
    assert!(!out.is_error(), "{}", out.content);
}

fn benches(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    let dispatcher = served(&rt);
    let ctx = DispatchContext::new(Session::trusted("bench"));

    let mut startup = c.benchmark_group("startup");
    startup.bench_function("trivial_wasm_call", |b| b.iter(|| greet(&dispatcher, &ctx, &rt)));
    startup.bench_function("script", |b| b.iter(|| script(&dispatcher, &ctx, &rt, "1")));
    startup.finish();

    let mut gather = c.benchmark_group("gather");
    gather.sample_size(10);
    for (name, code) in [
        ("one_call", ONE),
        ("ten_gathered", GATHERED),
        ("ten_sequential", SEQUENTIAL),
    ] {
        gather.bench_function(name, |b| b.iter(|| script(&dispatcher, &ctx, &rt, code)));
    }
    gather.finish();

    summary(&dispatcher, &ctx, &rt);
}

/// The medians of the pairs, measured interleaved in this run, and their
/// ratios.
fn summary(dispatcher: &Dispatcher, ctx: &DispatchContext, rt: &tokio::runtime::Runtime) {
    let time = |f: &dyn Fn()| {
        let started = Instant::now();
        f();
        started.elapsed()
    };
    let median = |mut v: Vec<Duration>| {
        v.sort();
        v[v.len() / 2]
    };
    let (mut trivial, mut start) = (Vec::new(), Vec::new());
    for _ in 0..200 {
        trivial.push(time(&|| greet(dispatcher, ctx, rt)));
        start.push(time(&|| script(dispatcher, ctx, rt, "1")));
    }
    let (mut one, mut gathered, mut sequential) = (Vec::new(), Vec::new(), Vec::new());
    for _ in 0..15 {
        one.push(time(&|| script(dispatcher, ctx, rt, ONE)));
        gathered.push(time(&|| script(dispatcher, ctx, rt, GATHERED)));
        sequential.push(time(&|| script(dispatcher, ctx, rt, SEQUENTIAL)));
    }
    let (trivial, start) = (median(trivial), median(start));
    let (one, gathered, sequential) = (median(one), median(gathered), median(sequential));
    let ratio = |a: Duration, b: Duration| a.as_secs_f64() / b.as_secs_f64();
    println!("\nsummary (medians, interleaved in this run):");
    println!(
        "  start-up: script `1` {start:?} vs trivial WASM call {trivial:?}: {:.1}x (target <= 100x)",
        ratio(start, trivial)
    );
    println!(
        "  gather: 10 x 50 ms gathered {gathered:?} vs one call {one:?}: {:.2}x (target <= 1.5x); sequential {sequential:?}: {:.2}x",
        ratio(gathered, one),
        ratio(sequential, one)
    );
}

criterion_group!(codemode, benches);
criterion_main!(codemode);
