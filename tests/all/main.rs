//! toolhost's integration tests: one binary, one module per area. The
//! plugins they use are built by `support` before the first test needs them.

mod support;

mod cache;
mod cli;
mod limits;
mod loading;
mod mcp_client;
mod mcp_server;

use std::sync::{Arc, OnceLock};

use toolhost::{Engine, EngineConfig, LoadOptions, LoadedComponent};

/// One engine shared by the tests, with a compile cache under `target/`, so
/// each plugin is compiled once per machine rather than once per test.
pub fn engine() -> Engine {
    static ENGINE: OnceLock<Engine> = OnceLock::new();
    ENGINE
        .get_or_init(|| {
            let cache_dir = support::workspace_root()
                .join("target")
                .join("test-compile-cache");
            Engine::new(EngineConfig {
                cache_dir: Some(cache_dir),
                ..EngineConfig::default()
            })
            .expect("engine")
        })
        .clone()
}

/// Loads test plugin `name` into the shared engine.
pub async fn load(name: &str) -> Arc<LoadedComponent> {
    engine()
        .load_file(&support::plugin_path(name), LoadOptions::default())
        .await
        .unwrap_or_else(|e| panic!("loading {name}: {e}"))
}
