//! MCP 2026-07-28 beside the earlier revisions: the official Python SDK
//! (2.3, which negotiates 2026-07-28 by default) against the real binary,
//! with a bridged server written with the same SDK. What it shows: the
//! bridge speaks 2026-07-28 to a server that offers it, a caller's W3C
//! trace context reaches the bridged server, lists carry caching hints on
//! 2026-07-28 and not before.

use serde_json::{Value, json};

use crate::mcp_server::{python_client, stdio_mode};
use crate::support;

const TRACEPARENT: &str = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";

/// A config bridging `tests/peers/trace_server.py` (stdio) as `trace`.
pub(crate) fn bridging_config(dir: &std::path::Path) -> std::path::PathBuf {
    let config = dir.join("toolhost.toml");
    std::fs::write(
        &config,
        format!(
            "[[mcp.servers]]\nname = \"trace\"\ntransport = \"stdio\"\ncommand = {:?}\nargs = [{:?}]\n",
            support::peer_python().display().to_string(),
            support::peer_script("trace_server.py").display().to_string(),
        ),
    )
    .unwrap();
    config
}

#[test]
fn a_2026_client_reaches_a_2026_bridged_server_with_its_trace() {
    let dir = tempfile::tempdir().unwrap();
    let config = bridging_config(dir.path());
    let config = config.display().to_string();
    let meta = json!({"traceparent": TRACEPARENT, "tracestate": "rojo=00f067aa0ba902b7"});
    let out = python_client(
        &stdio_mode(&["--stdio", "--config", &config]),
        json!([
            {"discover": true},
            {"call": "mcp__trace__seen", "args": {}, "until": "protocolVersion", "meta": meta},
            {"list": true},
        ]),
    );
    assert_eq!(out["protocol_version"], "2026-07-28", "{out}");
    let call = &out["steps"][0];
    assert_eq!(call["is_error"], false, "{out}");
    let seen: Value =
        serde_json::from_str(call["text"].as_str().unwrap()).unwrap_or_else(|_| call["structured"].clone());
    assert_eq!(
        seen["protocolVersion"], "2026-07-28",
        "the bridge negotiated: {seen}"
    );
    assert_eq!(seen["traceparent"], TRACEPARENT, "{seen}");
    assert_eq!(seen["tracestate"], "rojo=00f067aa0ba902b7", "{seen}");

    let listed = &out["steps"][1];
    assert_eq!(listed["cache_scope"], "public", "{out}");
    assert_eq!(listed["ttl_ms"], 60_000, "{out}");
}

#[test]
fn a_bridged_server_that_asks_its_client_fails_the_call_saying_so() {
    let dir = tempfile::tempdir().unwrap();
    let config = bridging_config(dir.path());
    let config = config.display().to_string();
    let out = python_client(
        &stdio_mode(&["--stdio", "--config", &config]),
        json!([
            {"discover": true},
            {"call": "mcp__trace__ask_name", "args": {}, "until": "ask_name"},
            {"call": "mcp__trace__seen", "args": {}, "until": "protocolVersion"},
        ]),
    );
    let asked = &out["steps"][0];
    assert_eq!(asked["is_error"], true, "{out}");
    let text = asked["text"].as_str().unwrap();
    assert!(
        text.contains("MCP server")
            && text.contains("trace")
            && text.contains("asked its client for input (name (elicitation))"),
        "{text}"
    );
    // The bridge and the server serve on.
    assert_eq!(out["steps"][1]["is_error"], false, "{out}");
}

#[test]
fn a_client_on_an_earlier_revision_gets_no_caching_hints() {
    let out = python_client(&stdio_mode(&["--stdio"]), json!([{"list": true}]));
    assert_eq!(out["protocol_version"], "2025-11-25", "{out}");
    // The SDK's defaults, for fields the server did not send.
    assert_eq!(out["steps"][0]["ttl_ms"], 0, "{out}");
    assert_eq!(out["steps"][0]["cache_scope"], "private", "{out}");
}

#[test]
fn a_malformed_traceparent_is_not_passed_on() {
    let dir = tempfile::tempdir().unwrap();
    let config = bridging_config(dir.path());
    let config = config.display().to_string();
    let out = python_client(
        &stdio_mode(&["--stdio", "--config", &config]),
        json!([
            {"call": "mcp__trace__seen", "args": {}, "until": "protocolVersion",
             "meta": {"traceparent": "00-not-a-trace-01"}},
        ]),
    );
    let call = &out["steps"][0];
    let seen: Value =
        serde_json::from_str(call["text"].as_str().unwrap()).unwrap_or_else(|_| call["structured"].clone());
    assert_eq!(seen["traceparent"], Value::Null, "{seen}");
}
