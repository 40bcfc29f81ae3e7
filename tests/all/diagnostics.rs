//! What an author in any language is told: imports the host would refuse
//! are refused before compiling, with the fix in each toolchain; a trap
//! names the guest's own words (the end of its stderr, redacted); and every
//! path validates arguments against the schema with the same message.

use std::process::Command;

use serde_json::{Value, json};
use toolhost::{Engine, EngineConfig, ErrorCode, LoadOptions};

use crate::support;

#[tokio::test]
async fn an_http_import_without_a_grant_is_refused_before_compiling() {
    // A fresh cache: a compiled component would leave an entry in it.
    let cache = tempfile::tempdir().unwrap();
    let engine = Engine::new(EngineConfig {
        cache_dir: Some(cache.path().into()),
        ..Default::default()
    })
    .unwrap();
    let err = engine
        .load_file(&support::plugin_path("http-plugin"), LoadOptions::default())
        .await
        .unwrap_err();
    assert_eq!(err.code(), ErrorCode::CapabilityNotGranted);
    let message = err.message();
    for needle in [
        "wasi:http/outgoing-handler",
        "declare()",
        "toolhost declare IN OUT --http",
        "capabilities!",
        "-d http",
        "componentize-py",
        "[plugins.grants]",
    ] {
        assert!(message.contains(needle), "no {needle:?} in: {message}");
    }
    let compiled = crate::exec::files_under(cache.path())
        .into_iter()
        .filter(|p| p.extension().is_some_and(|e| e == "cwasm"))
        .count();
    assert_eq!(compiled, 0, "the component was compiled before it was refused");
}

#[tokio::test]
async fn a_trap_quotes_the_end_of_the_guests_stderr_redacted() {
    let abort = crate::load("abort").await;
    // Text then a bare trap, as a Python exception or a JS throw ends.
    let err = crate::call_err(
        &abort,
        "abort",
        json!({"stderr": "ValueError: the widget is broken; API_TOKEN=hunter2hunter2"}),
    )
    .await;
    assert_eq!(err.code(), ErrorCode::Trap);
    let message = err.message();
    assert!(message.contains("unreachable"), "{message}");
    assert!(
        message.contains("stderr ends with:\nValueError: the widget is broken; API_TOKEN=[REDACTED]"),
        "{message}"
    );
    assert!(!message.contains("hunter2"), "{message}");
    // Long output: only its end, capped.
    let err = crate::call_err(&abort, "abort", json!({"stderr": "x".repeat(100), "repeat": 200})).await;
    let excerpt = err.message().split_once("ends with:\n").unwrap().1;
    assert!(excerpt.starts_with('…'), "{excerpt}");
    assert!(excerpt.len() <= 2048 + 3, "{} bytes", excerpt.len());
    // A Rust panic names its message once.
    let panic = crate::load("panic").await;
    let err = crate::call_err(&panic, "explode", json!({"n": 41})).await;
    assert!(
        err.message()
            .starts_with("the plugin panicked: the answer was 41, not 42"),
        "{}",
        err.message()
    );
}

/// A real Python exception that escapes to componentize-py's runtime: the
/// runtime panics with its own message (`Python function threw an
/// unexpected exception (at runtime/src/lib.rs:…)`), and the error goes on
/// with the guest's traceback, ending with the exception itself.
#[tokio::test]
async fn a_python_exception_that_traps_names_its_traceback() {
    let path = support::polyglot(&support::PYTHON_TRAP);
    let component = crate::engine()
        .load_file(&path, LoadOptions::default())
        .await
        .unwrap();
    let err = crate::call_err(&component, "crash", json!({"what": "W1"})).await;
    assert_eq!(err.code(), ErrorCode::Trap);
    let message = err.message();
    assert!(
        message.contains("the plugin's stderr ends with:\nTraceback (most recent call last):"),
        "{message}"
    );
    assert!(message.ends_with("app.Boom: the widget W1 broke"), "{message}");
}

fn toolhost(args: &[&str]) -> (Value, i32) {
    let out = Command::new(support::toolhost_bin())
        .args(args)
        .args(["--cache-dir", &support::cache_dir().display().to_string()])
        .output()
        .unwrap();
    let json = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {out:?}"));
    (json, out.status.code().unwrap_or(-1))
}

/// `toolhost call` validates against the schema as dispatch does: the same
/// code and message (dispatch adds `Error executing TOOL: `), before the
/// plugin runs (its own serde message would say `missing field`).
#[test]
fn every_path_validates_arguments_with_the_same_message() {
    let hello = support::plugin_path("hello").display().to_string();
    let (direct, code) = toolhost(&["call", &hello, "greet", "{}"]);
    assert_eq!(code, 1);
    assert_eq!(direct["error_code"], "invalid_arguments", "{direct}");
    let message = direct["error"].as_str().unwrap();
    assert!(message.contains("\"name\" is a required property"), "{message}");

    let (_dir, config) = crate::mcp_server::temp_config(&format!("[[plugins]]\npath = {hello:?}\n"));
    let (dispatched, code) = toolhost(&["call-tool", "greet", "{}", "--config", &config]);
    assert_eq!(code, 1);
    assert_eq!(dispatched["error_code"], "invalid_arguments");
    assert_eq!(
        dispatched["error"].as_str().unwrap(),
        format!("Error executing greet: {message}")
    );

    let (wrong_type, _) = toolhost(&["call", &hello, "greet", r#"{"name": 7}"#]);
    assert!(
        wrong_type["error"]
            .as_str()
            .unwrap()
            .starts_with("invalid argument `/name`"),
        "{wrong_type}"
    );
}
