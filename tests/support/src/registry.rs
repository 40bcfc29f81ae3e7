//! Built-in tools and helpers shared by the registry, toolset, dispatch and
//! lazy-mode tests, toolhost-core's and the workspace's.

use std::collections::BTreeSet;

use serde_json::{Value, json};
use toolhost_core::dispatch::{DispatchContext, Dispatcher, Session};
use toolhost_core::registry::{FnTool, Registration, Registry, Tool, ToolOutput, ToolSpec};
use toolhost_core::{Error, ErrorCode};

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

/// Five built-ins in four toolsets (`http`, `time`, `files`, and `net`
/// with a public `ping`).
pub fn toolset_registry() -> Registry {
    let mut r = Registry::new();
    r.register(in_set("fetch", "http")).unwrap();
    r.register(in_set("now", "time")).unwrap();
    r.register(in_set("ls", "files")).unwrap();
    r.register(in_set("cat", "files")).unwrap();
    r.register_public(in_set("ping", "net")).unwrap();
    r
}

/// A set of names.
pub fn set(names: &[&str]) -> BTreeSet<String> {
    names.iter().map(|s| s.to_string()).collect()
}
