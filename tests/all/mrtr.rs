//! MCP 2026-07-28 multi-round-trip results, through the official Python
//! SDK's `Client` in its default mode (it negotiates 2026-07-28 and answers
//! an `InputRequiredResult` through its callbacks, then retries):
//!
//! - a dangerous command is asked by an input request and runs after the
//!   approval, on two `--stateless` replicas behind Debian's haproxy that
//!   share a state key, the retry landing on the other replica; declined,
//!   tampered or replayed, it does not run;
//! - a plugin's own questions (elicitation, sampling) go the same way, and
//!   a question the client did not declare it can answer is `-32021`.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

use serde_json::{Value, json};

use crate::mcp_server::{error_code, python_client};
use crate::peers::{free_port, http_request, http_status, program, wait_until};
use crate::support;

/// A `toolhost serve --http ADDR --stateless --no-token` whose log
/// (`toolhost_mcp` at info) goes to a file.
struct Replica {
    child: Child,
    addr: SocketAddr,
    log: PathBuf,
}

impl Replica {
    fn start(config: &Path, log: PathBuf) -> Replica {
        let addr: SocketAddr = format!("127.0.0.1:{}", free_port()).parse().unwrap();
        let child = Command::new(support::toolhost_bin())
            .args(["serve", "--http", &addr.to_string(), "--stateless", "--no-token"])
            .arg("--config")
            .arg(config)
            .arg("--cache-dir")
            .arg(support::cache_dir())
            .env("TOOLHOST_LOG", "toolhost_mcp=info")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(&log).unwrap())
            .spawn()
            .expect("start a replica");
        wait_until("the replica ready", || {
            http_status(addr, "GET", "/healthz") == Some(200)
        });
        Replica { child, addr, log }
    }

    fn log(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }
}

