//! MCP tasks (the `io.modelcontextprotocol/tasks` extension) shared by
//! replicas: two `toolhost serve --http --stateless` processes sharing
//! Debian's `redis-server`, behind Debian's haproxy, spoken to in raw
//! JSON-RPC over HTTP at revision 2026-07-28 (the official Python SDK 2.3
//! has no tasks client). A long `exec` started as a task on one replica is
//! fetched, finished, from the other after its client went away; a
//! `tasks/cancel` sent to the other replica kills its process; a replica
//! killed mid-task leaves the task failed with an error that says so. A
//! deferred tool asks first by a multi-round-trip result and begins its
//! task on the replica the retry reached; a task's round of two questions
//! is answered one by one on either replica. The
//! store's semantics are checked once, against the embedded store and
//! Redis alike.

use std::net::{SocketAddr, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};

use crate::peers::{Haproxy, free_port, http_request, http_status, wait_until};
use crate::support;
use toolhost::internal::mcp::store::MAX_VALUE_BYTES;
use toolhost::internal::mcp::{MemoryStore, RedisOptions, RedisStore, Store, StoreError};

pub(crate) const TOKEN: &str = "tasks-token";
const TASKS: &str = "io.modelcontextprotocol/tasks";

/// A `redis-server` on a loopback port, keeping nothing on disk.
struct Redis {
    child: Child,
    port: u16,
    _dir: tempfile::TempDir,
}

impl Redis {
    fn start() -> Redis {
        let dir = tempfile::tempdir().unwrap();
        let port = free_port();
        let child = Command::new("redis-server")
            .args(["--port", &port.to_string(), "--bind", "127.0.0.1", "--save", ""])
            .arg("--dir")
            .arg(dir.path())
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("start redis-server (tests/setup installs Debian's redis-server)");
        let addr: SocketAddr = format!("127.0.0.1:{port}").parse().unwrap();
        wait_until("redis-server listening", || TcpStream::connect(addr).is_ok());
        Redis {
            child,
            port,
            _dir: dir,
        }
    }

    fn url(&self) -> String {
        format!("redis://127.0.0.1:{}/0", self.port)
    }
}

impl Drop for Redis {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// One `toolhost serve --http ADDR --stateless` (or, made with
/// [`Replica::with_sessions`], keeping MCP sessions).
pub(crate) struct Replica {
    child: Option<Child>,
    pub(crate) addr: SocketAddr,
}

impl Replica {
    pub(crate) fn start(config: &Path) -> Replica {
        Replica::spawn(config, &["--stateless"])
    }

    /// A server keeping MCP sessions (the 2025 revisions' `initialize`).
    pub(crate) fn with_sessions(config: &Path) -> Replica {
        Replica::spawn(config, &[])
    }

    fn spawn(config: &Path, extra: &[&str]) -> Replica {
        let addr: SocketAddr = format!("127.0.0.1:{}", free_port()).parse().unwrap();
        let child = Command::new(support::toolhost_bin())
            .args(["serve", "--http", &addr.to_string(), "--token", TOKEN])
            .args(extra)
            .arg("--config")
            .arg(config)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("start a replica");
        wait_until("the replica ready", || {
            http_status(addr, "GET", "/healthz") == Some(200)
        });
        Replica {
            child: Some(child),
            addr,
        }
    }

    /// SIGTERM, and waits for it to end: the way a service is stopped.
    pub(crate) fn terminate(&mut self) {
        if let Some(mut child) = self.child.take() {
            // SAFETY: a signal to the process this value started.
            unsafe { libc::kill(child.id() as i32, libc::SIGTERM) };
            let _ = child.wait();
        }
    }

