//! The layering of the crates, enforced: a crate that must not depend on
//! another (directly or through anything else, normal dependencies only)
//! fails this test, so a wrong-way dependency fails CI.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::Value;

use crate::support;

/// Each crate and the packages it must never reach.
const RULES: &[(&str, &[&str])] = &[
    (
        "toolhost-json",
        &[
            "tokio",
            "wasmtime",
            "rmcp",
            "toolhost-core",
            "toolhost-runtime",
            "toolhost-mcp",
            "toolhost-detector",
            "toolhost",
            "toolhost-sdk",
        ],
    ),
    (
        "toolhost-detector",
        &[
            "tokio",
            "wasmtime",
            "rmcp",
            "toolhost-core",
            "toolhost-runtime",
            "toolhost-exec",
            "toolhost-mcp",
            "toolhost",
        ],
    ),
    (
        "toolhost-core",
        &[
            "wasmtime",
            "rmcp",
            "axum",
            "hyper",
            "toolhost-detector",
            "clap",
            "anyhow",
            "tracing-subscriber",
        ],
    ),
    (
        "toolhost-runtime",
        &[
            "rmcp",
            "axum",
            "toolhost-exec",
            "toolhost-detector",
            "toolhost-mcp",
            "toolhost-conformance",
            "clap",
            "tracing-subscriber",
        ],
    ),
    (
        "toolhost-exec",
        &[
            "wasmtime",
            "rmcp",
            "toolhost-runtime",
            "toolhost-mcp",
            "clap",
            "anyhow",
            "tracing-subscriber",
        ],
    ),
    (
        "toolhost-mcp",
        &["wasmtime", "toolhost-runtime", "clap", "tracing-subscriber"],
    ),
    (
        "toolhost-distribution",
        &[
            "wasmtime",
            "rmcp",
            "axum",
            "toolhost-runtime",
            "toolhost-exec",
            "toolhost-mcp",
            "toolhost-detector",
            "toolhost",
            "clap",
            "anyhow",
            "tracing-subscriber",
        ],
    ),
    (
        "toolhost-codemode",
        &[
            "rmcp",
            "axum",
            "toolhost-exec",
            "toolhost-detector",
            "toolhost-mcp",
            "toolhost",
            "monty",
            "clap",
            "tracing-subscriber",
        ],
    ),
    (
        "toolhost-conformance",
        &[
            "rmcp",
            "axum",
            "toolhost-exec",
            "toolhost-detector",
            "toolhost-mcp",
            "toolhost",
            "clap",
            "tracing-subscriber",
        ],
    ),
];

/// Package name → the names of its normal, unconditional dependencies, as
/// resolved.
fn normal_graph() -> BTreeMap<String, BTreeSet<String>> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    // Only this platform's packages: the others (android's, windows') are
    // never downloaded by a build here, and `--offline` must not need them.
    let out = std::process::Command::new(cargo)
        .current_dir(support::workspace_root())
        .args(["metadata", "--format-version", "1", "--offline", "--locked"])
        .args(["--filter-platform", &host_triple()])
        .output()
        .expect("run cargo metadata");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let metadata: Value = serde_json::from_slice(&out.stdout).unwrap();
    let name_of: BTreeMap<&str, &str> = metadata["packages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| (p["id"].as_str().unwrap(), p["name"].as_str().unwrap()))
        .collect();
    let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for node in metadata["resolve"]["nodes"].as_array().unwrap() {
        let name = name_of[node["id"].as_str().unwrap()].to_string();
        let deps = graph.entry(name).or_default();
        for dep in node["deps"].as_array().unwrap() {
            // Normal dependencies on every platform (a dependency only
            // for another platform, such as wasip2's for getrandom, is
            // not built here).
            let normal = dep["dep_kinds"]
                .as_array()
                .unwrap()
                .iter()
                .any(|k| k["kind"].is_null() && k["target"].is_null());
            if normal {
                deps.insert(name_of[dep["pkg"].as_str().unwrap()].to_string());
            }
        }
    }
    graph
}

/// The triple of the platform the tests run on, as `rustc -vV` reports it.
fn host_triple() -> String {
    let rustc = std::env::var("RUSTC").unwrap_or_else(|_| "rustc".into());
    let out = std::process::Command::new(rustc)
        .arg("-vV")
        .output()
        .expect("run rustc -vV");
    let text = String::from_utf8_lossy(&out.stdout);
    text.lines()
        .find_map(|l| l.strip_prefix("host: "))
        .expect("rustc -vV names its host")
        .trim()
        .to_string()
}

fn reachable(graph: &BTreeMap<String, BTreeSet<String>>, from: &str) -> BTreeSet<String> {
    let mut seen = BTreeSet::new();
    let mut stack = vec![from.to_string()];
    while let Some(name) = stack.pop() {
        for dep in graph.get(&name).into_iter().flatten() {
            if seen.insert(dep.clone()) {
                stack.push(dep.clone());
            }
        }
    }
    seen
}

#[test]
fn no_crate_depends_the_wrong_way() {
    let graph = normal_graph();
    let mut broken = Vec::new();
    for (krate, forbidden) in RULES {
        assert!(graph.contains_key(*krate), "no crate {krate} in the workspace");
        let reach = reachable(&graph, krate);
        for f in *forbidden {
            if reach.contains(*f) {
                broken.push(format!("{krate} depends on {f}"));
            }
        }
    }
    assert!(broken.is_empty(), "wrong-way dependencies: {broken:?}");
}
