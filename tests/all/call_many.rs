//! `tools.call-many`: a plugin's nested calls start at once and really run
//! concurrently (proved by a barrier that only opens when every call is
//! inside it), come back in order with typed `call-error`s carrying the
//! host's codes, and each is checked, gated and counted like a single call
//! (events, the `nested_calls` limit).

use std::time::Duration;

use serde_json::{Value, json};
use tokio::sync::watch;
use toolhost::internal::capabilities::Grants;
use toolhost::internal::dispatch::{DispatchContext, Dispatcher, PreDecision, Session};
use toolhost::internal::registry::{
    BoxFuture, CallContext, ComponentRegistration, RegisterComponent, Registry, Tool, ToolOutput, ToolSpec,
};
use toolhost::{Error, ErrorCode, LimitsOverride, LoadOptions};

use crate::{engine, support};

/// A built-in that returns only once `n` calls of it are inside at the same
/// time (each call counts itself in, then waits for the count to reach its
/// `n`), or fails after `wait_ms` saying how many arrived. Calls made one
/// after the other can never pass it.
struct Barrier {
    spec: ToolSpec,
    arrived: watch::Sender<u32>,
}

impl Barrier {
    fn new() -> Self {
        Barrier {
            spec: ToolSpec::new(
                "barrier",
                "Waits until `n` calls are inside at once.",
                json!({
                    "type": "object",
                    "properties": {"n": {"type": "integer"}, "wait_ms": {"type": "integer"}},
                    "required": ["n"]
                }),
            ),
            arrived: watch::channel(0).0,
        }
    }
}

impl Tool for Barrier {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    fn call(&self, args: Value, _ctx: CallContext) -> BoxFuture<'_, toolhost::Result<ToolOutput>> {
        Box::pin(async move {
            let n = args["n"].as_u64().unwrap_or(1) as u32;
            let wait = Duration::from_millis(args["wait_ms"].as_u64().unwrap_or(20_000));
            let mut rx = self.arrived.subscribe();
            self.arrived.send_modify(|count| *count += 1);
            let passed = tokio::time::timeout(wait, rx.wait_for(|count| *count >= n))
                .await
                .is_ok();
            if passed {
                return Ok(ToolOutput::json(&json!("through")));
            }
            Err(Error::new(
                ErrorCode::ToolFailed,
                format!("only {} of {n} calls were inside at once", *rx.borrow()),
            ))
        })
    }
}

/// The caller (granted `granted`, with `limits`), hello, handmade, sleepy
/// and a fresh barrier, in one dispatcher; a pre-call hook blocks `greet`
/// for Mallory.
async fn setup(granted: &[&str], limits: LimitsOverride) -> Dispatcher {
    let caller = engine()
        .load_file(
            &support::plugin_path("caller"),
            LoadOptions {
                grants: Grants {
                    tools: granted.iter().map(|s| s.to_string()).collect(),
                    ..Default::default()
                },
                limits,
                ..Default::default()
            },
        )
        .await
        .unwrap();
    let mut registry = Registry::new();
    registry
        .register_component(&caller, &ComponentRegistration::default())
        .unwrap();
    for name in ["hello", "handmade", "sleepy"] {
        registry
            .register_component(&crate::load(name).await, &ComponentRegistration::default())
            .unwrap();
    }
    registry.register(Barrier::new()).unwrap();
    Dispatcher::builder(registry)
        .pre_hook(|info, args| {
            if info.name == "greet" && args["name"] == "Mallory" {
                PreDecision::Block("Mallory may not be greeted".into())
            } else {
                PreDecision::Continue
            }
        })
        .build()
        .unwrap()
}

/// `n` times the same call, as `calls` takes them.
fn times(n: usize, name: &'static str, arguments: Value) -> Vec<(&'static str, Value)> {
    vec![(name, arguments); n]
}

fn calls(list: &[(&str, Value)]) -> Value {
    let calls: Vec<Value> = list
        .iter()
        .map(|(name, arguments)| json!({"name": name, "arguments": arguments}))
        .collect();
    json!({ "calls": calls })
}

