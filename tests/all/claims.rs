//! What a plugin may claim at load (`toolhost::internal::limits::MetadataLimits`):
//! the tool count, description and schema sizes are capped, loading is
//! linear in the number of tools, the built-ins' names are reserved, and
//! `call`'s limits apply to `list-tools` too. The `claims` plugin lists
//! what its `CLAIMS` variable says; each check runs `toolhost` with it set.

use serde_json::Value;

use crate::protected::project;
use crate::support;

/// Runs `toolhost ARGS` with `CLAIMS=claims`.
fn toolhost(args: &[&str], claims: &str) -> std::process::Output {
    std::process::Command::new(support::toolhost_bin())
        .args(args)
        .args(["--cache-dir", &support::cache_dir().display().to_string()])
        .env("CLAIMS", claims)
        .output()
        .unwrap()
}

/// The start-up status of the `claims` plugin under `[plugins]` settings
/// `extra`, with `CLAIMS=claims`.
fn status(claims: &str, extra: &str, before: &str) -> Value {
    let (_dir, config) = project(&format!(
        "{before}[[plugins]]\npath = \"{{PLUGINS}}/claims.wasm\"\n{extra}\n[plugins.grants]\nenv = [\"CLAIMS\"]\n"
    ));
    let out = toolhost(
        &["tools", "--status", "--config", &config.display().to_string()],
        claims,
    );
    assert!(out.status.success(), "{out:?}");
    let status: Value = serde_json::from_slice(&out.stdout).unwrap();
    status["plugins"][0].clone()
}

fn refusal(status: &Value) -> String {
    assert_eq!(status["status"], "failed", "{status}");
    status["error"].as_str().unwrap().to_string()
}

#[test]
fn too_many_tools_are_refused_and_many_load_in_linear_time() {
    let refused = status("tools=100000", "", "");
    let why = refusal(&refused);
    assert_eq!(refused["error_code"], "invalid_component");
    assert!(why.contains("100000 tools") && why.contains("max_tools"), "{why}");
    // Raised for this plugin, 20 000 tools load (the duplicate check is a
    // set, not a scan per tool).
    let raised = "[plugins.limits]\nmax_tools = 20000\nmetadata_bytes = 67108864";
    let loaded = status("tools=20000", raised, "");
    assert_eq!(loaded["status"], "loaded", "{loaded}");
    assert_eq!(loaded["tools"].as_array().unwrap().len(), 20_000);
}

#[test]
fn oversized_descriptions_and_schemas_are_refused() {
    let why = refusal(&status("desc=1000000", "", ""));
    assert!(
        why.contains("description") && why.contains("description_bytes"),
        "{why}"
    );
    let why = refusal(&status("schema=200000", "", ""));
    assert!(why.contains("schema_bytes"), "{why}");
    let why = refusal(&status("tools=200;desc=10000", "", ""));
    assert!(why.contains("metadata_bytes"), "{why}");
    let raised = "[plugins.limits]\ndescription_bytes = 2000000\nmetadata_bytes = 4000000";
    assert_eq!(status("desc=1000000", raised, "")["status"], "loaded");
}

/// Regression (hardening): a plugin tool named `tool_search` appeared twice
/// in lazy mode; a plugin could also take `exec` while exec was off.
#[test]
fn the_built_ins_names_are_reserved_for_every_source() {
    for (name, before) in [
        ("tool_search", "[tools]\nregistry_mode = \"lazy\"\n"),
        ("exec", ""),
        ("toolhost__load_component", ""),
    ] {
        let s = status(&format!("name={name}"), "allow_tool_override = true", before);
        let why = refusal(&s);
        assert!(why.contains("reserved"), "{name}: {why}");
    }
}

/// Regression (hardening): `call --memory-mb` did not apply to `list-tools`,
/// so a component needing more memory to start could not be called.
#[test]
fn call_limits_apply_at_load_too() {
    let plugin = support::plugin_path("claims").display().to_string();
    let small = toolhost(&["call", &plugin, "t0", "--env", "CLAIMS"], "alloc_mb=160");
    assert!(!small.status.success());
    assert!(
        String::from_utf8_lossy(&small.stdout).contains("memory_limit"),
        "{small:?}"
    );
    let big = toolhost(
        &["call", &plugin, "t0", "--env", "CLAIMS", "--memory-mb", "256"],
        "alloc_mb=160",
    );
    assert!(big.status.success(), "{big:?}");
    assert_eq!(String::from_utf8_lossy(&big.stdout).trim(), r#""ok""#);
}
