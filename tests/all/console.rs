//! The operator's console (`[console] enabled`), through the real `toolhost
//! serve --http` and Debian's headless `chromium` (see [`crate::browser`]):
//!
//! - two dangerous commands, called by a client that cannot be asked
//!   (MCP 2026-07-28, no elicitation declared), wait on the console; the
//!   page, opened with the token in its fragment, shows both; a click on
//!   "Approve once" runs the first (its real output comes back), a click on
//!   "Refuse" refuses the second (it never runs, and the result says the
//!   user denied it); every decision is in the audit log, which the page
//!   searches; a hostile tool name and a command holding markup are shown
//!   as text, and no script of theirs runs. Screenshots are kept in
//!   `target/test-artifacts/console/`;
//! - the API: no token is 401; an OAuth token without the console's scopes
//!   is 403; the read scope sees but cannot decide (a pending command stays
//!   pending); the operate scope decides; another origin, or a body that is
//!   not JSON, is refused;
//! - a library `Host` serves the console its config turns on, its
//!   approvals left to the application's own callback.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use crate::browser::Browser;
use crate::mcp_server::HttpServer;
use crate::oauth::{ISSUER, Issuer, RESOURCE};
use crate::peers::{http_request, wait_until};
use crate::support;

const TOKEN: &str = "console-static-token";

/// `toolhost serve --http` of `config` with the static token, and its address.
fn serve(config: &Path) -> (HttpServer, SocketAddr) {
    let served = HttpServer::start(&["--token", TOKEN, "--config", config.to_str().unwrap()]);
    let addr = served.addr().parse().unwrap();
    (served, addr)
}

fn config(dir: &Path, extra: &str) -> PathBuf {
    let path = dir.join("toolhost.toml");
    std::fs::write(
        &path,
        format!("[exec]\nbackend = \"local\"\n\n[audit]\npath = \"audit.jsonl\"\n\n{extra}"),
    )
    .unwrap();
    path
}

/// A `tools/call` by an MCP 2026-07-28 client that declares no
/// elicitation, so that an approval it needs waits on the console; the
/// JSON-RPC response.
fn call(addr: SocketAddr, token: &str, tool: &str, arguments: Value) -> Value {
    call_traced(addr, token, tool, arguments, None, None)
}

/// [`call`], with a W3C `traceparent` in its `_meta` (`trace`) and in its
/// HTTP request's headers (`header`) when given.
pub(crate) fn call_traced(
    addr: SocketAddr,
    token: &str,
    tool: &str,
    arguments: Value,
    trace: Option<&str>,
    header: Option<&str>,
) -> Value {
    let mut meta = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientInfo": {"name": "console-test", "version": "0"},
        "io.modelcontextprotocol/clientCapabilities": {},
    });
    if let Some(trace) = trace {
        meta["traceparent"] = json!(trace);
    }
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
        "name": tool, "arguments": arguments, "_meta": meta}})
    .to_string();
    let auth = format!("Bearer {token}");
    let mut headers = vec![
        ("Authorization", auth.as_str()),
        ("Content-Type", "application/json"),
        ("Accept", "application/json, text/event-stream"),
        ("MCP-Protocol-Version", "2026-07-28"),
        ("Mcp-Method", "tools/call"),
        ("Mcp-Name", tool),
    ];
    if let Some(header) = header {
        headers.push(("traceparent", header));
    }
    let (status, text) = http_request(addr, "POST", "/mcp", &headers, &body).expect("the server answers");
    assert_eq!(status, 200, "{text}");
    let json = text
        .lines()
        .filter_map(|l| l.strip_prefix("data: ").or(Some(l)))
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .find(|v| v.get("id").is_some());
    json.unwrap_or_else(|| panic!("no JSON-RPC response in {text}"))
}

/// A request to the console's API: its status and JSON body.
fn api(addr: SocketAddr, method: &str, path: &str, headers: &[(&str, &str)], body: &str) -> (u16, Value) {
    let (status, text) = http_request(addr, method, path, headers, body).expect("the server answers");
    (status, serde_json::from_str(&text).unwrap_or(Value::Null))
}

fn bearer(token: &str) -> String {
    format!("Bearer {token}")
}

/// The questions waiting on the console.
fn pending(addr: SocketAddr) -> Vec<Value> {
    let auth = bearer(TOKEN);
    let (status, state) = api(addr, "GET", "/console/api/state", &[("Authorization", &auth)], "");
    assert_eq!(status, 200, "{state}");
    state["approvals"]["pending"]
        .as_array()
        .cloned()
        .unwrap_or_default()
}

/// Where the screenshots are kept.
fn artifacts() -> PathBuf {
    support::workspace_root().join("target/test-artifacts/console")
}

