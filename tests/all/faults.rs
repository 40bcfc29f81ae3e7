//! Faults contained: one bad plugin entry leaves the others serving and is
//! reported with its reason; a failed call reports what it used; a
//! `require_approval` pattern that can never match is a config error; a
//! plugin's log is capped per unit of time.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use serde_json::{Value, json};
use toolhost::internal::dispatch::{CallOutcome, DispatchContext, Session};
use toolhost::internal::registry::Registry;
use toolhost::{ErrorCode, LimitsOverride, LoadOptions};

use crate::fixtures::{engine, with_component};
use crate::protected::{project, start};
use crate::support;

/// Regression (hardening): one bad `[[plugins]]` entry aborted the whole
/// config.
#[test]
fn a_bad_plugin_entry_is_reported_and_the_rest_serve() {
    let wrong = toolhost::ComponentHash::of(b"other");
    let (dir, config) = project(&format!(
        r#"
[[plugins]]
path = "missing.wasm"
[[plugins]]
path = "garbage.wasm"
[[plugins]]
path = "{{PLUGINS}}/calc.wasm"
hash = "{wrong}"
[[plugins]]
path = "{{PLUGINS}}/hello.wasm"
"#
    ));
    std::fs::write(dir.path().join("garbage.wasm"), b"not wasm at all").unwrap();
    let config = config.display().to_string();
    let run = |args: &[&str]| {
        std::process::Command::new(support::toolhost_bin())
            .args(args)
            .args([
                "--config",
                &config,
                "--cache-dir",
                &support::cache_dir().display().to_string(),
            ])
            .output()
            .unwrap()
    };
    let out = run(&["tools", "--status"]);
    assert!(out.status.success(), "{out:?}");
    let status: Value = serde_json::from_slice(&out.stdout).unwrap();
    let codes: Vec<&Value> = status["plugins"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| &p["error_code"])
        .collect();
    assert_eq!(
        codes,
        [
            &json!("io"),
            &json!("invalid_component"),
            &json!("hash_mismatch"),
            &Value::Null
        ],
        "{status}"
    );
    assert_eq!(status["plugins"][3]["status"], "loaded");
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("plugin not loaded"),
        "logged: {out:?}"
    );
    let greet = run(&["call-tool", "greet", r#"{"name":"Ada"}"#]);
    assert_eq!(
        String::from_utf8_lossy(&greet.stdout).trim(),
        r#""Hello, Ada!""#,
        "{greet:?}"
    );
}

/// Regression (hardening): usage was reported only on success.
#[tokio::test]
async fn a_failed_call_reports_what_it_used() {
    let mut registry = Registry::new();
    with_component(&mut registry, "spin").await;
    with_component(&mut registry, "hog").await;
    let d = toolhost::internal::dispatch::Dispatcher::builder(registry)
        .build()
        .unwrap();
    let mut events = d.subscribe();
    let mut ctx = DispatchContext::new(Session::trusted("t"));
    ctx.limits = LimitsOverride {
        fuel: Some(50_000_000),
        ..LimitsOverride::default()
    };
    let out_of_fuel = d.dispatch("spin", json!({}), &ctx).await;
    assert_eq!(
        out_of_fuel.error_code,
        Some(ErrorCode::OutOfFuel),
        "{}",
        out_of_fuel.content
    );
    let usage = &out_of_fuel.json()["usage"];
    assert!(usage["fuel_consumed"].as_u64().unwrap() >= 40_000_000, "{usage}");
    let event = events.recv().await.unwrap();
    assert_eq!(event.outcome, CallOutcome::Error(ErrorCode::OutOfFuel));
    assert!(event.usage.unwrap().fuel_consumed >= 40_000_000);

    ctx.limits = LimitsOverride {
        timeout_ms: Some(100),
        ..LimitsOverride::default()
    };
    let timeout = d.dispatch("spin", json!({}), &ctx).await;
    assert_eq!(
        timeout.error_code,
        Some(ErrorCode::Timeout),
        "{}",
        timeout.content
    );
    // Measured, never asserted against the clock: the usage is reported.
    assert!(
        timeout.json()["usage"]["wall_time_ms"].is_u64(),
        "{}",
        timeout.content
    );
    assert!(events.recv().await.unwrap().usage.is_some());

    ctx.limits = LimitsOverride {
        memory_mb: Some(16),
        ..LimitsOverride::default()
    };
    let hog = d.dispatch("hog", json!({}), &ctx).await;
    assert_eq!(hog.error_code, Some(ErrorCode::MemoryLimit), "{}", hog.content);
    assert!(
        hog.json()["usage"]["peak_memory_bytes"].as_u64().unwrap() > 1 << 20,
        "{}",
        hog.content
    );
}

/// Regression (hardening): a pattern that can never match a tool name was
/// silently useless.
#[tokio::test]
async fn require_approval_patterns_that_cannot_match_are_refused() {
    let (_dir, config) = project("require_approval = [\"github.*\"]\n");
    let err = toolhost::config::Config::load(&config)
        .unwrap()
        .start(engine(), Registry::new(), None)
        .await
        .unwrap_err();
    assert_eq!(err.code(), ErrorCode::Config);
    assert!(
        err.message().contains("github.*") && err.message().contains("'.'"),
        "{err}"
    );
    let (_dir, config) = project(&format!(
        "require_approval = [\"gret\"]\n[[plugins]]\npath = \"{}\"\n",
        support::plugin_path("hello").display()
    ));
    let started = start(&config).await;
    assert!(
        started
            .warnings
            .iter()
            .any(|w| w.contains("`gret` matches no tool")),
        "{:?}",
        started.warnings
    );
}

/// Counts the `toolhost::plugin` log events emitted on this thread.
struct Count(Arc<AtomicUsize>);

impl<S: tracing::Subscriber> tracing_subscriber::Layer<S> for Count {
    fn on_event(&self, event: &tracing::Event<'_>, _: tracing_subscriber::layer::Context<'_, S>) {
        if event.metadata().target() == "toolhost::plugin"
            && event.metadata().level() == &tracing::Level::INFO
        {
            self.0.fetch_add(1, Ordering::Relaxed);
        }
    }
}

/// Regression (hardening): `host.log` was capped per call but not per unit
/// of time, so a plugin called in a loop could flood the host's log.
#[test]
fn a_plugins_log_is_capped_per_unit_of_time() {
    use tracing_subscriber::layer::SubscriberExt;
    let seen = Arc::new(AtomicUsize::new(0));
    let subscriber = tracing_subscriber::registry().with(Count(Arc::clone(&seen)));
    let _guard = tracing::subscriber::set_default(subscriber);
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let (rate, burst) = (1_000u64, 4_000u64);
    let started = std::time::Instant::now();
    rt.block_on(async {
        let limits = LimitsOverride {
            log_bytes_per_sec: Some(rate),
            log_burst_bytes: Some(burst),
            ..LimitsOverride::default()
        };
        let options = LoadOptions {
            limits,
            ..LoadOptions::default()
        };
        let chatty = engine()
            .load_file(&support::plugin_path("chatty"), options)
            .await
            .unwrap();
        for _ in 0..20 {
            let r = chatty
                .call(
                    "chatter",
                    r#"{"lines":0,"records":50}"#,
                    &Default::default(),
                    None,
                    1,
                )
                .await;
            assert_eq!(r.result.unwrap().content, r#""done""#);
        }
    });
    let records = seen.load(Ordering::Relaxed);
    // Each record costs at least its message (13 bytes) and 16 more; what
    // the bucket could have held in the time the calls took bounds them.
    let allowed = (burst as f64 + rate as f64 * started.elapsed().as_secs_f64()) / 29.0;
    assert!(records > 0, "some records get through");
    assert!((records as f64) <= allowed + 1.0, "{records} records > {allowed}");
    assert!(
        records < 1000,
        "1000 records were written: the per-call cap alone"
    );
}
