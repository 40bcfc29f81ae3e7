//! `toolhost serve`, driven by the official Python MCP SDK's client over stdio
//! and streamable HTTP, plus the shutdown and HTTP-security behaviour.

use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::support;
use toolhost::internal::registry::RegisterComponent;

/// `toolhost serve` arguments with the shared compile cache.
pub fn serve_args(extra: &[&str]) -> Vec<String> {
    let mut args = vec![
        "serve".to_string(),
        "--cache-dir".to_string(),
        support::cache_dir().display().to_string(),
    ];
    // Only the plugins a test names, unless it gives a config: without
    // one, toolhost serves its standard plugins.
    if !extra.contains(&"--config") {
        args.push("--config".into());
        args.push(
            support::workspace_root()
                .join("tests/data/empty.toml")
                .display()
                .to_string(),
        );
    }
    args.extend(extra.iter().map(|s| s.to_string()));
    args
}

fn plugin(name: &str) -> String {
    support::plugin_path(name).display().to_string()
}

/// The official MCP SDK whose client drives a server: the same steps and
/// the same output from either (tests/peers/mcp_client.py and .mjs).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Sdk {
    /// PyPI `mcp` (tests/peers/mcp_client.py).
    Python,
    /// npm `@modelcontextprotocol/sdk` (tests/peers/mcp_client.mjs).
    TypeScript,
}

/// Runs tests/peers/mcp_client.py with `mode_args` and `steps`; returns its JSON.
pub(crate) fn python_client(mode_args: &[String], steps: Value) -> Value {
    sdk_client_in(Sdk::Python, Path::new("."), mode_args, steps)
}

/// [`python_client`] with `dir` as its working directory (and so a stdio
/// server's).
pub(crate) fn python_client_in(dir: &Path, mode_args: &[String], steps: Value) -> Value {
    sdk_client_in(Sdk::Python, dir, mode_args, steps)
}

/// Runs `sdk`'s client script with `mode_args` and `steps` in `dir`;
/// returns its JSON.
pub(crate) fn sdk_client_in(sdk: Sdk, dir: &Path, mode_args: &[String], steps: Value) -> Value {
    let mut command = match sdk {
        Sdk::Python => {
            let mut c = Command::new(support::peer_python());
            c.arg(support::peer_script("mcp_client.py"));
            c
        }
        Sdk::TypeScript => {
            let mut c = Command::new("node");
            c.arg(support::peer_script("mcp_client.mjs"));
            c
        }
    };
    let mut child = command
        .args(mode_args)
        .current_dir(dir)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("run the {sdk:?} client: {e}"));
    child
        .stdin
        .take()
        .unwrap()
        .write_all(steps.to_string().as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "{sdk:?} client failed:\nstdout: {}\nstderr: {}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    // The SDK warns when the server answers the end of a session with a
    // status it does not take for success.
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("Session termination failed"), "{stderr}");
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "{sdk:?} client printed no JSON ({e}): {}",
            String::from_utf8_lossy(&out.stdout)
        )
    })
}

pub(crate) fn stdio_mode(extra: &[&str]) -> Vec<String> {
    let mut args = vec!["stdio".to_string(), support::toolhost_bin().display().to_string()];
    args.extend(serve_args(extra));
    args
}

pub(crate) fn names(step: &Value) -> Vec<String> {
    step["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap().to_string())
        .collect()
}

pub(crate) fn error_code(step: &Value) -> String {
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
    // A JSON string reaches the model and the client as its plain text,
    // once: no structured copy of it.
    assert_eq!(steps[1]["text"], "Hello, Ada!");
    assert_eq!(steps[1]["structured"], Value::Null);
    assert_eq!(error_code(&steps[2]), "trap");
    // A tool the server does not have: the protocol error MCP names.
    assert_eq!(steps[3]["error"]["code"], -32602, "{}", steps[3]);
    assert_eq!(
        steps[3]["error"]["message"], "Unknown tool: no_such_tool",
        "{}",
        steps[3]
    );
    assert_eq!(
        steps[3]["error"]["data"]["error_code"], "unknown_tool",
        "{}",
        steps[3]
    );
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

/// The same steps through the official TypeScript SDK's client: the same
/// answers.
#[test]
fn typescript_client_over_stdio() {
    let (hello, panic) = (plugin("hello"), plugin("panic"));
    let out = sdk_client_in(
        Sdk::TypeScript,
        Path::new("."),
        &stdio_mode(&["--stdio", "--plugin", &hello, "--plugin", &panic]),
        standard_steps(),
    );
    check_standard(&out);
}

#[path = "../../examples/serve_public.rs"]
#[allow(
    dead_code,
    reason = "the example's `main` is for `cargo run --example serve_public`"
)]
pub(crate) mod serve_public;

