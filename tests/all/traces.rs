//! OpenTelemetry traces (`[traces] endpoint`): `toolhost serve --http`
//! exports its spans over OTLP/HTTP to a receiver here that decodes them
//! with the official protobuf definitions (`opentelemetry-proto`). What it
//! shows: a request's server span joins the caller's trace (from `_meta` or
//! the HTTP `traceparent` header) and is named and attributed as
//! OpenTelemetry's MCP conventions say; under it the call, its admission,
//! its sandboxed run with fuel and memory, nested calls under the call that
//! made them, and a bridged server's call whose W3C context names toolhost's
//! span; errors carry `error.type`. A collector that never answers slows no
//! call.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
use opentelemetry_proto::tonic::common::v1::any_value;
use opentelemetry_proto::tonic::trace::v1::{Span, span, status};
use prost::Message;
use serde_json::{Value, json};

use crate::peers::wait_until;
use crate::support;
use crate::tasks::{Replica, TOKEN, rpc};

/// How the receiver treats an export.
#[derive(Clone, Copy, PartialEq)]
enum Collector {
    /// Decodes it and answers 200.
    Answers,
    /// Reads it and never answers (a collector stuck or overloaded).
    Stalls,
}

/// One span as received, with its resource's `service.name`.
#[derive(Clone, Debug)]
struct Received {
    span: Span,
    service: String,
}

/// An OTLP/HTTP receiver on a loopback port: `POST /v1/traces` with an
/// `ExportTraceServiceRequest` in protobuf.
struct Receiver {
    addr: SocketAddr,
    spans: Arc<Mutex<Vec<Received>>>,
    exports: Arc<Mutex<usize>>,
}

impl Receiver {
    fn start(mode: Collector) -> Receiver {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let spans = Arc::new(Mutex::new(Vec::new()));
        let exports = Arc::new(Mutex::new(0));
        let (into, counted) = (Arc::clone(&spans), Arc::clone(&exports));
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(stream) = stream else { continue };
                let (into, counted) = (Arc::clone(&into), Arc::clone(&counted));
                std::thread::spawn(move || serve(stream, mode, &into, &counted));
            }
        });
        Receiver { addr, spans, exports }
    }

    fn endpoint(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// The spans received so far.
    fn spans(&self) -> Vec<Received> {
        self.spans.lock().unwrap().clone()
    }

    /// The spans of trace `trace_id` (hex), once `done` says they are all
    /// there.
    fn trace(&self, trace_id: &str, done: impl Fn(&[Received]) -> bool) -> Vec<Received> {
        let mut found = Vec::new();
        wait_until(&format!("the spans of trace {trace_id}"), || {
            found = self
                .spans()
                .into_iter()
                .filter(|s| hex(&s.span.trace_id) == trace_id)
                .collect();
            done(&found)
        });
        found
    }
}

