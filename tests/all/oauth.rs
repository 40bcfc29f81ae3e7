//! OAuth 2.1 over HTTP, through the real `toolhost serve --http`: the
//! protected-resource metadata, the 401 and 403 challenges, JWT access
//! tokens signed by a test issuer (RS256 and ES256, its JWKS served on the
//! loopback by `tests/peers/jwt_issuer.py`) accepted or refused, two
//! tokens of different scopes seeing and calling different tools, the
//! static token beside them, and the official Python MCP SDK connecting
//! with a token.

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};

use serde_json::{Value, json};

use crate::mcp_hostile::{Exchange, exchange, post};
use crate::mcp_server::{HttpServer, python_client};
use crate::support;

pub(crate) const ISSUER: &str = "https://issuer.toolhost.test";
pub(crate) const RESOURCE: &str = "https://toolhost.test/mcp";
const STATIC: &str = "st4tic";

/// The test issuer: its JWKS on the loopback, and tokens on request.
pub(crate) struct Issuer {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
    pub(crate) jwks_url: String,
}

impl Issuer {
    pub(crate) fn start() -> Issuer {
        let mut child = Command::new(support::peer_python())
            .arg(support::peer_script("jwt_issuer.py"))
            .arg(ISSUER)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .expect("run tests/peers/jwt_issuer.py");
        let stdin = child.stdin.take().unwrap();
        let mut stdout = BufReader::new(child.stdout.take().unwrap());
        let mut line = String::new();
        stdout.read_line(&mut line).unwrap();
        let hello: Value = serde_json::from_str(&line).expect("the issuer's first line");
        let jwks_url = hello["jwks_url"].as_str().unwrap().to_string();
        Issuer {
            child,
            stdin,
            stdout,
            jwks_url,
        }
    }

    /// A token as `request` asks (see the script's usage).
    fn token(&mut self, request: Value) -> String {
        writeln!(self.stdin, "{request}").unwrap();
        let mut line = String::new();
        self.stdout.read_line(&mut line).unwrap();
        line.trim().to_string()
    }

    /// A valid token of `alg` holding `scope`, for a day.
    pub(crate) fn valid(&mut self, alg: &str, scope: &str) -> String {
        self.token(json!({"alg": alg, "exp_in": 86400,
            "claims": {"iss": ISSUER, "aud": RESOURCE, "sub": "agent-1", "scope": scope}}))
    }
}

impl Drop for Issuer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `serve --http` of `hello` (toolset `hello`, tool `greet`) and `panic`
/// (toolset `panic`, tool `explode`), with the static token and an
/// `[auth]` section for `issuer`: scope `hello:use` grants `hello`,
/// `panic:use` grants `panic`, `all` grants everything.
fn server(issuer: &Issuer, dir: &tempfile::TempDir) -> HttpServer {
    let config = dir.path().join("toolhost.toml");
    std::fs::write(
        &config,
        format!(
            r#"[auth]
issuer = "{ISSUER}"
jwks_url = "{}"
audience = "{RESOURCE}"
clock_skew_s = 30
jwks_refresh_s = 1

[[auth.scopes]]
scope = "hello:use"
audience = "trusted"
toolsets = ["hello"]

[[auth.scopes]]
scope = "panic:use"
audience = "trusted"
toolsets = ["panic"]

[[auth.scopes]]
scope = "all"
audience = "trusted"
"#,
            issuer.jwks_url
        ),
    )
    .unwrap();
    let (hello, panic) = (support::plugin_path("hello"), support::plugin_path("panic"));
    HttpServer::start(&[
        "--config",
        config.to_str().unwrap(),
        "--plugin",
        hello.to_str().unwrap(),
        "--plugin",
        panic.to_str().unwrap(),
        "--token",
        STATIC,
    ])
}

fn initialize() -> Vec<u8> {
    json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "raw", "version": "0"}}})
    .to_string()
    .into_bytes()
}

fn get(addr: &str, path: &str, token: Option<&str>) -> Exchange {
    let auth = token
        .map(|t| format!("Authorization: Bearer {t}\r\n"))
        .unwrap_or_default();
    exchange(
        addr,
        &format!("GET {path} HTTP/1.1\r\nHost: {addr}\r\n{auth}Connection: close\r\n\r\n"),
        b"",
    )
}

/// The parameters of the `WWW-Authenticate` challenge of `answer`.
fn challenge(answer: &Exchange) -> String {
    answer
        .header("www-authenticate")
        .unwrap_or_else(|| panic!("no challenge with HTTP {}", answer.status))
        .to_string()
}

