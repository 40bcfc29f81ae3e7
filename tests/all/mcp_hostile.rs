//! Hostile MCP clients, over stdio and streamable HTTP: malformed
//! JSON-RPC, a message of hundreds of megabytes, JSON nested 100,000 deep,
//! invalid UTF-8, unknown methods, calls to hidden tools, requests sent
//! faster than they are answered, a client that never reads its answers,
//! and over HTTP clients that open sessions or connections without end,
//! trickle their headers or body, or leave connections idle. Each gets a
//! JSON-RPC error, a bounded buffer or a bounded share; every request gets
//! its answer, and the server goes on serving (other sessions, over HTTP,
//! while one misbehaves).
//!
//! Memory is checked through the server's peak resident size (`VmHWM` in
//! `/proc/PID/status`): a bound stated in bytes, independent of how busy
//! the machine is.

use std::collections::HashSet;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::ChildStdin;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use serde_json::{Value, json};

use crate::mcp_server::{HttpServer, StdioServer, temp_config};
use crate::support;

fn plugin(name: &str) -> String {
    support::plugin_path(name).display().to_string()
}

/// The peak resident memory of process `pid`, in bytes.
pub(crate) fn peak_rss(pid: u32) -> u64 {
    proc_status_kib(pid, "VmHWM:") * 1024
}

fn proc_status_kib(pid: u32, key: &str) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    status
        .lines()
        .find_map(|l| l.strip_prefix(key))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or_else(|| panic!("no {key} in /proc/{pid}/status"))
}

/// How much a server's peak memory may grow while it is attacked: a few
/// times the largest line it buffers (16 MiB), far below what holding the
/// attack itself would take (256 MiB and more in each test).
const GROWTH_BOUND: u64 = 96 << 20;

fn greet_request(id: usize, name_bytes: usize) -> Vec<u8> {
    let mut line = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
        "params": {"name": "greet", "arguments": {"name": "x".repeat(name_bytes)}}})
    .to_string()
    .into_bytes();
    line.push(b'\n');
    line
}

/// Writes `count` `greet` requests of `name_bytes` each on `stdin` from a
/// thread; the returned counter says how many were written whole.
fn write_requests(
    mut stdin: ChildStdin,
    count: usize,
    name_bytes: usize,
) -> (Arc<AtomicUsize>, std::thread::JoinHandle<ChildStdin>) {
    let written = Arc::new(AtomicUsize::new(0));
    let counter = Arc::clone(&written);
    let writer = std::thread::spawn(move || {
        for id in 1..=count {
            stdin.write_all(&greet_request(id, name_bytes)).unwrap();
            counter.store(id, Ordering::SeqCst);
        }
        stdin.flush().unwrap();
        stdin
    });
    (written, writer)
}

/// Reads answers until every id in `1..=count` has exactly one.
fn expect_answers(server: &mut StdioServer, count: usize) {
    let mut seen = HashSet::new();
    while seen.len() < count {
        let message = server.recv();
        let id = message["id"].as_u64().unwrap_or_else(|| panic!("{message}")) as usize;
        assert!(
            message["result"]["isError"] == false,
            "{id}: {}",
            &message.to_string()[..200.min(message.to_string().len())]
        );
        assert!(seen.insert(id), "request {id} was answered twice");
        assert!(
            (1..=count).contains(&id),
            "an answer to a request never sent: {id}"
        );
    }
}

/// Regression: rmcp drops the transport's `receive` whenever another event
/// wins its `select!`, and the framing then threw away the part of a line
/// it had read: a request arriving in pieces while answers went out was
/// lost, and its client waited forever.
#[test]
fn every_pipelined_request_is_answered() {
    let mut server = StdioServer::start(&["--plugin", &plugin("hello")]);
    let stdin = server.child.stdin.take().unwrap();
    let count = 600;
    let (_, writer) = write_requests(stdin, count, 16 << 10);
    expect_answers(&mut server, count);
    server.child.stdin = Some(writer.join().unwrap());
}

