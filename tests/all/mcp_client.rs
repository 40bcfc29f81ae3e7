//! The MCP client bridge against real servers: `@modelcontextprotocol/server-everything`
//! over stdio and streamable HTTP, and `toolhost serve` itself (for
//! `list_changed` and reconnection).

use std::collections::BTreeMap;
use std::time::Duration;

use serde_json::json;
use toolhost::ErrorCode;
use toolhost::internal::mcp::{McpConnection, McpServerConfig, McpState, McpTool, McpTransport};
use toolhost::internal::registry::{CallContext, Tool};

use crate::mcp_server::{plugin_file, serve_args};
use crate::support;

async fn wait_for(connection: &McpConnection, what: &str, f: impl Fn(&McpState) -> bool) -> McpState {
    let mut rx = connection.subscribe();
    match tokio::time::timeout(Duration::from_secs(30), rx.wait_for(|s| f(s))).await {
        Ok(Ok(state)) => state.clone(),
        _ => panic!(
            "timed out waiting for {what}; state: {:?}",
            connection.subscribe().borrow()
        ),
    }
}

fn tool(state: &McpState, name: &str) -> std::sync::Arc<McpTool> {
    state
        .tools
        .iter()
        .find(|t| t.spec().name == name)
        .cloned()
        .unwrap_or_else(|| {
            panic!(
                "no tool {name} in {:?}",
                state.tools.iter().map(|t| &t.spec().name).collect::<Vec<_>>()
            )
        })
}

fn everything_stdio() -> McpServerConfig {
    McpServerConfig::stdio(
        "everything",
        support::server_everything().display().to_string(),
        vec!["stdio".into()],
    )
}

async fn check_everything(config: McpServerConfig) {
    let connection = McpConnection::start(config);
    let state = wait_for(&connection, "server-everything", |s| s.available).await;
    assert!(state.tools.len() > 5, "expected the whole (paginated) list");
    let echo = tool(&state, "mcp__everything__echo");
    assert_eq!(echo.server(), "everything");
    assert_eq!(echo.remote_name(), "echo");
    assert_eq!(echo.spec().hints.read_only, Some(true));
    assert_eq!(echo.annotations().and_then(|a| a.idempotent_hint), Some(true));
    assert!(echo.spec().parameters["properties"]["message"].is_object());

    let out = echo
        .call(json!({"message": "hi"}), CallContext::default())
        .await
        .unwrap();
    assert_eq!(out.content, "\"Echo: hi\"");

    let err = echo.call(json!({}), CallContext::default()).await.unwrap_err();
    assert_eq!(err.code(), ErrorCode::ToolFailed, "{err}");
    assert!(
        err.message().to_lowercase().contains("message"),
        "the server's text: {err}"
    );
}

#[tokio::test]
async fn server_everything_over_stdio() {
    check_everything(everything_stdio()).await;
}

