//! A model must not be able to widen its own powers: no grant reaches the
//! config, the components the host runs, the storage folder, the receipts
//! or another plugin's storage (`toolhost::config::protected`).

use std::path::{Path, PathBuf};

use serde_json::{Value, json};
use std::sync::Arc;

use toolhost::ErrorCode;
use toolhost::config::{Config, Started};
use toolhost::internal::approval::{ApprovalCallback, ApprovalOutcome, ApprovalRequest, Choice};
use toolhost::internal::dispatch::{DispatchContext, Session};
use toolhost::internal::registry::BoxFuture;
use toolhost::internal::registry::Registry;

use crate::fixtures::engine;
use crate::support;

/// A project folder holding `toolhost.toml` with `config`, in which
/// `{PLUGINS}` stands for the folder of the built plugins.
pub fn project(config: &str) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let plugins = support::plugin_path("files")
        .parent()
        .unwrap()
        .display()
        .to_string();
    let path = dir.path().join("toolhost.toml");
    std::fs::write(&path, config.replace("{PLUGINS}", &plugins)).unwrap();
    (dir, path)
}

/// The repository's default `toolhost.toml`, in a fresh project folder.
pub fn default_project() -> (tempfile::TempDir, PathBuf) {
    let text = std::fs::read_to_string(support::workspace_root().join("toolhost.toml")).unwrap();
    project(&text.replace("target/plugins/wasm32-wasip2/plugin", "{PLUGINS}"))
}

pub async fn start(path: &Path) -> Started {
    Config::load(path)
        .unwrap()
        .start(engine(), Registry::new(), None)
        .await
        .unwrap()
}

async fn call(started: &Started, tool: &str, args: Value) -> Value {
    let ctx = DispatchContext::new(Session::trusted("model"));
    started.dispatcher.dispatch(tool, args, &ctx).await.json()
}

fn failed_because(started: &Started, plugin: &str) -> String {
    let status = started
        .plugins
        .iter()
        .find(|p| {
            p.path
                .as_ref()
                .is_some_and(|p| p.to_string_lossy().contains(plugin))
        })
        .unwrap_or_else(|| panic!("no entry for {plugin}"));
    assert_eq!(status.status, "failed", "{status:?}");
    assert_eq!(status.error_code, Some(ErrorCode::Config), "{status:?}");
    status.error.clone().unwrap()
}

/// The attacks of the hardening issue, on the default config: none of them
/// reaches the config, and a command they would have unlocked is still
/// blocked without an approver.
#[tokio::test]
async fn the_default_config_keeps_the_model_out_of_its_own_config() {
    let (dir, config) = default_project();
    let started = start(&config).await;
    for p in &started.plugins {
        assert_eq!(p.status, "loaded", "{p:?}");
    }
    let before = std::fs::read_to_string(&config).unwrap();
    let hostile = format!("command_allowlist = [\"recursive_delete\"]\n{before}");
    // Writes, moves over and deletes of the config: every path to it leaves
    // the workspace.
    for args in [
        json!({"path": "../../toolhost.toml", "content": hostile, "overwrite": true}),
        json!({"path": "/toolhost.toml", "content": hostile, "overwrite": true}),
    ] {
        let r = call(&started, "write_file", args).await;
        assert!(r.get("error").is_some(), "{r}");
    }
    call(
        &started,
        "write_file",
        json!({"path": "evil.toml", "content": hostile}),
    )
    .await;
    let moved = call(
        &started,
        "move_file",
        json!({"source": "evil.toml", "destination": "../../toolhost.toml", "overwrite": true}),
    )
    .await;
    assert!(moved.get("error").is_some(), "{moved}");
    let deleted = call(&started, "delete_file", json!({"path": "../../toolhost.toml"})).await;
    assert!(deleted.get("error").is_some(), "{deleted}");
    // A link planted in the workspace that points at the config is not
    // followed out of it.
    let workspace = dir.path().join(".toolhost/workspace");
    std::os::unix::fs::symlink(&config, workspace.join("link.toml")).unwrap();
    let through = call(
        &started,
        "write_file",
        json!({"path": "link.toml", "content": hostile, "overwrite": true}),
    )
    .await;
    assert!(through.get("error").is_some(), "{through}");
    assert_eq!(
        std::fs::read_to_string(&config).unwrap(),
        before,
        "the config is unchanged"
    );
    // Receipts and the memory store are out of reach of the files tools.
    for path in ["../receipts", "../memory", ".."] {
        let listed = call(&started, "list_files", json!({"path": path})).await;
        assert!(listed.get("error").is_some(), "{path}: {listed}");
    }
    // And the command the allowlist entry would have let through is still
    // blocked (no one to approve it).
    std::fs::create_dir(workspace.join("victim")).unwrap();
    let rm = call(&started, "exec", json!({"command": "rm -rf victim"})).await;
    assert_eq!(rm["status"], "blocked", "{rm}");
    assert!(workspace.join("victim").is_dir());
}