/// A client that sends thousands of requests and reads none of the
/// answers: the server stops reading once `MAX_IN_FLIGHT` are outstanding
/// (its memory stays bounded), and answers every one once the client
/// reads.
#[test]
fn a_client_that_never_reads_holds_a_bounded_buffer() {
    let mut server = StdioServer::start(&["--plugin", &plugin("hello")]);
    let pid = server.child.id();
    let before = peak_rss(pid);
    let stdin = server.child.stdin.take().unwrap();
    let (count, name) = (4000, 16 << 10);
    let (written, writer) = write_requests(stdin, count, name);
    // Give the server ample time to read everything it would (80 MiB of
    // requests), then see how far the writer got: never further than the
    // requests in flight plus what the pipes and buffers hold (stdin's pipe
    // and the server's read buffer, and answers in stdout's pipe, each of
    // which freed a place), with a few to spare.
    std::thread::sleep(Duration::from_secs(3));
    use toolhost::internal::mcp::framing::{MAX_IN_FLIGHT, STDIO_PIPE_BYTES, STDIO_READ_BYTES};
    let bound = MAX_IN_FLIGHT + (2 * STDIO_PIPE_BYTES + STDIO_READ_BYTES) / name + 32;
    let got_in = written.load(Ordering::SeqCst);
    assert!(
        got_in <= bound,
        "the server read {got_in} requests while none of its answers was read (bound {bound})"
    );
    let growth = peak_rss(pid).saturating_sub(before);
    assert!(growth < GROWTH_BOUND, "the server grew by {} MiB", growth >> 20);
    expect_answers(&mut server, count);
    server.child.stdin = Some(writer.join().unwrap());
}

/// Sends `line` (no newline) in 1 MiB pieces, then a newline.
fn send_in_pieces(server: &mut StdioServer, head: &[u8], filler: u8, total: usize, tail: &[u8]) {
    let stdin = server.child.stdin.as_mut().unwrap();
    stdin.write_all(head).unwrap();
    let piece = vec![filler; 1 << 20];
    let mut left = total;
    while left > 0 {
        let n = left.min(piece.len());
        stdin.write_all(&piece[..n]).unwrap();
        left -= n;
    }
    stdin.write_all(tail).unwrap();
    stdin.write_all(b"\n").unwrap();
    stdin.flush().unwrap();
}

