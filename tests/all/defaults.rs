//! The default configuration is safe on a shared machine: `exec` runs in
//! the bubblewrap sandbox where it works (else on `local`, loudly), and the
//! standard http plugin reaches public hosts only.

use serde_json::{Value, json};
use toolhost::internal::dispatch::{DispatchContext, Session};

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

/// Regression (hardening): with the default config and no one to approve,
/// these reached a destructive action through one level of indirection and
/// deleted the directory.
#[tokio::test]
async fn indirect_destructive_commands_are_blocked_headless() {
    let (dir, config) = default_project();
    let started = start(&config).await;
    let workspace = dir.path().join(".toolhost/workspace");
    let ctx = DispatchContext::new(Session::trusted("model"));
    let call = |tool: &'static str, args: Value| {
        let d = started.dispatcher.clone();
        let ctx = ctx.clone();
        async move { d.dispatch(tool, args, &ctx).await.json() }
    };
    std::fs::create_dir(workspace.join("victim")).unwrap();
    std::fs::write(workspace.join("victim/keep.txt"), "data").unwrap();
    std::fs::write(workspace.join("a.txt"), "x").unwrap();
    // A script written with the files tool, then run: opaque.
    let written = call(
        "write_file",
        json!({"path": "cleanup.sh", "content": "rm -rf victim\n"}),
    )
    .await;
    assert!(written.get("error").is_none(), "{written}");
    for command in [
        "tar cf /tmp/x.tar a.txt --checkpoint=1 --checkpoint-action=exec='rm -rf victim'",
        "sh cleanup.sh",
        ". ./cleanup.sh",
        "alias c='rm -rf'; c victim",
        "f() { rm -rf \"$1\"; }; f victim",
        "find . -name victim -exec rm -rf {} +",
        "echo victim | xargs rm -rf",
        "git -c alias.x='!rm -rf victim' x",
        "perl -e 'use File::Path; rmtree(\"victim\")'",
        "python3 -c 'import shutil; shutil.rmtree(\"victim\")'",
        "node -e 'require(\"fs\").rmSync(\"victim\", {recursive: true})'",
    ] {
        let r = call("exec", json!({"command": command})).await;
        assert_eq!(r["status"], "blocked", "{command}: {r}");
        assert!(
            workspace.join("victim/keep.txt").exists(),
            "{command} deleted the directory"
        );
    }
}

/// `check-command` says when it cannot see through a command.
#[test]
fn check_command_reports_opaque_commands() {
    let run = |command: &str| -> Value {
        let out = std::process::Command::new(support::toolhost_bin())
            .args(["check-command", command])
            .output()
            .unwrap();
        serde_json::from_slice(&out.stdout).unwrap()
    };
    let opaque = run("sh cleanup.sh");
    assert_eq!(
        (opaque["dangerous"].clone(), opaque["opaque"].clone()),
        (json!(true), json!(true)),
        "{opaque}"
    );
    let seen = run("echo 'rm -rf d' > f; sh f");
    assert_eq!(seen["dangerous"], true, "{seen}");
    assert!(
        seen["categories"].to_string().contains("recursive_delete"),
        "{seen}"
    );
    let benign = run("ls -la");
    assert_eq!(
        (benign["dangerous"].clone(), benign["opaque"].clone()),
        (json!(false), json!(false)),
        "{benign}"
    );
}

/// A config replaces the standard one wholly: `serve` says so when the
/// config it read names nothing to serve but the built-ins (a
/// `toolhost.toml` written for one section), and not when it does.
#[test]
fn a_config_that_names_no_plugins_is_told_the_standard_ones_are_not_served() {
    let serve_with = |config: &str| {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("toolhost.toml"), config).unwrap();
        let mut child = std::process::Command::new(support::toolhost_bin())
            .args(["serve", "--stdio"])
            .current_dir(dir.path())
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        // Standard input at its end: the server ends once it has started.
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(120);
        while child.try_wait().unwrap().is_none() {
            assert!(std::time::Instant::now() < deadline, "serve did not end at EOF");
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
        let mut stderr = String::new();
        std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut stderr).unwrap();
        stderr
    };
    let stderr = serve_with("[metrics]\nenabled = true\n");
    assert!(
        stderr.contains("toolhost.toml names no plugins") && stderr.contains("bundled = \"files\""),
        "{stderr}"
    );
    let stderr = serve_with("[[plugins]]\nbundled = \"calc\"\n");
    assert!(!stderr.contains("names no plugins"), "{stderr}");
}