/// A folder the command deletes: `rm -rf FOLDER && echo SAID`.
fn victim(work: &Path, name: &str, said: &str) -> (PathBuf, Value) {
    let folder = work.join(name);
    std::fs::create_dir(&folder).unwrap();
    let command = format!("rm -rf {} && echo {said}", folder.display());
    (folder, json!({"command": command}))
}

fn text_of(answer: &Value) -> String {
    answer["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_default()
        .to_string()
}

#[test]
fn an_operator_approves_one_command_and_refuses_another_in_headless_chromium() {
    let dir = tempfile::tempdir().unwrap();
    let hello = support::plugin_path("hello");
    let plugin = format!("[[plugins]]\npath = \"{}\"\n\n", hello.display());
    let (_served, addr) = serve(&config(
        dir.path(),
        &format!("{plugin}[console]\nenabled = true\n"),
    ));
    // A plugin's call, traced by its caller.
    let trace_id = "4bf92f3577b34da6a3ce929d0e0e4736";
    let traceparent = format!("00-{trace_id}-00f067aa0ba902b7-01");
    let greeted = call_traced(
        addr,
        TOKEN,
        "greet",
        json!({"name": "Ada"}),
        Some(&traceparent),
        None,
    );
    assert_eq!(greeted["result"]["isError"], false, "{greeted}");
    let work = tempfile::tempdir().unwrap();
    let (approved, approved_args) = victim(work.path(), "approved", "console-approved-it");
    let hostile = r#"'<img src=x onerror="window.__pwned=1">'"#;
    let (refused, refused_args) = victim(work.path(), "refused", hostile);

    // Both wait on the console, their clients blocked meanwhile.
    let first = std::thread::spawn(move || call(addr, TOKEN, "exec", approved_args));
    wait_until("the first command pending", || pending(addr).len() == 1);
    let second = std::thread::spawn(move || call(addr, TOKEN, "exec", refused_args));
    wait_until("the second command pending", || pending(addr).len() == 2);
    // A made-up tool name full of markup, among the calls shown.
    let script_name = r#"<script>window.__pwned=2</script><img src=x onerror="window.__pwned=3">"#;
    let unknown = call(addr, TOKEN, script_name, json!({}));
    assert_eq!(unknown["error"]["code"], -32602, "{unknown}");

    let mut browser = Browser::start();
    browser.open(&format!("http://{addr}/console#token={TOKEN}"));
    browser.wait_for(
        "both approvals on the page",
        "document.querySelectorAll('#approvals-list li').length === 2",
    );
    // The token left the address bar (it stays in the tab's storage).
    assert_eq!(browser.eval("location.hash"), json!(""));
    assert_eq!(
        browser.eval("document.getElementById('who').textContent"),
        json!("static token (operate)")
    );
    browser.screenshot(&artifacts().join("1-pending.png"));

    let item = |folder: &Path| {
        format!(
            "Array.from(document.querySelectorAll('#approvals-list li')).find(li => li.querySelector('pre').textContent.includes({})).dataset.id",
            serde_json::to_string(&folder.display().to_string()).unwrap()
        )
    };
    let id = browser.eval(&item(&approved));
    let id = id.as_str().expect("the approved command's item");
    browser.click(&format!("#approvals-list li[data-id='{id}'] button.approve"));
    let answer = first.join().unwrap();
    assert_eq!(answer["result"]["isError"], false, "{answer}");
    let output = &answer["result"]["structuredContent"];
    assert_eq!(output["stdout"], "console-approved-it\n", "{answer}");
    assert!(!approved.exists(), "the approved command ran");
    browser.wait_for(
        "the approval said done",
        &format!("(document.querySelector(\"#approvals-list li[data-id='{id}'] [role=status]\") || {{}}).textContent === 'Approved once.'"),
    );
    browser.screenshot(&artifacts().join("2-approved.png"));

    let id = browser.eval(&item(&refused));
    let id = id.as_str().expect("the refused command's item");
    browser.click(&format!("#approvals-list li[data-id='{id}'] button.refuse"));
    let answer = second.join().unwrap();
    assert_eq!(answer["result"]["isError"], true, "{answer}");
    let text = text_of(&answer);
    assert!(text.contains("\"error_code\":\"blocked\""), "{text}");
    assert!(text.contains("the user denied it"), "{text}");
    assert!(refused.exists(), "the refused command never ran");
    // Each call's spans, filed with it (the console records them with no
    // [traces] export): the plugin's sandboxed run, the approval waits.
    let auth = bearer(TOKEN);
    let (_, state) = api(addr, "GET", "/console/api/state", &[("Authorization", &auth)], "");
    let spans_of = |tool: &str, outcome: &str| -> Vec<String> {
        let calls = state["calls"]["finished"].as_array().cloned().unwrap_or_default();
        let call = calls
            .iter()
            .find(|c| c["tool"] == tool && c["outcome"] == outcome)
            .unwrap_or_else(|| panic!("no {outcome} call of {tool}: {state}"));
        call["spans"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| s["name"].as_str().unwrap().to_string())
            .collect()
    };
    let greet = spans_of("greet", "ok");
    // The call's own span is its MCP request's (`tools/call greet`).
    for step in ["admission", "sandbox greet", "tools/call greet"] {
        assert!(greet.contains(&step.to_string()), "{greet:?}");
    }
    assert!(spans_of("exec", "ok").contains(&"approval".to_string()));
    assert!(spans_of("exec", "error").contains(&"approval".to_string()));

    // The calls, their outcomes and the hostile texts, all as text.
    browser.wait_for(
        "the finished calls shown",
        "document.querySelectorAll('#approvals-list li').length === 0 && \
         document.getElementById('finished').textContent.includes('unknown_tool') && \
         document.getElementById('errors-table').textContent.includes('blocked')",
    );
    assert_eq!(
        browser.eval(&format!(
            "document.getElementById('finished').textContent.includes({})",
            serde_json::to_string(script_name).unwrap()
        )),
        json!(true)
    );
    assert_eq!(browser.eval("window.__pwned === undefined"), json!(true));
    assert_eq!(
        browser.eval("document.querySelectorAll('main img, main script').length"),
        json!(0)
    );
    // The plugin with its hash, version and calls; the traced call's trace id.
    let hash = format!(
        "blake3:{}",
        blake3::hash(&std::fs::read(&hello).unwrap()).to_hex()
    );
    let row = browser.eval(
        "Array.from(document.querySelectorAll('#plugins-table tbody tr')[0].cells, c => c.textContent)",
    );
    assert_eq!(row[1], "loaded", "{row}");
    assert_eq!(row[2], hash.as_str(), "{row}");
    assert!(row[3].as_str().is_some_and(|v| v.starts_with("0.")), "{row}");
    assert_eq!(row[4], "greet", "{row}");
    assert_eq!(row[7], "1", "{row}");
    assert_eq!(
        browser.eval(&format!(
            "document.getElementById('finished').textContent.includes('{trace_id}')"
        )),
        json!(true)
    );

    // The audit log, searched from the page: both decisions, by whom.
    browser.eval("document.getElementById('audit-event').value = 'console_decision'");
    browser.click("#audit-form button");
    browser.wait_for(
        "the console's decisions found",
        "document.querySelectorAll('#audit-lines li').length === 2",
    );
    let lines = browser
        .eval("Array.from(document.querySelectorAll('#audit-lines li'), li => JSON.parse(li.textContent))");
    assert_eq!(lines[0]["decision"], "deny", "{lines}");
    assert_eq!(lines[1]["decision"], "once", "{lines}");
    assert_eq!(lines[0]["operator"], "static token", "{lines}");
    browser.screenshot(&artifacts().join("3-decided-and-audited.png"));
    assert!(
        browser.exceptions.is_empty(),
        "the page threw: {:?}",
        browser.exceptions
    );
    assert_eq!(browser.eval("window.__pwned === undefined"), json!(true));
    // Opening the page asked nothing of the listener without its token.
    let (_, refusals) = api(
        addr,
        "GET",
        "/console/api/audit?event=client&text=refused",
        &[("Authorization", &bearer(TOKEN))],
        "",
    );
    assert_eq!(refusals["lines"], json!([]), "{refusals}");
}

#[test]
fn the_console_api_lets_in_the_token_and_the_scopes_configured_and_no_one_else() {
    let mut issuer = Issuer::start();
    let dir = tempfile::tempdir().unwrap();
    let config = config(
        dir.path(),
        &format!(
            "[auth]\nissuer = \"{ISSUER}\"\njwks_url = \"{}\"\naudience = \"{RESOURCE}\"\n\n\
             [[auth.scopes]]\nscope = \"tools\"\naudience = \"trusted\"\n\n\
             [console]\nenabled = true\nread_scope = \"console:read\"\noperate_scope = \"console:operate\"\n",
            issuer.jwks_url
        ),
    );
    let (_served, addr) = serve(&config);
    let state = "/console/api/state";

    // The page itself holds nothing and needs no token; its headers lock it down.
    let (status, page) = http_request(addr, "GET", "/console", &[], "").unwrap();
    assert_eq!(status, 200);
    assert!(page.contains("/console/console.js"), "{page}");
    let head = crate::mcp_hostile::exchange(
        &addr.to_string(),
        &format!("GET /console HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n"),
        b"",
    );
    let csp = head.header("content-security-policy").unwrap_or_default();
    assert!(csp.starts_with("default-src 'none'; script-src 'self';"), "{csp}");
    assert_eq!(head.header("x-frame-options"), Some("DENY"));

    // No token: 401. A token of the issuer without the console's scopes: 403.
    assert_eq!(api(addr, "GET", state, &[], "").0, 401);
    let tools_only = bearer(&issuer.valid("RS256", "tools"));
    let (status, body) = api(addr, "GET", state, &[("Authorization", &tools_only)], "");
    assert_eq!(status, 403, "{body}");
    assert!(body["error"].as_str().unwrap().contains("read_scope"), "{body}");

    // A command waits; the read scope sees it and cannot decide it.
    let work = tempfile::tempdir().unwrap();
    let (folder, arguments) = victim(work.path(), "victim", "operated");
    let waiting = std::thread::spawn(move || call(addr, TOKEN, "exec", arguments));
    wait_until("the command pending", || pending(addr).len() == 1);
    let read_token = issuer.valid("ES256", "console:read");
    let reader = bearer(&read_token);
    let (status, seen) = api(addr, "GET", state, &[("Authorization", &reader)], "");
    assert_eq!(status, 200, "{seen}");
    assert_eq!(seen["who"], json!({"subject": "agent-1", "access": "read"}));
    let id = seen["approvals"]["pending"][0]["id"].as_u64().unwrap();
    let decide = format!("/console/api/approvals/{id}");
    let once = r#"{"decision":"once"}"#;
    let json = ("Content-Type", "application/json");
    let (status, body) = api(addr, "POST", &decide, &[("Authorization", &reader), json], once);
    assert_eq!(status, 403, "{body}");
    assert_eq!(pending(addr).len(), 1, "still pending");
    // The page shows it to the reader, with nothing to click.
    let mut browser = Browser::start();
    browser.open(&format!("http://{addr}/console#token={read_token}"));
    browser.wait_for(
        "the pending command shown read-only",
        "document.querySelectorAll('#approvals-list li').length === 1 && \
         document.getElementById('approvals-note').textContent.startsWith('Read-only')",
    );
    assert_eq!(
        browser.eval("document.querySelectorAll('#approvals-list button').length"),
        json!(0)
    );
    assert_eq!(
        browser.eval("document.getElementById('who').textContent"),
        json!("agent-1 (read)")
    );
    browser.screenshot(&artifacts().join("4-read-only.png"));
    drop(browser);
    // A console-only token opens no tool either.
    let (status, _) = api(addr, "POST", "/mcp", &[("Authorization", &reader), json], "{}");
    assert_ne!(status, 200);

    // The operate scope decides, from its own origin and as JSON only.
    let operator = bearer(&issuer.valid("RS256", "console:operate"));
    let auth = ("Authorization", operator.as_str());
    let evil = ("Origin", "https://evil.example");
    assert_eq!(api(addr, "POST", &decide, &[auth, json, evil], once).0, 403);
    let text = ("Content-Type", "text/plain");
    assert_eq!(api(addr, "POST", &decide, &[auth, text], once).0, 415);
    assert_eq!(
        api(addr, "POST", "/console/api/approvals/999", &[auth, json], once).0,
        404
    );
    let own = format!("http://{addr}");
    let (status, body) = api(addr, "POST", &decide, &[auth, json, ("Origin", &own)], once);
    assert_eq!(status, 200, "{body}");
    let answer = waiting.join().unwrap();
    assert_eq!(
        answer["result"]["structuredContent"]["stdout"], "operated\n",
        "{answer}"
    );
    assert!(!folder.exists());
    // Decided once: a second decision finds nothing pending.
    assert_eq!(api(addr, "POST", &decide, &[auth, json], once).0, 404);

    // The audit log through the API, filtered; the static token operates.
    let statik = bearer(TOKEN);
    let (status, tail) = api(
        addr,
        "GET",
        "/console/api/audit?event=console_decision&text=agent-1",
        &[("Authorization", &statik)],
        "",
    );
    assert_eq!(status, 200, "{tail}");
    let lines = tail["lines"].as_array().unwrap();
    assert_eq!(lines.len(), 1, "{tail}");
    assert_eq!(lines[0]["operator"], "agent-1");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_host_serves_the_console_its_config_turns_on_without_approvals() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("toolhost.toml");
    let host = toolhost::Host::builder()
        .config(toolhost::Config::parse("[console]\nenabled = true\n", &path).unwrap())
        .build()
        .await
        .unwrap();
    let (addr, shutdown, serving) = crate::mcp_server::serve_host(host, TOKEN).await;
    let (status, state) = tokio::task::spawn_blocking(move || {
        api(
            addr,
            "GET",
            "/console/api/state",
            &[("Authorization", &bearer(TOKEN))],
            "",
        )
    })
    .await
    .unwrap();
    assert_eq!(status, 200, "{state}");
    // The application's callback asks its approvals: none wait here.
    assert_eq!(state["approvals"]["enabled"], false, "{state}");
    assert_eq!(state["who"]["access"], "operate", "{state}");
    shutdown.cancel();
    serving.await.unwrap().unwrap();
}
