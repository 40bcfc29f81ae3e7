//! `[[mcp.servers]]` bridged into the registry: server-everything's tools
//! as trusted-only `Mcp` sources through the whole dispatch pipeline, a
//! taken name refused loudly, a dead server's tools hidden until it is back.

use std::time::Duration;

use serde_json::{Value, json};
use toolhost::ErrorCode;
use toolhost::config::Config;
use toolhost::internal::dispatch::{DispatchContext, Dispatcher, Session};
use toolhost::internal::mcp::McpConfig;
use toolhost::internal::registry::{FnTool, Registry, ToolOutput, ToolSpec};

use crate::mcp_client::toolhost_server;
use crate::mcp_server::plugin_file;
use crate::support;
use toolhost::internal::dispatch::McpDispatcher;

const SETTLE: Duration = Duration::from_secs(60);

/// A config bridging server-everything over stdio, plus `extra` TOML.
fn everything_config(extra: &str) -> Config {
    let text = format!(
        "{extra}\n[[mcp.servers]]\nname = \"everything\"\ntransport = \"stdio\"\ncommand = {:?}\nargs = [\"stdio\"]\n",
        support::server_everything().display().to_string()
    );
    Config::parse(&text, "toolhost.toml".as_ref()).unwrap()
}

fn names(dispatcher: &Dispatcher, session: &Session) -> Vec<String> {
    dispatcher
        .tool_specs(session)
        .unwrap()
        .into_iter()
        .map(|s| s.name)
        .collect()
}

async fn call(dispatcher: &Dispatcher, name: &str, args: Value) -> toolhost::internal::dispatch::ToolResult {
    let ctx = DispatchContext::new(Session::trusted("t"));
    dispatcher.dispatch(name, args, &ctx).await
}

#[tokio::test]
async fn config_servers_are_bridged_into_the_registry() {
    let dir = tempfile::tempdir().unwrap();
    let config = everything_config(&format!(
        "[storage]\ndir = {:?}",
        dir.path().display().to_string()
    ));
    let dispatcher = config
        .dispatcher(&crate::engine(), Registry::new())
        .await
        .unwrap();
    assert!(dispatcher.mcp_settled(SETTLE).await);

    let status = dispatcher.mcp_status();
    assert_eq!(status.len(), 1);
    assert!(status[0].available, "{status:?}");
    assert!(status[0].tools.contains(&"mcp__everything__echo".to_string()));

    let trusted = Session::trusted("t");
    assert!(names(&dispatcher, &trusted).contains(&"mcp__everything__echo".to_string()));
    assert!(
        names(&dispatcher, &Session::public("p")).is_empty(),
        "MCP tools are trusted-only"
    );
    let schema = dispatcher
        .registry()
        .list_schemas()
        .into_iter()
        .find(|s| s["name"] == "mcp__everything__echo")
        .unwrap();
    assert_eq!(schema["source"], "mcp");
    assert_eq!(schema["mcpServer"], "everything");
    assert_eq!(schema["toolset"], "mcp-everything");
    assert_eq!(schema["audience"], "trusted");

    let echo = call(&dispatcher, "mcp__everything__echo", json!({"message": "hi"})).await;
    assert_eq!(echo.content, "\"Echo: hi\"");
    // The pipeline validates against the server's schema before sending.
    let bad = call(&dispatcher, "mcp__everything__echo", json!({})).await;
    assert_eq!(
        bad.error_code,
        Some(ErrorCode::InvalidArguments),
        "{}",
        bad.content
    );
    assert!(bad.content.contains("message"), "{}", bad.content);
}

#[tokio::test]
async fn a_selection_may_name_a_server_that_is_not_connected() {
    let text = "[tools]\nenabled_toolsets = [\"mcp-nope\"]\n[[mcp.servers]]\nname = \"nope\"\ntransport = \"stdio\"\ncommand = \"/nonexistent/mcp-server\"\n";
    let config = Config::parse(text, "toolhost.toml".as_ref()).unwrap();
    let dispatcher = config
        .dispatcher(&crate::engine(), Registry::new())
        .await
        .unwrap();
    assert!(dispatcher.mcp_settled(SETTLE).await);
    assert!(dispatcher.definitions(&Session::trusted("t")).unwrap().is_empty());
    let status = &dispatcher.mcp_status()[0];
    assert!(!status.available);
    assert!(
        status.error.as_deref().unwrap().contains("cannot start"),
        "{status:?}"
    );
}