#[test]
fn a_message_of_hundreds_of_megabytes_is_refused_in_bounded_memory() {
    let mut server = StdioServer::start(&["--plugin", &plugin("hello")]);
    let pid = server.child.id();
    let before = peak_rss(pid);
    let head = br#"{"jsonrpc":"2.0","id":"big","method":"tools/call","params":{"name":"greet","arguments":{"name":""#;
    send_in_pieces(&mut server, head, b'a', 300 << 20, br#""}}}"#);
    let answer = server.answer(&json!("big"));
    assert_eq!(answer["error"]["code"], -32600, "{answer}");
    let growth = peak_rss(pid).saturating_sub(before);
    assert!(growth < GROWTH_BOUND, "the server grew by {} MiB", growth >> 20);
    server.assert_serves(2);
}

#[test]
fn deep_nesting_invalid_utf8_and_unknown_methods_get_json_rpc_errors() {
    let mut server = StdioServer::start(&["--plugin", &plugin("hello")]);
    let deep = 100_000;
    // Nested 100,000 deep inside a request whose id is readable...
    let head =
        br#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"greet","arguments":{"name":"#;
    let mut line = head.to_vec();
    line.extend(std::iter::repeat_n(b'[', deep));
    line.extend(std::iter::repeat_n(b']', deep));
    line.extend(b"}}}");
    server.send_line(&line);
    assert_eq!(server.answer(&json!(7))["error"]["code"], -32700);
    // ...and as the whole message, objects this time: no id to echo.
    let mut line = Vec::new();
    for _ in 0..deep {
        line.extend(br#"{"a":"#);
    }
    line.extend(b"1");
    line.extend(std::iter::repeat_n(b'}', deep));
    server.send_line(&line);
    let answer = server.recv();
    assert_eq!(
        (answer["id"].clone(), answer["error"]["code"].clone()),
        (Value::Null, json!(-32700)),
        "{answer}"
    );
    // Bytes that are not UTF-8 at all.
    server.send_line(b"\xff\xfe\x00\x9f binary \xc3\x28 garbage \xed\xa0\x80");
    let answer = server.recv();
    assert_eq!(answer["error"]["code"], -32700, "{answer}");
    // Methods no one serves.
    for (id, method) in [
        (8, "tools/unknown"),
        (9, ""),
        (10, "rpc.discover"),
        (11, "sampling/createMessage"),
    ] {
        server.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": {}}));
        let answer = server.answer(&json!(id));
        assert_eq!(answer["error"]["code"], -32601, "{method}: {answer}");
    }
    server.assert_serves(12);
}

/// Tools a session cannot see (a disabled toolset, the admin tools without
/// `--admin`, a name no one registered) are unknown to it: called
/// anyway, they answer MCP's unknown-tool error (`-32602`, `unknown_tool`),
/// the same for each, and run nothing.
#[test]
fn calls_to_hidden_tools_are_unknown_tools() {
    let (_dir, config) = temp_config(&format!(
        "[tools]\ndisabled_toolsets = [\"hello\"]\n\n[[plugins]]\npath = {:?}\ntoolset = \"hello\"\n\n[[plugins]]\npath = {:?}\n",
        plugin("hello"),
        plugin("calc"),
    ));
    let mut server = StdioServer::start(&["--config", &config]);
    server.send(&json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}));
    let list = server.answer(&json!(1));
    let names: Vec<&str> = list["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["calculate_expression"], "{list}");
    for (id, name) in [
        (2, "greet"),
        (3, "toolhost__load_component"),
        (4, "toolhost__unload_component"),
        (5, "no_such_tool"),
    ] {
        server.send(&json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
            "params": {"name": name, "arguments": {"name": "Ada", "path": "/etc/passwd"}}}));
        let error = &server.answer(&json!(id))["error"];
        assert_eq!(error["code"], -32602, "{name}: {error}");
        assert_eq!(
            error["message"],
            format!("Unknown tool: {name}"),
            "{name}: {error}"
        );
        assert_eq!(error["data"]["error_code"], "unknown_tool", "{name}: {error}");
    }
}

/// One HTTP/1.1 exchange on a fresh connection; returns the status, the
/// headers (lower-case names) and the JSON-RPC messages of the body (plain
/// JSON, or the `data:` lines of an event stream).
pub(crate) struct Exchange {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub messages: Vec<Value>,
}

impl Exchange {
    pub(crate) fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }
}

/// The head of a POST of `length` bytes to `/mcp` (MCP 2025-06-18, in
/// `session` if given), closing the connection once answered.
pub(crate) fn post_head(addr: &str, token: &str, session: Option<&str>, length: usize) -> String {
    let session = session
        .map(|s| format!("Mcp-Session-Id: {s}\r\n"))
        .unwrap_or_default();
    format!(
        "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nAuthorization: Bearer {token}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nMCP-Protocol-Version: 2025-06-18\r\n{session}Content-Length: {length}\r\nConnection: close\r\n\r\n"
    )
}

fn read_exchange(stream: TcpStream) -> Exchange {
    let mut reader = BufReader::new(stream);
    let mut status_line = String::new();
    reader.read_line(&mut status_line).unwrap();
    let status = status_line
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("not an HTTP response: {status_line:?}"));
    let mut headers = Vec::new();
    loop {
        let mut line = String::new();
        reader.read_line(&mut line).unwrap();
        let line = line.trim_end();
        if line.is_empty() {
            break;
        }
        if let Some((k, v)) = line.split_once(':') {
            headers.push((k.trim().to_ascii_lowercase(), v.trim().to_string()));
        }
    }
    let mut body = Vec::new();
    let _ = reader.read_to_end(&mut body);
    let body = String::from_utf8_lossy(&body);
    let mut messages = Vec::new();
    if let Ok(v) = serde_json::from_str::<Value>(body.trim()) {
        messages.push(v);
    } else {
        // An event stream, possibly in chunks: each `data:` line is one message.
        for line in body.lines() {
            if let Some(data) = line.strip_prefix("data:")
                && let Ok(v) = serde_json::from_str::<Value>(data.trim())
            {
                messages.push(v);
            }
        }
    }
    Exchange {
        status,
        headers,
        messages,
    }
}

