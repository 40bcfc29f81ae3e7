//! Session ids are unguessable and never reused across processes, and a
//! background process's receipt is readable only by the session that
//! started it, or one that declares it continues that session.

use std::time::Duration;

use serde_json::{Value, json};
use toolhost::internal::dispatch::{DispatchContext, Session};
use toolhost::internal::registry::ToolAudience;

use crate::mcp_server::StdioServer;
use crate::protected::{project, start};

fn text(result: &Value) -> Value {
    serde_json::from_str(result["content"][0]["text"].as_str().unwrap()).unwrap()
}

const EXEC_CONFIG: &str = "[exec]\nbackend = \"sandbox\"\n";

/// Regression (hardening): session ids were counters (`mcp-1` in every
/// process), so a second server process read the first one's receipts.
#[test]
fn another_server_process_cannot_read_a_receipt() {
    let (_dir, config) = project(EXEC_CONFIG);
    let config = config.display().to_string();
    let mut first = StdioServer::start(&["--config", &config]);
    let started = text(&first.call(
        1,
        "exec",
        json!({"command": "echo secret-output", "background": true}),
    ));
    let handle = started["handle"].as_str().unwrap().to_string();
    let mut receipt = Value::Null;
    for id in 2..200 {
        receipt = first.call(id, "process", json!({"action": "receipt", "handle": handle}));
        if receipt["isError"] == false {
            break;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(
        text(&receipt)["output"]
            .as_str()
            .unwrap()
            .contains("secret-output"),
        "{receipt}"
    );
    drop(first);

    let mut second = StdioServer::start(&["--config", &config]);
    let stolen = second.call(1, "process", json!({"action": "receipt", "handle": handle}));
    assert_eq!(stolen["isError"], true, "{stolen}");
    assert_eq!(text(&stolen)["error_code"], "tool_failed", "{stolen}");
    assert!(!stolen.to_string().contains("secret-output"));
}

/// A session that declares it continues an earlier one (an application
/// resuming a conversation after a restart) reads that session's receipts;
/// a fresh session does not.
#[tokio::test]
async fn a_declared_continuation_reads_the_earlier_sessions_receipts() {
    let (_dir, config) = project(EXEC_CONFIG);
    let first = Session::trusted("chat");
    let handle = {
        let started = start(&config).await;
        let ctx = DispatchContext::new(first.clone());
        let r = started
            .dispatcher
            .dispatch(
                "exec",
                json!({"command": "echo before-restart", "background": true}),
                &ctx,
            )
            .await
            .json();
        let handle = r["handle"].as_str().unwrap().to_string();
        for _ in 0..200 {
            let poll = started
                .dispatcher
                .dispatch("process", json!({"action": "receipt", "handle": handle}), &ctx)
                .await;
            if !poll.is_error() {
                break;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        handle
    };
    // "Restart": a new dispatcher over the same storage.
    let started = start(&config).await;
    let read = |session| {
        let d = started.dispatcher.clone();
        let handle = handle.clone();
        async move {
            d.dispatch(
                "process",
                json!({"action": "receipt", "handle": handle}),
                &DispatchContext::new(session),
            )
            .await
        }
    };
    let stranger = read(Session::trusted("chat")).await;
    assert!(stranger.is_error(), "{}", stranger.content);
    let continued = read(Session::continuing(
        "chat",
        ToolAudience::Trusted,
        [first.id().to_string()],
    ))
    .await;
    assert!(!continued.is_error(), "{}", continued.content);
    assert!(
        continued.json()["output"]
            .as_str()
            .unwrap()
            .contains("before-restart")
    );
}

#[test]
fn session_ids_are_random_and_never_repeat() {
    let ids: std::collections::HashSet<String> = (0..1000)
        .map(|_| Session::trusted("mcp").id().to_string())
        .collect();
    assert_eq!(ids.len(), 1000);
    for id in ids.iter().take(10) {
        let hex = id.strip_prefix("mcp-").unwrap();
        assert_eq!(hex.len(), 32, "{id}");
        assert!(u128::from_str_radix(hex, 16).is_ok(), "{id}");
    }
}
