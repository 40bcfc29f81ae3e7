//! Embedding toolhost in a host application: a built-in of its own, a
//! host-level tool it intercepts, a WebAssembly component, call events and
//! a concurrent batch.
//!
//! Run with `cargo run -p toolhost --example embed [path/to/hello.wasm]`
//! (default: the test build of the `hello` plugin).

use std::path::{Path, PathBuf};

use serde_json::json;
use toolhost::admission::PluginRequest;
use toolhost::config::Config;
use toolhost::dispatch::{DispatchContext, Dispatcher, Session, ToolCall, ToolResult};
use toolhost::live::LivePlugins;
use toolhost::registry::{FnTool, Registry, ToolOutput, ToolSpec};
use toolhost::{Engine, EngineConfig};

/// Builds the host, runs one batch and returns its results in call order.
pub async fn run(plugin: &Path) -> toolhost::Result<Vec<ToolResult>> {
    // A built-in of the application, reviewed for public use.
    let mut registry = Registry::new();
    registry.register_public(FnTool::new(
        ToolSpec::new("clock", "The current Unix time.", json!({"type": "object"})),
        |_, _| async {
            let now = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .unwrap_or_default();
            Ok(ToolOutput::json(&json!(now.as_secs())))
        },
    ))?;
    // A host-level tool: the model sees its schema, the application answers.
    let todo = ToolSpec::new("todo", "The agent's task list.", json!({"type": "object"}));
    registry.register(FnTool::new(todo.clone(), |_, _| async {
        Err(toolhost::Error::new(
            toolhost::ErrorCode::Internal,
            "todo is handled by the application",
        ))
    }))?;
    let dispatcher = Dispatcher::builder(registry)
        .intercept(FnTool::new(todo, |_, _| async {
            Ok(ToolOutput::json(&json!(["write the README"])))
        }))
        .build()?;

    // A sandboxed component, admitted as every plugin is (a regular file
    // within the size cap, pins, signatures and grants as the config says);
    // its tools join the registry, trusted-only.
    let engine = Engine::new(EngineConfig::default())?;
    let plugins = LivePlugins::new(&dispatcher, engine, Config::default())?;
    plugins.load(PluginRequest::file(plugin)).await?;

    // Every call publishes an event.
    let mut events = dispatcher.subscribe();
    let printer = tokio::spawn(async move {
        while let Ok(e) = events.recv().await {
            let fuel = e.usage.map(|u| u.fuel_consumed);
            println!(
                "event: #{} {} {:?} in {:?}, fuel {fuel:?}",
                e.call_id, e.name, e.outcome, e.duration
            );
        }
    });

    let session = Session::trusted("demo");
    println!("{} tools offered", dispatcher.definitions(&session)?.len());
    let calls = vec![
        ToolCall::new("greet", json!({"name": "Ada"})),
        ToolCall::new("clock", json!({})),
        ToolCall::new("todo", json!({})),
        ToolCall::new("nope", json!({})),
    ];
    let results = dispatcher
        .dispatch_batch(calls, &DispatchContext::new(session))
        .await;
    drop(dispatcher);
    let _ = printer.await;
    Ok(results)
}

#[tokio::main]
async fn main() -> toolhost::Result<()> {
    let default = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../target/plugins/wasm32-wasip2/plugin/hello.wasm"
    );
    let plugin = std::env::args()
        .nth(1)
        .map_or_else(|| PathBuf::from(default), PathBuf::from);
    for result in run(&plugin).await? {
        println!("{}", result.content);
    }
    Ok(())
}