/// POSTs `body` and reads the whole answer.
pub(crate) fn post(addr: &str, token: &str, session: Option<&str>, body: &[u8]) -> Exchange {
    exchange(addr, &post_head(addr, token, session, body.len()), body)
}

/// Sends `head` (through its blank line) and `body` on a fresh connection
/// and reads the whole answer.
pub(crate) fn exchange(addr: &str, head: &str, body: &[u8]) -> Exchange {
    let mut stream = TcpStream::connect(addr).unwrap();
    stream.write_all(head.as_bytes()).unwrap();
    stream.write_all(body).unwrap();
    read_exchange(stream)
}

/// Opens an MCP session over HTTP; returns its id.
pub(crate) fn http_session(addr: &str, token: &str) -> String {
    let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "raw", "version": "0"}}});
    let answer = post(addr, token, None, init.to_string().as_bytes());
    assert_eq!(answer.status, 200, "{:?}", answer.messages);
    let session = answer.header("mcp-session-id").expect("a session id").to_string();
    let done = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    let answer = post(addr, token, Some(&session), done.to_string().as_bytes());
    assert_eq!(answer.status, 202);
    session
}

/// Calls `greet` in `session` and checks the answer.
fn http_greet(addr: &str, token: &str, session: &str, id: u64) {
    let call = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
        "params": {"name": "greet", "arguments": {"name": "Ada"}}});
    let answer = post(addr, token, Some(session), call.to_string().as_bytes());
    assert_eq!(answer.status, 200);
    let result = answer
        .messages
        .iter()
        .find(|m| m["id"] == id)
        .unwrap_or_else(|| panic!("no answer to {id}: {:?}", answer.messages));
    assert_eq!(result["result"]["isError"], false, "{result}");
}

const TOKEN: &str = "t0k";

/// `serve --http` of `hello` with token [`TOKEN`] and `options`.
fn hello_over_http(options: &[&str]) -> HttpServer {
    let hello = plugin("hello");
    let mut args = vec!["--plugin", &hello, "--token", TOKEN];
    args.extend_from_slice(options);
    HttpServer::start(&args)
}

/// A `serve --http` of `hello` with one session open: the server, its
/// address, the session and the server's peak memory then.
fn http_server_with_a_session() -> (HttpServer, String, String, u64) {
    let server = hello_over_http(&[]);
    let addr = server.addr();
    let session = http_session(&addr, TOKEN);
    let before = peak_rss(server.pid());
    (server, addr, session, before)
}