/// Reads HTTP/1.1 requests off `stream` (kept alive) and answers each.
fn serve(stream: TcpStream, mode: Collector, into: &Mutex<Vec<Received>>, exports: &Mutex<usize>) {
    let mut writer = stream.try_clone().unwrap();
    let mut reader = BufReader::new(stream);
    loop {
        let mut length = 0usize;
        let mut request_line = String::new();
        if reader.read_line(&mut request_line).unwrap_or(0) == 0 {
            return;
        }
        loop {
            let mut line = String::new();
            if reader.read_line(&mut line).unwrap_or(0) == 0 {
                return;
            }
            let line = line.trim_end();
            if line.is_empty() {
                break;
            }
            if let Some((name, value)) = line.split_once(':')
                && name.eq_ignore_ascii_case("content-length")
            {
                length = value.trim().parse().unwrap();
            }
        }
        let mut body = vec![0; length];
        if reader.read_exact(&mut body).is_err() {
            return;
        }
        *exports.lock().unwrap() += 1;
        if mode == Collector::Stalls {
            // Hold the connection open, answering nothing.
            std::thread::park();
            return;
        }
        assert!(request_line.starts_with("POST /v1/traces "), "{request_line}");
        let export = ExportTraceServiceRequest::decode(body.as_slice()).expect("an OTLP export");
        let mut spans = into.lock().unwrap();
        for resource in export.resource_spans {
            let service = resource
                .resource
                .as_ref()
                .and_then(|r| r.attributes.iter().find(|a| a.key == "service.name"))
                .and_then(|a| a.value.as_ref())
                .and_then(|v| match &v.value {
                    Some(any_value::Value::StringValue(s)) => Some(s.clone()),
                    _ => None,
                })
                .unwrap_or_default();
            for scope in resource.scope_spans {
                for span in scope.spans {
                    spans.push(Received {
                        span,
                        service: service.clone(),
                    });
                }
            }
        }
        drop(spans);
        let answer = "HTTP/1.1 200 OK\r\nContent-Type: application/x-protobuf\r\nContent-Length: 0\r\n\r\n";
        if writer.write_all(answer.as_bytes()).is_err() {
            return;
        }
    }
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// Attribute `key` of `span`, as a JSON value.
fn attr(span: &Span, key: &str) -> Value {
    let Some(value) = span
        .attributes
        .iter()
        .find(|a| a.key == key)
        .and_then(|a| a.value.as_ref())
        .and_then(|v| v.value.as_ref())
    else {
        return Value::Null;
    };
    match value {
        any_value::Value::StringValue(s) => json!(s),
        any_value::Value::IntValue(n) => json!(n),
        any_value::Value::BoolValue(b) => json!(b),
        any_value::Value::DoubleValue(d) => json!(d),
        other => json!(format!("{other:?}")),
    }
}

/// The one span named `name` among `spans`.
fn named<'a>(spans: &'a [Received], name: &str) -> &'a Span {
    let mut found = spans.iter().filter(|s| s.span.name == name);
    let span = found
        .next()
        .unwrap_or_else(|| panic!("no span {name:?} in {:#?}", names(spans)));
    assert!(found.next().is_none(), "two spans {name:?}: {:#?}", names(spans));
    &span.span
}

/// The spans named `name` whose parent is `parent`.
fn children<'a>(spans: &'a [Received], parent: &Span, name: &str) -> Vec<&'a Span> {
    spans
        .iter()
        .map(|s| &s.span)
        .filter(|s| s.parent_span_id == parent.span_id && s.name == name)
        .collect()
}

fn names(spans: &[Received]) -> Vec<&str> {
    spans.iter().map(|s| s.span.name.as_str()).collect()
}

fn has(spans: &[Received], name: &str) -> bool {
    spans.iter().any(|s| s.span.name == name)
}

/// The fixture, the `caller` plugin (granted calls of `greet`) and the
/// Python SDK's `trace_server.py` bridged as `trace`, with `traces`.
fn config(dir: &Path, traces: &str) -> PathBuf {
    let path = dir.join("toolhost.toml");
    let text = format!(
        "{}\n[[plugins]]\npath = {:?}\n[plugins.grants]\ntools = [\"greet\"]\n\n\
         [[mcp.servers]]\nname = \"trace\"\ntransport = \"stdio\"\ncommand = {:?}\nargs = [{:?}]\n\n\
         [traces]\n{traces}\n",
        crate::mcp_conformance::fixture_config(),
        support::plugin_path("caller").display().to_string(),
        support::peer_python().display().to_string(),
        support::peer_script("trace_server.py").display().to_string(),
    );
    std::fs::write(&path, text).unwrap();
    path
}

fn traced_call(addr: SocketAddr, tool: &str, arguments: Value, traceparent: &str) -> Value {
    rpc(
        addr,
        "tools/call",
        json!({"name": tool, "arguments": arguments, "_meta": {"traceparent": traceparent}}),
        false,
    )
}