/// The `serve_public` example's application (a reviewed public built-in,
/// `word_count`, beside the trusted-only `hello` component), served to the
/// public audience over streamable HTTP in this process, with a token.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn public_audience_sees_and_calls_only_public_tools() {
    use toolhost::{HttpOptions, ToolAudience};
    let host = serve_public::public_host(&support::plugin_path("hello"))
        .await
        .unwrap();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    let options = HttpOptions {
        bearer_token: Some("s3cret".into()),
        ..HttpOptions::default()
    };
    let shutdown = tokio_util::sync::CancellationToken::new();
    let serving = tokio::spawn(host.serve_http(listener, options, ToolAudience::Public, shutdown.clone()));
    let out = tokio::task::spawn_blocking(move || {
        python_client(
            &["http".into(), url, "s3cret".into()],
            json!([
                {"list": true},
                {"call": "greet", "args": {"name": "Bo"}},
                {"call": "word_count", "args": {"text": "one two three"}},
            ]),
        )
    })
    .await
    .unwrap();
    shutdown.cancel();
    serving.await.unwrap().unwrap();
    let steps = out["steps"].as_array().unwrap();
    assert_eq!(names(&steps[0]), ["word_count"]);
    assert_eq!(error_code(&steps[1]), "audience_denied");
    assert_eq!(steps[2]["is_error"], false, "{}", steps[2]);
    assert_eq!(steps[2]["text"], "3");
}

#[test]
fn components_are_never_public() {
    let (hello, panic) = (plugin("hello"), plugin("panic"));
    let args = stdio_mode(&[
        "--stdio",
        "--audience",
        "public",
        "--plugin",
        &hello,
        "--plugin",
        &panic,
        "--admin",
    ]);
    let out = python_client(
        &args,
        json!([{"list": true}, {"call": "greet", "args": {"name": "Bo"}}, {"call": "toolhost__load_component", "args": {"path": hello}}]),
    );
    let steps = out["steps"].as_array().unwrap();
    assert!(names(&steps[0]).is_empty(), "{}", steps[0]);
    assert_eq!(error_code(&steps[1]), "audience_denied");
    assert_eq!(error_code(&steps[2]), "audience_denied");
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

/// A library `Host` serving MCP over HTTP on a loopback port, behind
/// `token`, to trusted callers: its address, what stops it, and the
/// serving task (which ends once stopped).
pub(crate) async fn serve_host(
    host: toolhost::Host,
    token: &str,
) -> (
    std::net::SocketAddr,
    tokio_util::sync::CancellationToken,
    tokio::task::JoinHandle<toolhost::Result<()>>,
) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let options = toolhost::HttpOptions {
        bearer_token: Some(token.into()),
        ..toolhost::HttpOptions::default()
    };
    let shutdown = tokio_util::sync::CancellationToken::new();
    let serving = tokio::spawn(host.serve_http(
        listener,
        options,
        toolhost::ToolAudience::Trusted,
        shutdown.clone(),
    ));
    (addr, shutdown, serving)
}

/// A `toolhost serve --http` child, killed on drop.
pub struct HttpServer {
    child: Child,
    /// The endpoint, `http://127.0.0.1:PORT/mcp`.
    pub url: String,
    /// The token the server made up (started without `--token`).
    pub token: Option<String>,
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
        let mut token = None;
        loop {
            line.clear();
            if stderr.read_line(&mut line).unwrap() == 0 {
                let status = child.wait();
                panic!("the MCP HTTP server exited: {status:?}");
            }
            if let Some(t) = line.trim().split_once("Authorization: Bearer ") {
                token = Some(t.1.to_string());
            }
            if let Some(url) = line.trim().strip_prefix("toolhost: serving MCP at ") {
                let url = url.to_string();
                std::thread::spawn(move || std::io::copy(&mut stderr, &mut std::io::sink()));
                return HttpServer { child, url, token };
            }
        }
    }

    /// The server's process id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// The server's `HOST:PORT`.
    pub fn addr(&self) -> String {
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
    let token = server
        .token
        .clone()
        .expect("a generated token is printed at start");
    let out = python_client(&["http".into(), server.url.clone(), token], standard_steps());
    check_standard(&out);
}

