//! A host application serving its tools over MCP to an untrusted audience,
//! with the facade only: a built-in it reviewed for public use
//! (`word_count`) next to a trusted-only WebAssembly component. Public MCP
//! clients see and call only `word_count`; the component's tools are hidden
//! from them and refused if called by name (every component's and MCP
//! server's tools are trusted-only; only `public_tool` makes a tool public).
//!
//! ```text
//! cargo run -p toolhost --example serve_public -- path/to/hello.wasm --stdio
//! cargo run -p toolhost --example serve_public -- path/to/hello.wasm --http 127.0.0.1:8080 TOKEN
//! ```

use std::path::{Path, PathBuf};

use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;
use toolhost::{FnTool, Host, HttpOptions, PluginRequest, ToolAudience, ToolOutput, ToolSpec};

/// The application's host: `word_count` (public) and the tools of the
/// component at `plugin` (trusted-only).
pub async fn public_host(plugin: &Path) -> toolhost::Result<Host> {
    let host = Host::builder()
        .public_tool(FnTool::new(
            ToolSpec::new(
                "word_count",
                "Counts the words of a text.",
                json!({"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}),
            ),
            |args: Value, _| async move {
                let text = args["text"].as_str().unwrap_or_default();
                Ok(ToolOutput::json(&json!(text.split_whitespace().count())))
            },
        ))
        .build()
        .await?;
    host.load(PluginRequest::file(plugin)).await?;
    Ok(host)
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let usage = "usage: serve_public PLUGIN.wasm (--stdio | --http ADDR TOKEN)";
    let (plugin, mode) = match args.as_slice() {
        [plugin, mode, rest @ ..] => (PathBuf::from(plugin), (mode.as_str(), rest)),
        _ => return Err(usage.into()),
    };
    let host = public_host(&plugin).await?;
    let shutdown = CancellationToken::new();
    match mode {
        ("--stdio", []) => host.serve_stdio(ToolAudience::Public, shutdown).await?,
        ("--http", [addr, token]) => {
            let listener = tokio::net::TcpListener::bind(addr.as_str()).await?;
            let options = HttpOptions {
                bearer_token: Some(token.clone()),
                ..HttpOptions::default()
            };
            eprintln!("serving MCP at http://{}{}", listener.local_addr()?, options.path);
            host.serve_http(listener, options, ToolAudience::Public, shutdown)
                .await?;
        }
        _ => return Err(usage.into()),
    }
    Ok(())
}
