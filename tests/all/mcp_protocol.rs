//! MCP protocol edges: every malformed request with a readable id gets the
//! JSON-RPC error the spec names; an approval asked right after
//! `initialize` reaches the client; `Origin` port wildcards match port
//! numbers only; a generated bearer token guards `serve --http`.

use serde_json::{Value, json};

use crate::mcp_server::{HttpServer, StdioServer, post_status};
use crate::protected::project;
use crate::support;

fn hello() -> String {
    support::plugin_path("hello").display().to_string()
}

/// Regression (hardening): these lines got no answer at all, so the client
/// waited forever.
#[test]
fn malformed_requests_are_answered_with_their_id() {
    let mut server = StdioServer::start(&["--plugin", &hello()]);
    let cases: Vec<(Vec<u8>, Value, i64)> = vec![
        (
            br#"{"jsonrpc":"1.0","id":11,"method":"ping"}"#.to_vec(),
            json!(11),
            -32600,
        ),
        (br#"{"jsonrpc":"2.0","id":12}"#.to_vec(), json!(12), -32600),
        (
            br#"{"jsonrpc":"2.0","id":"s13","method":42}"#.to_vec(),
            json!("s13"),
            -32600,
        ),
        (
            br#"{"jsonrpc":"2.0","id":14,"method":"tools/call","params":"nope"}"#.to_vec(),
            json!(14),
            -32602,
        ),
        (
            b"{\"jsonrpc\":\"2.0\",\"id\":15,\"method\":\"ping\",\"x\":\"\xff\xfe\"}".to_vec(),
            json!(15),
            -32700,
        ),
        (
            br#"{"jsonrpc":"2.0","id":16,"method":"tools/list","params":{"#.to_vec(),
            json!(16),
            -32700,
        ),
    ];
    for (line, id, code) in cases {
        server.send_line(&line);
        let answer = server.answer(&id);
        assert_eq!(
            answer["error"]["code"],
            code,
            "{}: {answer}",
            String::from_utf8_lossy(&line)
        );
    }
    // A batch: one error per request in it.
    server.send_line(
        br#"[{"jsonrpc":"2.0","id":21,"method":"ping"},{"jsonrpc":"2.0","id":22,"method":"ping"}]"#,
    );
    let batch = server.recv();
    let ids: Vec<&Value> = batch.as_array().unwrap().iter().map(|e| &e["id"]).collect();
    assert_eq!(ids, [&json!(21), &json!(22)], "{batch}");
    // A line past the size limit, its id near the start.
    let mut huge =
        br#"{"jsonrpc":"2.0","id":31,"method":"tools/call","params":{"name":"greet","arguments":{"name":""#
            .to_vec();
    huge.extend(std::iter::repeat_n(
        b'a',
        toolhost::internal::mcp::framing::MAX_LINE_BYTES + 10,
    ));
    huge.extend(br#""}}}"#);
    server.send_line(&huge);
    assert_eq!(server.answer(&json!(31))["error"]["code"], -32600);
    // The server still serves.
    server.assert_serves(40);
}

/// Regression (hardening): the client's elicitation capability was recorded
/// only on `notifications/initialized`, so a call racing it was denied as if
/// no one could approve it. Here the call comes before that notification.
#[test]
fn an_approval_right_after_initialize_is_asked_of_the_client() {
    let (_dir, config) = project(&format!(
        "require_approval = [\"greet\"]\n[[plugins]]\npath = \"{}\"\n",
        support::plugin_path("hello").display()
    ));
    let mut server = StdioServer::spawn(&["--config", &config.display().to_string()]);
    server.send(
        &json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {"elicitation": {}},
        "clientInfo": {"name": "raw", "version": "0"}}}),
    );
    server.answer(&json!(0));
    server.send(&json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": {"name": "greet", "arguments": {"name": "Ada"}}}));
    let ask = loop {
        let message = server.recv();
        if message["method"] == "elicitation/create" {
            break message;
        }
        assert!(
            message.get("id") != Some(&json!(1)),
            "answered without asking: {message}"
        );
    };
    assert!(
        ask["params"]["message"].as_str().unwrap().contains("greet"),
        "{ask}"
    );
    server.send(&json!({"jsonrpc": "2.0", "id": ask["id"], "result": {"action": "accept", "content": {"decision": "once"}}}));
    let answer = server.answer(&json!(1));
    assert_eq!(answer["result"]["isError"], false, "{answer}");
    server.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
}

