//! toolhost's integration tests: one binary, one module per area. The
//! plugins they use are built by `support` before the first test needs them.

mod support;

mod admission;
mod approval_flow;
mod audit;
mod browser;
mod cache;
mod call_many;
mod capabilities;
mod claims;
mod cli;
mod client_rounds;
mod codemode;
mod concurrency;
mod config;
mod config_reference;
mod conformance;
mod console;
mod declare;
mod defaults;
mod diagnostics;
mod dispatch;
mod example;
mod exec;
mod exec_tool;
mod faults;
mod fixtures;
mod fuzz_regressions;
mod glibc;
mod http;
mod layering;
mod limits;
mod loading;
mod mcp_bridge;
mod mcp_client;
mod mcp_conformance;
mod mcp_hostile;
mod mcp_lazy;
mod mcp_protocol;
mod mcp_revisions;
mod mcp_server;
mod metrics;
mod mrtr;
mod nested;
mod oauth;
mod oauth_client;
mod oci;
mod peers;
mod plugin_files;
mod plugin_memory;
mod plugin_time;
mod plugins_dir;
mod polyglot;
mod polyglot_sdk;
mod progress;
mod protected;
mod readme;
mod registry;
mod replicas;
mod request_state;
mod sessions;
mod signatures;
mod soak;
mod tasks;
mod tool_approval;
mod toolsets;
mod traces;
mod versions;
mod wit3;

use std::sync::{Arc, OnceLock};

use std::path::Path;

use toolhost::internal::capabilities::{DirGrant, DirMode, Grants};
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

/// Loads plugin `name` with the host directory `host` granted at guest path
/// `guest` in `mode`.
pub async fn load_with_dir(name: &str, host: &Path, guest: &str, mode: DirMode) -> Arc<LoadedComponent> {
    let options = LoadOptions {
        grants: Grants {
            dirs: vec![DirGrant {
                host: host.into(),
                guest: guest.into(),
                mode,
            }],
            ..Default::default()
        },
        ..Default::default()
    };
    engine()
        .load_file(&support::plugin_path(name), options)
        .await
        .unwrap_or_else(|e| panic!("loading {name}: {e}"))
}

/// Calls `tool` with `args` and parses its JSON result.
pub async fn call_json(
    c: &LoadedComponent,
    tool: &str,
    args: serde_json::Value,
) -> toolhost::Result<serde_json::Value> {
    c.call(tool, &args.to_string(), &Default::default(), None, 1)
        .await
        .result
        .map(|output| serde_json::from_str(&output.content).expect("a tool result is JSON"))
}

/// Calls `tool` and returns its JSON result, panicking with the error if it fails.
pub async fn call_ok(c: &LoadedComponent, tool: &str, args: serde_json::Value) -> serde_json::Value {
    call_json(c, tool, args.clone())
        .await
        .unwrap_or_else(|e| panic!("{tool}({args}) failed: {e}"))
}

/// Calls `tool` and returns its error, panicking if it succeeds.
pub async fn call_err(c: &LoadedComponent, tool: &str, args: serde_json::Value) -> toolhost::Error {
    match call_json(c, tool, args.clone()).await {
        Ok(v) => panic!("{tool}({args}) should fail, got {v}"),
        Err(e) => e,
    }
}
