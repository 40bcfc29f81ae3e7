//! The default configuration is safe on a shared machine: `exec` runs in
//! the bubblewrap sandbox where it works (else on `local`, loudly), and the
//! standard http plugin reaches public hosts only.

use serde_json::{Value, json};
use toolhost::dispatch::{DispatchContext, Session};

use crate::protected::{default_project, project, start};
use crate::support;

#[tokio::test]
async fn the_default_config_sandboxes_exec_and_serves_web_access() {
    let (_dir, config) = default_project();
    let started = start(&config).await;
    // tests/setup installs bubblewrap, so the sandbox works here.
    assert_eq!(started.exec_backend.as_deref(), Some("sandbox"));
    assert!(started.warnings.is_empty(), "{:?}", started.warnings);
    let registry = started.dispatcher.registry();
    assert!(
        registry.get("http_request").is_some(),
        "the http plugin is served"
    );
    // Granted public hosts only: loopback and private ranges are refused
    // before any connection.
    let ctx = DispatchContext::new(Session::trusted("t"));
    for url in [
        "http://127.0.0.1:9/",
        "http://169.254.169.254/latest/meta-data/",
        "http://localhost/",
    ] {
        let r = started
            .dispatcher
            .dispatch("http_request", json!({"url": url}), &ctx)
            .await;
        assert!(r.is_error(), "{url}: {}", r.content);
        assert!(
            r.content.contains("may not reach") || r.content.contains("not granted"),
            "{url}: {}",
            r.content
        );
    }
}

/// Where bubblewrap cannot run, `auto` falls back to `local` with a warning
/// at start and in `tools --status`.
#[test]
fn without_bubblewrap_exec_falls_back_loudly() {
    let (_dir, config) = project("[exec]\n");
    let out = std::process::Command::new(support::toolhost_bin())
        .args(["tools", "--status", "--config", &config.display().to_string()])
        .env("PATH", "/nonexistent")
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let status: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(status["exec"]["backend"], "local", "{status}");
    assert!(
        status["warnings"][0]
            .as_str()
            .unwrap()
            .contains("`local` backend"),
        "{status}"
    );
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("bubblewrap does not work"),
        "{out:?}"
    );
}
