//! Helpers shared by the registry, toolset, dispatch and lazy-mode tests:
//! the built-in tools of toolhost-core's own tests, and components.

use std::sync::{Arc, OnceLock};

use toolhost::internal::registry::{ComponentRegistration, RegisterComponent, Registry};
use toolhost::{Engine, EngineConfig, LoadedComponent};

use crate::support;

pub use toolhost_test_support::registry::*;

/// One engine for every test (its epoch ticker is a thread, not a task).
pub fn engine() -> &'static Engine {
    static ENGINE: OnceLock<Engine> = OnceLock::new();
    ENGINE.get_or_init(|| Engine::new(EngineConfig::default()).expect("engine"))
}

/// Loads plugin `name` (building the plugins first).
pub async fn component(name: &str) -> Arc<LoadedComponent> {
    engine()
        .load_file(&support::plugin_path(name), Default::default())
        .await
        .expect("load plugin")
}

/// Registers component `plugin` with default options.
pub async fn with_component(registry: &mut Registry, plugin: &str) -> Arc<LoadedComponent> {
    let c = component(plugin).await;
    registry
        .register_component(&c, &ComponentRegistration::default())
        .expect("register component");
    c
}