#[test]
fn hostile_http_bodies_get_errors_and_other_sessions_are_served() {
    let (server, addr, session, before) = http_server_with_a_session();
    let (token, pid) = (TOKEN, server.pid());

    // 300 MiB announced and sent: refused at the size limit, in bounded memory.
    let total = 300usize << 20;
    let mut stream = TcpStream::connect(&addr).unwrap();
    stream
        .write_all(post_head(&addr, token, Some(&session), total).as_bytes())
        .unwrap();
    let reading = stream.try_clone().unwrap();
    let sender = std::thread::spawn(move || {
        let piece = vec![b' '; 1 << 20];
        // The server may close the connection once it has answered.
        for _ in 0..(total >> 20) {
            if stream.write_all(&piece).is_err() {
                break;
            }
        }
    });
    let answer = read_exchange(reading);
    sender.join().unwrap();
    assert_eq!(answer.status, 413, "{:?}", answer.messages);
    let growth = peak_rss(pid).saturating_sub(before);
    assert!(growth < GROWTH_BOUND, "the server grew by {} MiB", growth >> 20);

    // Nested 100,000 deep, with a readable id.
    let mut deep = br#"{"jsonrpc":"2.0","id":5,"method":"tools/call","params":"#.to_vec();
    deep.extend(std::iter::repeat_n(b'[', 100_000));
    deep.extend(std::iter::repeat_n(b']', 100_000));
    deep.push(b'}');
    let answer = post(&addr, token, Some(&session), &deep);
    assert_eq!(answer.status, 400);
    assert_eq!(answer.messages[0]["id"], 5);
    assert_eq!(answer.messages[0]["error"]["code"], -32700);

    // Not UTF-8.
    let answer = post(&addr, token, Some(&session), b"\xff\xfe{\"id\": 6, \xc3\x28}");
    assert_eq!(answer.status, 400);
    assert_eq!(
        answer.messages[0]["error"]["code"], -32700,
        "{:?}",
        answer.messages
    );

    // A method no one serves.
    let unknown = json!({"jsonrpc": "2.0", "id": 7, "method": "tools/unknown", "params": {}});
    let answer = post(&addr, token, Some(&session), unknown.to_string().as_bytes());
    let error = answer
        .messages
        .iter()
        .find(|m| m["id"] == 7)
        .unwrap_or_else(|| panic!("{} {:?}", answer.status, answer.messages));
    assert_eq!(error["error"]["code"], -32601, "{error}");

    // The session, and a new one, are still served.
    http_greet(&addr, token, &session, 8);
    let other = http_session(&addr, token);
    http_greet(&addr, token, &other, 9);
}

/// A client that opens calls and never reads the answers (together far
/// larger than the socket buffers) does not stop the server from serving
/// another session, and the server's memory stays bounded.
#[test]
fn an_http_client_that_never_reads_does_not_stop_other_sessions() {
    let (server, addr, hog, before) = http_server_with_a_session();
    let (token, pid) = (TOKEN, server.pid());
    let mut unread = Vec::new();
    for id in 0..32 {
        let call = greet_request(1000 + id, 256 << 10);
        let mut stream = TcpStream::connect(&addr).unwrap();
        stream
            .write_all(post_head(&addr, token, Some(&hog), call.len()).as_bytes())
            .unwrap();
        stream.write_all(&call).unwrap();
        unread.push(stream);
    }
    let polite = http_session(&addr, token);
    for id in 0..5 {
        http_greet(&addr, token, &polite, id);
    }
    let growth = peak_rss(pid).saturating_sub(before);
    assert!(
        growth < 2 * GROWTH_BOUND,
        "the server grew by {} MiB for 32 unread answers of 256 KiB",
        growth >> 20
    );
    drop(unread);
    http_greet(&addr, token, &hog, 99);
}

/// Ends an HTTP session (`DELETE` with its id); returns the status.
fn delete_session(addr: &str, token: &str, session: &str) -> u16 {
    let mut stream = TcpStream::connect(addr).unwrap();
    let head = format!(
        "DELETE /mcp HTTP/1.1\r\nHost: {addr}\r\nAuthorization: Bearer {token}\r\nMcp-Session-Id: {session}\r\nConnection: close\r\n\r\n"
    );
    stream.write_all(head.as_bytes()).unwrap();
    read_exchange(stream).status
}

fn initialize_request(id: u64) -> Vec<u8> {
    json!({"jsonrpc": "2.0", "id": id, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "raw", "version": "0"}}})
    .to_string()
    .into_bytes()
}

