//! Registration, duplicates, `replace`, filtering, schemas and availability.

use serde_json::json;
use toolhost::ErrorCode;
use toolhost::internal::registry::{ComponentRegistration, Registration, Registry, ToolAudience, ToolSource};

use crate::fixtures::{component, echo, echo_with, with_component};
use toolhost::internal::registry::RegisterComponent;

#[tokio::test]
async fn wasm_tools_are_trusted_and_tagged_with_the_hash() {
    let mut r = Registry::new();
    let bytes = crate::support::plugin_bytes("hello");
    let hello = crate::fixtures::engine()
        .load(bytes, Default::default())
        .await
        .unwrap();
    r.register_component(&hello, &ComponentRegistration::default())
        .unwrap();
    let entry = r.get("greet").unwrap();
    assert_eq!(
        entry.source(),
        &ToolSource::Wasm {
            component_hash: hello.hash()
        }
    );
    assert_eq!(entry.audience(), ToolAudience::Trusted);
    assert_eq!(entry.toolset(), format!("wasm-{}", hello.hash().short()));
}

#[tokio::test]
async fn list_schemas_carries_source_metadata() {
    let mut r = Registry::new();
    r.register(echo("exec")).unwrap();
    r.register_public(echo("public_exec")).unwrap();
    r.register_mcp(echo("mcp__github__search"), "github").unwrap();
    let hello = with_component(&mut r, "hello").await;
    let schemas = r.list_schemas();
    let by_name = |n: &str| schemas.iter().find(|s| s["name"] == n).unwrap().clone();

    let exec = by_name("exec");
    assert_eq!(exec["source"], "builtin");
    assert_eq!(exec["audience"], "trusted");
    assert_eq!(exec["description"], "Echoes exec.");
    assert!(exec.get("mcpServer").is_none() && exec.get("componentHash").is_none());
    assert_eq!(by_name("public_exec")["audience"], "public");
    let mcp = by_name("mcp__github__search");
    assert_eq!(mcp["source"], "mcp");
    assert_eq!(mcp["mcpServer"], "github");
    let greet = by_name("greet");
    assert_eq!(greet["source"], "wasm");
    assert_eq!(greet["componentHash"], hello.hash().to_string());
    assert_eq!(greet["audience"], "trusted");
    assert_eq!(greet["parameters"]["type"], "object");
}

#[tokio::test]
async fn duplicates_are_rejected_across_sources_naming_both_owners() {
    let mut r = Registry::new();
    r.register(echo("greet")).unwrap();
    let err = r.register_mcp(echo("greet"), "github").unwrap_err();
    assert_eq!(err.code(), ErrorCode::DuplicateTool);
    assert!(
        err.message().contains("built-in") && err.message().contains("MCP server `github`"),
        "{err}"
    );

    let hello = component("hello").await;
    let err = r
        .register_component(&hello, &ComponentRegistration::default())
        .unwrap_err();
    assert_eq!(err.code(), ErrorCode::DuplicateTool);
    assert!(
        err.message().contains(&hello.hash().to_string()) && err.message().contains("built-in"),
        "{err}"
    );
    assert_eq!(
        r.get("greet").unwrap().source(),
        &ToolSource::Builtin,
        "nothing was overwritten"
    );

    let mut r = Registry::new();
    r.register_mcp(echo("greet"), "a").unwrap();
    let err = r.register_mcp(echo("greet"), "b").unwrap_err();
    assert!(
        err.message().contains("MCP server `a`") && err.message().contains("MCP server `b`"),
        "{err}"
    );

    let mut r = Registry::new();
    with_component(&mut r, "hello").await;
    let err = r.register(echo("greet")).unwrap_err();
    assert!(err.message().contains("component blake3:"), "{err}");
}

#[tokio::test]
async fn a_plugin_overrides_a_builtin_only_with_the_opt_in() {
    let hello = component("hello").await;
    let opt_in = ComponentRegistration {
        allow_tool_override: true,
        ..Default::default()
    };
    let mut r = Registry::new();
    r.register(echo("greet")).unwrap();
    r.register_component(&hello, &opt_in).unwrap();
    assert_eq!(
        r.get("greet").unwrap().source(),
        &ToolSource::Wasm {
            component_hash: hello.hash()
        }
    );
    assert_eq!(r.get("greet").unwrap().audience(), ToolAudience::Trusted);

    // The opt-in covers built-ins only, never an MCP server's tool.
    let mut r = Registry::new();
    r.register_mcp(echo("greet"), "srv").unwrap();
    assert_eq!(
        r.register_component(&hello, &opt_in).unwrap_err().code(),
        ErrorCode::DuplicateTool
    );
}

#[tokio::test]
async fn replace_keeps_source_audience_and_metadata() {
    let mut r = Registry::new();
    r.register_public(
        Registration::new(echo("exec"))
            .toolset("shell")
            .emoji("💻")
            .requires_env(["SHELL"]),
    )
    .unwrap();
    r.replace(
        "exec",
        echo_with("exec", "Wrapped exec.", json!({"type": "object"})),
    )
    .unwrap();
    let entry = r.get("exec").unwrap();
    assert_eq!(entry.spec().description, "Wrapped exec.");
    assert_eq!(entry.audience(), ToolAudience::Public);
    assert_eq!(entry.source(), &ToolSource::Builtin);
    assert_eq!(entry.toolset(), "shell");
    assert_eq!(entry.emoji(), Some("💻"));
    assert_eq!(entry.requires_env(), ["SHELL"]);

    let mut r = Registry::new();
    let hello = with_component(&mut r, "hello").await;
    r.replace("greet", echo("greet")).unwrap();
    assert_eq!(
        r.get("greet").unwrap().source(),
        &ToolSource::Wasm {
            component_hash: hello.hash()
        }
    );
    assert_eq!(r.get("greet").unwrap().audience(), ToolAudience::Trusted);

    assert_eq!(
        r.replace("nope", echo("nope")).unwrap_err().code(),
        ErrorCode::UnknownTool
    );
    assert!(r.replace("greet", echo("other")).is_err());
}

#[tokio::test]
async fn filtering_copies_and_unloading() {
    let mut r = Registry::new();
    r.register(echo("a")).unwrap();
    r.register_public(echo("b")).unwrap();
    r.register_mcp(echo("m1"), "one").unwrap();
    r.register_mcp(echo("m2"), "two").unwrap();
    let hello = with_component(&mut r, "hello").await;
    with_component(&mut r, "counter").await;

    assert_eq!(r.clone_without_mcp().names(), ["a", "b", "count", "greet"]);
    assert_eq!(r.clone_for_audience(ToolAudience::Public).names(), ["b"]);
    assert_eq!(r.clone_for_audience(ToolAudience::Trusted).len(), 6);

    let mut copy = r.clone();
    assert_eq!(copy.unregister_mcp(), 2);
    assert_eq!(copy.names(), ["a", "b", "count", "greet"]);
    assert_eq!(r.len(), 6, "the original is untouched");

    assert_eq!(r.unregister_component(hello.hash()), 1);
    assert_eq!(r.names(), ["a", "b", "count", "m1", "m2"]);
}
