//! Load and call costs of a component, each beside a bare-wasmtime baseline
//! measured in the same run, with the same engine configuration.
//!
//! `cargo bench -p toolhost --bench component`
//!
//! - `load/cold`: toolhost compiling `hello` (no cache) vs. `bare/compile`,
//!   wasmtime's `Component::new` alone;
//! - `load/warm`: toolhost loading `hello` from its compile cache (read,
//!   integrity check, deserialize, world and import checks, `InstancePre`,
//!   and the `list-tools` call) vs. `bare/deserialize`, wasmtime's
//!   `Component::deserialize` of bytes already in memory;
//! - `call/toolhost`: one `greet` call in a fresh sandboxed instance (store,
//!   limiter, fuel, epoch deadline, WASI context with capped pipes, output
//!   checks) vs. `call/bare`: the floor (`toolhost::internal::floor::BareComponent`),
//!   a bare `InstancePre::instantiate_async` of the same compiled code plus
//!   the same call, with a minimal WASI store;
//! - `call/dispatch`: the same call through the whole dispatch pipeline
//!   (lookup, toolsets, schema validation, execution task, event);
//! - `call/native_dispatch`: the same greeting as a native built-in (an
//!   `FnTool`) through the same pipeline: what the pipeline costs without
//!   a sandbox;
//! - `nested/*`: a plugin (`caller`) making 8 nested calls through dispatch,
//!   at once with `tools.call-many` (`fan_out`) vs one after the other with
//!   `tools.call` (`chain`): 8 `greet` calls (the cost of starting calls
//!   concurrently) and 8 `sleep`s of 20 ms (the overlap: the slowest vs the
//!   sum).

use toolhost_test_support as support;

use criterion::{Criterion, criterion_group, criterion_main};
use serde_json::json;
use toolhost::internal::floor::{self, BareCall, BareComponent};
use toolhost::internal::registry::{FnTool, RegisterComponent, ToolOutput, ToolSpec};
use toolhost::{Engine, EngineConfig, LoadOptions};

fn benches(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    let bytes = support::plugin_bytes("hello");
    let cache_dir = tempfile::tempdir().unwrap();
    let uncached = Engine::new(EngineConfig::default()).unwrap();
    let cached = Engine::new(EngineConfig {
        cache_dir: Some(cache_dir.path().into()),
        ..Default::default()
    })
    .unwrap();
    rt.block_on(cached.load(bytes.clone(), LoadOptions::default()))
        .unwrap();

    let mut load = c.benchmark_group("load");
    load.sample_size(10);
    load.bench_function("bare/compile", |b| {
        b.iter(|| floor::compile(uncached.wasmtime(), &bytes).unwrap())
    });
    load.bench_function("cold", |b| {
        b.iter(|| {
            rt.block_on(uncached.load(bytes.clone(), LoadOptions::default()))
                .unwrap()
        })
    });
    let serialized = floor::serialize(&floor::compile(cached.wasmtime(), &bytes).unwrap()).unwrap();
    load.bench_function("bare/deserialize", |b| {
        b.iter(|| floor::deserialize(cached.wasmtime(), &serialized).unwrap())
    });
    load.bench_function("warm", |b| {
        b.iter(|| {
            rt.block_on(cached.load(bytes.clone(), LoadOptions::default()))
                .unwrap()
        })
    });
    load.finish();

    let hello = rt
        .block_on(cached.load(bytes.clone(), LoadOptions::default()))
        .unwrap();
    let bare = BareComponent::new(&hello).unwrap();
    let args = r#"{"name":"Ada"}"#;

    let mut call = c.benchmark_group("call");
    call.bench_function("bare", |b| {
        b.iter(|| {
            rt.block_on(async {
                let out = bare.call("greet", args).await;
                assert!(matches!(out, BareCall::Answered { ok: true, .. }), "{out:?}");
            })
        })
    });
    call.bench_function("toolhost", |b| {
        b.iter(|| {
            rt.block_on(async {
                let out = hello.call("greet", args, &Default::default(), None, 1).await;
                assert!(out.result.is_ok());
            })
        })
    });
    let mut registry = toolhost::internal::registry::Registry::new();
    registry.register_component(&hello, &Default::default()).unwrap();
    // The same tool written in Rust and registered natively: the pipeline
    // without a sandbox.
    registry
        .register(FnTool::new(
            ToolSpec::new(
                "greet_native",
                "Greets someone, natively.",
                json!({
                    "type": "object",
                    "properties": {"name": {"type": "string"}},
                    "required": ["name"],
                    "additionalProperties": false
                }),
            ),
            |arguments, _| async move {
                let name = arguments["name"].as_str().unwrap_or_default();
                Ok(ToolOutput::json(&json!(format!("Hello, {name}!"))))
            },
        ))
        .unwrap();
    let dispatcher = toolhost::internal::dispatch::Dispatcher::builder(registry)
        .build()
        .unwrap();
    let ctx = toolhost::internal::dispatch::DispatchContext::new(
        toolhost::internal::dispatch::Session::trusted("bench"),
    );
    let json_args = json!({"name": "Ada"});
    for (what, tool) in [("dispatch", "greet"), ("native_dispatch", "greet_native")] {
        call.bench_function(what, |b| {
            b.iter(|| {
                rt.block_on(async {
                    let out = dispatcher.dispatch(tool, json_args.clone(), &ctx).await;
                    assert!(!out.is_error(), "{}", out.content);
                })
            })
        });
    }
    call.finish();

    let grants = toolhost::internal::capabilities::Grants {
        tools: vec!["greet".into(), "sleep".into()],
        ..Default::default()
    };
    let caller_bytes = support::plugin_bytes("caller");
    let sleepy_bytes = support::plugin_bytes("sleepy");
    let (caller, sleepy) = rt.block_on(async {
        let options = LoadOptions {
            grants,
            ..Default::default()
        };
        (
            cached.load(caller_bytes, options).await.unwrap(),
            cached.load(sleepy_bytes, LoadOptions::default()).await.unwrap(),
        )
    });
    let mut registry = toolhost::internal::registry::Registry::new();
    for component in [&hello, &caller, &sleepy] {
        registry
            .register_component(component, &Default::default())
            .unwrap();
    }
    let dispatcher = toolhost::internal::dispatch::Dispatcher::builder(registry)
        .build()
        .unwrap();
    let eight = |name: &str, arguments: serde_json::Value| {
        let calls = vec![json!({"name": name, "arguments": arguments}); 8];
        json!({ "calls": calls })
    };
    let mut nested = c.benchmark_group("nested");
    nested.sample_size(20);
    for (what, calls) in [
        ("greet", eight("greet", json!({"name": "Ada"}))),
        ("sleep20ms", eight("sleep", json!({"ms": 20}))),
    ] {
        for tool in ["fan_out", "chain"] {
            nested.bench_function(format!("{tool}/8x{what}"), |b| {
                b.iter(|| {
                    rt.block_on(async {
                        let out = dispatcher.dispatch(tool, calls.clone(), &ctx).await;
                        assert!(
                            !out.is_error() && !out.content.contains("error"),
                            "{}",
                            out.content
                        );
                    })
                })
            });
        }
    }
    nested.finish();
}

criterion_group!(component, benches);
criterion_main!(component);