impl Drop for Replica {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Debian's haproxy in front of two replicas: every request that carries a
/// `requestState` (a retry) goes to `retries`, every other one to `first`,
/// so that each retry provably lands on the replica that did not ask.
struct Balancer {
    child: Child,
    addr: SocketAddr,
}

impl Balancer {
    fn start(dir: &Path, first: SocketAddr, retries: SocketAddr) -> Balancer {
        let addr: SocketAddr = format!("127.0.0.1:{}", free_port()).parse().unwrap();
        let config = format!(
            "global\n  maxconn 64\n\
             defaults\n  mode http\n  timeout connect 2s\n  timeout client 60s\n  timeout server 60s\n  \
             option http-buffer-request\n\
             frontend mcp\n  bind {addr}\n  \
             use_backend retries if {{ req.body -m sub \"requestState\" }}\n  default_backend first\n\
             backend first\n  server a {first}\n\
             backend retries\n  server b {retries}\n"
        );
        let path = dir.join("haproxy.cfg");
        std::fs::write(&path, config).unwrap();
        let child = Command::new(program("haproxy", "haproxy"))
            .arg("-f")
            .arg(&path)
            .arg("-db")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("start haproxy");
        wait_until("haproxy answering /healthz", || {
            http_status(addr, "GET", "/healthz") == Some(200)
        });
        Balancer { child, addr }
    }
}

impl Drop for Balancer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Runs tests/peers/mrtr_client.py against `url` with `steps`.
fn python_2026(url: &str, steps: Value) -> Value {
    python_2026_as(url, "mrtr-test", steps)
}

/// As [`python_2026`], the client declaring the name `client`.
fn python_2026_as(url: &str, client: &str, steps: Value) -> Value {
    let mut child = Command::new(support::peer_python())
        .arg(support::peer_script("mrtr_client.py"))
        .arg(url)
        .arg(client)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run the Python client");
    std::io::Write::write_all(&mut child.stdin.take().unwrap(), steps.to_string().as_bytes()).unwrap();
    let out = child.wait_with_output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    serde_json::from_str(&stdout).unwrap_or_else(|e| {
        panic!(
            "the Python client printed no JSON ({e}): {stdout}\n{}",
            String::from_utf8_lossy(&out.stderr)
        )
    })
}

#[test]
fn approvals_by_input_required_results_across_two_replicas_behind_haproxy() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("state.key"),
        "a shared secret of the two replicas, 48+ bytes long",
    )
    .unwrap();
    let config = dir.path().join("toolhost.toml");
    std::fs::write(
        &config,
        "[exec]\nbackend = \"local\"\n\n[mcp]\nstate_key_file = \"state.key\"\n",
    )
    .unwrap();
    let a = Replica::start(&config, dir.path().join("a.log"));
    let b = Replica::start(&config, dir.path().join("b.log"));
    let balancer = Balancer::start(dir.path(), a.addr, b.addr);
    let url = format!("http://{}/mcp", balancer.addr);

    // Four victims, each a folder the command deletes and a file it makes.
    let work = tempfile::tempdir().unwrap();
    let victim = |n: usize| {
        let folder = work.path().join(format!("victim{n}"));
        std::fs::create_dir(&folder).unwrap();
        let marker = work.path().join(format!("ran{n}"));
        let command = format!("rm -rf {} && touch {}", folder.display(), marker.display());
        (folder, marker, json!({"command": command}))
    };
    let (approved, approved_ran, approved_args) = victim(1);
    let (declined, declined_ran, declined_args) = victim(2);
    let (tampered, tampered_ran, tampered_args) = victim(3);
    let (replayed, replayed_ran, replayed_args) = victim(4);
    let out = python_2026(
        &url,
        json!([
            {"call": "exec", "args": approved_args, "answer": "once"},
            {"call": "exec", "args": declined_args, "answer": "decline"},
            {"tamper": "exec", "args": tampered_args, "answer": "once"},
            {"replay": "exec", "args": replayed_args, "answer": "once"},
        ]),
    );
    let steps = out["steps"].as_array().unwrap();

    // Approved once: asked with the exact command, then it ran.
    assert_eq!(steps[0]["is_error"], false, "{}", steps[0]);
    let asked = steps[0]["asked"].as_array().unwrap();
    assert_eq!(asked.len(), 1, "{out}");
    assert!(
        asked[0]
            .as_str()
            .unwrap()
            .contains(&format!("rm -rf {}", approved.display()))
    );
    assert!(approved_ran.exists() && !approved.exists(), "approved: it ran");

    // Declined: a blocked result, and nothing ran.
    assert_eq!(error_code(&steps[1]), "blocked", "{}", steps[1]);
    assert!(
        steps[1]["text"].as_str().unwrap().contains("the user denied it"),
        "{}",
        steps[1]
    );
    assert!(
        !declined_ran.exists() && declined.exists(),
        "declined: it never ran"
    );

    // Tampered: a JSON-RPC -32602 naming why, and nothing ran.
    assert_eq!(steps[2]["input_keys"], json!(["approval"]), "{}", steps[2]);
    let refusal = &steps[2]["rounds"][0]["error"];
    assert_eq!(refusal["code"], -32602, "{}", steps[2]);
    assert!(
        refusal["message"].as_str().unwrap().contains("requestState"),
        "{refusal}"
    );
    assert!(
        !tampered_ran.exists() && tampered.exists(),
        "tampered: it never ran"
    );

    // Replayed: the first retry runs it, the same state again is refused.
    let rounds = &steps[3]["rounds"];
    assert_eq!(rounds[0]["is_error"], false, "{}", steps[3]);
    assert_eq!(rounds[1]["error"]["code"], -32602, "{}", steps[3]);
    assert_eq!(rounds[1]["error"]["data"]["reason"], "replayed", "{}", steps[3]);
    assert!(
        replayed_ran.exists() && !replayed.exists(),
        "the first retry ran it"
    );

    // Replica a asked every question; replica b continued every retry.
    let (a_log, b_log) = (a.log(), b.log());
    assert!(
        a_log.contains("asking the client by an InputRequiredResult"),
        "{a_log}"
    );
    assert!(!a_log.contains("continuing a request"), "{a_log}");
    assert!(
        b_log.contains("continuing a request from its requestState"),
        "{b_log}"
    );
    assert!(!b_log.contains("asking the client"), "{b_log}");
}

