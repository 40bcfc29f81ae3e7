//! Lazy registry mode: `tool_search`, activation across turns, suggestions.

use serde_json::json;
use toolhost_core::ErrorCode;
use toolhost_core::dispatch::{DispatchContext, Dispatcher, Session};
use toolhost_core::registry::lazy::{MAX_QUERY_CHARS, MAX_RESULTS, RegistryMode, TOOL_SEARCH};
use toolhost_core::registry::{FnTool, Registry, ToolOutput, ToolSpec};

use crate::fixtures::{def_names, echo, echo_with};

fn lazy_dispatcher() -> Dispatcher {
    let mut reg = Registry::new();
    reg.register(echo_with(
        "memory_search",
        "Search stored memories.",
        json!({"type": "object"}),
    ))
    .unwrap();
    reg.register(echo_with("memory", "Write a memory.", json!({"type": "object"})))
        .unwrap();
    reg.register(echo_with(
        "web_fetch",
        "Fetch a page; good for remembering memory leaks.",
        json!({"type": "object"}),
    ))
    .unwrap();
    reg.register(echo_with("memori", "Statistics.", json!({"type": "object"})))
        .unwrap();
    reg.register(echo("exec")).unwrap();
    reg.register_public(echo("public_echo")).unwrap();
    reg.register(FnTool::new(
        ToolSpec::new(
            "greet",
            "Greets someone by name.",
            json!({"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}),
        ),
        |args, _| async move {
            Ok(ToolOutput::json(&json!(format!(
                "Hello, {}!",
                args["name"].as_str().unwrap_or("")
            ))))
        },
    ))
    .unwrap();
    for i in 0..50 {
        reg.register(echo_with(
            &format!("bulk_{i:02}"),
            "A bulk tool.",
            json!({"type": "object"}),
        ))
        .unwrap();
    }
    Dispatcher::builder(reg).mode(RegistryMode::Lazy).build().unwrap()
}

#[tokio::test]
async fn the_model_sees_only_tool_search() {
    let d = lazy_dispatcher();
    let defs = d.definitions(&Session::trusted("s")).unwrap();
    assert_eq!(def_names(&defs), [TOOL_SEARCH]);
    let description = defs[0]["function"]["description"].as_str().unwrap();
    assert!(description.contains("57 tools are available"), "{description}");
    assert_eq!(d.iteration_limit(10), 30);
    assert_eq!(RegistryMode::Full.iteration_limit(10), 10);
}

#[tokio::test]
async fn search_ranks_and_returns_names_and_descriptions_only() {
    let d = lazy_dispatcher();
    let ctx = DispatchContext::new(Session::trusted("s"));
    let r = d.dispatch(TOOL_SEARCH, json!({"query": "memory"}), &ctx).await;
    let tools = r.json()["tools"].as_array().unwrap().clone();
    let names: Vec<&str> = tools.iter().map(|t| t["name"].as_str().unwrap()).collect();
    // exact, prefix, description match, fuzzy
    assert_eq!(names, ["memory", "memory_search", "web_fetch", "memori"]);
    assert_eq!(
        tools[0],
        json!({"name": "memory", "description": "Write a memory."})
    );

    let r = d.dispatch(TOOL_SEARCH, json!({"query": "bulk"}), &ctx).await;
    assert_eq!(r.json()["tools"].as_array().unwrap().len(), MAX_RESULTS);
}

#[tokio::test]
async fn activation_carries_over_to_the_next_turn() {
    let d = lazy_dispatcher();
    let session = Session::trusted("s");
    let ctx = DispatchContext::new(session.clone());

    // Turn 1: the tool is not active yet.
    let r = d.dispatch("greet", json!({"name": "Ada"}), &ctx).await;
    assert_eq!(r.error_code, Some(ErrorCode::NotActive));
    let error = r.json()["error"].as_str().unwrap().to_string();
    assert!(
        error.starts_with("Error executing greet: ") && error.contains("tool_search(name=\"greet\")"),
        "{error}"
    );

    let r = d.dispatch(TOOL_SEARCH, json!({"name": "greet"}), &ctx).await;
    let body = r.json();
    assert_eq!(body["activated"], "greet");
    assert_eq!(body["schema"]["function"]["name"], "greet");
    assert_eq!(
        body["schema"]["function"]["parameters"]["required"],
        json!(["name"])
    );

    // Turn 2: the definitions include it and the call goes through.
    assert_eq!(
        def_names(&d.definitions(&session).unwrap()),
        [TOOL_SEARCH, "greet"]
    );
    assert_eq!(
        d.dispatch("greet", json!({"name": "Ada"}), &ctx).await.content,
        r#""Hello, Ada!""#
    );

    // Another session has activated nothing.
    assert_eq!(
        def_names(&d.definitions(&Session::trusted("other")).unwrap()),
        [TOOL_SEARCH]
    );
}

#[tokio::test]
async fn unknown_names_suggest_the_closest_and_how_to_activate() {
    let d = lazy_dispatcher();
    let ctx = DispatchContext::new(Session::trusted("s"));
    let r = d.dispatch("memory_serch", json!({}), &ctx).await;
    let body = r.json();
    assert_eq!(body["error"], "Unknown tool: memory_serch");
    assert_eq!(body["error_code"], "unknown_tool");
    assert_eq!(body["suggestions"][0], "memory_search");
    assert!(
        body["hint"]
            .as_str()
            .unwrap()
            .contains("tool_search(name=\"memory_search\")")
    );

    let r = d.dispatch(TOOL_SEARCH, json!({"name": "greeet"}), &ctx).await;
    assert_eq!(r.error_code, Some(ErrorCode::UnknownTool));
    assert!(
        r.json()["error"].as_str().unwrap().contains("did you mean greet"),
        "{}",
        r.content
    );
}

#[tokio::test]
async fn a_public_session_cannot_find_or_activate_trusted_tools() {
    let d = lazy_dispatcher();
    let ctx = DispatchContext::new(Session::public("hook"));
    let r = d.dispatch(TOOL_SEARCH, json!({"query": "echo"}), &ctx).await;
    assert_eq!(
        r.json()["tools"],
        json!([{"name": "public_echo", "description": "Echoes public_echo."}])
    );
    let r = d.dispatch(TOOL_SEARCH, json!({"name": "exec"}), &ctx).await;
    assert!(r.is_error());
    assert_eq!(def_names(&d.definitions(&ctx.session).unwrap()), [TOOL_SEARCH]);
    assert!(ctx.session.activated().is_empty());
}

/// A query, or a name to suggest for, longer than any tool name can match
/// is not ranked: ranking costs the query's length times each name's, and
/// a client's 16 MiB query held a thread for seconds. `tool_search`
/// refuses a query past [`MAX_QUERY_CHARS`] (`invalid_arguments`, naming
/// the bound); an unknown name past it gets no suggestions; a query within
/// it is ranked as ever.
#[tokio::test]
async fn a_query_past_the_bound_is_refused_not_ranked() {
    let d = lazy_dispatcher();
    let ctx = DispatchContext::new(Session::trusted("s"));
    // Every word is in every description, so each tool would be ranked.
    let long = "a ".repeat(1 << 20);
    let r = d.dispatch(TOOL_SEARCH, json!({"query": long}), &ctx).await;
    assert_eq!(
        r.error_code,
        Some(ErrorCode::InvalidArguments),
        "{}",
        &r.content[..200]
    );
    let error = r.json()["error"].as_str().unwrap().to_string();
    assert!(
        error.contains(&format!("at most {MAX_QUERY_CHARS} (a few words)")),
        "{error}"
    );

    let within = "a ".repeat(MAX_QUERY_CHARS / 2);
    let r = d
        .dispatch(TOOL_SEARCH, json!({"query": within.trim_end()}), &ctx)
        .await;
    assert_eq!(
        r.json()["tools"].as_array().unwrap().len(),
        MAX_RESULTS,
        "{}",
        r.content
    );

    let name = "bulk ".repeat(1 << 18);
    let r = d.dispatch(&name, json!({}), &ctx).await;
    assert_eq!(r.error_code, Some(ErrorCode::UnknownTool));
    let suggestions = r.json()["suggestions"].clone();
    assert!(suggestions.as_array().is_none_or(Vec::is_empty), "{suggestions}");
    let r = d.dispatch(TOOL_SEARCH, json!({"name": name}), &ctx).await;
    assert_eq!(r.error_code, Some(ErrorCode::UnknownTool));
    assert!(!r.json()["error"].as_str().unwrap().contains("did you mean"));
}
