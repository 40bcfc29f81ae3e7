//! The dispatch pipeline: error strings, the audience gate, validation,
//! hooks, interception, execution, events and batches.

use std::borrow::Cow;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tokio::sync::{Barrier, Notify};
use toolhost_core::dispatch::{
    CallGate, DispatchContext, Dispatcher, GateDecision, PreDecision, Session, ToolCall, Waiting,
};
use toolhost_core::registry::{
    BlockingFnTool, BoxFuture, CallContext, FnTool, Registration, Registry, Standing, Tool, ToolOutput,
    ToolSpec,
};
use toolhost_core::{Error, ErrorCode, Result};

use crate::fixtures::{def_names, dispatcher, echo, echo_with, failing, object, trusted};

/// Bounds a test's wait so that a broken concurrency guarantee fails
/// instead of hanging (never asserts speed).
async fn bounded<T>(f: impl std::future::Future<Output = T>) -> T {
    tokio::time::timeout(Duration::from_secs(60), f)
        .await
        .expect("the calls never completed")
}

#[tokio::test]
async fn unknown_tool_error() {
    let d = dispatcher(Registry::new());
    let r = d.dispatch("nope", json!({}), &trusted()).await;
    assert_eq!(
        r.json(),
        json!({"error": "Unknown tool: nope", "error_code": "unknown_tool"})
    );
    assert_eq!(r.error_code, Some(ErrorCode::UnknownTool));
}

#[tokio::test]
async fn handler_failure_error() {
    let mut reg = Registry::new();
    reg.register(failing("boom", ErrorCode::ToolFailed, "disk full"))
        .unwrap();
    let r = dispatcher(reg).dispatch("boom", json!({}), &trusted()).await;
    assert_eq!(
        r.json(),
        json!({"error": "Tool execution failed: tool_failed: disk full", "error_code": "tool_failed"})
    );
}

#[tokio::test]
async fn pipeline_failure_error_names_the_failing_field() {
    let mut reg = Registry::new();
    reg.register(echo_with(
        "add",
        "Adds.",
        object(json!({"a": {"type": "integer"}, "b": {"type": "integer"}})),
    ))
    .unwrap();
    let d = dispatcher(reg);
    let r = d.dispatch("add", json!({"a": 1, "b": "two"}), &trusted()).await;
    let error = r.json()["error"].as_str().unwrap().to_string();
    assert!(
        error.starts_with("Error executing add: invalid argument `/b`:"),
        "{error}"
    );
    assert_eq!(r.json()["error_code"], "invalid_arguments");
    let r = d.dispatch("add", json!({"a": 1}), &trusted()).await;
    let error = r.json()["error"].as_str().unwrap().to_string();
    assert!(
        error.starts_with("Error executing add: invalid arguments:") && error.contains("\"b\""),
        "{error}"
    );
}

#[tokio::test]
async fn pre_hooks_block_or_rewrite_and_post_hooks_see_every_result() {
    let mut reg = Registry::new();
    reg.register(echo("rm")).unwrap();
    reg.register(echo("say")).unwrap();
    let posts = Arc::new(AtomicUsize::new(0));
    let counted = Arc::clone(&posts);
    let d = Dispatcher::builder(reg)
        .pre_hook(|call, _| match call.name.as_str() {
            "rm" => PreDecision::Block("rm is disabled by policy".into()),
            _ => PreDecision::Continue,
        })
        .pre_hook(|call, args| match call.name.as_str() {
            "say" => {
                let mut args = args.clone();
                args["rewritten"] = json!(true);
                PreDecision::Rewrite(args)
            }
            _ => PreDecision::Continue,
        })
        .post_hook(move |call, result| {
            counted.fetch_add(1, Ordering::SeqCst);
            if call.name == "say" && !result.is_error() {
                result.content = json!({"wrapped": result.json()}).to_string();
            }
        })
        .build()
        .unwrap();
    let blocked = d.dispatch("rm", json!({}), &trusted()).await;
    assert_eq!(
        blocked.json(),
        json!({"error": "Error executing rm: rm is disabled by policy", "error_code": "blocked"})
    );
    let said = d.dispatch("say", json!({"text": "hi"}), &trusted()).await;
    assert_eq!(said.json(), json!({"wrapped": {"text": "hi", "rewritten": true}}));
    assert_eq!(posts.load(Ordering::SeqCst), 2);
}

