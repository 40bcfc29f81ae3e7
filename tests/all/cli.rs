//! The `toolhost` binary, as a user runs it.

use std::process::{Command, Output};

use serde_json::Value;

use crate::support;

fn toolhost(args: &[&str]) -> Output {
    let cache = support::workspace_root()
        .join("target")
        .join("test-compile-cache");
    Command::new(env!("CARGO_BIN_EXE_toolhost"))
        .args(args)
        .env("TOOLHOST_CACHE_DIR", cache)
        .output()
        .expect("run toolhost")
}

fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

fn plugin(name: &str) -> String {
    support::plugin_path(name).display().to_string()
}

#[test]
fn hash_prints_the_identity() {
    let out = toolhost(&["hash", &plugin("hello")]);
    assert!(out.status.success());
    let expected = toolhost::ComponentHash::of(&support::plugin_bytes("hello"));
    assert_eq!(stdout(&out), expected.to_string());
}

#[test]
fn inspect_prints_json() {
    let out = toolhost(&["inspect", &plugin("hello")]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let info: Value = serde_json::from_str(&stdout(&out)).unwrap();
    for key in ["hash", "world", "tools", "imports", "size_bytes"] {
        assert!(info.get(key).is_some(), "missing {key}: {info}");
    }
    assert_eq!(info["size_bytes"], support::plugin_bytes("hello").len());
    assert_eq!(info["world"]["name"], "toolhost:plugin/plugin@0.2.0");
}

#[test]
fn call_prints_the_result_and_exits_zero() {
    let out = toolhost(&["call", &plugin("hello"), "greet", r#"{"name":"Ada"}"#]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(stdout(&out), r#""Hello, Ada!""#);
}

#[test]
fn call_errors_are_json_on_stdout_with_a_non_zero_exit() {
    let cases: &[(&[&str], &str)] = &[
        (
            &[
                "call",
                &plugin("spin"),
                "spin",
                "--timeout-ms",
                "200",
                "--fuel",
                "1000000000000000",
            ],
            "timeout",
        ),
        (
            &[
                "call",
                &plugin("deep"),
                "recurse",
                r#"{"depth":1000}"#,
                "--stack-kb",
                "64",
            ],
            "stack_overflow",
        ),
        (
            &["call", &plugin("spin"), "spin", "--fuel", "1000000"],
            "out_of_fuel",
        ),
        (
            &["call", &plugin("hog"), "hog", "--memory-mb", "16"],
            "memory_limit",
        ),
        (&["call", &plugin("hello"), "greet", "{}"], "invalid_arguments"),
        (&["call", &plugin("hello"), "nope"], "unknown_tool"),
        (
            &[
                "call",
                &plugin("hello"),
                "greet",
                "--expect-hash",
                &format!("blake3:{}", "0".repeat(64)),
            ],
            "hash_mismatch",
        ),
        (&["call", &plugin("command-hello"), "x"], "unsupported_world"),
    ];
    for (args, code) in cases {
        let out = toolhost(args);
        assert!(!out.status.success(), "{args:?} must fail");
        let err: Value =
            serde_json::from_str(&stdout(&out)).unwrap_or_else(|e| panic!("{args:?}: {e}: {}", stdout(&out)));
        assert_eq!(err["error_code"], *code, "{args:?}: {err}");
        assert!(err["error"].as_str().is_some_and(|m| !m.is_empty()));
    }
}

#[test]
fn without_room_for_the_pool_the_engine_falls_back_to_on_demand_allocation() {
    // 1 GB of address space cannot hold the instance pool; the host must say
    // so, fall back, and still serve the call.
    let cache = support::workspace_root()
        .join("target")
        .join("test-compile-cache");
    let out = Command::new("sh")
        .arg("-c")
        .arg(r#"ulimit -v 1000000 && exec "$0" call "$1" greet '{"name":"Ada"}'"#)
        .arg(env!("CARGO_BIN_EXE_toolhost"))
        .arg(plugin("hello"))
        .env("TOOLHOST_CACHE_DIR", cache)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(
        stderr.contains("falling back to on-demand allocation"),
        "{stderr}"
    );
    assert_eq!(stdout(&out), r#""Hello, Ada!""#);
}

#[test]
fn the_default_config_serves_the_standard_plugins() {
    for name in ["files", "memory", "time", "calc"] {
        support::plugin_path(name);
    }
    let config = support::workspace_root().join("toolhost.toml");
    let out = toolhost(&["tools", "--config", &config.display().to_string()]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let defs: Vec<Value> = serde_json::from_str(&stdout(&out)).unwrap();
    let names: Vec<&str> = defs
        .iter()
        .map(|d| d["function"]["name"].as_str().unwrap())
        .collect();
    for tool in [
        "list_files",
        "file_info",
        "read_file",
        "code_read",
        "write_file",
        "move_file",
        "delete_file",
        "glob_files",
        "grep",
        "memory_create",
        "memory_update",
        "memory_get",
        "memory_search",
        "memory_delete",
        "memory_list_titles",
        "current_datetime",
        "calculate_expression",
        "exec",
        "process",
    ] {
        assert!(names.contains(&tool), "{tool} missing from {names:?}");
    }
    assert!(
        support::workspace_root().join(".toolhost/memory").is_dir(),
        "managed storage is created"
    );
}

#[test]
fn a_large_result_is_spilled_and_readable_back() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("ws")).unwrap();
    std::fs::write(dir.path().join("ws/big.txt"), "line of text\n".repeat(10_000)).unwrap();
    let config = format!(
        r#"[spill]
dir = "ws/.spill"
shown_as = ".spill"
threshold_bytes = 4096

[[plugins]]
path = "{}"
[plugins.grants]
dirs = [{{ host = "ws", guest = "/workspace", mode = "rw" }}]
"#,
        support::plugin_path("files").display()
    );
    let config_path = dir.path().join("toolhost.toml");
    std::fs::write(&config_path, config).unwrap();
    let config_arg = config_path.display().to_string();
    let out = toolhost(&[
        "call-tool",
        "read_file",
        r#"{"path":"big.txt"}"#,
        "--config",
        &config_arg,
    ]);
    let spilled: Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(spilled["spilled"], true, "{spilled}");
    let path = spilled["path"].as_str().unwrap();
    let back = toolhost(&[
        "call-tool",
        "code_read",
        &serde_json::json!({"path": path, "start_line": 1, "num_lines": 1}).to_string(),
        "--config",
        &config_arg,
    ]);
    assert!(stdout(&back).contains("line of text"), "{}", stdout(&back));
    // Errors are never spilled.
    let err = toolhost(&[
        "call-tool",
        "read_file",
        r#"{"path":"missing.txt"}"#,
        "--config",
        &config_arg,
    ]);
    assert!(stdout(&err).contains("error_code"), "{}", stdout(&err));
}