/// A client that opens session after session (each costs the server about
/// 50 KiB, and used to be kept for five idle minutes without a bound) is
/// refused past `--max-sessions` with HTTP 503, `Retry-After` and a
/// JSON-RPC error; the open sessions go on being served, and a place freed
/// by `DELETE` is taken again.
#[test]
fn http_sessions_past_the_limit_are_refused_until_one_ends() {
    let server = hello_over_http(&["--max-sessions", "2"]);
    let addr = server.addr();
    let (first, second) = (http_session(&addr, TOKEN), http_session(&addr, TOKEN));
    for id in 0..3 {
        let refused = post(&addr, TOKEN, None, &initialize_request(40 + id));
        assert_eq!(refused.status, 503, "{:?}", refused.messages);
        assert!(refused.header("retry-after").is_some(), "{:?}", refused.headers);
        let error = &refused.messages[0];
        assert_eq!(error["id"], 40 + id, "{error}");
        assert_eq!(error["error"]["code"], -32000, "{error}");
        let message = error["error"]["message"].as_str().unwrap();
        assert!(message.contains("2 MCP sessions open"), "{message}");
    }
    http_greet(&addr, TOKEN, &first, 1);
    http_greet(&addr, TOKEN, &second, 2);
    // A request of an open session is not an opening, however many are open.
    let listed = post(
        &addr,
        TOKEN,
        Some(&first),
        json!({"jsonrpc": "2.0", "id": 3, "method": "tools/list"})
            .to_string()
            .as_bytes(),
    );
    assert_eq!(listed.status, 200);
    let ended = delete_session(&addr, TOKEN, &second);
    assert!((200..300).contains(&ended), "DELETE answered {ended}");
    let third = http_session(&addr, TOKEN);
    http_greet(&addr, TOKEN, &third, 4);
    http_greet(&addr, TOKEN, &first, 5);
}

/// A session that gets no message for `--session-idle-secs` ends, and its
/// place is free for another client.
#[test]
fn an_idle_http_session_ends_and_frees_its_place() {
    let server = hello_over_http(&["--max-sessions", "1", "--session-idle-secs", "1"]);
    let addr = server.addr();
    let idle = http_session(&addr, TOKEN);
    // Each refused opening is not a message of the idle session: its
    // clock runs on, and the opening succeeds once it has ended.
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    let opened = loop {
        let answer = post(&addr, TOKEN, None, &initialize_request(1));
        if answer.status == 200 {
            break answer;
        }
        assert_eq!(answer.status, 503, "{:?}", answer.messages);
        assert!(
            std::time::Instant::now() < deadline,
            "the idle session never ended"
        );
        std::thread::sleep(Duration::from_millis(200));
    };
    let call = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
        "params": {"name": "greet", "arguments": {"name": "Ada"}}});
    let gone = post(&addr, TOKEN, Some(&idle), call.to_string().as_bytes());
    assert_eq!(
        gone.status, 404,
        "the ended session answered: {:?}",
        gone.messages
    );
    assert!(opened.header("mcp-session-id").is_some_and(|s| s != idle));
}

/// `serve_http` of `hello` in a runtime of the test's own, with `options`
/// (token [`TOKEN`]); returns the runtime (dropping it stops the server)
/// and the address.
fn serve_in_process(options: toolhost::internal::mcp::HttpOptions) -> (tokio::runtime::Runtime, String) {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let addr = runtime.block_on(async {
        let host = crate::mcp_server::serve_public::public_host(&support::plugin_path("hello"))
            .await
            .unwrap();
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap().to_string();
        let options = toolhost::internal::mcp::HttpOptions {
            bearer_token: Some(TOKEN.into()),
            ..options
        };
        let shutdown = tokio_util::sync::CancellationToken::new();
        tokio::spawn(host.serve_http(listener, options, toolhost::ToolAudience::Trusted, shutdown));
        addr
    });
    (runtime, addr)
}

/// Reads from `stream` until the server closes it; panics if it is still
/// open after `wait`.
fn closed_within(mut stream: TcpStream, wait: Duration) -> Vec<u8> {
    stream.set_read_timeout(Some(wait)).unwrap();
    let mut answer = Vec::new();
    match stream.read_to_end(&mut answer) {
        Ok(_) => answer,
        Err(e) if e.kind() == std::io::ErrorKind::ConnectionReset => answer,
        Err(e) => panic!("the server kept the connection open ({e}); it had answered {answer:?}"),
    }
}