#[test]
fn unknown_keys_in_a_server_entry_are_refused() {
    let typo =
        "[[mcp.servers]]\nname = \"a\"\ntransport = \"stdio\"\ncommand = \"x\"\ndisable_tools = [\"y\"]\n";
    let err = Config::parse(typo, "c.toml".as_ref()).unwrap_err();
    assert!(err.message().contains("disable_tools"), "{err}");
    let foreign = "[[mcp.servers]]\nname = \"a\"\ntransport = \"stdio\"\ncommand = \"x\"\nurl = \"http://127.0.0.1:1/mcp\"\n";
    let err = Config::parse(foreign, "c.toml".as_ref()).unwrap_err();
    assert!(err.message().contains("`url` does not apply"), "{err}");
    let err = toml::from_str::<McpConfig>("[[servers]]\nname = \"a\"\ntransport = \"http\"\n").unwrap_err();
    assert!(err.to_string().contains("needs `url`"), "{err}");
}

#[tokio::test]
async fn a_taken_name_is_refused_loudly_and_nothing_is_replaced() {
    let mut registry = Registry::new();
    registry
        .register(FnTool::new(
            ToolSpec::new("mcp__everything__echo", "A built-in.", json!({"type": "object"})),
            |_, _| async { Ok(ToolOutput::json(&json!("the built-in"))) },
        ))
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let config = everything_config(&format!(
        "[storage]\ndir = {:?}",
        dir.path().display().to_string()
    ));
    let dispatcher = config.dispatcher(&crate::engine(), registry).await.unwrap();
    assert!(dispatcher.mcp_settled(SETTLE).await);
    let status = &dispatcher.mcp_status()[0];
    assert!(status.available);
    assert_eq!(status.refused.len(), 1, "{status:?}");
    assert!(
        status.refused[0].starts_with("mcp__everything__echo: ")
            && status.refused[0].contains("already registered"),
        "{status:?}"
    );
    assert!(status.tools.contains(&"mcp__everything__get-sum".to_string()));
    let out = call(&dispatcher, "mcp__everything__echo", json!({})).await;
    assert_eq!(out.content, "\"the built-in\"");
    let sum = call(&dispatcher, "mcp__everything__get-sum", json!({"a": 2, "b": 3})).await;
    assert!(!sum.is_error(), "{}", sum.content);
}

