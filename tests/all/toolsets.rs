//! Toolset resolution: the three rules, composites, cycles, legacy names,
//! presets, dynamic toolsets and availability.

use toolhost::internal::registry::ComponentRegistration;
use toolhost::internal::toolsets::Toolsets;

use crate::fixtures::{component, echo, set, toolset_registry};
use toolhost::internal::registry::RegisterComponent;

#[tokio::test]
async fn dynamic_toolsets_per_mcp_server_and_component() {
    let mut r = toolset_registry();
    r.register_mcp(echo("issues"), "github").unwrap();
    r.register_mcp(echo("prs"), "github").unwrap();
    let hello = component("hello").await;
    r.register_component(&hello, &ComponentRegistration::default())
        .unwrap();
    let spin = component("spin").await;
    let named = ComponentRegistration {
        toolset: Some("spinners".into()),
        ..Default::default()
    };
    r.register_component(&spin, &named).unwrap();
    let t = Toolsets::new();
    assert_eq!(t.resolve("mcp-github", &r).unwrap(), set(&["issues", "prs"]));
    assert_eq!(
        t.resolve(&format!("wasm-{}", hello.hash().short()), &r).unwrap(),
        set(&["greet"])
    );
    assert_eq!(t.resolve("spinners", &r).unwrap(), set(&["busy", "spin"]));
}