#[tokio::test]
async fn server_everything_over_http() {
    let port = 20000 + (std::process::id() % 20000) as u16;
    let mut child = tokio::process::Command::new(support::server_everything())
        .arg("streamableHttp")
        .env("PORT", port.to_string())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let url = format!("http://127.0.0.1:{port}/mcp");
    for _ in 0..100 {
        if tokio::net::TcpStream::connect(("127.0.0.1", port)).await.is_ok() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    check_everything(McpServerConfig::http("everything", url)).await;
    let _ = child.kill().await;
}

#[tokio::test]
async fn enabled_and_disabled_tools_and_prefix() {
    let mut config = everything_stdio();
    config.enabled_tools = Some(vec!["echo".into(), "get-sum".into()]);
    config.disabled_tools = vec!["get-sum".into()];
    config.prefix = Some("ev.".into());
    let connection = McpConnection::start(config);
    let state = wait_for(&connection, "server-everything", |s| s.available).await;
    let names: Vec<_> = state.tools.iter().map(|t| t.spec().name.clone()).collect();
    assert_eq!(names, ["ev_echo"]);
}

#[tokio::test]
async fn a_timeout_cancels_the_call() {
    let mut config = everything_stdio();
    config.timeout_ms = 2000;
    let connection = McpConnection::start(config);
    let state = wait_for(&connection, "server-everything", |s| s.available).await;
    let long = tool(&state, "mcp__everything__trigger-long-running-operation");
    let ctx = CallContext {
        deadline: Some(std::time::Instant::now() + Duration::from_millis(300)),
        ..CallContext::default()
    };
    let started = std::time::Instant::now();
    let err = long
        .call(json!({"duration": 5, "steps": 5}), ctx)
        .await
        .unwrap_err();
    assert_eq!(err.code(), ErrorCode::Timeout, "{err}");
    assert!(started.elapsed() < Duration::from_secs(2));
    // The connection survives; the next call works.
    let echo = tool(&state, "mcp__everything__echo");
    assert!(
        echo.call(json!({"message": "after"}), CallContext::default())
            .await
            .is_ok()
    );
}

pub fn toolhost_server(name: &str, extra: &[&str], pid_file: Option<&std::path::Path>) -> McpServerConfig {
    let mut all = vec!["--stdio"];
    all.extend_from_slice(extra);
    let args = serve_args(&all);
    let bin = support::toolhost_bin().display().to_string();
    match pid_file {
        None => McpServerConfig::stdio(name, bin, args),
        Some(pid_file) => {
            // The shell records its pid, then becomes toolhost.
            let script = format!("echo $$ > '{}'; exec \"$0\" \"$@\"", pid_file.display());
            let mut sh_args = vec!["-c".to_string(), script, bin];
            sh_args.extend(args);
            McpServerConfig::stdio(name, "sh", sh_args)
        }
    }
}

#[tokio::test]
async fn list_changed_refreshes_the_tools() {
    let hello = plugin_file("hello").display().to_string();
    let config = toolhost_server("th", &["--plugin", &hello, "--admin"], None);
    let connection = McpConnection::start(config);
    let state = wait_for(&connection, "toolhost serve", |s| s.available).await;
    assert!(state.tools.iter().all(|t| t.spec().name != "mcp__th__explode"));
    let load = tool(&state, "mcp__th__toolhost__load_component");
    let panic = plugin_file("panic").display().to_string();
    load.call(json!({"path": panic}), CallContext::default())
        .await
        .unwrap();
    let state = wait_for(&connection, "the new tool", |s| {
        s.tools.iter().any(|t| t.spec().name == "mcp__th__explode")
    })
    .await;
    let err = tool(&state, "mcp__th__explode")
        .call(json!({"n": 1}), CallContext::default())
        .await
        .unwrap_err();
    assert_eq!(err.code(), ErrorCode::ToolFailed);
    assert!(err.message().contains("\"error_code\":\"trap\""), "{err}");
}

#[tokio::test]
async fn a_dead_server_is_unavailable_then_reconnected() {
    let dir = tempfile::tempdir().unwrap();
    let pid_file = dir.path().join("pid");
    let hello = plugin_file("hello").display().to_string();
    let connection = McpConnection::start(toolhost_server("th", &["--plugin", &hello], Some(&pid_file)));
    let state = wait_for(&connection, "toolhost serve", |s| s.available).await;
    let greet = tool(&state, "mcp__th__greet");
    let first_pid = std::fs::read_to_string(&pid_file).unwrap();
    std::process::Command::new("kill")
        .args(["-KILL", first_pid.trim()])
        .status()
        .unwrap();
    wait_for(&connection, "unavailable", |s| !s.available && s.tools.is_empty()).await;
    let err = greet
        .call(json!({"name": "x"}), CallContext::default())
        .await
        .unwrap_err();
    assert_eq!(err.code(), ErrorCode::Unavailable, "{err}");
    let state = wait_for(&connection, "reconnection", |s| s.available).await;
    assert_ne!(std::fs::read_to_string(&pid_file).unwrap(), first_pid);
    let out = tool(&state, "mcp__th__greet")
        .call(json!({"name": "Cy"}), CallContext::default())
        .await
        .unwrap();
    // toolhost serves a JSON string as its text alone, and the bridge reads
    // it back as that string: the JSON crosses both hops unchanged.
    assert_eq!(out.content, r#""Hello, Cy!""#);
    assert_eq!(out.model_text(), "Hello, Cy!");
}

#[tokio::test]
async fn a_server_that_cannot_start_is_unavailable_not_fatal() {
    let connection = McpConnection::start(McpServerConfig::stdio("nope", "/nonexistent/mcp-server", vec![]));
    let state = wait_for(&connection, "an error", |s| s.error.is_some()).await;
    assert!(!state.available);
    assert!(state.error.unwrap().contains("cannot start"));
}

#[tokio::test]
async fn a_disabled_server_is_never_started() {
    let mut config = McpServerConfig::stdio("off", "/nonexistent/mcp-server", vec![]);
    config.enabled = false;
    let connection = McpConnection::start(config);
    let state = wait_for(&connection, "the refusal", |s| s.error.is_some()).await;
    assert!(state.error.unwrap().contains("disabled"));
}

#[test]
fn config_parses_both_transports() {
    let config: toolhost::internal::mcp::McpConfig = toml::from_str(
        r#"
        [[servers]]
        name = "a"
        transport = "stdio"
        command = "x"
        env = { K = "v" }
        [[servers]]
        name = "b"
        transport = "http"
        url = "http://127.0.0.1:1/mcp"
        enabled = false
        "#,
    )
    .unwrap();
    config.validate().unwrap();
    let McpTransport::Stdio { env, .. } = &config.servers[0].transport else {
        panic!()
    };
    assert_eq!(env, &BTreeMap::from([("K".to_string(), "v".to_string())]));
    assert!(!config.servers[1].enabled);
    let dup: toolhost::internal::mcp::McpConfig =
        toml::from_str("[[servers]]\nname = \"a\"\ntransport = \"stdio\"\ncommand = \"x\"\n[[servers]]\nname = \"a\"\ntransport = \"stdio\"\ncommand = \"y\"\n").unwrap();
    assert_eq!(dup.validate().unwrap_err().code(), ErrorCode::Config);
}

#[tokio::test]
async fn a_timeout_cancels_the_call_on_the_server() {
    let dir = tempfile::tempdir().unwrap();
    let pid_file = dir.path().join("pid");
    let sleepy = plugin_file("sleepy").display().to_string();
    let config = toolhost_server(
        "th",
        &["--plugin", &sleepy, "--grace-ms", "20000"],
        Some(&pid_file),
    );
    let connection = McpConnection::start(config);
    let state = wait_for(&connection, "toolhost serve", |s| s.available).await;
    let ctx = CallContext {
        deadline: Some(std::time::Instant::now() + Duration::from_millis(300)),
        ..CallContext::default()
    };
    let err = tool(&state, "mcp__th__sleep")
        .call(json!({"ms": 15000}), ctx)
        .await
        .unwrap_err();
    assert_eq!(err.code(), ErrorCode::Timeout, "{err}");
    tokio::time::sleep(Duration::from_millis(200)).await;
    // Were the call still running, SIGTERM would wait for it (grace 20 s).
    let pid = std::fs::read_to_string(&pid_file).unwrap().trim().to_string();
    let started = std::time::Instant::now();
    std::process::Command::new("kill")
        .args(["-TERM", &pid])
        .status()
        .unwrap();
    while std::path::Path::new(&format!("/proc/{pid}/stat")).exists()
        && !std::fs::read_to_string(format!("/proc/{pid}/stat"))
            .unwrap_or_default()
            .contains(") Z")
    {
        assert!(
            started.elapsed() < Duration::from_secs(5),
            "the server still runs the cancelled call"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[tokio::test]
async fn a_name_collision_after_sanitizing_is_a_clear_error() {
    let python = support::peer_python().display().to_string();
    let script = support::peer_script("colliding_server.py").display().to_string();
    let config = McpServerConfig::stdio("py", python.clone(), vec![script.clone()]);
    let connection = McpConnection::start(config);
    let state = wait_for(&connection, "the listing error", |s| s.error.is_some()).await;
    assert!(
        !state.available && state.tools.is_empty(),
        "nothing is dropped or replaced silently"
    );
    let error = state.error.unwrap();
    assert!(
        error.contains("read.file") && error.contains("read_file") && error.contains("mcp__py__read_file"),
        "{error}"
    );

    // Keeping only one of them resolves it.
    let mut config = McpServerConfig::stdio("py", python, vec![script]);
    config.disabled_tools = vec!["read.file".into()];
    let connection = McpConnection::start(config);
    let state = wait_for(&connection, "the server", |s| s.available).await;
    let out = tool(&state, "mcp__py__read_file")
        .call(json!({"path": "x"}), CallContext::default())
        .await
        .unwrap();
    assert!(out.content.contains("underscore:x"), "{}", out.content);
}

/// `tests/peers/hostile_server.py MODE SIZE`, bridged as `hostile`.
fn hostile_server(mode: &str, size: usize) -> McpServerConfig {
    let python = support::peer_python().display().to_string();
    let script = support::peer_script("hostile_server.py").display().to_string();
    McpServerConfig::stdio("hostile", python, vec![script, mode.into(), size.to_string()])
}

/// A server whose `tools/list` pages on without end is refused once it has
/// listed 4,096 tools or 16 MiB of definitions, whichever comes first,
/// rather than followed until the host's memory runs out; nothing of it is
/// bridged.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_listing_without_end_is_refused_at_a_bound() {
    use toolhost::internal::mcp::client::{MAX_LISTED_BYTES, MAX_LISTED_TOOLS};
    let description = 64 << 10;
    // Tools of 64 KiB reach the byte bound with their 256th (each is a
    // little more than its description).
    for (size, listed) in [
        (0, MAX_LISTED_TOOLS + 1),
        (description, MAX_LISTED_BYTES / description),
    ] {
        let mut config = hostile_server("pages", size);
        // The bound ends the listing, not the timeout.
        config.timeout_ms = 600_000;
        let connection = McpConnection::start(config);
        let state = wait_for(&connection, "the listing error", |s| s.error.is_some()).await;
        assert!(!state.available && state.tools.is_empty(), "{state:?}");
        let error = state.error.unwrap();
        assert!(
            error.contains("refused") && error.contains(&format!("({listed} tools in {listed} pages")),
            "{error}"
        );
    }
}

/// A server that sends 100,000 `notifications/tools/list_changed` at once
/// is listed again a few times, not 100,000 times: notifications that
/// arrive while a listing runs make one more listing.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_flood_of_list_changed_costs_a_few_listings() {
    let connection = McpConnection::start(hostile_server("flood", 100_000));
    let state = wait_for(&connection, "the server", |s| s.available).await;
    let lists = tool(&state, "mcp__hostile__lists");
    let listings = async || {
        let out = lists.call(json!({}), CallContext::default()).await.unwrap();
        let digits: String = out.content.chars().filter(char::is_ascii_digit).collect();
        digits.parse::<u64>().unwrap()
    };
    // Asked until the count holds still for a second.
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    let mut before = listings().await;
    let settled = loop {
        tokio::time::sleep(Duration::from_secs(1)).await;
        let now = listings().await;
        if now == before {
            break now;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "still listing: {now} listings"
        );
        before = now;
    };
    assert!(settled < 1_000, "{settled} listings for 100,000 notifications");
}
