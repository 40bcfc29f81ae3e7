//! `toolhost serve`, driven by the official Python MCP SDK's client over stdio
//! and streamable HTTP, plus the shutdown and HTTP-security behaviour.

use std::io::{BufRead, BufReader, Read, Write};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::support;

/// `toolhost serve` arguments with the shared compile cache.
pub fn serve_args(extra: &[&str]) -> Vec<String> {
    let mut args = vec![
        "serve".to_string(),
        "--cache-dir".to_string(),
        support::cache_dir().display().to_string(),
    ];
    args.extend(extra.iter().map(|s| s.to_string()));
    args
}

fn plugin(name: &str) -> String {
    support::plugin_path(name).display().to_string()
}

/// Runs tests/peers/mcp_client.py with `mode_args` and `steps`; returns its JSON.
fn python_client(mode_args: &[String], steps: Value) -> Value {
    let mut child = Command::new(support::peer_python())
        .arg(support::peer_script("mcp_client.py"))
        .args(mode_args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run the python client");
    child
        .stdin
        .take()
        .unwrap()
        .write_all(steps.to_string().as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "python client failed:\nstdout: {}\nstderr: {}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "python client printed no JSON ({e}): {}",
            String::from_utf8_lossy(&out.stdout)
        )
    })
}

fn stdio_mode(extra: &[&str]) -> Vec<String> {
    let mut args = vec!["stdio".to_string(), support::toolhost_bin().display().to_string()];
    args.extend(serve_args(extra));
    args
}

fn names(step: &Value) -> Vec<String> {
    step["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap().to_string())
        .collect()
}

fn error_code(step: &Value) -> String {
    assert_eq!(step["is_error"], true, "expected an error result: {step}");
    let err: Value = serde_json::from_str(step["text"].as_str().unwrap()).unwrap();
    err["error_code"].as_str().unwrap().to_string()
}

fn standard_steps() -> Value {
    json!([
        {"list": true},
        {"call": "greet", "args": {"name": "Ada"}},
        {"call": "explode", "args": {"n": 1}},
        {"call": "no_such_tool", "args": {}},
    ])
}

fn check_standard(out: &Value) {
    assert_eq!(out["server_name"], "toolhost");
    let steps = out["steps"].as_array().unwrap();
    let tools = names(&steps[0]);
    assert!(
        tools.contains(&"greet".to_string()) && tools.contains(&"explode".to_string()),
        "{tools:?}"
    );
    let greet = steps[0]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "greet")
        .unwrap();
    assert_eq!(greet["input_schema"]["type"], "object");
    assert!(greet["input_schema"]["properties"]["name"].is_object(), "{greet}");
    assert_eq!(steps[1]["is_error"], false);
    assert_eq!(steps[1]["text"], "\"Hello, Ada!\"");
    assert_eq!(error_code(&steps[2]), "trap");
    assert_eq!(error_code(&steps[3]), "unknown_tool");
}

#[test]
fn python_client_over_stdio() {
    let (hello, panic) = (plugin("hello"), plugin("panic"));
    let out = python_client(
        &stdio_mode(&["--stdio", "--plugin", &hello, "--plugin", &panic]),
        standard_steps(),
    );
    check_standard(&out);
}

#[test]
fn public_audience_hides_trusted_tools() {
    let (hello, panic) = (plugin("hello"), plugin("panic"));
    let args = stdio_mode(&[
        "--stdio",
        "--audience",
        "public",
        "--public-plugin",
        &hello,
        "--plugin",
        &panic,
        "--admin",
    ]);
    let out = python_client(
        &args,
        json!([{"list": true}, {"call": "explode", "args": {"n": 1}}, {"call": "greet", "args": {"name": "Bo"}}]),
    );
    let steps = out["steps"].as_array().unwrap();
    assert_eq!(names(&steps[0]), ["greet"]);
    assert_eq!(error_code(&steps[1]), "unknown_tool");
    assert_eq!(steps[2]["text"], "\"Hello, Bo!\"");
}

#[test]
fn admin_load_and_unload_send_list_changed() {
    let hello = plugin("hello");
    let panic = plugin("panic");
    let out = python_client(
        &stdio_mode(&["--stdio", "--plugin", &hello, "--admin"]),
        json!([
            {"list": true},
            {"call": "toolhost__load_component", "args": {"path": panic}},
            {"wait_list_changed": true},
            {"list": true},
        ]),
    );
    let steps = out["steps"].as_array().unwrap();
    assert!(!names(&steps[0]).contains(&"explode".to_string()));
    assert_eq!(steps[1]["is_error"], false, "{}", steps[1]);
    let loaded: Value = serde_json::from_str(steps[1]["text"].as_str().unwrap()).unwrap();
    assert_eq!(loaded["tools"], json!(["explode"]));
    assert!(
        steps[2]["list_changed"].as_u64().unwrap() >= 1,
        "no list_changed: {out}"
    );
    assert!(names(&steps[3]).contains(&"explode".to_string()));
}