#[test]
fn plugin_questions_by_input_required_results_and_undeclared_capabilities() {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("toolhost.toml");
    // Approving test_elicitation makes it a three-round call: the approval,
    // then the plugin's own question (the approval's answer carried in the
    // state), then the result.
    let gated = format!(
        "require_approval = [\"test_elicitation\"]\n{}",
        crate::mcp_conformance::fixture_config()
    );
    std::fs::write(&config, gated).unwrap();
    let server = Replica::start(&config, dir.path().join("server.log"));
    let url = format!("http://{}/mcp", server.addr);

    // A client that declared elicitation and sampling is asked both.
    let out = python_2026(
        &url,
        json!([
            {"call": "test_elicitation", "args": {"message": "Your name?"},
             "answer": {"decision": "once", "response": "Ada"}},
            {"call": "test_sampling", "args": {"prompt": "Capital of France?"}, "sample": "Paris"},
        ]),
    );
    let steps = out["steps"].as_array().unwrap();
    let asked = steps[0]["asked"].as_array().unwrap();
    assert_eq!(asked.len(), 2, "{out}");
    assert!(
        asked[0]
            .as_str()
            .unwrap()
            .contains("`test_elicitation` needs approval"),
        "{out}"
    );
    assert_eq!(asked[1], "Your name?", "{out}");
    assert_eq!(
        steps[0]["text"],
        "User response: action=accept, content={\"decision\":\"once\",\"response\":\"Ada\"}",
        "{out}"
    );
    assert_eq!(steps[1]["text"], "LLM response: Paris", "{out}");
    let sampled = &steps[1]["sampled"][0];
    assert!(sampled.to_string().contains("Capital of France?"), "{out}");

    // One that declared no sampling gets -32021 naming it, not a result.
    let out = python_2026(
        &url,
        json!([{"call": "test_sampling", "args": {"prompt": "Capital of France?"}}]),
    );
    let error = &out["steps"][0]["error"];
    assert_eq!(error["code"], -32021, "{out}");
    assert_eq!(
        error["data"]["requiredCapabilities"],
        json!({"sampling": {}}),
        "{out}"
    );

    // On the wire: HTTP 400, as the conformance suite wants.
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
        "name": "test_sampling", "arguments": {"prompt": "hi"},
        "_meta": {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientInfo": {"name": "raw", "version": "1"},
            "io.modelcontextprotocol/clientCapabilities": {},
        },
    }});
    let (status, answer) = http_request(
        server.addr,
        "POST",
        "/mcp",
        &[
            ("Content-Type", "application/json"),
            ("Accept", "application/json, text/event-stream"),
            ("MCP-Protocol-Version", "2026-07-28"),
            ("Mcp-Method", "tools/call"),
            ("Mcp-Name", "test_sampling"),
        ],
        &body.to_string(),
    )
    .expect("an answer");
    assert_eq!(status, 400, "{answer}");
    assert!(answer.contains("-32021"), "{answer}");
}

/// One stateless server with `exec` on the local backend, and its folder.
fn exec_server() -> (tempfile::TempDir, Replica) {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("toolhost.toml");
    std::fs::write(&config, "[exec]\nbackend = \"local\"\n").unwrap();
    let server = Replica::start(&config, dir.path().join("server.log"));
    (dir, server)
}

/// "Approve for this session" without sessions: the caller (bearer token
/// and declared client name) is not asked again for the same category,
/// in later requests of another client process; another caller is.
#[test]
fn a_session_approval_holds_for_the_same_caller_only() {
    let (_dir, server) = exec_server();
    let url = format!("http://{}/mcp", server.addr);
    let work = tempfile::tempdir().unwrap();
    let rm = |name: &str| {
        let folder = work.path().join(name);
        std::fs::create_dir(&folder).unwrap();
        (
            folder.clone(),
            json!({"command": format!("rm -rf {}", folder.display())}),
        )
    };
    let (first, first_args) = rm("first");
    let (second, second_args) = rm("second");
    let (third, third_args) = rm("third");
    let out = python_2026_as(
        &url,
        "agent-a",
        json!([{"call": "exec", "args": first_args, "answer": "session"}]),
    );
    assert_eq!(out["steps"][0]["asked"].as_array().unwrap().len(), 1, "{out}");
    assert!(!first.exists(), "{out}");
    // The same caller, a new client process: not asked, it runs.
    let out = python_2026_as(
        &url,
        "agent-a",
        json!([{"call": "exec", "args": second_args, "answer": "deny"}]),
    );
    assert_eq!(out["steps"][0]["asked"], json!([]), "{out}");
    assert!(!second.exists(), "{out}");
    // Another caller is asked (and denies).
    let out = python_2026_as(
        &url,
        "agent-b",
        json!([{"call": "exec", "args": third_args, "answer": "deny"}]),
    );
    assert_eq!(out["steps"][0]["asked"].as_array().unwrap().len(), 1, "{out}");
    assert!(third.exists(), "{out}");
}

