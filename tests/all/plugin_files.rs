//! The `files` plugin, as built, on real temporary workspaces: every tool's
//! results and main errors, its caps, and that no path leaves the workspace.

use std::fs;
use std::sync::Arc;

use serde_json::{Value, json};
use toolhost::internal::capabilities::DirMode;
use toolhost::{ErrorCode, LoadedComponent};

use crate::{call_err as err, call_ok as ok, load, load_with_dir};

/// A workspace with a small tree in it, and the plugin granted it read-write.
async fn workspace() -> (tempfile::TempDir, Arc<LoadedComponent>) {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    fs::create_dir_all(root.join("src/nested")).unwrap();
    fs::write(root.join("README.md"), "# Title\nhello world\n").unwrap();
    fs::write(
        root.join("src/main.rs"),
        "fn main() {\n    println!(\"Hello\");\n}\n",
    )
    .unwrap();
    fs::write(root.join("src/nested/deep.rs"), "// deep\nconst A: u8 = 1;\n").unwrap();
    fs::write(root.join(".hidden"), "secret hello\n").unwrap();
    let c = load_with_dir("files", root, "/workspace", DirMode::Rw).await;
    (dir, c)
}

fn paths(list: &Value) -> Vec<&str> {
    list.as_array()
        .unwrap()
        .iter()
        .map(|e| e["path"].as_str().unwrap())
        .collect()
}

#[tokio::test]
async fn list_files_reports_kinds_and_sizes_and_honours_depth_and_caps() {
    let (_dir, c) = workspace().await;
    let top = ok(&c, "list_files", json!({})).await;
    assert_eq!(paths(&top["entries"]), [".hidden", "README.md", "src"]);
    assert_eq!(top["entries"][1]["kind"], "file");
    assert_eq!(top["entries"][1]["size"], 20);
    assert_eq!(top["entries"][2]["kind"], "dir");
    assert_eq!(top["truncated"], false);

    let all = ok(
        &c,
        "list_files",
        json!({"recursive": true, "include_hidden": false}),
    )
    .await;
    assert_eq!(
        paths(&all["entries"]),
        [
            "README.md",
            "src",
            "src/main.rs",
            "src/nested",
            "src/nested/deep.rs"
        ]
    );
    let shallow = ok(&c, "list_files", json!({"recursive": true, "max_depth": 2})).await;
    assert!(!paths(&shallow["entries"]).contains(&"src/nested/deep.rs"));
    let capped = ok(&c, "list_files", json!({"recursive": true, "max_entries": 2})).await;
    assert_eq!(capped["entries"].as_array().unwrap().len(), 2);
    assert_eq!(capped["truncated"], true);

    let sub = ok(&c, "list_files", json!({"path": "src"})).await;
    assert_eq!(paths(&sub["entries"]), ["src/main.rs", "src/nested"]);
    let e = err(&c, "list_files", json!({"path": "README.md"})).await;
    assert_eq!(e.code(), ErrorCode::InvalidArguments);
    let e = err(&c, "list_files", json!({"path": "missing"})).await;
    assert_eq!(e.code(), ErrorCode::ToolFailed);
    assert!(e.message().contains("no such file"), "{}", e.message());
}

#[tokio::test]
async fn file_info_describes_a_path() {
    let (_dir, c) = workspace().await;
    let info = ok(&c, "file_info", json!({"path": "src/main.rs"})).await;
    assert_eq!(info["kind"], "file");
    assert_eq!(info["mime_type"], "text/x-rust");
    assert!(info["size"].as_u64().unwrap() > 10);
    assert!(info["modified"].as_str().unwrap().ends_with('Z'));
    let dir = ok(&c, "file_info", json!({"path": "src"})).await;
    assert_eq!(dir["kind"], "dir");
    let e = err(&c, "file_info", json!({"path": "nope.txt"})).await;
    assert_eq!(e.code(), ErrorCode::ToolFailed);
}