/// A client that trickles its request's head, or its body, or keeps a
/// connection idle, holds it no longer than the server's timeouts (here 1
/// s; by default 30 s): the connection is closed, the trickled body
/// answered HTTP 408 with a JSON-RPC error. Other clients are served
/// meanwhile.
#[test]
fn http_clients_that_trickle_or_idle_are_closed() {
    let (_runtime, addr) = serve_in_process(toolhost::internal::mcp::HttpOptions {
        header_timeout: Duration::from_secs(1),
        body_timeout: Duration::from_secs(1),
        ..Default::default()
    });
    let session = http_session(&addr, TOKEN);
    let open = |prefix: &[u8]| {
        let mut stream = TcpStream::connect(&addr).unwrap();
        stream.write_all(prefix).unwrap();
        stream
    };
    let idle = open(b"");
    let head = open(format!("POST /mcp HTTP/1.1\r\nHost: {addr}\r\nAuthorization: Bearer ").as_bytes());
    let mut body = post_head(&addr, TOKEN, Some(&session), 200).into_bytes();
    body.extend_from_slice(br#"{"jsonrpc": "2.0", "id": 12, "#);
    let body = open(&body);
    http_greet(&addr, TOKEN, &session, 1);
    // Generous waits: only a connection that is never closed fails.
    let wait = Duration::from_secs(30);
    assert_eq!(closed_within(idle, wait), b"");
    let _ = closed_within(head, wait);
    let answer = String::from_utf8(closed_within(body, wait)).unwrap();
    assert!(answer.starts_with("HTTP/1.1 408"), "{answer}");
    assert!(
        answer.contains("-32600") && answer.contains("did not arrive within 1 s"),
        "{answer}"
    );
    http_greet(&addr, TOKEN, &session, 2);
}

/// Past `max_connections`, a new connection waits to be accepted until one
/// closes: a client holding every slot delays others, but cannot make the
/// server open more (each connection is a file descriptor, which the
/// host's tools need too).
#[test]
fn http_connections_past_the_limit_wait_for_a_free_one() {
    let (_runtime, addr) = serve_in_process(toolhost::internal::mcp::HttpOptions {
        max_connections: 2,
        header_timeout: Duration::from_secs(600),
        ..Default::default()
    });
    let held: Vec<TcpStream> = (0..2).map(|_| TcpStream::connect(&addr).unwrap()).collect();
    let mut waiting = TcpStream::connect(&addr).unwrap();
    waiting
        .write_all(format!("GET /healthz HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n").as_bytes())
        .unwrap();
    // Not answered while both slots are held (a slow machine only makes
    // this more certain)...
    waiting.set_read_timeout(Some(Duration::from_secs(1))).unwrap();
    let mut byte = [0u8; 1];
    let early = waiting.read(&mut byte);
    assert!(
        matches!(&early, Err(e) if matches!(e.kind(), std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut)),
        "answered past the connection limit: {early:?}"
    );
    // ...and answered once one is let go.
    drop(held);
    let answer = String::from_utf8(closed_within(waiting, Duration::from_secs(30))).unwrap();
    assert!(
        answer.starts_with("HTTP/1.1 200") && answer.ends_with("ok"),
        "{answer}"
    );
}

/// The `[[mcp.servers]]` entries of `tests/peers/hostile_server.py` in each
/// of `modes` (`(mode, size)`), named after the mode, each call cut off
/// after three seconds.
fn hostile_servers(modes: &[(&str, usize)]) -> String {
    let python = support::peer_python().display().to_string();
    let script = support::peer_script("hostile_server.py").display().to_string();
    modes
        .iter()
        .map(|(mode, size)| {
            format!(
                "[[mcp.servers]]\nname = \"{}\"\ntransport = \"stdio\"\ncommand = {python:?}\nargs = [{script:?}, \"{mode}\", \"{size}\"]\ntimeout_ms = 3000\n",
                mode.replace('-', "_")
            )
        })
        .collect()
}

/// Lists the server's tools until `names` are all there (bridged servers
/// connect in the background).
fn wait_for_tools(server: &mut StdioServer, names: &[String]) {
    let start = std::time::Instant::now();
    for id in 1000.. {
        server.send(&json!({"jsonrpc": "2.0", "id": id, "method": "tools/list"}));
        let list = server.answer(&json!(id));
        let listed: HashSet<&str> = list["result"]["tools"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|t| t["name"].as_str())
            .collect();
        if names.iter().all(|n| listed.contains(n.as_str())) {
            return;
        }
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "not all of {names:?} were bridged: {list}"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// Bridged servers that close their stdin, close their stdout, exit
/// mid-call, answer garbage and a line without end, or hang: each call
/// gets an error, and the real binary (where a closed pipe once ended the
/// process by SIGPIPE) goes on serving every other tool, in bounded memory.
#[test]
fn bridged_servers_that_misbehave_never_end_the_host() {
    let modes = [
        ("close-stdin", 0),
        ("close-stdout", 0),
        ("exit", 0),
        ("garbage", 256 << 20),
        ("hang", 0),
    ];
    let (_dir, config) = temp_config(&format!(
        "[[plugins]]\npath = {:?}\n{}",
        plugin("hello"),
        hostile_servers(&modes)
    ));
    let mut server = StdioServer::start(&["--config", &config]);
    let tools: Vec<String> = modes
        .iter()
        .map(|(mode, _)| format!("mcp__{}__act", mode.replace('-', "_")))
        .collect();
    wait_for_tools(&mut server, &tools);
    let before = peak_rss(server.child.id());
    for (i, tool) in tools.iter().enumerate() {
        let id = 10 * i as i64 + 10;
        let result = server.call(id, tool, json!({}));
        assert_eq!(result["isError"], true, "{tool}: {result}");
        assert!(
            server.child.try_wait().unwrap().is_none(),
            "{tool} ended the host"
        );
        server.assert_serves(id + 1);
    }
    // Once more, now that each connection is gone or stuck.
    for (i, tool) in tools.iter().enumerate() {
        let result = server.call(100 + i as i64, tool, json!({}));
        assert_eq!(result["isError"], true, "{tool}: {result}");
    }
    server.assert_serves(200);
    let growth = peak_rss(server.child.id()).saturating_sub(before);
    assert!(
        growth < GROWTH_BOUND,
        "the host's peak memory grew by {growth} bytes while a server sent a 256 MiB line"
    );
}

/// An HTTP client that vanishes in the middle of a call (its connection
/// closed before the answer) costs the server nothing: other sessions, and
/// the same client's next requests, are served.
#[test]
fn an_http_client_that_vanishes_mid_call_leaves_the_server_serving() {
    let (_dir, config) = temp_config(&hostile_servers(&[("hang", 0)]));
    let hello = plugin("hello");
    let server = HttpServer::start(&["--plugin", &hello, "--token", TOKEN, "--config", &config]);
    let addr = server.addr();
    let session = http_session(&addr, TOKEN);
    let other = http_session(&addr, TOKEN);
    let start = std::time::Instant::now();
    loop {
        let list = json!({"jsonrpc": "2.0", "id": 0, "method": "tools/list"});
        let answer = post(&addr, TOKEN, Some(&session), list.to_string().as_bytes());
        if answer
            .messages
            .iter()
            .any(|m| m.to_string().contains("mcp__hang__act"))
        {
            break;
        }
        assert!(start.elapsed() < Duration::from_secs(60), "{:?}", answer.messages);
        std::thread::sleep(Duration::from_millis(100));
    }
    for id in 1..=5 {
        let call = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
            "params": {"name": "mcp__hang__act", "arguments": {}}});
        let body = call.to_string();
        let mut stream = TcpStream::connect(&addr).unwrap();
        stream
            .write_all(post_head(&addr, TOKEN, Some(&session), body.len()).as_bytes())
            .unwrap();
        stream.write_all(body.as_bytes()).unwrap();
        drop(stream);
        http_greet(&addr, TOKEN, &other, 100 + id);
    }
    http_greet(&addr, TOKEN, &session, 200);
    let status = std::fs::read_to_string(format!("/proc/{}/status", server.pid())).unwrap();
    assert!(!status.contains("State:\tZ"), "{status}");
}
