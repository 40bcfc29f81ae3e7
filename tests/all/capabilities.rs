//! A plugin gets nothing it was not granted: directories and environment
//! variables are usable only when declared by the component and granted by
//! the operator, and a granted directory cannot be escaped.

use std::sync::Arc;

use toolhost::internal::capabilities::{DirGrant, DirMode, Grants};
use toolhost::{ErrorCode, LoadOptions, LoadedComponent};

use crate::{engine, support};

async fn probe(grants: Grants) -> Arc<LoadedComponent> {
    let options = LoadOptions {
        grants,
        ..Default::default()
    };
    engine()
        .load_file(&support::plugin_path("probe"), options)
        .await
        .unwrap()
}

async fn call(c: &LoadedComponent, tool: &str, args: serde_json::Value) -> toolhost::Result<String> {
    c.call(tool, &args.to_string(), &Default::default(), None, 1)
        .await
        .result
        .map(|output| output.content)
}

fn data_dir(mode: DirMode) -> (tempfile::TempDir, Grants) {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("note.txt"), "inside").unwrap();
    let grants = Grants {
        dirs: vec![DirGrant {
            host: dir.path().into(),
            guest: "/data".into(),
            mode,
        }],
        ..Default::default()
    };
    (dir, grants)
}

#[tokio::test]
async fn inspect_shows_what_a_component_declares() {
    let c = probe(Grants::default()).await;
    assert_eq!(c.declared().dirs, ["/data"]);
    assert_eq!(c.declared().env, ["PROBE_VISIBLE", "PROBE_UNGRANTED"]);
    let info = c.describe();
    assert_eq!(info["capabilities"]["declared"]["dirs"][0], "/data");
    assert_eq!(
        info["capabilities"]["granted"]["not_granted"]
            .as_array()
            .unwrap()
            .len(),
        3
    );
}

#[tokio::test]
async fn without_a_grant_no_file_can_be_read_and_the_error_names_the_grant() {
    let c = probe(Grants::default()).await;
    for path in ["/data/note.txt", "/etc/passwd", "note.txt"] {
        let err = call(&c, "read_path", serde_json::json!({ "path": path }))
            .await
            .unwrap_err();
        assert_eq!(err.code(), ErrorCode::ToolFailed);
        assert!(
            err.message().contains("not granted to it: dir /data"),
            "{}",
            err.message()
        );
    }
}

#[tokio::test]
async fn a_granted_directory_is_readable_and_read_only_unless_rw() {
    let (dir, grants) = data_dir(DirMode::Ro);
    let c = probe(grants).await;
    assert_eq!(
        call(&c, "read_path", serde_json::json!({"path": "/data/note.txt"}))
            .await
            .unwrap(),
        r#""inside""#
    );
    let err = call(
        &c,
        "write_path",
        serde_json::json!({"path": "/data/new.txt", "text": "x"}),
    )
    .await
    .unwrap_err();
    assert_eq!(err.code(), ErrorCode::ToolFailed);
    assert!(!dir.path().join("new.txt").exists());

    let (dir, grants) = data_dir(DirMode::Rw);
    let c = probe(grants).await;
    call(
        &c,
        "write_path",
        serde_json::json!({"path": "/data/new.txt", "text": "written"}),
    )
    .await
    .unwrap();
    assert_eq!(
        std::fs::read_to_string(dir.path().join("new.txt")).unwrap(),
        "written"
    );
}

/// A granted directory is opened for each call: a call sees the directory
/// at the granted path when it runs, not one an earlier call opened.
#[tokio::test]
async fn a_granted_directory_is_opened_afresh_for_each_call() {
    let (dir, grants) = data_dir(DirMode::Ro);
    let c = probe(grants).await;
    let read = || call(&c, "read_path", serde_json::json!({"path": "/data/note.txt"}));
    assert_eq!(read().await.unwrap(), r#""inside""#);
    let moved = tempfile::tempdir().unwrap();
    std::fs::rename(dir.path(), moved.path().join("old")).unwrap();
    std::fs::create_dir(dir.path()).unwrap();
    std::fs::write(dir.path().join("note.txt"), "replaced").unwrap();
    assert_eq!(read().await.unwrap(), r#""replaced""#);
}

#[tokio::test]
async fn no_path_leaves_a_granted_directory() {
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(outside.path().join("secret.txt"), "secret").unwrap();
    let (dir, grants) = data_dir(DirMode::Rw);
    std::os::unix::fs::symlink(outside.path().join("secret.txt"), dir.path().join("link")).unwrap();
    std::os::unix::fs::symlink(outside.path(), dir.path().join("linkdir")).unwrap();
    let c = probe(grants).await;
    let secret = outside.path().join("secret.txt").display().to_string();
    for path in [
        "/data/../secret.txt".to_string(),
        format!("/data/../../../..{secret}"),
        secret.clone(),
        "/data/link".into(),
        "/data/linkdir/secret.txt".into(),
    ] {
        let result = call(&c, "read_path", serde_json::json!({ "path": path })).await;
        assert!(result.is_err(), "{path} must not be readable, got {result:?}");
    }
    let escaped = call(
        &c,
        "write_path",
        serde_json::json!({"path": "/data/linkdir/planted", "text": "x"}),
    )
    .await;
    assert!(escaped.is_err());
    assert!(!outside.path().join("planted").exists());
}

#[tokio::test]
async fn environment_variables_need_a_declaration_and_a_grant() {
    // SAFETY: `set_var` is unsafe because a thread reading the environment
    // through libc at the same moment could see a torn update. Every reader in
    // this process goes through `std::env`, which serializes access with its
    // own lock, and no other test uses these names.
    unsafe {
        std::env::set_var("PROBE_VISIBLE", "yes");
        std::env::set_var("PROBE_UNGRANTED", "no");
        std::env::set_var("PROBE_UNDECLARED", "no");
    }
    let grants = Grants {
        env: vec!["PROBE_VISIBLE".into(), "PROBE_UNDECLARED".into()],
        ..Default::default()
    };
    let c = probe(grants).await;
    assert_eq!(
        call(&c, "list_env", serde_json::json!({})).await.unwrap(),
        r#"{"result":["PROBE_VISIBLE"]}"#
    );
    assert_eq!(
        call(&c, "get_env", serde_json::json!({"name": "PROBE_VISIBLE"}))
            .await
            .unwrap(),
        r#""yes""#
    );
    assert_eq!(
        call(&c, "get_env", serde_json::json!({"name": "PROBE_UNGRANTED"}))
            .await
            .unwrap(),
        r#"{"result":null}"#
    );
    assert_eq!(
        call(&c, "get_env", serde_json::json!({"name": "PROBE_UNDECLARED"}))
            .await
            .unwrap(),
        r#"{"result":null}"#
    );
    // Nothing of the host's own environment leaks without a grant.
    let none = probe(Grants::default()).await;
    assert_eq!(
        call(&none, "list_env", serde_json::json!({})).await.unwrap(),
        r#"{"result":[]}"#
    );
}

#[tokio::test]
async fn a_grant_of_a_missing_directory_is_a_config_error() {
    let grants = Grants {
        dirs: vec![DirGrant {
            host: "/nonexistent/toolhost".into(),
            guest: "/data".into(),
            mode: DirMode::Ro,
        }],
        ..Default::default()
    };
    let err = engine()
        .load_file(
            &support::plugin_path("probe"),
            LoadOptions {
                grants,
                ..Default::default()
            },
        )
        .await
        .unwrap_err();
    assert_eq!(err.code(), ErrorCode::Config);
}
