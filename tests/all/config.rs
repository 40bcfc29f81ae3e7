//! The TOML config and the `tools` / `call-tool` subcommands.

use std::path::Path;
use std::process::Command;

use serde_json::{Value, json};
use toolhost::ErrorCode;
use toolhost::config::Config;
use toolhost::internal::dispatch::Session;
use toolhost::internal::registry::Registry;
use toolhost::internal::registry::lazy::RegistryMode;

use crate::fixtures::{def_names, echo, engine, trusted};
use crate::support::plugin_path;

/// Writes `toolhost.toml` (with `hello.wasm` and `counter.wasm` copied
/// beside it, referred to by relative paths) into a temporary folder.
fn config_dir(body: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("plugins")).unwrap();
    for p in ["hello", "counter"] {
        std::fs::copy(
            plugin_path(p),
            dir.path().join("plugins").join(format!("{p}.wasm")),
        )
        .unwrap();
    }
    std::fs::write(dir.path().join("toolhost.toml"), body).unwrap();
    dir
}

const CONFIG: &str = r#"
[tools]
registry_mode = "full"
enabled_toolsets = ["greeting"]

[[plugins]]
path = "plugins/hello.wasm"
[plugins.limits]
timeout_ms = 2000

[[plugins]]
path = "plugins/counter.wasm"
toolset = "counting"

[toolsets.greeting]
includes = ["hello"]
tools = ["count"]
"#;

#[tokio::test]
async fn a_config_loads_plugins_toolsets_and_mode() {
    let dir = config_dir(CONFIG);
    let config = Config::load(&dir.path().join("toolhost.toml")).unwrap();
    assert_eq!(config.plugins[0].limits.timeout_ms, Some(2000));
    let d = config.dispatcher(engine(), Registry::new()).await.unwrap();
    assert_eq!(d.mode(), RegistryMode::Full);
    assert_eq!(d.registry().get("count").unwrap().toolset(), "counting");
    assert_eq!(d.registry().get("greet").unwrap().toolset(), "hello");
    assert_eq!(
        def_names(&d.definitions(&Session::trusted("s")).unwrap()),
        ["count", "greet"]
    );
    assert_eq!(
        d.dispatch("greet", json!({"name": "Ada"}), &trusted())
            .await
            .content,
        r#""Hello, Ada!""#
    );
}

#[tokio::test]
async fn an_unknown_toolset_in_the_config_lists_the_known_ones() {
    let dir =
        config_dir("[tools]\nenabled_toolsets = [\"helo\"]\n[[plugins]]\npath = \"plugins/hello.wasm\"\n");
    let config = Config::load(&dir.path().join("toolhost.toml")).unwrap();
    let err = config.dispatcher(engine(), Registry::new()).await.unwrap_err();
    assert_eq!(err.code(), ErrorCode::Config);
    assert!(
        err.message().contains("unknown toolset `helo`") && err.message().contains("hello"),
        "{err}"
    );
}

#[tokio::test]
async fn a_plugin_overrides_a_builtin_only_when_the_config_opts_in() {
    let mut builtins = Registry::new();
    builtins.register(echo("greet")).unwrap();
    let dir = config_dir("[[plugins]]\npath = \"plugins/hello.wasm\"\n");
    let config = Config::load(&dir.path().join("toolhost.toml")).unwrap();
    let started = config.start(engine(), builtins.clone(), None).await.unwrap();
    let failed = &started.plugins[0];
    assert_eq!(failed.error_code, Some(ErrorCode::DuplicateTool));
    assert!(
        failed.error.as_deref().unwrap().contains("hello.wasm"),
        "{failed:?}"
    );
    assert_eq!(
        started
            .dispatcher
            .registry()
            .get("greet")
            .unwrap()
            .source()
            .kind(),
        "builtin"
    );

    let dir = config_dir("[[plugins]]\npath = \"plugins/hello.wasm\"\nallow_tool_override = true\n");
    let config = Config::load(&dir.path().join("toolhost.toml")).unwrap();
    let d = config.dispatcher(engine(), builtins).await.unwrap();
    assert_eq!(d.registry().get("greet").unwrap().source().kind(), "wasm");
}

#[test]
fn errors_name_the_key_and_line() {
    let err = Config::parse("[tools]\nregistry_mode = \"eager\"\n", Path::new("t.toml")).unwrap_err();
    assert!(
        err.message().starts_with("t.toml:2:17: key `registry_mode`: "),
        "{err}"
    );
    let err = Config::parse(
        "[[plugins]]\npath = \"a.wasm\"\nhash = \"md5:x\"\n",
        Path::new("t.toml"),
    )
    .unwrap_err();
    assert!(
        err.message().starts_with("t.toml:3:") && err.message().contains("key `hash`"),
        "{err}"
    );
    let err = Config::parse("[tools]\n\nenabled = []\n", Path::new("t.toml")).unwrap_err();
    assert!(
        err.message()
            .starts_with("t.toml:3:1: key `enabled`: unknown field"),
        "{err}"
    );
}

#[tokio::test]
async fn a_pinned_hash_is_enforced() {
    let wrong = toolhost::ComponentHash::of(b"other");
    let dir = config_dir(&format!(
        "[[plugins]]\npath = \"plugins/hello.wasm\"\nhash = \"{wrong}\"\n"
    ));
    let config = Config::load(&dir.path().join("toolhost.toml")).unwrap();
    let started = config.start(engine(), Registry::new(), None).await.unwrap();
    assert_eq!(started.plugins[0].error_code, Some(ErrorCode::HashMismatch));
    assert!(started.dispatcher.registry().is_empty());
}

fn toolhost(dir: &Path, args: &[&str]) -> (bool, Value) {
    let out = Command::new(env!("CARGO_BIN_EXE_toolhost"))
        .current_dir(dir)
        .args(args)
        .arg("--no-cache")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let value = serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("not JSON ({e}): {stdout}"));
    (out.status.success(), value)
}

#[test]
fn cli_tools_prints_the_definitions() {
    let dir = config_dir(CONFIG);
    // ./toolhost.toml is the default config.
    let (ok, defs) = toolhost(dir.path(), &["tools"]);
    assert!(ok);
    let names: Vec<&str> = defs
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["function"]["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["count", "greet"]);
    let (ok, defs) = toolhost(
        dir.path(),
        &["tools", "--config", "toolhost.toml", "--audience", "public"],
    );
    assert!(ok);
    assert_eq!(defs, json!([]), "plugin tools are trusted-only");
}

#[test]
fn cli_call_tool_runs_the_pipeline() {
    let dir = config_dir(CONFIG);
    let (ok, out) = toolhost(dir.path(), &["call-tool", "greet", r#"{"name":"Ada"}"#]);
    assert!(ok);
    assert_eq!(out, json!("Hello, Ada!"));
    let (ok, out) = toolhost(dir.path(), &["call-tool", "greet", "{}"]);
    assert!(!ok);
    assert_eq!(out["error_code"], "invalid_arguments");
    let (ok, out) = toolhost(dir.path(), &["call-tool", "nope", "{}"]);
    assert!(!ok);
    assert_eq!(out["error"], "Unknown tool: nope");
    let (ok, out) = toolhost(
        dir.path(),
        &["call-tool", "greet", r#"{"name":"Ada"}"#, "--audience", "public"],
    );
    assert!(!ok);
    assert_eq!(out["error_code"], "audience_denied");
}