fn text_of(answer: &Value) -> String {
    answer["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_else(|| panic!("no text: {answer}"))
        .to_string()
}

const KIND_SERVER: i32 = span::SpanKind::Server as i32;
const KIND_CLIENT: i32 = span::SpanKind::Client as i32;
const STATUS_ERROR: i32 = status::StatusCode::Error as i32;

#[test]
fn spans_of_requests_and_calls_reach_an_otlp_collector_in_the_callers_trace() {
    let receiver = Receiver::start(Collector::Answers);
    let dir = tempfile::tempdir().unwrap();
    let traces = format!("endpoint = {:?}\ndelay_ms = 100", receiver.endpoint());
    let served = Replica::start(&config(dir.path(), &traces));
    // Listing waits for the bridged server to connect.
    let listed = rpc(served.addr, "tools/list", json!({}), false);
    assert!(listed.to_string().contains("mcp__trace__seen"), "{listed}");

    // A plugin's call, in the trace `_meta` names.
    let trace = "4bf92f3577b34da6a3ce929d0e0e4736";
    let parent = "00f067aa0ba902b7";
    let answer = traced_call(
        served.addr,
        "greet",
        json!({"name": "Ada"}),
        &format!("00-{trace}-{parent}-01"),
    );
    assert_eq!(answer["result"]["isError"], false, "{answer}");
    let spans = receiver.trace(trace, |s| has(s, "sandbox greet") && has(s, "tools/call greet"));
    let server = named(&spans, "tools/call greet");
    assert_eq!(
        hex(&server.parent_span_id),
        parent,
        "the caller's span is the parent"
    );
    assert_eq!(server.kind, KIND_SERVER);
    assert_eq!(attr(server, "mcp.method.name"), "tools/call");
    assert_eq!(attr(server, "gen_ai.tool.name"), "greet");
    assert_eq!(attr(server, "gen_ai.operation.name"), "execute_tool");
    assert_eq!(attr(server, "jsonrpc.request.id"), "1");
    assert_eq!(attr(server, "mcp.protocol.version"), "2026-07-28");
    assert_eq!(attr(server, "network.transport"), "tcp");
    assert_eq!(attr(server, "error.type"), Value::Null);
    assert!(spans.iter().all(|s| s.service == "toolhost"), "{spans:#?}");
    // The server span is the call's own (the conventions' `execute_tool`
    // span): the call's attributes on it, its steps under it.
    assert!(!has(&spans, "execute_tool greet"), "{:#?}", names(&spans));
    let call = server;
    assert_eq!(attr(call, "toolhost.tool.source"), "wasm");
    assert_eq!(attr(call, "toolhost.call.depth"), 0);
    assert!(attr(call, "gen_ai.tool.call.id").is_string(), "{call:?}");
    assert_eq!(
        children(&spans, call, "admission").len(),
        1,
        "{:#?}",
        names(&spans)
    );
    let [sandbox] = children(&spans, call, "sandbox greet")[..] else {
        panic!("{:#?}", names(&spans))
    };
    assert!(attr(sandbox, "toolhost.sandbox.fuel_consumed").as_i64().unwrap() > 0);
    assert!(
        attr(sandbox, "toolhost.sandbox.peak_memory_bytes")
            .as_i64()
            .unwrap()
            >= 65_536
    );
    assert_eq!(attr(sandbox, "toolhost.sandbox.instance_wait_us"), 0);
    assert!(
        attr(sandbox, "toolhost.component.hash")
            .as_str()
            .unwrap()
            .starts_with("blake3:"),
        "{sandbox:?}"
    );
    // No person was asked: no approval span.
    assert!(!has(&spans, "approval"), "{:#?}", names(&spans));

    // Every request is a server span: a prompt's, named by it.
    let trace = "abf92f3577b34da6a3ce929d0e0e4736";
    let prompt = rpc(
        served.addr,
        "prompts/get",
        json!({"name": "test_simple_prompt", "_meta": {"traceparent": format!("00-{trace}-{parent}-01")}}),
        false,
    );
    assert!(prompt["result"]["messages"].is_array(), "{prompt}");
    let spans = receiver.trace(trace, |s| has(s, "prompts/get test_simple_prompt"));
    let server = named(&spans, "prompts/get test_simple_prompt");
    assert_eq!(server.kind, KIND_SERVER);
    assert_eq!(attr(server, "mcp.method.name"), "prompts/get");
    assert_eq!(attr(server, "gen_ai.prompt.name"), "test_simple_prompt");
    assert_eq!(hex(&server.parent_span_id), parent);

    // A nested call: under the sandboxed call that made it.
    let trace = "5bf92f3577b34da6a3ce929d0e0e4736";
    let answer = traced_call(
        served.addr,
        "relay",
        json!({"name": "greet", "arguments": {"name": "Grace"}}),
        &format!("00-{trace}-{parent}-01"),
    );
    assert!(text_of(&answer).contains("Grace"), "{answer}");
    let spans = receiver.trace(trace, |s| has(s, "sandbox greet") && has(s, "tools/call relay"));
    let relay = named(&spans, "sandbox relay");
    let [nested] = children(&spans, relay, "execute_tool greet")[..] else {
        panic!("{:#?}", names(&spans))
    };
    assert_eq!(attr(nested, "toolhost.call.depth"), 1);
    assert_eq!(children(&spans, nested, "sandbox greet").len(), 1);

    // A bridged server's tool: a client span, whose context the server got.
    let trace = "6bf92f3577b34da6a3ce929d0e0e4736";
    let answer = traced_call(
        served.addr,
        "mcp__trace__seen",
        json!({}),
        &format!("00-{trace}-{parent}-01"),
    );
    let seen: Value = serde_json::from_str(&text_of(&answer)).unwrap();
    let spans = receiver.trace(trace, |s| has(s, "tools/call mcp__trace__seen") && s.len() >= 3);
    let client = spans
        .iter()
        .map(|s| &s.span)
        .find(|s| s.kind == KIND_CLIENT)
        .unwrap_or_else(|| panic!("{:#?}", names(&spans)));
    assert_eq!(attr(client, "toolhost.mcp.server"), "trace");
    assert_eq!(
        seen["traceparent"],
        format!("00-{trace}-{}-01", hex(&client.span_id)),
        "the bridged server's parent is toolhost's client span"
    );

    // A tool's error result: `tool_error`; a JSON-RPC error: its code.
    let trace = "7bf92f3577b34da6a3ce929d0e0e4736";
    let failed = traced_call(
        served.addr,
        "test_error_handling",
        json!({}),
        &format!("00-{trace}-{parent}-01"),
    );
    assert_eq!(failed["result"]["isError"], true, "{failed}");
    let unknown = traced_call(
        served.addr,
        "no_such_tool",
        json!({}),
        &format!("00-{trace}-{parent}-01"),
    );
    assert_eq!(unknown["error"]["code"], -32602, "{unknown}");
    let spans = receiver.trace(trace, |s| {
        has(s, "tools/call test_error_handling")
            && has(s, "tools/call")
            && s.iter().filter(|r| r.span.name == "admission").count() == 2
    });
    let server = named(&spans, "tools/call test_error_handling");
    assert_eq!(attr(server, "error.type"), "tool_error");
    assert_eq!(server.status.as_ref().unwrap().code, STATUS_ERROR);
    // A made-up name names no span (span names stay few).
    assert!(
        !spans.iter().any(|s| s.span.name.contains("no_such_tool")),
        "{:#?}",
        names(&spans)
    );
    let server = named(&spans, "tools/call");
    assert_eq!(attr(server, "error.type"), "-32602");
    assert_eq!(attr(server, "rpc.response.status_code"), "-32602");
    assert!(!has(&spans, "execute_tool"), "{:#?}", names(&spans));
    assert_eq!(attr(server, "gen_ai.tool.name"), "no_such_tool");
    assert_eq!(attr(server, "toolhost.error.code"), "unknown_tool");
    assert_eq!(children(&spans, server, "admission").len(), 1);

    // The HTTP request's `traceparent` header, when `_meta` has none.
    let trace = "8bf92f3577b34da6a3ce929d0e0e4736";
    let header = format!("00-{trace}-{parent}-01");
    let answer = crate::console::call_traced(
        served.addr,
        TOKEN,
        "greet",
        json!({"name": "Lin"}),
        None,
        Some(&header),
    );
    assert_eq!(answer["result"]["isError"], false, "{answer}");
    let spans = receiver.trace(trace, |s| has(s, "tools/call greet"));
    let server = named(&spans, "tools/call greet");
    assert_eq!(hex(&server.parent_span_id), parent);
    assert_eq!(attr(server, "jsonrpc.request.id"), "1");

    // Without a caller's context: a trace of its own.
    let before = receiver.spans().len();
    let answer = rpc(
        served.addr,
        "tools/call",
        json!({"name": "greet", "arguments": {"name": "Sam"}}),
        false,
    );
    assert_eq!(answer["result"]["isError"], false, "{answer}");
    wait_until("a new trace's spans", || {
        receiver.spans()[before..]
            .iter()
            .any(|s| s.span.name == "tools/call greet" && s.span.parent_span_id.is_empty())
    });
}

/// A notification is a server span of its own (over stdio: rmcp's
/// `--stateless` HTTP hands the handler no notification at all).
#[test]
fn a_notification_is_a_span_of_its_own() {
    let receiver = Receiver::start(Collector::Answers);
    let dir = tempfile::tempdir().unwrap();
    let traces = format!("endpoint = {:?}\ndelay_ms = 50", receiver.endpoint());
    let mut child = std::process::Command::new(support::toolhost_bin())
        .args(["serve", "--stdio", "--config"])
        .arg(config(dir.path(), &traces))
        .arg("--cache-dir")
        .arg(support::cache_dir())
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let lines = [
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "traces-test", "version": "0"}}}),
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
            "params": {"requestId": 7, "reason": "the test changed its mind"}}),
        json!({"jsonrpc": "2.0", "id": 2, "method": "ping"}),
    ];
    let mut stdin = child.stdin.take().unwrap();
    for line in lines {
        writeln!(stdin, "{line}").unwrap();
    }
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let mut answers = 0;
    let mut line = String::new();
    while answers < 2 && stdout.read_line(&mut line).unwrap() > 0 {
        answers += usize::from(line.contains("\"id\":"));
        line.clear();
    }
    wait_until("the notifications' spans", || {
        let spans = receiver.spans();
        has(&spans, "notifications/initialized") && has(&spans, "notifications/cancelled")
    });
    let spans = receiver.spans();
    for method in ["notifications/initialized", "notifications/cancelled"] {
        let notified = named(&spans, method);
        assert_eq!(notified.kind, KIND_SERVER, "{method}");
        assert_eq!(attr(notified, "mcp.method.name"), method);
        assert_eq!(attr(notified, "network.transport"), "pipe");
        assert_eq!(attr(notified, "mcp.protocol.version"), "2025-11-25");
    }
    drop(stdin);
    let _ = child.kill();
    let _ = child.wait();
}