#[tokio::test]
async fn read_file_returns_text_and_refuses_large_binary_and_folders() {
    let (dir, c) = workspace().await;
    let text = ok(&c, "read_file", json!({"path": "README.md"})).await;
    assert_eq!(text["content"], "# Title\nhello world\n");
    assert_eq!(text["total_lines"], 2);

    fs::write(dir.path().join("big.txt"), "x".repeat(300 << 10)).unwrap();
    let e = err(&c, "read_file", json!({"path": "big.txt"})).await;
    assert_eq!(e.code(), ErrorCode::InvalidArguments);
    assert!(e.message().contains("cap of 262144 bytes"), "{}", e.message());
    let e = err(&c, "read_file", json!({"path": "README.md", "max_bytes": 5})).await;
    assert!(e.message().contains("code_read"), "{}", e.message());
    // The cap cannot be raised past the hard maximum.
    fs::write(dir.path().join("huge.txt"), "x".repeat(600 << 10)).unwrap();
    let e = err(
        &c,
        "read_file",
        json!({"path": "huge.txt", "max_bytes": 10_000_000}),
    )
    .await;
    assert!(e.message().contains("cap of 524288"), "{}", e.message());

    fs::write(dir.path().join("blob.bin"), [0u8, 159, 146, 150]).unwrap();
    let e = err(&c, "read_file", json!({"path": "blob.bin"})).await;
    assert_eq!(e.code(), ErrorCode::ToolFailed);
    assert!(e.message().contains("not UTF-8 text"), "{}", e.message());
    let e = err(&c, "read_file", json!({"path": "src"})).await;
    assert_eq!(e.code(), ErrorCode::InvalidArguments);
}

#[tokio::test]
async fn code_read_returns_a_numbered_window_and_the_total() {
    let (dir, c) = workspace().await;
    let text: String = (1..=10).map(|i| format!("line {i}\r\n")).collect();
    fs::write(dir.path().join("ten.txt"), text).unwrap();
    let w = ok(
        &c,
        "code_read",
        json!({"path": "ten.txt", "start_line": 3, "num_lines": 2}),
    )
    .await;
    assert_eq!(w["total_lines"], 10);
    assert_eq!(w["start_line"], 3);
    assert_eq!(w["end_line"], 4);
    assert_eq!(w["has_more"], true);
    assert_eq!(
        w["lines"],
        json!([{"number": 3, "text": "line 3"}, {"number": 4, "text": "line 4"}])
    );
    let tail = ok(&c, "code_read", json!({"path": "ten.txt", "start_line": 9})).await;
    assert_eq!(tail["end_line"], 10);
    assert_eq!(tail["has_more"], false);
    for bad in [
        json!({"path": "ten.txt", "start_line": 11}),
        json!({"path": "ten.txt", "start_line": 0}),
    ] {
        assert_eq!(
            err(&c, "code_read", bad).await.code(),
            ErrorCode::InvalidArguments
        );
    }
    // Works past read_file's cap, and cuts over-long lines.
    fs::write(
        dir.path().join("wide.txt"),
        format!("{}\nend\n", "y".repeat(400 << 10)),
    )
    .unwrap();
    let w = ok(&c, "code_read", json!({"path": "wide.txt"})).await;
    assert_eq!(w["total_lines"], 2);
    assert_eq!(w["lines"][0]["cut"], true);
    assert_eq!(w["lines"][1]["text"], "end");
}

#[tokio::test]
async fn write_file_creates_overwrites_only_when_asked_and_is_capped() {
    let (dir, c) = workspace().await;
    let w = ok(
        &c,
        "write_file",
        json!({"path": "out/new/a.txt", "content": "one"}),
    )
    .await;
    assert_eq!(
        w,
        json!({"path": "out/new/a.txt", "bytes_written": 3, "created": true})
    );
    assert_eq!(
        fs::read_to_string(dir.path().join("out/new/a.txt")).unwrap(),
        "one"
    );
    let w = ok(
        &c,
        "write_file",
        json!({"path": "out/new/a.txt", "content": "two"}),
    )
    .await;
    assert_eq!(w["created"], false);
    assert_eq!(
        fs::read_to_string(dir.path().join("out/new/a.txt")).unwrap(),
        "two"
    );

    let e = err(
        &c,
        "write_file",
        json!({"path": "out/new/a.txt", "content": "3", "overwrite": false}),
    )
    .await;
    assert_eq!(e.code(), ErrorCode::InvalidArguments);
    assert!(e.message().contains("already exists"), "{}", e.message());
    assert_eq!(
        fs::read_to_string(dir.path().join("out/new/a.txt")).unwrap(),
        "two"
    );
    let e = err(
        &c,
        "write_file",
        json!({"path": "x/y.txt", "content": "", "create_parents": false}),
    )
    .await;
    assert_eq!(e.code(), ErrorCode::InvalidArguments);
    assert!(!dir.path().join("x").exists());
    let e = err(
        &c,
        "write_file",
        json!({"path": "big.txt", "content": "z".repeat((1 << 20) + 1)}),
    )
    .await;
    assert!(e.message().contains("cap of 1048576"), "{}", e.message());
    assert!(!dir.path().join("big.txt").exists());
    assert_eq!(
        err(&c, "write_file", json!({"path": "src", "content": ""}))
            .await
            .code(),
        ErrorCode::InvalidArguments
    );
}