    /// SIGKILL: no chance to finish or hand anything over.
    pub(crate) fn kill(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

impl Drop for Replica {
    fn drop(&mut self) {
        self.kill();
    }
}

/// A 2026-07-28 request to `/mcp` at `addr` (per-request `_meta`, the
/// `Mcp-Method` and `Mcp-Name` headers), declaring the tasks extension or
/// not; the JSON-RPC response. The connection closes once it is answered:
/// nothing of the client stays.
pub(crate) fn rpc(addr: SocketAddr, method: &str, mut params: Value, tasks: bool) -> Value {
    let extensions = if tasks { json!({TASKS: {}}) } else { json!({}) };
    let mut meta = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientInfo": {"name": "tasks-test", "version": "0"},
        "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}, "extensions": extensions},
    });
    // What the caller put in `_meta` (a trace context) goes along.
    if let Some(Value::Object(extra)) = params.get("_meta") {
        for (key, value) in extra {
            meta[key] = value.clone();
        }
    }
    params["_meta"] = meta;
    let name = params
        .get("taskId")
        .or_else(|| params.get("name"))
        .or_else(|| params.get("uri"))
        .and_then(Value::as_str)
        .map(str::to_string);
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params}).to_string();
    let auth = format!("Bearer {TOKEN}");
    let mut headers = vec![
        ("Authorization", auth.as_str()),
        ("Content-Type", "application/json"),
        ("Accept", "application/json, text/event-stream"),
        ("MCP-Protocol-Version", "2026-07-28"),
        ("Mcp-Method", method),
    ];
    if let Some(name) = &name {
        headers.push(("Mcp-Name", name));
    }
    let (status, body) = http_request(addr, "POST", "/mcp", &headers, &body).expect("an HTTP answer");
    // A JSON body, or an event stream whose last data line is the answer.
    let json = body
        .lines()
        .filter_map(|l| l.strip_prefix("data:"))
        .map(str::trim)
        .rfind(|l| !l.is_empty())
        .unwrap_or(body.as_str());
    serde_json::from_str(json).unwrap_or_else(|e| panic!("HTTP {status}: {body}: {e}"))
}

fn start_exec(addr: SocketAddr, command: &str) -> String {
    let answer = rpc(
        addr,
        "tools/call",
        json!({"name": "exec", "arguments": {"command": command}}),
        true,
    );
    let result = &answer["result"];
    assert_eq!(result["resultType"], "task", "{answer}");
    assert_eq!(result["status"], "working", "{answer}");
    result["taskId"].as_str().unwrap().to_string()
}

fn get(addr: SocketAddr, task: &str) -> Value {
    let answer = rpc(addr, "tasks/get", json!({"taskId": task}), true);
    assert_eq!(answer["result"]["resultType"], "complete", "{answer}");
    answer["result"].clone()
}

/// Polls `tasks/get` at `addr` until the task ends.
pub(crate) fn ended(addr: SocketAddr, task: &str) -> Value {
    let mut last = Value::Null;
    wait_until("the task to end", || {
        last = get(addr, task);
        matches!(
            last["status"].as_str(),
            Some("completed" | "failed" | "cancelled")
        )
    });
    last
}

fn config(dir: &Path, redis: &Redis, prefix: &str) -> PathBuf {
    let path = dir.join("toolhost.toml");
    let text = format!(
        "[exec]\nbackend = \"local\"\ncwd = {cwd:?}\n\n\
         [store]\nurl = {url:?}\nprefix = {prefix:?}\n\n\
         [tasks]\nlease_secs = 2\nwatch_interval_ms = 100\npoll_interval_ms = 100\n",
        cwd = dir.display().to_string(),
        url = redis.url(),
    );
    std::fs::write(&path, text).unwrap();
    path
}

/// Whether process `pid` is gone (or a zombie nobody reaped yet: it runs
/// nothing).
fn gone(pid: &str) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Err(_) => true,
        Ok(stat) => stat
            .rsplit_once(") ")
            .is_some_and(|(_, rest)| rest.starts_with('Z')),
    }
}