/// Sends one raw HTTP/1.1 POST and returns the status code.
pub fn post_status(addr: &str, headers: &[(&str, &str)]) -> u16 {
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
        StdioServer::start_with_env(extra, &[])
    }

    /// [`StdioServer::start`] with `env` added to the server's environment.
    pub fn start_with_env(extra: &[&str], env: &[(&str, &str)]) -> StdioServer {
        let mut server = StdioServer::spawn_with_env(extra, env);
        server.handshake();
        server
    }

    /// The server `child` (spawned with stdin and stdout piped), spoken to
    /// with raw JSON-RPC lines; the handshake is left to the test.
    pub fn from_child(mut child: Child) -> StdioServer {
        let stdout = BufReader::new(child.stdout.take().unwrap());
        StdioServer { child, stdout }
    }

    /// Completes `initialize`.
    pub fn handshake(&mut self) {
        self.send(&json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "raw", "version": "0"}}}));
        let init = self.recv();
        assert!(init["result"]["serverInfo"].is_object(), "{init}");
        self.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    }

    /// Spawns `toolhost serve --stdio EXTRA...`, leaving the handshake to
    /// the test.
    pub fn spawn(extra: &[&str]) -> StdioServer {
        StdioServer::spawn_with_env(extra, &[])
    }

    /// [`StdioServer::spawn`] with `env` added to the server's environment.
    pub fn spawn_with_env(extra: &[&str], env: &[(&str, &str)]) -> StdioServer {
        let mut args = vec!["--stdio"];
        args.extend_from_slice(extra);
        let mut child = Command::new(support::toolhost_bin())
            .args(serve_args(&args))
            .envs(env.iter().copied())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap();
        let stdout = BufReader::new(child.stdout.take().unwrap());
        StdioServer { child, stdout }
    }

    /// Writes one message.
    pub fn send(&mut self, message: &Value) {
        let stdin = self.child.stdin.as_mut().unwrap();
        writeln!(stdin, "{message}").unwrap();
        stdin.flush().unwrap();
    }

    /// Writes raw bytes, then a newline.
    pub fn send_line(&mut self, bytes: &[u8]) {
        let stdin = self.child.stdin.as_mut().unwrap();
        stdin.write_all(bytes).unwrap();
        stdin.write_all(b"\n").unwrap();
        stdin.flush().unwrap();
    }

    /// Reads messages until the answer to request `id` (skipping
    /// notifications and server requests).
    pub fn answer(&mut self, id: &Value) -> Value {
        loop {
            let message = self.recv();
            if message.get("method").is_none() && message.get("id") == Some(id) {
                return message;
            }
        }
    }

    /// Calls tool `name` with `arguments` as request `id` and returns the
    /// answer's `result`.
    pub fn call(&mut self, id: i64, name: &str, arguments: Value) -> Value {
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": name, "arguments": arguments}}));
        self.answer(&json!(id))["result"].clone()
    }

    /// Checks that the server still serves: a `greet` call as request `id`
    /// succeeds (the server was started with `hello`).
    pub fn assert_serves(&mut self, id: i64) {
        let ok = self.call(id, "greet", json!({"name": "Ada"}));
        assert_eq!(ok["isError"], false, "{ok}");
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
    use toolhost::internal::dispatch::{DispatchContext, Dispatcher, Session};
    use toolhost::internal::registry::{ComponentRegistration, Registry};

    let dispatcher = Dispatcher::builder(Registry::new()).build().unwrap();
    let changes = dispatcher.subscribe_changes();
    let sleepy = crate::load("sleepy").await;
    let generation = *changes.borrow();
    dispatcher
        .update_registry(|r| r.register_component(&sleepy, &ComponentRegistration::default()))
        .unwrap();
    assert_eq!(*changes.borrow(), generation + 1);
    let ctx = DispatchContext::new(Session::trusted("s"));
    let call = {
        let (dispatcher, ctx) = (dispatcher.clone(), ctx.clone());
        tokio::spawn(async move { dispatcher.dispatch("sleep", json!({"ms": 400}), &ctx).await })
    };
    tokio::time::sleep(Duration::from_millis(100)).await;
    assert_eq!(dispatcher.unload_component(sleepy.hash()), 1);
    assert_eq!(*changes.borrow(), generation + 2);
    assert!(dispatcher.definitions(&ctx.session).unwrap().is_empty());
    let out = call.await.unwrap();
    assert_eq!(out.content, "\"awake\"", "the in-flight call finishes");
    let err = dispatcher.dispatch("sleep", json!({"ms": 1}), &ctx).await;
    assert_eq!(err.error_code, Some(toolhost::ErrorCode::UnknownTool));
}

