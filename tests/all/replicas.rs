//! Replicas behind a real load balancer: two `toolhost serve --http
//! --stateless` processes, pointed at the same OCI registry, behind Debian's
//! haproxy. Every call is answered while one replica is killed and
//! restarted; after a new version is pushed and each replica reloads
//! (SIGHUP), both serve the same plugin set by hash.

use std::io::{BufRead, BufReader};
use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::oci::push;
use crate::peers::{Haproxy, Registry, free_port, http_request, http_status, new_version, wait_until};
use crate::support;

const TOKEN: &str = "replica-token";

/// One `toolhost serve --http ADDR --stateless` with its own config and
/// storage folder, restartable on the same port.
struct Replica {
    child: Option<Child>,
    addr: SocketAddr,
    config: PathBuf,
}

impl Replica {
    fn start(config: PathBuf) -> Replica {
        let addr = format!("127.0.0.1:{}", free_port()).parse().unwrap();
        let mut replica = Replica {
            child: None,
            addr,
            config,
        };
        replica.restart();
        replica
    }

    fn restart(&mut self) {
        let mut child = Command::new(support::toolhost_bin())
            .args([
                "serve",
                "--http",
                &self.addr.to_string(),
                "--stateless",
                "--token",
                TOKEN,
            ])
            .arg("--config")
            .arg(&self.config)
            .arg("--cache-dir")
            .arg(support::cache_dir())
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start a replica");
        let mut stderr = BufReader::new(child.stderr.take().unwrap());
        let mut line = String::new();
        loop {
            line.clear();
            if stderr.read_line(&mut line).unwrap() == 0 {
                let status = child.wait();
                panic!("the replica exited: {status:?}");
            }
            if line.contains("serving MCP at") {
                break;
            }
        }
        std::thread::spawn(move || std::io::copy(&mut stderr, &mut std::io::sink()));
        self.child = Some(child);
        let addr = self.addr;
        wait_until("the replica ready", || {
            http_status(addr, "GET", "/healthz") == Some(200)
        });
    }

    fn kill(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    fn hup(&self) {
        let pid = self.child.as_ref().unwrap().id() as i32;
        nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid), nix::sys::signal::Signal::SIGHUP).unwrap();
    }

    /// The hashes of its `[[plugins]]` entries, from `/status`.
    fn hashes(&self) -> Vec<Value> {
        let auth = format!("Bearer {TOKEN}");
        let (status, body) =
            http_request(self.addr, "GET", "/status", &[("Authorization", &auth)], "").unwrap();
        assert_eq!(status, 200, "{body}");
        let report: Value = serde_json::from_str(&body).unwrap();
        report["plugins"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| p["hash"].clone())
            .collect()
    }
}

impl Drop for Replica {
    fn drop(&mut self) {
        self.kill();
    }
}

/// A JSON-RPC request to `/mcp` at `addr`; the response's JSON.
fn rpc(addr: SocketAddr, id: u64, method: &str, params: Value) -> Option<Value> {
    let body = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}).to_string();
    let auth = format!("Bearer {TOKEN}");
    let headers = [
        ("Authorization", auth.as_str()),
        ("Content-Type", "application/json"),
        ("Accept", "application/json, text/event-stream"),
    ];
    let (status, body) = http_request(addr, "POST", "/mcp", &headers, &body)?;
    (status == 200)
        .then(|| serde_json::from_str(&body).ok())
        .flatten()
}

fn greet(addr: SocketAddr, id: u64) -> Option<String> {
    let answer = rpc(
        addr,
        id,
        "tools/call",
        json!({"name": "greet", "arguments": {"name": "Ada"}}),
    )?;
    // The text is the tool's output (a JSON-quoted string from a 0.1.0
    // plugin's JSON result, the plain string from a 0.2.0 text output).
    let text = answer["result"]["content"][0]["text"].as_str()?.to_string();
    Some(serde_json::from_str::<String>(&text).unwrap_or(text))
}

