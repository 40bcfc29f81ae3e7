//! Counting the instructions of a call, path by path: `N` calls of the
//! `hello` plugin's `greet`, one at a time on a single-thread runtime,
//! through one of
//!
//! - `floor`: a bare wasmtime instance of the same compiled code
//!   ([`BareComponent`]);
//! - `sandboxed`: [`LoadedComponent::call`](toolhost::LoadedComponent::call);
//! - `dispatch`: the whole pipeline ([`Dispatcher::dispatch`]).
//!
//! Under `valgrind --tool=callgrind`, instruction counts are repeatable
//! whatever else the machine is doing, unlike times: run each path with
//! `N` calls and with none, and the difference over `N` is a call's cost.
//!
//! ```text
//! cargo build --release -p toolhost --example call_count
//! for path in floor sandboxed dispatch; do for n in 0 2000; do
//!   valgrind --tool=callgrind --callgrind-out-file=cg.$path.$n \
//!     target/release/examples/call_count $path $n 2>&1 | grep Collected
//! done; done
//! ```
//!
//! Under valgrind the pooling allocator cannot reserve its address space
//! (even this small pool, 4 instances of 64 MiB), and the engine falls
//! back to on-demand allocation, for the floor and toolhost's paths alike
//! (`Engine::is_pooling` is false there, true natively): the counts compare
//! the paths without the pool's own costs, which the time benchmarks
//! (`cargo bench --bench component`) include. Compiled code is cached in
//! `target/call_count-cache`, so that a run under valgrind does not
//! compile.

use std::sync::Arc;

use serde_json::json;
use toolhost::internal::dispatch::{DispatchContext, Dispatcher, Session};
use toolhost::internal::floor::{BareCall, BareComponent};
use toolhost::internal::registry::{RegisterComponent, Registry};
use toolhost::{Engine, EngineConfig, LoadOptions};

const USAGE: &str = "usage: call_count floor|sandboxed|dispatch N";

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let path = args.next().ok_or(USAGE)?;
    let calls: usize = args.next().ok_or(USAGE)?.parse()?;
    if !["floor", "sandboxed", "dispatch"].contains(&path.as_str()) {
        return Err(USAGE.into());
    }
    let bytes = std::fs::read("target/plugins/wasm32-wasip2/plugin/hello.wasm")
        .map_err(|e| format!("hello.wasm ({e}): build the plugins with tests/setup or plugins/build"))?;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let engine = Engine::new(EngineConfig {
        max_concurrent_instances: 4,
        max_memory_bytes: 64 << 20,
        cache_dir: Some("target/call_count-cache".into()),
        ..EngineConfig::default()
    })?;
    let hello = Arc::new(runtime.block_on(engine.load(bytes, LoadOptions::default()))?);
    let bare = BareComponent::new(&hello)?;
    let mut registry = Registry::new();
    registry.register_component(&hello, &Default::default())?;
    let dispatcher = Dispatcher::builder(registry).build()?;
    let ctx = DispatchContext::new(Session::trusted("count"));
    let arguments = json!({"name": "world"});
    let text = arguments.to_string();
    runtime.block_on(async {
        // Every path once, whichever is counted: the set-up is the same in
        // a run of N calls and in a run of none.
        let floor = bare.call("greet", &text).await;
        let sandboxed = hello.call("greet", &text, &Default::default(), None, 0).await;
        let dispatched = dispatcher.dispatch("greet", arguments.clone(), &ctx).await;
        if !matches!(floor, BareCall::Answered { ok: true, .. }) {
            return Err(format!("the floor's call failed: {floor:?}").into());
        }
        sandboxed.result?;
        if let Some(error) = dispatched.error {
            return Err(error.into());
        }
        for _ in 0..calls {
            match path.as_str() {
                "floor" => {
                    std::hint::black_box(bare.call("greet", &text).await);
                }
                "sandboxed" => {
                    let overrides = Default::default();
                    let called = hello.call("greet", &text, &overrides, None, 0).await;
                    std::hint::black_box(called.result.is_ok());
                }
                _ => {
                    let called = dispatcher.dispatch("greet", arguments.clone(), &ctx).await;
                    std::hint::black_box(called.error_code);
                }
            }
        }
        Ok(())
    })
}