#[tokio::test]
async fn move_file_renames_and_refuses_to_clobber() {
    let (dir, c) = workspace().await;
    let m = ok(
        &c,
        "move_file",
        json!({"source": "README.md", "destination": "docs/README.md"}),
    )
    .await;
    assert_eq!(m["destination"], "docs/README.md");
    assert!(dir.path().join("docs/README.md").exists());
    assert!(!dir.path().join("README.md").exists());
    let e = err(
        &c,
        "move_file",
        json!({"source": "src/main.rs", "destination": "docs/README.md"}),
    )
    .await;
    assert!(e.message().contains("overwrite"), "{}", e.message());
    let m = ok(
        &c,
        "move_file",
        json!({"source": "src/main.rs", "destination": "docs/README.md", "overwrite": true}),
    )
    .await;
    assert_eq!(m["replaced"], true);
    let e = err(
        &c,
        "move_file",
        json!({"source": "src", "destination": "src/nested/inner"}),
    )
    .await;
    assert_eq!(e.code(), ErrorCode::InvalidArguments);
    let e = err(&c, "move_file", json!({"source": "gone", "destination": "b"})).await;
    assert_eq!(e.code(), ErrorCode::ToolFailed);
}

#[tokio::test]
async fn delete_file_needs_recursive_for_folders_and_never_deletes_the_root() {
    let (dir, c) = workspace().await;
    let d = ok(&c, "delete_file", json!({"path": "README.md"})).await;
    assert_eq!(d, json!({"path": "README.md", "kind": "file", "deleted": true}));
    assert!(!dir.path().join("README.md").exists());
    let e = err(&c, "delete_file", json!({"path": "src"})).await;
    assert!(e.message().contains("recursive"), "{}", e.message());
    assert!(dir.path().join("src/main.rs").exists());
    ok(&c, "delete_file", json!({"path": "src", "recursive": true})).await;
    assert!(!dir.path().join("src").exists());
    for root in [".", "", "src/.."] {
        let e = err(&c, "delete_file", json!({"path": root, "recursive": true})).await;
        assert_eq!(e.code(), ErrorCode::InvalidArguments);
    }
    assert!(dir.path().exists());
}

#[tokio::test]
async fn glob_files_matches_patterns_and_is_capped() {
    let (_dir, c) = workspace().await;
    let all = ok(&c, "glob_files", json!({"pattern": "**/*.rs"})).await;
    assert_eq!(paths(&all["matches"]), ["src/main.rs", "src/nested/deep.rs"]);
    let top = ok(&c, "glob_files", json!({"pattern": "*.rs", "path": "src"})).await;
    assert_eq!(paths(&top["matches"]), ["src/main.rs"]);
    let alt = ok(&c, "glob_files", json!({"pattern": "{README.md,src/*.rs}"})).await;
    assert_eq!(paths(&alt["matches"]), ["README.md", "src/main.rs"]);
    let hidden = ok(
        &c,
        "glob_files",
        json!({"pattern": "*hidden", "include_hidden": true}),
    )
    .await;
    assert_eq!(paths(&hidden["matches"]), [".hidden"]);
    let capped = ok(&c, "glob_files", json!({"pattern": "**/*", "max_results": 1})).await;
    assert_eq!(capped["matches"].as_array().unwrap().len(), 1);
    assert_eq!(capped["truncated"], true);
    for bad in ["a/[", "/etc/*", "../*"] {
        let e = err(&c, "glob_files", json!({ "pattern": bad })).await;
        assert_eq!(e.code(), ErrorCode::InvalidArguments, "{bad}");
    }
}