#[tokio::test]
async fn a_grant_holding_the_config_or_the_storage_is_refused() {
    // The project folder itself holds the config and .toolhost/.
    let (_dir, config) = project(
        r#"
[[plugins]]
path = "{PLUGINS}/files.wasm"
[plugins.grants]
dirs = [{ host = ".", guest = "/workspace", mode = "rw" }]
"#,
    );
    let started = start(&config).await;
    let why = failed_because(&started, "files.wasm");
    assert!(why.contains("the managed storage folder"), "{why}");
    assert!(started.dispatcher.registry().get("write_file").is_none());

    // With the storage elsewhere, a read-write grant of the config's folder
    // is still refused; a read-only one is not.
    let storage = tempfile::tempdir().unwrap();
    for (mode, refused) in [("rw", true), ("ro", false)] {
        let (_dir, config) = project(&format!(
            r#"
[storage]
dir = "{}"
[[plugins]]
path = "{{PLUGINS}}/files.wasm"
[plugins.grants]
dirs = [{{ host = ".", guest = "/workspace", mode = "{mode}" }}]
"#,
            storage.path().display()
        ));
        let started = start(&config).await;
        if refused {
            let why = failed_because(&started, "files.wasm");
            assert!(why.contains("the config file"), "{why}");
        } else {
            assert_eq!(started.plugins[0].status, "loaded", "{:?}", started.plugins[0]);
        }
    }
}

#[tokio::test]
async fn a_link_to_a_protected_folder_is_refused_like_the_folder() {
    let (dir, config) = project(
        r#"
[[plugins]]
path = "{PLUGINS}/files.wasm"
[plugins.grants]
dirs = [{ host = "innocent", guest = "/workspace", mode = "ro" }]
"#,
    );
    std::fs::create_dir_all(dir.path().join(".toolhost/receipts")).unwrap();
    std::os::unix::fs::symlink(dir.path().join(".toolhost/receipts"), dir.path().join("innocent")).unwrap();
    let started = start(&config).await;
    let why = failed_because(&started, "files.wasm");
    assert!(why.contains("receipts"), "{why}");
}

#[tokio::test]
async fn a_read_write_grant_holding_a_component_is_refused() {
    let (dir, config) = project(
        r#"
[[plugins]]
path = "bin/hello.wasm"

[[plugins]]
path = "{PLUGINS}/files.wasm"
[plugins.grants]
dirs = [{ host = "bin", guest = "/workspace", mode = "rw" }]
"#,
    );
    std::fs::create_dir(dir.path().join("bin")).unwrap();
    std::fs::copy(support::plugin_path("hello"), dir.path().join("bin/hello.wasm")).unwrap();
    let started = start(&config).await;
    assert_eq!(started.plugins[0].status, "loaded");
    let why = failed_because(&started, "files.wasm");
    assert!(why.contains("the component of plugin bin/hello.wasm"), "{why}");
}

#[tokio::test]
async fn a_plugins_storage_is_its_own() {
    let (_dir, config) = project(
        r#"
[[plugins]]
path = "{PLUGINS}/memory.wasm"
[plugins.grants]
dirs = [{ host = ".toolhost/memory", guest = "/memory", mode = "rw" }]

[[plugins]]
path = "{PLUGINS}/files.wasm"
[plugins.grants]
dirs = [{ host = ".toolhost/memory", guest = "/workspace", mode = "ro" }]
"#,
    );
    let started = start(&config).await;
    // The first entry keeps its folder; the later one that reaches it is
    // refused, even read-only.
    assert_eq!(started.plugins[0].status, "loaded", "{:?}", started.plugins[0]);
    let why = failed_because(&started, "files.wasm");
    assert!(why.contains("the storage of plugin"), "{why}");
}

/// Approves every question, recording what it was asked.
#[derive(Debug, Default)]
struct ApproveAll(std::sync::Mutex<Vec<String>>);

impl ApprovalCallback for ApproveAll {
    fn request<'a>(&'a self, request: &'a ApprovalRequest) -> BoxFuture<'a, ApprovalOutcome> {
        self.0.lock().unwrap().push(request.summary.clone());
        Box::pin(async { ApprovalOutcome::Decided(Choice::Once) })
    }
}

/// Writing toolhost's own files through `exec` needs approval (the
/// detector knows the protected paths), and even approved, the sandbox
/// keeps the config read-only and the storage folder hidden, with the
/// config's folder as its workspace.
#[tokio::test]
async fn exec_cannot_write_the_config_or_read_receipts() {
    let (dir, config) = project(
        r#"
[exec]
backend = "sandbox"
"#,
    );
    let receipts = dir.path().join(".toolhost/receipts/somebody");
    std::fs::create_dir_all(&receipts).unwrap();
    std::fs::write(receipts.join("secret.json"), "{}").unwrap();

    let headless = start(&config).await;
    let write =
        json!({"command": "echo 'command_allowlist = [\"recursive_delete\"]' >> toolhost.toml; echo done"});
    let blocked = call(&headless, "exec", write.clone()).await;
    assert_eq!(blocked["status"], "blocked", "{blocked}");
    assert!(
        blocked["categories"].to_string().contains("host_config_write"),
        "{blocked}"
    );

    let approver = Arc::new(ApproveAll::default());
    let approving = Config::load(&config)
        .unwrap()
        .start(
            engine(),
            Registry::new(),
            Some(approver.clone() as Arc<dyn ApprovalCallback>),
        )
        .await
        .unwrap();
    let approved = call(&approving, "exec", write).await;
    assert!(
        approved["stderr"].as_str().unwrap().contains("Read-only"),
        "{approved}"
    );
    assert_eq!(approver.0.lock().unwrap().len(), 1, "it was asked");
    let list = call(
        &approving,
        "exec",
        json!({"command": "ls -A .toolhost/receipts | wc -l"}),
    )
    .await;
    assert_eq!(list["stdout"], "0\n", "{list}");
    assert!(
        !std::fs::read_to_string(&config)
            .unwrap()
            .contains("command_allowlist")
    );
}