fn ctx() -> DispatchContext {
    DispatchContext::new(Session::trusted("call-many"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn call_many_runs_every_call_at_once() {
    let d = setup(&["barrier"], LimitsOverride::default()).await;
    let four = calls(&times(4, "barrier", json!({"n": 4})));
    let out = d.dispatch("fan_out", four, &ctx()).await;
    // `fan_out` returns a list: an SDK tool's structured `{"result": [...]}`.
    assert_eq!(
        out.json()["result"],
        json!(vec![json!({"ok": "through"}); 4]),
        "{}",
        out.content
    );

    // The same calls one after the other never pass the barrier: the first
    // waits alone (here, until its short wait ends).
    let d = setup(&["barrier"], LimitsOverride::default()).await;
    let two = calls(&times(2, "barrier", json!({"n": 2, "wait_ms": 200})));
    let out = d.dispatch("chain", two, &ctx()).await;
    let first = &out.json()["result"][0]["error"];
    assert_eq!(first["code"], "tool_failed", "{}", out.content);
    assert!(
        first["message"].as_str().unwrap().contains("only 1 of 2"),
        "{first}"
    );
}

#[tokio::test]
async fn call_many_returns_results_in_order_with_typed_errors() {
    let granted = ["greet", "describe", "sleep", "nowhere"];
    let d = setup(&granted, LimitsOverride::default()).await;
    let mut events = d.subscribe();
    let out = d
        .dispatch(
            "fan_out",
            calls(&[
                ("greet", json!({"name": "Ada"})),
                ("greet", json!({"nom": "Ada"})),
                ("relay", json!({"name": "greet", "arguments": {}})),
                ("wipe", json!({})),
                ("describe", json!({"count": -1})),
                ("nowhere", json!({})),
                ("greet", json!({"name": "Mallory"})),
                ("describe", json!({"count": 2})),
            ]),
            &ctx(),
        )
        .await;
    let results = out.json()["result"].clone();
    let codes: Vec<&str> = results
        .as_array()
        .unwrap_or_else(|| panic!("{}", out.content))
        .iter()
        .map(|r| r["error"]["code"].as_str().unwrap_or("ok"))
        .collect();
    assert_eq!(
        codes,
        [
            "ok",
            "invalid_arguments",      // greet's schema, checked by dispatch
            "capability_not_granted", // declared, not granted
            "capability_not_granted", // not even declared
            "tool_failed",            // its result breaks its output schema
            "unknown_tool",           // declared and granted, registered nowhere
            "blocked",                // a pre-call hook
            "ok",
        ],
        "{results}"
    );
    assert_eq!(results[0]["ok"], "Hello, Ada!");
    assert_eq!(results[7]["ok"], json!({"count": 2, "label": "2 items"}));
    let message = results[2]["error"]["message"].as_str().unwrap();
    assert!(message.contains("may not call the tool `relay`"), "{message}");
    // Every call that reached dispatch is an event of its own, whose parent
    // is the fan-out; refusals made in the sandbox never reach it.
    let mut nested = Vec::new();
    let outer = loop {
        let event = events.recv().await.unwrap();
        if event.name == "fan_out" {
            break event;
        }
        nested.push(event);
    };
    assert_eq!(nested.len(), 6, "{nested:?}");
    assert!(nested.iter().all(|e| e.parent_call_id == Some(outer.call_id)));
}

#[tokio::test]
async fn each_nested_call_counts_against_nested_calls() {
    let limits = LimitsOverride {
        nested_calls: Some(3),
        ..Default::default()
    };
    let d = setup(&["greet"], limits).await;
    let five = calls(&times(5, "greet", json!({"name": "Bo"})));
    let out = d.dispatch("fan_out", five, &ctx()).await;
    let results = out.json()["result"].clone();
    for ok in &results.as_array().unwrap()[..3] {
        assert_eq!(ok["ok"], "Hello, Bo!", "{results}");
    }
    for refused in &results.as_array().unwrap()[3..] {
        assert_eq!(refused["error"]["code"], "blocked", "{results}");
        let message = refused["error"]["message"].as_str().unwrap();
        assert!(message.contains("nested_calls"), "{message}");
    }
    // Single calls count too.
    let mixed = calls(&times(4, "greet", json!({"name": "Cy"})));
    let out = d.dispatch("chain", mixed, &ctx()).await;
    assert_eq!(
        out.json()["result"][3]["error"]["code"],
        "blocked",
        "{}",
        out.content
    );
}
