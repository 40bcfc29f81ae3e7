//! The compilation cache: hits, and corrupt or foreign entries recompiled.

use toolhost::internal::cache::CacheOutcome;
use toolhost::{ComponentHash, Engine, EngineConfig, LoadOptions};

use crate::support;

fn engine_with_cache(dir: &std::path::Path) -> Engine {
    Engine::new(EngineConfig {
        cache_dir: Some(dir.to_path_buf()),
        ..EngineConfig::default()
    })
    .unwrap()
}

async fn load_outcome(engine: &Engine) -> CacheOutcome {
    let hello = engine
        .load(support::plugin_bytes("hello"), LoadOptions::default())
        .await
        .unwrap();
    let got = hello
        .call("greet", r#"{"name":"c"}"#, &Default::default(), None, 1)
        .await
        .result
        .unwrap();
    assert_eq!(got.content, r#""Hello, c!""#);
    hello.cache_outcome()
}

fn entry_path(dir: &std::path::Path) -> std::path::PathBuf {
    let hash = ComponentHash::of(&support::plugin_bytes("hello"));
    let mut found = Vec::new();
    for sub in std::fs::read_dir(dir).unwrap() {
        let path = sub.unwrap().path().join(format!("{}.cwasm", hash.hex()));
        if path.exists() {
            found.push(path);
        }
    }
    assert_eq!(found.len(), 1, "one entry for hello: {found:?}");
    found.pop().unwrap()
}

#[tokio::test]
async fn a_second_load_hits_the_cache() {
    let dir = tempfile::tempdir().unwrap();
    let engine = engine_with_cache(dir.path());
    assert_eq!(load_outcome(&engine).await, CacheOutcome::Compiled);
    assert_eq!(load_outcome(&engine).await, CacheOutcome::Hit);
    // A new engine with the same configuration reads the same entry.
    assert_eq!(
        load_outcome(&engine_with_cache(dir.path())).await,
        CacheOutcome::Hit
    );
}

#[tokio::test]
async fn a_corrupt_entry_is_recompiled() {
    let dir = tempfile::tempdir().unwrap();
    let engine = engine_with_cache(dir.path());
    load_outcome(&engine).await;
    let path = entry_path(dir.path());
    let mut bytes = std::fs::read(&path).unwrap();
    let middle = bytes.len() / 2;
    bytes[middle] ^= 0xff;
    std::fs::write(&path, &bytes).unwrap();
    assert_eq!(load_outcome(&engine).await, CacheOutcome::Recompiled);
    assert_eq!(
        load_outcome(&engine).await,
        CacheOutcome::Hit,
        "the entry was rewritten"
    );

    std::fs::write(&path, b"short").unwrap();
    assert_eq!(load_outcome(&engine).await, CacheOutcome::Recompiled);
}

#[tokio::test]
async fn an_entry_of_another_component_is_not_trusted() {
    let dir = tempfile::tempdir().unwrap();
    let engine = engine_with_cache(dir.path());
    load_outcome(&engine).await;
    let path = entry_path(dir.path());
    // Put the counter plugin's valid entry in hello's place.
    let counter = engine
        .load(support::plugin_bytes("counter"), LoadOptions::default())
        .await
        .unwrap();
    let counter_entry = path.with_file_name(format!("{}.cwasm", counter.hash().hex()));
    std::fs::copy(&counter_entry, &path).unwrap();
    assert_eq!(load_outcome(&engine).await, CacheOutcome::Recompiled);
}
