//! World versions side by side: frozen `0.1.0` and `0.2.0` components
//! (bytes checked in under `tests/data/frozen/`, never rebuilt), `0.2.0`'s
//! `handmade` (written against the WIT directly) and `0.3.0` components
//! (the SDK's) load into one registry and answer through dispatch and over
//! MCP, including nested calls from the frozen callers into every version;
//! a component of a version the host does not serve is refused before
//! compiling, naming the versions served.

use serde_json::{Value, json};
use toolhost::internal::capabilities::Grants;
use toolhost::internal::dispatch::{DispatchContext, Dispatcher, Session};
use toolhost::internal::registry::{ComponentRegistration, RegisterComponent, Registry};
use toolhost::{ErrorCode, LoadOptions};

use crate::mcp_server::{error_code, names, python_client, stdio_mode, temp_config};
use crate::{engine, support};

const FROZEN_HELLO: &str = "hello-0.1.0.wasm";
const FROZEN_CALLER: &str = "caller-0.1.0.wasm";
const FROZEN_HELLO_2: &str = "hello-0.2.0.wasm";
const FROZEN_CALLER_2: &str = "caller-0.2.0.wasm";

/// The frozen bytes are the ones `tests/data/frozen/README.md` records.
#[test]
fn frozen_components_are_the_recorded_bytes() {
    let readme = std::fs::read_to_string(support::frozen("README.md")).unwrap();
    for file in [
        FROZEN_HELLO,
        FROZEN_CALLER,
        FROZEN_HELLO_2,
        FROZEN_CALLER_2,
        "hello-0.3.0.wasm",
        "caller-0.3.0.wasm",
        "showcase-0.3.0.wasm",
    ] {
        let bytes = std::fs::read(support::frozen(file)).unwrap();
        let hash = toolhost::ComponentHash::of(&bytes).to_string();
        let row = readme
            .lines()
            .find(|l| l.starts_with(&format!("| `{file}`")))
            .unwrap_or_else(|| panic!("no README row for {file}"));
        assert!(row.contains(&hash), "{file} hashes to {hash}, README says: {row}");
    }
}

async fn load_frozen(file: &str, grants: Grants) -> std::sync::Arc<toolhost::LoadedComponent> {
    engine()
        .load_file(
            &support::frozen(file),
            LoadOptions {
                grants,
                ..Default::default()
            },
        )
        .await
        .unwrap_or_else(|e| panic!("loading frozen {file}: {e}"))
}

fn tools(names: &[&str]) -> Grants {
    Grants {
        tools: names.iter().map(|s| s.to_string()).collect(),
        ..Default::default()
    }
}

/// A registry with the frozen 0.1.0 `hello` and `caller` (granted `greet`
/// and `sleep`), 0.2.0's `handmade` and 0.3.0's `sleepy`.
async fn mixed_dispatcher() -> Dispatcher {
    let hello = load_frozen(FROZEN_HELLO, Grants::default()).await;
    let caller = load_frozen(FROZEN_CALLER, tools(&["greet", "sleep"])).await;
    let sleepy = crate::load("sleepy").await;
    let handmade = crate::load("handmade").await;
    assert_eq!(
        [hello.world(), caller.world(), sleepy.world(), handmade.world()].map(|w| w.version()),
        ["0.1.0", "0.1.0", "0.3.1", "0.2.0"]
    );
    let mut registry = Registry::new();
    for c in [&hello, &caller, &sleepy, &handmade] {
        registry
            .register_component(c, &ComponentRegistration::default())
            .unwrap();
    }
    Dispatcher::builder(registry).build().unwrap()
}

