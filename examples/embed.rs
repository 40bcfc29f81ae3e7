//! A host application embedding toolhost, with the facade only
//! (`toolhost::{Host, …}`):
//!
//! - tools of its own: `clock`, reviewed for public sessions, and
//!   `deploy`, which needs approval (`require_approval` in its config);
//! - its approvals answered by its own code (here: `deploy` once, nothing
//!   else);
//! - a WebAssembly plugin admitted while it runs, and one of toolhost's
//!   standard plugins (`calc`) from its config;
//! - an MCP server bridged in (optional: any stdio MCP server's command);
//! - every call's event printed;
//! - the whole served over MCP's streamable HTTP, when asked.
//!
//! ```text
//! cargo run -p toolhost --example embed -- [PLUGIN.wasm] [--mcp COMMAND ARGS...] [--serve ADDR]
//! ```
//! (default plugin: the test build of `hello`, `plugins/build hello`).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde_json::json;
use toolhost::{
    ApprovalCallback, ApprovalOutcome, ApprovalRequest, BoxFuture, Choice, Config, FnTool, Host, HttpOptions,
    McpServerConfig, PluginRequest, Session, ToolAudience, ToolCall, ToolOutput, ToolResult, ToolSpec,
};

/// The application's config: its approval rule and one standard plugin.
const CONFIG: &str = r#"
require_approval = ["deploy"]

[[plugins]]
bundled = "calc"
"#;

/// Approves `deploy` once per request, and nothing else.
#[derive(Debug)]
struct DeployOnly;

impl ApprovalCallback for DeployOnly {
    fn request<'a>(&'a self, request: &'a ApprovalRequest) -> BoxFuture<'a, ApprovalOutcome> {
        let choice = if request.summary.contains("deploy") {
            Choice::Once
        } else {
            Choice::Deny
        };
        Box::pin(async move { ApprovalOutcome::Decided(choice) })
    }
}

/// The application's host: its tools, approvals, config, and an MCP server
/// to bridge (`mcp`: a stdio server's command and arguments), if any.
pub async fn build(mcp: Option<(String, Vec<String>)>) -> toolhost::Result<Host> {
    let config = Config::from_toml(CONFIG)?;
    let mut builder = Host::builder()
        .config(config)
        .public_tool(FnTool::new(
            ToolSpec::new("clock", "The current Unix time.", json!({"type": "object"})),
            |_, _| async {
                let now = std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .unwrap_or_default();
                Ok(ToolOutput::json(&json!(now.as_secs())))
            },
        ))
        .tool(FnTool::new(
            ToolSpec::new("deploy", "Deploys the service.", json!({"type": "object"})),
            |_, _| async { Ok(ToolOutput::json(&json!("deployed"))) },
        ))
        .approver(Arc::new(DeployOnly));
    if let Some((command, args)) = mcp {
        builder = builder.mcp_server(McpServerConfig::stdio("inner", command, args));
    }
    builder.build().await
}

/// Builds the host, admits `plugin`, runs one batch of calls and returns
/// their results in call order, printing every call's event.
pub async fn run(plugin: &Path, mcp: Option<(String, Vec<String>)>) -> toolhost::Result<Vec<ToolResult>> {
    let bridged = mcp.is_some();
    let host = build(mcp).await?;
    // A plugin admitted while the host runs, as every plugin is.
    let hello = host.load(PluginRequest::file(plugin)).await?;
    println!("loaded {} with {} tool(s)", hello.hash(), hello.tools().len());
    if bridged {
        host.mcp_settled(std::time::Duration::from_secs(60)).await;
    }

    let mut events = host.subscribe();
    let printer = tokio::spawn(async move {
        while let Ok(e) = events.recv().await {
            let fuel = e.usage.map(|u| u.fuel_consumed);
            println!(
                "event: {} {:?} in {:?}, fuel {fuel:?}",
                e.name, e.outcome, e.duration
            );
        }
    });

    let session = Session::trusted("demo");
    println!("{} tools offered", host.tools(&session)?.len());
    let mut calls = vec![
        ToolCall::new("greet", json!({"name": "Ada"})),
        ToolCall::new("clock", json!({})),
        ToolCall::new("calculate_expression", json!({"expression": "6 * 7"})),
        ToolCall::new("deploy", json!({})),
        ToolCall::new("nope", json!({})),
    ];
    if bridged {
        calls.push(ToolCall::new(
            "mcp__inner__calculate_expression",
            json!({"expression": "2 ** 10"}),
        ));
    }
    let mut results = Vec::new();
    for call in calls {
        results.push(host.call(&call.name, call.arguments, &session).await);
    }
    // A public session sees the reviewed tool only.
    let public = Session::new("visitor", ToolAudience::Public);
    let seen: Vec<String> = host.tools(&public)?.into_iter().map(|t| t.name).collect();
    println!("a public session sees {seen:?}");
    drop(host);
    let _ = printer.await;
    Ok(results)
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let default = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../target/plugins/wasm32-wasip2/plugin/hello.wasm"
    );
    let mut args = std::env::args().skip(1).peekable();
    let plugin = match args.peek() {
        Some(a) if !a.starts_with("--") => PathBuf::from(args.next().unwrap_or_default()),
        _ => PathBuf::from(default),
    };
    let (mut mcp, mut serve) = (None, None);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--serve" => serve = args.next(),
            "--mcp" => {
                let command = args.next().ok_or("--mcp needs a command")?;
                let rest: Vec<String> = args.by_ref().take_while(|a| a != "--serve").collect();
                mcp = Some((command, rest));
            }
            other => return Err(format!("unknown argument {other}").into()),
        }
    }
    for result in run(&plugin, mcp.clone()).await? {
        println!("{}", result.content);
    }
    if let Some(addr) = serve {
        let host = build(mcp).await?;
        host.load(PluginRequest::file(&plugin)).await?;
        let listener = tokio::net::TcpListener::bind(&addr).await?;
        let token = std::env::var("EMBED_TOKEN").unwrap_or_else(|_| "change-me".into());
        println!(
            "serving MCP at http://{}/mcp (Authorization: Bearer {token})",
            listener.local_addr()?
        );
        let options = HttpOptions {
            bearer_token: Some(token),
            ..HttpOptions::default()
        };
        let shutdown = tokio_util::sync::CancellationToken::new();
        let stop = shutdown.clone();
        tokio::spawn(async move {
            let _ = tokio::signal::ctrl_c().await;
            stop.cancel();
        });
        host.serve_http(listener, options, ToolAudience::Trusted, shutdown)
            .await?;
    }
    Ok(())
}