#[tokio::test]
async fn grep_finds_lines_with_context_and_honours_its_caps() {
    let (dir, c) = workspace().await;
    let r = ok(&c, "grep", json!({"pattern": "hel+o", "case_insensitive": true})).await;
    let found: Vec<_> = r["matches"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| (m["path"].as_str().unwrap(), m["line_number"].as_u64().unwrap()))
        .collect();
    assert_eq!(found, [("README.md", 2), ("src/main.rs", 2)]);
    assert_eq!(r["files_matched"], 2);
    let hidden = ok(&c, "grep", json!({"pattern": "secret", "include_hidden": true})).await;
    assert_eq!(hidden["matches"][0]["path"], ".hidden");

    let ctx = ok(
        &c,
        "grep",
        json!({"pattern": "println", "context_before": 1, "context_after": 5, "glob": "*.rs"}),
    )
    .await;
    assert_eq!(ctx["matches"][0]["before"], json!(["fn main() {"]));
    assert_eq!(ctx["matches"][0]["after"], json!(["}"]));

    // A fixed string is literal; a regex is not.
    fs::write(dir.path().join("dots.txt"), "a.b\naxb\n").unwrap();
    let fixed = ok(
        &c,
        "grep",
        json!({"pattern": "a.b", "fixed_string": true, "path": "dots.txt"}),
    )
    .await;
    assert_eq!(fixed["matches"].as_array().unwrap().len(), 1);
    let regex = ok(&c, "grep", json!({"pattern": "a.b", "path": "dots.txt"})).await;
    assert_eq!(regex["matches"].as_array().unwrap().len(), 2);

    let many: String = (0..50).map(|i| format!("match {i}\n")).collect();
    fs::write(dir.path().join("many.txt"), many).unwrap();
    let capped = ok(&c, "grep", json!({"pattern": "match", "max_matches": 7})).await;
    assert_eq!(capped["matches"].as_array().unwrap().len(), 7);
    assert_eq!(capped["truncated"], true);

    let sized = ok(
        &c,
        "grep",
        json!({"pattern": "match", "max_file_size_bytes": 100}),
    )
    .await;
    assert_eq!(sized["matches"].as_array().unwrap().len(), 0);
    assert_eq!(sized["skipped_too_large"], json!(["many.txt"]));

    let filtered = ok(&c, "grep", json!({"pattern": "const", "glob": "src/**/*.rs"})).await;
    assert_eq!(filtered["matches"][0]["path"], "src/nested/deep.rs");
    for bad in [
        json!({"pattern": "(unclosed"}),
        json!({"pattern": ""}),
        json!({"pattern": "x", "glob": "["}),
    ] {
        assert_eq!(err(&c, "grep", bad).await.code(), ErrorCode::InvalidArguments);
    }
}

