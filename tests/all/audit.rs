//! The audit log (`[audit] path`): `toolhost serve --http` writes one JSON
//! line for each call (who, the tool, the component's hash, the
//! arguments' digest, the outcome), each plugin loaded or refused and why,
//! and each client let in or turned away; the arguments themselves and the
//! token never appear. A SIGKILL right after an answer loses none of the
//! lines written before it: the next `serve` moves in what the killed one
//! left in the log's ring, each line once.

use std::path::Path;

use serde_json::{Value, json};

use crate::peers::http_request;
use crate::tasks::{Replica, TOKEN, rpc};

fn lines(path: &Path) -> Vec<Value> {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .map(|line| serde_json::from_str(line).unwrap_or_else(|e| panic!("{line}: {e}")))
        .collect()
}

#[test]
fn every_call_load_refusal_and_client_is_a_line_that_a_kill_does_not_lose() {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("toolhost.toml");
    std::fs::write(
        &config,
        format!(
            "{}\n[[plugins]]\npath = \"missing.wasm\"\n\n[audit]\npath = \"audit.jsonl\"\n",
            crate::mcp_conformance::fixture_config()
        ),
    )
    .unwrap();
    let mut served = Replica::start(&config);
    let log = dir.path().join("audit.jsonl");

    let arguments = json!({"name": "Ada Lovelace, secret-ish"});
    let answer = rpc(
        served.addr,
        "tools/call",
        json!({"name": "greet", "arguments": arguments}),
        false,
    );
    assert_eq!(answer["result"]["isError"], false, "{answer}");
    let unknown = rpc(
        served.addr,
        "tools/call",
        json!({"name": "no_such_tool", "arguments": {}}),
        false,
    );
    assert_eq!(unknown["error"]["code"], -32602, "{unknown}");
    let (status, _) = http_request(
        served.addr,
        "POST",
        "/mcp",
        &[
            ("Authorization", "Bearer not-the-token"),
            ("Content-Type", "application/json"),
        ],
        "{}",
    )
    .unwrap();
    assert_eq!(status, 401);
    // No chance to flush anything: what was answered is in the log's
    // ring (`.audit.jsonl.ring`), if not in the log yet.
    served.kill();
    let before = lines(&log);
    // The next server moves the rest in before it serves; stopped as a
    // service is, it moves its own in too, and removes its ring.
    let mut again = Replica::start(&config);
    again.terminate();
    assert!(!dir.path().join(".audit.jsonl.ring").exists());
    let lines = lines(&log);
    assert_eq!(lines[..before.len()], before[..], "what the log had stays first");
    let text = std::fs::read_to_string(&log).unwrap();
    assert!(!text.contains("Ada Lovelace"), "arguments leaked: {text}");
    assert!(
        !text.contains(TOKEN) && !text.contains("not-the-token"),
        "a token leaked: {text}"
    );
    for line in &lines {
        assert!(line["time"].as_str().is_some_and(|t| t.ends_with('Z')), "{line}");
    }
    let of = |event: &str| {
        lines
            .iter()
            .filter(|l| l["event"] == event)
            .cloned()
            .collect::<Vec<_>>()
    };

    // One of each by each server.
    let loaded = of("plugin_loaded");
    assert_eq!(loaded.len(), 2, "{lines:?}");
    let component = loaded[0]["component"].as_str().unwrap().to_string();
    assert!(component.starts_with("blake3:"), "{component}");
    assert_eq!(loaded[1]["component"], component.as_str());
    let refused = of("plugin_refused");
    assert_eq!(refused.len(), 2, "{lines:?}");
    assert_eq!(refused[0]["plugin"], "missing.wasm", "{refused:?}");
    assert!(
        refused[0]["why"].as_str().unwrap().contains("missing.wasm"),
        "{refused:?}"
    );

    let calls = of("call");
    assert_eq!(calls.len(), 2, "each call's line once: {calls:?}");
    let greet = calls
        .iter()
        .find(|c| c["tool"] == "greet")
        .expect("the greet call's line");
    assert_eq!(greet["outcome"], "ok", "{greet}");
    assert_eq!(greet["source"], "wasm", "{greet}");
    assert_eq!(greet["component"], component.as_str(), "{greet}");
    let digest = format!(
        "blake3:{}",
        blake3::hash(&serde_json::to_vec(&arguments).unwrap()).to_hex()
    );
    assert_eq!(greet["arguments"], digest.as_str(), "{greet}");
    assert!(
        greet["session"].as_str().is_some_and(|s| !s.is_empty()),
        "{greet}"
    );
    let unknown = calls
        .iter()
        .find(|c| c["tool"] == "no_such_tool")
        .expect("the unknown call's line");
    assert_eq!(unknown["error_code"], "unknown_tool", "{unknown}");

    let clients = of("client");
    assert!(clients.iter().any(|c| c["decision"] == "allowed"), "{clients:?}");
    let turned_away = clients
        .iter()
        .find(|c| c["decision"] == "refused")
        .expect("the refused client");
    assert!(turned_away["why"].as_str().is_some(), "{turned_away}");
}