#[test]
fn plugin_output_never_reaches_the_protocol_stream() {
    let mut server = StdioServer::start(&["--plugin", &plugin("chatty"), "--plugin", &plugin("hello")]);
    server.send(&json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "chatter", "arguments": {"lines": 200}}}));
    // `recv` fails on any stdout line that is not JSON-RPC.
    let answer = server.recv();
    assert_eq!(answer["id"], 1);
    assert_eq!(answer["result"]["content"][0]["text"], "done", "{answer}");
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

/// Writes `toolhost.toml` (TEXT) into a fresh folder; returns the folder
/// (kept alive by the caller) and the config file's path.
pub(crate) fn temp_config(text: &str) -> (tempfile::TempDir, String) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("toolhost.toml");
    std::fs::write(&path, text).unwrap();
    let path = path.display().to_string();
    (dir, path)
}

#[test]
fn serve_config_serves_builtins_plugins_and_bridged_servers() {
    let victim = tempfile::tempdir().unwrap();
    let (_dir, config) = temp_config(&format!(
        "[exec]\nbackend = \"local\"\n\n[[plugins]]\npath = {:?}\n\n[[mcp.servers]]\nname = \"everything\"\ntransport = \"stdio\"\ncommand = {:?}\nargs = [\"stdio\"]\n",
        plugin("hello"),
        support::server_everything().display().to_string(),
    ));
    let rm = format!("rm -rf {}", victim.path().display());
    let out = python_client(
        &stdio_mode(&["--stdio", "--config", &config]),
        json!([
            {"list": true},
            {"call": "greet", "args": {"name": "Ada"}},
            {"call": "mcp__everything__echo", "args": {"message": "hi"}},
            {"call": "exec", "args": {"command": "echo from-exec"}},
            {"call": "exec", "args": {"command": rm}},
            {"call": "greet", "args": {"name": 7}},
        ]),
    );
    let steps = out["steps"].as_array().unwrap();
    let tools = names(&steps[0]);
    for expected in ["exec", "process", "greet", "mcp__everything__echo"] {
        assert!(
            tools.contains(&expected.to_string()),
            "{expected} missing from {tools:?}"
        );
    }
    assert_eq!(steps[1]["text"], "Hello, Ada!");
    assert_eq!(steps[2]["text"], "Echo: hi", "{}", steps[2]);
    let exec: Value = serde_json::from_str(steps[3]["text"].as_str().unwrap()).unwrap();
    assert_eq!(exec["stdout"], "from-exec\n", "{exec}");
    // This client cannot answer forms (no elicitation): a flagged command is
    // blocked, never run.
    assert_eq!(error_code(&steps[4]), "blocked");
    assert!(
        steps[4]["text"].as_str().unwrap().contains("BLOCKED: "),
        "{}",
        steps[4]
    );
    assert!(victim.path().exists());
    // The pipeline validates arguments against the tool's schema.
    assert_eq!(error_code(&steps[5]), "invalid_arguments");
}

#[test]
fn lazy_mode_over_mcp_activates_tools_per_session() {
    let (_dir, config) = temp_config(&format!(
        "[tools]\nregistry_mode = \"lazy\"\n\n[[plugins]]\npath = {:?}\n",
        plugin("hello")
    ));
    let out = python_client(
        &stdio_mode(&["--stdio", "--config", &config]),
        json!([
            {"list": true},
            {"call": "greet", "args": {"name": "Ada"}},
            {"call": "tool_search", "args": {"query": "greet"}},
            {"call": "tool_search", "args": {"name": "greet"}},
            {"wait_list_changed": true},
            {"list": true},
            {"call": "greet", "args": {"name": "Ada"}},
        ]),
    );
    let steps = out["steps"].as_array().unwrap();
    assert_eq!(names(&steps[0]), ["tool_search"]);
    assert_eq!(error_code(&steps[1]), "not_active");
    assert!(
        steps[2]["text"].as_str().unwrap().contains("greet"),
        "{}",
        steps[2]
    );
    assert_eq!(steps[3]["is_error"], false, "{}", steps[3]);
    assert!(steps[4]["list_changed"].as_u64().unwrap() >= 1, "{out}");
    assert_eq!(names(&steps[5]), ["tool_search", "greet"]);
    assert_eq!(steps[6]["text"], "Hello, Ada!");
}