#[test]
fn a_collector_that_never_answers_slows_no_call() {
    let receiver = Receiver::start(Collector::Stalls);
    let dir = tempfile::tempdir().unwrap();
    let traces = format!(
        "endpoint = {:?}\ndelay_ms = 10\nmax_queue = 8\ntimeout_ms = 600000",
        receiver.endpoint()
    );
    let served = Replica::start(&config(dir.path(), &traces));
    let calls_answer = |addr: SocketAddr, calls: usize| {
        for i in 0..calls {
            let answer = traced_call(
                addr,
                "greet",
                json!({"name": format!("n{i}")}),
                "00-9bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
            );
            assert_eq!(answer["result"]["isError"], false, "{answer}");
        }
    };
    // Far more spans than the queue holds, while the exporter waits on a
    // collector that never answers: each call still answers.
    calls_answer(served.addr, 40);
    assert!(*receiver.exports.lock().unwrap() >= 1, "an export was tried");
    // And with no collector at all.
    let gone = {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        listener.local_addr().unwrap()
    };
    let dir = tempfile::tempdir().unwrap();
    let traces = format!("endpoint = \"http://{gone}\"\ndelay_ms = 10\nmax_queue = 8");
    let served = Replica::start(&config(dir.path(), &traces));
    calls_answer(served.addr, 20);
}

#[test]
fn a_bad_traces_section_stops_serve_saying_why() {
    let dir = tempfile::tempdir().unwrap();
    for (section, says) in [
        (
            "endpoint = \"ftp://collector:4318\"",
            "must be an http:// or https:// URL",
        ),
        (
            "endpoint = \"http://127.0.0.1:4318\"\nsample_ratio = 2.0",
            "sample_ratio",
        ),
        (
            "endpoint = \"http://127.0.0.1:4318\"\nheaders = { \"bad header\" = \"x\" }",
            "not an HTTP header name",
        ),
    ] {
        let config = config(dir.path(), section);
        let out = std::process::Command::new(support::toolhost_bin())
            .args(["serve", "--stdio", "--config"])
            .arg(&config)
            .stdin(std::process::Stdio::null())
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{section}: {stderr}");
        assert!(
            stderr.contains("[traces]") && stderr.contains(says),
            "{section}: {stderr}"
        );
    }
}
