//! Plugins calling tools through `toolhost:plugin/tools`: only declared and
//! granted tools, through the caller the dispatch pipeline provides, within a
//! depth limit and the caller's deadline.

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use toolhost::internal::capabilities::Grants;
use toolhost::internal::registry::{BoxFuture, CallContext, Tool, ToolCaller, ToolCallerHandle, ToolOutput};
use toolhost::{ErrorCode, LimitsOverride, LoadOptions};

use crate::{engine, support};
use toolhost::internal::registry::RegisterComponent;

/// A minimal stand-in for the dispatch pipeline: looks tools up by name and
/// passes itself on as the caller.
struct MapCaller {
    tools: HashMap<String, Arc<dyn Tool>>,
    next_id: AtomicU64,
    parents: std::sync::Mutex<Vec<(u64, Option<u64>, u32)>>,
}

impl ToolCaller for MapCaller {
    fn call_tool(
        &self,
        name: &str,
        arguments: Value,
        mut ctx: CallContext,
    ) -> BoxFuture<'_, toolhost::Result<ToolOutput>> {
        let tool = self.tools.get(name).cloned();
        let name = name.to_string();
        ctx.call_id = self.next_id.fetch_add(1, Ordering::SeqCst);
        self.parents
            .lock()
            .unwrap()
            .push((ctx.call_id, ctx.parent_call_id, ctx.depth));
        Box::pin(async move {
            match tool {
                Some(tool) => tool.call(arguments, ctx).await,
                None => Err(toolhost::Error::new(
                    ErrorCode::UnknownTool,
                    format!("Unknown tool: {name}"),
                )),
            }
        })
    }
}

async fn setup(caller_grants: &[&str]) -> Arc<MapCaller> {
    let load = |name: &'static str, grants: Grants| async move {
        let options = LoadOptions {
            grants,
            ..Default::default()
        };
        engine()
            .load_file(&support::plugin_path(name), options)
            .await
            .unwrap()
    };
    let grants = Grants {
        tools: caller_grants.iter().map(|s| s.to_string()).collect(),
        ..Default::default()
    };
    let mut tools: HashMap<String, Arc<dyn Tool>> = HashMap::new();
    for component in [
        load("caller", grants).await,
        load("hello", Grants::default()).await,
        load("sleepy", Grants::default()).await,
    ] {
        for tool in component.wasm_tools() {
            tools.insert(tool.spec().name.clone(), Arc::new(tool));
        }
    }
    Arc::new(MapCaller {
        tools,
        next_id: AtomicU64::new(100),
        parents: Default::default(),
    })
}

async fn relay(caller: &Arc<MapCaller>, arguments: Value, timeout_ms: u64) -> toolhost::Result<String> {
    let ctx = CallContext {
        call_id: 1,
        limits: LimitsOverride {
            timeout_ms: Some(timeout_ms),
            ..Default::default()
        },
        caller: Some(ToolCallerHandle(caller.clone())),
        ..CallContext::default()
    };
    caller.tools["relay"]
        .call(arguments, ctx)
        .await
        .map(|o| o.content)
}

