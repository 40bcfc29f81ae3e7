//! The dispatch pipeline: error strings, the audience gate, validation,
//! hooks, interception, execution, events and batches.

use std::time::{Duration, Instant};

use serde_json::json;
use toolhost::ErrorCode;
use toolhost::internal::dispatch::{CallOutcome, DispatchContext, Session};
use toolhost::internal::registry::{Registry, ToolSource};

use crate::fixtures::{def_names, dispatcher, echo, trusted, with_component};
use toolhost::admission::PluginRequest;
use toolhost::config::Config;
use toolhost::live::LivePlugins;

/// Bounds a test's wait so that a broken concurrency guarantee fails
/// instead of hanging (never asserts speed).
async fn bounded<T>(f: impl std::future::Future<Output = T>) -> T {
    tokio::time::timeout(Duration::from_secs(60), f)
        .await
        .expect("the calls never completed")
}

#[tokio::test]
async fn wasm_tools_dispatch_and_their_errors_are_handler_failures() {
    let mut reg = Registry::new();
    with_component(&mut reg, "hello").await;
    let d = dispatcher(reg);
    let ok = d.dispatch("greet", json!({"name": "Ada"}), &trusted()).await;
    assert_eq!(ok.content, r#""Hello, Ada!""#);
    assert!(!ok.is_error());
    let bad = d.dispatch("greet", json!({"name": " "}), &trusted()).await;
    assert_eq!(
        bad.json()["error"],
        "Tool execution failed: invalid_arguments: `name` must not be empty"
    );
    let missing = d.dispatch("greet", json!({}), &trusted()).await;
    let error = missing.json()["error"].as_str().unwrap().to_string();
    assert!(
        error.starts_with("Error executing greet: invalid arguments:") && error.contains("name"),
        "{error}"
    );
}

/// The SDK reads arguments and writes results with toolhost-json, whose
/// scans inside a guest (WebAssembly vectors, 64 then 16 bytes a step) are
/// not the host's: every byte JSON escapes, at every place around those
/// steps, and long texts, pass through a plugin unchanged.
#[tokio::test]
async fn every_byte_json_escapes_passes_through_a_plugin_unchanged() {
    let mut reg = Registry::new();
    with_component(&mut reg, "hello").await;
    let d = dispatcher(reg);
    let base: Vec<char> = "abcdefghijklmnopqrstuvwxyz0123456789".repeat(3).chars().collect();
    let mut names = Vec::new();
    for byte in (0u8..0x20).chain(*b"\"\\/\x7f") {
        for at in [
            0, 1, 15, 16, 17, 31, 32, 47, 56, 57, 63, 64, 65, 79, 80, 95, 100, 107,
        ] {
            let mut name = base.clone();
            name[at] = char::from(byte);
            names.push(name.into_iter().collect::<String>());
        }
    }
    names.push("é✓😀 \u{2028}".repeat(40));
    names.push(format!("{}\"", "x".repeat(16 << 10)));
    names.push(format!("{}\u{1}{}", "y".repeat(20_000), "\\".repeat(3)));
    for name in names {
        let result = d.dispatch("greet", json!({ "name": name }), &trusted()).await;
        assert_eq!(
            result.content,
            serde_json::to_string(&format!("Hello, {name}!")).unwrap(),
            "{name:?}"
        );
    }
}

#[tokio::test]
async fn a_public_session_can_neither_see_nor_call_a_trusted_tool() {
    let mut reg = Registry::new();
    reg.register(echo("secret")).unwrap();
    reg.register_public(echo("open")).unwrap();
    with_component(&mut reg, "hello").await;
    let d = dispatcher(reg);
    let public = DispatchContext::new(Session::public("webhook"));
    assert_eq!(def_names(&d.definitions(&public.session).unwrap()), ["open"]);
    for name in ["secret", "greet"] {
        let r = d.dispatch(name, json!({"name": "x"}), &public).await;
        assert_eq!(r.error_code, Some(ErrorCode::AudienceDenied));
        let error = r.json()["error"].as_str().unwrap().to_string();
        assert!(error.starts_with(&format!("Error executing {name}: ")), "{error}");
    }
    assert_eq!(
        d.dispatch("open", json!({"x": 1}), &public).await.content,
        r#"{"x":1}"#
    );
    assert!(!d.dispatch("secret", json!({}), &trusted()).await.is_error());
}

#[tokio::test]
async fn a_deadline_stops_a_sleeping_wasm_tool() {
    let mut reg = Registry::new();
    with_component(&mut reg, "sleepy").await;
    let mut ctx = trusted();
    ctx.deadline = Some(Instant::now() + Duration::from_millis(200));
    let r = bounded(dispatcher(reg).dispatch("sleep", json!({}), &ctx)).await;
    assert_eq!(r.error_code, Some(ErrorCode::Timeout), "{}", r.content);
}

#[tokio::test]
async fn every_call_publishes_an_event() {
    let mut reg = Registry::new();
    let hello = with_component(&mut reg, "hello").await;
    reg.register(echo("e")).unwrap();
    let d = dispatcher(reg);
    let mut events = d.subscribe();
    let mut ctx = trusted();
    ctx.parent_call_id = Some(77);
    let ok = d.dispatch("greet", json!({"name": "Ada"}), &ctx).await;
    d.dispatch("e", json!({}), &trusted()).await;
    d.dispatch("missing", json!({}), &trusted()).await;

    let wasm = events.recv().await.unwrap();
    assert_eq!(wasm.call_id, ok.call_id);
    assert_eq!(wasm.parent_call_id, Some(77));
    assert_eq!(wasm.name, "greet");
    assert!(wasm.session_id.starts_with("test-"), "{}", wasm.session_id);
    assert_eq!(
        wasm.source,
        Some(ToolSource::Wasm {
            component_hash: hello.hash()
        })
    );
    assert_eq!(wasm.outcome, CallOutcome::Ok);
    let usage = wasm.usage.expect("wasm usage");
    assert!(
        usage.fuel_consumed > 0 && usage.peak_memory_bytes > 0,
        "{usage:?}"
    );

    let builtin = events.recv().await.unwrap();
    assert_eq!(builtin.source, Some(ToolSource::Builtin));
    assert_eq!(builtin.usage, None);
    let unknown = events.recv().await.unwrap();
    assert_eq!(unknown.source, None);
    assert_eq!(unknown.outcome, CallOutcome::Error(ErrorCode::UnknownTool));
}

#[tokio::test]
async fn components_load_and_unload_while_serving() {
    let d = dispatcher(Registry::new());
    let mut changes = d.subscribe_changes();
    let path = crate::support::plugin_path("counter");
    let live = LivePlugins::new(&d, crate::fixtures::engine().clone(), Config::default()).unwrap();
    let c = live.load(PluginRequest::file(&path)).await.unwrap();
    assert!(changes.has_changed().unwrap());
    assert_eq!(*changes.borrow_and_update(), 1);
    assert_eq!(d.dispatch("count", json!({}), &trusted()).await.model_text(), "1");
    assert_eq!(d.unload_component(c.hash()), 1);
    assert_eq!(*changes.borrow_and_update(), 2);
    assert_eq!(
        d.dispatch("count", json!({}), &trusted()).await.error_code,
        Some(ErrorCode::UnknownTool)
    );
}
