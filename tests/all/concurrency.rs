//! Calls past the instance pool's limit: they wait their turn in a
//! bounded queue, and past the queue they are refused with a clear
//! `unavailable`, never failed at random.

use std::sync::Arc;

use toolhost::{Engine, EngineConfig, ErrorCode, LoadOptions, LoadedComponent};

use crate::support;

async fn sleepy_on(max_concurrent_instances: u32, max_waiting_calls: usize) -> Arc<LoadedComponent> {
    let engine = Engine::new(EngineConfig {
        max_concurrent_instances,
        max_waiting_calls,
        cache_dir: Some(support::cache_dir()),
        ..EngineConfig::default()
    })
    .unwrap();
    engine
        .load_file(&support::plugin_path("sleepy"), LoadOptions::default())
        .await
        .unwrap()
}

/// Outcomes of `n` sleeps of `ms` started at once: `ok` or the error code
/// (with its message).
async fn sleep_all(sleepy: &Arc<LoadedComponent>, n: usize, ms: u64) -> Vec<Result<(), (ErrorCode, String)>> {
    let mut calls = tokio::task::JoinSet::new();
    for id in 0..n {
        let sleepy = Arc::clone(sleepy);
        calls.spawn(async move {
            let arguments = format!(r#"{{"ms":{ms}}}"#);
            let call = sleepy
                .call("sleep", &arguments, &Default::default(), None, id as u64)
                .await;
            call.result
                .map(drop)
                .map_err(|e| (e.code(), e.message().to_string()))
        });
    }
    calls.join_all().await
}

/// Regression: with every instance of the pool in use, the next call
/// failed at once with wasmtime's allocation error.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn calls_past_the_pool_wait_their_turn() {
    let sleepy = sleepy_on(8, 1024).await;
    let outcomes = sleep_all(&sleepy, 512, 20).await;
    let failed: Vec<_> = outcomes.iter().filter_map(|o| o.as_ref().err()).collect();
    assert!(
        failed.is_empty(),
        "{} of 512 failed, e.g. {:?}",
        failed.len(),
        failed.first()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn past_the_queue_calls_are_refused_with_a_clear_error() {
    // Two places, four waiting: of twenty long calls started at once, at
    // most six get in; the others are refused at once.
    let sleepy = sleepy_on(2, 4).await;
    let outcomes = sleep_all(&sleepy, 20, 1500).await;
    let ok = outcomes.iter().filter(|o| o.is_ok()).count();
    assert!((2..=6 + 2).contains(&ok), "{ok} calls ran: {outcomes:?}");
    for outcome in &outcomes {
        if let Err((code, message)) = outcome {
            assert_eq!(*code, ErrorCode::Unavailable, "{message}");
            assert!(message.contains("4 calls are waiting"), "{message}");
        }
    }
}

/// Regression: a call that finds a free place and finishes at once sets up
/// no timer and no waiter, so it touched no tokio resource, and a loop of
/// such calls gave its thread back to the runtime only when an epoch tick
/// happened to fall inside guest code: every other task on the thread
/// (the rest of the host) waited. With no epoch tick in the way (one an
/// hour), the loop and the task that stops it share one thread here.
#[test]
fn a_loop_of_quick_calls_lets_the_other_tasks_run() {
    use std::sync::atomic::{AtomicBool, Ordering};

    use serde_json::json;
    use toolhost::internal::dispatch::{DispatchContext, Dispatcher, Session};
    use toolhost::internal::registry::{RegisterComponent, Registry};

    let (done, finished) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        runtime.block_on(async {
            let engine = Engine::new(EngineConfig {
                cache_dir: Some(support::cache_dir()),
                epoch_tick: std::time::Duration::from_secs(3600),
                ..EngineConfig::default()
            })
            .unwrap();
            let hello = engine
                .load_file(&support::plugin_path("hello"), LoadOptions::default())
                .await
                .unwrap();
            let mut registry = Registry::new();
            registry.register_component(&hello, &Default::default()).unwrap();
            let dispatcher = Dispatcher::builder(registry).build().unwrap();
            let stop = Arc::new(AtomicBool::new(false));
            let looping = {
                let stop = Arc::clone(&stop);
                tokio::spawn(async move {
                    let ctx = DispatchContext::new(Session::trusted("loop"));
                    let mut calls = 0_u64;
                    while !stop.load(Ordering::Acquire) {
                        let result = dispatcher.dispatch("greet", json!({"name": "Ada"}), &ctx).await;
                        assert_eq!(result.json(), "Hello, Ada!", "{}", result.content);
                        let direct = hello
                            .call("greet", r#"{"name":"Ada"}"#, &Default::default(), None, 0)
                            .await;
                        assert!(direct.result.is_ok(), "{:?}", direct.result);
                        calls += 2;
                    }
                    calls
                })
            };
            // Runs only when the loop gives the thread back.
            tokio::spawn(async move { stop.store(true, Ordering::Release) })
                .await
                .unwrap();
            done.send(looping.await.unwrap()).unwrap();
        });
    });
    let calls = finished
        .recv_timeout(std::time::Duration::from_secs(120))
        .expect("the task that stops the loop never ran: the loop of calls kept the thread");
    assert!(calls > 0, "the loop made no call before it was stopped");
}

/// One cap for every stack size: calls with three different stack limits
/// (each served by an engine and an instance pool of its own) together
/// hold at most `max_concurrent_instances` instances; once each size had
/// its own count, three times the cap ran.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_instance_cap_holds_across_stack_sizes() {
    let sleepy = sleepy_on(2, 1024).await;
    let engine = sleepy.engine().clone();
    let sampling = Arc::new(std::sync::atomic::AtomicBool::new(true));
    let sampler = {
        let (engine, sampling) = (engine.clone(), Arc::clone(&sampling));
        tokio::spawn(async move {
            let (mut most, mut waited) = (0, 0);
            while sampling.load(std::sync::atomic::Ordering::Relaxed) {
                let (waiting, in_use) = engine.instance_queue();
                most = most.max(in_use);
                waited = waited.max(waiting);
                tokio::time::sleep(std::time::Duration::from_millis(2)).await;
            }
            (most, waited)
        })
    };
    let mut calls = tokio::task::JoinSet::new();
    for (i, stack_kb) in [None, Some(512), Some(2048)]
        .into_iter()
        .cycle()
        .take(12)
        .enumerate()
    {
        let sleepy = Arc::clone(&sleepy);
        calls.spawn(async move {
            let limits = toolhost::LimitsOverride {
                wasm_stack_kb: stack_kb,
                ..Default::default()
            };
            sleepy
                .call("sleep", r#"{"ms":150}"#, &limits, None, i as u64)
                .await
                .result
                .map(drop)
        });
    }
    for outcome in calls.join_all().await {
        outcome.unwrap();
    }
    sampling.store(false, std::sync::atomic::Ordering::Relaxed);
    let (most, waited) = sampler.await.unwrap();
    assert_eq!(engine.stack_tiers().len(), 2, "the calls used three stack sizes");
    assert!(most <= 2, "{most} instances at once, past the cap of 2");
    assert!(
        waited > 0,
        "no call ever waited: the test did not press on the cap"
    );
}