/// Polls `f` until it holds (at most 30 s).
async fn eventually(what: &str, f: impl Fn() -> bool) {
    for _ in 0..300 {
        if f() {
            return;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("timed out waiting for {what}");
}

/// A dispatcher bridging `toolhost serve --stdio --plugin hello` as server
/// `th`, settled; and the file holding the server's pid.
async fn bridged_toolhost(dir: &std::path::Path) -> (Dispatcher, std::path::PathBuf) {
    let pid_file = dir.join("pid");
    let hello = plugin_file("hello").display().to_string();
    let server = toolhost_server("th", &["--plugin", &hello], Some(&pid_file));
    let dispatcher = Dispatcher::builder(Registry::new()).build().unwrap();
    let config = McpConfig {
        servers: vec![server],
        ..McpConfig::default()
    };
    dispatcher.connect_mcp(&config).unwrap();
    assert!(dispatcher.mcp_settled(SETTLE).await);
    (dispatcher, pid_file)
}

#[tokio::test]
async fn a_dead_server_leaves_the_definitions_until_it_is_back() {
    let dir = tempfile::tempdir().unwrap();
    let (dispatcher, pid_file) = bridged_toolhost(dir.path()).await;
    let session = Session::trusted("t");
    assert_eq!(names(&dispatcher, &session), ["mcp__th__greet"]);
    let changes = dispatcher.subscribe_changes();
    let before = *changes.borrow();

    let first_pid = std::fs::read_to_string(&pid_file).unwrap();
    std::process::Command::new("kill")
        .args(["-KILL", first_pid.trim()])
        .status()
        .unwrap();
    eventually("the tools to leave", || names(&dispatcher, &session).is_empty()).await;
    assert!(*changes.borrow() > before, "a change is announced (list_changed)");
    assert!(!dispatcher.mcp_status()[0].available);
    let down = call(&dispatcher, "mcp__th__greet", json!({"name": "x"})).await;
    assert_eq!(down.error_code, Some(ErrorCode::Unavailable), "{}", down.content);
    assert!(
        down.content.contains("MCP server \\\"th\\\" connected"),
        "{}",
        down.content
    );

    eventually("the reconnection", || {
        names(&dispatcher, &session) == ["mcp__th__greet"]
    })
    .await;
    assert_ne!(std::fs::read_to_string(&pid_file).unwrap(), first_pid);
    let up = call(&dispatcher, "mcp__th__greet", json!({"name": "Cy"})).await;
    assert!(!up.is_error(), "{}", up.content);
    assert!(up.content.contains("Hello, Cy!"), "{}", up.content);
}

#[tokio::test]
async fn dropping_the_dispatcher_disconnects_its_servers() {
    let dir = tempfile::tempdir().unwrap();
    let (dispatcher, pid_file) = bridged_toolhost(dir.path()).await;
    let pid = std::fs::read_to_string(&pid_file).unwrap().trim().to_string();
    drop(dispatcher);
    let stat = format!("/proc/{pid}/stat");
    eventually("the server process to end", || {
        std::fs::read_to_string(&stat).map_or(true, |s| s.contains(") Z"))
    })
    .await;
}

/// Rich content from a bridged server (an image, audio-free resource links,
/// embedded text and blob resources, annotated blocks) reaches the client
/// of `toolhost serve` exactly as the server sent it: the same blocks,
/// through the official Python SDK, as the server gives that client
/// directly.
#[test]
fn a_bridged_servers_rich_content_passes_through_intact() {
    let everything = crate::support::server_everything().display().to_string();
    let (_dir, config) = crate::mcp_server::temp_config(&format!(
        "[[mcp.servers]]\nname = \"everything\"\ntransport = \"stdio\"\ncommand = {everything:?}\nargs = [\"stdio\"]\n"
    ));
    let calls = [
        ("get-tiny-image", json!({})),
        ("get-resource-links", json!({"count": 2})),
        (
            "get-annotated-message",
            json!({"messageType": "error", "includeImage": true}),
        ),
        (
            "get-resource-reference",
            json!({"resourceType": "Text", "resourceId": 2}),
        ),
        (
            "get-resource-reference",
            json!({"resourceType": "Blob", "resourceId": 3}),
        ),
    ];
    // A first listing waits for the bridged server to connect.
    let steps = |prefix: &str| {
        let mut steps = vec![json!({"list": true})];
        steps.extend(
            calls
                .iter()
                .map(|(tool, args)| json!({"call": format!("{prefix}{tool}"), "args": args})),
        );
        Value::Array(steps)
    };
    let direct =
        crate::mcp_server::python_client(&["stdio".into(), everything.clone(), "stdio".into()], steps(""));
    let bridged = crate::mcp_server::python_client(
        &crate::mcp_server::stdio_mode(&["--stdio", "--config", &config]),
        steps("mcp__everything__"),
    );
    for (i, (tool, _)) in calls.iter().enumerate() {
        let (want, got) = (&direct["steps"][i + 1], &bridged["steps"][i + 1]);
        assert_eq!(got["is_error"], false, "{tool}: {got}");
        assert!(
            want["content"].as_array().is_some_and(|c| !c.is_empty()),
            "{tool}: {want}"
        );
        // The reference server stamps a resource's text with the time it
        // made it, and the two servers ran at different moments.
        assert_eq!(
            without_numbers(&got["content"]),
            without_numbers(&want["content"]),
            "{tool}"
        );
    }
    let kinds: Vec<&str> = bridged["steps"]
        .as_array()
        .unwrap()
        .iter()
        .skip(1)
        .flat_map(|s| s["content"].as_array().unwrap().iter())
        .filter_map(|b| b["type"].as_str())
        .collect();
    for kind in ["image", "resource_link", "resource", "text"] {
        assert!(kinds.contains(&kind), "no {kind} block passed through: {kinds:?}");
    }
}

/// `value` with every run of digits in its `text` strings, and in its `blob`s
/// once decoded, collapsed to `#`.
fn without_numbers(value: &Value) -> Value {
    match value {
        Value::Array(items) => Value::Array(items.iter().map(without_numbers).collect()),
        Value::Object(map) => Value::Object(
            map.iter()
                .map(|(k, v)| match (k.as_str(), v) {
                    ("text", Value::String(text)) => (k.clone(), Value::String(collapse_digits(text))),
                    ("blob", Value::String(blob)) => {
                        use base64::Engine as _;
                        let bytes = base64::engine::general_purpose::STANDARD
                            .decode(blob)
                            .unwrap_or_else(|e| panic!("blob is not base64 ({e}): {blob}"));
                        let text = String::from_utf8_lossy(&bytes);
                        (k.clone(), Value::String(collapse_digits(&text)))
                    }
                    _ => (k.clone(), without_numbers(v)),
                })
                .collect(),
        ),
        other => other.clone(),
    }
}

fn collapse_digits(text: &str) -> String {
    let mut out = String::new();
    for c in text.chars() {
        if !c.is_ascii_digit() {
            out.push(c);
        } else if !out.ends_with('#') {
            out.push('#');
        }
    }
    out
}

/// A bridged server's prompts, resources, templates and completions reach
/// toolhost's MCP clients: prompts under the bridged naming rule, resources
/// under their own URIs, answers as the server gave them; what is not there
/// is the JSON-RPC error MCP names.
#[test]
fn a_bridged_servers_prompts_and_resources_are_served() {
    let everything = crate::support::server_everything().display().to_string();
    let (_dir, config) = crate::mcp_server::temp_config(&format!(
        "[[mcp.servers]]\nname = \"everything\"\ntransport = \"stdio\"\ncommand = {everything:?}\nargs = [\"stdio\"]\n"
    ));
    let doc = "demo://resource/static/document/architecture.md";
    let steps = |prompt: &dyn Fn(&str) -> String| {
        json!([
            {"prompts": true},
            {"resources": true},
            {"get_prompt": prompt("args-prompt"), "args": {"city": "Paris"}},
            {"read": doc},
            {"read": "demo://resource/dynamic/text/7"},
            {"complete": {"ref": {"type": "ref/prompt", "name": prompt("completable-prompt")}, "argument": {"name": "department", "value": "E"}}},
            {"subscribe": doc},
            {"get_prompt": prompt("args-prompt")},
            {"read": "nope://x"},
        ])
    };
    let direct = crate::mcp_server::python_client(
        &["stdio".into(), everything.clone(), "stdio".into()],
        steps(&|p| p.to_string()),
    );
    let bridged = crate::mcp_server::python_client(
        &crate::mcp_server::stdio_mode(&["--stdio", "--config", &config]),
        steps(&|p| format!("mcp__everything__{p}")),
    );
    let caps = &bridged["capabilities"];
    assert_eq!(caps["resources"]["subscribe"], true, "{caps}");
    assert!(
        caps["prompts"].is_object() && caps["completions"].is_object(),
        "{caps}"
    );
    let (d, b) = (&direct["steps"], &bridged["steps"]);

    // Prompts: renamed, otherwise as the server lists them.
    let renamed: Vec<Value> = d[0]["prompts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| {
            let mut p = p.clone();
            p["name"] = json!(format!("mcp__everything__{}", p["name"].as_str().unwrap()));
            p
        })
        .collect();
    assert!(!renamed.is_empty());
    let mut listed = b[0]["prompts"].as_array().unwrap().clone();
    listed.sort_by_key(|p| p["name"].as_str().unwrap().to_string());
    let mut want = renamed;
    want.sort_by_key(|p| p["name"].as_str().unwrap().to_string());
    assert_eq!(listed, want);

    // Resources and templates: the same URIs (listed in URI order here).
    let uris = |step: &Value, key: &str, field: &str| -> Vec<String> {
        let mut v: Vec<String> = step[key]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r[field].as_str().unwrap().to_string())
            .collect();
        v.sort();
        v
    };
    assert_eq!(uris(&b[1], "resources", "uri"), uris(&d[1], "resources", "uri"));
    assert_eq!(
        uris(&b[1], "templates", "uriTemplate"),
        uris(&d[1], "templates", "uriTemplate")
    );
    assert!(uris(&b[1], "resources", "uri").contains(&doc.to_string()));

    // Answers pass through as given.
    for i in [2, 3, 5] {
        assert_eq!(b[i], d[i], "step {i}");
    }
    assert_eq!(without_numbers(&b[4]), without_numbers(&d[4]), "a templated read");
    assert_eq!(b[6], json!({}), "subscribed");
    // A missing required argument, and an unknown URI: the codes MCP names.
    assert_eq!(b[7]["error"]["code"], -32602, "{}", b[7]);
    assert!(
        b[7]["error"]["message"].as_str().unwrap().contains("`city`"),
        "{}",
        b[7]
    );
    assert_eq!(b[8]["error"]["code"], -32002, "{}", b[8]);
}