/// A `toolhost serve --http` child, killed on drop.
pub struct HttpServer {
    child: Child,
    /// The endpoint, `http://127.0.0.1:PORT/mcp`.
    pub url: String,
}

impl HttpServer {
    /// Starts `toolhost serve --http 127.0.0.1:0 EXTRA...` and waits for its URL.
    #[allow(
        clippy::zombie_processes,
        reason = "the returned HttpServer waits for the child on drop"
    )]
    pub fn start(extra: &[&str]) -> HttpServer {
        let mut args = vec!["--http", "127.0.0.1:0"];
        args.extend_from_slice(extra);
        let mut child = Command::new(support::toolhost_bin())
            .args(serve_args(&args))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut stderr = BufReader::new(child.stderr.take().unwrap());
        let mut line = String::new();
        loop {
            line.clear();
            if stderr.read_line(&mut line).unwrap() == 0 {
                let status = child.wait();
                panic!("toolhost serve --http exited: {status:?}");
            }
            if let Some(url) = line.trim().strip_prefix("toolhost: serving MCP at ") {
                let url = url.to_string();
                std::thread::spawn(move || std::io::copy(&mut stderr, &mut std::io::sink()));
                return HttpServer { child, url };
            }
        }
    }

    fn addr(&self) -> String {
        self.url
            .trim_start_matches("http://")
            .trim_end_matches("/mcp")
            .to_string()
    }
}

impl Drop for HttpServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn python_client_over_http() {
    let (hello, panic) = (plugin("hello"), plugin("panic"));
    let server = HttpServer::start(&["--plugin", &hello, "--plugin", &panic]);
    let out = python_client(&["http".into(), server.url.clone()], standard_steps());
    check_standard(&out);
}

#[test]
fn python_client_over_http_with_public_audience_and_token() {
    let (hello, panic) = (plugin("hello"), plugin("panic"));
    let server = HttpServer::start(&[
        "--audience",
        "public",
        "--public-plugin",
        &hello,
        "--plugin",
        &panic,
        "--token",
        "s3cret",
    ]);
    let out = python_client(
        &["http".into(), server.url.clone(), "s3cret".into()],
        json!([{"list": true}]),
    );
    assert_eq!(names(&out["steps"][0]), ["greet"]);
}

/// Sends one raw HTTP/1.1 POST and returns the status code.
fn post_status(addr: &str, headers: &[(&str, &str)]) -> u16 {
    let mut stream = std::net::TcpStream::connect(addr).unwrap();
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "raw", "version": "0"}}})
    .to_string();
    let mut req = format!(
        "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: {}\r\nConnection: close\r\n",
        body.len()
    );
    for (k, v) in headers {
        req.push_str(&format!("{k}: {v}\r\n"));
    }
    req.push_str("\r\n");
    req.push_str(&body);
    stream.write_all(req.as_bytes()).unwrap();
    let mut status = [0u8; 12];
    stream.read_exact(&mut status).unwrap();
    String::from_utf8_lossy(&status[9..12]).parse().unwrap()
}

#[test]
fn http_checks_bearer_token_and_origin() {
    let hello = plugin("hello");
    let server = HttpServer::start(&["--plugin", &hello, "--token", "s3cret"]);
    let addr = server.addr();
    assert_eq!(post_status(&addr, &[]), 401);
    assert_eq!(post_status(&addr, &[("Authorization", "Bearer wrong")]), 401);
    assert_eq!(post_status(&addr, &[("Authorization", "Bearer s3cret")]), 200);
    let evil = [
        ("Authorization", "Bearer s3cret"),
        ("Origin", "http://evil.example"),
    ];
    assert_eq!(post_status(&addr, &evil), 403);
    let local = [
        ("Authorization", "Bearer s3cret"),
        ("Origin", "http://localhost:1234"),
    ];
    assert_eq!(post_status(&addr, &local), 200);
}