#[test]
fn approvals_are_asked_of_the_client_by_elicitation() {
    let work = tempfile::tempdir().unwrap();
    let (kept, gone) = (work.path().join("kept"), work.path().join("gone"));
    std::fs::create_dir(&kept).unwrap();
    std::fs::create_dir(&gone).unwrap();
    let (_dir, config) = temp_config("[exec]\nbackend = \"local\"\n");
    let rm = |p: &std::path::Path| json!({"command": format!("rm -rf {}", p.display())});
    let out = python_client(
        &stdio_mode(&["--stdio", "--config", &config]),
        json!([
            {"elicit": "deny"},
            {"call": "exec", "args": rm(&kept)},
            {"elicit": "once"},
            {"call": "exec", "args": rm(&gone)},
            {"elicit": "decline"},
            {"call": "exec", "args": rm(&kept)},
            {"call": "exec", "args": {"command": "echo not flagged"}},
        ]),
    );
    let steps = out["steps"].as_array().unwrap();
    assert_eq!(error_code(&steps[1]), "blocked", "{}", steps[1]);
    assert!(
        steps[1]["text"].as_str().unwrap().contains("the user denied it"),
        "{}",
        steps[1]
    );
    assert_eq!(steps[3]["is_error"], false, "{}", steps[3]);
    assert!(!gone.exists(), "approved once: it ran");
    assert_eq!(error_code(&steps[5]), "blocked", "declining the form is a denial");
    assert!(kept.exists(), "denied: it never ran");
    assert_eq!(steps[6]["is_error"], false);
    // Three questions, each showing the exact command; none for the benign one.
    let asked = out["elicitations"].as_array().unwrap();
    assert_eq!(asked.len(), 3, "{out}");
    assert!(
        asked[1]["message"]
            .as_str()
            .unwrap()
            .contains(&format!("rm -rf {}", gone.display()))
    );
    let values = &asked[0]["schema"]["properties"]["decision"]["oneOf"];
    assert!(values.to_string().contains("\"deny\""), "{}", asked[0]["schema"]);
}

#[test]
fn without_elicitation_a_flagged_command_is_blocked() {
    let work = tempfile::tempdir().unwrap();
    let (_dir, config) = temp_config("[exec]\nbackend = \"local\"\n");
    // This client can answer forms, but the operator turned asking off.
    let out = python_client(
        &stdio_mode(&["--stdio", "--config", &config, "--no-elicit"]),
        json!([
            {"elicit": "once"},
            {"call": "exec", "args": {"command": format!("rm -rf {}", work.path().display())}},
        ]),
    );
    assert_eq!(error_code(&out["steps"][1]), "blocked");
    assert!(out["elicitations"].as_array().unwrap().is_empty());
    assert!(work.path().exists());
}

/// A client that sets a level gets the tools' log records at or above it
/// as `notifications/message` (through the official Python SDK, over stdio
/// and HTTP); one that does not, gets none; a level above the records'
/// filters them out.
#[test]
fn log_records_reach_a_client_that_set_a_level() {
    let chatty = plugin("chatty");
    let steps = |level: Option<&str>| {
        let mut steps = Vec::new();
        if let Some(level) = level {
            steps.push(json!({"set_level": level}));
        }
        steps.push(json!({"call": "chatter", "args": {"lines": 0, "records": 3}}));
        Value::Array(steps)
    };
    let logs = |out: &Value| out["logs"].as_array().unwrap().clone();
    let out = python_client(
        &stdio_mode(&["--stdio", "--plugin", &chatty]),
        steps(Some("debug")),
    );
    let got = logs(&out);
    assert_eq!(got.len(), 3, "{out}");
    assert_eq!(got[0]["level"], "info", "{out}");
    assert_eq!(got[0]["logger"], "chatter", "{out}");
    assert_eq!(
        got[2]["data"],
        json!({"message": "chatty record", "i": "2"}),
        "{out}"
    );
    let out = python_client(&stdio_mode(&["--stdio", "--plugin", &chatty]), steps(None));
    assert!(logs(&out).is_empty(), "{out}");
    let out = python_client(
        &stdio_mode(&["--stdio", "--plugin", &chatty]),
        steps(Some("error")),
    );
    assert!(logs(&out).is_empty(), "{out}");
    let server = HttpServer::start(&["--plugin", &chatty]);
    let token = server.token.clone().unwrap();
    let out = python_client(&["http".into(), server.url.clone(), token], steps(Some("info")));
    assert_eq!(logs(&out).len(), 3, "{out}");
}