/// Opens a session with `token`; lists its tools and calls `tool`:
/// the names listed and the call's answer.
fn list_and_call(addr: &str, token: &str, tool: &str) -> (Vec<String>, Exchange) {
    let opened = post(addr, token, None, &initialize());
    assert_eq!(opened.status, 200, "{:?}", opened.messages);
    let session = opened.header("mcp-session-id").unwrap().to_string();
    let done = json!({"jsonrpc": "2.0", "method": "notifications/initialized"}).to_string();
    assert_eq!(post(addr, token, Some(&session), done.as_bytes()).status, 202);
    let list = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}).to_string();
    let listed = post(addr, token, Some(&session), list.as_bytes());
    let names = listed.messages[0]["result"]["tools"]
        .as_array()
        .unwrap_or_else(|| panic!("{:?}", listed.messages))
        .iter()
        .map(|t| t["name"].as_str().unwrap().to_string())
        .collect();
    let call = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
        "params": {"name": tool, "arguments": {"name": "Ada", "n": 1}}})
    .to_string();
    (names, post(addr, token, Some(&session), call.as_bytes()))
}

#[test]
fn oauth_metadata_and_challenges() {
    let issuer = Issuer::start();
    let dir = tempfile::tempdir().unwrap();
    let server = server(&issuer, &dir);
    let addr = server.addr();
    let metadata_url = "https://toolhost.test/.well-known/oauth-protected-resource/mcp";

    // RFC 9728: at the root and suffixed by the endpoint's path, no token.
    for path in [
        "/.well-known/oauth-protected-resource",
        "/.well-known/oauth-protected-resource/mcp",
    ] {
        let answer = get(&addr, path, None);
        assert_eq!(answer.status, 200, "{path}");
        assert_eq!(
            answer.messages[0],
            json!({"resource": RESOURCE, "authorization_servers": [ISSUER],
                "scopes_supported": ["hello:use", "panic:use", "all"],
                "bearer_methods_supported": ["header"]}),
            "{path}"
        );
    }

    // No token: 401 with the metadata's URL and the scopes.
    let head = format!(
        "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        initialize().len()
    );
    let answer = exchange(&addr, &head, &initialize());
    assert_eq!(answer.status, 401);
    assert_eq!(
        challenge(&answer),
        format!(r#"Bearer resource_metadata="{metadata_url}", scope="hello:use panic:use all""#)
    );

    // A token that is not one: 401 invalid_token.
    let answer = post(&addr, "not-a-jwt", None, &initialize());
    assert_eq!(answer.status, 401);
    let value = challenge(&answer);
    assert!(value.contains(r#"error="invalid_token""#), "{value}");
    assert!(
        value.contains(&format!(r#"resource_metadata="{metadata_url}""#)),
        "{value}"
    );
}

#[test]
fn oauth_refuses_bad_tokens() {
    let mut issuer = Issuer::start();
    let dir = tempfile::tempdir().unwrap();
    let server = server(&issuer, &dir);
    let addr = server.addr();
    let claims = |extra: Value| {
        let mut c = json!({"iss": ISSUER, "aud": RESOURCE, "sub": "a", "scope": "all"});
        c.as_object_mut()
            .unwrap()
            .extend(extra.as_object().unwrap().clone());
        c
    };
    let cases = [
        (
            "expired",
            json!({"alg": "RS256", "exp_in": -3600, "claims": claims(json!({}))}),
            "expired",
        ),
        (
            "not yet valid",
            json!({"alg": "ES256", "exp_in": 7200, "nbf_in": 3600, "claims": claims(json!({}))}),
            "not valid yet",
        ),
        (
            "wrong issuer",
            json!({"alg": "RS256", "exp_in": 600, "claims": claims(json!({"iss": "https://evil.test"}))}),
            "another issuer",
        ),
        (
            "wrong audience",
            json!({"alg": "ES256", "exp_in": 600, "claims": claims(json!({"aud": "https://other.test/mcp"}))}),
            "another resource",
        ),
        (
            "bad signature",
            json!({"alg": "RS256", "key": "rogue", "exp_in": 600, "claims": claims(json!({}))}),
            "signature",
        ),
        (
            "unknown kid",
            json!({"alg": "ES256", "kid": "nope", "exp_in": 600, "claims": claims(json!({}))}),
            "no key",
        ),
        (
            "alg none",
            json!({"alg": "none", "claims": claims(json!({"exp": 4102444800u64}))}),
            "not a signed JWT",
        ),
        (
            "HS256 keyed by the public key",
            json!({"alg": "HS256-public", "claims": claims(json!({"exp": 4102444800u64}))}),
            "not accepted",
        ),
        (
            "no exp",
            json!({"alg": "RS256", "claims": claims(json!({}))}),
            "exp",
        ),
    ];
    for (what, request, why) in cases {
        let token = issuer.token(request);
        let answer = post(&addr, &token, None, &initialize());
        assert_eq!(answer.status, 401, "{what}");
        let value = challenge(&answer);
        assert!(value.contains(r#"error="invalid_token""#), "{what}: {value}");
        assert!(value.contains(why), "{what}: {value}");
    }
    // Within the clock skew (30 s), an expired token still passes.
    let lenient = issuer.token(json!({"alg": "RS256", "exp_in": -5, "claims": claims(json!({}))}));
    assert_eq!(post(&addr, &lenient, None, &initialize()).status, 200);
    // A valid token with none of the configured scopes: 403 insufficient_scope.
    let token =
        issuer.token(json!({"alg": "ES256", "exp_in": 600, "claims": claims(json!({"scope": "other"}))}));
    let answer = post(&addr, &token, None, &initialize());
    assert_eq!(answer.status, 403);
    assert!(challenge(&answer).contains(r#"error="insufficient_scope""#));
}

#[test]
fn oauth_scopes_grant_toolsets() {
    let mut issuer = Issuer::start();
    let dir = tempfile::tempdir().unwrap();
    let server = server(&issuer, &dir);
    let addr = server.addr();
    let hello_token = issuer.valid("RS256", "hello:use");
    let panic_token = issuer.valid("ES256", "panic:use");

    // Each token sees its own toolset, and calls it.
    let (names, call) = list_and_call(&addr, &hello_token, "greet");
    assert_eq!(names, ["greet"]);
    assert_eq!(call.status, 200);
    assert_eq!(
        call.messages[0]["result"]["isError"], false,
        "{:?}",
        call.messages
    );
    let (names, call) = list_and_call(&addr, &panic_token, "explode");
    assert_eq!(names, ["explode"]);
    assert_eq!(call.status, 200);

    // A tool outside the grant that another scope grants: 403 with the
    // scopes that would.
    let (_, call) = list_and_call(&addr, &hello_token, "explode");
    assert_eq!(call.status, 403);
    let value = challenge(&call);
    assert!(value.contains(r#"error="insufficient_scope""#), "{value}");
    assert!(value.contains(r#"scope="panic:use all""#), "{value}");
    // A tool no scope grants is unknown, as to anyone.
    let (_, call) = list_and_call(&addr, &hello_token, "no_such_tool");
    assert_eq!(call.status, 200);
    assert!(call.messages[0]["error"].is_object(), "{:?}", call.messages);

    // A session opened with one grant is not the other's.
    let opened = post(&addr, &hello_token, None, &initialize());
    let session = opened.header("mcp-session-id").unwrap().to_string();
    let list = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}).to_string();
    let answer = post(&addr, &panic_token, Some(&session), list.as_bytes());
    assert_eq!(answer.status, 403);

    // The host's status: for a grant of everything only.
    assert_eq!(get(&addr, "/status", Some(&hello_token)).status, 403);
    assert_eq!(get(&addr, "/status", Some(STATIC)).status, 200);

    // Both scopes, and the static token: everything.
    let both = issuer.valid("RS256", "hello:use panic:use");
    let (mut names, _) = list_and_call(&addr, &both, "greet");
    names.sort();
    assert_eq!(names, ["explode", "greet"]);
    let (mut names, call) = list_and_call(&addr, STATIC, "explode");
    names.sort();
    assert_eq!(names, ["explode", "greet"]);
    assert_eq!(call.status, 200);
}

#[test]
fn oauth_python_sdk_connects_with_a_token() {
    let mut issuer = Issuer::start();
    let dir = tempfile::tempdir().unwrap();
    let server = server(&issuer, &dir);
    let token = issuer.valid("ES256", "hello:use");
    let steps = json!([{"list": true}, {"call": "greet", "args": {"name": "Ada"}}]);
    let out = python_client(&["http".into(), server.url.clone(), token], steps);
    let steps = out["steps"].as_array().unwrap_or_else(|| panic!("{out}"));
    let tools: Vec<&str> = steps[0]["tools"]
        .as_array()
        .unwrap_or_else(|| panic!("{out}"))
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(tools, ["greet"], "{out}");
    assert!(steps[1].to_string().contains("Hello, Ada"), "{out}");
}
