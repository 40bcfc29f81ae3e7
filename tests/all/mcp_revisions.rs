//! MCP 2026-07-28 beside the earlier revisions: the official Python SDK
//! (2.3, which negotiates 2026-07-28 by default) against the real binary,
//! with a bridged server written with the same SDK. What it shows: the
//! bridge speaks 2026-07-28 to a server that offers it, a caller's W3C
//! trace context reaches the bridged server, lists carry caching hints on
//! 2026-07-28 and not before; a bridged server's questions (elicitation,
//! sampling, roots, in several rounds) reach the caller's client when the
//! entry's `ask` grants them, and fail the call naming why when not.

use serde_json::{Value, json};

use crate::mcp_server::{python_client, stdio_mode};
use crate::support;

const TRACEPARENT: &str = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";

/// A config bridging `tests/peers/trace_server.py` (stdio) as `trace`.
pub(crate) fn bridging_config(dir: &std::path::Path) -> std::path::PathBuf {
    bridging_config_with(dir, "")
}

/// As [`bridging_config`], with `more` lines in the server's entry.
pub(crate) fn bridging_config_with(dir: &std::path::Path, more: &str) -> std::path::PathBuf {
    let config = dir.join("toolhost.toml");
    std::fs::write(
        &config,
        format!(
            "[[mcp.servers]]\nname = \"trace\"\ntransport = \"stdio\"\ncommand = {:?}\nargs = [{:?}]\n{more}\n",
            support::peer_python().display().to_string(),
            support::peer_script("trace_server.py").display().to_string(),
        ),
    )
    .unwrap();
    config
}

/// The bridge's grant for every kind of question.
pub(crate) const ASK_ALL: &str = "ask = [\"elicitation\", \"sampling\", \"roots\"]";

/// What `trace_server.py`'s `seen` step reported.
pub(crate) fn seen(step: &Value) -> Value {
    serde_json::from_str(step["text"].as_str().unwrap_or_default())
        .unwrap_or_else(|_| step["structured"].clone())
}

/// What the Python SDK client's `steps` get from toolhost serving over
/// stdio with `trace_server.py` bridged.
fn through_the_bridge(steps: Value) -> Value {
    let dir = tempfile::tempdir().unwrap();
    let config = bridging_config(dir.path()).display().to_string();
    python_client(&stdio_mode(&["--stdio", "--config", &config]), steps)
}

