//! The README's main command, as a user runs it, through the real binary
//! and the official Python MCP SDK: in an empty folder, with no config (the
//! standard plugins come with the binary), over HTTP; and in a scratch copy
//! of the repository's root with its relative `--config toolhost.toml`, over
//! stdio. Every default tool works: files, memory, time, calc, and exec
//! creating, editing and deleting files in the workspace without asking; a
//! dangerous command is asked by elicitation and refused when declined;
//! codemode runs when enabled.
//!
//! The command is taken from the README itself: `rustup target add
//! wasm32-wasip2 && cargo install --locked --path host/toolhost && toolhost ARGS`.
//! The suite has built the binary already (`.ci/run` runs the `cargo
//! install` itself), so the test runs it with ARGS.

use std::io::BufRead;
use std::path::Path;
use std::process::{Child, Command, Stdio};

use serde_json::{Value, json};

use crate::mcp_server::python_client_in;
use crate::support;

/// What the README's main command runs the binary with.
fn readme_args() -> Vec<String> {
    let readme = std::fs::read_to_string(support::workspace_root().join("README.md")).unwrap();
    let prefix =
        "rustup target add wasm32-wasip2 && cargo install --locked --path host/toolhost && toolhost ";
    let line = readme
        .lines()
        .find(|l| l.starts_with(prefix))
        .unwrap_or_else(|| panic!("the README has no line starting with {prefix:?}"));
    line[prefix.len()..]
        .split_whitespace()
        .map(String::from)
        .collect()
}

/// A scratch copy of the repository's root as the main command with
/// `--config toolhost.toml` needs it (`target/` for the codemode
/// interpreter), with `edit` applied to its `toolhost.toml`.
fn scratch(edit: impl Fn(String) -> String) -> tempfile::TempDir {
    support::build_plugins();
    let dir = tempfile::tempdir().unwrap();
    let root = support::workspace_root();
    let config = std::fs::read_to_string(root.join("toolhost.toml")).unwrap();
    std::fs::write(dir.path().join("toolhost.toml"), edit(config)).unwrap();
    std::os::unix::fs::symlink(root.join("target"), dir.path().join("target")).unwrap();
    dir
}

/// The binary started with `args` in `dir`, killed when dropped.
struct Served(Child);

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Starts `toolhost ARGS` (HTTP) in `dir`; returns it, its URL and the
/// token it printed.
#[allow(
    clippy::zombie_processes,
    reason = "the returned Served waits for the child on drop"
)]
fn serve_http(dir: &Path, args: &[String]) -> (Served, String, String) {
    let mut child = Command::new(support::toolhost_bin())
        .args(args)
        .current_dir(dir)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stderr = std::io::BufReader::new(child.stderr.take().unwrap());
    let (mut token, mut line) = (None, String::new());
    loop {
        line.clear();
        assert!(
            stderr.read_line(&mut line).unwrap() > 0,
            "the server exited: {:?}",
            child.wait()
        );
        if let Some((_, t)) = line.trim().split_once("Authorization: Bearer ") {
            token = Some(t.to_string());
        }
        if let Some(url) = line.trim().strip_prefix("toolhost: serving MCP at ") {
            let url = url.to_string();
            std::thread::spawn(move || std::io::copy(&mut stderr, &mut std::io::sink()));
            return (Served(child), url, token.expect("the generated token"));
        }
    }
}

/// The steps every default tool takes, and the checks of their results.
fn steps() -> Value {
    json!([
        {"elicit": "decline"},
        {"list": true},
        {"call": "write_file", "args": {"path": "notes/todo.txt", "content": "write the README\n"}},
        {"call": "read_file", "args": {"path": "notes/todo.txt"}},
        {"call": "memory_create", "args": {"title": "plan", "content": "ship it"}},
        {"call": "memory_search", "args": {"query": "ship"}},
        {"call": "current_datetime", "args": {}},
        {"call": "calculate_expression", "args": {"expression": "2 + 3 * 4"}},
        // The model's own files, in its workspace: no approval asked.
        {"call": "exec", "args": {"command": "mkdir -p build && echo one > build/a.txt && cat build/a.txt"}},
        {"call": "exec", "args": {"command": "sed -i 's/one/two/' build/a.txt && cp build/a.txt build/b.txt && mv build/b.txt build/c.txt && touch build/d && cat build/c.txt"}},
        {"call": "exec", "args": {"command": "rm build/a.txt build/c.txt build/d && rmdir build && ls"}},
        {"call": "exec", "args": {"command": "echo from-exec > shared.txt"}},
        {"call": "read_file", "args": {"path": "shared.txt"}},
        {"call": "exec", "args": {"command": "cat notes/todo.txt"}},
        // Dangerous: asked, declined, refused.
        {"call": "exec", "args": {"command": "rm -rf ~/"}},
    ])
}

