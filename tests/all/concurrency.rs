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
