//! A host application serving its registry over MCP to an untrusted
//! audience: a built-in it reviewed for public use (`word_count`) next to a
//! trusted-only WebAssembly component. Public MCP clients see and call only
//! `word_count`; the component's tools are hidden from them and refused if
//! called by name (every component's and MCP server's tools are
//! trusted-only; only `register_public` makes a tool public).
//!
//! ```text
//! cargo run -p toolhost --example serve_public -- path/to/hello.wasm --stdio
//! cargo run -p toolhost --example serve_public -- path/to/hello.wasm --http 127.0.0.1:8080 TOKEN
//! ```

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;
use toolhost::admission::PluginRequest;
use toolhost::config::Config;
use toolhost::internal::dispatch::Dispatcher;
use toolhost::internal::mcp::{HttpOptions, McpServer, serve_http, serve_stdio};
use toolhost::internal::registry::{FnTool, Registry, ToolAudience, ToolOutput, ToolSpec};
use toolhost::live::LivePlugins;
use toolhost::{Engine, EngineConfig};

/// The application's dispatcher: `word_count` (public) and the tools of
/// the component at `plugin` (trusted-only).
pub async fn public_dispatcher(plugin: &Path) -> toolhost::Result<Dispatcher> {
    let mut registry = Registry::new();
    registry.register_public(FnTool::new(
        ToolSpec::new(
            "word_count",
            "Counts the words of a text.",
            json!({"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}),
        ),
        |args: Value, _| async move {
            let text = args["text"].as_str().unwrap_or_default();
            Ok(ToolOutput::json(&json!(text.split_whitespace().count())))
        },
    ))?;
    let dispatcher = Dispatcher::builder(registry).build()?;
    let engine = Engine::new(EngineConfig::default())?;
    let plugins = LivePlugins::new(&dispatcher, engine, Config::default())?;
    plugins.load(PluginRequest::file(plugin)).await?;
    Ok(dispatcher)
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (plugin, mode) = match args.as_slice() {
        [plugin, mode, rest @ ..] => (PathBuf::from(plugin), (mode.as_str(), rest)),
        _ => anyhow::bail!("usage: serve_public PLUGIN.wasm (--stdio | --http ADDR TOKEN)"),
    };
    let dispatcher = public_dispatcher(&plugin).await?;
    let server = McpServer::new(dispatcher, ToolAudience::Public);
    let shutdown = CancellationToken::new();
    let grace = Duration::from_secs(5);
    match mode {
        ("--stdio", []) => serve_stdio(server, shutdown, grace).await?,
        ("--http", [addr, token]) => {
            let listener = tokio::net::TcpListener::bind(addr.as_str()).await?;
            let options = HttpOptions {
                bearer_token: Some(token.clone()),
                ..HttpOptions::default()
            };
            eprintln!("serving MCP at http://{}{}", listener.local_addr()?, options.path);
            serve_http(server, listener, options, shutdown, grace).await?;
        }
        _ => anyhow::bail!("usage: serve_public PLUGIN.wasm (--stdio | --http ADDR TOKEN)"),
    }
    Ok(())
}