#[tokio::test]
async fn host_application_tools_are_intercepted_first() {
    let mut reg = Registry::new();
    // The schema is registered for the model; the stub must never run.
    reg.register(failing("memory", ErrorCode::Internal, "stub reached"))
        .unwrap();
    let pre = Arc::new(AtomicUsize::new(0));
    let seen = Arc::clone(&pre);
    let d = Dispatcher::builder(reg)
        .intercept(FnTool::new(
            ToolSpec::new("memory", "App memory.", json!({"type": "object"})),
            |_, _| async { Ok(ToolOutput::json_text(r#""remembered""#)) },
        ))
        .pre_hook(move |_, _| {
            seen.fetch_add(1, Ordering::SeqCst);
            PreDecision::Continue
        })
        .build()
        .unwrap();
    assert_eq!(def_names(&d.definitions(&trusted().session).unwrap()), ["memory"]);
    assert_eq!(
        d.dispatch("memory", json!({}), &trusted()).await.content,
        r#""remembered""#
    );
    assert_eq!(
        pre.load(Ordering::SeqCst),
        1,
        "the pre-call hooks see intercepted calls"
    );
}

/// Regression (hardening): intercepted tools used to run before every gate,
/// so a public session could call any of them and nothing validated their
/// arguments or saw their calls.
#[tokio::test]
async fn intercepted_tools_pass_the_same_gates() {
    let posts = Arc::new(AtomicUsize::new(0));
    let counted = Arc::clone(&posts);
    let d = Dispatcher::builder(Registry::new())
        .intercept(FnTool::new(
            ToolSpec::new(
                "admin_reset",
                "Resets the app.",
                json!({"type": "object", "properties": {"force": {"type": "boolean"}}, "required": ["force"]}),
            ),
            |_, _| async { Ok(ToolOutput::json_text(r#""reset""#)) },
        ))
        .intercept_public(FnTool::new(
            ToolSpec::new("app_status", "Status.", json!({"type": "object"})),
            |_, _| async { Ok(ToolOutput::json_text(r#""fine""#)) },
        ))
        .pre_hook(|info, _| {
            if info.name == "app_status" && info.parent_call_id == Some(99) {
                PreDecision::Block("status is off for nested calls".into())
            } else {
                PreDecision::Continue
            }
        })
        .post_hook(move |_, _| {
            counted.fetch_add(1, Ordering::SeqCst);
        })
        .build()
        .unwrap();
    let public = DispatchContext::new(Session::public("web"));
    let denied = d.dispatch("admin_reset", json!({"force": true}), &public).await;
    assert_eq!(
        denied.error_code,
        Some(ErrorCode::AudienceDenied),
        "{}",
        denied.content
    );
    assert_eq!(
        d.dispatch("app_status", json!({}), &public).await.content,
        r#""fine""#
    );
    let invalid = d
        .dispatch("admin_reset", json!({"force": "yes"}), &trusted())
        .await;
    assert_eq!(
        invalid.error_code,
        Some(ErrorCode::InvalidArguments),
        "{}",
        invalid.content
    );
    assert_eq!(
        d.dispatch("admin_reset", json!({"force": true}), &trusted())
            .await
            .content,
        r#""reset""#
    );
    let mut nested = trusted();
    nested.parent_call_id = Some(99);
    let blocked = d.dispatch("app_status", json!({}), &nested).await;
    assert_eq!(
        blocked.error_code,
        Some(ErrorCode::Blocked),
        "{}",
        blocked.content
    );
    assert_eq!(
        posts.load(Ordering::SeqCst),
        5,
        "post-call hooks (spill) see every call"
    );
}

#[tokio::test]
async fn blocking_handlers_run_on_the_blocking_pool() {
    let mut reg = Registry::new();
    reg.register(BlockingFnTool::new(
        ToolSpec::new("thread", "Names its thread.", json!({"type": "object"})),
        |_, _| {
            std::thread::sleep(Duration::from_millis(5));
            Ok(ToolOutput::json(&json!(
                std::thread::current().name().unwrap_or("").to_string()
            )))
        },
    ))
    .unwrap();
    let r = dispatcher(reg).dispatch("thread", json!({}), &trusted()).await;
    assert!(!r.is_error(), "{}", r.content);
}

#[tokio::test]
async fn a_panicking_handler_is_a_handler_failure() {
    let mut reg = Registry::new();
    reg.register(FnTool::new(
        ToolSpec::new("oops", "Panics.", json!({"type": "object"})),
        |_, _| async {
            if true {
                panic!("handler exploded");
            }
            Ok(ToolOutput::json_text("null"))
        },
    ))
    .unwrap();
    let r = dispatcher(reg).dispatch("oops", json!({}), &trusted()).await;
    assert_eq!(
        r.json(),
        json!({"error": "Tool execution failed: internal: the handler panicked: handler exploded", "error_code": "internal"})
    );
}

#[tokio::test]
async fn a_deadline_ends_the_call_with_timeout() {
    let mut reg = Registry::new();
    reg.register(never_ends("wait")).unwrap();
    let mut ctx = trusted();
    ctx.deadline = Some(Instant::now() + Duration::from_millis(50));
    let r = dispatcher(reg).dispatch("wait", json!({}), &ctx).await;
    assert_eq!(r.error_code, Some(ErrorCode::Timeout));
    assert!(
        r.json()["error"]
            .as_str()
            .unwrap()
            .starts_with("Tool execution failed: timeout: ")
    );
}

#[tokio::test]
async fn cancellation_ends_the_call() {
    let mut reg = Registry::new();
    reg.register(never_ends("wait")).unwrap();
    let d = dispatcher(reg);
    let ctx = trusted();
    let cancel = ctx.cancel.clone();
    let call = tokio::spawn({
        let d = d.clone();
        async move { d.dispatch("wait", json!({}), &ctx).await }
    });
    cancel.cancel();
    let r = bounded(call).await.unwrap();
    assert_eq!(
        r.json(),
        json!({"error": "Error executing wait: the call was cancelled", "error_code": "cancelled"})
    );
}

#[tokio::test]
async fn a_batch_runs_concurrently_and_keeps_call_order() {
    let barrier = Arc::new(Barrier::new(2));
    let go = Arc::new(Notify::new());
    let mut reg = Registry::new();
    for (name, waits_for_go) in [("first", true), ("second", false)] {
        reg.register(Rendezvous {
            spec: ToolSpec::new(name, "Meets the other.", json!({"type": "object"})),
            barrier: Arc::clone(&barrier),
            go: Arc::clone(&go),
            waits_for_go,
        })
        .unwrap();
    }
    reg.register(echo("e")).unwrap();
    let d = dispatcher(reg);
    let calls = vec![
        ToolCall::new("first", json!({})),
        ToolCall::new("nope", json!({})),
        ToolCall::new("second", json!({})),
        ToolCall::new("e", json!({"n": 4})),
    ];
    let results = bounded(d.dispatch_batch(calls, &trusted())).await;
    let contents: Vec<&str> = results.iter().map(|r| r.content.as_str()).collect();
    assert_eq!(
        contents,
        [
            r#""first""#,
            r#"{"error":"Unknown tool: nope","error_code":"unknown_tool"}"#,
            r#""second""#,
            r#"{"n":4}"#
        ]
    );
}

#[tokio::test]
async fn a_batch_is_bounded_and_a_sequential_tool_runs_alone() {
    let gauge = Arc::new(Gauge::default());
    let alone = Arc::new(AtomicUsize::new(0));
    let mut reg = Registry::new();
    for (name, sequential) in [("par", false), ("seq", true)] {
        reg.register(Gauged {
            spec: ToolSpec::new(name, "Gauged.", json!({"type": "object"})),
            gauge: Arc::clone(&gauge),
            sequential,
            seen_alone: Arc::clone(&alone),
        })
        .unwrap();
    }
    let d = Dispatcher::builder(reg).batch_concurrency(2).build().unwrap();
    let mut calls: Vec<ToolCall> = (0..6).map(|_| ToolCall::new("par", json!({}))).collect();
    calls.insert(3, ToolCall::new("seq", json!({})));
    let results = bounded(d.dispatch_batch(calls, &trusted())).await;
    assert!(results.iter().all(|r| !r.is_error()));
    assert!(gauge.max.load(Ordering::SeqCst) <= 2, "bounded to 2");
    assert_eq!(
        alone.load(Ordering::SeqCst),
        20,
        "the sequential call always ran alone"
    );
}

#[tokio::test]
async fn an_unavailable_tool_cannot_be_called() {
    let mut reg = Registry::new();
    reg.register(
        toolhost_core::registry::Registration::new(echo("gone"))
            .check(toolhost_core::registry::Check::new(|| false)),
    )
    .unwrap();
    let r = dispatcher(reg).dispatch("gone", json!({}), &trusted()).await;
    assert_eq!(r.error_code, Some(ErrorCode::Unavailable));
    assert!(
        r.json()["error"]
            .as_str()
            .unwrap()
            .starts_with("Error executing gone: ")
    );
}

fn never_ends(name: &str) -> impl Tool + use<> {
    FnTool::new(
        ToolSpec::new(name, "Waits forever.", json!({"type": "object"})),
        |_, ctx: CallContext| async move {
            ctx.cancel.cancelled().await;
            Err(Error::new(ErrorCode::Cancelled, "saw the cancellation"))
        },
    )
}

/// A tool that waits at a shared barrier, so two calls only finish if they
/// overlapped; `first` also waits for `go`, so it finishes last.
struct Rendezvous {
    spec: ToolSpec,
    barrier: Arc<Barrier>,
    go: Arc<Notify>,
    waits_for_go: bool,
}

impl Tool for Rendezvous {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }
    fn call(&self, _: Value, _: CallContext) -> BoxFuture<'_, Result<ToolOutput>> {
        Box::pin(async move {
            self.barrier.wait().await;
            if self.waits_for_go {
                self.go.notified().await;
            } else {
                self.go.notify_one();
            }
            Ok(ToolOutput::json(&json!(self.spec.name)))
        })
    }
}

/// Counts how many calls run at once and the most ever seen.
#[derive(Default)]
struct Gauge {
    now: AtomicUsize,
    max: AtomicUsize,
}

struct Gauged {
    spec: ToolSpec,
    gauge: Arc<Gauge>,
    sequential: bool,
    seen_alone: Arc<AtomicUsize>,
}

impl Tool for Gauged {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }
    fn sequential(&self) -> bool {
        self.sequential
    }
    fn call(&self, _: Value, _: CallContext) -> BoxFuture<'_, Result<ToolOutput>> {
        Box::pin(async move {
            let now = self.gauge.now.fetch_add(1, Ordering::SeqCst) + 1;
            self.gauge.max.fetch_max(now, Ordering::SeqCst);
            for _ in 0..20 {
                tokio::task::yield_now().await;
                tokio::time::sleep(Duration::from_millis(1)).await;
                if self.sequential && self.gauge.now.load(Ordering::SeqCst) == 1 {
                    self.seen_alone.fetch_add(1, Ordering::SeqCst);
                }
            }
            self.gauge.now.fetch_sub(1, Ordering::SeqCst);
            Ok(ToolOutput::json_text("null"))
        })
    }
}

/// Stands for a call of `remote__TOOL` with `args` (as a lazy MCP server's
/// `call_tool` does), for tools `known` and `blocked`; refuses any other.
struct Proxy(ToolSpec);

impl Tool for Proxy {
    fn spec(&self) -> &ToolSpec {
        &self.0
    }

    fn call(&self, arguments: Value, _ctx: CallContext) -> BoxFuture<'_, Result<ToolOutput>> {
        Box::pin(async move { Ok(ToolOutput::json(&json!({"ran": arguments}))) })
    }

    fn stands_for<'a>(&self, arguments: &'a Value) -> Standing<'a> {
        match arguments["tool"].as_str() {
            Some(tool @ ("known" | "blocked")) => Standing::For {
                name: format!("remote__{tool}"),
                arguments: Cow::Borrowed(&arguments["args"]),
            },
            _ => Standing::Refused(Box::new(ToolOutput::refused_because(
                ErrorCode::UnknownTool,
                "no such tool",
                json!({"ok": false, "error_code": "unknown_tool"}).to_string(),
            ))),
        }
    }

    fn stand_in_arguments(&self, mut arguments: Value, effective: Value) -> Value {
        arguments["args"] = effective;
        arguments
    }
}

/// A gate that lets everything through and records what it was asked.
#[derive(Debug, Default)]
struct Recording(std::sync::Mutex<Vec<(String, Value)>>);

impl CallGate for Recording {
    fn check_call<'a>(
        &'a self,
        _session: &'a str,
        tool: &'a str,
        arguments: &'a Value,
        _waiting: &'a Waiting,
    ) -> BoxFuture<'a, GateDecision> {
        self.0.lock().unwrap().push((tool.to_string(), arguments.clone()));
        Box::pin(async { GateDecision::Allow })
    }
}