#[test]
fn a_long_exec_task_is_fetched_from_the_other_replica_cancelled_there_and_failed_when_its_replica_dies() {
    let redis = Redis::start();
    let dir = tempfile::tempdir().unwrap();
    let work = dir.path().canonicalize().unwrap();
    let config = config(&work, &redis, "tasks-test:");
    let mut a = Replica::start(&config);
    let b = Replica::start(&config);
    let balancer = Haproxy::start(&[a.addr, b.addr]);

    // Started on A; its client is gone as soon as the handle is answered.
    let task = start_exec(a.addr, "sleep 1; echo finished > done.txt; echo ran");
    // B knows the task at once, and has its end once A finished it.
    let end = ended(b.addr, &task);
    assert_eq!(end["status"], "completed", "{end}");
    let text = end["result"]["content"][0]["text"].as_str().unwrap();
    assert!(text.contains("ran"), "{text}");
    assert_eq!(
        std::fs::read_to_string(work.join("done.txt")).unwrap(),
        "finished\n"
    );
    // Through the balancer too, whichever replica answers.
    assert_eq!(ended(balancer.addr, &task)["status"], "completed");

    // A cancel sent to B stops A's process.
    let task = start_exec(a.addr, "echo $$ > cancel.pid; sleep 60; echo late > never.txt");
    let pid_file = work.join("cancel.pid");
    wait_until("the command to start", || {
        std::fs::read_to_string(&pid_file).is_ok_and(|p| p.ends_with('\n'))
    });
    let pid = std::fs::read_to_string(&pid_file).unwrap().trim().to_string();
    let ack = rpc(b.addr, "tasks/cancel", json!({"taskId": task}), true);
    assert_eq!(ack["result"], json!({"resultType": "complete"}), "{ack}");
    let end = ended(b.addr, &task);
    assert_eq!(end["status"], "cancelled", "{end}");
    wait_until("the cancelled command's process to be gone", || gone(&pid));
    assert!(!work.join("never.txt").exists());

    // Unknown tasks, and clients that did not declare the extension.
    let unknown = rpc(b.addr, "tasks/get", json!({"taskId": "no-such-task"}), true);
    assert_eq!(unknown["error"]["code"], -32602, "{unknown}");
    let undeclared = rpc(b.addr, "tasks/get", json!({"taskId": task}), false);
    assert_eq!(undeclared["error"]["code"], -32021, "{undeclared}");
    let sync = rpc(
        b.addr,
        "tools/call",
        json!({"name": "exec", "arguments": {"command": "echo now"}}),
        false,
    );
    assert_eq!(sync["result"]["resultType"], "complete", "{sync}");

    // A replica killed mid-task: the other one fails the task, saying why.
    let task = start_exec(a.addr, "sleep 60");
    a.kill();
    let end = ended(b.addr, &task);
    assert_eq!(end["status"], "failed", "{end}");
    assert_eq!(end["error"]["code"], -32603, "{end}");
    let message = end["error"]["message"].as_str().unwrap();
    assert!(message.contains("stopped before the task finished"), "{message}");
}

/// The conformance fixture's config, its tasks shared through `redis`.
fn fixture_config(dir: &Path, redis: &Redis) -> PathBuf {
    let path = dir.join("fixture.toml");
    // The replicas seal and open each other's request states.
    std::fs::write(dir.join("state.key"), "deferred-test shared state key, 32+ bytes").unwrap();
    let text = format!(
        "{fixture}\n[mcp]\nstate_key_file = \"state.key\"\n\n\
         [store]\nurl = {url:?}\nprefix = \"deferred-test:\"\n\n\
         [tasks]\nlease_secs = 2\nwatch_interval_ms = 100\npoll_interval_ms = 100\n",
        fixture = crate::mcp_conformance::fixture_config(),
        url = redis.url(),
    );
    std::fs::write(&path, text).unwrap();
    path
}

/// A form answer: accepted, with `content`.
fn accept(content: Value) -> Value {
    json!({"action": "accept", "content": content})
}