/// A client of an earlier revision (the 2025 handshake) on a stateless
/// server cannot be asked: its flagged command is blocked, no question is
/// sent, and it does not run.
#[test]
fn a_2025_client_on_a_stateless_server_is_not_asked() {
    let (_dir, server) = exec_server();
    let work = tempfile::tempdir().unwrap();
    let out = python_client(
        &["http".into(), format!("http://{}/mcp", server.addr)],
        json!([
            {"elicit": "once"},
            {"call": "exec", "args": {"command": format!("rm -rf {}", work.path().display())}},
        ]),
    );
    assert_eq!(error_code(&out["steps"][1]), "blocked", "{out}");
    assert!(out["elicitations"].as_array().unwrap().is_empty(), "{out}");
    assert!(work.path().exists());
}

/// A bridged 2026-07-28 server's questions reach a 2026-07-28 caller as
/// toolhost's own `InputRequiredResult`s: each round the caller answers
/// makes the bridged call again from its start, the server's rounds
/// answered in turn (its requestState passed back as it sent it), on a
/// `--stateless` server. A decline reaches the server as the user's; a
/// question of a kind the caller did not declare fails the call.
#[test]
fn a_bridged_servers_questions_reach_a_2026_client() {
    let dir = tempfile::tempdir().unwrap();
    let config = crate::mcp_revisions::bridging_config_with(dir.path(), crate::mcp_revisions::ASK_ALL);
    let server = Replica::start(&config, dir.path().join("server.log"));
    let url = format!("http://{}/mcp", server.addr);
    // Until the bridged server is connected and listed.
    let ready = python_client(
        &["http".into(), url.clone()],
        json!([{"call": "mcp__trace__seen", "args": {}, "until": "protocolVersion"}]),
    );
    assert_eq!(ready["steps"][0]["is_error"], false, "{ready}");
    let out = python_2026(
        &url,
        json!([
            {"call": "mcp__trace__seen", "args": {}, "sample": "unused"},
            {"call": "mcp__trace__interview", "args": {}, "answer": {"name": "Ada", "color": "green"}, "sample": "Hi Ada"},
            {"call": "mcp__trace__interview", "args": {}, "answer": "decline", "sample": "Hi"},
            {"call": "mcp__trace__where", "args": {}},
        ]),
    );
    let steps = out["steps"].as_array().unwrap();
    // The client declared elicitation and sampling, not roots: so was the
    // bridged server told.
    let seen = crate::mcp_revisions::seen(&steps[0]);
    assert_eq!(
        seen["clientCapabilities"],
        json!({"elicitation": {"form": {}}, "sampling": {}}),
        "{out}"
    );
    assert_eq!(
        steps[1]["text"], "Ada likes green; the model said: Hi Ada",
        "{out}"
    );
    assert_eq!(
        steps[1]["asked"],
        json!(["Your name?", "Your favourite colour?"]),
        "{out}"
    );
    assert_eq!(
        steps[1]["sampled"][0]["messages"][0]["content"]["text"], "Greet a guest",
        "{out}"
    );
    assert_eq!(steps[2]["text"], "declined by the user (decline)", "{out}");
    assert_eq!(steps[3]["is_error"], true, "{out}");
    assert!(
        steps[3]["text"]
            .as_str()
            .unwrap()
            .contains("\\\"roots\\\" asks for roots, which the client of this call cannot answer"),
        "{out}"
    );
}
