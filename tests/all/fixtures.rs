//! Built-in tools and helpers shared by the registry, toolset, dispatch and
//! lazy-mode tests.

use std::sync::{Arc, OnceLock};

use serde_json::{Value, json};
use toolhost::dispatch::{DispatchContext, Dispatcher, Session};
use toolhost::registry::{ComponentRegistration, FnTool, Registration, Registry, Tool, ToolOutput, ToolSpec};
use toolhost::{Engine, EngineConfig, Error, ErrorCode, LoadedComponent};

use crate::support;
use toolhost::registry::RegisterComponent;

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

/// An object schema with the given properties, all required.
pub fn object(props: Value) -> Value {
    let required: Vec<String> = props
        .as_object()
        .map(|m| m.keys().cloned().collect())
        .unwrap_or_default();
    json!({"type": "object", "properties": props, "required": required})
}

/// A tool that returns its arguments.
pub fn echo(name: &str) -> impl Tool + use<> {
    echo_with(name, &format!("Echoes {name}."), json!({"type": "object"}))
}

/// An echo tool with a description and parameter schema.
pub fn echo_with(name: &str, description: &str, parameters: Value) -> impl Tool + use<> {
    FnTool::new(
        ToolSpec::new(name, description, parameters),
        |args, _| async move { Ok(ToolOutput::json(&args)) },
    )
}

/// A tool that always fails with `code` and `message`.
pub fn failing(name: &str, code: ErrorCode, message: &'static str) -> impl Tool + use<> {
    FnTool::new(
        ToolSpec::new(name, "Fails.", json!({"type": "object"})),
        move |_, _| async move { Err(Error::new(code, message)) },
    )
}

/// A registration of an echo tool in `toolset`.
pub fn in_set(name: &str, toolset: &str) -> Registration {
    Registration::new(echo(name)).toolset(toolset)
}

/// Registers component `plugin` with default options.
pub async fn with_component(registry: &mut Registry, plugin: &str) -> Arc<LoadedComponent> {
    let c = component(plugin).await;
    registry
        .register_component(&c, &ComponentRegistration::default())
        .expect("register component");
    c
}

/// A trusted context.
pub fn trusted() -> DispatchContext {
    DispatchContext::new(Session::trusted("test"))
}

/// A dispatcher with default settings.
pub fn dispatcher(registry: Registry) -> Dispatcher {
    Dispatcher::builder(registry).build().expect("dispatcher")
}

/// The names in OpenAI definitions.
pub fn def_names(defs: &[Value]) -> Vec<String> {
    defs.iter()
        .map(|d| d["function"]["name"].as_str().expect("name").to_string())
        .collect()
}
