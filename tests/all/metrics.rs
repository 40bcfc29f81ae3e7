//! Prometheus metrics (`[metrics] enabled`): Debian's `prometheus` scrapes
//! `toolhost serve --http`'s `GET /metrics` with the bearer token, and its
//! query API shows the calls, their outcomes, every MCP request's duration
//! under its method (a prompt's and a resource's too, an error under its
//! JSON-RPC code), the sandboxed calls' fuel and memory and the plugins,
//! as counted; a made-up tool or prompt name counts as `(unknown)`. A call
//! that finds the instance pool full is counted waiting while it waits
//! (the pool's one instance held by a call whose client has not answered
//! yet), and the queue is empty again once it ran. Without the token
//! `/metrics` is refused; with metrics off it is not served.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::Path;
use std::process::{Child, Command, Stdio};

use serde_json::{Value, json};

use crate::mcp_hostile::{post, post_head};
use crate::peers::{free_port, http_request, http_status, wait_until};
use crate::tasks::{Replica, TOKEN, rpc};

/// Debian's `prometheus`, scraping `target` every second.
struct Prometheus {
    child: Child,
    addr: SocketAddr,
    _dir: tempfile::TempDir,
}

impl Prometheus {
    fn start(target: SocketAddr) -> Prometheus {
        let dir = tempfile::tempdir().unwrap();
        let config = dir.path().join("prometheus.yml");
        std::fs::write(
            &config,
            format!(
                "global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\n\
                 scrape_configs:\n  - job_name: toolhost\n    metrics_path: /metrics\n\
                 \x20   authorization:\n      credentials: {TOKEN}\n\
                 \x20   static_configs:\n      - targets: ['{target}']\n"
            ),
        )
        .unwrap();
        let addr: SocketAddr = format!("127.0.0.1:{}", free_port()).parse().unwrap();
        let child = Command::new("prometheus")
            .arg(format!("--config.file={}", config.display()))
            .arg(format!(
                "--storage.tsdb.path={}",
                dir.path().join("data").display()
            ))
            .arg(format!("--web.listen-address={addr}"))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("start prometheus (tests/setup installs Debian's prometheus)");
        wait_until("prometheus ready", || {
            http_status(addr, "GET", "/-/ready") == Some(200)
        });
        Prometheus {
            child,
            addr,
            _dir: dir,
        }
    }

    /// The instant vector of `query`, as the query API answers it.
    fn query(&self, query: &str) -> Vec<Value> {
        let encoded: String = query
            .bytes()
            .map(|b| match b {
                b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'_' | b'-' | b'.' => (b as char).to_string(),
                _ => format!("%{b:02X}"),
            })
            .collect();
        let path = format!("/api/v1/query?query={encoded}");
        let (status, body) = http_request(self.addr, "GET", &path, &[], "").expect("prometheus answers");
        assert_eq!(status, 200, "{body}");
        let answer: Value = serde_json::from_str(&body).unwrap();
        answer["data"]["result"].as_array().cloned().unwrap_or_default()
    }

    /// The value of `query`'s one series, once it has one.
    fn value(&self, query: &str) -> Option<f64> {
        let result = self.query(query);
        let [series] = result.as_slice() else { return None };
        series["value"][1].as_str()?.parse().ok()
    }
}

