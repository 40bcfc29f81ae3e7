//! Prometheus metrics (`[metrics] enabled`): Debian's `prometheus` scrapes
//! `toolhost serve --http`'s `GET /metrics` with the bearer token, and its
//! query API shows the calls, their outcomes, the MCP requests' durations,
//! the sandboxed calls' fuel and memory and the plugins, as counted; a
//! made-up tool name counts as `(unknown)`. Without the token `/metrics`
//! is refused; with metrics off it is not served.

use std::net::SocketAddr;
use std::path::Path;
use std::process::{Child, Command, Stdio};

use serde_json::{Value, json};

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
    let path = dir.join("toolhost.toml");
    let text = format!(
        "{}\n[metrics]\nenabled = {metrics}\n",
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
    let requests = r#"mcp_server_operation_duration_seconds_count{mcp_method_name="tools/call",gen_ai_tool_name="greet",error_type=""}"#;
    assert_eq!(prometheus.value(requests), Some(2.0));
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
}

#[test]
fn without_metrics_on_nothing_is_served() {
    let dir = tempfile::tempdir().unwrap();
    let served = Replica::start(&config(dir.path(), false));
    let auth = format!("Bearer {TOKEN}");
    let (status, _) = http_request(served.addr, "GET", "/metrics", &[("Authorization", &auth)], "").unwrap();
    assert_eq!(status, 404);
}