#[tokio::test]
async fn no_path_leaves_the_workspace() {
    let outside = tempfile::tempdir().unwrap();
    fs::write(outside.path().join("secret.txt"), "secret").unwrap();
    let (dir, c) = workspace().await;
    std::os::unix::fs::symlink(outside.path().join("secret.txt"), dir.path().join("link")).unwrap();
    std::os::unix::fs::symlink(outside.path(), dir.path().join("linkdir")).unwrap();
    let secret = outside.path().join("secret.txt").display().to_string();

    // Lexical escapes are refused by the plugin itself, clearly.
    for path in [
        "../secret.txt",
        "src/../../x",
        secret.as_str(),
        "/workspace/README.md",
    ] {
        for (tool, args) in [
            ("read_file", json!({ "path": path })),
            ("code_read", json!({ "path": path })),
            ("file_info", json!({ "path": path })),
            ("list_files", json!({ "path": path })),
            ("write_file", json!({ "path": path, "content": "x" })),
            ("delete_file", json!({ "path": path })),
            ("grep", json!({ "pattern": "x", "path": path })),
            ("glob_files", json!({ "pattern": "*", "path": path })),
            ("move_file", json!({ "source": "README.md", "destination": path })),
            ("move_file", json!({ "source": path, "destination": "here" })),
        ] {
            let e = err(&c, tool, args).await;
            assert_eq!(e.code(), ErrorCode::InvalidArguments, "{tool} {path}: {e}");
            assert!(
                e.message().contains("leaves the workspace") || e.message().contains("absolute"),
                "{tool} {path}: {e}"
            );
        }
    }
    // Links out (absolute, relative, dangling) are refused by name when
    // read or written through: never a success for a write that did not
    // happen (the host's handle would refuse it anyway).
    std::os::unix::fs::symlink("../escape.txt", dir.path().join("dangling")).unwrap();
    std::os::unix::fs::symlink("src/../../escape", dir.path().join("climbing")).unwrap();
    for path in [
        "link",
        "linkdir/secret.txt",
        "linkdir/planted",
        "dangling",
        "climbing/x",
    ] {
        for (tool, args) in [
            ("read_file", json!({ "path": path })),
            ("code_read", json!({ "path": path })),
            ("write_file", json!({ "path": path, "content": "x" })),
            (
                "write_file",
                json!({ "path": path, "content": "x", "overwrite": false }),
            ),
        ] {
            let e = err(&c, tool, args).await;
            assert_eq!(e.code(), ErrorCode::InvalidArguments, "{tool} {path}: {e}");
            assert!(
                e.message().contains("outside the workspace"),
                "{tool} {path}: {e}"
            );
        }
    }
    assert!(!dir.path().parent().unwrap().join("escape.txt").exists());
    // A link that stays inside is followed, and `created` is about its
    // target.
    std::os::unix::fs::symlink("src/new.txt", dir.path().join("inner")).unwrap();
    let written = ok(&c, "write_file", json!({"path": "inner", "content": "in"})).await;
    assert_eq!(
        (written["path"].clone(), written["created"].clone()),
        (json!("inner"), json!(true))
    );
    assert_eq!(fs::read_to_string(dir.path().join("src/new.txt")).unwrap(), "in");
    let again = ok(&c, "write_file", json!({"path": "inner", "content": "again"})).await;
    assert_eq!(again["created"], false);
    assert_eq!(
        ok(&c, "read_file", json!({"path": "inner"})).await["content"],
        "again"
    );
    err(&c, "list_files", json!({"path": "linkdir"})).await;
    let g = ok(&c, "grep", json!({"pattern": "secret"})).await;
    assert_eq!(g["matches"], json!([]));
    assert!(!outside.path().join("planted").exists());
    assert_eq!(
        fs::read_to_string(outside.path().join("secret.txt")).unwrap(),
        "secret"
    );
}

#[tokio::test]
async fn a_read_only_grant_allows_reading_only() {
    let dir = tempfile::tempdir().unwrap();
    fs::write(dir.path().join("a.txt"), "a").unwrap();
    let c = load_with_dir("files", dir.path(), "/workspace", DirMode::Ro).await;
    assert_eq!(
        ok(&c, "read_file", json!({"path": "a.txt"})).await["content"],
        "a"
    );
    err(&c, "write_file", json!({"path": "b.txt", "content": "b"})).await;
    err(&c, "delete_file", json!({"path": "a.txt"})).await;
    assert!(dir.path().join("a.txt").exists() && !dir.path().join("b.txt").exists());
}

#[tokio::test]
async fn without_a_grant_it_loads_and_every_tool_names_the_missing_grant() {
    let c = load("files").await;
    assert_eq!(c.declared().dirs, ["/workspace"]);
    for (tool, args) in [
        ("list_files", json!({})),
        ("read_file", json!({"path": "a.txt"})),
        ("write_file", json!({"path": "a.txt", "content": "x"})),
        ("grep", json!({"pattern": "x"})),
        ("glob_files", json!({"pattern": "*"})),
    ] {
        let e = err(&c, tool, args).await;
        assert_eq!(e.code(), ErrorCode::ToolFailed, "{tool}");
        assert!(
            e.message().contains("not granted to it: dir /workspace"),
            "{tool}: {e}"
        );
    }
}
