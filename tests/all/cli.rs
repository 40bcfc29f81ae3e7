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
    assert_eq!(info["world"]["name"], "toolhost:plugin/plugin@0.3.1");
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

/// `toolhost bench … --json`: the output a machine reads.
fn bench_json(plugin_name: &str, tool: &str, args: &str, extra: &[&str]) -> (Output, Value) {
    let path = plugin(plugin_name);
    let mut argv = vec![
        "bench",
        &path,
        tool,
        args,
        "--calls",
        "40",
        "--cold-loads",
        "1",
        "--warm-loads",
        "2",
        "--json",
    ];
    argv.extend_from_slice(extra);
    let out = toolhost(&argv);
    let json = serde_json::from_str(&stdout(&out)).unwrap_or_else(|e| {
        panic!(
            "not JSON ({e}): {}\n{}",
            stdout(&out),
            String::from_utf8_lossy(&out.stderr)
        )
    });
    (out, json)
}

#[test]
fn bench_reports_every_figure_beside_its_floor() {
    let (out, report) = bench_json("hello", "greet", r#"{"name":"Ada"}"#, &["--concurrency", "1,4"]);
    assert!(out.status.success(), "{report}");
    // Not a terminal: no progress bar on stderr.
    assert!(
        !out.stderr.contains(&b'\r'),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    for load in ["cold_ms", "warm_ms"] {
        let figure = &report["load"][load];
        let (t, f) = (
            figure["toolhost"].as_f64().unwrap(),
            figure["floor"].as_f64().unwrap(),
        );
        assert!(t > 0.0 && f > 0.0, "{load}: {figure}");
        assert!(
            (figure["ratio"].as_f64().unwrap() - t / f).abs() < 1e-9,
            "{figure}"
        );
    }
    let levels = report["levels"].as_array().unwrap();
    assert_eq!(
        levels
            .iter()
            .map(|l| l["concurrency"].as_u64().unwrap())
            .collect::<Vec<_>>(),
        [1, 4]
    );
    for level in levels {
        for side in ["toolhost", "floor"] {
            let stats = &level[side];
            assert_eq!(stats["calls"], 40, "{side}: {stats}");
            assert_eq!(stats["errors"], 0, "{side}: {stats}");
            for key in ["p50_us", "p99_us", "mean_us", "calls_per_sec"] {
                assert!(stats[key].as_f64().unwrap() > 0.0, "{side} {key}: {stats}");
            }
            assert!(stats["p99_us"].as_f64() >= stats["p50_us"].as_f64(), "{stats}");
            assert!(stats["peak_memory_bytes"].as_u64().unwrap() > 0, "{stats}");
        }
        // The same code runs on both sides: the same fuel, the same memory.
        assert_eq!(
            level["toolhost"]["fuel_per_call"], level["floor"]["fuel_per_call"],
            "{level}"
        );
        assert!(level["toolhost"]["fuel_per_call"].as_u64().unwrap() > 0);
        assert_eq!(
            level["toolhost"]["peak_memory_bytes"],
            level["floor"]["peak_memory_bytes"]
        );
        // A small greeting fits the heap room plugins start with: no call
        // grows its memory. Only the floor counts the initial size.
        assert_eq!(
            level["floor"]["initial_memory_bytes"], level["floor"]["peak_memory_bytes"],
            "{level}"
        );
        assert_eq!(level["toolhost"].get("initial_memory_bytes"), None, "{level}");
        assert!(level["p50_ratio"].as_f64().unwrap() > 0.0, "{level}");
    }
    assert_eq!(report["floor_unavailable"], Value::Null);
    assert_eq!(report["tool"], "greet");
}

#[test]
fn bench_prints_a_table_for_people() {
    let out = toolhost(&[
        "bench",
        &plugin("hello"),
        "greet",
        r#"{"name":"Ada"}"#,
        "--calls",
        "10",
        "--concurrency",
        "2",
        "--cold-loads",
        "1",
        "--warm-loads",
        "1",
    ]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let table = stdout(&out);
    for needle in ["bare wasmtime", "cold", "warm", "floor p50", "per call: fuel"] {
        assert!(table.contains(needle), "{needle} missing:\n{table}");
    }
    assert!(!table.contains("calls grow their memory"), "{table}");
    let row = table
        .lines()
        .find(|l| l.starts_with("2 "))
        .unwrap_or_else(|| panic!("{table}"));
    assert!(row.ends_with('x'), "{row}");
}

#[test]
fn bench_of_a_tool_that_calls_the_host_has_no_floor() {
    let (out, report) = bench_json(
        "chatty",
        "chatter",
        r#"{"lines":1,"records":1}"#,
        &["--concurrency", "2"],
    );
    assert!(out.status.success(), "{report}");
    let why = report["floor_unavailable"]
        .as_str()
        .unwrap_or_else(|| panic!("{report}"));
    assert!(why.contains("toolhost's imports"), "{why}");
    assert_eq!(report["levels"][0]["floor"], Value::Null);
    assert_eq!(report["levels"][0]["toolhost"]["errors"], 0, "{report}");
}

#[test]
fn bench_of_a_failing_tool_says_why() {
    let out = toolhost(&["bench", &plugin("panic"), "explode", r#"{"n":1}"#, "--calls", "4"]);
    assert_eq!(out.status.code(), Some(1));
    let error: Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(error["error_code"], "trap", "{error}");
    let out = toolhost(&["bench", &plugin("hello"), "greet", "{}", "--concurrency", "0"]);
    assert_eq!(out.status.code(), Some(1));
    let error: Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(error["error_code"], "config", "{error}");
}

/// The floor tells a call that grows its linear memory from one that fits
/// the memory it starts with (what `toolhost bench` reports to authors).
#[tokio::test]
async fn the_floor_sees_a_call_grow_its_memory() {
    let hello = crate::load("hello").await;
    let floor = toolhost::internal::floor::BareComponent::new(&hello).unwrap();
    let answered = |call| match call {
        toolhost::internal::floor::BareCall::Answered {
            ok: true,
            peak_memory_bytes,
            initial_memory_bytes,
            ..
        } => (initial_memory_bytes, peak_memory_bytes),
        other => panic!("{other:?}"),
    };
    let (initial, peak) = answered(floor.call("greet", r#"{"name":"Ada"}"#).await);
    assert!(initial > 0 && peak == initial, "{initial} {peak}");
    // Two copies of a 2 MiB name do not fit in 1 MiB of heap room.
    let big = serde_json::json!({ "name": "x".repeat(2 << 20) }).to_string();
    let (initial_big, peak_big) = answered(floor.call("greet", &big).await);
    assert_eq!(initial_big, initial);
    assert!(peak_big > initial + (2 << 20), "{initial} {peak_big}");
}

/// The HTTP bounds must be at least one: zero sessions, connections or
/// idle seconds would serve no one, and is refused at the command line.
#[test]
fn http_bounds_of_zero_are_refused() {
    for flag in ["--max-sessions", "--max-connections", "--session-idle-secs"] {
        let out = toolhost(&["serve", "--http", "127.0.0.1:0", flag, "0"]);
        assert_eq!(out.status.code(), Some(2), "{flag} 0 was taken");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(flag) && err.contains("0 is not in 1.."), "{err}");
    }
}