fn check(out: &Value, transport: &str) {
    let steps = out["steps"].as_array().unwrap();
    let listed: Vec<&str> = steps[1]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    for tool in [
        "read_file",
        "write_file",
        "memory_create",
        "current_datetime",
        "calculate_expression",
        "exec",
        "process",
    ] {
        assert!(
            listed.contains(&tool),
            "{transport}: {tool} not listed: {listed:?}"
        );
    }
    let ok = |i: usize| {
        assert_eq!(steps[i]["is_error"], false, "{transport}: step {i}: {}", steps[i]);
        steps[i]["text"].as_str().unwrap().to_string()
    };
    ok(2);
    assert!(ok(3).contains("write the README"), "{transport}: {}", steps[3]);
    ok(4);
    assert!(ok(5).contains("plan"), "{transport}: {}", steps[5]);
    assert!(ok(6).contains("20"), "{transport}: {}", steps[6]);
    assert!(ok(7).contains("14"), "{transport}: {}", steps[7]);
    for i in 8..=11 {
        let text = ok(i);
        let result: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(result["exit_code"], 0, "{transport}: step {i}: {text}");
    }
    assert!(ok(9).contains("two"), "{transport}: {}", steps[9]);
    assert!(ok(12).contains("from-exec"), "{transport}: {}", steps[12]);
    assert!(ok(13).contains("write the README"), "{transport}: {}", steps[13]);
    let refused = &steps[14];
    assert_eq!(refused["is_error"], true, "{transport}: {refused}");
    // Asked once: for the dangerous command, never for the workspace's files.
    let asked = out["elicitations"].as_array().unwrap();
    assert_eq!(asked.len(), 1, "{transport}: {asked:?}");
    assert!(
        asked[0]["message"].as_str().unwrap().contains("rm -rf"),
        "{transport}: {asked:?}"
    );
}

#[test]
fn the_readme_main_command_serves_every_default_tool_over_http_with_no_config() {
    let args = readme_args();
    assert_eq!(args[..2], ["serve", "--http"], "{args:?}");
    let dir = tempfile::tempdir().unwrap();
    let (_server, url, token) = serve_http(dir.path(), &args);
    let out = python_client_in(dir.path(), &["http".into(), url, token], steps());
    check(&out, "http");
    // The workspace is where the standard config says, in the folder the
    // command ran in.
    assert!(dir.path().join(".toolhost/workspace/notes/todo.txt").exists());
    assert!(!dir.path().join(".toolhost/workspace/build").exists());
}

#[test]
fn the_repositorys_config_serves_every_default_tool_over_stdio_from_a_relative_path() {
    // The same command, speaking stdio, with the repository's config named
    // by a relative path from its folder (the operator's path).
    let mut args = readme_args();
    let http = args.iter().position(|a| a == "--http").unwrap();
    args.splice(
        http..http + 2,
        ["--stdio", "--config", "toolhost.toml"].map(String::from),
    );
    let dir = scratch(|c| c);
    let mut mode = vec!["stdio".to_string(), support::toolhost_bin().display().to_string()];
    mode.extend(args);
    let out = python_client_in(dir.path(), &mode, steps());
    check(&out, "stdio");
    assert!(dir.path().join(".toolhost/workspace/notes/todo.txt").exists());
}

/// The repository's `toolhost.toml` is the standard config the binary
/// uses without one, word for word.
#[test]
fn the_repositorys_config_is_the_standard_config() {
    let file = std::fs::read_to_string(support::workspace_root().join("toolhost.toml")).unwrap();
    assert_eq!(file, toolhost::standard::STANDARD_CONFIG);
}

#[test]
fn the_readme_config_runs_codemode_when_enabled() {
    let mut args = readme_args();
    let http = args.iter().position(|a| a == "--http").unwrap();
    args.splice(
        http..http + 2,
        ["--stdio", "--config", "toolhost.toml"].map(String::from),
    );
    let dir = scratch(|c| {
        let enabled = c.replacen("enabled = false", "enabled = true", 1);
        assert_ne!(
            enabled, c,
            "the README's config has no codemode switch to turn on"
        );
        enabled
    });
    let mut mode = vec!["stdio".to_string(), support::toolhost_bin().display().to_string()];
    mode.extend(args);
    let script = "a = await tools.calculate_expression(expression='6 * 7')\nb = await tools.read_file(path='seed.txt')\n[a, b]";
    std::fs::create_dir_all(dir.path().join(".toolhost/workspace")).unwrap();
    std::fs::write(dir.path().join(".toolhost/workspace/seed.txt"), "seeded").unwrap();
    let out = python_client_in(
        dir.path(),
        &mode,
        json!([{"call": "run_tools_script", "args": {"code": script}}]),
    );
    let step = &out["steps"][0];
    assert_eq!(step["is_error"], false, "{step}");
    let text = step["text"].as_str().unwrap();
    assert!(text.contains("42") && text.contains("seeded"), "{text}");
}