#[tokio::test]
async fn a_granted_tool_is_called_through_the_caller() {
    let caller = setup(&["greet"]).await;
    let got = relay(
        &caller,
        json!({"name": "greet", "arguments": {"name": "Ada"}}),
        5_000,
    )
    .await
    .unwrap();
    assert_eq!(got, r#""Hello, Ada!""#);
    assert_eq!(caller.parents.lock().unwrap().as_slice(), [(100, Some(1), 1)]);
}

#[tokio::test]
async fn an_ungranted_or_undeclared_tool_is_refused_naming_the_grant() {
    for grants in [&[][..], &["count"][..]] {
        let caller = setup(grants).await;
        let err = relay(
            &caller,
            json!({"name": "greet", "arguments": {"name": "Ada"}}),
            5_000,
        )
        .await
        .unwrap_err();
        assert_eq!(err.code(), ErrorCode::ToolFailed);
        assert!(
            err.message().contains("capability_not_granted"),
            "{}",
            err.message()
        );
        assert!(
            err.message().contains("may not call the tool `greet`"),
            "{}",
            err.message()
        );
        assert!(caller.parents.lock().unwrap().is_empty(), "nothing was called");
    }
}

#[tokio::test]
async fn without_a_caller_nested_calls_are_refused() {
    let caller = setup(&["greet"]).await;
    let ctx = CallContext::default();
    let err = caller.tools["relay"]
        .call(json!({"name": "greet", "arguments": {"name": "x"}}), ctx)
        .await
        .unwrap_err();
    assert!(
        err.message()
            .contains("only available to calls made through the dispatch pipeline"),
        "{}",
        err.message()
    );
}

#[tokio::test]
async fn nesting_is_limited() {
    let caller = setup(&["relay", "greet"]).await;
    let mut arguments = json!({"name": "greet", "arguments": {"name": "deep"}});
    for _ in 0..6 {
        arguments = json!({"name": "relay", "arguments": arguments});
    }
    let err = relay(&caller, arguments, 10_000).await.unwrap_err();
    assert!(
        err.message().contains("may nest at most 4 deep"),
        "{}",
        err.message()
    );
    let depths: Vec<u32> = caller.parents.lock().unwrap().iter().map(|p| p.2).collect();
    assert_eq!(depths, [1, 2, 3, 4]);
}

#[tokio::test]
async fn a_nested_call_gets_the_callers_remaining_deadline() {
    let caller = setup(&["sleep"]).await;
    let started = Instant::now();
    let err = relay(
        &caller,
        json!({"name": "sleep", "arguments": {"ms": 60_000}}),
        300,
    )
    .await
    .unwrap_err();
    assert!(
        started.elapsed() < Duration::from_secs(2),
        "took {:?}",
        started.elapsed()
    );
    assert!(err.message().contains("timeout"), "{}", err.message());
}

#[tokio::test]
async fn through_the_dispatcher_a_nested_call_passes_the_pipeline_again() {
    use toolhost::internal::dispatch::{DispatchContext, Dispatcher, Session};
    use toolhost::internal::registry::{ComponentRegistration, Registry};

    let grants = Grants {
        tools: vec!["greet".into()],
        ..Default::default()
    };
    let caller = engine()
        .load_file(
            &support::plugin_path("caller"),
            LoadOptions {
                grants,
                ..Default::default()
            },
        )
        .await
        .unwrap();
    let hello = engine()
        .load_file(&support::plugin_path("hello"), LoadOptions::default())
        .await
        .unwrap();
    let mut registry = Registry::new();
    registry
        .register_component(&caller, &ComponentRegistration::default())
        .unwrap();
    registry
        .register_component(&hello, &ComponentRegistration::default())
        .unwrap();
    let dispatcher = Dispatcher::builder(registry).build().unwrap();
    let mut events = dispatcher.subscribe();
    let ctx = DispatchContext::new(Session::trusted("s"));

    let ok = dispatcher
        .dispatch(
            "relay",
            json!({"name": "greet", "arguments": {"name": "Ada"}}),
            &ctx,
        )
        .await;
    assert_eq!(ok.content, r#""Hello, Ada!""#, "{ok:?}");
    let (first, second) = (events.recv().await.unwrap(), events.recv().await.unwrap());
    assert_eq!((first.name.as_str(), second.name.as_str()), ("greet", "relay"));
    assert_eq!(
        first.parent_call_id,
        Some(second.call_id),
        "the nested call names its parent"
    );

    // The nested call's arguments are validated against greet's schema.
    let bad = dispatcher
        .dispatch(
            "relay",
            json!({"name": "greet", "arguments": {"nom": "Ada"}}),
            &ctx,
        )
        .await;
    assert!(bad.is_error());
    assert!(bad.content.contains("invalid_arguments"), "{}", bad.content);
}
