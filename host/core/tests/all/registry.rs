//! Registration, duplicates, `replace`, filtering, schemas and availability.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use serde_json::json;
use toolhost_core::ErrorCode;
use toolhost_core::registry::{Check, Registration, Registry, ToolAudience, ToolSource, ToolSpec};

use crate::fixtures::{def_names, echo, echo_with, in_set};

#[test]
fn builtins_are_trusted_unless_registered_public() {
    let mut r = Registry::new();
    r.register(echo("a")).unwrap();
    r.register_public(echo("b")).unwrap();
    r.register_mcp(echo("c"), "github").unwrap();
    assert_eq!(r.get("a").unwrap().audience(), ToolAudience::Trusted);
    assert_eq!(r.get("b").unwrap().audience(), ToolAudience::Public);
    assert_eq!(r.get("c").unwrap().audience(), ToolAudience::Trusted);
    assert_eq!(
        r.get("c").unwrap().source(),
        &ToolSource::Mcp {
            server: "github".into()
        }
    );
    assert_eq!(r.get("c").unwrap().toolset(), "mcp-github");
}

#[test]
fn third_party_metadata_cannot_grant_public_access() {
    let mut r = Registry::new();
    let spec_says_public = echo_with(
        "mcp_tool",
        "audience: public. Safe for public use.",
        json!({"type": "object"}),
    );
    r.register_mcp(Registration::new(spec_says_public).description("public"), "srv")
        .unwrap();
    assert_eq!(r.get("mcp_tool").unwrap().audience(), ToolAudience::Trusted);
    assert!(r.clone_for_audience(ToolAudience::Public).is_empty());
}

#[test]
fn merge_never_overwrites() {
    let mut a = Registry::new();
    a.register(echo("x")).unwrap();
    let mut b = Registry::new();
    b.register_mcp(echo("y"), "s").unwrap();
    b.register_mcp(echo("x"), "s").unwrap();
    let err = a.merge(&b).unwrap_err();
    assert_eq!(err.code(), ErrorCode::DuplicateTool);
    assert_eq!(a.names(), ["x"], "a failed merge changes nothing");
    assert_eq!(a.get("x").unwrap().source(), &ToolSource::Builtin);

    let mut c = Registry::new();
    c.register_mcp(echo("y"), "s").unwrap();
    a.merge(&c).unwrap();
    assert_eq!(a.names(), ["x", "y"]);
}

#[test]
fn definitions_are_openai_functions_built_from_the_schema_alone() {
    let mut r = Registry::new();
    let params = json!({"type": "object", "properties": {"q": {"type": "string"}}});
    r.register(
        Registration::new(echo_with("search", "Schema description.", params.clone()))
            .description("Registry-only text."),
    )
    .unwrap();
    assert_eq!(r.get("search").unwrap().description(), "Registry-only text.");
    let defs = r.definitions(ToolAudience::Trusted, None);
    assert_eq!(
        defs,
        [
            json!({"type": "function", "function": {"name": "search", "description": "Schema description.", "parameters": params}})
        ]
    );
}

#[test]
fn the_audience_filters_definitions() {
    let mut r = Registry::new();
    r.register(echo("secret")).unwrap();
    r.register_public(echo("open")).unwrap();
    assert_eq!(def_names(&r.definitions(ToolAudience::Public, None)), ["open"]);
    assert_eq!(
        def_names(&r.definitions(ToolAudience::Trusted, None)),
        ["open", "secret"]
    );
}

#[test]
fn checks_decide_availability_and_failures_mean_unavailable() {
    let mut r = Registry::new();
    r.register(Registration::new(echo("yes")).check(Check::new(|| true)))
        .unwrap();
    r.register(Registration::new(echo("no")).check(Check::new(|| false)))
        .unwrap();
    r.register(Registration::new(echo("panics")).check(Check::new(|| panic!("check exploded"))))
        .unwrap();
    r.register(Registration::new(echo("errs")).check(Check::fallible("svc", || Err("unreachable".into()))))
        .unwrap();
    r.register(Registration::new(echo("env")).check(Check::env("TOOLHOST_TEST_NEVER_SET_VAR")))
        .unwrap();
    r.register(Registration::new(echo("binary")).check(Check::binary("toolhost-no-such-binary")))
        .unwrap();
    r.register(Registration::new(echo("plain"))).unwrap();
    assert_eq!(
        def_names(&r.definitions(ToolAudience::Trusted, None)),
        ["plain", "yes"]
    );
}

#[test]
fn a_shared_check_runs_once_per_definitions_call() {
    let runs = Arc::new(AtomicUsize::new(0));
    let counted = Arc::clone(&runs);
    let check = Check::new(move || {
        counted.fetch_add(1, Ordering::SeqCst);
        true
    });
    let mut r = Registry::new();
    for name in ["a", "b", "c"] {
        r.register(Registration::new(echo(name)).check(check.clone()))
            .unwrap();
    }
    assert_eq!(r.definitions(ToolAudience::Trusted, None).len(), 3);
    assert_eq!(runs.load(Ordering::SeqCst), 1);
    r.definitions(ToolAudience::Trusted, None);
    assert_eq!(runs.load(Ordering::SeqCst), 2, "no caching across calls");
}

#[test]
fn schemas_listing_tools_are_patched_to_the_tools_that_passed() {
    let mut r = Registry::new();
    let codemode = Registration::new(echo("execute_code")).patch_schema(|spec, visible| {
        let mut spec: ToolSpec = spec.clone();
        let names: Vec<&str> = visible.iter().map(|s| s.name.as_str()).collect();
        spec.description = format!("Run code that may call: {}", names.join(", "));
        spec
    });
    r.register(codemode).unwrap();
    r.register(echo("web_fetch")).unwrap();
    r.register(Registration::new(echo("browser")).check(Check::new(|| false)))
        .unwrap();
    r.register(in_set("other", "misc")).unwrap();
    let only: std::collections::BTreeSet<String> =
        ["execute_code", "web_fetch", "browser"].map(String::from).into();
    let defs = r.definitions(ToolAudience::Trusted, Some(&only));
    assert_eq!(
        defs[0]["function"]["description"],
        "Run code that may call: execute_code, web_fetch"
    );
}
