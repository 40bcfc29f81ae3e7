//! Progress of long calls: a plugin's `progress.report` feeds the call's
//! progress sink (with a rate cap), through dispatch, and `toolhost serve`
//! turns it into `notifications/progress` for an MCP request that carried a
//! `progressToken`, every one before the result.

use std::sync::{Arc, Mutex};

use serde_json::{Value, json};
use toolhost::internal::dispatch::{DispatchContext, Dispatcher, Session};
use toolhost::internal::progress::{Progress, ProgressSink};
use toolhost::internal::registry::{ComponentRegistration, RegisterComponent, Registry};

use crate::mcp_server::{python_client, stdio_mode};
use crate::support;

#[tokio::test]
async fn a_plugins_reports_reach_the_dispatch_contexts_sink() {
    let stepper = crate::load("stepper").await;
    let mut registry = Registry::new();
    registry
        .register_component(&stepper, &ComponentRegistration::default())
        .unwrap();
    let dispatcher = Dispatcher::builder(registry).build().unwrap();
    let seen: Arc<Mutex<Vec<Progress>>> = Arc::default();
    let sink = ProgressSink::new({
        let seen = Arc::clone(&seen);
        move |p| seen.lock().unwrap().push(p)
    });
    let ctx = DispatchContext {
        progress: Some(sink),
        ..DispatchContext::new(Session::trusted("progress"))
    };
    // Steps 60 ms apart pass the rate cap (one report per 50 ms) one by one.
    let result = dispatcher
        .dispatch("steps", json!({"count": 3, "pause_ms": 60}), &ctx)
        .await;
    assert_eq!(result.json(), json!({"steps": 3}), "{result:?}");
    assert_eq!(result.text.as_deref(), Some("Did 3 steps."));
    let seen = seen.lock().unwrap();
    let done: Vec<f64> = seen.iter().map(|p| p.done).collect();
    assert_eq!(done, [1.0, 2.0, 3.0]);
    assert!(seen.iter().all(|p| p.total == Some(3.0)));
    assert_eq!(seen[1].message.as_deref(), Some("step 2 of 3"));
}

fn progress_of(step: &Value) -> Vec<Value> {
    step["progress"].as_array().unwrap().clone()
}

#[test]
fn progress_notifications_reach_an_mcp_client_before_the_result() {
    let stepper = support::plugin_path("stepper").display().to_string();
    let out = python_client(
        &stdio_mode(&["--stdio", "--plugin", &stepper]),
        json!([
            {"call": "steps", "args": {"count": 3, "pause_ms": 60}, "progress": true},
            {"call": "steps", "args": {"count": 5000}, "progress": true},
        ]),
    );
    let steps = out["steps"].as_array().unwrap();
    assert_eq!(steps[0]["text"], "Did 3 steps.");
    assert_eq!(steps[0]["structured"], json!({"steps": 3}));
    let paced = progress_of(&steps[0]);
    assert_eq!(
        paced,
        [1, 2, 3]
            .map(|i| json!({"progress": f64::from(i), "total": 3.0, "message": format!("step {i} of 3")}))
            .to_vec(),
        "{out}"
    );

    // A burst of 5000 reports is capped: far fewer reach the client, always
    // growing, and the last one (completion) always does.
    let burst = progress_of(&steps[1]);
    assert!(!burst.is_empty() && burst.len() < 500, "{} reports", burst.len());
    let done: Vec<f64> = burst.iter().map(|p| p["progress"].as_f64().unwrap()).collect();
    assert!(done.windows(2).all(|w| w[0] < w[1]), "{done:?}");
    assert_eq!(done.last(), Some(&5000.0));
    assert_eq!(steps[1]["structured"], json!({"steps": 5000}));
}