#[tokio::test]
async fn both_versions_answer_in_one_registry() {
    let d = mixed_dispatcher().await;
    let ctx = DispatchContext::new(Session::trusted("versions"));
    let greet = d.dispatch("greet", json!({"name": "Ada"}), &ctx).await;
    assert_eq!(greet.content, r#""Hello, Ada!""#, "{greet:?}");
    assert_eq!(
        (greet.text.as_deref(), greet.model_text().as_ref()),
        (None, "Hello, Ada!")
    );
    // A 0.1.0 tool's own error keeps its code.
    let empty = d.dispatch("greet", json!({"name": " "}), &ctx).await;
    assert_eq!(empty.error_code, Some(ErrorCode::InvalidArguments), "{empty:?}");
    // 0.2.0's tool's structured JSON and its text.
    let described = d.dispatch("describe", json!({"count": 3}), &ctx).await;
    assert_eq!(described.json(), json!({"count": 3, "label": "3 items"}));
    assert_eq!(described.text.as_deref(), Some("There are 3 items."));
    let slept = d.dispatch("sleep", json!({"ms": 1}), &ctx).await;
    assert_eq!(slept.content, r#""awake""#, "{slept:?}");
}

#[tokio::test]
async fn the_frozen_caller_calls_both_versions_through_dispatch() {
    let d = mixed_dispatcher().await;
    let ctx = DispatchContext::new(Session::trusted("nested"));
    let mut events = d.subscribe();
    let to_v1 = d
        .dispatch(
            "relay",
            json!({"name": "greet", "arguments": {"name": "Bo"}}),
            &ctx,
        )
        .await;
    assert_eq!(to_v1.content, r#""Hello, Bo!""#, "{to_v1:?}");
    let (nested, outer) = (events.recv().await.unwrap(), events.recv().await.unwrap());
    assert_eq!((nested.name.as_str(), outer.name.as_str()), ("greet", "relay"));
    assert_eq!(nested.parent_call_id, Some(outer.call_id));

    let to_v2 = d
        .dispatch("relay", json!({"name": "sleep", "arguments": {"ms": 1}}), &ctx)
        .await;
    assert_eq!(to_v2.content, r#""awake""#, "{to_v2:?}");

    // 0.1.0's error shape: a refusal is `failed` carrying the host's error
    // JSON, which the 0.1.0 SDK passed on as the caller's `tool_failed`.
    let refused = d
        .dispatch(
            "relay",
            json!({"name": "describe", "arguments": {"count": 1}}),
            &ctx,
        )
        .await;
    assert_eq!(refused.error_code, Some(ErrorCode::ToolFailed), "{refused:?}");
    assert!(
        refused.content.contains("capability_not_granted"),
        "{}",
        refused.content
    );
    // The nested call's arguments are validated by dispatch, on 0.1.0 too.
    let invalid = d
        .dispatch(
            "relay",
            json!({"name": "greet", "arguments": {"nom": "Bo"}}),
            &ctx,
        )
        .await;
    assert!(
        invalid.content.contains("invalid_arguments"),
        "{}",
        invalid.content
    );
}

/// The frozen bytes with their `tool` export renamed (same length, so the
/// binary stays well-formed) to `toolhost:plugin/tool@VERSION`.
fn with_tool_version(version: &str) -> Vec<u8> {
    let mut bytes = std::fs::read(support::frozen(FROZEN_HELLO)).unwrap();
    let from = b"toolhost:plugin/tool@0.1.0";
    let to = format!("toolhost:plugin/tool@{version}");
    assert_eq!(to.len(), from.len());
    let mut replaced = 0;
    let mut i = 0;
    while i + from.len() <= bytes.len() {
        if &bytes[i..i + from.len()] == from {
            bytes[i..i + from.len()].copy_from_slice(to.as_bytes());
            replaced += 1;
            i += from.len();
        } else {
            i += 1;
        }
    }
    assert!(replaced > 0);
    bytes
}

/// The frozen 0.2.0 `hello` and `caller` (granted `greet`, `describe`,
/// `sleep`, and 0.3.0's `media`, declared after the fact with `toolhost
/// declare`), 0.2.0's `handmade`, and 0.3.0's `sleepy` and `showcase`.
async fn dispatcher_0_2_0() -> Dispatcher {
    let hello = load_frozen(FROZEN_HELLO_2, Grants::default()).await;
    let frozen = std::fs::read(support::frozen(FROZEN_CALLER_2)).unwrap();
    let media = toolhost::internal::capabilities::Declared {
        tools: vec!["media".into()],
        ..Default::default()
    };
    let (declared, _) = toolhost::internal::capabilities::declare(&frozen, &media).unwrap();
    let caller = engine()
        .load(
            declared,
            LoadOptions {
                grants: tools(&["greet", "describe", "sleep", "media"]),
                ..Default::default()
            },
        )
        .await
        .unwrap();
    let handmade = crate::load("handmade").await;
    let sleepy = crate::load("sleepy").await;
    let showcase = crate::load("showcase").await;
    assert_eq!(
        [
            hello.world(),
            caller.world(),
            handmade.world(),
            sleepy.world(),
            showcase.world()
        ]
        .map(|w| w.version()),
        ["0.2.0", "0.2.0", "0.2.0", "0.3.1", "0.3.1"]
    );
    let mut registry = Registry::new();
    for c in [&hello, &caller, &handmade, &sleepy, &showcase] {
        registry
            .register_component(c, &ComponentRegistration::default())
            .unwrap();
    }
    Dispatcher::builder(registry).build().unwrap()
}

/// The frozen 0.2.0 components answer as they did, and their caller calls
/// tools of 0.2.0 and 0.3.0 one at a time and at once, receiving each
/// result in 0.2.0's shape (a 0.3.0 tool's image comes as MCP JSON).
#[tokio::test]
async fn the_frozen_0_2_0_components_keep_working_beside_0_3_0() {
    let d = dispatcher_0_2_0().await;
    let ctx = DispatchContext::new(Session::trusted("v2"));
    let greet = d.dispatch("greet", json!({"name": "Ada"}), &ctx).await;
    assert_eq!(greet.content, r#""Hello, Ada!""#, "{greet:?}");
    let chain = d
        .dispatch(
            "chain",
            json!({"calls": [
                {"name": "greet", "arguments": {"name": "Bo"}},
                {"name": "describe", "arguments": {"count": 2}},
                {"name": "sleep", "arguments": {"ms": 1}},
                {"name": "count_words", "arguments": {"text": "x"}},
            ]}),
            &ctx,
        )
        .await;
    // A 0.2.0 tool's JSON value is its result, as before: an array here.
    let results = chain.json();
    assert_eq!(results[0]["ok"], "Hello, Bo!", "{results}");
    assert_eq!(results[1]["ok"], json!({"count": 2, "label": "2 items"}));
    assert_eq!(results[2]["ok"], "awake");
    assert_eq!(results[3]["error"]["code"], "capability_not_granted", "{results}");
    let media = d
        .dispatch("relay", json!({"name": "media", "arguments": {}}), &ctx)
        .await;
    assert_eq!(media.error_code, None, "{media:?}");
    let blocks = media.json();
    assert_eq!(blocks[1]["type"], "image", "{blocks}");
    assert_eq!(blocks[1]["mimeType"], "image/png");
    let fan = d
        .dispatch(
            "fan_out",
            json!({"calls": [
                {"name": "sleep", "arguments": {"ms": 1}},
                {"name": "greet", "arguments": {"name": "Cy"}},
            ]}),
            &ctx,
        )
        .await;
    assert_eq!(fan.json(), json!([{"ok": "awake"}, {"ok": "Hello, Cy!"}]));
}

#[tokio::test]
async fn an_unknown_world_version_is_refused_naming_the_served_ones() {
    for version in ["0.4.0", "0.1.1"] {
        let err = engine()
            .load(with_tool_version(version), LoadOptions::default())
            .await
            .unwrap_err();
        assert_eq!(err.code(), ErrorCode::UnsupportedWorld, "{version}: {err}");
        let message = err.message();
        assert!(
            message.contains(&format!("toolhost:plugin/tool@{version}")),
            "{message}"
        );
        assert!(message.contains("0.1.0, 0.2.0, 0.3.0"), "{message}");
    }
}

#[tokio::test]
async fn a_0_2_0_components_declare_is_read_at_load() {
    // `handmade` has no custom section: its only declaration is declare().
    let bytes = support::plugin_bytes("handmade");
    let section = toolhost::internal::capabilities::Declared::from_component(&bytes).unwrap();
    assert!(section.is_empty(), "{section:?}");
    // SAFETY: `set_var` is unsafe because a thread reading the environment
    // at the same time may see a torn value; no other test reads or writes
    // this variable, and the host reads it only in the load below.
    unsafe { std::env::set_var("HANDMADE_VAR", "from the host") };
    let granted = engine()
        .load(
            bytes.clone(),
            LoadOptions {
                grants: Grants {
                    env: vec!["HANDMADE_VAR".into()],
                    ..Default::default()
                },
                ..Default::default()
            },
        )
        .await
        .unwrap();
    assert_eq!(granted.declared().env, ["HANDMADE_VAR"]);
    assert_eq!(
        crate::call_ok(&granted, "read_env", json!({"name": "HANDMADE_VAR"})).await,
        "from the host"
    );
    let ungranted = engine().load(bytes, LoadOptions::default()).await.unwrap();
    assert_eq!(ungranted.capabilities().not_granted, ["env HANDMADE_VAR"]);
    assert_eq!(
        crate::call_ok(&ungranted, "read_env", json!({"name": "HANDMADE_VAR"})).await,
        Value::Null
    );
}

#[tokio::test]
async fn an_output_schema_is_listed_and_enforced() {
    let handmade = crate::load("handmade").await;
    let describe = handmade.tools().iter().find(|t| t.name == "describe").unwrap();
    assert_eq!(
        describe.output_schema.as_ref().unwrap()["required"],
        json!(["count", "label"])
    );
    let err = crate::call_err(&handmade, "describe", json!({"count": -1})).await;
    assert_eq!(err.code(), ErrorCode::ToolFailed);
    assert!(err.message().contains("output schema"), "{err}");
}

#[test]
fn both_versions_over_mcp() {
    let (_dir, config) = temp_config(&format!(
        "[[plugins]]\npath = {:?}\n\n[[plugins]]\npath = {:?}\n[plugins.grants]\ntools = [\"greet\", \"sleep\"]\n\n[[plugins]]\npath = {:?}\n\n[[plugins]]\npath = {:?}\n",
        support::frozen(FROZEN_HELLO),
        support::frozen(FROZEN_CALLER),
        support::plugin_path("handmade"),
        support::plugin_path("sleepy"),
    ));
    let out = python_client(
        &stdio_mode(&["--stdio", "--config", &config]),
        json!([
            {"list": true},
            {"call": "greet", "args": {"name": "Ada"}},
            {"call": "describe", "args": {"count": 2}},
            {"call": "relay", "args": {"name": "greet", "arguments": {"name": "Cy"}}},
            {"call": "relay", "args": {"name": "sleep", "arguments": {"ms": 1}}},
            {"call": "describe", "args": {"count": -1}},
        ]),
    );
    let steps = out["steps"].as_array().unwrap();
    let mut listed = names(&steps[0]);
    listed.sort();
    assert_eq!(listed, ["describe", "greet", "read_env", "relay", "sleep"]);
    let tool = |name: &str| {
        steps[0]["tools"]
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t["name"] == name)
            .unwrap()
            .clone()
    };
    assert_eq!(tool("describe")["output_schema"]["type"], "object");
    assert_eq!(tool("greet")["output_schema"], Value::Null);
    // 0.1.0: a JSON string reads as plain text, and is nothing else.
    assert_eq!(steps[1]["text"], "Hello, Ada!");
    assert_eq!(steps[1]["structured"], Value::Null);
    // 0.2.0: the tool's text, its JSON as structured content.
    assert_eq!(steps[2]["text"], "There are 2 items.");
    assert_eq!(steps[2]["structured"], json!({"count": 2, "label": "2 items"}));
    // The frozen 0.1.0 caller calls a 0.1.0 tool and a 0.2.0 tool.
    assert_eq!(steps[3]["text"], "Hello, Cy!", "{}", steps[3]);
    assert_eq!(steps[4]["text"], "awake", "{}", steps[4]);
    assert_eq!(error_code(&steps[5]), "tool_failed");
}