#[test]
fn a_2026_client_reaches_a_2026_bridged_server_with_its_trace() {
    let meta = json!({"traceparent": TRACEPARENT, "tracestate": "rojo=00f067aa0ba902b7"});
    let out = through_the_bridge(json!([
        {"discover": true},
        {"call": "mcp__trace__seen", "args": {}, "until": "protocolVersion", "meta": meta},
        {"list": true},
    ]));
    assert_eq!(out["protocol_version"], "2026-07-28", "{out}");
    let call = &out["steps"][0];
    assert_eq!(call["is_error"], false, "{out}");
    let seen = seen(call);
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
fn a_bridged_server_not_granted_to_ask_fails_the_call_saying_so() {
    // The caller could answer; the entry grants the server nothing.
    let out = through_the_bridge(json!([
        {"discover": true},
        {"elicit": {"name": "Ada"}},
        {"call": "mcp__trace__ask_name", "args": {}, "until": "ask_name"},
        {"call": "mcp__trace__seen", "args": {}, "until": "protocolVersion"},
    ]));
    let asked = &out["steps"][1];
    assert_eq!(asked["is_error"], true, "{out}");
    let text = asked["text"].as_str().unwrap();
    assert!(
        text.contains("MCP server \\\"trace\\\" asked for input")
            && text.contains(
                "\\\"name\\\" asks for elicitation, which its [[mcp.servers]] entry does not grant (`ask`)"
            ),
        "{text}"
    );
    assert_eq!(out["elicitations"], json!([]), "the caller was asked: {out}");
    // Nothing was declared to the server, and the bridge and the server
    // serve on.
    let seen = seen(&out["steps"][2]);
    assert_eq!(seen["clientCapabilities"].get("elicitation"), None, "{seen}");
}

/// A 2025 caller (a session: the bridge's questions reach it as
/// server-initiated requests) answers a bridged 2026-07-28 server's
/// questions: two rounds (a name and the model's greeting, then a colour
/// carried in the server's requestState), a roots listing, and a bridged
/// prompt's and resource's questions.
#[test]
fn a_bridged_server_asks_a_session_client_through_the_bridge() {
    let dir = tempfile::tempdir().unwrap();
    let config = bridging_config_with(dir.path(), ASK_ALL).display().to_string();
    let out = python_client(
        &stdio_mode(&["--stdio", "--config", &config]),
        json!([
            {"elicit": {"name": "Bo", "color": "red"}},
            {"sample": "Hello Bo"},
            {"roots": [{"uri": "file:///work/a"}, {"uri": "file:///work/b"}]},
            {"call": "mcp__trace__seen", "args": {}, "until": "protocolVersion"},
            {"call": "mcp__trace__interview", "args": {}},
            {"call": "mcp__trace__where", "args": {}},
            {"get_prompt": "mcp__trace__introduce"},
            {"read": "card://Dee"},
        ]),
    );
    assert_eq!(out["protocol_version"], "2025-11-25", "{out}");
    let seen = seen(&out["steps"][3]);
    assert_eq!(
        seen["clientCapabilities"],
        json!({"elicitation": {"form": {}}, "sampling": {}, "roots": {}}),
        "declared to the bridged server: {seen}"
    );
    assert_eq!(out["steps"][4]["is_error"], false, "{out}");
    assert_eq!(
        out["steps"][4]["text"], "Bo likes red; the model said: Hello Bo",
        "{out}"
    );
    let asked: Vec<&Value> = out["elicitations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| &e["message"])
        .collect();
    assert_eq!(
        asked,
        [
            "Your name?",
            "Your favourite colour?",
            "Who is speaking?",
            "Sign the card for Dee"
        ],
        "{out}"
    );
    assert_eq!(
        out["samplings"][0]["messages"][0]["content"]["text"], "Greet a guest",
        "{out}"
    );
    assert_eq!(out["steps"][5]["text"], "file:///work/a file:///work/b", "{out}");
    assert_eq!(out["roots_listed"], 1, "{out}");
    // A bridged prompt and resource ask the same way.
    assert_eq!(
        out["steps"][6]["messages"][0]["content"]["text"], "Please greet Bo.",
        "{out}"
    );
    assert_eq!(
        out["steps"][7]["contents"][0]["text"], "Dear Dee, from Bo",
        "{out}"
    );
}

/// Granted, but the caller's client cannot answer: the server is not told
/// it may ask, and a question it asks anyway fails the call, naming why.
#[test]
fn a_bridged_server_cannot_ask_a_client_without_the_capability() {
    let dir = tempfile::tempdir().unwrap();
    let config = bridging_config_with(dir.path(), ASK_ALL).display().to_string();
    let out = python_client(
        &stdio_mode(&["--stdio", "--config", &config]),
        json!([
            {"call": "mcp__trace__seen", "args": {}, "until": "protocolVersion"},
            {"call": "mcp__trace__interview", "args": {}},
        ]),
    );
    let seen = seen(&out["steps"][0]);
    assert_eq!(seen["clientCapabilities"].get("elicitation"), None, "{seen}");
    let failed = &out["steps"][1];
    assert_eq!(failed["is_error"], true, "{out}");
    assert!(
        failed["text"]
            .as_str()
            .unwrap()
            .contains("\\\"greeting\\\" asks for sampling, which the client of this call cannot answer"),
        "{out}"
    );
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
    let out = through_the_bridge(json!([
        {"call": "mcp__trace__seen", "args": {}, "until": "protocolVersion",
         "meta": {"traceparent": "00-not-a-trace-01"}},
    ]));
    let call = &out["steps"][0];
    let seen: Value =
        serde_json::from_str(call["text"].as_str().unwrap()).unwrap_or_else(|_| call["structured"].clone());
    assert_eq!(seen["traceparent"], Value::Null, "{seen}");
}

/// A hostile bridged server cannot hold a call by asking: one that asks
/// again after every answer is given up after 16 rounds (its caller asked
/// 16 times), one that asks 17 questions at once is refused unasked; the
/// bridge serves on.
#[test]
fn a_bridged_server_that_asks_for_ever_is_given_up() {
    let dir = tempfile::tempdir().unwrap();
    let config = bridging_config_with(dir.path(), ASK_ALL).display().to_string();
    let out = python_client(
        &stdio_mode(&["--stdio", "--config", &config]),
        json!([
            {"elicit": {"name": "Ada"}},
            {"call": "mcp__trace__pester", "args": {}, "until": "pester"},
            {"call": "mcp__trace__flood", "args": {}},
            {"call": "mcp__trace__seen", "args": {}},
        ]),
    );
    let pestered = &out["steps"][1];
    assert_eq!(pestered["is_error"], true, "{out}");
    assert!(
        pestered["text"]
            .as_str()
            .unwrap()
            .contains("asked for input more than 16 times to answer tools/call \\\"pester\\\""),
        "{out}"
    );
    let flooded = &out["steps"][2];
    assert_eq!(flooded["is_error"], true, "{out}");
    assert!(
        flooded["text"]
            .as_str()
            .unwrap()
            .contains("17 questions at once, past the 16 a round may hold"),
        "{out}"
    );
    // The caller was asked each of the 16 rounds, never the flood's.
    let asked = out["elicitations"].as_array().unwrap();
    assert_eq!(asked.len(), 16, "{out}");
    assert_eq!(asked[15]["message"], "Question 16?", "{out}");
    assert_eq!(out["steps"][3]["is_error"], false, "{out}");
}
