//! Declaring capabilities from any language: `toolhost declare` adds a
//! `toolhost:capabilities` section to a component no SDK built (and to a
//! frozen one), the declaration adds to what `declare()` says, and a grant
//! the component does not declare is warned about where the operator looks:
//! the load log, `toolhost inspect`, `toolhost tools --status`.

use std::process::{Command, Output};

use serde_json::{Value, json};
use toolhost::ComponentHash;
use toolhost::internal::capabilities::{Declared, Grants};

use crate::mcp_server::temp_config;
use crate::support;

fn toolhost(args: &[&str], env: &[(&str, &str)]) -> Output {
    Command::new(support::toolhost_bin())
        .args(args)
        .args(["--cache-dir", &support::cache_dir().display().to_string()])
        .envs(env.iter().copied())
        .output()
        .expect("run toolhost")
}

fn declare(args: &[&str]) -> Output {
    Command::new(support::toolhost_bin())
        .arg("declare")
        .args(args)
        .output()
        .expect("run toolhost declare")
}

fn stdout_json(out: &Output) -> Value {
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("not JSON ({e}): {out:?}"))
}

#[test]
fn declare_adds_a_section_to_a_component_the_sdk_did_not_build() {
    let dir = tempfile::tempdir().unwrap();
    let input = support::plugin_path("handmade");
    let output = dir.path().join("handmade-declared.wasm");
    let (i, o) = (input.display().to_string(), output.display().to_string());
    let out = declare(&[&i, &o, "--env", "DECLARE_TEST_VAR", "--tool", "greet"]);
    assert!(out.status.success(), "{out:?}");
    let bytes = std::fs::read(&output).unwrap();
    // It prints the new identity, the blake3 of the new bytes.
    let printed = String::from_utf8_lossy(&out.stdout).trim().to_string();
    assert_eq!(printed, ComponentHash::of(&bytes).to_string());
    assert_ne!(bytes, std::fs::read(&input).unwrap());
    let section = Declared::from_component(&bytes).unwrap();
    assert_eq!(
        (section.env.as_slice(), section.tools.as_slice()),
        (&["DECLARE_TEST_VAR".to_string()][..], &["greet".to_string()][..])
    );

    // The section adds to declare(): both variables are declared, and the
    // new one is given when granted.
    let env = [("DECLARE_TEST_VAR", "declared after the build")];
    let inspect = toolhost(&["inspect", &o, "--env", "DECLARE_TEST_VAR"], &env);
    let info = stdout_json(&inspect);
    assert_eq!(
        info["capabilities"]["declared"]["env"],
        json!(["DECLARE_TEST_VAR", "HANDMADE_VAR"])
    );
    assert_eq!(info["warnings"], json!([]), "{info}");
    let args = r#"{"name":"DECLARE_TEST_VAR"}"#;
    let called = toolhost(&["call", &o, "read_env", args, "--env", "DECLARE_TEST_VAR"], &env);
    assert_eq!(stdout_json(&called), json!("declared after the build"));
    // The original, granted the same, does not get it, and says why.
    let original = toolhost(&["call", &i, "read_env", args, "--env", "DECLARE_TEST_VAR"], &env);
    assert_eq!(stdout_json(&original), Value::Null);
    let log = String::from_utf8_lossy(&original.stderr);
    assert!(
        log.contains("granted but not declared") && log.contains("env DECLARE_TEST_VAR"),
        "{log}"
    );

    // Declaring it again adds nothing and keeps the bytes.
    let again_path = dir.path().join("again.wasm");
    let again = declare(&[&o, &again_path.display().to_string(), "--env", "DECLARE_TEST_VAR"]);
    assert!(again.status.success(), "{again:?}");
    assert_eq!(std::fs::read(&again_path).unwrap(), bytes);
    assert!(String::from_utf8_lossy(&again.stderr).contains("nothing to add"));
}

#[test]
fn declare_refuses_what_is_not_a_declaration_or_not_a_component() {
    let dir = tempfile::tempdir().unwrap();
    let input = support::plugin_path("handmade").display().to_string();
    let output = dir.path().join("out.wasm").display().to_string();
    for (flag, value) in [("--http", "not a host!"), ("--env", ""), ("--tool", "a\nb")] {
        let out = declare(&[&input, &output, flag, value]);
        assert_eq!(out.status.code(), Some(1), "{flag} {value:?}: {out:?}");
        assert_eq!(stdout_json(&out)["error_code"], "config", "{flag} {value:?}");
    }
    let core = dir.path().join("core.wasm");
    std::fs::write(&core, b"\0asm\x01\0\0\0").unwrap();
    let out = declare(&[&core.display().to_string(), &output, "--env", "X"]);
    assert_eq!(stdout_json(&out)["error_code"], "invalid_component");
    assert!(
        !std::path::Path::new(&output).exists(),
        "nothing written on failure"
    );
}

/// A frozen 0.1.0 component, declared to call a 0.2.0 tool after the fact
/// (its bytes never rebuilt), calls it through dispatch.
#[tokio::test]
async fn a_frozen_component_can_be_declared_after_the_fact() {
    use toolhost::LoadOptions;
    use toolhost::internal::dispatch::{DispatchContext, Dispatcher, Session};
    use toolhost::internal::registry::{ComponentRegistration, RegisterComponent, Registry};

    let frozen = std::fs::read(support::frozen("caller-0.1.0.wasm")).unwrap();
    let more = Declared {
        tools: vec!["describe".into()],
        ..Default::default()
    };
    let (declared, added) = toolhost::internal::capabilities::declare(&frozen, &more).unwrap();
    assert_eq!(added.tools, ["describe"]);
    let options = LoadOptions {
        grants: Grants {
            tools: vec!["describe".into()],
            ..Default::default()
        },
        ..Default::default()
    };
    let caller = crate::engine().load(declared, options).await.unwrap();
    assert_eq!(caller.world().version(), "0.1.0");
    let mut registry = Registry::new();
    for c in [&caller, &crate::load("handmade").await] {
        registry
            .register_component(c, &ComponentRegistration::default())
            .unwrap();
    }
    let d = Dispatcher::builder(registry).build().unwrap();
    let ctx = DispatchContext::new(Session::trusted("declared"));
    let out = d
        .dispatch(
            "relay",
            json!({"name": "describe", "arguments": {"count": 4}}),
            &ctx,
        )
        .await;
    assert_eq!(out.json(), json!({"count": 4, "label": "4 items"}), "{out:?}");
}

#[test]
fn a_grant_the_component_does_not_declare_is_warned_about() {
    let hello = support::plugin_path("hello").display().to_string();
    let inspect = toolhost(&["inspect", &hello, "--env", "HOME", "--dir", "/tmp:/data"], &[]);
    let info = stdout_json(&inspect);
    assert_eq!(
        info["capabilities"]["granted"]["not_declared"],
        json!(["dir /data", "env HOME"])
    );
    let warning = info["warnings"][0].as_str().unwrap();
    assert!(
        warning.contains("env HOME") && warning.contains("toolhost declare"),
        "{warning}"
    );

    let (_dir, config) = temp_config(&format!(
        "[[plugins]]\npath = {hello:?}\n[plugins.grants]\nenv = [\"HOME\"]\ntools = [\"greet\"]\n"
    ));
    let status = toolhost(&["tools", "--status", "--config", &config], &[]);
    let status = stdout_json(&status);
    let plugin = &status["plugins"][0];
    assert_eq!(plugin["status"], "loaded", "{status}");
    let warning = plugin["warnings"][0].as_str().unwrap();
    assert!(warning.contains("env HOME, tool greet"), "{warning}");
}
