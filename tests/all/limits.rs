//! Every sandbox limit, each adversarial plugin, and the host still serving
//! afterwards.

use std::time::{Duration, Instant};

use toolhost::{ErrorCode, LimitsOverride, LoadOptions, LoadedComponent};

use crate::load;

/// A wall-clock limit of `timeout_ms`, with fuel enough that the clock, not
/// the fuel, is what stops a spinning guest (the default fuel lasts well
/// under a second of a tight loop on a fast machine).
fn limits(timeout_ms: u64) -> LimitsOverride {
    LimitsOverride {
        timeout_ms: Some(timeout_ms),
        fuel: Some(u64::MAX / 2),
        ..Default::default()
    }
}

async fn call(
    c: &LoadedComponent,
    tool: &str,
    args: &str,
    over: &LimitsOverride,
) -> toolhost::Result<String> {
    c.call(tool, args, over, None, 1)
        .await
        .result
        .map(|output| output.content)
}

async fn error_code(plugin: &str, tool: &str, args: &str, over: LimitsOverride) -> (ErrorCode, String) {
    let c = load(plugin).await;
    let err = call(&c, tool, args, &over).await.expect_err("the call must fail");
    (err.code(), err.message().to_string())
}

/// After any failure, the host keeps serving `hello`.
pub async fn hello_still_works() {
    let hello = load("hello").await;
    assert_eq!(
        call(&hello, "greet", r#"{"name":"Ada"}"#, &Default::default())
            .await
            .unwrap(),
        r#""Hello, Ada!""#
    );
}

#[tokio::test]
async fn hello_greets() {
    hello_still_works().await;
}

#[tokio::test]
async fn spinning_is_stopped_at_the_deadline() {
    let started = Instant::now();
    let (code, message) = error_code("spin", "spin", "{}", limits(200)).await;
    assert_eq!(code, ErrorCode::Timeout, "{message}");
    assert!(message.contains("200 ms"), "{message}");
    assert!(
        started.elapsed() < Duration::from_secs(2),
        "stopped after {:?}",
        started.elapsed()
    );
    hello_still_works().await;
}

#[tokio::test]
async fn work_inside_the_limit_completes() {
    let spin = load("spin").await;
    // Ample fuel: this test is about the wall-clock limit, and how much fuel
    // 300 ms of computing burns depends on the machine.
    let over = LimitsOverride {
        fuel: Some(u64::MAX / 2),
        ..limits(2000)
    };
    let result: serde_json::Value =
        serde_json::from_str(&call(&spin, "busy", r#"{"ms":300}"#, &over).await.unwrap()).unwrap();
    // A number is a 0.3.0 tool's structured result `{"result": N}`.
    assert!(result["result"].as_u64().unwrap() > 0, "{result}");
    let sleepy = load("sleepy").await;
    assert_eq!(
        call(&sleepy, "sleep", r#"{"ms":300}"#, &limits(2000))
            .await
            .unwrap(),
        r#""awake""#
    );
}

#[tokio::test]
async fn a_guest_blocked_in_a_host_call_is_stopped_at_its_deadline() {
    // Load first: compiling the component (slow on a cold cache, with the
    // other tests compiling theirs) is not part of the call's deadline.
    let sleepy = load("sleepy").await;
    let started = Instant::now();
    let err = call(&sleepy, "sleep", "{}", &limits(300))
        .await
        .expect_err("the call must fail");
    let (code, message) = (err.code(), err.message().to_string());
    assert_eq!(code, ErrorCode::Timeout, "{message}");
    assert!(
        started.elapsed() < Duration::from_secs(2),
        "stopped after {:?}",
        started.elapsed()
    );
    hello_still_works().await;
}

#[tokio::test]
async fn fuel_runs_out() {
    let over = LimitsOverride {
        fuel: Some(5_000_000),
        ..limits(10_000)
    };
    let (code, message) = error_code("spin", "spin", "{}", over).await;
    assert_eq!(code, ErrorCode::OutOfFuel, "{message}");
    hello_still_works().await;
}

#[tokio::test]
async fn memory_growth_is_capped() {
    let over = LimitsOverride {
        memory_mb: Some(32),
        ..Default::default()
    };
    let (code, message) = error_code("hog", "hog", "{}", over).await;
    assert_eq!(code, ErrorCode::MemoryLimit, "{message}");
    assert!(message.contains("32 MiB"), "{message}");
    hello_still_works().await;
}

#[tokio::test]
async fn unbounded_recursion_overflows_the_stack() {
    let (code, message) = error_code("deep", "deep", "{}", Default::default()).await;
    assert_eq!(code, ErrorCode::StackOverflow, "{message}");
    hello_still_works().await;
}

#[tokio::test]
async fn a_panic_is_a_trap_with_the_guests_message() {
    let (code, message) = error_code("panic", "explode", r#"{"n":7}"#, Default::default()).await;
    assert_eq!(code, ErrorCode::Trap);
    assert!(message.contains("the answer was 7, not 42"), "{message}");
    hello_still_works().await;
}

#[tokio::test]
async fn a_huge_result_is_refused() {
    let (code, message) = error_code("huge", "huge", r#"{"mb":4}"#, Default::default()).await;
    assert_eq!(code, ErrorCode::OutputTooLarge, "{message}");
    let small = LimitsOverride {
        output_bytes: Some(100 << 20),
        ..Default::default()
    };
    let huge = load("huge").await;
    assert_eq!(
        call(&huge, "huge", r#"{"mb":4}"#, &small).await.unwrap().len(),
        (4 << 20) + 2
    );
    hello_still_works().await;
}

#[tokio::test]
async fn no_state_survives_between_calls() {
    let counter = load("counter").await;
    for _ in 0..5 {
        assert_eq!(
            call(&counter, "count", "{}", &Default::default()).await.unwrap(),
            r#"{"result":1}"#
        );
    }
}

#[tokio::test]
async fn wrong_arguments_are_invalid_arguments_from_the_host_or_the_sdk() {
    use toolhost::internal::registry::Tool;
    let hello = load("hello").await;
    // A direct call is checked against the schema by the host first.
    let err = call(&hello, "greet", r#"{"name":5}"#, &Default::default())
        .await
        .unwrap_err();
    assert_eq!(err.code(), ErrorCode::InvalidArguments);
    assert!(
        err.message().starts_with("invalid argument `/name`"),
        "{}",
        err.message()
    );
    // Past the host's check (a registry tool is called by dispatch, which
    // checks first), the SDK still answers with serde's message, never a trap.
    let greet = &hello.wasm_tools()[0];
    for (args, serde) in [
        (
            serde_json::json!({"name": 5}),
            "invalid type: integer `5`, expected a string",
        ),
        (serde_json::json!({}), "missing field `name`"),
    ] {
        let err = greet.call(args, Default::default()).await.unwrap_err();
        assert_eq!(err.code(), ErrorCode::InvalidArguments);
        assert!(err.message().contains(serde), "{}", err.message());
    }
    let err = call(&hello, "greet", r#"{"name":"  "}"#, &Default::default())
        .await
        .unwrap_err();
    assert_eq!(
        (err.code(), err.message()),
        (ErrorCode::InvalidArguments, "`name` must not be empty")
    );
    let err = call(&hello, "shout", "{}", &Default::default())
        .await
        .unwrap_err();
    assert_eq!(err.code(), ErrorCode::UnknownTool);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn other_calls_complete_while_one_plugin_spins() {
    let spin = load("spin").await;
    let hello = load("hello").await;
    let over = LimitsOverride {
        fuel: Some(u64::MAX / 2),
        ..limits(5_000)
    };
    let spinning = tokio::spawn(async move { call(&spin, "spin", "{}", &over).await });
    // Many more calls than worker threads: the spinning guest yields at every
    // epoch tick, so it cannot hold a worker.
    for i in 0..20 {
        let name = format!("n{i}");
        let got = call(
            &hello,
            "greet",
            &format!(r#"{{"name":"{name}"}}"#),
            &Default::default(),
        )
        .await
        .unwrap();
        assert_eq!(got, format!("\"Hello, {name}!\""));
    }
    assert!(!spinning.is_finished(), "the spinning call must still be running");
    let err = spinning.await.unwrap().unwrap_err();
    assert_eq!(err.code(), ErrorCode::Timeout);
}

#[tokio::test]
async fn usage_is_reported() {
    let hello = load("hello").await;
    let outcome = hello
        .call("greet", r#"{"name":"x"}"#, &Default::default(), None, 7)
        .await;
    assert!(outcome.result.is_ok());
    assert!(outcome.usage.fuel_consumed > 0);
    assert!(outcome.usage.peak_memory_bytes > 0);
}

#[tokio::test]
async fn a_caller_deadline_earlier_than_the_limit_wins() {
    let spin = load("spin").await;
    let deadline = Instant::now() + Duration::from_millis(150);
    let outcome = spin.call("spin", "{}", &limits(10_000), Some(deadline), 1).await;
    assert_eq!(outcome.result.unwrap_err().code(), ErrorCode::Timeout);
    assert!(Instant::now() < deadline + Duration::from_secs(2));
}

#[tokio::test]
async fn calc_is_exact_and_bounded() {
    let calc = load("calc").await;
    let got = call(
        &calc,
        "calculate_expression",
        r#"{"expression":"0.1 + 0.2"}"#,
        &Default::default(),
    )
    .await
    .unwrap();
    assert_eq!(got, r#"{"expression":"0.1 + 0.2","result":"0.3"}"#);
    for (expr, code) in [
        ("1/0", ErrorCode::ToolFailed),
        ("10^1000", ErrorCode::ToolFailed),
        ("(1", ErrorCode::InvalidArguments),
        (&"(".repeat(40), ErrorCode::InvalidArguments),
        (&"1+".repeat(600), ErrorCode::InvalidArguments),
    ] {
        let args = serde_json::json!({ "expression": expr }).to_string();
        let err = call(&calc, "calculate_expression", &args, &Default::default())
            .await
            .unwrap_err();
        assert_eq!(err.code(), code, "{expr}: {}", err.message());
    }
}

fn stack_kb(kb: u64) -> LimitsOverride {
    LimitsOverride {
        wasm_stack_kb: Some(kb),
        ..Default::default()
    }
}

#[tokio::test]
async fn the_stack_limit_is_the_calls_own() {
    let deep = load("deep").await;
    let shallow = r#"{"depth":1000}"#;
    let deeper = r#"{"depth":20000}"#;
    // The default 1 MiB stack holds 1 000 frames but not 20 000.
    assert_eq!(
        call(&deep, "recurse", shallow, &Default::default())
            .await
            .unwrap(),
        r#"{"result":1000}"#
    );
    let err = call(&deep, "recurse", deeper, &Default::default())
        .await
        .unwrap_err();
    assert_eq!(err.code(), ErrorCode::StackOverflow, "{err}");
    assert!(err.message().contains("1024 KiB"), "{err}");
    // A call may ask for more, or for less.
    assert_eq!(
        call(&deep, "recurse", deeper, &stack_kb(4096)).await.unwrap(),
        r#"{"result":20000}"#
    );
    let err = call(&deep, "recurse", shallow, &stack_kb(64)).await.unwrap_err();
    assert_eq!(err.code(), ErrorCode::StackOverflow, "{err}");
    assert!(err.message().contains("64 KiB"), "{err}");
    // The default-stack calls are unaffected by the other sizes in use.
    assert_eq!(
        call(&deep, "recurse", shallow, &Default::default())
            .await
            .unwrap(),
        r#"{"result":1000}"#
    );
    assert!(crate::engine().stack_tiers().contains(&(4096 << 10)));
}

#[tokio::test]
async fn a_plugins_stack_limit_applies_to_its_calls_and_a_call_can_still_override_it() {
    let options = LoadOptions {
        limits: stack_kb(4096),
        ..Default::default()
    };
    let deep = crate::engine()
        .load_file(&crate::support::plugin_path("deep"), options)
        .await
        .unwrap();
    assert_eq!(
        deep.effective_limits(&Default::default()).wasm_stack_bytes,
        4096 << 10
    );
    let deeper = r#"{"depth":20000}"#;
    assert_eq!(
        call(&deep, "recurse", deeper, &Default::default()).await.unwrap(),
        r#"{"result":20000}"#
    );
    let err = call(&deep, "recurse", deeper, &stack_kb(1024)).await.unwrap_err();
    assert_eq!(err.code(), ErrorCode::StackOverflow, "{err}");
}

#[tokio::test]
async fn a_call_with_its_own_stack_is_still_stopped_at_its_deadline() {
    let spin = load("spin").await;
    let over = LimitsOverride {
        wasm_stack_kb: Some(512),
        ..limits(200)
    };
    let started = Instant::now();
    let err = call(&spin, "spin", "{}", &over).await.unwrap_err();
    assert_eq!(err.code(), ErrorCode::Timeout, "{err}");
    assert!(started.elapsed() < Duration::from_secs(2));
}

#[tokio::test]
async fn stack_limits_out_of_range_are_refused_at_load_and_per_call() {
    let path = crate::support::plugin_path("deep");
    for kb in [1, 64 << 10] {
        let options = LoadOptions {
            limits: stack_kb(kb),
            ..Default::default()
        };
        let err = crate::engine().load_file(&path, options).await.unwrap_err();
        assert_eq!(err.code(), ErrorCode::Config, "{err}");
        assert!(err.message().contains("wasm_stack_kb"), "{err}");
        assert!(err.message().contains("max_wasm_stack"), "{err}");
    }
    let deep = load("deep").await;
    let err = call(&deep, "recurse", r#"{"depth":1}"#, &stack_kb(64 << 10))
        .await
        .unwrap_err();
    assert_eq!(err.code(), ErrorCode::Config, "{err}");
    hello_still_works().await;
}

#[tokio::test]
async fn an_engine_serves_a_bounded_number_of_stack_sizes() {
    let engine = toolhost::Engine::new(toolhost::EngineConfig {
        pooling: false,
        ..Default::default()
    })
    .unwrap();
    let deep = engine
        .load_file(&crate::support::plugin_path("deep"), LoadOptions::default())
        .await
        .unwrap();
    let sizes: [usize; 4] = [128, 256, 512, 2048];
    for kb in sizes {
        assert_eq!(
            call(&deep, "recurse", r#"{"depth":10}"#, &stack_kb(kb as u64))
                .await
                .unwrap(),
            r#"{"result":10}"#
        );
    }
    assert_eq!(engine.stack_tiers(), sizes.map(|kb| kb << 10));
    let err = call(&deep, "recurse", r#"{"depth":10}"#, &stack_kb(3072))
        .await
        .unwrap_err();
    assert_eq!(err.code(), ErrorCode::Config, "{err}");
    assert!(
        err.message().contains("128 KiB, 256 KiB, 512 KiB, 2048 KiB"),
        "{err}"
    );
    // Sizes in use, and the default, keep working.
    assert_eq!(
        call(&deep, "recurse", r#"{"depth":10}"#, &stack_kb(256))
            .await
            .unwrap(),
        r#"{"result":10}"#
    );
    assert_eq!(
        call(&deep, "recurse", r#"{"depth":10}"#, &Default::default())
            .await
            .unwrap(),
        r#"{"result":10}"#
    );
}

#[tokio::test]
async fn table_and_instance_limits_are_enforced_per_call() {
    let tables = LimitsOverride {
        table_elements: Some(1),
        ..Default::default()
    };
    let (code, message) = error_code("hello", "greet", r#"{"name":"Ada"}"#, tables).await;
    assert_eq!(code, ErrorCode::MemoryLimit, "{message}");
    assert!(
        message.contains("table") && message.contains("1 elements"),
        "{message}"
    );
    let instances = LimitsOverride {
        instances: Some(1),
        ..Default::default()
    };
    let (code, message) = error_code("hello", "greet", r#"{"name":"Ada"}"#, instances).await;
    assert_eq!(code, ErrorCode::MemoryLimit, "{message}");
    assert!(message.contains("instances"), "{message}");
    // The limits were the call's own: the next call has the defaults.
    hello_still_works().await;
}

/// What a call captures of its guest's stdout is its own, kept up to its
/// own `stderr_bytes` limit: nothing of an earlier call of the same
/// component (whose WASI context a later call may reuse), and a cap set by
/// one call does not stay for the next.
#[tokio::test]
async fn each_call_keeps_only_its_own_output_under_its_own_cap() {
    let options = LoadOptions {
        keep_stdout: true,
        ..LoadOptions::default()
    };
    let chatty = crate::engine()
        .load_file(&crate::support::plugin_path("chatty"), options)
        .await
        .unwrap();
    let line = |i: u32| format!("stdout line {i}: not JSON-RPC\n");
    for (lines, cap) in [
        (3, None),
        (0, None),
        (2, Some(10)),
        (1, None),
        (0, Some(5)),
        (5, Some(70)),
        (4, None),
    ] {
        let over = LimitsOverride {
            stderr_bytes: cap,
            ..Default::default()
        };
        let args = serde_json::json!({ "lines": lines }).to_string();
        let out = chatty.call("chatter", &args, &over, None, 1).await;
        assert_eq!(out.result.unwrap().content, r#""done""#);
        let all: String = (0..lines).map(line).collect();
        assert_eq!(out.stdout_bytes, all.len() as u64, "{lines} lines");
        let kept = cap.map_or(all.len(), |c| all.len().min(c as usize));
        assert_eq!(out.stdout, all[..kept], "{lines} lines, cap {cap:?}");
    }
}

/// Each call's guest gets fresh hash-map keys (`wasi:random/insecure-seed`),
/// as a fresh instance should, whatever the host keeps between calls.
#[tokio::test]
async fn each_call_keys_its_hash_maps_afresh() {
    let fickle = load("fickle").await;
    let mut moods = std::collections::BTreeSet::new();
    for _ in 0..4 {
        let mood = call(&fickle, "roll", "{}", &LimitsOverride::default())
            .await
            .unwrap();
        assert!(mood.parse::<u64>().is_ok(), "{mood}");
        moods.insert(mood);
    }
    assert_eq!(moods.len(), 4, "{moods:?}");
}