#[test]
fn http_refuses_a_public_bind_without_a_token() {
    let out = Command::new(support::toolhost_bin())
        .args(serve_args(&["--http", "0.0.0.0:0", "--plugin", &plugin("hello")]))
        .env_remove("TOOLHOST_MCP_TOKEN")
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("bearer token"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// A `toolhost serve --stdio` child spoken to with raw JSON-RPC lines.
pub struct StdioServer {
    /// The process.
    pub child: Child,
    stdout: BufReader<std::process::ChildStdout>,
}

impl StdioServer {
    /// Spawns `toolhost serve --stdio EXTRA...` and completes `initialize`.
    pub fn start(extra: &[&str]) -> StdioServer {
        let mut args = vec!["--stdio"];
        args.extend_from_slice(extra);
        let mut child = Command::new(support::toolhost_bin())
            .args(serve_args(&args))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap();
        let stdout = BufReader::new(child.stdout.take().unwrap());
        let mut server = StdioServer { child, stdout };
        server.send(&json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "raw", "version": "0"}}}));
        let init = server.recv();
        assert!(init["result"]["serverInfo"].is_object(), "{init}");
        server.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        server
    }

    /// Writes one message.
    pub fn send(&mut self, message: &Value) {
        let stdin = self.child.stdin.as_mut().unwrap();
        writeln!(stdin, "{message}").unwrap();
        stdin.flush().unwrap();
    }

    /// Reads one message (every stdout line must be JSON-RPC).
    pub fn recv(&mut self) -> Value {
        let mut line = String::new();
        assert!(
            self.stdout.read_line(&mut line).unwrap() > 0,
            "the server closed stdout"
        );
        serde_json::from_str(&line)
            .unwrap_or_else(|e| panic!("stdout carried a non-protocol line ({e}): {line:?}"))
    }

    fn wait(&mut self, limit: Duration) -> std::process::ExitStatus {
        let start = Instant::now();
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                return status;
            }
            assert!(
                start.elapsed() < limit,
                "the server did not exit within {limit:?}"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

#[test]
fn stdio_exits_cleanly_when_stdin_closes() {
    let mut server = StdioServer::start(&["--plugin", &plugin("hello")]);
    drop(server.child.stdin.take());
    assert!(server.wait(Duration::from_secs(10)).success());
}

#[test]
fn sigterm_lets_in_flight_calls_finish() {
    let mut server = StdioServer::start(&["--plugin", &plugin("sleepy"), "--grace-ms", "5000"]);
    server.send(&json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "sleep", "arguments": {"ms": 700}}}));
    std::thread::sleep(Duration::from_millis(200));
    let pid = server.child.id().to_string();
    assert!(
        Command::new("kill")
            .args(["-TERM", &pid])
            .status()
            .unwrap()
            .success()
    );
    let answer = server.recv();
    assert_eq!(answer["id"], 1);
    assert_eq!(answer["result"]["isError"], false, "{answer}");
    assert!(server.wait(Duration::from_secs(10)).success());
}

/// The plugin path, for other modules.
pub fn plugin_file(name: &str) -> PathBuf {
    support::plugin_path(name)
}

#[tokio::test]
async fn unloading_a_component_does_not_drop_its_in_flight_call() {
    use toolhost::mcp::{Audience, LocalCatalog, ToolCatalog};
    use toolhost::registry::CallContext;

    let catalog = LocalCatalog::new(Audience::Trusted);
    let sleepy = crate::load("sleepy").await;
    let generation = *catalog.changes().borrow();
    assert_eq!(catalog.load_component(&sleepy, false).unwrap(), ["sleep"]);
    assert_eq!(*catalog.changes().borrow(), generation + 1);
    let call = {
        let catalog = std::sync::Arc::clone(&catalog);
        tokio::spawn(async move {
            catalog
                .call("sleep", json!({"ms": 400}), CallContext::default())
                .await
        })
    };
    tokio::time::sleep(Duration::from_millis(100)).await;
    assert_eq!(catalog.unload_component(sleepy.hash()).unwrap(), ["sleep"]);
    assert_eq!(*catalog.changes().borrow(), generation + 2);
    assert!(catalog.list().is_empty());
    let out = call.await.unwrap().expect("the in-flight call finishes");
    assert_eq!(out.content, "\"awake\"");
    let err = catalog
        .call("sleep", json!({"ms": 1}), CallContext::default())
        .await
        .unwrap_err();
    assert_eq!(err.code(), toolhost::ErrorCode::UnknownTool);
}

#[test]
fn plugin_output_never_reaches_the_protocol_stream() {
    let mut server = StdioServer::start(&["--plugin", &plugin("chatty"), "--plugin", &plugin("hello")]);
    server.send(&json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "chatter", "arguments": {"lines": 200}}}));
    // `recv` fails on any stdout line that is not JSON-RPC.
    let answer = server.recv();
    assert_eq!(answer["id"], 1);
    assert_eq!(answer["result"]["content"][0]["text"], "\"done\"", "{answer}");
    server.send(&json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}));
    let list = server.recv();
    let greet = list["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "greet")
        .unwrap();
    assert_eq!(greet["annotations"]["readOnlyHint"], true, "{greet}");
    assert_eq!(greet["annotations"]["idempotentHint"], true, "{greet}");
    drop(server.child.stdin.take());
    assert!(server.wait(Duration::from_secs(10)).success());
}
