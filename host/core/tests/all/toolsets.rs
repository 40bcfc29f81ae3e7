//! Toolset resolution: the three rules, composites, cycles, legacy names,
//! presets, dynamic toolsets and availability.

use toolhost_core::ErrorCode;
use toolhost_core::dispatch::{Dispatcher, Session};
use toolhost_core::registry::{Check, Registration, Registry, ToolAudience};
use toolhost_core::toolsets::{PRESET_CLI, PRESET_PUBLIC, ToolsetDef, ToolsetSelection, Toolsets};

use crate::fixtures::{def_names, echo, in_set, set, toolset_registry};

#[test]
fn rule_one_enabled_only() {
    let r = toolset_registry();
    let t = Toolsets::new();
    assert_eq!(
        t.select(&ToolsetSelection::enabled(["files"]), &r).unwrap(),
        set(&["cat", "ls"])
    );
    assert_eq!(
        t.select(&ToolsetSelection::enabled(["files", "time"]), &r)
            .unwrap(),
        set(&["cat", "ls", "now"])
    );
}

#[test]
fn rule_two_all_minus_disabled() {
    let r = toolset_registry();
    let t = Toolsets::new();
    assert_eq!(
        t.select(&ToolsetSelection::disabled(["files"]), &r).unwrap(),
        set(&["fetch", "now", "ping"])
    );
}

#[test]
fn rule_three_all() {
    let r = toolset_registry();
    let t = Toolsets::new();
    assert_eq!(
        t.select(&ToolsetSelection::default(), &r).unwrap(),
        set(&["cat", "fetch", "ls", "now", "ping"])
    );
}

#[test]
fn composites_include_other_toolsets_and_tools() {
    let r = toolset_registry();
    let mut t = Toolsets::new();
    t.define(
        "web",
        ToolsetDef {
            includes: vec!["http".into(), "time".into()],
            tools: vec!["ping".into()],
            ..Default::default()
        },
    )
    .unwrap();
    t.define("everything_web", ToolsetDef::includes(["web"])).unwrap();
    assert_eq!(
        t.resolve("everything_web", &r).unwrap(),
        set(&["fetch", "now", "ping"])
    );
    // Disabling a composite removes all of its tools.
    assert_eq!(
        t.select(&ToolsetSelection::disabled(["web"]), &r).unwrap(),
        set(&["cat", "ls"])
    );
}

#[test]
fn a_composite_cycle_is_an_error_naming_it() {
    let r = toolset_registry();
    let mut t = Toolsets::new();
    t.define("a", ToolsetDef::includes(["b"])).unwrap();
    t.define("b", ToolsetDef::includes(["c"])).unwrap();
    t.define("c", ToolsetDef::includes(["a"])).unwrap();
    let err = t.resolve("a", &r).unwrap_err();
    assert_eq!(err.code(), ErrorCode::Config);
    assert!(err.message().contains("a -> b -> c -> a"), "{err}");
    assert!(
        Dispatcher::builder(r).toolsets(t).build().is_err(),
        "a cycle fails the build"
    );
}

#[test]
fn legacy_names_map_to_current_ones() {
    let r = toolset_registry();
    let mut t = Toolsets::new();
    t.define("web", ToolsetDef::includes(["http"])).unwrap();
    // The built-in map (file_tools -> files, web_tools -> web) ...
    assert_eq!(t.resolve("file_tools", &r).unwrap(), set(&["cat", "ls"]));
    assert_eq!(t.resolve("web_tools", &r).unwrap(), set(&["fetch"]));
    // ... the generic `X_tools` rule, and added mappings.
    assert_eq!(t.resolve("time_tools", &r).unwrap(), set(&["now"]));
    t.add_legacy("clock", "time");
    assert_eq!(
        t.select(&ToolsetSelection::enabled(["clock"]), &r).unwrap(),
        set(&["now"])
    );
}

#[test]
fn an_unknown_toolset_is_an_error_listing_the_known_ones() {
    let r = toolset_registry();
    let t = Toolsets::new();
    let err = t.select(&ToolsetSelection::enabled(["nope"]), &r).unwrap_err();
    assert_eq!(err.code(), ErrorCode::Config);
    for known in ["files", "http", "net", "time", PRESET_CLI, PRESET_PUBLIC] {
        assert!(err.message().contains(known), "{err}");
    }
    assert!(t.select(&ToolsetSelection::disabled(["nope"]), &r).is_err());
    let err = Dispatcher::builder(r)
        .selection(ToolsetSelection::enabled(["nope"]))
        .build()
        .unwrap_err();
    assert!(err.message().contains("unknown toolset `nope`"), "{err}");
}

#[test]
fn presets_for_the_cli_and_for_public_use() {
    let r = toolset_registry();
    let t = Toolsets::new();
    assert_eq!(t.resolve(PRESET_CLI, &r).unwrap().len(), 5);
    assert_eq!(t.resolve(PRESET_PUBLIC, &r).unwrap(), set(&["ping"]));
}

#[test]
fn selection_then_availability_in_definitions() {
    let mut r = toolset_registry();
    r.register(
        Registration::new(echo("broken"))
            .toolset("files")
            .check(Check::new(|| false)),
    )
    .unwrap();
    let d = Dispatcher::builder(r)
        .selection(ToolsetSelection::enabled(["files"]))
        .build()
        .unwrap();
    assert_eq!(
        def_names(&d.definitions(&Session::trusted("s")).unwrap()),
        ["cat", "ls"]
    );
}

#[test]
fn toolset_availability() {
    let mut r = Registry::new();
    r.register(
        Registration::new(echo("a"))
            .toolset("down")
            .check(Check::new(|| false)),
    )
    .unwrap();
    r.register(
        Registration::new(echo("b"))
            .toolset("down")
            .check(Check::new(|| panic!("no"))),
    )
    .unwrap();
    r.register(
        Registration::new(echo("c"))
            .toolset("up")
            .check(Check::new(|| true)),
    )
    .unwrap();
    r.register(in_set("d", "private")).unwrap();
    let t = Toolsets::new();
    assert!(!t.is_toolset_available("down", &r, ToolAudience::Trusted).unwrap());
    assert!(t.is_toolset_available("up", &r, ToolAudience::Trusted).unwrap());
    assert!(
        !t.is_toolset_available("private", &r, ToolAudience::Public)
            .unwrap()
    );
    assert!(t.is_toolset_available("nope", &r, ToolAudience::Trusted).is_err());
}
