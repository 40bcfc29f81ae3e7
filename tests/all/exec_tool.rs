//! The `exec` and `process` built-in tools, with the approval gate in front
//! of every command, and `toolhost check-command`.

use std::process::Command;
use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};
use toolhost::internal::approval::{ApprovalGate, ApprovalPolicy};
use toolhost::internal::exec::{
    BackgroundManager, ExecSettings, ExecTool, LocalBackend, ProcessTool, ReceiptStore,
};
use toolhost::internal::registry::{CallContext, Tool};

fn tools(receipts: &std::path::Path) -> (ExecTool, ProcessTool) {
    let backend = Arc::new(LocalBackend::default());
    // Headless: no callback, so a flagged command can only be denied.
    let gate = Arc::new(ApprovalGate::new(ApprovalPolicy::default()));
    let store = ReceiptStore::new(receipts, Duration::from_secs(3600), 100);
    let background = Arc::new(BackgroundManager::new(backend.clone(), store));
    let exec = ExecTool::new(backend, gate, background.clone(), ExecSettings::default());
    (exec, ProcessTool::new(background))
}

fn session(id: &str) -> CallContext {
    CallContext {
        session_id: Some(id.into()),
        ..CallContext::default()
    }
}

async fn call(tool: &dyn Tool, args: Value, ctx: CallContext) -> Value {
    serde_json::from_str(&tool.call(args, ctx).await.unwrap().content).unwrap()
}

#[tokio::test]
async fn a_benign_command_runs() {
    let dir = tempfile::tempdir().unwrap();
    let (exec, _) = tools(dir.path());
    let out = call(
        &exec,
        json!({"command": "echo 'rm -rf /' && exit 4"}),
        session("s"),
    )
    .await;
    assert_eq!(out["stdout"], "rm -rf /\n");
    assert_eq!(out["exit_code"], 4);
    assert_eq!(out["ok"], false);
}

#[tokio::test]
async fn headless_a_dangerous_command_is_denied_never_run() {
    let dir = tempfile::tempdir().unwrap();
    let victim = dir.path().join("victim");
    std::fs::create_dir(&victim).unwrap();
    let (exec, _) = tools(dir.path());
    let command = format!("rm -rf {}", victim.display());
    for attempt in 1..=3 {
        let out = call(&exec, json!({ "command": command }), session("s")).await;
        assert_eq!(out["status"], "blocked", "{out}");
        let text = out["error"].as_str().unwrap();
        assert!(
            text.starts_with("BLOCKED: ") && text.contains("Do NOT retry"),
            "{text}"
        );
        if attempt == 3 {
            assert!(
                text.to_lowercase().contains("stop"),
                "after three denials: {text}"
            );
        }
    }
    assert!(victim.exists(), "the command must not have run");
}

#[tokio::test]
async fn background_processes_belong_to_their_session() {
    let dir = tempfile::tempdir().unwrap();
    let (exec, process) = tools(dir.path());
    let started = call(
        &exec,
        json!({"command": "echo started; sleep 30", "background": true}),
        session("a"),
    )
    .await;
    let handle = started["handle"].as_str().unwrap().to_string();
    let poll = call(
        &process,
        json!({"action": "poll", "handle": handle}),
        session("a"),
    )
    .await;
    assert_eq!(poll["state"], "running");
    let other = process
        .call(json!({"action": "poll", "handle": handle}), session("b"))
        .await;
    assert!(other.is_err(), "another session must not see the process");
    call(
        &process,
        json!({"action": "kill", "handle": handle}),
        session("a"),
    )
    .await;
    let mut state = Value::Null;
    for _ in 0..100 {
        state = call(
            &process,
            json!({"action": "poll", "handle": handle}),
            session("a"),
        )
        .await;
        if state["state"] == "exited" {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(state["killed"], true, "{state}");
}

#[test]
fn check_command_prints_the_verdict_without_running_anything() {
    let dir = tempfile::tempdir().unwrap();
    let marker = dir.path().join("marker");
    std::fs::create_dir(&marker).unwrap();
    let run = |cmd: &str| -> Value {
        let out = Command::new(env!("CARGO_BIN_EXE_toolhost"))
            .args(["check-command", cmd])
            .output()
            .unwrap();
        assert!(out.status.success());
        serde_json::from_slice(&out.stdout).unwrap()
    };
    let verdict = run(&format!("sudo /usr/bin/rm -rf {}", marker.display()));
    assert_eq!(verdict["dangerous"], true);
    assert!(
        verdict["categories"]
            .as_array()
            .unwrap()
            .iter()
            .any(|c| c == "recursive_delete"),
        "{verdict}"
    );
    assert!(
        verdict["matches"][0]["matched"]
            .as_str()
            .unwrap()
            .contains("rm -rf"),
        "{verdict}"
    );
    assert!(marker.exists());
    assert_eq!(run("grep 'DROP TABLE' dump.sql")["dangerous"], false);
}

#[tokio::test]
async fn the_cwd_argument_cannot_slip_a_command_past_the_gate() {
    let dir = tempfile::tempdir().unwrap();
    let (exec, _) = tools(dir.path());
    let out = call(
        &exec,
        json!({"command": "echo pwned > passwd", "cwd": "/etc"}),
        session("s"),
    )
    .await;
    assert_eq!(out["status"], "blocked", "{out}");
    assert!(
        out["categories"].to_string().contains("system_config_overwrite"),
        "{out}"
    );
}

#[tokio::test]
async fn results_are_redacted_by_default() {
    let dir = tempfile::tempdir().unwrap();
    let (exec, _) = tools(dir.path());
    let out = call(
        &exec,
        json!({"command": "echo DB_PASSWORD=hunter22; echo 'Authorization: Bearer abcdef0123456789'"}),
        session("s"),
    )
    .await;
    assert_eq!(
        out["stdout"], "DB_PASSWORD=[REDACTED]\nAuthorization: Bearer [REDACTED]\n",
        "{out}"
    );
}

#[test]
fn check_command_applies_the_configs_rules() {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("toolhost.toml");
    std::fs::write(
        &config,
        "command_denylist = [\"mkfs\"]\ncommand_allowlist = [\"process_kill\"]\n",
    )
    .unwrap();
    let run = |args: &[&str]| -> Value {
        let out = Command::new(env!("CARGO_BIN_EXE_toolhost"))
            .arg("check-command")
            .args(args)
            .arg("--config")
            .arg(&config)
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        serde_json::from_slice(&out.stdout).unwrap()
    };
    assert_eq!(
        run(&["/usr/sbin/../sbin/mkfs -t ext4 /dev/sdb"])["rule"]["outcome"],
        "denylisted"
    );
    assert_eq!(run(&["\\mkfs /dev/sdb"])["rule"]["program"], "mkfs");
    assert_eq!(run(&["pkill node"])["rule"]["outcome"], "allowlisted");
    assert_eq!(run(&["rm -rf build"])["rule"]["outcome"], "needs_approval");
    assert_eq!(run(&["ls"])["rule"]["outcome"], "not_flagged");
    // Relative paths are judged in the working directory given.
    assert_eq!(run(&["echo x > passwd"])["dangerous"], false);
    let in_etc = run(&["echo x > passwd", "--cwd", "/etc"]);
    assert_eq!(in_etc["rule"]["outcome"], "needs_approval", "{in_etc}");
}