#[tokio::test]
async fn a_call_that_stands_for_another_is_that_call_to_hooks_and_the_gate() {
    let mut reg = Registry::new();
    let schema =
        json!({"type": "object", "properties": {"tool": {"type": "string"}, "args": {"type": "object"}}});
    reg.register(Registration::from_arc(Arc::new(Proxy(ToolSpec::new(
        "proxy",
        "Calls a remote tool.",
        schema,
    )))))
    .unwrap();
    let gate = Arc::new(Recording::default());
    let pre = Arc::new(std::sync::Mutex::new(Vec::new()));
    let post = Arc::new(std::sync::Mutex::new(Vec::new()));
    let (pre_seen, post_seen) = (Arc::clone(&pre), Arc::clone(&post));
    let d = Dispatcher::builder(reg)
        .pre_hook(move |call, args| {
            pre_seen.lock().unwrap().push((call.name.clone(), args.clone()));
            match call.name.as_str() {
                "remote__blocked" => PreDecision::Block("not that one".into()),
                "remote__known" => {
                    let mut args = args.clone();
                    args["hooked"] = json!(true);
                    PreDecision::Rewrite(args)
                }
                _ => PreDecision::Continue,
            }
        })
        .post_hook(move |call, _| post_seen.lock().unwrap().push(call.name.clone()))
        .gate(Arc::clone(&gate) as Arc<dyn CallGate>)
        .build()
        .unwrap();

    let mut events = d.subscribe();

    // The hooks see the call as made, then as the call it stands for; a
    // rewrite of that call reaches the tool; the gate judges that call.
    let known = json!({"tool": "known", "args": {"x": 1}});
    let ran = d.dispatch("proxy", known.clone(), &trusted()).await;
    assert_eq!(
        ran.json(),
        json!({"ran": {"tool": "known", "args": {"x": 1, "hooked": true}}})
    );
    assert_eq!(
        *pre.lock().unwrap(),
        [
            ("proxy".to_string(), known),
            ("remote__known".to_string(), json!({"x": 1}))
        ]
    );
    assert_eq!(
        *gate.0.lock().unwrap(),
        [("remote__known".to_string(), json!({"x": 1, "hooked": true}))]
    );
    assert_eq!(*post.lock().unwrap(), ["remote__known"]);
    let event = events.recv().await.unwrap();
    assert_eq!(
        (event.name.as_str(), event.stands_for.as_deref()),
        ("proxy", Some("remote__known"))
    );

    // A hook's block of the call it stands for blocks it.
    let blocked = d
        .dispatch("proxy", json!({"tool": "blocked", "args": {}}), &trusted())
        .await;
    assert_eq!(
        blocked.error_code,
        Some(ErrorCode::Blocked),
        "{}",
        blocked.content
    );
    assert!(blocked.content.contains("not that one"), "{}", blocked.content);
    assert_eq!(post.lock().unwrap().last().unwrap(), "remote__blocked");

    // A call it refuses is refused as it says, before anyone is asked.
    let refused = d.dispatch("proxy", json!({"tool": "nope"}), &trusted()).await;
    assert_eq!(refused.error_code, Some(ErrorCode::UnknownTool));
    assert_eq!(refused.json(), json!({"ok": false, "error_code": "unknown_tool"}));
    assert_eq!(gate.0.lock().unwrap().len(), 1, "the gate was asked only once");
    assert_eq!(post.lock().unwrap().last().unwrap(), "proxy");
}