#[test]
fn a_deferred_task_asks_first_then_runs_as_a_task_and_a_tasks_questions_are_answered_one_by_one_on_either_replica()
 {
    let redis = Redis::start();
    let dir = tempfile::tempdir().unwrap();
    let config = fixture_config(dir.path(), &redis);
    let a = Replica::start(&config);
    let b = Replica::start(&config);
    let call = |addr, name: &str, extra: Value| {
        let mut params = json!({"name": name, "arguments": {}});
        if let (Some(params), Value::Object(extra)) = (params.as_object_mut(), extra) {
            params.extend(extra);
        }
        let mut answer = rpc(addr, "tools/call", params, true);
        answer["result"].take()
    };

    // `test_tool_with_task` (required, deferred) asks its question as the
    // request's own: an InputRequiredResult, no task yet.
    let first = call(a.addr, "test_tool_with_task", json!({}));
    assert_eq!(first["resultType"], "input_required", "{first}");
    assert!(first.get("taskId").is_none(), "{first}");
    let requests = first["inputRequests"].as_object().unwrap();
    assert_eq!(requests.len(), 1, "{first}");
    let (key, request) = requests.iter().next().unwrap();
    assert_eq!(request["method"], "elicitation/create", "{first}");
    // The retry, on the other replica, has its answer: the tool begins its
    // task there, and the request is answered with it.
    let retry = json!({
        "inputResponses": {key.clone(): accept(json!({"name": "Ada"}))},
        "requestState": first["requestState"],
    });
    let created = call(b.addr, "test_tool_with_task", retry);
    assert_eq!(created["resultType"], "task", "{created}");
    assert!(created.get("requestState").is_none(), "{created}");
    let task = created["taskId"].as_str().unwrap();
    // Its end, from the first replica: the answer gathered before the task.
    let end = ended(a.addr, task);
    assert_eq!(end["status"], "completed", "{end}");
    let text = end["result"]["content"][0]["text"].as_str().unwrap();
    assert!(text.contains("Hello, Ada!"), "{text}");

    // `multi_input` asks two questions in one round: both outstanding in
    // the task together, answered one at a time on either replica.
    let created = call(a.addr, "multi_input", json!({}));
    assert_eq!(created["resultType"], "task", "{created}");
    let task = created["taskId"].as_str().unwrap().to_string();
    let mut asked = Value::Null;
    wait_until("both questions outstanding", || {
        asked = get(b.addr, &task);
        asked["status"] == "input_required"
            && asked["inputRequests"].as_object().is_some_and(|r| r.len() == 2)
    });
    let keys: Vec<String> = asked["inputRequests"]
        .as_object()
        .unwrap()
        .keys()
        .cloned()
        .collect();
    let update = |addr, key: &str, name: &str| {
        let responses = json!({key: accept(json!({"name": name}))});
        let ack = rpc(
            addr,
            "tasks/update",
            json!({"taskId": task, "inputResponses": responses}),
            true,
        );
        assert_eq!(ack["result"], json!({"resultType": "complete"}), "{ack}");
    };
    update(b.addr, &keys[0], "first answer");
    let partly = get(a.addr, &task);
    assert_eq!(partly["status"], "input_required", "{partly}");
    let left: Vec<&String> = partly["inputRequests"].as_object().unwrap().keys().collect();
    assert_eq!(left, [&keys[1]], "{partly}");
    update(a.addr, &keys[1], "second answer");
    let end = ended(b.addr, &task);
    assert_eq!(end["status"], "completed", "{end}");
    let text = end["result"]["content"][0]["text"].as_str().unwrap();
    assert_eq!(text, "Got first answer and second answer", "{end}");

    // A client that does not declare the extension: the deferred tool,
    // which requires tasks, is refused before it runs.
    let undeclared = rpc(
        a.addr,
        "tools/call",
        json!({"name": "test_tool_with_task", "arguments": {}}),
        false,
    );
    assert_eq!(undeclared["error"]["code"], -32021, "{undeclared}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_library_host_serves_tasks_from_the_config_as_toolhost_serve_does() {
    let redis = Redis::start();
    let dir = tempfile::tempdir().unwrap();
    let work = dir.path().canonicalize().unwrap();
    let config_path = config(&work, &redis, "library-test:");
    // The embedding application's Host, from the same config as the
    // replica beside it: the same [store] and [tasks].
    let text = std::fs::read_to_string(&config_path).unwrap();
    let host = toolhost::Host::builder()
        .config(toolhost::Config::parse(&text, &config_path).unwrap())
        .build()
        .await
        .unwrap();
    let (addr, shutdown, serving) = crate::mcp_server::serve_host(host, TOKEN).await;
    let replica = tokio::task::spawn_blocking(move || Replica::start(&config_path))
        .await
        .unwrap();

    // A task started on the library's server is fetched from the replica.
    let (task, end) = tokio::task::spawn_blocking(move || {
        let task = start_exec(addr, "echo from the library host");
        (task.clone(), ended(replica.addr, &task))
    })
    .await
    .unwrap();
    assert_eq!(end["status"], "completed", "{task}: {end}");
    let text = end["result"]["content"][0]["text"].as_str().unwrap();
    assert!(text.contains("from the library host"), "{text}");
    shutdown.cancel();
    serving.await.unwrap().unwrap();
}

#[test]
fn a_bridged_tool_runs_as_a_task_for_a_client_that_supports_tasks() {
    let dir = tempfile::tempdir().unwrap();
    let config = crate::mcp_revisions::bridging_config(dir.path());
    let replica = Replica::start(&config);
    let mut created = Value::Null;
    // Until the bridged server is connected and its tool listed.
    wait_until("the bridged tool served as a task", || {
        created = rpc(
            replica.addr,
            "tools/call",
            json!({"name": "mcp__trace__seen", "arguments": {}}),
            true,
        );
        created["result"]["resultType"] == "task"
    });
    let task = created["result"]["taskId"].as_str().unwrap();
    let end = ended(replica.addr, task);
    assert_eq!(end["status"], "completed", "{end}");
    let text = end["result"]["content"][0]["text"].as_str().unwrap();
    assert!(text.contains("protocolVersion"), "{text}");
}

/// The same checks for every store: what tasks rely on.
async fn store_semantics(store: Arc<dyn Store>) {
    let ttl = Duration::from_secs(60);
    let key = format!("semantics-{}", free_port());
    assert_eq!(store.get(&key).await.unwrap(), None);
    assert!(store.put_new(&key, b"one", ttl).await.unwrap());
    assert!(!store.put_new(&key, b"two", ttl).await.unwrap());
    assert_eq!(store.get(&key).await.unwrap().as_deref(), Some(&b"one"[..]));
    // Compare-and-swap: only from the expected value.
    assert!(!store.swap(&key, b"two", b"three", ttl).await.unwrap());
    assert!(store.swap(&key, b"one", b"three", ttl).await.unwrap());
    assert_eq!(store.get(&key).await.unwrap().as_deref(), Some(&b"three"[..]));
    store.put(&key, b"four", ttl).await.unwrap();
    assert_eq!(store.get(&key).await.unwrap().as_deref(), Some(&b"four"[..]));
    assert!(store.delete(&key).await.unwrap());
    assert!(!store.delete(&key).await.unwrap());
    assert!(!store.swap(&key, b"four", b"five", ttl).await.unwrap());
    // Too large a value is refused before it is stored.
    let huge = vec![0; MAX_VALUE_BYTES + 1];
    let e = store.put(&key, &huge, ttl).await.unwrap_err();
    assert!(matches!(e, StoreError::TooLarge { .. }), "{e}");
    assert_eq!(store.get(&key).await.unwrap(), None);
    // A value expires with its time to live.
    assert!(
        store
            .put_new(&key, b"brief", Duration::from_millis(50))
            .await
            .unwrap()
    );
    let mut expired = false;
    for _ in 0..200 {
        if store.get(&key).await.unwrap().is_none() {
            expired = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    assert!(expired, "the value outlived its time to live");
}

#[tokio::test]
async fn the_embedded_store_and_redis_keep_the_same_semantics() {
    store_semantics(Arc::new(MemoryStore::new())).await;
    let redis = Redis::start();
    let options = RedisOptions::new(redis.url());
    let store = RedisStore::new(options.clone()).unwrap();
    store.ping().await.unwrap();
    store_semantics(Arc::new(store)).await;

    // A value over the limit put there by someone else is not read in.
    let written = Command::new("redis-cli")
        .args(["-p", &redis.port.to_string(), "SETRANGE", "toolhost:oversized"])
        .arg(MAX_VALUE_BYTES.to_string())
        .arg("x")
        .output()
        .expect("redis-cli (Debian's redis-tools, installed with redis-server)");
    assert!(written.status.success(), "{written:?}");
    let store = RedisStore::new(options).unwrap();
    let e = store.get("oversized").await.unwrap_err();
    assert!(
        matches!(e, StoreError::TooLarge { len } if len == MAX_VALUE_BYTES + 1),
        "{e}"
    );

    // A Redis that is gone: a clear error, no hang.
    let port = redis.port;
    drop(redis);
    let down = RedisStore::new(RedisOptions {
        timeout: Duration::from_millis(500),
        ..RedisOptions::new(format!("redis://127.0.0.1:{port}/0"))
    })
    .unwrap();
    let e = down.get("anything").await.unwrap_err();
    assert!(matches!(e, StoreError::Unavailable { .. }), "{e}");
    assert!(e.to_string().contains(&format!("127.0.0.1:{port}")), "{e}");
}