impl Drop for Prometheus {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn config(dir: &Path, metrics: bool) -> std::path::PathBuf {
    config_with(dir, metrics, "")
}

/// The conformance fixture's config, metrics on or off, and `more`.
fn config_with(dir: &Path, metrics: bool, more: &str) -> std::path::PathBuf {
    let path = dir.join("toolhost.toml");
    let text = format!(
        "{}\n[metrics]\nenabled = {metrics}\n{more}",
        crate::mcp_conformance::fixture_config()
    );
    std::fs::write(&path, text).unwrap();
    path
}

fn call(addr: SocketAddr, tool: &str, arguments: Value) -> Value {
    rpc(
        addr,
        "tools/call",
        json!({"name": tool, "arguments": arguments}),
        false,
    )
}

#[test]
fn prometheus_scrapes_the_calls_requests_and_plugins_counted() {
    let dir = tempfile::tempdir().unwrap();
    let served = Replica::start(&config(dir.path(), true));
    let auth = format!("Bearer {TOKEN}");
    // Behind the token, like /status.
    let (status, _) = http_request(served.addr, "GET", "/metrics", &[], "").unwrap();
    assert_eq!(status, 401);

    for name in ["Ada", "Grace"] {
        let answer = call(served.addr, "greet", json!({"name": name}));
        assert_eq!(answer["result"]["isError"], false, "{answer}");
    }
    let failed = call(served.addr, "test_error_handling", json!({}));
    assert_eq!(failed["result"]["isError"], true, "{failed}");
    let unknown = call(served.addr, "no_such_tool_made_up_by_a_client", json!({}));
    assert_eq!(unknown["error"]["code"], -32602, "{unknown}");
    // Every other request is counted too, under its method.
    let prompt = rpc(
        served.addr,
        "prompts/get",
        json!({"name": "test_simple_prompt"}),
        false,
    );
    assert!(prompt["result"]["messages"].is_array(), "{prompt}");
    let no_prompt = rpc(
        served.addr,
        "prompts/get",
        json!({"name": "no_such_prompt_either"}),
        false,
    );
    assert_eq!(no_prompt["error"]["code"], -32602, "{no_prompt}");
    let resource = rpc(
        served.addr,
        "resources/read",
        json!({"uri": "test://static-text"}),
        false,
    );
    assert!(resource["result"]["contents"].is_array(), "{resource}");
    let listed = rpc(served.addr, "resources/list", json!({}), false);
    assert!(listed["result"]["resources"].is_array(), "{listed}");
    // An error is counted under the code the client got.
    let no_resource = rpc(
        served.addr,
        "resources/read",
        json!({"uri": "test://no-such-resource"}),
        false,
    );
    let code = no_resource["error"]["code"]
        .as_i64()
        .unwrap_or_else(|| panic!("{no_resource}"));

    // The text itself, as a scraper gets it.
    let (status, text) =
        http_request(served.addr, "GET", "/metrics", &[("Authorization", &auth)], "").unwrap();
    assert_eq!(status, 200, "{text}");
    assert!(text.ends_with("# EOF\n"), "{text}");
    assert!(!text.contains("no_such_tool_made_up_by_a_client"), "{text}");

    let prometheus = Prometheus::start(served.addr);
    let mut calls = None;
    wait_until("prometheus to scrape the calls", || {
        calls = prometheus.value(r#"toolhost_tool_calls_total{tool="greet",outcome="ok"}"#);
        calls.is_some()
    });
    assert_eq!(calls, Some(2.0));
    assert_eq!(prometheus.value(r#"up{job="toolhost"}"#), Some(1.0));
    let requests = r#"mcp_server_operation_duration_seconds_count{mcp_method_name="tools/call",gen_ai_tool_name="greet",gen_ai_operation_name="execute_tool",error_type="",mcp_protocol_version="2026-07-28",network_transport="tcp"}"#;
    assert_eq!(prometheus.value(requests), Some(2.0));
    let operation = |labels: &str| {
        prometheus.value(&format!(
            "sum(mcp_server_operation_duration_seconds_count{{{labels}}})"
        ))
    };
    let prompt = r#"mcp_method_name="prompts/get",gen_ai_prompt_name="test_simple_prompt",error_type="""#;
    assert_eq!(operation(prompt), Some(1.0));
    let no_prompt = r#"mcp_method_name="prompts/get",gen_ai_prompt_name="(unknown)",error_type="-32602",rpc_response_status_code="-32602""#;
    assert_eq!(operation(no_prompt), Some(1.0));
    assert_eq!(
        operation(r#"mcp_method_name="resources/read",error_type="""#),
        Some(1.0)
    );
    assert_eq!(operation(r#"mcp_method_name="resources/list""#), Some(1.0));
    let failed_read =
        format!(r#"mcp_method_name="resources/read",error_type="{code}",rpc_response_status_code="{code}""#);
    assert_eq!(operation(&failed_read), Some(1.0));
    // The names a client sent are not labels unless the host has them.
    let names = prometheus.query(
        "count by (gen_ai_prompt_name, gen_ai_tool_name) (mcp_server_operation_duration_seconds_count)",
    );
    let names = Value::Array(names).to_string();
    assert!(!names.contains("no_such"), "{names}");
    let tool_error = r#"mcp_server_operation_duration_seconds_count{gen_ai_tool_name="test_error_handling",error_type="tool_error"}"#;
    assert_eq!(prometheus.value(tool_error), Some(1.0));
    let unknown =
        r#"mcp_server_operation_duration_seconds_count{gen_ai_tool_name="(unknown)",error_type="-32602"}"#;
    assert_eq!(prometheus.value(unknown), Some(1.0));
    assert_eq!(
        prometheus.value(r#"toolhost_tool_calls_total{tool="(unknown)",outcome="unknown_tool"}"#),
        Some(1.0)
    );
    assert_eq!(
        prometheus.value(r#"toolhost_tool_call_fuel_count{tool="greet"}"#),
        Some(2.0)
    );
    let fuel = prometheus
        .value(r#"toolhost_tool_call_fuel_sum{tool="greet"}"#)
        .unwrap();
    assert!(fuel > 0.0, "{fuel}");
    let memory = prometheus
        .value(r#"toolhost_tool_call_peak_memory_bytes_sum{tool="greet"}"#)
        .unwrap();
    assert!(memory >= 65_536.0, "{memory}");
    assert_eq!(
        prometheus.value(r#"toolhost_plugins{status="loaded"}"#),
        Some(1.0)
    );
    assert_eq!(
        prometheus.value(r#"toolhost_plugins{status="failed"}"#),
        Some(0.0)
    );
    assert_eq!(prometheus.value("toolhost_tool_calls_in_flight"), Some(0.0));
    assert_eq!(prometheus.value("toolhost_calls_waiting"), Some(0.0));
    assert_eq!(prometheus.value("toolhost_instances_in_use"), Some(0.0));
}

/// The data lines of an HTTP response's event stream, read as they come.
struct Events {
    reader: BufReader<TcpStream>,
    chunked: bool,
    /// What was read of the body and not yet split into lines.
    pending: Vec<u8>,
}

impl Events {
    /// Sends `head` and `body` on a fresh connection and reads the answer's head.
    fn post(addr: &str, head: &str, body: &[u8]) -> Events {
        let mut stream = TcpStream::connect(addr).unwrap();
        stream.write_all(head.as_bytes()).unwrap();
        stream.write_all(body).unwrap();
        let mut reader = BufReader::new(stream);
        let mut chunked = false;
        loop {
            let mut line = String::new();
            reader.read_line(&mut line).unwrap();
            let line = line.trim_end().to_ascii_lowercase();
            if line.is_empty() {
                break;
            }
            chunked |= line == "transfer-encoding: chunked";
        }
        Events {
            reader,
            chunked,
            pending: Vec::new(),
        }
    }

    /// The next JSON-RPC message for which `wanted` holds (others are
    /// skipped); panics if the stream ends first.
    fn until(&mut self, wanted: impl Fn(&Value) -> bool) -> Value {
        loop {
            while let Some(end) = self.pending.iter().position(|&b| b == b'\n') {
                let line: Vec<u8> = self.pending.drain(..=end).collect();
                let line = String::from_utf8_lossy(&line);
                let Some(data) = line.trim().strip_prefix("data:") else {
                    continue;
                };
                if let Ok(message) = serde_json::from_str::<Value>(data.trim())
                    && wanted(&message)
                {
                    return message;
                }
            }
            assert!(self.read_more(), "the event stream ended first");
        }
    }

    /// Reads the next piece of the body (a chunk, when chunked); false at its end.
    fn read_more(&mut self) -> bool {
        if !self.chunked {
            let mut buf = [0u8; 4096];
            let n = self.reader.read(&mut buf).unwrap();
            self.pending.extend_from_slice(&buf[..n]);
            return n > 0;
        }
        let mut size = String::new();
        self.reader.read_line(&mut size).unwrap();
        let size = usize::from_str_radix(size.trim(), 16).unwrap_or(0);
        if size == 0 {
            return false;
        }
        let mut chunk = vec![0u8; size + 2];
        self.reader.read_exact(&mut chunk).unwrap();
        self.pending.extend_from_slice(&chunk[..size]);
        true
    }
}

/// A JSON-RPC request's body.
fn request(id: u64, method: &str, params: Value) -> Vec<u8> {
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
        .to_string()
        .into_bytes()
}

#[test]
fn calls_waiting_for_an_instance_are_the_queue_depth_until_one_is_free() {
    let dir = tempfile::tempdir().unwrap();
    // One instance: a second call waits for the first to end.
    let config = config_with(dir.path(), true, "\n[pool]\nmax_concurrent_instances = 1\n");
    let served = Replica::with_sessions(&config);
    let addr = served.addr.to_string();
    // A 2025 session whose client can be asked for a sample.
    let init = request(
        0,
        "initialize",
        json!({"protocolVersion": "2025-06-18", "capabilities": {"sampling": {}},
               "clientInfo": {"name": "metrics-test", "version": "0"}}),
    );
    let opened = post(&addr, TOKEN, None, &init);
    assert_eq!(opened.status, 200, "{:?}", opened.messages);
    let session = opened.header("mcp-session-id").expect("a session id").to_string();
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"}).to_string();
    assert_eq!(
        post(&addr, TOKEN, Some(&session), initialized.as_bytes()).status,
        202
    );

    // The pool's one instance, held: the call waits for the client's model,
    // which answers when the test says.
    let sampling = request(
        1,
        "tools/call",
        json!({"name": "test_sampling", "arguments": {"prompt": "hi"}}),
    );
    let mut held = Events::post(
        &addr,
        &post_head(&addr, TOKEN, Some(&session), sampling.len()),
        &sampling,
    );
    let question = held.until(|m| m["method"] == "sampling/createMessage");

    // A second call finds no instance free, and waits in the queue.
    let waiter = {
        let (addr, session) = (addr.clone(), session.clone());
        std::thread::spawn(move || {
            let greet = request(
                2,
                "tools/call",
                json!({"name": "greet", "arguments": {"name": "Ada"}}),
            );
            post(&addr, TOKEN, Some(&session), &greet)
        })
    };
    let prometheus = Prometheus::start(served.addr);
    wait_until("prometheus to see a call waiting", || {
        prometheus.value("toolhost_calls_waiting") == Some(1.0)
    });
    assert_eq!(prometheus.value("toolhost_instances_in_use"), Some(1.0));
    assert_eq!(
        prometheus.value("toolhost_call_wait_duration_seconds_count"),
        Some(0.0)
    );

    // The client answers: the first call ends, and the second gets its instance.
    let answer = json!({"jsonrpc": "2.0", "id": question["id"], "result": {
        "role": "assistant", "content": {"type": "text", "text": "Hello there!"},
        "model": "test-model", "stopReason": "endTurn"}});
    assert_eq!(
        post(&addr, TOKEN, Some(&session), answer.to_string().as_bytes()).status,
        202
    );
    let sampled = held.until(|m| m["id"] == 1);
    assert_eq!(sampled["result"]["isError"], false, "{sampled}");
    let greeted = waiter.join().unwrap();
    let greeted = greeted
        .messages
        .iter()
        .find(|m| m["id"] == 2)
        .expect("the waiting call's answer");
    assert_eq!(greeted["result"]["isError"], false, "{greeted}");

    wait_until("prometheus to see the queue empty", || {
        prometheus.value("toolhost_call_wait_duration_seconds_count") == Some(1.0)
    });
    assert_eq!(prometheus.value("toolhost_calls_waiting"), Some(0.0));
    assert_eq!(prometheus.value("toolhost_instances_in_use"), Some(0.0));
    assert_eq!(
        prometheus.value(r#"toolhost_tool_calls_total{tool="greet",outcome="ok"}"#),
        Some(1.0)
    );
    let initialize = r#"sum(mcp_server_operation_duration_seconds_count{mcp_method_name="initialize",mcp_protocol_version="2025-06-18",network_transport="tcp"})"#;
    assert_eq!(prometheus.value(initialize), Some(1.0));
    let initialized =
        r#"sum(mcp_server_operation_duration_seconds_count{mcp_method_name="notifications/initialized"})"#;
    assert_eq!(prometheus.value(initialized), Some(1.0));
}

#[test]
fn without_metrics_on_nothing_is_served() {
    let dir = tempfile::tempdir().unwrap();
    let served = Replica::start(&config(dir.path(), false));
    let auth = format!("Bearer {TOKEN}");
    let (status, _) = http_request(served.addr, "GET", "/metrics", &[("Authorization", &auth)], "").unwrap();
    assert_eq!(status, 404);
}