/// The same over streamable HTTP: HTTP 400 with the JSON-RPC error, not a
/// bare 415.
#[test]
fn malformed_http_requests_get_a_json_rpc_error() {
    use std::io::{Read, Write};
    let server = HttpServer::start(&["--plugin", &hello(), "--token", "t0k"]);
    let addr = server
        .url
        .trim_start_matches("http://")
        .trim_end_matches("/mcp")
        .to_string();
    for (body, id, code) in [
        (r#"{"jsonrpc":"1.0","id":7,"method":"ping"}"#, json!(7), -32600),
        (
            r#"{"jsonrpc":"2.0","id":"x","method":"tools/call","params":[]}"#,
            json!("x"),
            -32602,
        ),
        (r#"{"jsonrpc":"2.0","id":9,"method":"#, json!(9), -32700),
    ] {
        let mut stream = std::net::TcpStream::connect(&addr).unwrap();
        write!(
            stream,
            "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nAuthorization: Bearer t0k\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
            body.len()
        )
        .unwrap();
        let mut response = String::new();
        stream.read_to_string(&mut response).unwrap();
        assert!(response.starts_with("HTTP/1.1 400"), "{response}");
        let json: Value = serde_json::from_str(response.split("\r\n\r\n").nth(1).unwrap()).unwrap();
        assert_eq!(
            (json["id"].clone(), json["error"]["code"].clone()),
            (id, json!(code)),
            "{json}"
        );
    }
}

#[test]
fn origin_port_wildcards_match_port_numbers_only() {
    let server = HttpServer::start(&["--plugin", &hello(), "--token", "t0k"]);
    let addr = server
        .url
        .trim_start_matches("http://")
        .trim_end_matches("/mcp")
        .to_string();
    let auth = ("Authorization", "Bearer t0k");
    for (origin, status) in [
        ("http://127.0.0.1:5173", 200),
        ("http://127.0.0.1:1.evil.example", 403),
        ("http://localhost:80@evil.example", 403),
        ("http://127.0.0.1.evil.example:80", 403),
        ("http://[::1]:9", 200),
    ] {
        assert_eq!(
            post_status(&addr, &[auth, ("Origin", origin)]),
            status,
            "{origin}"
        );
    }
}

/// Regression (hardening): `serve --http` with no token let any local
/// process call every trusted tool, `exec` included.
#[test]
fn serve_http_without_a_token_makes_one_up() {
    let server = HttpServer::start(&["--plugin", &hello()]);
    let token = server
        .token
        .clone()
        .expect("the generated token is printed at start");
    assert_eq!(token.len(), 32, "{token}");
    let addr = server
        .url
        .trim_start_matches("http://")
        .trim_end_matches("/mcp")
        .to_string();
    assert_eq!(post_status(&addr, &[]), 401);
    let bearer = format!("Bearer {token}");
    assert_eq!(post_status(&addr, &[("Authorization", &bearer)]), 200);
}

/// `--no-token`, asked for explicitly, serves a loopback address to clients
/// that cannot send a header; on any other address it is refused.
#[test]
fn no_token_serves_loopback_only() {
    let server = HttpServer::start(&["--plugin", &hello(), "--no-token"]);
    assert_eq!(server.token, None, "no token is made up");
    let addr = server
        .url
        .trim_start_matches("http://")
        .trim_end_matches("/mcp")
        .to_string();
    assert_eq!(post_status(&addr, &[]), 200);
    let out = std::process::Command::new(crate::support::toolhost_bin())
        .args(crate::mcp_server::serve_args(&[
            "--http",
            "0.0.0.0:0",
            "--no-token",
            "--plugin",
            &hello(),
        ]))
        .env_remove("TOOLHOST_MCP_TOKEN")
        .output()
        .unwrap();
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("--no-token serves only on a loopback address"),
        "{stderr}"
    );
}