#[test]
fn two_stateless_replicas_behind_haproxy_answer_every_call_through_a_kill_and_a_new_version() {
    let registry = Registry::start();
    let reference = registry.reference("tools/hello:live");
    let v1 = push(&support::plugin_path("hello").display().to_string(), &reference);
    let dirs: Vec<tempfile::TempDir> = (0..2).map(|_| tempfile::tempdir().unwrap()).collect();
    let mut replicas: Vec<Replica> = dirs
        .iter()
        .map(|dir| {
            let config = dir.path().join("toolhost.toml");
            std::fs::write(&config, format!("[[plugins]]\nsource = \"{reference}\"\n")).unwrap();
            Replica::start(config)
        })
        .collect();
    let lb = Haproxy::start(&[replicas[0].addr, replicas[1].addr]);
    // Readiness is public; the status is behind the token.
    assert_eq!(http_status(replicas[0].addr, "GET", "/status"), Some(401));

    let init = rpc(
        lb.addr,
        0,
        "initialize",
        json!({"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "replica-test", "version": "0"}}),
    )
    .expect("initialize through the load balancer");
    assert_eq!(init["result"]["serverInfo"]["name"], "toolhost", "{init}");

    let calls = 60;
    let mut answered = 0;
    for id in 1..=calls {
        if id == calls / 3 {
            replicas[0].kill();
            assert_eq!(
                http_status(replicas[0].addr, "GET", "/healthz"),
                None,
                "replica 0 is down"
            );
        }
        if id == 2 * calls / 3 {
            replicas[0].restart();
        }
        let answer = greet(lb.addr, id);
        assert_eq!(
            answer.as_deref(),
            Some("Hello, Ada!"),
            "call {id} through the load balancer"
        );
        answered += 1;
    }
    assert_eq!(answered, calls);
    for replica in &replicas {
        assert_eq!(replica.hashes(), [v1["hash"].clone()]);
    }

    // A new version under the same tag; each replica reloads on SIGHUP.
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("hello.wasm");
    std::fs::write(&file, new_version(&support::plugin_bytes("hello"), "v2")).unwrap();
    let v2 = push(&file.display().to_string(), &reference);
    assert_ne!(v1["hash"], v2["hash"]);
    for replica in &replicas {
        replica.hup();
    }
    let deadline = Instant::now() + Duration::from_secs(60);
    while replicas.iter().any(|r| r.hashes() != [v2["hash"].clone()]) {
        assert!(
            Instant::now() < deadline,
            "the replicas did not reload: {:?}",
            replicas.iter().map(Replica::hashes).collect::<Vec<_>>()
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    assert_eq!(
        replicas[0].hashes(),
        replicas[1].hashes(),
        "both replicas serve the same plugin set"
    );
    for id in 0..4 {
        assert_eq!(greet(lb.addr, 100 + id).as_deref(), Some("Hello, Ada!"));
    }
}

#[test]
fn stateless_mode_refuses_lazy_mode_and_says_why() {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("toolhost.toml");
    std::fs::write(&config, "[tools]\nregistry_mode = \"lazy\"\n").unwrap();
    let out = Command::new(support::toolhost_bin())
        .args(["serve", "--http", "127.0.0.1:0", "--stateless", "--config"])
        .arg(&config)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("sticky sessions") && stderr.contains("lazy"),
        "{stderr}"
    );
    // Without --http there is nothing to be stateless about.
    let out = Command::new(support::toolhost_bin())
        .args(["serve", "--stdio", "--stateless"])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "a usage error");
}

#[test]
fn the_deploy_example_config_parses_and_names_plugins_that_are_built() {
    let root = support::workspace_root();
    let config = toolhost::config::Config::load(&root.join("examples/deploy/toolhost.toml")).unwrap();
    let built = support::plugin_path("time").parent().unwrap().to_path_buf();
    let dockerfile = std::fs::read_to_string(root.join("examples/deploy/Dockerfile")).unwrap();
    assert!(!config.plugins.is_empty());
    for plugin in &config.plugins {
        let file = plugin.file().unwrap().file_name().unwrap();
        assert!(
            built.join(file).exists(),
            "{} is not a built plugin",
            file.to_string_lossy()
        );
        let package = support::PLUGINS
            .iter()
            .find(|p| support::plugin_path(p).file_name() == Some(file))
            .unwrap();
        assert!(
            dockerfile.contains(package),
            "the Dockerfile does not build {package}"
        );
    }
    let k8s = std::fs::read_to_string(root.join("examples/deploy/kubernetes.yaml")).unwrap();
    assert!(k8s.contains("path: /healthz") && dockerfile.contains("--stateless"));
}
